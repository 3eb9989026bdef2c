"""The replayed demo exported to HTML shows its runs in a browser (screenshot in artifacts/screenshots/)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from .nbrun import ROOT, copy_demo, offline_env

CHROMIUM = Path("/usr/bin/chromium")
SCREENSHOTS = ROOT / "artifacts" / "screenshots"

pytestmark = [
    pytest.mark.browser,
    pytest.mark.slow,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian chromium is not installed at /usr/bin/chromium"),
]


def test_the_replayed_demo_exports_to_html_with_its_runs_visible(tmp_path: Path) -> None:
    notebook = copy_demo(tmp_path)
    argv = [sys.executable, "-m", "jupyter", "nbconvert", "--to", "html", "--execute", notebook.name]
    proc = subprocess.run(argv, cwd=tmp_path, env=offline_env(tmp_path), capture_output=True, text=True, timeout=240)
    assert proc.returncode == 0, proc.stderr[-3000:]
    html = (tmp_path / "replay.html").read_text()
    assert "The shell printed: one two three." in html and "echo one two three" in html
    assert "1024 is larger than 10^3 = 1000." in html and "1024 against 1000." in html
    from playwright.sync_api import sync_playwright

    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    shot = SCREENSHOTS / "replay-export.png"
    page: Any
    with sync_playwright() as pw:
        browser = pw.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=["--no-sandbox", "--disable-gpu"]
        )
        try:
            page = browser.new_context(viewport={"width": 1100, "height": 900}).new_page()
            page.goto((tmp_path / "replay.html").as_uri())  # offline: the export's CDN scripts simply fail to load
            runs = page.locator(".anb-static")
            runs.first.wait_for(timeout=60_000)
            assert runs.count() == 2
            assert "one two three" in runs.nth(0).inner_text()
            page.screenshot(path=str(shot), full_page=True)
        finally:
            browser.close()
    assert shot.stat().st_size > 10_000
