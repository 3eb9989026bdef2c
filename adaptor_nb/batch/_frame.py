"""The output frame: the input's index, one typed column per schema field, then the accounting columns."""

from __future__ import annotations

import datetime as dt
import enum
import types
import typing
from typing import TYPE_CHECKING, Any

from ._row import CACHED, OK, RowOutcome

if TYPE_CHECKING:
    import pandas

ACCOUNTING = (
    "_status",
    "_error",
    "_cost_usd",
    "_input_tokens",
    "_output_tokens",
    "_turns",
    "_attempts",
    "_duration_s",
    "_run_id",
)
_ACCOUNTING_DTYPES = {
    "_status": "string",
    "_error": "string",
    "_cost_usd": "float64",
    "_input_tokens": "int64",
    "_output_tokens": "int64",
    "_turns": "int64",
    "_attempts": "int64",
    "_duration_s": "float64",
    "_run_id": "string",
}


def _unwrap_optional(tp: Any) -> Any:
    origin = typing.get_origin(tp)
    if origin is typing.Union or origin is types.UnionType:
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        if len(args) == 1:
            return args[0]
    return tp


def field_dtype(annotation: Any) -> str:
    """The pandas dtype for a field type: nullable scalars, strings, datetimes; everything else ``object``."""
    tp = _unwrap_optional(annotation)
    if tp is bool:
        return "boolean"
    if tp is int:
        return "Int64"
    if tp is float:
        return "Float64"
    if tp is str:
        return "string"
    if tp is dt.datetime:
        return "datetime64[ns]"
    if typing.get_origin(tp) is typing.Literal or (isinstance(tp, type) and issubclass(tp, enum.Enum)):
        return "category"
    return "object"


def _typed(values: dict[str, Any], schema: Any) -> dict[str, Any]:
    """Re-validate stored values through the model so nested models come back as model objects."""
    model = schema.model_validate(values)
    return {name: getattr(model, name) for name in schema.model_fields}


def build_frame(index: pandas.Index, outcomes: list[RowOutcome], schema: Any) -> pandas.DataFrame:
    import pandas as pd

    fields = list(schema.model_fields) if schema is not None else ["text"]
    columns: dict[str, list[Any]] = {f: [] for f in fields}
    for out in outcomes:
        vals = _typed(out.values, schema) if schema is not None and out.status in (OK, CACHED) else out.values
        for f in fields:
            v = vals.get(f)
            columns[f].append(v.value if isinstance(v, enum.Enum) else v)
    frame = pd.DataFrame(index=index)
    for f in fields:
        dtype = field_dtype(schema.model_fields[f].annotation) if schema is not None else "string"
        series = pd.Series(columns[f], index=index, dtype="object")
        try:
            frame[f] = series.astype(dtype) if dtype != "object" else series  # type: ignore[call-overload]
        except (TypeError, ValueError):
            frame[f] = series
    acct = {
        "_status": [o.status for o in outcomes],
        "_error": [o.error for o in outcomes],
        "_cost_usd": [o.cost_usd for o in outcomes],
        "_input_tokens": [o.input_tokens for o in outcomes],
        "_output_tokens": [o.output_tokens for o in outcomes],
        "_turns": [o.turns for o in outcomes],
        "_attempts": [o.attempts for o in outcomes],
        "_duration_s": [o.duration_s for o in outcomes],
        "_run_id": [o.run_id for o in outcomes],
    }
    for name in ACCOUNTING:
        frame[name] = pd.Series(acct[name], index=index).astype(_ACCOUNTING_DTYPES[name])  # type: ignore[call-overload]
    return frame
