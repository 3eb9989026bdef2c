"""One lazy-loading scheme for the package and its subpackages, and the ``__module__`` fix-up derived from it.

A package writes its public names once, as a table ``public name -> "module"`` (or ``"module:attribute"`` when the
public name differs from the defining one); modules are relative to the package, as in ``from . import``::

    _PUBLIC = {"Agent": "._agent", "AnthropicReply": "._anthropic:Reply", "scenario": "..drivers.reference"}

    if TYPE_CHECKING:  # the same names, for type checkers and IDEs (a test checks that both agree)
        from ._agent import Agent as Agent
        from ._anthropic import Reply as AnthropicReply

    __getattr__, __dir__, __all__ = lazy_exports(__name__, globals(), _PUBLIC, defined=("helper",))

``__all__`` is the table's names plus ``defined`` (names the package module defines itself), sorted. The first access
to a name imports its module and caches the value in the package namespace. ``submodules`` names submodules that
``package.name`` should import on first use without listing them in ``__all__``.

With ``public_module=`` (the root package passes its own name) every class listed in the table reports that module
as its ``__module__``, however it was first imported: each defining module ends with
``_publish(__name__, globals())``. Call ``lazy_exports`` before the package imports any of its own modules, so the
table is known when they publish.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable, Mapping
from typing import Any

# package name -> (public module, {absolute defining module -> [attribute names]})
_PUBLISHED: dict[str, tuple[str, dict[str, list[str]]]] = {}


def split_target(target: str) -> tuple[str, str | None]:
    """``"._anthropic:Reply"`` -> ``("._anthropic", "Reply")``; ``"._agent"`` -> ``("._agent", None)``."""
    module, _, attribute = target.partition(":")
    return module, attribute or None


def absolute_module(module: str, package: str) -> str:
    """The absolute name of ``module`` written relative to ``package`` (``"._agent"`` -> ``"adaptor_nb._agent"``)."""
    if not module.startswith("."):
        return module
    level = len(module) - len(module.lstrip("."))
    base = package.rsplit(".", level - 1)[0] if level > 1 else package
    rest = module[level:]
    return f"{base}.{rest}" if rest else base


def lazy_exports(
    package: str,
    namespace: dict[str, Any],
    table: Mapping[str, str],
    *,
    defined: Iterable[str] = (),
    submodules: Iterable[str] = (),
    public_module: str | None = None,
) -> tuple[Callable[[str], Any], Callable[[], list[str]], list[str]]:
    """``__getattr__``, ``__dir__`` and ``__all__`` for ``package`` (see the module docstring)."""
    subs = frozenset(submodules)
    public = sorted({*table, *defined})
    if public_module is not None:
        index: dict[str, list[str]] = {}
        for name, target in table.items():
            module, attribute = split_target(target)
            index.setdefault(absolute_module(module, package), []).append(attribute or name)
        _PUBLISHED[package] = (public_module, index)

    def __getattr__(name: str) -> Any:
        target = table.get(name)
        if target is None:
            if name in subs:
                return importlib.import_module(f".{name}", package)
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module, attribute = split_target(target)
        value = getattr(importlib.import_module(module, package), attribute or name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        extra = {"__version__"} & namespace.keys()
        return sorted({*public, *subs, *extra})

    return __getattr__, __dir__, public


def publish(module_name: str, namespace: dict[str, Any]) -> None:
    """Set the public ``__module__`` on the classes of ``module_name`` that a package's table exports."""
    for public_module, index in _PUBLISHED.values():
        for attribute in index.get(module_name, ()):
            obj = namespace.get(attribute)
            if isinstance(obj, type) and obj.__module__ == module_name:
                obj.__module__ = public_module
