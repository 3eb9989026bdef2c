"""The static renderer's inline passes give the same HTML whether or not a line has any markup."""

from __future__ import annotations

from adaptor_nb._views._markdown import render


def test_plain_text_is_only_escaped() -> None:
    assert render("t1 t2 <b> & \x00 0 \x00 'q'") == "<p>t1 t2 &lt;b&gt; &amp;  0  &#x27;q&#x27;</p>"


def test_each_marker_is_rendered_alone_and_together() -> None:
    assert render("an *it*") == "<p>an <em>it</em></p>"
    assert render("a **b**") == "<p>a <strong>b</strong></p>"
    assert render("a `c*d*`") == "<p>a <code>c*d*</code></p>"
    link = '<a href="https://e.org" target="_blank" rel="noopener noreferrer nofollow">d</a>'
    assert render("[d](https://e.org) and [x](file:y)") == f"<p>{link} and x</p>"
    assert render("*i* **b** `c` [d](https://e.org)") == f"<p><em>i</em> <strong>b</strong> <code>c</code> {link}</p>"
