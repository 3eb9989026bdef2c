"""Rich display of Results in notebooks: safe HTML (for JupyterLab and HTML export) and a stable plain text."""

from __future__ import annotations

import html
import json
from typing import Any

_TEXT_PREVIEW = 200
_MODULES = ("adaptor_nb", "adaptor_nb._result")


def result_html(result: Any) -> str:
    """The reply as safe HTML, the structured output as JSON, and a usage line."""
    from .._frames import usage_line
    from .._views._markdown import render

    parts = ['<div class="adaptor-nb-result">', render(result.text) if result.text else "<p><em>(no text)</em></p>"]
    if getattr(result, "_has_structured", False):
        value = json.dumps(result.structured, indent=2, ensure_ascii=False, default=str)
        parts.append(f"<pre><code>{html.escape(value)}</code></pre>")
    parts.append(f"<p><small>{html.escape(usage_line(result))}</small></p></div>")
    return "".join(parts)


def result_text(result: Any, printer: Any, cycle: bool) -> None:
    """A plain-text form without run ids or timings, so saved outputs stay comparable."""
    text = result.text if len(result.text) <= _TEXT_PREVIEW else result.text[: _TEXT_PREVIEW - 1] + "…"
    fields = [f"provider={result.provider!r}", f"model={result.model!r}", f"turns={result.turns}"]
    if result.thread_key:
        fields.append(f"thread={result.thread_key!r}")
    fields.append(f"text={text!r}")
    printer.text(f"Result({', '.join(fields)})")


def register(shell: Any) -> None:
    """Register the HTML and plain-text formatters for Result (by name: nothing is imported here)."""
    formatters = shell.display_formatter.formatters
    # The class reports module "adaptor_nb" once the public names are loaded, and its defining module before that.
    for module in _MODULES:
        formatters["text/html"].for_type_by_name(module, "Result", result_html)
        formatters["text/plain"].for_type_by_name(module, "Result", result_text)


def unregister(shell: Any) -> None:
    """Remove the formatters again."""
    formatters = shell.display_formatter.formatters
    for mime in ("text/html", "text/plain"):
        for module in _MODULES:
            formatters[mime].deferred_printers.pop((module, "Result"), None)
        for cls in list(formatters[mime].type_printers):
            if cls.__module__ in _MODULES and cls.__name__ == "Result":
                formatters[mime].type_printers.pop(cls)
