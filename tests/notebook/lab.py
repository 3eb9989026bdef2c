"""A real JupyterLab server and a Chromium page driving it, for the browser tests."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

CHROMIUM = Path("/usr/bin/chromium")
ROOT = Path(__file__).resolve().parents[2]
SCREENSHOTS = ROOT / "artifacts" / "screenshots"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
]
READY_TIMEOUT = 60.0
READY_LINE = b"Use Control-C to stop this server"  # the end of the start-up banner
KERNEL_IDLE = """() => {
  const w = window.jupyterapp && window.jupyterapp.shell.currentWidget;
  const k = w && w.sessionContext && w.sessionContext.session && w.sessionContext.session.kernel;
  return Boolean(k && k.status === 'idle');
}"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Lab:
    """A JupyterLab server rooted at ``root``; ``url(path)`` opens a notebook in a fresh workspace."""

    def __init__(self, root: Path, home: Path, env: dict[str, str]) -> None:
        self.root = root
        self.port = _free_port()
        config = home / "config"
        settings = home / "settings" / "@jupyterlab" / "apputils-extension"
        settings.mkdir(parents=True)
        (settings / "notification.jupyterlab-settings").write_text(
            json.dumps({"fetchNews": "false", "checkForUpdates": False})
        )
        config.mkdir()
        self.log = (home / "lab.log").open("w")
        full_env = {
            **os.environ,
            **env,
            "JUPYTER_CONFIG_DIR": str(config),
            "JUPYTER_RUNTIME_DIR": str(home / "runtime"),
        }
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "jupyterlab",
                "--no-browser",
                "--allow-root",
                "--ServerApp.ip=127.0.0.1",
                f"--ServerApp.port={self.port}",
                "--ServerApp.port_retries=0",
                "--IdentityProvider.token=",
                "--ServerApp.password=",
                "--ServerApp.disable_check_xsrf=True",
                f"--ServerApp.root_dir={root}",
                "--LabApp.expose_app_in_browser=True",
                f"--LabApp.workspaces_dir={home / 'workspaces'}",
                f"--LabApp.user_settings_dir={home / 'settings'}",
                "--LabApp.news_url=None",
                "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            env=full_env,
            cwd=root,
            start_new_session=True,
        )
        # The server's output goes to the log through a reader thread, which also sees the line that says it started.
        self._started = threading.Event()
        self._ended = threading.Event()
        self._reader = threading.Thread(target=self._copy_log, daemon=True)
        self._reader.start()
        self._wait_ready()

    def _copy_log(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.log.write(line.decode(errors="replace"))
            self.log.flush()
            if READY_LINE in line:
                self._started.set()
        self._ended.set()
        self._started.set()  # stop waiting: the server ended

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + READY_TIMEOUT
        if not self._started.wait(READY_TIMEOUT):
            raise RuntimeError(f"jupyter lab did not start within {READY_TIMEOUT} s; see {self.log.name}")
        # The banner comes just before the server's loop runs its first callback, which binds the port: bridge that
        # short window by asking again, pausing on the server's exit (so a crash ends the wait at once).
        while not self._ended.is_set():
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/api/status", timeout=5) as r:
                    if r.status == 200:
                        return
            except OSError:
                pass
            if time.monotonic() > deadline or self._ended.wait(0.05):
                break
        if self.proc.poll() is not None:
            raise RuntimeError(f"jupyter lab exited with {self.proc.returncode}; see {self.log.name}")
        raise RuntimeError(f"jupyter lab did not answer within {READY_TIMEOUT} s; see {self.log.name}")

    def url(self, notebook: str, workspace: str) -> str:
        return f"http://127.0.0.1:{self.port}/lab/workspaces/{workspace}/tree/{notebook}?reset"

    def close(self) -> None:
        """Stop the server and everything it started (kernels included)."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=10)
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self._reader.join(timeout=10)
        if self.proc.stdout is not None:
            self.proc.stdout.close()
        self.log.close()


@contextmanager
def browser_page() -> Iterator[Any]:
    """A Chromium page (Debian's chromium through Playwright)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
        try:
            context = browser.new_context(viewport={"width": 1280, "height": 1000})
            page = context.new_page()
            page.set_default_timeout(60_000)
            yield page
        finally:
            browser.close()


def open_notebook(page: Any, lab: Lab, notebook: str, workspace: str) -> None:
    """Open ``notebook`` and wait until its kernel is idle."""
    page.goto(lab.url(notebook, workspace))
    page.wait_for_function(KERNEL_IDLE, timeout=90_000)


def run_all(page: Any) -> None:
    """Run every cell (without awaiting the command inside the page)."""
    page.evaluate("() => { window.jupyterapp.commands.execute('notebook:run-all-cells'); }")


def clear_outputs(page: Any) -> None:
    """Clear the saved outputs so that only fresh runs show."""
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:clear-all-cell-outputs')")
    page.wait_for_function("() => document.querySelectorAll('.jp-OutputArea-output').length === 0")


def screenshot(locator: Any, name: str) -> Path:
    """Save a screenshot of ``locator`` as artifacts/screenshots/<name>.png."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / f"{name}.png"
    locator.screenshot(path=str(path))
    return path
