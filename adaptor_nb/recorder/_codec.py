"""Events to plain JSON and back, guided by the event classes' own type hints (no pickling, nothing executable)."""

from __future__ import annotations

import base64
import dataclasses
import enum
import types
import typing
from datetime import datetime
from typing import Any

from .. import _errors, _events
from .._approvals import ApprovalRequest

EVENT_TYPES: dict[str, type[_events.Event]] = {
    cls.__name__: cls
    for cls in [*vars(_events).values(), ApprovalRequest]
    if isinstance(cls, type) and issubclass(cls, _events.Event) and cls is not _events.Event
}


def encode(value: Any) -> Any:
    """``value`` as JSON data: enums by value, bytes as base64, dataclasses by their public fields."""
    if value is None or isinstance(value, bool | int | float | str):
        return value.value if isinstance(value, enum.Enum) else value
    if isinstance(value, enum.Enum):
        return encode(value.value)
    if isinstance(value, bytes):
        return {"$b64": base64.b64encode(value).decode("ascii")}
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, list | tuple):
        return [encode(v) for v in value]
    if isinstance(value, dict):
        return {str(k): encode(v) for k, v in value.items()}
    if isinstance(value, BaseException):
        return error_identity(value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: encode(getattr(value, f.name)) for f in dataclasses.fields(value) if not f.name.startswith("_")}
    return repr(value)


def error_identity(err: BaseException) -> dict[str, Any]:
    """What identifies an error: its class, reason and message (no partial result, no details)."""
    reason = getattr(err, "reason", None)
    return {"type": type(err).__name__, "reason": encode(reason), "message": str(err)}


_HINTS: dict[type, dict[str, Any]] = {}


def _namespace() -> dict[str, Any]:
    """Where the vocabulary's annotations resolve (public classes report ``adaptor_nb`` as their module)."""
    from .. import _approvals, _enums, _policy, _result

    ns: dict[str, Any] = {}
    for module in (typing, _enums, _errors, _policy, _result, _events, _approvals):
        ns.update(vars(module))
    return ns


def _hints(cls: type) -> dict[str, Any]:
    """The resolved field types of ``cls`` (cached)."""
    found = _HINTS.get(cls)
    if found is None:
        found = _HINTS[cls] = typing.get_type_hints(cls, globalns=_namespace())
    return found


def rebuild_error(data: Any) -> BaseException:
    """An error of the recorded class (an adaptor_nb error when it is one, else RunError) with its message."""
    if not isinstance(data, dict):
        return _errors.RunError(str(data))
    cls = getattr(_errors, str(data.get("type", "")), None)
    if not (isinstance(cls, type) and issubclass(cls, BaseException)):
        cls = _errors.RunError
    err = cls.__new__(cls)
    BaseException.__init__(err, str(data.get("message", "")))
    reason = data.get("reason")
    if reason is not None:
        from .._enums import FailureReason

        try:
            object.__setattr__(err, "reason", FailureReason(reason))
        except (ValueError, AttributeError, TypeError):
            pass
    return err


def decode(value: Any, hint: Any) -> Any:
    """``value`` (from ``encode``) back as the type ``hint`` names, where that can be done without guessing."""
    if value is None:
        return None
    if isinstance(value, dict) and set(value) == {"$b64"}:
        return base64.b64decode(value["$b64"])  # whatever the hint says (a field named ``bytes`` hides the type)
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        options = [a for a in typing.get_args(hint) if a is not type(None)]
        for option in options:
            if isinstance(option, type) and issubclass(option, enum.Enum):
                try:
                    return option(value)
                except ValueError:
                    continue
            if option is str and isinstance(value, str):
                return value
        return decode(value, options[0]) if options else value
    if origin in (tuple, list):
        args = [a for a in typing.get_args(hint) if a is not Ellipsis]
        items = [decode(v, args[0] if args else Any) for v in value]
        return tuple(items) if origin is tuple else items
    if origin is dict or hint is Any or not isinstance(hint, type):
        return value
    if issubclass(hint, enum.Enum):
        try:
            return hint(value)
        except ValueError:
            return value
    if hint is datetime and isinstance(value, str):
        return datetime.fromisoformat(value)
    if issubclass(hint, BaseException):
        return rebuild_error(value)
    if dataclasses.is_dataclass(hint) and isinstance(value, dict):
        hints = _hints(hint)
        fields = {f.name for f in dataclasses.fields(hint) if f.init and not f.name.startswith("_")}
        return hint(**{k: decode(v, hints.get(k, Any)) for k, v in value.items() if k in fields})
    return value
