"""Loading and unloading the extension in an IPython shell, and the message on kernels that are too old."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import ipykernel
import pytest
from IPython.core.error import UsageError
from IPython.testing.globalipapp import start_ipython

from adaptor_nb import Result
from adaptor_nb.notebook import load_ipython_extension, unload_ipython_extension
from adaptor_nb.notebook._kernel import kernel_problem
from adaptor_nb.notebook._transform import rewrite


def get_ipython() -> Any:
    from IPython import get_ipython as current

    return start_ipython() or current()


@pytest.fixture
def shell() -> Any:
    ip = get_ipython()
    load_ipython_extension(ip)
    yield ip
    unload_ipython_extension(ip)


def test_load_registers_magics_transformer_and_reprs(shell: Any) -> None:
    assert shell.input_transformers_cleanup[0] is rewrite
    assert "agent" in shell.magics_manager.magics["cell"] and "agent" in shell.magics_manager.magics["line"]
    assert shell.transform_cell("%%agent --thread t\nhi\n").startswith("await ")
    result = Result(text="<b>hi</b>", provider="p", model="m", turns=1)
    formatters = shell.display_formatter.formatters
    assert formatters["text/plain"](result) == "Result(provider='p', model='m', turns=1, text='<b>hi</b>')"
    assert "&lt;b&gt;hi&lt;/b&gt;" in formatters["text/html"].lookup(result)(result)


def test_loading_twice_keeps_one_transformer(shell: Any) -> None:
    load_ipython_extension(shell)
    assert shell.input_transformers_cleanup.count(rewrite) == 1


def test_unload_removes_everything() -> None:
    ip = get_ipython()
    load_ipython_extension(ip)
    unload_ipython_extension(ip)
    assert rewrite not in ip.input_transformers_cleanup
    assert "agent" not in ip.magics_manager.magics["cell"]
    with pytest.raises(KeyError):
        ip.display_formatter.formatters["text/html"].lookup(Result(text="x"))


def test_cell_magic_called_directly_explains_itself(shell: Any) -> None:
    with pytest.raises(UsageError, match="first line of its cell"):
        shell.run_cell_magic("agent", "", "hello")


def test_line_magic_runs_sync_subcommands(shell: Any, capsys: pytest.CaptureFixture[str]) -> None:
    shell.run_line_magic("agent", "help")
    assert "--approvals MODE" in capsys.readouterr().out
    with pytest.raises(UsageError, match="unknown subcommand"):
        shell.run_line_magic("agent", "frobnicate")


@pytest.mark.parametrize(("version", "ok"), [("7.3.0", False), ("6.29.5", False), ("7.4.0", True), ("8.0.0a1", True)])
def test_old_kernels_get_a_clear_message(monkeypatch: pytest.MonkeyPatch, version: str, ok: bool) -> None:
    monkeypatch.setattr(ipykernel, "__version__", version)
    problem = kernel_problem(SimpleNamespace(kernel=object()))
    if ok:
        assert problem == ""
    else:
        assert "ipykernel>=7.4" in problem and version in problem and "restart the kernel" in problem


def test_plain_ipython_needs_no_kernel() -> None:
    assert kernel_problem(SimpleNamespace()) == ""
