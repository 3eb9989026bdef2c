"""The static form of a run: HTML, markdown and plain text that survive save, export and renderers without a kernel.

Everything the agent produced is escaped (text goes through the escaping markdown renderer); nothing here emits
script, event handlers or styles taken from agent output. The forms hold nothing that changes between identical
runs (no ids, timestamps or durations), so saved notebooks compare under nbval.
"""

from __future__ import annotations

import html
import re
from typing import Any

from ._markdown import render
from ._words import TOOL_STATES
from ._workspace import header_text

# Colours are JupyterLab's theme variables with the light theme as fallback, as in the live view: text is always a
# theme font colour (muted text is mixed from it), and state colours only tint borders. A renderer that drops a
# style it does not know leaves the text in its own (readable) colour.
_FG = "var(--jp-ui-font-color1,rgba(0,0,0,.87))"
_BG = "var(--jp-layout-color1,#fff)"
_BORDER = "var(--jp-border-color2,#e0e0e0)"
_BOX = (
    f"color:{_FG};background:{_BG};border:1px solid {_BORDER};border-radius:6px;padding:6px 10px;"
    "font-family:var(--jp-ui-font-family,system-ui,sans-serif);font-size:13px"
)
_CARD = f"border:1px solid {_BORDER};border-radius:4px;padding:4px 8px;margin:6px 0"
_PRE = (
    f"color:{_FG};background:var(--jp-layout-color2,#eee);padding:6px;border-radius:4px;white-space:pre-wrap;"
    "overflow-x:auto;margin:4px 0"
)
_MUTED = f"color:color-mix(in srgb,{_FG} 72%,{_BG})"
_USER = "border-left:3px solid var(--jp-brand-color1,#1976d2);padding-left:8px"
_NOTE = f"color:{_FG};font-style:italic;padding-left:6px;border-left:3px solid var(--jp-warn-color1,#f57c00)"
_ERROR = f"color:{_FG};padding-left:6px;border-left:3px solid var(--jp-error-color1,#d32f2f)"
_STEPS = "list-style:none;padding:0;margin:4px 0"
_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|~<>])")
_UNSAFE_LINK = re.compile(r"\[([^\]\n]*)\]\((?!https?://)([^)\n]*)\)", re.IGNORECASE)


def _e(value: Any) -> str:
    return html.escape(str(value), quote=True)


def _pre(text: str) -> str:
    return f'<pre style="{_PRE}">{_e(text)}</pre>'


def footer_line(header: dict[str, Any], footer: dict[str, Any]) -> str:
    """The run's outcome in one line: status, turns and tokens (no duration: it changes from run to run)."""
    status = str(footer.get("status") or header.get("state") or "")
    parts = [status] if status else []
    turns = footer.get("turns")
    if turns:
        parts.append(f"{turns} turn{'s' if turns != 1 else ''}")
    if footer.get("input_tokens") is not None or footer.get("output_tokens") is not None:
        parts.append(f"{footer.get('input_tokens') or 0} in / {footer.get('output_tokens') or 0} out tokens")
    if footer.get("cost_usd"):
        parts.append(f"${footer['cost_usd']:.4f}")
    return " · ".join(parts)


def _title(header: dict[str, Any]) -> str:
    parts = [str(header.get("driver", ""))]
    if header.get("model"):
        parts.append(f"model {header['model']}")
    if header.get("thread"):
        parts.append(f"thread {header['thread']}")
    if header_text(header):
        parts.append(header_text(header))
    return " · ".join(parts)


def _plan_count(item: dict[str, Any]) -> str:
    return f"{item.get('done', 0)} of {len(item.get('entries', []))} done"


def _item_html(item: dict[str, Any], live: dict[str, str]) -> str:
    kind = item.get("kind")
    text = str(item.get("text") or live.get(str(item.get("id")), ""))
    if kind == "text":
        if item.get("role") == "assistant":
            return f'<div class="anb-static-text">{render(text)}</div>'
        return f'<div class="anb-static-text" style="{_USER}"><div style="{_MUTED}">you</div>{render(text)}</div>'
    if kind == "thinking":
        return f'<details><summary style="{_MUTED}">thinking</summary>{_pre(text)}</details>'
    if kind == "tool":
        state = TOOL_STATES.get(str(item.get("state", "")), str(item.get("state", "")))
        body = f"<div>arguments</div>{_pre(text)}" if text else ""
        if item.get("result"):
            body += f"<div>result</div>{_pre(str(item['result']))}"
        if item.get("truncated"):
            body += f'<div style="{_MUTED}">{_e(item["truncated"])} characters cut</div>'
        label = "python tool" if item.get("host_tool") else "tool"
        summary = f"{label} <strong>{_e(item.get('name') or 'tool')}</strong> <span>{_e(state)}</span>"
        return f'<details class="anb-static-tool" style="{_CARD}"><summary>{summary}</summary>{body}</details>'
    if kind == "approval":
        title = _e(item.get("title") or item.get("tool") or item.get("akind") or "approval")
        body = _pre(str(item["args"])) if item.get("args") else ""
        body += _pre(str(item["diff"])) if item.get("diff") else ""
        outcome = _e(item.get("outcome") or item.get("state") or "")
        summary = f"{_e(item.get('akind') or 'approval')}: <strong>{title}</strong> — {outcome}"
        if item.get("wait") and item.get("state") in ("pending", "expired"):
            summary += f' <span style="{_MUTED}">({_e(item["wait"])})</span>'
        return f'<details class="anb-static-approval" style="{_CARD}"><summary>{summary}</summary>{body}</details>'
    if kind == "subagent":
        name = _e(item.get("task") or item.get("member") or "subagent")
        state = _e(item.get("state") or "")
        body = render(str(item.get("summary") or "")) + (_pre(text) if text else "")
        return f'<details style="{_CARD}"><summary>subagent <strong>{name}</strong> {state}</summary>{body}</details>'
    if kind == "notice":
        return f'<div style="{_MUTED};font-style:italic">{_e(text)}</div>'
    if kind == "plan":
        steps = "".join(
            f'<li data-status="{_e(e["status"])}">{_e(e["mark"])} {_e(e["text"])}</li>' for e in item.get("entries", [])
        )
        note = f'<div style="{_MUTED}">{_e(item["explanation"])}</div>' if item.get("explanation") else ""
        head = f'plan <span style="{_MUTED}">{_e(_plan_count(item))}</span>'
        return f'<div class="anb-static-plan" style="{_CARD}">{head}{note}<ul style="{_STEPS}">{steps}</ul></div>'
    if kind == "message":
        words = _e(item.get("words") or item.get("state") or "")
        return f'<div style="{_CARD}">you sent: {_e(text or "a message")} — {words}</div>'
    return ""


