"""``%%agent --tools`` and ``%agent tools`` without a kernel: option parsing, name resolution, one Agent per tool
set, and a reference run that calls the notebook's functions."""

from __future__ import annotations

import re

import pytest
from _support import drain, of

from adaptor_nb import ToolResult, tool
from adaptor_nb.notebook._args import OptionError, parse_cell_line
from adaptor_nb.notebook._session import NotebookSession, SetupError
from adaptor_nb.notebook._tools import tools_report


def describe_column(name: str) -> dict[str, float]:
    """Summary statistics of one column."""
    return {"mean": 41.5} if name == "age" else {}


@tool.define(requires_approval=True)
def drop_table(table: str) -> str:
    """Drop a table."""
    return "dropped"


def test_the_flag_takes_a_comma_separated_list() -> None:
    assert parse_cell_line("--tools 'describe_column, drop_table'").tools == ("describe_column", "drop_table")
    assert parse_cell_line("").tools == ()


@pytest.mark.parametrize(
    ("line", "needle"),
    [("--tools ,", "one or more"), ("--tools a --agent x", "--agent"), ("--tools a,a", "twice"), ("--tools 1x", "1x")],
)
def test_bad_flags_name_the_problem(line: str, needle: str) -> None:
    with pytest.raises(OptionError, match=needle):
        parse_cell_line(line)


async def test_unknown_or_non_callable_names_fail_before_any_run() -> None:
    session = NotebookSession()
    for line, needle in (("--tools nope", "no variable named 'nope'"), ("--tools five", "int is not callable")):
        with pytest.raises(SetupError, match=needle):
            await session.plan(parse_cell_line("--driver reference " + line), {"five": 5})
    assert session.agents.get("reference") is not None  # the plain Agent exists; no tool Agent was made
    assert [k for k in session.agents if "+tools" in k] == []
    await session.aclose()


async def test_a_cell_with_tools_runs_them_and_tools_lists_them() -> None:
    session = NotebookSession()
    namespace = {"describe_column": describe_column, "drop_table": drop_table}
    plan = await session.plan(parse_cell_line("--driver reference --tools describe_column,drop_table"), namespace)
    again = await session.plan(parse_cell_line("--driver reference --tools describe_column,drop_table"), namespace)
    assert plan.runner is again.runner  # one Agent per tool set
    events, result, err = await drain(plan.runner.send('age? [[call describe_column {"name": "age"}]]'))
    assert err is None and result is not None
    (done,) = of(events, ToolResult)
    assert done.name == "describe_column" and done.details["host_tool"] is True
    assert 'describe_column → {"mean": 41.5}' in result.text
    report = tools_report(session)
    # a plain function's revision is a digest of its source, so a Thread may use it and notices when it changes
    assert re.search(r"describe_column  revision src-[0-9a-f]{12}\n", report)
    assert "drop_table  revision 1 (asks for approval)" in report  # a tool.define(...) keeps what it was given
    assert '"name": {"type": "string"}' in report
    await session.aclose()
