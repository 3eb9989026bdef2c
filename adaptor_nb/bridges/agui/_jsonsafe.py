"""Any event payload as JSON-safe data (for CUSTOM events): nothing is interpreted, nothing raises."""

from __future__ import annotations

import base64
import dataclasses
import enum
import math
from collections.abc import Mapping
from datetime import date, datetime
from typing import Any

_MAX_DEPTH = 12


def json_safe(value: Any, _depth: int = 0) -> Any:
    """``value`` as JSON-compatible data: dataclasses as dicts of their public fields (``meta`` left out), enums as
    their values, bytes as base64, exceptions as type and message, anything else unknown as its ``repr``."""
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if isinstance(value, enum.Enum):
        return json_safe(value.value, _depth)
    if _depth >= _MAX_DEPTH:
        return repr(value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {
            f.name: json_safe(getattr(value, f.name), _depth + 1)
            for f in dataclasses.fields(value)
            if not f.name.startswith("_") and f.name != "meta"
        }
    if isinstance(value, Mapping):
        return {str(k): json_safe(v, _depth + 1) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [json_safe(v, _depth + 1) for v in value]
    if isinstance(value, bytes | bytearray):
        return {"base64": base64.b64encode(bytes(value)).decode("ascii")}
    if isinstance(value, datetime | date):
        return value.isoformat()
    if isinstance(value, BaseException):
        return {"type": type(value).__name__, "message": str(value)}
    return repr(value)
