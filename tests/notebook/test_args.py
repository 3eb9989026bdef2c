"""Option lines of %%agent / %agent and prompt interpolation."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from adaptor_nb._views._interpolate import interpolate
from adaptor_nb.notebook._args import CellOptions, OptionError, parse_cell_line, parse_use


def test_empty_line_gives_the_defaults() -> None:
    assert parse_cell_line("") == CellOptions()


def test_every_option_is_parsed() -> None:
    opts = parse_cell_line(
        "--thread review --driver codex --model m1 --schema 'list[Finding]' --out found --approvals auto "
        "--timeout 2.5 --spawn --instructions 'be brief' --quiet"
    )
    assert opts == CellOptions(
        thread="review",
        driver="codex",
        model="m1",
        schema="list[Finding]",
        out="found",
        approvals="auto",
        timeout=2.5,
        spawn=True,
        instructions="be brief",
        quiet=True,
    )


@pytest.mark.parametrize(
    ("line", "needle"),
    [
        ("--approvals maybe", "--approvals"),
        ("--timeout 0", "--timeout"),
        ("--timeout soon", "--timeout"),
        ("--out 1x", "--out"),
        ("--driver gemini", "--driver"),
        ("--agent a --driver reference", "--agent and --driver"),
        ("--thread ''", "--thread"),
        ("--frobnicate", "--frobnicate"),
        ("--thread 'open", "quotes"),
        ("--thr x", "--thr"),
    ],
)
def test_bad_options_name_the_option(line: str, needle: str) -> None:
    with pytest.raises(OptionError, match=needle.replace("[", r"\[")):
        parse_cell_line(line)


def test_use_takes_a_driver_and_defaults() -> None:
    opts = parse_use(["codex", "--model", "gpt-x", "--approvals", "deny", "--timeout", "30"])
    assert (opts.driver, opts.model, opts.approvals, opts.timeout) == ("codex", "gpt-x", "deny", 30.0)
    assert parse_use(["default"]).driver == "default"
    with pytest.raises(OptionError, match="driver"):
        parse_use(["nothing"])


def test_interpolation_inserts_names_and_attributes() -> None:
    ns = {"name": "world", "cfg": SimpleNamespace(path="/repo")}
    assert interpolate("Hello {name} in {cfg.path}", ns) == "Hello world in /repo"


def test_unknown_names_and_non_names_stay_as_written() -> None:
    text = 'f"{missing}" and {"a": 1} and {x + 1} and {name}'
    assert interpolate(text, {"name": "n"}) == 'f"{missing}" and {"a": 1} and {x + 1} and n'


def test_double_braces_are_literal() -> None:
    assert interpolate("{{name}} is {name}", {"name": "n"}) == "{name} is n"


def test_missing_attribute_is_a_clear_error() -> None:
    with pytest.raises(OptionError, match="has no attribute 'nope'"):
        interpolate("{cfg.nope}", {"cfg": SimpleNamespace()})
