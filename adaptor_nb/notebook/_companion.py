"""The live widget and its static run as two outputs, so a notebook reopened with a fresh kernel shows the run.

JupyterLab renders an output holding the widget mimetype with the widget manager, whatever else the bundle holds; when
the kernel that owned the model is gone (a saved notebook reopened with a new kernel), that renderer shows "Loading
widget..." or "model not found" and never the static forms beside it. So in a Jupyter server session the run takes two
outputs: the widget alone (with an empty placeholder for renderers without widgets), then the static run under its own
display id, updated when the run ends. A fixed style rule in the static output (ours, no agent text in it) shows
exactly one of them: the static run is hidden while the live widget is rendered in the same output area, and the
widget's output (the one just before the static run) is hidden while it is not: no kernel model, no widget
manager, or a renderer without widgets.
"""

from __future__ import annotations

import os
from typing import Any

from .._views._static import StaticRun

WIDGET_MIME = "application/vnd.jupyter.widget-view+json"
SLOT = '<div class="anb-slot"></div>'
"""What renderers without widgets (an untrusted notebook, nbconvert, GitHub) show for the widget's output: nothing."""

_AREA = ".jp-OutputArea"
_CHILD = ".jp-OutputArea-child"
STYLE = (
    "<style>"
    f"{_AREA}:has(.anb) > {_CHILD}:has(.anb-static){{display:none}}"
    f"{_AREA}:not(:has(.anb)) > {_CHILD}:has(+ {_CHILD} .anb-static){{display:none}}"
    "</style>"
)


def split_outputs(shell: Any) -> bool:
    """True in a Jupyter server session (JupyterLab, Notebook 7), whose output areas the style rule knows."""
    in_vscode = "__vsc_ipynb_file__" in getattr(shell, "user_ns", {})
    return bool(os.environ.get("JPY_SESSION_NAME")) and not in_vscode


def companion(bundle: dict[str, str]) -> StaticRun:
    """The static run as the widget's companion output: the style rule, then the escaped HTML."""
    forms = dict(bundle)
    if "text/html" in forms:
        forms["text/html"] = STYLE + forms["text/html"]
    return StaticRun(forms)


class WidgetOnly:
    """The view's widget mimetype without the static forms, with an empty placeholder for renderers without widgets.

    (IPython adds the view's stable ``repr`` as ``text/plain``.)
    """

    def __init__(self, view: Any) -> None:
        self._view = view

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        bundle = self._view._repr_mimebundle_(**kwargs)
        data, meta = bundle if isinstance(bundle, tuple) else (bundle, {})
        out = {WIDGET_MIME: data[WIDGET_MIME], "text/html": SLOT}
        return (out, {k: v for k, v in (meta or {}).items() if k == WIDGET_MIME})

    def __repr__(self) -> str:
        return repr(self._view)


class LiveOutputs:
    """The handle of the two outputs; ``update(final)`` writes the finished static run into the companion."""

    def __init__(self, view: Any, display: Any) -> None:
        self._view = view
        self.widget = display(WidgetOnly(view), display_id=True)
        self.static = display(companion(view.static_bundle()), display_id=True)

    def update(self, final: Any) -> None:
        bundle = final.bundle if isinstance(final, StaticRun) else self._view.static_bundle()
        self.static.update(companion(bundle))
