"""The input transformer that makes ``%%agent`` cells (and lone ``%agent`` lines) awaiting cells."""

from __future__ import annotations

import re

_RUNNER = '__import__("adaptor_nb.notebook._runner", fromlist=["run_cell"])'
_CELL = re.compile(r"^%%agent(?:[ \t]|$)")
_LINE = re.compile(r"^%agent(?:[ \t]|$)")


def rewrite(lines: list[str]) -> list[str]:
    """Turn ``%%agent`` cells into ``await run_cell(line, body)``; leave help requests (``?``) to IPython.

    A cell made only of ``%agent ...`` lines (plus blanks and comments) becomes awaited ``run_line`` calls, so
    subcommands that read the thread store can await it.
    """
    start = 0
    while start < len(lines) and not lines[start].strip():
        start += 1
    if start == len(lines):
        return lines
    first = lines[start]
    if _CELL.match(first):
        head = first.rstrip("\r\n")
        if head.rstrip().endswith("?"):
            return lines
        option_line = head[len("%%agent") :].strip()
        body = "".join(lines[start + 1 :])
        return [f"await {_RUNNER}.run_cell({option_line!r}, {body!r})\n"]
    code = [line for line in lines if line.strip() and not line.lstrip().startswith("#")]
    if not code or not _LINE.match(code[0]):
        return lines
    out: list[str] = []
    for raw in lines:
        text = raw.rstrip("\r\n")
        stripped = text.strip()
        if not stripped or stripped.startswith("#"):
            out.append(raw)
            continue
        if not _LINE.match(text) or stripped.endswith("?"):
            return lines
        out.append(f"await {_RUNNER}.run_line({text[len('%agent') :].strip()!r})\n")
    return out


# IPython's completeness check (terminal IPython's Enter key, a kernel's is_complete_request) skips transformers
# marked so; it then sees the ``%%agent`` line as a cell magic, which is complete only after a blank line, so a
# cell typed by hand keeps its body. Execution applies the transformer as before.
setattr(rewrite, "has_side_effects", True)  # noqa: B010