def run_html(
    header: dict[str, Any],
    items: list[dict[str, Any]],
    live: dict[str, str],
    messages: list[Any],
    footer: dict[str, Any],
) -> str:
    """The whole run as escaped HTML: header, items in order, messages with their delivery, the footer."""
    parts = [f'<div class="anb-static" style="{_BOX}">']
    parts.append(f'<div style="{_MUTED}"><strong>{_e(_title(header))}</strong> {_e(header.get("state", ""))}</div>')
    if header.get("note"):
        parts.append(f'<div style="{_NOTE}">{_e(header["note"])}</div>')
    parts.extend(_item_html(item, live) for item in items)
    for entry in (m for m in messages if not m.get("placed")):
        state = _e(entry.get("state", ""))
        reason = f" ({_e(entry['reason'])})" if entry.get("state") == "failed" and entry.get("reason") else ""
        parts.append(f'<div style="{_CARD}">message: {_e(entry.get("text", ""))} — {state}{reason}</div>')
    if header.get("error"):
        parts.append(f'<div style="{_ERROR}">{_e(header["error"])}</div>')
    line = footer_line(header, footer)
    if line:
        parts.append(f'<div style="{_MUTED};font-size:0.9em">{_e(line)}</div>')
    parts.append("</div>")
    return "".join(parts)


def _md_text(text: str) -> str:
    """Agent text for a markdown renderer: HTML escaped, and links kept only when they are http(s)."""
    return _UNSAFE_LINK.sub(lambda m: f"{m.group(1)} ({m.group(2)})", _e(text))


def _md_plain(text: str) -> str:
    """Text that a markdown renderer shows as it is, on one line: no emphasis, links, headings or HTML."""
    return _e(_MD_SPECIAL.sub(r"\\\1", " ".join(text.split())))


def _fence(text: str) -> str:
    ticks = "```"
    while ticks in text:
        ticks += "`"
    return f"{ticks}\n{text}\n{ticks}"


def run_markdown(
    header: dict[str, Any],
    items: list[dict[str, Any]],
    live: dict[str, str],
    messages: list[Any],
    footer: dict[str, Any],
) -> str:
    """The run as markdown; agent text is put in fences or escaped so it stays text in any renderer."""
    out = [f"**{_md_text(_title(header))}** {_e(header.get('state', ''))}"]
    for item in items:
        kind = item.get("kind")
        text = str(item.get("text") or live.get(str(item.get("id")), ""))
        if kind == "text":
            out.append(("you: " if item.get("role") != "assistant" else "") + _md_text(text))
        elif kind == "thinking":
            out.append("*thinking*\n\n" + _fence(text))
        elif kind == "tool":
            name = _md_text(" ".join(str(item.get("name") or "tool").split()))
            state = TOOL_STATES.get(str(item.get("state", "")), str(item.get("state", "")))
            block = f"tool **{name}** {_e(state)}"
            if text:
                block += "\n\n" + _fence(text)
            if item.get("result"):
                block += "\n\n" + _fence(str(item["result"]))
            out.append(block)
        elif kind == "approval":
            title = item.get("title") or item.get("tool") or "approval"
            outcome = _e(item.get("outcome") or item.get("state"))
            line = f"{item.get('akind') or 'approval'}: **{_e(title)}** — {outcome}"
            if item.get("wait") and item.get("state") in ("pending", "expired"):
                line += f" ({_e(item['wait'])})"
            out.append(line)
        elif kind == "subagent":
            out.append(f"subagent **{_e(item.get('task') or item.get('member'))}** {_e(item.get('state') or '')}")
        elif kind == "notice":
            out.append(f"*{_md_text(text)}*")
        elif kind == "plan":
            steps = [f"- {e['mark']} {_md_plain(str(e['text']))}" for e in item.get("entries", [])]
            out.append("\n".join([f"plan ({_plan_count(item)})", *steps]))
        elif kind == "message":
            out.append(
                f"you sent: {_md_text(text or 'a message')} — {_e(item.get('words') or item.get('state') or '')}"
            )
    for entry in (m for m in messages if not m.get("placed")):
        out.append(f"message: {_md_text(str(entry.get('text', '')))} — {_e(entry.get('state', ''))}")
    if header.get("error"):
        out.append(_md_text(str(header["error"])))
    line = footer_line(header, footer)
    if line:
        out.append(f"*{line}*")
    return "\n\n".join(out)


class StaticRun:
    """A finished run's static forms as one displayable object (no widget)."""

    def __init__(self, bundle: dict[str, str]) -> None:
        self.bundle = dict(bundle)

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, str]:
        return dict(self.bundle)

    def __repr__(self) -> str:
        return self.bundle.get("text/plain", "StaticRun()")
