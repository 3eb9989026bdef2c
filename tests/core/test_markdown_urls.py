"""The markdown repr keeps no link or image but http(s) and no raw HTML, read by a CommonMark parser."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from typing import Any

import mistune
import pytest

from adaptor_nb import Result
from adaptor_nb._frames import safe_markdown

_SAFE_URL = re.compile(r"https?://", re.IGNORECASE)
# The only tags a markdown renderer makes from markdown syntax; any other tag came from raw HTML.
_MARKDOWN_TAGS = {
    *("p", "a", "img", "em", "strong", "code", "pre", "blockquote", "ul", "ol", "li", "hr", "br", "del"),
    *("h1", "h2", "h3", "h4", "h5", "h6", "table", "thead", "tbody", "tr", "th", "td"),
}

_SCHEMES = [
    "javascript:alert(1)",
    "JaVaScRiPt:alert(1)",
    " javascript:alert(1)",
    "java\tscript:alert(1)",
    "&#106;avascript:alert(1)",
    "&#x6A;avascript:alert(1)",
    "javascript&colon;alert(1)",
    "%6Aavascript:alert(1)",
    "data:text/html,<script>alert(1)</script>",
    "data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==",
    "vbscript:msgbox(1)",
    "file:///etc/passwd",
    "//evil.example/x",
    "/relative/path",
    "<javascript:alert(1)>",
    "javascript:alert(1) 'title'",
    'javascript:alert(1) "title"',
    "javascript:alert((1))",
    "\njavascript:alert(1)",
    "javascript:alert(document.cookie)//https://ok.example",
]

_FORMS = [
    "[x]({u})",
    "![x]({u})",
    "[a [b] c]({u})",
    "[a [b [c] d] e]({u})",
    "[![x]({u})]({u})",
    "[![x](https://ok.example/i.png)]({u})",
    "[![x]({u})](https://ok.example)",
    "[x][1]\n\n[1]: {u}",
    "[x]\n\n[x]: {u}",
    "[x][]\n\n[x]: {u}",
    "![x][1]\n\n[1]: {u}",
    "   [1]: {u}\n\n[1]",
    "> [x]({u})",
    "- [x]({u})",
    "| a | b |\n|---|---|\n| [x]({u}) | `c|[y]({u})` |",
    "**[x]({u})**",
    "`code` [x]({u}) `code`",
    "[x`]`]({u})",
    "\\[x]({u})",
    "\\\\[x]({u})",
    "[x](\n{u})",
]

_RAW = [
    "<a href='javascript:alert(1)'>x</a>",
    '<img src="javascript:alert(1)">',
    "<img src=x onerror=alert(1)>",
    "<script>alert(1)</script>",
    "<svg/onload=alert(1)>",
    "<div>\n<a href=javascript:alert(1)>x</a>\n</div>",
    "<!-- comment --><b>x</b>",
    "<![CDATA[<script>alert(1)</script>]]>",
    "<?php echo 1 ?>",
    "&lt;script&gt;alert(1)&lt;/script&gt;",
    "\\<script>alert(1)</script>",
    "`` <b>x</b> ``",
    "<javascript:alert(1)>",
    "<JAVASCRIPT:alert(1)>",
    "<data:text/html,x>",
    "<mailto:a@b.example>",
    "1. a\n   ```\n<img src=x onerror=alert(1)>\n```",
    "```\n<img src=x onerror=alert(1)>\n  ```\n<img src=y onerror=alert(2)>",
    "```\n<b>x</b>\n```~~\n<img src=x onerror=alert(1)>\n```",
    "~~~\n```\n~~~\n<script>alert(1)</script>",
    "```` ```\n<b>in</b>\n````\n<script>alert(1)</script>",
    "x\r```\r<img src=x onerror=alert(1)>",
    "    <img src=x onerror=alert(1)>\n<img src=y onerror=alert(2)>",
]

PAYLOADS = [form.format(u=url) for form in _FORMS for url in _SCHEMES] + _RAW


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.other: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))

    def handle_comment(self, data: str) -> None:
        self.other.append(data)

    def handle_pi(self, data: str) -> None:
        self.other.append(data)

    def unknown_decl(self, data: str) -> None:
        self.other.append(data)


def _html(markdown: str) -> str:
    render = mistune.create_markdown(escape=False, plugins=["table", "url", "strikethrough"])
    out = render(markdown)
    assert isinstance(out, str)
    return out


def _ast(markdown: str) -> list[dict[str, Any]]:
    parse = mistune.create_markdown(renderer=None, plugins=["table", "url", "strikethrough"])
    out = parse(markdown)
    assert isinstance(out, list)
    return out


def _walk(nodes: list[dict[str, Any]]) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    for node in nodes:
        found.append(node)
        found.extend(_walk(node.get("children", [])))
    return found


def _assert_inert(markdown: str) -> None:
    for node in _walk(_ast(markdown)):
        assert node["type"] not in ("inline_html", "block_html"), node
        if node["type"] in ("link", "image"):
            assert _SAFE_URL.match(node["attrs"]["url"]), node
    parser = _Tags()
    parser.feed(_html(markdown))
    assert not parser.other
    for tag, attrs in parser.tags:
        assert tag in _MARKDOWN_TAGS, (tag, attrs)
        for name in ("href", "src"):
            if name in attrs:
                assert _SAFE_URL.match(attrs[name] or ""), (tag, attrs)
        assert not [name for name in attrs if name.startswith("on")], (tag, attrs)


def test_the_parser_sees_live_links_and_html_in_the_raw_payloads() -> None:
    """The corpus is hostile: read raw, the parser finds unsafe links or raw HTML in most of it."""
    hostile = 0
    for payload in PAYLOADS:
        try:
            _assert_inert(payload)
        except AssertionError:
            hostile += 1
    assert hostile >= len(PAYLOADS) * 2 // 3


@pytest.mark.parametrize("payload", PAYLOADS)
def test_no_unsafe_link_image_or_raw_html_survives(payload: str) -> None:
    _assert_inert(safe_markdown(payload))
    _assert_inert(safe_markdown(f"before {payload} after"))


def test_the_result_repr_is_inert_for_every_payload() -> None:
    text = "\n\n".join(PAYLOADS)
    _assert_inert(Result(text=text, turns=1, provider="p", model="m")._repr_markdown_())


def test_ordinary_markdown_is_kept() -> None:
    source = (
        "# Title\n\n"
        "Some *emphasis*, **bold**, `inline code` and [a link](https://example.org/a?b=1&c=2).\n\n"
        "![logo](https://example.org/logo.png)\n\n"
        "> quoted\n\n"
        "- one\n- two\n\n"
        "```python\nif a < b and c > d:\n    print('<b>&amp;</b>')\n```\n"
    )
    out = _html(safe_markdown(source))
    assert "<h1>Title</h1>" in out
    assert "<em>emphasis</em>" in out and "<strong>bold</strong>" in out
    assert "<code>inline code</code>" in out
    assert '<a href="https://example.org/a?b=1&amp;c=2">a link</a>' in out
    assert '<img src="https://example.org/logo.png" alt="logo" />' in out
    assert "<blockquote>" in out and "<li>one</li>" in out
    assert "if a &lt; b and c &gt; d:\n    print('&lt;b&gt;&amp;amp;&lt;/b&gt;')" in out


def test_unsafe_links_keep_their_text_and_lose_their_url() -> None:
    assert safe_markdown("[mail](mailto:a@example.org)") == "mail"  # http(s) only, as in the widget
    assert safe_markdown("[a [b] c](javascript:alert(1))") == "a \\[b\\] c"
    assert safe_markdown("[![x](javascript:a)](javascript:b)") == "x"
    assert safe_markdown("see [docs](https://example.org) or [x](data:text/html,1)") == (
        "see [docs](https://example.org) or x"
    )
    assert "javascript" not in safe_markdown("[a](javascript:alert((1)))")


def test_text_shows_as_written() -> None:
    out = _html(safe_markdown("a < b & c > d, 1 * 2, \\<b>, [not a link], `x < y`"))
    assert "a &lt; b &amp; c &gt; d, 1 * 2, &lt;b&gt;, [not a link], `x &lt; y`" in out


def test_a_fence_cannot_be_closed_from_inside() -> None:
    out = safe_markdown("```\nkeep ```` this\n<b>x</b>\n")
    assert out == "`````\nkeep ```` this\n<b>x</b>\n\n`````"
    assert "&lt;b&gt;x&lt;/b&gt;" in _html(out)


def test_deep_nesting_and_long_text_stay_linear() -> None:
    for text in ("[" * 50_000 + "x" + "](javascript:a)" * 50_000, "`" * 10_000 + "[x" * 50_000):
        _assert_inert(safe_markdown(text))
