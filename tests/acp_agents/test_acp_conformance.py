"""The public driver conformance suite on the ACP driver, with the capabilities the driver declares: the real Qwen Code
and CodeBuddy (``--acp``) against the fake Chat Completions server, and codex-acp against the fake Responses server."""

from __future__ import annotations

import contextlib
import json
import re
import tempfile
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest

from adaptor_nb import ApprovalKind
from adaptor_nb.drivers import acp
from adaptor_nb.drivers.codex._home import provider_settings, write_codex_home
from adaptor_nb.testing import (
    HOST_TOOL_PREFIX,
    ChatReply,
    ChatRequest,
    ChatToolCall,
    ConformanceCase,
    FakeChatCompletionsServer,
    FakeOpenAIServer,
    ModelRun,
    run_driver_conformance,
)
from adaptor_nb.testing._openai import RecordedRequest, Reply

from .conftest import API_KEY, NetworkTripwire, find_agent, qwen_config

_RUN = re.compile(r"adaptor_nb conformance check '[^']*', run (\d+)\.")


HostStep = Callable[[ModelRun, ChatRequest], ChatReply]


def _host_calls(run: ModelRun) -> list[tuple[str, str]]:
    return [(HOST_TOOL_PREFIX + name, json.dumps(args)) for name, args in run.host_calls]


def _host_reply(run: ModelRun, req: ChatRequest) -> ChatReply:
    seen = json.dumps(req.tool_outputs)
    missing = [t for t in run.host_expect if t not in seen]
    return ChatReply.text(run.reply if not missing else f"the tool results lack {missing}")


def qwen_host_step(run: ModelRun, req: ChatRequest) -> ChatReply:
    """Qwen Code defers MCP tools: the model reviews them with ``tool_search``, then calls each with ``tool_call``."""
    calls = _host_calls(run)
    if not req.tool_outputs:
        return ChatReply.tool("tool_search", {"query": "select:" + ",".join(sorted({n for n, _ in calls}))})
    if len(req.tool_outputs) == 1:
        wrapped = [
            ChatToolCall("tool_call", json.dumps({"name": n, "arguments": json.loads(a)}), f"call_host_{i}")
            for i, (n, a) in enumerate(calls)
        ]
        return ChatReply.tool_calls(*wrapped)
    return _host_reply(run, req)


def direct_host_step(run: ModelRun, req: ChatRequest) -> ChatReply:
    """Every host-tool call in one model step under its CLI name, then the reply (CodeBuddy)."""
    if not req.tool_outputs:
        return ChatReply.tool_calls(
            *[ChatToolCall(n, a, f"call_host_{i}") for i, (n, a) in enumerate(_host_calls(run))]
        )
    return _host_reply(run, req)


def responder_for(
    case: ConformanceCase, shell: ChatReply | None = None, host: HostStep = qwen_host_step
) -> Callable[[ChatRequest], ChatReply]:
    """Plays the case: the run named in the newest prompt, its approval (``shell``: Qwen Code's shell command by
    default), its host-tool calls, hold and failure."""

    def respond(req: ChatRequest) -> ChatReply:
        # The newest run named in the prompt: Qwen Code sends a failed turn's prompt again ahead of the next one.
        named = _RUN.findall(req.prompt)
        if not named:
            # A later turn of the run (supplemental input), or one of Qwen Code's own background requests.
            runs = [int(x) for x in _RUN.findall("\n".join(req.user_queries()))]
            run = case.runs[(runs[-1] if runs else 1) - 1] if case.runs else None
            return ChatReply.text(run.follow_up if run is not None else "unscripted")
        run = case.runs[int(named[-1]) - 1]
        if run.fail:
            # 400, not 500: Qwen Code retries a 5xx seven times with backoff (over a minute) before it gives up.
            return ChatReply.error(400, "conformance: the scripted model request failed")
        if run.host_calls:
            return host(run, req)
        if run.approval is ApprovalKind.PERMISSION and not req.tool_outputs:
            return shell or ChatReply.tool("run_shell_command", {"command": "touch conformance.txt"})
        return ChatReply.text(run.reply, hold=case.hold if run.hold else None)

    return respond


# Qwen Code defers MCP tools: its model must review them with tool_search first (a tool call of its own, which the
# check does not expect), and it discovers MCP servers progressively, so its first model request may not offer them.
QWEN_HOST = "Qwen Code defers MCP tools behind tool_search and discovers them after the first model request"
QWEN_SKIPS = dict.fromkeys(("host_tool_calls", "host_tool_errors", "host_tool_cancel"), QWEN_HOST)


def make_factory(
    qwen: str, tripwire: NetworkTripwire
) -> Callable[[ConformanceCase], contextlib.AbstractAsyncContextManager[acp.Driver]]:
    @contextlib.asynccontextmanager
    async def factory(case: ConformanceCase) -> AsyncIterator[acp.Driver]:
        with tempfile.TemporaryDirectory(prefix="qwen-home-") as home:
            async with FakeChatCompletionsServer() as server:
                server.responder = responder_for(case)
                yield acp.Driver(qwen_config(qwen, Path(home), server.url, tripwire, cwd=case.workspace or None))

    return factory


