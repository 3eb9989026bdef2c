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

``moved`` maps names that used to be public here to the public module that is now their home: the old name still
resolves, to the same object, with one ``DeprecationWarning`` naming the new home (the first access caches it).

With ``public_module=`` (the root package passes its own name) every class listed in the table reports that module
as its ``__module__`` (so reprs and pickles name the public path), however it was first imported. The fix-up lives
here and nowhere else: the package module's type is swapped for :class:`_Package`, whose ``__setattr__`` sees each
submodule the import system binds on it once that submodule has finished executing, and then settles every table
entry whose defining module is loaded. Call ``lazy_exports`` before the package imports any of its own modules.
"""

from __future__ import annotations

import importlib
import sys
import warnings
from collections.abc import Callable, Iterable, Mapping
from types import ModuleType
from typing import Any

# absolute defining module -> {attribute -> public module}: the classes still waiting for their public __module__.
_PENDING: dict[str, dict[str, str]] = {}


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


class _Package(ModuleType):
    """A package module that settles public ``__module__`` names as its submodules finish loading."""

    def __setattr__(self, name: str, value: Any) -> None:
        super().__setattr__(name, value)
        if isinstance(value, ModuleType) and _PENDING:
            if type(value) is ModuleType and hasattr(value, "__path__"):
                value.__class__ = _Package  # a subpackage: its own submodules bind on it
            _settle()


def _settle() -> None:
    """Give each pending class whose defining module has finished executing its public ``__module__``."""
    for module_name in list(_PENDING):
        module = sys.modules.get(module_name)
        if module is None or getattr(module.__spec__, "_initializing", False):
            continue
        waiting = _PENDING.pop(module_name, None)  # None: another thread settled it first
        for attribute, public_module in (waiting or {}).items():
            obj = module.__dict__.get(attribute)
            if isinstance(obj, type) and obj.__module__ == module_name:
                obj.__module__ = public_module


def _watch(package: str, table: Mapping[str, str], public_module: str) -> None:
    for name, target in table.items():
        module, attribute = split_target(target)
        pending = _PENDING.setdefault(absolute_module(module, package), {})
        pending.setdefault(attribute or name, public_module)  # the first package to claim a class names it
    root = sys.modules[package]
    if type(root) is ModuleType:
        root.__class__ = _Package
    _settle()


def lazy_exports(
    package: str,
    namespace: dict[str, Any],
    table: Mapping[str, str],
    *,
    defined: Iterable[str] = (),
    submodules: Iterable[str] = (),
    moved: Mapping[str, str] | None = None,
    public_module: str | None = None,
) -> tuple[Callable[[str], Any], Callable[[], list[str]], list[str]]:
    """``__getattr__``, ``__dir__`` and ``__all__`` for ``package`` (see the module docstring)."""
    subs = frozenset(submodules)
    old = dict(moved or {})
    public = sorted({*table, *defined})
    if public_module is not None:
        _watch(package, table, public_module)

    def __getattr__(name: str) -> Any:
        target = table.get(name)
        if target is None:
            if name in subs:
                return importlib.import_module(f".{name}", package)
            home = old.get(name)
            if home is None:
                raise AttributeError(f"module {package!r} has no attribute {name!r}")
            warnings.warn(
                f"{package}.{name} has moved to {home}.{name}; import it from {home} "
                f"(the old name will be removed in the next minor release)",
                DeprecationWarning,
                stacklevel=2,
            )
            value = getattr(importlib.import_module(home), name)
        else:
            module, attribute = split_target(target)
            value = getattr(importlib.import_module(module, package), attribute or name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        extra = {"__version__"} & namespace.keys()
        return sorted({*public, *subs, *extra})

    return __getattr__, __dir__, public
