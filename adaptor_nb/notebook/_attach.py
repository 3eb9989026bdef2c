"""``%%agent --attach``: kernel objects sent with the prompt, a matplotlib figure as a PNG image and a DataFrame's
head as a text table or a table image.

``--attach NAME`` names a variable of the kernel; ``fig`` with no such variable is pyplot's current figure. A
figure (or an Axes, whose figure is used) becomes a PNG image; a DataFrame or Series becomes its first rows as a
text table at the end of the prompt, or with ``NAME:image`` those same rows drawn as a PNG table (matplotlib's
``table``). ``NAME:text`` asks for the text form, which a figure has not.
"""

from __future__ import annotations

import io
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .._views._interpolate import OptionError

HEAD_ROWS = 10
FORMS = ("text", "image")
CURRENT_FIGURE = "fig"
MATPLOTLIB_MISSING = (
    "%%agent: --attach {what} needs matplotlib, which is not installed: pip install matplotlib "
    "(or pip install 'adaptor_nb[plot]')"
)


@dataclass(frozen=True)
class Attachment:
    """One ``--attach`` value: the variable's name and the form asked for ("" lets the object decide)."""

    name: str
    form: str = ""


@dataclass
class Attached:
    """What the attachments add to a run: text after the prompt and PNG images."""

    text: list[str] = field(default_factory=list)
    images: list[bytes] = field(default_factory=list)

    def prompt(self, prompt: str) -> str:
        """``prompt`` followed by the attached tables."""
        return "\n\n".join([prompt, *self.text])


def parse_attachment(value: str) -> Attachment:
    """``NAME`` or ``NAME:text`` / ``NAME:image``; OptionError naming the value otherwise."""
    name, sep, form = value.partition(":")
    if not name.isidentifier():
        raise OptionError(f"%%agent: --attach needs a variable name (or fig), got {value!r}")
    if sep and form not in FORMS:
        raise OptionError(f"%%agent: --attach {value!r}: the form after ':' is text or image, got {form!r}")
    return Attachment(name, form)


def _is_figure(obj: Any) -> bool:
    return callable(getattr(obj, "savefig", None)) and hasattr(obj, "get_axes")


def _is_table(obj: Any) -> bool:
    return callable(getattr(obj, "head", None)) and callable(getattr(obj, "to_string", None)) and hasattr(obj, "shape")


def _current_figure() -> Any:
    try:
        import matplotlib.pyplot as plt
    except ImportError:
        raise OptionError(MATPLOTLIB_MISSING.format(what=CURRENT_FIGURE)) from None
    if not plt.get_fignums():
        raise OptionError(
            "%%agent: --attach fig found no figure: no variable is named fig and pyplot has no open figure "
            "(draw one in this kernel, or name the variable that holds it: --attach myfig)"
        )
    return plt.gcf()


def _resolve(item: Attachment, namespace: Mapping[str, Any]) -> Any:
    if item.name in namespace:
        obj = namespace[item.name]
        figure = getattr(obj, "figure", None)
        return figure if not _is_figure(obj) and _is_figure(figure) else obj  # an Axes: its figure
    if item.name == CURRENT_FIGURE:
        return _current_figure()
    raise OptionError(f"%%agent: --attach {item.name}: no variable {item.name!r} in the kernel")


def figure_png(figure: Any) -> bytes:
    """The figure rendered as PNG bytes (its own size and dpi, trimmed to what is drawn)."""
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", bbox_inches="tight")
    return buffer.getvalue()


def table_text(name: str, table: Any, rows: int = HEAD_ROWS) -> str:
    """The first ``rows`` rows of a DataFrame or Series as a fenced text table, headed by what it shows."""
    shape = tuple(table.shape)
    total = shape[0] if shape else 0
    columns = f", {shape[1]} columns" if len(shape) > 1 else ""
    shown = min(rows, total)
    head = f"{type(table).__name__} `{name}` (first {shown} of {total} rows{columns}):"
    return f"{head}\n```\n{table.head(rows).to_string()}\n```"


def table_png(name: str, table: Any, rows: int = HEAD_ROWS) -> bytes:
    """The first ``rows`` rows of a DataFrame or Series drawn as a table (index and columns as headers) in a PNG.

    A figure of its own (``matplotlib.figure.Figure``, not pyplot) so the kernel's current figure is left alone.
    """
    try:
        from matplotlib.figure import Figure
        from matplotlib.transforms import Bbox
    except ImportError:
        raise OptionError(MATPLOTLIB_MISSING.format(what=f"{name}:image")) from None
    head = table.head(rows)
    frame = head.to_frame() if getattr(head, "ndim", 2) == 1 else head
    columns = [str(column) for column in frame.columns] or [""]  # no columns: one empty column beside the index
    cells = [[str(value) for value in row] or [""] for row in frame.itertuples(index=False, name=None)]
    labels = [str(label) for label in frame.index] or [""]
    cells = cells or [["" for _ in columns]]  # no rows: one empty row under the header
    inches = [
        0.3 + 0.08 * max(len(text) for text in [column, *(row[i] for row in cells)]) for i, column in enumerate(columns)
    ]
    figure = Figure(figsize=(max(1.0, sum(inches)), 0.25 * (len(cells) + 1)))
    ax = figure.add_axes((0, 0, 1, 1))
    ax.axis("off")
    drawn = ax.table(
        cellText=cells,
        colLabels=columns,
        colWidths=[width / sum(inches) for width in inches],
        rowLabels=labels,
        bbox=Bbox.from_bounds(0, 0, 1, 1),  # the table fills the figure; the index labels stand out to its left
    )
    drawn.auto_set_font_size(False)
    drawn.set_fontsize(9)
    return figure_png(figure)


def collect(items: tuple[Attachment, ...], namespace: Mapping[str, Any]) -> Attached:
    """Resolve every attachment in the kernel's namespace; OptionError naming the one that cannot be sent."""
    out = Attached()
    for item in items:
        obj = _resolve(item, namespace)
        if _is_figure(obj):
            if item.form == "text":
                raise OptionError(f"%%agent: --attach {item.name}:text: a figure is sent as an image only")
            out.images.append(figure_png(obj))
        elif _is_table(obj):
            if item.form == "image":
                out.images.append(table_png(item.name, obj))
            else:
                out.text.append(table_text(item.name, obj))
        else:
            raise OptionError(
                f"%%agent: --attach {item.name}: a {type(obj).__name__} cannot be attached; attach a matplotlib "
                "figure (or Axes) or a pandas DataFrame or Series"
            )
    return out


__all__ = ["Attached", "Attachment", "collect", "figure_png", "parse_attachment", "table_png", "table_text"]
