"""The notebook layer: ``%%agent`` / ``%agent`` magics, the live run view, rich reprs and the default driver.

Load it with ``%load_ext adaptor_nb``. Heavy modules (widgets, the core) load at the first cell that needs them.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

from .._naming import lazy_exports

# public name -> defining module
_PUBLIC: dict[str, str] = {"RunView": ".._views._view", "run_cell": "._runner", "run_line": "._runner"}

if TYPE_CHECKING:
    from .._views._view import RunView as RunView
    from ._runner import run_cell as run_cell
    from ._runner import run_line as run_line

__getattr__, __dir__, __all__ = lazy_exports(
    __name__, globals(), _PUBLIC, defined=("interactive", "load_ipython_extension", "unload_ipython_extension")
)


def load_ipython_extension(ipython: Any) -> None:
    """Register the magics, the input transformer that makes ``%%agent`` cells wait, and the Result reprs."""
    from . import _magics, _reprs
    from ._kernel import kernel_problem
    from ._transform import rewrite

    _magics.register(ipython)
    _reprs.register(ipython)
    transformers = ipython.input_transformers_cleanup
    if rewrite not in transformers:
        transformers.insert(0, rewrite)
    problem = kernel_problem(ipython)
    if problem:
        print(f"adaptor_nb: {problem}", file=sys.stderr)


def unload_ipython_extension(ipython: Any) -> None:
    """Undo ``load_ipython_extension`` and close the Agents the notebook created."""
    import asyncio

    from . import _magics, _reprs
    from ._transform import rewrite

    if rewrite in ipython.input_transformers_cleanup:
        ipython.input_transformers_cleanup.remove(rewrite)
    _magics.unregister(ipython)
    _reprs.unregister(ipython)
    session = getattr(ipython, "_adaptor_nb_session", None)
    if session is not None:
        ipython._adaptor_nb_session = None
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            loop = None
        if loop is not None:
            task = loop.create_task(session.aclose())
            _closing.add(task)
            task.add_done_callback(_closing.discard)
        else:
            asyncio.run(session.aclose())


_closing: set[Any] = set()


def interactive() -> bool:
    """True when the current cell was sent by a front end that can take input (not nbclient, nbconvert or nbval)."""
    from IPython import get_ipython

    shell = get_ipython()
    kernel = getattr(shell, "kernel", None)
    return bool(getattr(kernel, "_allow_stdin", False))
