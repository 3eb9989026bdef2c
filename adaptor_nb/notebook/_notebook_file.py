"""Which notebook file this kernel runs, where the front end says, so its threads can be named after it.

jupyter_server (JupyterLab, Notebook 7) starts a kernel with ``JPY_SESSION_NAME`` set to the notebook's path, and
ipykernel copies it into the user namespace as ``__session__``; VS Code puts the notebook's absolute path in
``__vsc_ipynb_file__``. Headless runners (nbclient, nbconvert, nbval, papermill) set none of these: there the
notebook is unknown and its threads live in a store of the run (see ``_where.locate``).
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path
from typing import Any

STORE_DIR = ".adaptor_nb"
STORE_SUFFIX = ".sqlite"
STORE_ENV = "ADAPTOR_NB_THREAD_STORE"


def _user_ns() -> dict[str, Any]:
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None
    ns = getattr(shell, "user_ns", None)
    return ns if isinstance(ns, dict) else {}


def notebook_file(env: dict[str, str] | None = None, user_ns: dict[str, Any] | None = None) -> Path | None:
    """The notebook this kernel runs (relative names resolved in the working directory), or None if unknown."""
    env = dict(os.environ) if env is None else env
    ns = _user_ns() if user_ns is None else user_ns
    for value in (env.get("JPY_SESSION_NAME", ""), ns.get("__session__", ""), ns.get("__vsc_ipynb_file__", "")):
        name = value.strip() if isinstance(value, str) else ""
        if name.endswith(".ipynb"):
            path = Path(name)
            # jupyter_server gives the path from its root; the kernel runs in the notebook's folder
            return path if path.is_absolute() else Path.cwd() / path.name
    return None


def notebook_stem(env: dict[str, str] | None = None, user_ns: dict[str, Any] | None = None) -> str:
    """The notebook's file name without ``.ipynb`` ('' when the kernel cannot tell)."""
    path = notebook_file(env, user_ns)
    return path.stem if path is not None else ""


def store_name(env: dict[str, str] | None = None, user_ns: dict[str, Any] | None = None) -> str:
    """The default NAME of ``%agent store keep``: the notebook's stem as a plain file name, else ``threads``."""
    plain = re.sub(r"[^A-Za-z0-9_.-]+", "-", notebook_stem(env, user_ns)).strip("-.")[:80]
    return plain or "threads"
