"""Host tools (``tools=[...]``) on Cursor: the driver adds the Agent's loopback MCP server to ``.cursor/mcp.json``
and the replay stand-in really calls a Python function on it over MCP streamable HTTP with the bearer token."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from _support import drain, of

from adaptor_nb import (
    Agent,
    ApprovalMode,
    ApprovalPolicy,
    ConfigError,
    Phase,
    Policy,
    RunError,
    ToolCall,
    ToolResult,
    tool,
)
from adaptor_nb.driver import secret_var

HAPPY = "happy-assistant.jsonl"
TOKEN_ENV = secret_var("pytools", "bearer", "token")
CALLS: list[str] = []


def describe_column(name: str) -> dict[str, float]:
    """Summary statistics of one column.

    Args:
        name: the column
    """
    CALLS.append(name)
    if name == "salary":
        raise tool.reject("salaries are private")
    if name == "boom":
        raise RuntimeError("lost the connection")
    return {"mean": 41.5, "count": 4.0}


@pytest.fixture(autouse=True)
def _fresh_calls() -> None:
    CALLS.clear()


def host_args(*calls: tuple[str, dict[str, object]]) -> list[str]:
    out: list[str] = []
    for name, args in calls:
        out += ["--replay-call-host", f"{name}={json.dumps(args)}"]
    return out


def results(events: list[object]) -> list[ToolResult]:
    return of(events, ToolResult)  # type: ignore[arg-type]


def result_texts(result: object) -> dict[str, str]:
    items = result.transcript()  # type: ignore[attr-defined]
    return {i.tool_use_id: i.text for i in items if i.kind == "tool_result"}


async def test_a_python_function_runs_through_cursors_mcp_json_under_its_own_name(
    make_driver, workspace: Path, tmp_path: Path
) -> None:
    log = tmp_path / "calls.jsonl"
    tool_fn = tool.define(describe_column)
    driver = make_driver(HAPPY, "--replay-log", str(log), *host_args(("describe_column", {"name": "age"})))
    async with Agent(driver, workspace=str(workspace), tools=[tool_fn]) as agent:
        events, result, err = await drain(agent.send("stats please"))
        token = agent._engine.tool_host.token  # minted when this run started the HTTP server
    assert token
    assert err is None and result is not None and result.text == "Cursor says hi."
    assert CALLS == ["age"]  # the function really ran, with the model's argument
    (start,) = [c for c in of(events, ToolCall) if c.phase is Phase.START]
    (end,) = [c for c in of(events, ToolCall) if c.phase is Phase.END]
    assert (start.name, start.details["host_tool"]) == ("describe_column", True)
    assert end.args["arguments"] == {"name": "age"}
    (done,) = results(events)
    assert (done.name, done.details["host_tool"], done.is_error) == ("describe_column", True, False)
    assert json.loads(result_texts(result)[done.id]) == {"mean": 41.5, "count": 4.0}
    # What the CLI saw: the server in .cursor/mcp.json, the token only as ${env:...} there and in its environment.
    (entry,) = [json.loads(line) for line in log.read_text().splitlines()]
    server = entry["mcp_json"]["mcpServers"]["pytools"]
    assert server["url"].startswith("http://127.0.0.1:")
    assert server["headers"] == {"Authorization": "Bearer ${env:" + TOKEN_ENV + "}"}
    assert "--approve-mcps" in entry["argv"]
    assert token not in json.dumps(entry)  # argv, prompt and the file
    assert token not in repr(events) and token not in repr(result.transcript()) and token not in repr(result)
    assert not (workspace / ".cursor").exists()  # the file (and the directory the run made) are gone


async def test_a_reject_and_an_exception_come_back_as_the_tools_error_text(make_driver, workspace: Path) -> None:
    calls = host_args(("describe_column", {"name": "salary"}), ("describe_column", {"name": "boom"}))
    async with Agent(make_driver(HAPPY, *calls), workspace=str(workspace), tools=[describe_column]) as agent:
        events, result, err = await drain(agent.send("stats please"))
    assert err is None and result is not None
    assert sorted(CALLS) == ["boom", "salary"]  # the two calls are one step, made in parallel
    by_arg = {c.id: c.args["arguments"]["name"] for c in of(events, ToolCall) if c.phase is Phase.END}
    done = {by_arg[r.id]: r for r in results(events)}
    rejected, failed = done["salary"], done["boom"]
    assert rejected.is_error and failed.is_error
    assert rejected.name == failed.name == "describe_column"
    texts = result_texts(result)
    assert "salaries are private" in texts[rejected.id]
    assert "lost the connection" in texts[failed.id] or "RuntimeError" in texts[failed.id]


@pytest.mark.parametrize("value", ["", "wrong-token"], ids=["no-token", "wrong-token"])
async def test_without_the_right_token_the_server_refuses_the_call(make_driver, workspace: Path, value: str) -> None:
    options = ["--replay-env", f"{TOKEN_ENV}={value}", *host_args(("describe_column", {"name": "age"}))]
    async with Agent(make_driver(HAPPY, *options), workspace=str(workspace), tools=[describe_column]) as agent:
        events, result, err = await drain(agent.send("stats please"))
    assert err is None and result is not None
    assert CALLS == []  # the function never ran
    (done,) = results(events)
    assert done.is_error and done.name == "describe_column"
    assert "HTTP 401" in result_texts(result)[done.id]


async def test_the_users_own_project_servers_stay_and_their_file_comes_back(
    make_driver, workspace: Path, tmp_path: Path
) -> None:
    own = workspace / ".cursor" / "mcp.json"
    own.parent.mkdir()
    original = b'{"mcpServers": {"mine": {"command": "my-server", "args": []}}}\n'
    own.write_bytes(original)
    log = tmp_path / "calls.jsonl"
    driver = make_driver(HAPPY, "--replay-log", str(log), *host_args(("describe_column", {"name": "age"})))
    async with Agent(driver, workspace=str(workspace), tools=[describe_column]) as agent:
        _events, result, err = await drain(agent.send("stats please"))
    assert err is None and result is not None and CALLS == ["age"]
    (entry,) = [json.loads(line) for line in log.read_text().splitlines()]
    assert sorted(entry["mcp_json"]["mcpServers"]) == ["mine", "pytools"]
    assert own.read_bytes() == original
    assert sorted(p.name for p in own.parent.iterdir()) == ["mcp.json"]


async def test_a_tool_that_needs_approval_is_refused_before_launch_unless_the_policy_auto_approves(
    make_driver, workspace: Path, tmp_path: Path
) -> None:
    guarded = tool.define(describe_column, requires_approval=True)
    log = tmp_path / "calls.jsonl"
    driver = make_driver(HAPPY, "--replay-log", str(log), *host_args(("describe_column", {"name": "age"})))
    async with Agent(driver, workspace=str(workspace), tools=[guarded]) as agent:
        _events, _result, err = await drain(agent.send("stats please"))
    assert isinstance(err, ConfigError) and err.option == "tools"
    assert not log.exists()  # no process started
    auto = Policy(approvals=ApprovalPolicy(permission=ApprovalMode.AUTO_APPROVE))
    async with Agent(driver, workspace=str(workspace), tools=[guarded], policy=auto) as agent:
        _events, result, err = await drain(agent.send("stats please"))
    assert err is None and result is not None and CALLS == ["age"]
    (entry,) = [json.loads(line) for line in log.read_text().splitlines()]
    assert "--force" in entry["argv"]


async def test_the_calls_of_one_step_all_start_before_any_result(make_driver, workspace: Path) -> None:
    calls = host_args(*[("describe_column", {"name": n}) for n in ("age", "height", "weight")])
    async with Agent(make_driver(HAPPY, *calls), workspace=str(workspace), tools=[describe_column]) as agent:
        events, result, err = await drain(agent.send("stats please"))
    assert err is None and result is not None and sorted(CALLS) == ["age", "height", "weight"]
    starts = [e for e in events if isinstance(e, ToolCall) and e.phase is Phase.START]
    kinds = [type(e).__name__ for e in events if e in starts or isinstance(e, ToolResult)]
    assert kinds[:3] == ["ToolCall"] * 3 and kinds[3:] == ["ToolResult"] * 3


async def test_the_answer_depends_on_the_tool_results_reaching_the_model(make_driver, workspace: Path) -> None:
    calls = host_args(("describe_column", {"name": "age"}))
    tools = [describe_column]
    got = make_driver("@answer", *calls, "--replay-expect-result", "41.5")
    async with Agent(got, workspace=str(workspace), tools=tools) as agent:
        _events, result, err = await drain(agent.send("Reply with exactly: fine"))
    assert err is None and result is not None and result.text == "fine"
    lacking = make_driver("@answer", *calls, "--replay-expect-result", "99.9")
    async with Agent(lacking, workspace=str(workspace), tools=tools) as agent:
        _events, result, err = await drain(agent.send("Reply with exactly: fine"))
    assert err is None and result is not None and result.text == "The tool results lack ['99.9']."
    # A recording stops instead, like a CLI that died mid-turn, with the reason in the stderr tail.
    async with Agent(
        make_driver(HAPPY, *calls, "--replay-expect-result", "99.9"), workspace=str(workspace), tools=tools
    ) as agent:
        _events, _result, err = await drain(agent.send("stats please"))
    assert isinstance(err, RunError) and "lack" in err.details["stderr_tail"]


async def test_host_calls_only_when_the_prompt_matches(make_driver, workspace: Path) -> None:
    options = [*host_args(("describe_column", {"name": "age"})), "--replay-call-host-when", r"run 2\."]
    async with Agent(make_driver("@answer", *options), workspace=str(workspace), tools=[describe_column]) as agent:
        events, result, err = await drain(agent.send("run 1. Reply with exactly: one"))
        assert err is None and result is not None and result.text == "one"
        assert CALLS == [] and not results(events)
        events, result, err = await drain(agent.send("run 2. Reply with exactly: two"))
    assert err is None and result is not None and result.text == "two" and CALLS == ["age"]
