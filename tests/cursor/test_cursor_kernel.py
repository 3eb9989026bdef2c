"""``%%agent --driver cursor`` in a real kernel, with the replay stand-in as ``agent`` on PATH."""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

import pytest

_KERNEL = Path(__file__).resolve().parent.parent / "notebook" / "kernel.py"


def _kernel_class() -> type:
    spec = importlib.util.spec_from_file_location("cursor_tests_kernel", _KERNEL)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module.Kernel  # type: ignore[no-any-return]


@pytest.mark.slow
def test_cursor_cell_and_status(tmp_path: Path) -> None:
    pytest.importorskip("ipykernel")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    script = bin_dir / "agent"
    script.write_text(f'#!/bin/sh\nexec {sys.executable} -m adaptor_nb.testing._cursor_replay @answer "$@"\n')
    script.chmod(0o755)
    env = {
        "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
        "CURSOR_API_KEY": "cursor-kernel-key",
        "ADAPTOR_NB_THREAD_STORE": str(tmp_path / "threads.adaptor_nb.sqlite"),
        "PYDEVD_DISABLE_FILE_VALIDATION": "1",
    }
    kernel = _kernel_class()(tmp_path, env)
    try:
        kernel.run_ok("%load_ext adaptor_nb")
        cell = kernel.run("%%agent --driver cursor\nReply with exactly: hello from cursor")
        assert cell.status == "ok", cell.text()
        _, state = kernel.last_view()
        assert state["header"]["state"] == "done"
        assert [i["text"] for i in state["items"] if i["kind"] == "text"] == ["hello from cursor"]
        kernel.run_ok("%agent use cursor")
        status = kernel.run_ok("%agent status").text()
        assert "default driver: cursor" in status
    finally:
        kernel.shutdown()
        assert not kernel.km.is_alive()
