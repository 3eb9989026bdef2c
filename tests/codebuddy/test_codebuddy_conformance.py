"""The public driver conformance suite on the CodeBuddy driver: the real CLI against the fake Chat Completions server,
with the capabilities the driver declares."""

from __future__ import annotations

import contextlib
import json
import re
import tempfile
from collections.abc import AsyncIterator, Callable

import pytest
from conformance_table import check_column

from adaptor_nb import ApprovalKind
from adaptor_nb.drivers import codebuddy
from adaptor_nb.testing import (
    HOST_TOOL_PREFIX,
    ChatReply,
    ChatRequest,
    ChatToolCall,
    ConformanceCase,
    FakeChatCompletionsServer,
    ModelRun,
    run_driver_conformance,
)

from .conftest import API_KEY, NetworkTripwire

pytestmark = pytest.mark.codebuddy

_RUN = re.compile(r"adaptor_nb conformance check '[^']*', run (\d+)\.")
_PLAN_FILE = re.compile(r"(/\S*?/\.codebuddy/plans/[\w.-]+\.md)")


def _host_turn(run: ModelRun, req: ChatRequest) -> ChatReply:
    """All host-tool calls in one model step, then the reply if every expected text came back in the results."""
    if not req.tool_outputs:
        calls = [
            ChatToolCall(HOST_TOOL_PREFIX + name, json.dumps(args), f"call_host_{i}")
            for i, (name, args) in enumerate(run.host_calls)
        ]
        return ChatReply.tool_calls(*calls)
    seen = json.dumps(req.tool_outputs)
    missing = [t for t in run.host_expect if t not in seen]
    return ChatReply.text(run.reply if not missing else f"the tool results lack {missing}")


def _decision(run: ModelRun, req: ChatRequest) -> ChatReply | None:
    """The decision tool a run asks for first, or None once its tools are done."""
    step = len(req.tool_outputs)
    if run.approval is ApprovalKind.PERMISSION and step == 0:
        return ChatReply.tool("Bash", {"command": "touch conformance.txt", "description": "create a file"})
    if run.approval is ApprovalKind.PLAN_REVIEW:
        # Plan mode: the plan goes into the file the CLI names, then ExitPlanMode asks for the review.
        found = _PLAN_FILE.search("\n".join(req.texts("user")))
        if step == 0 and found is not None:
            return ChatReply.tool("Write", {"file_path": found.group(1), "content": "1. Read it.\n2. Answer it.\n"})
        if step == (1 if found is not None else 0):
            return ChatReply.tool("ExitPlanMode", {})
    if run.approval is ApprovalKind.QUESTION and step == 0:
        options = [{"label": c, "description": f"option {c}"} for c in run.choices]
        question = {"question": "Which option should the answer use?", "header": "Option", "options": options}
        return ChatReply.tool("AskUserQuestion", {"questions": [{**question, "multiSelect": False}]})
    return None


def _structured_call(value: dict[str, object], req: ChatRequest) -> dict[str, object]:
    """The call in the form the CLI offered, as a model makes it: at times CLI 2.163.0 offers {data: object}."""
    tools = [t["function"] for t in req.body.get("tools", ()) if t["function"]["name"] == "StructuredOutput"]
    offered = tools[0]["parameters"].get("properties", {}) if tools else {}
    return {"data": value} if set(offered) == {"data"} else value


def responder_for(case: ConformanceCase) -> Callable[[ChatRequest], ChatReply]:
    def respond(req: ChatRequest) -> ChatReply:
        m = _RUN.search(req.prompt)
        if m is None:
            # A later turn of the same run (supplemental input): answer with the run's follow-up.
            runs = [int(x) for x in _RUN.findall("\n".join(req.user_queries()))]
            run = case.runs[(runs[-1] if runs else 1) - 1]
            return ChatReply.text(run.follow_up)
        run = case.runs[int(m.group(1)) - 1]
        if run.fail:
            return ChatReply.error(500, "conformance: the scripted model request failed")
        if run.host_calls:
            return _host_turn(run, req)
        decision = _decision(run, req)
        if decision is not None:
            return decision
        if run.structured is not None:
            return ChatReply.tool("StructuredOutput", _structured_call(run.structured, req))
        return ChatReply.text(run.reply, hold=case.hold if run.hold else None)

    return respond


def make_factory(
    cli: str, tripwire: NetworkTripwire
) -> Callable[[ConformanceCase], contextlib.AbstractAsyncContextManager[codebuddy.Driver]]:
    @contextlib.asynccontextmanager
    async def factory(case: ConformanceCase) -> AsyncIterator[codebuddy.Driver]:
        decisions = {r.approval for r in case.runs}
        with tempfile.TemporaryDirectory(prefix="codebuddy-home-") as home:
            async with FakeChatCompletionsServer() as server:
                server.responder = responder_for(case)
                cfg = codebuddy.Config(
                    command=[cli],
                    cwd=case.workspace or None,
                    env={
                        "HOME": home,
                        "CODEBUDDY_BASE_URL": server.url,
                        "CODEBUDDY_MAX_RETRIES": "0",
                        **tripwire.env(),
                    },
                    secret_env={"CODEBUDDY_API_KEY": API_KEY},
                    permission_mode="plan" if ApprovalKind.PLAN_REVIEW in decisions else "default",
                    grace_period=1.0,
                )
                yield codebuddy.Driver(cfg)

    return factory


@pytest.mark.timeout(600)  # sixteen checks on a CLI that takes seconds per run on a busy machine
async def test_the_codebuddy_driver_passes_the_conformance_suite(codebuddy_bin: str, tripwire: NetworkTripwire) -> None:
    report = await run_driver_conformance(make_factory(codebuddy_bin, tripwire), raise_on_failure=False)
    print(report)
    assert report.ok, str(report)
    assert not report.skipped, str(report)  # every check runs, none is skipped
    check_column(report, "codebuddy")  # the committed clause table matches this run
