"""``%agent help`` names every line-magic command the runner accepts, with the options its own usage line gives."""

from __future__ import annotations

import pytest

from adaptor_nb.notebook._help import CELL_HELP, LINE_HELP


def test_the_line_help_lists_agent_serve_with_the_forms_its_usage_line_gives() -> None:
    pytest.importorskip("ag_ui")  # the AG-UI endpoint's extra
    from adaptor_nb.bridges.agui._notebook import USAGE

    forms = [form.strip() for form in USAGE.removeprefix("usage:").split("|")]
    assert forms == [
        "%agent serve [--port N] [--thread NAME] [--cors ORIGIN]",
        "%agent serve stop",
        "%agent serve status",
    ]
    lines = LINE_HELP.splitlines()
    for form in forms:
        assert any(line.startswith(form) for line in lines), form
    assert "%agent serve [--port N] [--thread NAME] [--cors ORIGIN]" in CELL_HELP


def test_the_cell_help_says_a_table_can_go_as_an_image() -> None:
    assert "NAME:image sends those rows as a PNG table" in CELL_HELP
    summary = CELL_HELP[CELL_HELP.index("Line magic:") :].splitlines()
    assert len(summary) == len(set(summary))  # no command line given twice
