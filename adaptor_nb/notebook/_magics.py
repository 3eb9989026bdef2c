"""The registered ``%agent`` / ``%%agent`` magic: help text for ``?``, and a clear message where it cannot block."""

from __future__ import annotations

from typing import Any

from ._help import CELL_HELP, LINE_HELP


def agent_magic(line: str, cell: str | None = None) -> None:
    """Placeholder docstring; replaced with the full help below."""
    from IPython.core.error import UsageError

    from ._args import OptionError, split_line
    from ._kernel import kernel_problem
    from ._runner import _shell, line_command, session_of

    shell = _shell()
    if cell is not None:
        problem = kernel_problem(shell)
        if problem:
            raise UsageError(problem)
        raise UsageError(
            "%%agent must be the first line of its cell and the extension must be loaded with %load_ext adaptor_nb "
            "(the cell then waits for the run); it cannot be called through run_cell_magic"
        )
    try:
        line_command(session_of(shell), split_line(line))
    except OptionError as exc:
        raise UsageError(str(exc)) from None


agent_magic.__doc__ = CELL_HELP + "\n" + LINE_HELP


def register(shell: Any) -> None:
    """Register ``agent`` as both a line and a cell magic."""
    shell.register_magic_function(agent_magic, magic_kind="line_cell", magic_name="agent")


def unregister(shell: Any) -> None:
    """Remove the ``agent`` magics."""
    magics = shell.magics_manager.magics
    for kind in ("line", "cell"):
        magics.get(kind, {}).pop("agent", None)
