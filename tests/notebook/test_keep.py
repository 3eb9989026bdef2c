"""Outputs that survive: a run view carries a static HTML / markdown / text form of the run, kept on save and export."""

from __future__ import annotations

import html.parser
import os
from pathlib import Path
from typing import Any

import comm
import mistune
import nbformat
import pytest
from nbclient import NotebookClient
from nbconvert import HTMLExporter

from adaptor_nb import Agent, ApprovalKind, approve_all
from adaptor_nb.drivers.reference import Driver, Text, ThinkingStep, ToolUse, Turn, scenario
from adaptor_nb.notebook import RunView

from .kernel import Kernel
from .test_view import CountingComm

INJECTIONS = [
    "<script>window.pwned=1</script>",
    '<img src=x onerror="window.pwned=1">',
    "[click](javascript:window.pwned=1)",
    '<a href="javascript:alert(1)">x</a>',
    "<iframe src=https://example.com></iframe>",
    '"><svg onload=alert(1)>',
    "<style>body{display:none}</style>",
    "```\n</pre><script>alert(2)</script>\n```",
]
BAD_TAGS = {"script", "iframe", "style", "svg", "img", "object", "embed", "form", "input", "link", "meta"}


class Inert(html.parser.HTMLParser):
    """Collects every tag and attribute an HTML renderer would see."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: set[str] = set()
        self.attrs: list[tuple[str, str]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.add(tag)
        self.attrs.extend((name, value or "") for name, value in attrs)


def parsed(markup: str) -> Inert:
    parser = Inert()
    parser.feed(markup)
    parser.close()
    return parser


@pytest.fixture
def comms(monkeypatch: pytest.MonkeyPatch) -> list[CountingComm]:
    made: list[CountingComm] = []

    def create(**kwargs: Any) -> CountingComm:
        c = CountingComm(**kwargs)
        made.append(c)
        return c

    monkeypatch.setattr(comm, "create_comm", create)
    return made


async def finished_view(agent: Agent, **options: Any) -> RunView:
    view = RunView(driver="reference")
    done = await view.consume(agent.send("go", **options))
    assert done.err is None
    await agent.close()
    return view


async def test_the_bundle_holds_text_thinking_tools_approvals_and_footer(comms: list[CountingComm]) -> None:
    agent = Agent(
        Driver(
            scenario=scenario(
                Turn(
                    ThinkingStep("Consider the repo."),
                    Text("Found **two** files."),
                    ToolUse("Read", {"path": "a.py"}, {"output": "print(1)"}),
                    ToolUse("Edit", {"file": "b.py"}, {"ok": True}, approval=ApprovalKind.PERMISSION),
                    Text("All done."),
                )
            )
        )
    )
    view = await finished_view(agent, on_approval=approve_all())
    data = view._repr_mimebundle_()
    data = data[0] if isinstance(data, tuple) else data
    assert "application/vnd.jupyter.widget-view+json" in data
    page = data["text/html"]
    assert "Found <strong>two</strong> files." in page and "All done." in page
    assert "<summary" in page and "Consider the repo." in page
    assert "<strong>Read</strong>" in page and "a.py" in page and "print(1)" in page
    assert "<strong>Edit</strong>" in page and "approved" in page
    assert "done · 1 turn" in page
    assert "Found **two** files." in data["text/markdown"] and "tool **Read** done" in data["text/markdown"]
    assert data["text/plain"].startswith("RunView(driver='reference'")
    assert "Found **two** files.\nAll done." in data["text/plain"]


async def test_the_static_forms_do_not_change_between_identical_runs(comms: list[CountingComm]) -> None:
    def agent() -> Agent:
        return Agent(Driver(scenario=scenario(Turn(ToolUse("Read", {"p": 1}, {"output": "x"}), Text("ok")))))

    first = (await finished_view(agent())).static_bundle()
    second = (await finished_view(agent())).static_bundle()
    assert first == second


async def test_agent_markup_stays_inert_in_the_static_html(comms: list[CountingComm]) -> None:
    corpus = "\n\n".join(INJECTIONS)
    agent = Agent(
        Driver(
            scenario=scenario(
                Turn(
                    ThinkingStep(corpus),
                    Text(corpus),
                    ToolUse(corpus[:40], {"command": corpus}, {"output": corpus}),
                    Text(corpus),
                )
            )
        )
    )
    bundle = (await finished_view(agent)).static_bundle()
    seen = parsed(bundle["text/html"])
    assert not seen.tags & BAD_TAGS, seen.tags & BAD_TAGS
    assert not [name for name, _ in seen.attrs if name.startswith("on")]
    assert not [value for name, value in seen.attrs if name in ("href", "src") and not value.startswith("http")]
    assert "&lt;script&gt;window.pwned=1&lt;/script&gt;" in bundle["text/html"]
    rendered = parsed(mistune.html(bundle["text/markdown"]))  # mistune passes raw HTML through: a strict check
    assert not rendered.tags & BAD_TAGS, rendered.tags & BAD_TAGS
    assert not [name for name, _ in rendered.attrs if name.startswith("on")]
    assert not [value for name, value in rendered.attrs if name in ("href", "src") and not value.startswith("http")]


CELLS = [
    "%load_ext adaptor_nb",
    "from adaptor_nb import Agent\n"
    "from adaptor_nb.drivers.reference import Driver, Text, ToolUse, Turn, scenario\n"
    "demo = Agent(Driver(scenario=scenario(Turn(Text('Reading the repo.'),"
    " ToolUse('Read', {'path': 'setup.py'}, {'output': 'NAME = 42'}), Text('The name is **42**.')))))",
    "%%agent --agent demo\nWhat is the name?",
]


def test_a_saved_and_exported_notebook_shows_the_finished_run(tmp_path: Path) -> None:
    book = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in CELLS])
    env = {"ADAPTOR_NB_THREAD_STORE": str(tmp_path / "t.adaptor_nb.sqlite"), "PYDEVD_DISABLE_FILE_VALIDATION": "1"}
    old = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        NotebookClient(
            book, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
        ).execute()
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    (out,) = book.cells[2].outputs
    # no front end showed the view, so the finished output is the static run alone (no widget state needed)
    assert "application/vnd.jupyter.widget-view+json" not in out["data"]
    assert out["data"]["text/plain"].startswith("RunView(driver='reference'")
    saved = out["data"]["text/html"]
    assert "The name is <strong>42</strong>." in saved and "NAME = 42" in saved and "done · 1 turn" in saved
    page, _ = HTMLExporter().from_notebook_node(book)
    assert "Reading the repo." in page and "<strong>Read</strong>" in page and "NAME = 42" in page
    assert "The name is <strong>42</strong>." in page
    (tmp_path / "export.html").write_text(page)


MESSAGE_AGENT = """
from adaptor_nb import Agent
from adaptor_nb.drivers.reference import Driver, Text, Turn, WaitForMessage, scenario
agent = Agent(Driver(scenario=scenario(Turn(Text("Waiting for guidance."), WaitForMessage(), Text("Thanks.")))))
"""


def _displays(kernel: Kernel, msg_id: str, kind: str) -> list[dict[str, Any]]:
    return [
        m["content"]
        for m in kernel.iopub_log
        if m["msg_type"] == kind and m.get("parent_header", {}).get("msg_id") == msg_id
    ]


def test_a_shown_view_keeps_the_widget_and_its_display_gets_the_final_static_run(kernel: Kernel) -> None:
    kernel.run_ok(MESSAGE_AGENT)
    cell = kernel.start("%%agent --agent agent\nGo")
    comm_id, _ = kernel.wait_for(
        lambda: next((v for v in kernel.run_views() if v[1]["accepting"] and v[1]["items"]), None), "a running view"
    )
    kernel.send_custom(comm_id, {"type": "rendered"})
    kernel.send_custom(comm_id, {"type": "message", "id": "m1", "text": "use <b>care</b>", "when": "soon"})
    kernel.finish(cell)
    assert cell.status == "ok", cell.text()
    (first,) = _displays(kernel, cell.msg_id, "display_data")
    display_id = first["transient"]["display_id"]
    assert "Thanks." not in first["data"]["text/html"]
    (final,) = _displays(kernel, cell.msg_id, "update_display_data")
    assert final["transient"]["display_id"] == display_id
    assert final["data"]["application/vnd.jupyter.widget-view+json"]["model_id"] == comm_id
    page = final["data"]["text/html"]
    assert "Waiting for guidance." in page and "Thanks." in page
    assert "you sent: use &lt;b&gt;care&lt;/b&gt; — delivered while the agent worked" in page


ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("name", ["quickstart", "live_tool_calls"])
def test_the_shipped_notebooks_export_to_html_with_their_runs(name: str) -> None:
    book = nbformat.read(ROOT / "notebooks" / f"{name}.ipynb", as_version=4)
    page, _ = HTMLExporter().from_notebook_node(book)
    assert 'class="anb-static"' in page
    if name == "quickstart":
        assert "Scripted reply (offline demo driver: scripted replies)" in page
    else:
        assert page.count('class="anb-static-tool"') >= 2 and "<strong>Bash</strong>" in page


def _run_headless(book: Any, cwd: Path, env: dict[str, str]) -> None:
    old = {k: os.environ.get(k) for k in [*env, "ADAPTOR_NB_THREAD_STORE", "JPY_SESSION_NAME", "ADAPTOR_NB_LIVE_VIEW"]}
    for k in ("ADAPTOR_NB_THREAD_STORE", "JPY_SESSION_NAME", "ADAPTOR_NB_LIVE_VIEW"):
        os.environ.pop(k, None)
    os.environ.update(env)
    try:
        NotebookClient(book, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(cwd)}}).execute()
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def test_headless_runs_start_their_threads_fresh_each_time(tmp_path: Path) -> None:
    cells = ["%load_ext adaptor_nb", "%%agent --thread t\nfirst", "%%agent --thread t\nsecond", "%agent status"]
    outputs = []
    for _ in range(2):
        book = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
        _run_headless(book, tmp_path, {"ADAPTOR_NB_DRIVER": "reference", "PYDEVD_DISABLE_FILE_VALIDATION": "1"})
        outputs.append([[dict(o.get("data", {}), text=o.get("text", "")) for o in c.outputs] for c in book.cells])
    assert outputs[0] == outputs[1]
    assert "fresh for this headless run" in outputs[0][3][0]["text"]
    assert not list(tmp_path.glob("*.adaptor_nb.sqlite*"))
