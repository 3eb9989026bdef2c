"""Tables and text views of a Result: structured output and transcript as DataFrames, a safe markdown summary."""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas

    from ._result import Result

_UNSAFE_LINK = re.compile(r"\[([^\]\n]*)\]\(\s*(?!https?://)[^)\n]*\)", re.IGNORECASE)
_UNSAFE_REF = re.compile(r"^(\s*)\[([^\]\n]+)\]:(?!\s*https?://)", re.IGNORECASE | re.MULTILINE)


_NEED_PANDAS = "this needs pandas: pip install 'adaptor_nb[pandas]'"


def _structured_value(result: Result) -> Any:
    if result._has_structured:
        return result.structured
    from ._schema import parse_json_text

    try:
        return parse_json_text(result.text)
    except ValueError:
        raise ValueError(
            "this Result has no structured output (send with schema=... or %%agent --schema) and its text is not JSON"
        ) from None


def records_frame(value: Any) -> pandas.DataFrame:
    """A DataFrame from a JSON value: a list of records, one record, or a list/scalar of plain values."""
    try:
        import pandas as pd
    except ImportError:
        raise ImportError(_NEED_PANDAS) from None
    if hasattr(value, "model_dump"):
        value = value.model_dump(mode="json")
    if isinstance(value, list | tuple):
        rows = [v.model_dump(mode="json") if hasattr(v, "model_dump") else v for v in value]
        if rows and all(isinstance(r, dict) for r in rows):
            return pd.DataFrame.from_records(rows)
        return pd.DataFrame({"value": rows})
    if isinstance(value, dict):
        return pd.DataFrame.from_records([value])
    return pd.DataFrame({"value": [value]})


def structured_frame(result: Result) -> pandas.DataFrame:
    """The structured output of ``result`` as a DataFrame (one row per record)."""
    return records_frame(_structured_value(result))


_TRANSCRIPT_COLUMNS = [
    "kind",
    "text",
    "tool_name",
    "tool_use_id",
    "input",
    "is_error",
    "model",
    "input_tokens",
    "output_tokens",
    "cost_usd",
    "message_id",
    "author",
]


def transcript_frame(result: Result) -> pandas.DataFrame:
    """The transcript of ``result`` as a DataFrame, one row per item."""
    try:
        import pandas as pd
    except ImportError:
        raise ImportError(_NEED_PANDAS) from None
    rows: list[dict[str, Any]] = []
    for item in result.transcript():
        usage = item.usage
        message = item.message
        rows.append(
            {
                "kind": item.kind,
                "text": item.text if message is None else message.text,
                "tool_name": item.tool_name,
                "tool_use_id": item.tool_use_id,
                "input": item.input,
                "is_error": item.is_error,
                "model": item.model,
                "input_tokens": usage.input_tokens if usage is not None else None,
                "output_tokens": usage.output_tokens if usage is not None else None,
                "cost_usd": item.cost_usd,
                "message_id": message.id if message is not None else "",
                "author": message.author.kind.name.lower() if message is not None else "",
            }
        )
    return pd.DataFrame(rows, columns=_TRANSCRIPT_COLUMNS)


def safe_markdown(text: str) -> str:
    """Agent text as markdown that carries no live HTML and no non-http(s) links."""
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    text = _UNSAFE_LINK.sub(lambda m: m.group(1), text)
    return _UNSAFE_REF.sub(lambda m: f"{m.group(1)}\\[{m.group(2)}\\]:", text)


def usage_line(result: Result) -> str:
    """A one-line summary: provider, model, turns, tokens, cost."""
    parts = [p for p in (result.provider, result.model) if p]
    parts.append(f"{result.turns} turn" + ("" if result.turns == 1 else "s"))
    usage = result.usage
    if usage is not None:
        parts.append(f"{usage.input_tokens} in / {usage.output_tokens} out tokens")
        if usage.estimated_cost_milli:
            parts.append(f"${usage.cost_usd:.4f}")
    return " · ".join(parts)


def result_markdown(result: Result) -> str:
    """The reply as safe markdown, the structured output as JSON, and a usage line."""
    out = [safe_markdown(result.text) if result.text else "*(no text)*"]
    if result._has_structured:
        structured = json.dumps(result.structured, indent=2, ensure_ascii=False, default=str)
        out.append("```json\n" + structured.replace("```", "` ` `") + "\n```")
    out.append(f"*{safe_markdown(usage_line(result))}*")
    return "\n\n".join(out)
