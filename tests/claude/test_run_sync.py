"""Thread.run_sync from a plain script on the real CLI: one persistent process across calls, reaped at exit."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import psutil
import pytest

from adaptor_nb.testing._anthropic import FakeAnthropicServer

from .conftest import QUIET_ENV, SECRET

pytestmark = pytest.mark.claude

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = textwrap.dedent(
    """
    import atexit, json, sys
    import psutil
    from adaptor_nb import Agent
    from adaptor_nb.drivers import claude

    setup = json.loads(sys.argv[1])
    config = claude.Config(
        command=[setup["cli"]], cwd=setup["workspace"], env=setup["env"],
        secret_env={"ANTHROPIC_API_KEY": setup["secret"]}, bare=True, startup_timeout=30.0, grace_period=1.0,
    )
    agent = Agent(claude.Driver(config), workspace=setup["workspace"])
    thread = agent.thread("script")
    me = psutil.Process()

    def living():
        return sorted(p.pid for p in me.children(recursive=True) if p.status() != psutil.STATUS_ZOMBIE)

    # Runs after the exit hook that closes the Agent: the CLI is already gone here, not merely orphaned later.
    atexit.register(lambda: print(json.dumps({"at_exit": living()})))
    first = thread.run_sync("one [[say first]]")
    after_first = living()
    second = thread.run_sync("two [[say second]]")
    after_second = living()
    print(json.dumps({
        "texts": [first.text, second.text],
        "sessions": [first.metadata.get("session_id"), second.metadata.get("session_id")],
        "after_first": after_first,
        "after_second": after_second,
    }))
    """
)


def test_thread_run_sync_keeps_its_process_and_reaps_it_at_exit(
    claude_cli: str, fake: FakeAnthropicServer, home: Path, workspace: Path
) -> None:
    setup = {
        "cli": claude_cli,
        "workspace": str(workspace),
        "env": {"HOME": str(home), "ANTHROPIC_BASE_URL": fake.url, **QUIET_ENV},
        "secret": SECRET,
    }
    proc = subprocess.run(
        [sys.executable, "-c", SCRIPT, json.dumps(setup)],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        cwd=str(workspace),
        timeout=180,
    )
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.strip().splitlines()
    out, at_exit = json.loads(lines[-2]), json.loads(lines[-1])
    assert out["texts"] == ["first", "second"]
    assert out["sessions"][0] and out["sessions"][0] == out["sessions"][1]
    assert out["after_first"], "the thread's CLI process was not kept after the first call"
    assert out["after_second"] == out["after_first"]  # the second call reused it: no new process
    assert len(fake.message_requests) == 2 and len(fake.message_requests[0].messages) < len(
        fake.message_requests[1].messages
    )
    assert at_exit == {"at_exit": []}
    left = [pid for pid in out["after_first"] if _alive(pid)]
    assert not left, f"processes left behind after the script exited: {left}"
    assert "Traceback" not in proc.stderr


def _alive(pid: int) -> bool:
    try:
        return bool(psutil.Process(pid).status() != psutil.STATUS_ZOMBIE)
    except psutil.NoSuchProcess:
        return False
