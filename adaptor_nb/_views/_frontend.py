"""Whether code runs in a notebook kernel, and whether a front end there shows live widgets."""

from __future__ import annotations

import os
from typing import Any


def front_end(shell: Any) -> bool:
    """True when a front end may show live widgets: a Jupyter server session (JupyterLab, Notebook), VS Code, or
    ``ADAPTOR_NB_LIVE_VIEW=1``. Headless runners (nbclient, nbconvert, nbval, papermill) get the finished run only,
    as one static output, so saved outputs and exports are the same every time."""
    forced = os.environ.get("ADAPTOR_NB_LIVE_VIEW", "")
    if forced in ("0", "1"):
        return forced == "1"
    return bool(os.environ.get("JPY_SESSION_NAME")) or "__vsc_ipynb_file__" in getattr(shell, "user_ns", {})


def kernel_shell() -> Any:
    """The IPython shell of a notebook kernel, or None (plain Python, a terminal IPython)."""
    try:
        from IPython import get_ipython
    except ImportError:
        return None
    shell = get_ipython()
    return shell if shell is not None and getattr(shell, "kernel", None) is not None else None


def in_kernel() -> bool:
    """True inside a notebook kernel."""
    return kernel_shell() is not None


def kernel_front_end() -> bool:
    """True inside a notebook kernel whose front end shows live widgets (so a click can answer an approval)."""
    shell = kernel_shell()
    return shell is not None and front_end(shell)
