"""The bridge's third-party packages, checked once so that a missing extra names itself."""

from __future__ import annotations

import importlib

EXTRA_HINT = "pip install 'adaptor_nb[agui]'"
_NEEDED = {"ag_ui": "ag-ui-protocol", "starlette": "starlette", "uvicorn": "uvicorn"}


def require() -> None:
    """Raise ImportError naming the ``agui`` extra when one of its packages is absent."""
    missing = []
    for module, dist in _NEEDED.items():
        try:
            importlib.import_module(module)
        except ImportError:
            missing.append(dist)
    if missing:
        raise ImportError(
            f"the AG-UI bridge needs the 'agui' extra ({', '.join(missing)} missing): {EXTRA_HINT}",
            name="adaptor_nb.bridges.agui",
        )
