"""``%%agent --driver codebuddy`` in a real kernel: the real CLI against the fake Chat Completions server."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from adaptor_nb.testing import FakeChatCompletionsServer

from .conftest import API_KEY, NetworkTripwire

_KERNEL = Path(__file__).resolve().parent.parent / "notebook" / "kernel.py"


def _kernel_class() -> type:
    spec = importlib.util.spec_from_file_location("codebuddy_tests_kernel", _KERNEL)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module.Kernel  # type: ignore[no-any-return]


@pytest.mark.slow
@pytest.mark.codebuddy
def test_codebuddy_cell_and_status(tmp_path: Path, home: Path, codebuddy_bin: str, tripwire: NetworkTripwire) -> None:
    pytest.importorskip("ipykernel")
    with FakeChatCompletionsServer() as fake:
        env = {
            "HOME": str(home),
            "CODEBUDDY_API_KEY": API_KEY,
            "CODEBUDDY_BASE_URL": fake.url,
            "CODEBUDDY_MAX_RETRIES": "0",
            "CODEBUDDY_CODE_PATH": codebuddy_bin,
            "ADAPTOR_NB_THREAD_STORE": str(tmp_path / "threads.adaptor_nb.sqlite"),
            "PYDEVD_DISABLE_FILE_VALIDATION": "1",
            **tripwire.env(),
        }
        kernel = _kernel_class()(tmp_path, env)
        try:
            kernel.run_ok("%load_ext adaptor_nb")
            cell = kernel.run("%%agent --driver codebuddy\nReply with exactly: hello [[say hello from codebuddy]]")
            assert cell.status == "ok", cell.text()
            _, state = kernel.last_view()
            assert state["header"]["state"] == "done"
            assert [i["text"] for i in state["items"] if i["kind"] == "text"] == ["hello from codebuddy"]
            assert API_KEY not in str(state)
            kernel.run_ok("%agent use codebuddy")
            status = kernel.run_ok("%agent status").text()
            assert "default driver: codebuddy" in status
        finally:
            kernel.shutdown()
            assert not kernel.km.is_alive()
    assert [r.prompt for r in fake.model_requests][-1].endswith("[[say hello from codebuddy]]")


NOTEBOOK_CELLS = [
    "%load_ext adaptor_nb",
    "%%agent --driver codebuddy\nReply with exactly: hello [[say hello from codebuddy]]",
    "%agent status",
    "from adaptor_nb import Agent\n"
    "from adaptor_nb.drivers import codebuddy\n"
    "agent = Agent(codebuddy.Driver(), workspace='.')\n"
    "result = await agent.send('[[say second]]').result()\n"
    "await agent.close()\n"
    "print(repr(agent), repr(result), result.transcript(), sep='\\n')\n"
    "print(result.raw().stdout.decode('utf-8', 'replace'))\n"
    "print(result.raw().stderr.decode('utf-8', 'replace'))\n"
    "result",
]


@pytest.mark.slow
@pytest.mark.codebuddy
def test_a_saved_notebook_never_holds_the_api_key(
    tmp_path: Path, home: Path, codebuddy_bin: str, tripwire: NetworkTripwire, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The CLI echoes the key (``initialize``'s account, ``X-User-Id``); none of it reaches the saved .ipynb."""
    pytest.importorskip("ipykernel")
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    with FakeChatCompletionsServer() as fake:
        env = {
            "HOME": str(home),
            "CODEBUDDY_API_KEY": API_KEY,
            "CODEBUDDY_BASE_URL": fake.url,
            "CODEBUDDY_MAX_RETRIES": "0",
            "CODEBUDDY_CODE_PATH": codebuddy_bin,
            "ADAPTOR_NB_THREAD_STORE": str(tmp_path / "threads.adaptor_nb.sqlite"),
            "PYDEVD_DISABLE_FILE_VALIDATION": "1",
            **tripwire.env(),
        }
        for key, value in env.items():
            monkeypatch.setenv(key, value)
        book = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in NOTEBOOK_CELLS])
        nbclient.NotebookClient(
            book, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
        ).execute()
    path = tmp_path / "saved.ipynb"
    nbformat.write(book, path)
    saved = path.read_text(encoding="utf-8")
    # The runs really happened and their output is in the file...
    assert "hello from codebuddy" in saved and "second" in saved and "codebuddy.Driver(" in saved
    assert [r.prompt for r in fake.model_requests][-1] == "[[say second]]"
    # ...but neither the key nor the tail the CLI puts in its account names.
    assert API_KEY not in saved and API_KEY[-8:] not in saved