@pytest.mark.timeout(900)  # every check on an agent that takes seconds to start on a busy machine
async def test_the_acp_driver_on_qwen_code_passes_the_conformance_suite(
    qwen_bin: str, tripwire: NetworkTripwire
) -> None:
    report = await run_driver_conformance(make_factory(qwen_bin, tripwire), skip=QWEN_SKIPS, raise_on_failure=False)
    print(report)
    assert report.ok, str(report)
    assert {"event_ordering", "results", "structured_output", "cancellation"} <= set(report.passed), str(report)


def _codex_host_step(run: ModelRun, req: RecordedRequest) -> Reply:
    """Every host-tool call in one model step (Codex names them in the ``mcp__pytools`` namespace), then the
    reply once the tool outputs carry every expected text."""
    items = req.input_items
    last_user = max((i for i, it in enumerate(items) if it.get("role") == "user"), default=-1)
    outputs = [it.get("output") for it in items[last_user + 1 :] if it.get("type") == "function_call_output"]
    if not outputs:
        calls = [(name, dict(args)) for name, args in run.host_calls]
        return Reply.function_calls(*calls, namespace=HOST_TOOL_PREFIX.rstrip("_"))
    missing = [t for t in run.host_expect if t not in json.dumps(outputs)]
    return Reply.text(run.reply if not missing else f"the tool outputs lack {missing}")


def codex_responder_for(case: ConformanceCase) -> Callable[[RecordedRequest], Reply]:
    """The same play on the Responses API: the approval is an escalated command (codex-acp runs read-only)."""

    def respond(req: RecordedRequest) -> Reply:
        texts = req.user_texts()
        marked = [(i, int(m.group(1))) for i, t in enumerate(texts) if (m := _RUN.search(t))]
        if not marked or not case.runs:
            return Reply.text("unscripted")
        position, index = marked[-1]
        run = case.runs[index - 1]
        if run.fail:
            return Reply.error(400, "conformance: the scripted model request failed")
        if texts[position + 1 :]:
            return Reply.text(run.follow_up)
        if run.host_calls:
            return _codex_host_step(run, req)
        after_tool = req.input_items[-1].get("type") == "function_call_output"
        if run.approval is ApprovalKind.PERMISSION and not after_tool:
            return Reply.exec_command(
                "touch conformance.txt", sandbox_permissions="require_escalated", justification="conformance"
            )
        return Reply.text(run.reply, hold=case.hold if run.hold and not after_tool else None)

    return respond


@pytest.mark.timeout(900)
async def test_the_acp_driver_on_codebuddy_passes_the_conformance_suite(
    codebuddy_bin: str, tripwire: NetworkTripwire
) -> None:
    bash = ChatReply.tool("Bash", {"command": "touch conformance.txt", "description": "create a file"})

    @contextlib.asynccontextmanager
    async def factory(case: ConformanceCase) -> AsyncIterator[acp.Driver]:
        with tempfile.TemporaryDirectory(prefix="codebuddy-home-") as home:
            async with FakeChatCompletionsServer() as server:
                server.responder = responder_for(case, bash, direct_host_step)
                env = {"HOME": home, "CODEBUDDY_BASE_URL": server.url, "CODEBUDDY_MAX_RETRIES": "0", **tripwire.env()}
                yield acp.Driver(
                    acp.preset(
                        "codebuddy",
                        command=[codebuddy_bin, "--acp"],
                        env=env,
                        secret_env={"CODEBUDDY_API_KEY": API_KEY},
                        grace_period=1.0,
                        cwd=case.workspace or None,
                    )
                )

    report = await run_driver_conformance(factory, raise_on_failure=False)
    print(report)
    assert report.ok, str(report)
    assert {"event_ordering", "results", "structured_output", "cancellation"} <= set(report.passed), str(report)


@pytest.mark.timeout(900)
async def test_the_acp_driver_on_codex_acp_passes_the_conformance_suite(tripwire: NetworkTripwire) -> None:
    codex_acp = find_agent("codex-acp")
    assert codex_acp is not None, "codex-acp is missing: run scripts/setup.sh"

    @contextlib.asynccontextmanager
    async def factory(case: ConformanceCase) -> AsyncIterator[acp.Driver]:
        with tempfile.TemporaryDirectory(prefix="codex-acp-") as tmp:
            async with FakeOpenAIServer() as server:
                server.responder = codex_responder_for(case)
                settings = provider_settings(
                    base_url=server.base_url,
                    model="gpt-5.5",
                    env_key="FAKE_OPENAI_API_KEY",
                    request_max_retries=0,
                    stream_max_retries=0,
                )
                settings.update(approval_policy="on-request", sandbox_mode="read-only")
                home = write_codex_home(Path(tmp) / "codex-home", settings)
                env = {"HOME": tmp, "CODEX_HOME": str(home), **tripwire.env()}
                yield acp.Driver(
                    acp.preset(
                        "codex",
                        command=[codex_acp],
                        env=env,
                        secret_env={"FAKE_OPENAI_API_KEY": API_KEY},
                        grace_period=1.0,
                        cwd=case.workspace or None,
                    )
                )

    report = await run_driver_conformance(factory, raise_on_failure=False)
    print(report)
    assert report.ok, str(report)
    assert {"event_ordering", "results", "structured_output", "cancellation"} <= set(report.passed), str(report)
