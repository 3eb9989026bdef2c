"""Tables and text views of a Result: structured output and transcript as DataFrames, a safe markdown summary."""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas

    from ._result import Result

_FENCE_OPEN = re.compile(r" {0,3}(`{3,}|~{3,})(.*)")
_TICK_RUN = re.compile(r"`+")
_INFO_WORD = re.compile(r"[\w+#.-]*")
# Markdown syntax the scanner looks at; everything else is copied through.
_SPECIAL = re.compile(r"\\[!-/:-@\[-`{-~]|`+|!?\[|\]|[<>&]")
# An inline code span kept as code: nothing inside that could turn live if a renderer reads it differently.
_CODE_SPAN = re.compile(r"(`+)([^`\[\]<>&|\\\n]+)\1(?!`)")
# A blockquote marker: ``>`` with only spaces and other markers before it on its line.
_QUOTE_PREFIX = re.compile(r"[ >]*")
_ANY_SPAN = re.compile(r"(`+)[^`\n]+\1(?!`)")
# A destination kept: an explicit http(s) URL (the widget's rule) of characters that cannot end or re-open markup.
_SAFE_DEST = re.compile(r"\(\s*(https?://[^\s()<>\[\]\\`\"']*)(?:\s+\"[^\"\n]*\")?\s*\)", re.IGNORECASE)
# Any other single-line destination (up to three levels of parentheses): dropped with the link.
_ANY_DEST = re.compile(r"\((?:[^()\n]|\((?:[^()\n]|\([^()\n]*\))*\))*\)")
_ENTITY = {"<": "&lt;", ">": "&gt;", "&": "&amp;"}


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


def _tokens(text: str) -> list[tuple[int, int, str]]:
    """The markdown tokens of ``text`` as (start, end, kind); kinds: escape, code, ticks, open, close, quote, html."""
    tokens: list[tuple[int, int, str]] = []
    plain_ticks: set[int] = set()
    pos = 0
    for match in _SPECIAL.finditer(text):
        start = match.start()
        if start < pos:
            continue
        token, pos = match.group(), match.end()
        if token[0] == "\\":
            tokens.append((start, pos, "escape"))
        elif token[0] == "`":
            code = None if start in plain_ticks else _CODE_SPAN.match(text, start)
            if code is not None:
                tokens.append((start, code.end(), "code"))
                pos = code.end()
                continue
            tokens.append((start, pos, "ticks"))
            # A span too risky to keep as code: its closing run is escaped too, so its text stays prose.
            span = _ANY_SPAN.match(text, start)
            if span is not None and start not in plain_ticks:
                plain_ticks.add(span.end() - len(token))
        elif token.endswith("["):
            tokens.append((start, pos, "open"))
        elif token == "]":
            tokens.append((start, pos, "close"))
        elif token == ">" and _QUOTE_PREFIX.fullmatch(text, text.rfind("\n", 0, start) + 1, start):
            tokens.append((start, pos, "quote"))
        else:
            tokens.append((start, pos, "html"))
    return tokens


def _bracket_pairs(tokens: list[tuple[int, int, str]]) -> dict[int, int]:
    """Where the ``[`` of each opener that has a partner ``]`` is, mapped to that ``]``."""
    pairs: dict[int, int] = {}
    stack: list[int] = []
    for start, end, kind in tokens:
        if kind == "open":
            stack.append(end - 1)
        elif kind == "close" and stack:
            pairs[stack.pop()] = start
    return pairs


def _safe_prose(text: str) -> str:
    """Markdown prose with raw HTML escaped and every link or image kept only if it points at http(s)."""
    tokens = _tokens(text)
    pairs = _bracket_pairs(tokens)
    closers: dict[int, tuple[str, int]] = {}
    out: list[str] = []
    pos = 0
    for start, end, kind in tokens:
        if start < pos:
            continue
        out.append(text[pos:start])
        token, pos = text[start:end], end
        if kind == "escape":
            out.append(_ENTITY.get(token[1], token))
        elif kind in ("code", "quote"):
            out.append(token)
        elif kind == "ticks":
            out.append("\\`" * len(token))
        elif kind == "html":
            out.append(_ENTITY[token])
        elif kind == "close":
            tail, pos = closers.pop(start, ("\\]", end))
            out.append(tail)
        else:
            close = pairs.get(end - 1)
            safe = _SAFE_DEST.match(text, close + 1) if close is not None else None
            other = _ANY_DEST.match(text, close + 1) if close is not None and safe is None else None
            if safe is not None and close is not None:
                closers[close] = (f"]({safe.group(1).replace('&', '&amp;')})", safe.end())
                out.append(token)
            elif other is not None and close is not None:
                closers[close] = ("", other.end())
            else:
                out.append(token[:-1] + "\\[")
    out.append(text[pos:])
    return "".join(out)


def _fence(opening: str, info: str, body: list[str]) -> str:
    """A fenced block re-emitted with a fence longer than any backtick run inside, so no line can close it early."""
    longest = max((len(run) for line in body for run in _TICK_RUN.findall(line)), default=0)
    marker = "`" * max(3, longest + 1)
    word = _INFO_WORD.match(info.strip())
    return "\n".join([marker + (word.group() if word else ""), *body, marker])


def safe_markdown(text: str) -> str:
    """Agent text as markdown that carries no raw HTML and no link or image to anything but http(s).

    Fenced code is kept verbatim inside a re-emitted fence; everywhere else ``<``, ``>`` and ``&`` become entities,
    brackets that do not open a kept link are escaped (so no reference-style link or definition can form), and a
    link or image whose destination is not an explicit http(s) URL is replaced by its text.
    """
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    parts: list[str] = []
    prose: list[str] = []
    index = 0
    while index < len(lines):
        opening = _FENCE_OPEN.fullmatch(lines[index])
        if opening is None or (opening.group(1)[0] == "`" and "`" in opening.group(2)):
            prose.append(lines[index])
            index += 1
            continue
        if prose:
            parts.append(_safe_prose("\n".join(prose)))
            prose = []
        fence = opening.group(1)
        closing = re.compile(rf" {{0,3}}{re.escape(fence[0])}{{{len(fence)},}}[ \t]*")
        end = index + 1
        while end < len(lines) and not closing.fullmatch(lines[end]):
            end += 1
        parts.append(_fence(fence, opening.group(2), lines[index + 1 : end]))
        index = end + 1
    if prose:
        parts.append(_safe_prose("\n".join(prose)))
    return "\n".join(parts)


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
