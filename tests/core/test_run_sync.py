"""run_sync, Agent.run_sync and Thread.run_sync from a plain script (no event loop), on the reference driver."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = textwrap.dedent(
    """
    import json, asyncio
    import adaptor_nb
    from adaptor_nb import Agent
    from adaptor_nb.drivers import reference

    agent = Agent(reference.Driver(), model="demo")
    out = {}
    out["coroutine"] = adaptor_nb.run_sync(asyncio.sleep(0, "slept"))

    async def ask():
        return (await agent.send("from a coroutine function").result()).text

    out["coroutine_function"] = adaptor_nb.run_sync(ask)
    out["lambda"] = adaptor_nb.run_sync(lambda: agent.send("from a lambda").result()).text
    out["agent"] = agent.run_sync("from Agent.run_sync").text
    thread = agent.thread("t")
    thread.run_sync("first")
    out["thread"] = thread.run_sync("second").text
    try:
        adaptor_nb.run_sync(agent.send("evaluated outside the loop").result())
    except RuntimeError as exc:
        out["outside"] = str(exc)
    try:
        adaptor_nb.run_sync(lambda: 42)
    except TypeError as exc:
        out["not_awaitable"] = str(exc)

    async def nested():
        try:
            adaptor_nb.run_sync(asyncio.sleep(0))
        except RuntimeError as exc:
            return str(exc)

    out["nested"] = adaptor_nb.run_sync(nested)
    print(json.dumps(out))
    """
)


def run_script(source: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-W", "error::RuntimeWarning", "-c", source],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=120,
    )


def test_run_sync_in_a_plain_script() -> None:
    proc = run_script(SCRIPT)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["coroutine"] == "slept"
    assert "from a coroutine function" in out["coroutine_function"]
    assert "from a lambda" in out["lambda"]
    assert "from Agent.run_sync" in out["agent"]
    assert "1 earlier prompt" in out["thread"]  # the same conversation across calls
    # The error says what to do instead of repeating the call that was just made.
    assert "outside an event loop" in out["outside"]
    assert "agent.run_sync(prompt)" in out["outside"] and "lambda" in out["outside"]
    assert "needs a running event loop" not in out["outside"]
    assert "not an awaitable" in out["not_awaitable"]
    assert "inside a running event loop" in out["nested"]
    assert "never awaited" not in proc.stderr


def test_an_open_agent_is_closed_at_exit() -> None:
    """The script ends with its Agent open: the exit hook closes it (no hang, no traceback)."""
    source = textwrap.dedent(
        """
        import atexit
        from adaptor_nb import Agent
        from adaptor_nb.drivers import reference
        agent = Agent(reference.Driver())
        atexit.register(lambda: print("at exit:", "closed" if agent.closed else "open"))
        thread = agent.thread("kept")
        thread.run_sync("one")
        print("after the run:", "closed" if agent.closed else "open")
        """
    )
    proc = run_script(source)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["after", "the", "run:", "open", "at", "exit:", "closed"]
    assert "Traceback" not in proc.stderr and "Task was destroyed" not in proc.stderr
