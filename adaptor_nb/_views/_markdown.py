"""A small markdown-to-HTML renderer for agent text that escapes everything first (agent output is data)."""

from __future__ import annotations

import html
import re

_SAFE_URL = re.compile(r"^https?://\S+$", re.IGNORECASE)
_CODE = re.compile(r"`([^`\n]+)`")
_LINK = re.compile(r"\[([^\]\n]+)\]\(([^)\s]+)\)")
_BOLD = re.compile(r"\*\*([^*\n]+)\*\*")
_ITALIC = re.compile(r"(^|[^*\w])\*([^*\n]+)\*(?!\w)")
_SLOT = re.compile(r"\x00(\d+)\x00")


def _inline(raw: str) -> str:
    codes: list[str] = []

    def keep(match: re.Match[str]) -> str:
        codes.append(match.group(1))
        return f"\x00{len(codes) - 1}\x00"

    # Each pass runs only when its marker occurs: a long plain answer is then escaped and returned as it is.
    text = html.escape(raw, quote=True)
    if "`" in text:
        text = _CODE.sub(keep, text)

    def link(match: re.Match[str]) -> str:
        label, url = match.group(1), match.group(2)
        if _SAFE_URL.match(url):
            return f'<a href="{url}" target="_blank" rel="noopener noreferrer nofollow">{label}</a>'
        return label

    if "](" in text:
        text = _LINK.sub(link, text)
    if "*" in text:
        text = _BOLD.sub(r"<strong>\1</strong>", text)
        text = _ITALIC.sub(r"\1<em>\2</em>", text)
    if not codes:
        return text
    return _SLOT.sub(lambda m: f"<code>{codes[int(m.group(1))]}</code>", text)


def render(source: str) -> str:
    """Safe HTML for ``source``: fences, headings, lists, quotes, paragraphs, code spans, http(s) links."""
    lines = source.replace("\x00", "").split("\n")
    out: list[str] = []
    para: list[str] = []
    items: list[str] = []
    tag = ""

    def flush() -> None:
        nonlocal tag
        if para:
            out.append("<p>" + "<br>".join(_inline(p) for p in para) + "</p>")
            para.clear()
        if items:
            out.append(f"<{tag}>" + "".join(f"<li>{_inline(i)}</li>" for i in items) + f"</{tag}>")
            items.clear()
        tag = ""

    i = 0
    while i < len(lines):
        line = lines[i]
        fence = re.match(r"^\s*(```|~~~)", line)
        if fence:
            flush()
            body = []
            i += 1
            while i < len(lines) and not lines[i].strip().startswith(fence.group(1)):
                body.append(lines[i])
                i += 1
            out.append(f"<pre><code>{html.escape(chr(10).join(body))}</code></pre>")
        elif m := re.match(r"^(#{1,6})\s+(.*)$", line):
            flush()
            n = len(m.group(1))
            out.append(f"<h{n}>{_inline(m.group(2))}</h{n}>")
        elif m := re.match(r"^\s*(?:([-*+])|\d+[.)])\s+(.*)$", line):
            kind = "ul" if m.group(1) else "ol"
            if para or (tag and tag != kind):
                flush()
            tag = kind
            items.append(m.group(2))
        elif m := re.match(r"^>\s?(.*)$", line):
            flush()
            out.append(f"<blockquote>{_inline(m.group(1))}</blockquote>")
        elif not line.strip():
            flush()
        else:
            if items:
                flush()
            para.append(line)
        i += 1
    flush()
    return "".join(out)
