"""Built-in drivers come in through one door: ``adaptor_nb.driver``, public ``adaptor_nb`` names, their own package."""

from __future__ import annotations

import ast
import asyncio
import os
import sys
import time
from pathlib import Path

import pytest

import adaptor_nb
import adaptor_nb.driver as door
from adaptor_nb.driver import EnvironmentStatus, capture_output

ROOT = Path(__file__).resolve().parents[2]
DRIVERS = ROOT / "adaptor_nb" / "drivers"


def _module_of(path: Path) -> str:
    rel = path.relative_to(ROOT).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _absolute(path: Path, node: ast.ImportFrom) -> str:
    if node.level == 0:
        return node.module or ""
    package = _module_of(path).split(".")
    if path.name != "__init__.py":
        package.pop()
    base = package[: len(package) - (node.level - 1)]
    return ".".join([*base, node.module] if node.module else base)


def _refusals(path: Path) -> list[str]:
    """Every import in ``path`` (at any depth: in functions and under TYPE_CHECKING too) a driver may not make."""
    own = ".".join(_module_of(path).split(".")[:3])  # adaptor_nb.drivers.<name>
    bad: list[str] = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            targets = [(a.name, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            module = _absolute(path, node)
            targets = [(module, f"from {module} import {a.name}") for a in node.names]
            if module == "adaptor_nb":
                targets = [
                    (
                        module if a.name in adaptor_nb.__all__ else f"adaptor_nb.{a.name}",
                        f"from adaptor_nb import {a.name}",
                    )
                    for a in node.names
                ]
        else:
            continue
        for module, shown in targets:
            if not (module == "adaptor_nb" or module.startswith("adaptor_nb.")):
                continue  # the standard library and third-party packages
            if module in ("adaptor_nb", "adaptor_nb.driver") or module == own or module.startswith(own + "."):
                continue
            if not any(part.startswith("_") for part in module.split(".")):
                continue  # a public module such as adaptor_nb.mcp
            bad.append(f"{path.relative_to(ROOT)}:{node.lineno}: {shown}")
    return bad


def test_every_driver_module_imports_only_the_door_public_names_and_its_own_package() -> None:
    files = sorted(DRIVERS.rglob("*.py"))
    assert len(files) > 10
    refusals = [line for f in files for line in _refusals(f)]
    assert not refusals, "driver modules import private adaptor_nb modules:\n" + "\n".join(refusals)


def test_the_check_names_the_file_and_the_import(tmp_path: Path) -> None:
    bad = DRIVERS / "claude" / "_door_probe_tmp.py"
    bad.write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ..._events import Event\n"
        "def f():\n    from adaptor_nb._enums import Phase\n    from ...driver._spi import Invocation\n"
        "    from ...driver import Descriptor\n    from . import _config\n    from adaptor_nb import mcp, Agent\n"
    )
    try:
        found = _refusals(bad)
    finally:
        bad.unlink()
    assert found == [
        "adaptor_nb/drivers/claude/_door_probe_tmp.py:3: from adaptor_nb._events import Event",
        "adaptor_nb/drivers/claude/_door_probe_tmp.py:5: from adaptor_nb._enums import Phase",
        "adaptor_nb/drivers/claude/_door_probe_tmp.py:6: from adaptor_nb.driver._spi import Invocation",
    ]


def test_the_door_exports_what_drivers_use() -> None:
    assert len(set(door.__all__)) == len(door.__all__)
    for name in door.__all__:
        assert getattr(door, name) is not None, name
    for name in (
        "TextDelta",
        "ToolCall",
        "Notice",
        "Usage",
        "TranscriptItem",
        "NoticeKind",
        "ResumeRejectedError",
        "CLIProcess",
        "Stdio",
        "EventSourceMeta",
        "EnvironmentStatus",
        "capture_output",
    ):
        assert name in door.__all__, name


def test_environment_status_compares_as_its_string() -> None:
    assert EnvironmentStatus.OK == "ok" and EnvironmentStatus("degraded") is EnvironmentStatus.DEGRADED
    assert f"{EnvironmentStatus.MISSING}" == "missing"


async def test_capture_output_returns_stdout() -> None:
    out = await capture_output([sys.executable, "-c", "print('1.2.3 (x)')"], timeout=30)
    assert out.strip() == "1.2.3 (x)"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    stat = Path(f"/proc/{pid}/stat")
    return not (stat.exists() and stat.read_text().split(") ", 1)[1].startswith("Z"))


async def test_capture_output_kills_a_child_that_hangs(tmp_path: Path) -> None:
    pidfile = tmp_path / "pid"
    script = f"import os, time; open({str(pidfile)!r}, 'w').write(str(os.getpid())); time.sleep(600)"
    started = time.monotonic()
    with pytest.raises(TimeoutError):
        await capture_output([sys.executable, "-c", script], timeout=1.0)
    assert time.monotonic() - started < 30
    pid = int(pidfile.read_text())
    assert not _alive(pid)


async def test_the_codex_version_probe_kills_a_hanging_cli(tmp_path: Path) -> None:
    from adaptor_nb.drivers import codex

    pidfile = tmp_path / "pid"
    cli = tmp_path / "codex"
    cli.write_text(
        f"#!{sys.executable}\nimport os, time\nopen({str(pidfile)!r}, 'w').write(str(os.getpid()))\ntime.sleep(600)\n"
    )
    cli.chmod(0o755)
    driver = codex.Driver(codex.Config(command=[str(cli)], startup_timeout=1.0))
    report = await asyncio.wait_for(driver.probe_environment(), 60)
    assert report.status is EnvironmentStatus.DEGRADED
    assert not next(c for c in report.checks if c.name == "version").ok
    assert not _alive(int(pidfile.read_text()))


def test_a_report_built_with_a_plain_string_holds_the_enum() -> None:
    report = door.EnvironmentReport(driver="x", status="degraded")  # type: ignore[arg-type]
    assert report.status is EnvironmentStatus.DEGRADED and report.status == "degraded"
    with pytest.raises(ValueError):
        door.EnvironmentReport(driver="x", status="splendid")  # type: ignore[arg-type]


CLAUDE = ROOT / ".cache" / "npm" / "node_modules" / ".bin" / "claude"


@pytest.mark.skipif(not CLAUDE.exists(), reason="the pinned Claude CLI is not installed")
async def test_the_notebook_default_asks_the_claude_probe_which_knows_bedrock(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from adaptor_nb.notebook._defaults import probe

    monkeypatch.setenv("PATH", f"{CLAUDE.parent}{os.pathsep}{os.environ.get('PATH', '')}")
    for var in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN", "CLAUDE_CONFIG_DIR"):
        monkeypatch.delenv(var, raising=False)
    driver, why = await probe("claude", {}, tmp_path)
    assert driver is None and "auth" in why
    driver, why = await probe("claude", {"CLAUDE_CODE_USE_BEDROCK": "1"}, tmp_path)
    assert driver is not None and why == ""
