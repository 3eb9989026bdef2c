"""Whether a batch runs in a notebook kernel, and whether a front end there can show live widgets."""

from __future__ import annotations

from typing import Any


def kernel_shell() -> Any:
    """The IPython shell of a notebook kernel, or None (plain Python, a terminal IPython)."""
    try:
        from IPython import get_ipython
    except ImportError:
        return None
    shell = get_ipython()
    return shell if shell is not None and getattr(shell, "kernel", None) is not None else None


def in_kernel() -> bool:
    return kernel_shell() is not None


def front_end() -> bool:
    """True inside a notebook kernel whose front end shows live widgets (so a click can answer an approval)."""
    shell = kernel_shell()
    if shell is None:
        return False
    from ..notebook._runner import front_end as shows_widgets

    return shows_widgets(shell)
