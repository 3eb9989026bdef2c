"""Public classes report the module ``adaptor_nb`` (as users import them), whichever module defines them."""

from __future__ import annotations

import sys
from typing import Any


def publish(module_name: str, namespace: dict[str, Any]) -> None:
    """Set ``__module__ = "adaptor_nb"`` on the classes of ``module_name`` that the package exports."""
    lazy: dict[str, str] = getattr(sys.modules.get("adaptor_nb"), "_LAZY", {})
    short = "." + module_name.rsplit(".", 1)[-1]
    for public, module in lazy.items():
        obj = namespace.get(public)
        if module == short and isinstance(obj, type) and obj.__module__ == module_name:
            obj.__module__ = "adaptor_nb"
