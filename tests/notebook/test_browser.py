"""Browser tests: JupyterLab + Debian Chromium + Playwright click, type and take screenshots of the run view."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook

from .lab import CHROMIUM, ROOT, Lab, browser_page, clear_outputs, open_notebook, run_all, screenshot

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian chromium is not installed at /usr/bin/chromium"),
]

APPROVE_AND_MESSAGE = """
%load_ext adaptor_nb
from adaptor_nb import Agent, ApprovalKind, ApprovalPolicy, Policy
from adaptor_nb.drivers.reference import Driver, Text, ToolUse, Turn, WaitForMessage, scenario
agent = Agent(
    Driver(scenario=scenario(Turn(
        Text("I will list the files first."),
        ToolUse("Bash", {"command": "ls -la"}, {"output": "README.md\\nsrc"}, approval=ApprovalKind.PERMISSION),
        Text(" Listed. Waiting for your note."),
        WaitForMessage(),
        Text(" Thanks, I will **keep it short**."),
    ))),
    policy=Policy(approvals=ApprovalPolicy(timeout=300)),
)
"""

HOSTILE_TEXT = (
    "Here is *output*: <img src=x onerror=\"window.__pwned='img'\"> "
    "<script>window.__pwned='script'</script> "
    "[click me](javascript:window.__pwned='link') and [docs](https://example.org/docs)"
)

INJECTION = f"""
%load_ext adaptor_nb
from adaptor_nb import Agent
from adaptor_nb.drivers.reference import Driver, Text, ToolUse, Turn, scenario
hostile = {HOSTILE_TEXT!r}
agent = Agent(Driver(scenario=scenario(Turn(Text(hostile), ToolUse("Read", {{"p": hostile}}, {{"output": hostile}})))))
"""


def _write(root: Path, name: str, *cells: str) -> str:
    book = new_notebook(cells=[new_code_cell(c.strip()) for c in cells])
    book.metadata["kernelspec"] = {"display_name": "Python 3", "language": "python", "name": "python3"}
    nbformat.write(book, root / name)
    return name


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    root = tmp_path_factory.mktemp("lab-root")
    home = tmp_path_factory.mktemp("lab-home")
    server = Lab(
        root,
        home,
        {"ADAPTOR_NB_DRIVER": "reference", "ADAPTOR_NB_THREAD_STORE": str(home / "threads.adaptor_nb.sqlite")},
    )
    try:
        yield server
    finally:
        server.close()
    assert server.proc.poll() is not None


@pytest.fixture
def page() -> Iterator[Any]:
    with browser_page() as p:
        yield p


def test_approve_click_and_message_send_in_jupyterlab(lab: Lab, page: Any) -> None:
    cell = "%%agent --agent agent --approvals ask\nList the files"
    name = _write(lab.root, "approve.ipynb", APPROVE_AND_MESSAGE, cell)
    open_notebook(page, lab, name, "approve")
    run_all(page)

    view = page.locator(".anb").first
    approve = view.locator("button.anb-approve")
    approve.wait_for(state="visible")
    card = view.locator(".anb-approval")
    assert "ls -la" in card.inner_text()
    assert "expires in" in card.locator(".anb-deadline").inner_text()
    assert view.locator(".anb-state").inner_text() == "waiting"
    screenshot(view, "approval-pending")

    approve.click()
    view.locator(".anb-approval.anb-approved").wait_for()
    assert "approved" in view.locator(".anb-outcome").inner_text()

    box = view.locator("textarea.anb-input")
    page.wait_for_function("() => !document.querySelector('.anb textarea.anb-input').disabled")
    view.locator("select.anb-when").select_option("soon")
    box.fill("Please keep the summary short")
    view.locator("button.anb-send").click()
    view.locator(".anb-msg.anb-delivered").wait_for()
    view.locator(".anb-state.anb-done").wait_for()

    text = view.locator(".anb-items").inner_text()
    assert "Thanks, I will keep it short." in text
    assert view.locator(".anb-text strong").first.inner_text() == "keep it short"
    sent = view.locator(".anb-items .anb-msg.anb-delivered")  # in the transcript, where it was delivered
    assert "Please keep the summary short" in sent.inner_text()
    assert "delivered while the agent worked" in sent.inner_text()
    tool = view.locator(".anb-tool")
    assert "Bash" in tool.inner_text()
    assert view.locator(".anb-box").is_hidden()  # the message box folds away when the run ends
    assert "1 turn ·" in view.locator(".anb-foot").inner_text()
    assert "null" not in view.locator(".anb-head").inner_text()
    screenshot(view, "approval-done-with-message")


def test_agent_output_renders_inert(lab: Lab, page: Any) -> None:
    name = _write(lab.root, "inject.ipynb", INJECTION, "%%agent --agent agent\nShow me", "_agent")
    open_notebook(page, lab, name, "inject")
    run_all(page)

    view = page.locator(".anb").first
    view.locator(".anb-state.anb-done").wait_for()
    result = page.locator(".adaptor-nb-result")
    result.wait_for()
    view.locator(".anb-tool summary").click()

    for area in (view, result):
        assert area.locator("img").count() == 0
        assert area.locator("script").count() == 0
        hrefs = area.locator("a").evaluate_all("els => els.map(e => e.getAttribute('href'))")
        assert hrefs == ["https://example.org/docs"]
    assert page.evaluate("() => window.__pwned === undefined")
    shown = view.locator(".anb-text").inner_text()
    assert "<img src=x onerror=" in shown and "<script>" in shown and "click me" in shown
    assert "<img src=x" in view.locator(".anb-tool .anb-result").inner_text()
    assert view.locator(".anb-box").is_hidden()
    screenshot(view, "injection-inert")


def test_quickstart_runs_in_jupyterlab(lab: Lab, page: Any) -> None:
    shutil.copy(ROOT / "notebooks" / "quickstart.ipynb", lab.root / "quickstart.ipynb")
    open_notebook(page, lab, "quickstart.ipynb", "quickstart")
    clear_outputs(page)
    run_all(page)
    views = page.locator(".anb")
    page.wait_for_function("() => document.querySelectorAll('.anb .anb-state.anb-done').length === 2")
    # The output is updated with its final form when the run ends, and the front end may draw the view again then:
    # wait for the drawn view's header instead of reading it mid-draw.
    page.wait_for_function(
        "() => (document.querySelector('.anb .anb-note') || {}).innerText?.includes('offline demo driver')"
    )
    first = views.first
    assert "offline demo driver: scripted replies" in first.locator(".anb-note").inner_text()
    assert "Scripted reply" in first.locator(".anb-text").inner_text()
    screenshot(first, "quickstart-view")


def test_live_tool_calls_cards_expand(lab: Lab, page: Any) -> None:
    shutil.copy(ROOT / "notebooks" / "live_tool_calls.ipynb", lab.root / "live_tool_calls.ipynb")
    open_notebook(page, lab, "live_tool_calls.ipynb", "live")
    clear_outputs(page)
    run_all(page)
    view = page.locator(".anb").first
    view.locator(".anb-state.anb-done").wait_for()
    assert view.locator(".anb-thinking").count() == 1
    assert "check the docs" in view.locator(".anb-sub").inner_text()
    bash = view.locator(".anb-tool").first
    bash.locator("summary").click()
    more = bash.locator("button.anb-more")
    assert "show all" in more.inner_text()
    shown = bash.locator(".anb-result").inner_text()
    assert "FAILED" not in shown and len(shown.splitlines()) <= 13
    view.locator(".anb-thinking").evaluate("el => el.closest('details').open = true")
    screenshot(view, "live-tool-calls")
    more.click()
    assert "FAILED tests/test_cli.py::test_help" in bash.locator(".anb-result").inner_text()


def test_streamed_text_is_complete_in_the_page(lab: Lab, page: Any) -> None:
    from .snippets import PACED_AGENT

    name = _write(lab.root, "paced.ipynb", "%load_ext adaptor_nb", PACED_AGENT, "%%agent --agent agent\nStream")
    open_notebook(page, lab, name, "paced")
    run_all(page)
    view = page.locator(".anb").first
    view.locator(".anb-state.anb-done").wait_for()
    expected = "".join(f"w{i} " for i in range(3000)).strip()
    assert view.locator(".anb-text").inner_text().strip() == expected


def test_approvals_notebook_asks_in_the_page(lab: Lab, page: Any) -> None:
    shutil.copy(ROOT / "notebooks" / "approvals.ipynb", lab.root / "approvals.ipynb")
    open_notebook(page, lab, "approvals.ipynb", "approvals")
    clear_outputs(page)
    run_all(page)
    views = page.locator(".anb")
    first = views.nth(0)
    first.locator("button.anb-approve").click()
    first.locator(".anb-state.anb-done").wait_for()
    question = views.nth(1)
    choice = question.locator("button.anb-choice", has_text="test_cli.py")
    choice.wait_for()
    screenshot(question, "question-card")
    choice.click()
    question.locator(".anb-state.anb-done").wait_for()
    assert "answered: test_cli.py" in question.locator(".anb-outcome").inner_text()
    views.nth(2).locator(".anb-state.anb-failed").wait_for()
    assert "denied by --approvals deny" in views.nth(2).locator(".anb-outcome").inner_text()
    assert "stopped because a request above was denied" in views.nth(2).locator(".anb-failure").inner_text()
