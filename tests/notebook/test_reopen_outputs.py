"""In a Jupyter server session a run takes two outputs: the widget alone, then its static run (updated at the end).

JupyterLab renders an output holding the widget mimetype only through the widget manager, which cannot show a view
whose model died with its kernel; the static run in an output of its own is what a reopened notebook shows.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from adaptor_nb.notebook._companion import SLOT, STYLE, WIDGET_MIME

from .kernel import Kernel
from .test_keep import BAD_TAGS, INJECTIONS, parsed

CORPUS = "\n\n".join(INJECTIONS)
SETUP = f"""
%load_ext adaptor_nb
from adaptor_nb import Agent
from adaptor_nb.drivers.reference import Driver, Text, ToolUse, Turn, scenario
corpus = {CORPUS!r}
agent = Agent(Driver(scenario=scenario(Turn(
    Text("Reading."), ToolUse("Read", {{"p": corpus}}, {{"output": corpus}}), Text("Done: " + corpus),
))))
"""


def _displays(kernel: Kernel, msg_id: str, kind: str) -> list[dict[str, Any]]:
    return [
        m["content"]
        for m in kernel.iopub_log
        if m["msg_type"] == kind and m.get("parent_header", {}).get("msg_id") == msg_id
    ]


def test_a_server_session_shows_the_widget_and_the_static_run_as_two_outputs(tmp_path: Path) -> None:
    env = {
        "ADAPTOR_NB_DRIVER": "reference",
        "ADAPTOR_NB_THREAD_STORE": str(tmp_path / "t.sqlite"),
        "JPY_SESSION_NAME": str(tmp_path / "review.ipynb"),
        "PYDEVD_DISABLE_FILE_VALIDATION": "1",
    }
    kernel = Kernel(tmp_path, env)
    try:
        kernel.run_ok(SETUP)
        cell = kernel.run("%%agent --agent agent\nGo")
        assert cell.status == "ok", cell.text()
        (view_id, _state) = kernel.last_view()
    finally:
        kernel.shutdown()
    assert not kernel.km.is_alive()

    widget, static_run = _displays(kernel, cell.msg_id, "display_data")
    assert widget["data"][WIDGET_MIME]["model_id"] == view_id
    assert widget["data"]["text/html"] == SLOT
    assert "Reading." not in str(widget["data"])  # the widget's output holds no copy of the run
    assert widget["transient"]["display_id"] != static_run["transient"]["display_id"]
    assert WIDGET_MIME not in static_run["data"]
    assert "Done:" not in static_run["data"]["text/html"]  # the run had not ended yet

    (final,) = _displays(kernel, cell.msg_id, "update_display_data")  # the same output, now the finished run
    assert final["transient"]["display_id"] == static_run["transient"]["display_id"]
    assert WIDGET_MIME not in final["data"]
    page = final["data"]["text/html"]
    assert page.startswith(STYLE) and page.count("<style>") == 1  # the fixed rule, then the escaped run
    seen = parsed(page[len(STYLE) :])
    assert not seen.tags & BAD_TAGS, seen.tags & BAD_TAGS
    assert not [name for name, _ in seen.attrs if name.startswith("on")]
    assert "Done: &lt;script&gt;window.pwned=1&lt;/script&gt;" in page
    assert not final["data"]["text/markdown"].startswith(STYLE) and "Done:" in final["data"]["text/markdown"]
    assert final["data"]["text/plain"].startswith("RunView(driver='reference'")


def test_without_a_server_session_the_view_keeps_one_output(tmp_path: Path) -> None:
    env = {
        "ADAPTOR_NB_DRIVER": "reference",
        "ADAPTOR_NB_THREAD_STORE": str(tmp_path / "t.sqlite"),
        "ADAPTOR_NB_LIVE_VIEW": "1",
        "PYDEVD_DISABLE_FILE_VALIDATION": "1",
    }
    kernel = Kernel(tmp_path, {**env, "JPY_SESSION_NAME": ""})
    try:
        kernel.run_ok(SETUP)
        cell = kernel.run("%%agent --agent agent\nGo")
        assert cell.status == "ok", cell.text()
    finally:
        kernel.shutdown()
    (shown,) = _displays(kernel, cell.msg_id, "display_data")
    assert WIDGET_MIME in shown["data"] and "text/html" in shown["data"]
    assert STYLE not in shown["data"]["text/html"]
