"""examples/agui/index.html in headless Chromium against a live endpoint: text streams in, a tool card appears,
Approve resumes the interrupted run and its result shows; the page is served from another origin (CORS)."""

from __future__ import annotations

import functools
import threading
from collections.abc import Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlencode

import pytest

from adaptor_nb import Agent, ApprovalKind, ApprovalPolicy, Policy
from adaptor_nb.bridges import agui
from adaptor_nb.drivers import reference as ref

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "agui"
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"]


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def page_origin() -> Iterator[str]:
    """examples/agui served over HTTP on loopback (another origin than the endpoint's)."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(EXAMPLE)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.fixture
def chromium() -> str:
    if not CHROMIUM.exists():
        pytest.skip("Debian's chromium is not installed: run `bash scripts/setup.sh` as root")
    return str(CHROMIUM)


async def test_the_example_page_streams_text_shows_tool_cards_and_approves(page_origin: str, chromium: str) -> None:
    from playwright.async_api import async_playwright

    step = ref.ToolUse("Bash", {"command": "make clean"}, {"ok": True}, approval=ApprovalKind.PERMISSION, id="tc1")
    scenario = ref.Scenario(ref.Turn(ref.Text("Let me clean up first."), step, ref.Text("All clean now.")))
    agent = Agent(ref.Driver(scenario=scenario))
    policy = Policy(approvals=ApprovalPolicy(timeout=-1))
    srv = await agui.serve(agui.app(agent, cors_origins=[page_origin], key=str, policy=policy))
    query = urlencode({"url": srv.url, "token": srv.token or "", "thread": "page"})
    try:
        async with async_playwright() as pw:
            browser = await pw.chromium.launch(executable_path=chromium, headless=True, args=CHROMIUM_ARGS)
            try:
                page = await browser.new_page()
                page.set_default_timeout(30_000)
                errors: list[str] = []
                page.on("pageerror", lambda exc: errors.append(str(exc)))
                await page.goto(f"{page_origin}/index.html?{query}")
                await page.fill("#prompt", "clean the build")
                await page.click("form button")
                await page.get_by_text("Let me clean up first.").wait_for()
                card = page.locator(".tool")
                await card.get_by_text("Bash").wait_for()
                assert "make clean" in await card.inner_text()
                await page.get_by_role("button", name="Approve").click()
                await page.get_by_text("All clean now.").wait_for()
                await card.locator(".result").get_by_text('{"ok":true}').wait_for()
                assert await page.locator("#status").inner_text() == "done"
                assert await page.get_by_role("button", name="Approve").is_disabled()
                assert errors == []
            finally:
                await browser.close()
        assert srv.app.bridge.live("page") is None  # the run ended
    finally:
        await srv.stop()
        await agent.close()
