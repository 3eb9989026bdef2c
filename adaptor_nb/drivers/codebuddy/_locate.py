"""Where CodeBuddy Code is: ``$CODEBUDDY_CODE_PATH``, the ``codebuddy-agent-sdk`` wheel's binary, or PATH."""

from __future__ import annotations

import importlib.util
import os
import shutil
from pathlib import Path

PATH_ENV = "CODEBUDDY_CODE_PATH"
BINARY = "codebuddy-headless"


def _executable(path: Path) -> bool:
    return path.is_file() and os.access(path, os.X_OK)


def find_codebuddy() -> str | None:
    """The CLI's path, or None when it is not installed (``pip install 'adaptor_nb[codebuddy]'`` puts it in place)."""
    env = os.environ.get(PATH_ENV)
    if env:
        return env if _executable(Path(env)) else None
    spec = importlib.util.find_spec("codebuddy_agent_sdk")
    for location in (spec.submodule_search_locations or []) if spec is not None else []:
        cand = Path(location) / "bin" / BINARY
        if _executable(cand):
            return str(cand)
    return shutil.which(BINARY) or shutil.which("codebuddy")
