"""Where a notebook's threads live: one rule for JupyterLab, Notebook, VS Code, nbconvert, nbclient, nbval,
papermill and plain IPython.

In order:

1. ``$ADAPTOR_NB_THREAD_STORE``, when set: that file.
2. ``%agent store keep [NAME]``: ``.adaptor_nb/NAME.sqlite`` in the working directory.
3. A kernel that knows its notebook (jupyter_server sets ``JPY_SESSION_NAME``, VS Code ``__vsc_ipynb_file__``):
   ``.adaptor_nb/<notebook>.sqlite`` beside the notebook.
4. A headless kernel (nbconvert, nbclient, nbval, papermill: a ``jupyter_client`` kernel that is not told which
   notebook it runs): a store of this run, in memory and fresh when the run starts, copied to a file a restarted
   kernel finds again (``_run_store``). A restart keeps the kernel's connection (its signing key), so the file is
   named after that key; a new run gets a new key.
5. A terminal IPython, or a kernel told to show live views without a notebook (``ADAPTOR_NB_LIVE_VIEW=1``):
   ``.adaptor_nb/threads.sqlite`` in the working directory.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ._notebook_file import STORE_DIR, STORE_ENV, STORE_SUFFIX, notebook_file

RUN_STORES = "adaptor_nb-runs"
"""The folder (in the system's temporary directory) that holds the stores of headless runs."""
STALE_AFTER = 7 * 24 * 3600.0
"""Seconds after which a headless run's store is removed (when another headless run starts one)."""
HEADLESS_NOTE = (
    f"in memory, fresh for this headless run (a restarted kernel of the run finds it again; set ${STORE_ENV} or "
    "run %agent store keep to keep threads between runs)"
)


@dataclass(frozen=True)
class StorePlace:
    """Where the threads live: the SQLite file, how it was chosen, and the words ``%agent status`` uses."""

    path: Path
    how: str  # "explicit", "kept", "notebook", "run" or "folder"
    note: str


def _kernel_key(shell: Any) -> bytes:
    """The signing key of the kernel's connection ('' outside a kernel): kept by a restart, new for each run."""
    session = getattr(getattr(shell, "kernel", None), "session", None)
    key = getattr(session, "key", b"")
    return key if isinstance(key, bytes) else str(key).encode()


def _run_store(key: bytes) -> Path:
    """The store of the headless run whose kernel connection has ``key``; removes stale ones beside it."""
    root = Path(tempfile.gettempdir()) / RUN_STORES
    name = "run-" + hashlib.sha256(key).hexdigest()[:20]
    with contextlib.suppress(OSError):
        for old in root.iterdir():
            if old.name != name and time.time() - old.stat().st_mtime > STALE_AFTER:
                shutil.rmtree(old, ignore_errors=True)
    return root / name / ("threads" + STORE_SUFFIX)


_CURRENT: Any = object()


def locate(
    kept: Path | None = None,
    env: dict[str, str] | None = None,
    shell: Any = _CURRENT,
    cwd: Path | None = None,
) -> StorePlace:
    """Where this notebook's threads live (see the module's rule); ``shell`` defaults to the running IPython."""
    env = dict(os.environ) if env is None else env
    cwd = Path.cwd() if cwd is None else cwd
    if shell is _CURRENT:
        from IPython import get_ipython

        shell = get_ipython()
    explicit = env.get(STORE_ENV, "").strip()
    if explicit:
        path = Path(explicit).expanduser()
        return StorePlace(path, "explicit", str(path))
    if kept is not None:
        return StorePlace(kept, "kept", f"{kept.parent.name}/{kept.name} (kept)")
    ns = getattr(shell, "user_ns", None)
    notebook = notebook_file(env, ns if isinstance(ns, dict) else {})
    if notebook is not None and not notebook.is_absolute():
        notebook = cwd / notebook.name
    if notebook is not None and notebook.parent.is_dir():
        path = notebook.parent / STORE_DIR / (notebook.stem + STORE_SUFFIX)
        return StorePlace(path, "notebook", str(path))
    key = _kernel_key(shell)
    if key and env.get("ADAPTOR_NB_LIVE_VIEW", "") != "1":
        return StorePlace(_run_store(key), "run", HEADLESS_NOTE)
    path = cwd / STORE_DIR / ("threads" + STORE_SUFFIX)
    return StorePlace(path, "folder", str(path))
