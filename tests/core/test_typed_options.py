"""Options are typed: mypy reports a misspelled option, and at run time a misspelling names the nearest option."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from adaptor_nb import Agent
from adaptor_nb.drivers import reference

REPO = Path(__file__).resolve().parents[2]

BAD = """\
from adaptor_nb import Agent
from adaptor_nb.drivers import reference


async def main() -> None:
    agent = Agent(reference.Driver(), timout=3)
    agent.send("x", modle="m")
"""

GOOD = """\
from datetime import timedelta

from adaptor_nb import Agent, Author, Timing, run_as
from adaptor_nb.drivers import reference


async def main() -> None:
    agent = Agent(reference.Driver(), timeout=3, model="demo", event_buffer=64, metadata={"a": "b"})
    agent.send("x", model="m", timeout=timedelta(seconds=5), schema={"type": "object"}, when=Timing.SOON)
    thread = agent.thread("k", resume_only=False)
    thread.send("y", id="m1", author=Author())
    standby = await thread.standby()
    await standby.send("z", spawn=True)
    pair: tuple[int, object] = await run_as(agent, "n", int, model="m", schema_name="n")
    print(pair)
"""


def _mypy(tmp_path: Path, *files: str) -> str:
    env = {**os.environ, "MYPYPATH": str(REPO)}
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--strict",
            "--no-error-summary",
            "--cache-dir",
            str(REPO / ".mypy_cache"),
            *files,
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    return proc.stdout + proc.stderr


def test_mypy_reports_misspelled_options_and_accepts_correct_ones(tmp_path: Path) -> None:
    (tmp_path / "bad_options.py").write_text(BAD)
    (tmp_path / "good_options.py").write_text(GOOD)
    out = _mypy(tmp_path, "bad_options.py", "good_options.py")
    bad = [line for line in out.splitlines() if line.startswith("bad_options.py")]
    assert any('"timout"' in line for line in bad), out
    assert any('"modle"' in line for line in bad), out
    assert not [line for line in out.splitlines() if line.startswith("good_options.py")], out


async def test_a_misspelled_option_names_the_nearest_valid_one() -> None:
    with pytest.raises(TypeError, match=r"'timout'.*did you mean 'timeout'"):
        Agent(reference.Driver(), timout=3)  # type: ignore[call-arg]
    async with Agent(reference.Driver()) as agent:
        with pytest.raises(TypeError, match=r"'modle'.*did you mean 'model'"):
            agent.send("x", modle="m")  # type: ignore[call-arg]
        with pytest.raises(TypeError, match=r"'shema'.*did you mean 'schema'"):
            agent.thread("k").send("x", shema=int)  # type: ignore[call-arg]
