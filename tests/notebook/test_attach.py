"""``%%agent --attach``: a figure becomes a PNG image, a DataFrame's head a text table after the prompt (or a PNG
table with ``:image``); anything
else, a missing variable or a missing matplotlib is a clear option error."""

from __future__ import annotations

import sys

import pytest

from adaptor_nb.notebook._args import OptionError, parse_cell_line
from adaptor_nb.notebook._attach import Attachment, collect

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
pd = pytest.importorskip("pandas")
plt = pytest.importorskip("matplotlib.pyplot")

PNG = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(autouse=True)
def _no_figures_left() -> None:
    plt.close("all")


def test_the_option_line_takes_repeated_attachments_with_an_optional_form() -> None:
    opts = parse_cell_line("--attach fig --attach sales:text --attach ax:image")
    assert opts.attach == (Attachment("fig"), Attachment("sales", "text"), Attachment("ax", "image"))


@pytest.mark.parametrize(
    ("line", "words"),
    [
        ("--attach 3d", ["--attach needs a variable name", "'3d'"]),
        ("--attach df:png", ["text or image", "'png'"]),
        ("--map df --attach fig", ["--attach cannot be used with --map"]),
    ],
)
def test_a_malformed_attachment_is_an_option_error(line: str, words: list[str]) -> None:
    with pytest.raises(OptionError) as info:
        parse_cell_line(line)
    for word in words:
        assert word in str(info.value)


def test_a_figure_variable_an_axes_and_the_current_figure_become_png_images() -> None:
    fig, ax = plt.subplots(figsize=(2, 1))
    ax.plot([1, 2, 3])
    other = plt.figure(figsize=(1, 1))  # pyplot's current figure now
    attached = collect((Attachment("fig"), Attachment("ax")), {"fig": fig, "ax": ax})
    current = collect((Attachment("fig"),), {})
    assert [i[:8] for i in attached.images] == [PNG, PNG]
    assert attached.images[0] == attached.images[1]  # the Axes sends its figure
    assert current.images[0][:8] == PNG and current.images[0] != attached.images[0]
    assert attached.text == [] and attached.prompt("look") == "look"
    plt.close(other)


def test_a_dataframe_is_sent_as_its_head_in_a_text_table_after_the_prompt() -> None:
    sales = pd.DataFrame({"region": [f"r{i}" for i in range(25)], "units": range(25)})
    attached = collect((Attachment("sales"),), {"sales": sales})
    assert attached.images == []
    prompt = attached.prompt("Which region sells most?")
    assert prompt.startswith("Which region sells most?\n\nDataFrame `sales` (first 10 of 25 rows, 2 columns):\n```")
    assert "r9" in prompt and "r10" not in prompt and prompt.endswith("```")


def test_a_table_image_is_its_head_drawn_as_a_png_table_and_leaves_pyplot_alone() -> None:
    sales = pd.DataFrame({"region": [f"r{i}" for i in range(25)], "units": range(25)})
    attached = collect(
        (Attachment("sales", "image"), Attachment("units", "image")), {"sales": sales, "units": sales.units}
    )
    assert [i[:8] for i in attached.images] == [PNG, PNG]
    assert attached.text == [] and attached.prompt("look") == "look"
    assert plt.get_fignums() == []  # no pyplot figure was opened
    more = collect((Attachment("sales", "image"),), {"sales": sales.assign(units=sales.units * 1000)})
    same_head = collect((Attachment("sales", "image"),), {"sales": sales.iloc[:10]})
    assert more.images[0] != attached.images[0]  # the values are drawn
    assert same_head.images[0] == attached.images[0]  # only the first 10 rows are drawn


def test_without_matplotlib_a_table_image_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)  # import matplotlib.figure now fails
    with pytest.raises(OptionError) as info:
        collect((Attachment("df", "image"),), {"df": pd.DataFrame({"a": [1]})})
    assert "--attach df:image needs matplotlib" in str(info.value) and "adaptor_nb[plot]" in str(info.value)


@pytest.mark.parametrize(
    ("items", "namespace", "words"),
    [
        ((Attachment("nope"),), {}, ["no variable 'nope'"]),
        ((Attachment("fig"),), {}, ["found no figure", "--attach myfig"]),
        ((Attachment("n"),), {"n": 3}, ["a int cannot be attached", "DataFrame"]),
        ((Attachment("f", "text"),), {"f": "figure"}, ["a str cannot be attached"]),
    ],
)
def test_what_cannot_be_attached_is_named(items: tuple[Attachment, ...], namespace: dict, words: list[str]) -> None:
    with pytest.raises(OptionError) as info:
        collect(items, namespace)
    for word in words:
        assert word in str(info.value)


def test_without_matplotlib_attaching_the_current_figure_says_how_to_install_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib.pyplot", None)  # import matplotlib.pyplot now fails
    with pytest.raises(OptionError) as info:
        collect((Attachment("fig"),), {})
    assert "needs matplotlib" in str(info.value) and "pip install" in str(info.value)


@pytest.mark.parametrize(
    "table",
    [pd.DataFrame({"a": [], "b": []}), pd.DataFrame(index=range(3)), pd.DataFrame(), pd.Series([1.5], name="x")],
    ids=["no rows", "no columns", "empty", "series"],
)
def test_a_table_image_of_an_empty_or_one_column_table_is_still_a_png(table: object) -> None:
    assert collect((Attachment("t", "image"),), {"t": table}).images[0][:8] == PNG
