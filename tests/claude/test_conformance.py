"""The public driver conformance suite on the Claude driver: the real CLI against the scripted fake server."""

from __future__ import annotations

import contextlib
import json
import re
import tempfile
from collections.abc import AsyncIterator
from typing import Any

import pytest
from conformance_table import check_column

from adaptor_nb import ApprovalKind
from adaptor_nb.drivers import claude
from adaptor_nb.testing import HOST_TOOL_PREFIX, ConformanceCase, ModelRun, run_driver_conformance
from adaptor_nb.testing._anthropic import FakeAnthropicServer, RecordedRequest, Reply, ToolUseBlock

from .conftest import QUIET_ENV, SECRET

pytestmark = pytest.mark.claude

_RUN = re.compile(r"adaptor_nb conformance check '[^']*', run (\d+)\.")


def _first_turn(case: ConformanceCase, run: ModelRun, req: RecordedRequest) -> Reply:
    """The model's side of a run's first turn: an optional decision tool, then the answer."""
    step = len(req.tool_results)
    if run.host_calls:
        return _host_turn(run, req, step)
    if step == 0 and run.approval is ApprovalKind.PERMISSION:
        return Reply.tool("Bash", {"command": "touch conformance.txt", "description": "create a file"})
    if step == 0 and run.approval is ApprovalKind.PLAN_REVIEW:
        return Reply.tool("ExitPlanMode", {"plan": "1. Read the request.\n2. Answer it."})
    if step == 0 and run.approval is ApprovalKind.QUESTION:
        options = [{"label": c, "description": f"option {c}"} for c in run.choices]
        question = {"question": "Which option should the answer use?", "header": "Option", "options": options}
        return Reply.tool("AskUserQuestion", {"questions": [{**question, "multiSelect": False}]})
    if run.structured is not None:
        return Reply.structured(run.structured)
    return Reply.text(run.reply, chunks=3, hold=case.hold if run.hold else None)


def _host_turn(run: ModelRun, req: RecordedRequest, step: int) -> Reply:
    """All host-tool calls in one model step, then the reply if every expected text came back in the results."""
    if step == 0:
        blocks = tuple(
            ToolUseBlock(HOST_TOOL_PREFIX + name, dict(args), id=f"toolu_host_{i}")
            for i, (name, args) in enumerate(run.host_calls)
        )
        return Reply(blocks=blocks)
    seen = json.dumps([r.get("content") for r in req.tool_results])
    missing = [t for t in run.host_expect if t not in seen]
    return Reply.text(run.reply if not missing else f"the tool results lack {missing}")


def responder_for(case: ConformanceCase):
    def respond(req: RecordedRequest) -> Reply:
        m = _RUN.search(req.prompt)
        if m is None:
            # A later turn of the same run (supplemental input): answer with the run's follow-up.
            runs = [int(x) for x in _RUN.findall(req.text_of_all_messages())]
            run = case.runs[(runs[-1] if runs else 1) - 1]
            return Reply.text(run.follow_up)
        run = case.runs[int(m.group(1)) - 1]
        if run.fail:
            return Reply.error(500, "conformance: the scripted model request failed")
        return _first_turn(case, run, req)

    return respond


def make_factory(cli: str):
    @contextlib.asynccontextmanager
    async def factory(case: ConformanceCase) -> AsyncIterator[claude.Driver]:
        decisions = {r.approval for r in case.runs}
        with tempfile.TemporaryDirectory(prefix="claude-home-") as home, FakeAnthropicServer() as server:
            server.responder = responder_for(case)
            cfg = claude.Config(
                command=[cli],
                cwd=case.workspace or None,
                env={"HOME": home, "ANTHROPIC_BASE_URL": server.url, **QUIET_ENV},
                secret_env={"ANTHROPIC_API_KEY": SECRET},
                # --bare has no plan or question tools; plan reviews happen in plan mode.
                bare=not decisions & {ApprovalKind.PLAN_REVIEW, ApprovalKind.QUESTION},
                permission_mode="plan" if ApprovalKind.PLAN_REVIEW in decisions else "default",
                grace_period=1.0,
            )
            yield claude.Driver(cfg)

    return factory


async def test_the_claude_driver_passes_the_conformance_suite(claude_cli: str) -> None:
    options: dict[str, Any] = {"model": "claude-fake-1"}
    report = await run_driver_conformance(make_factory(claude_cli), agent_options=options, raise_on_failure=False)
    print(report)
    assert report.ok, str(report)
    assert not report.skipped, str(report)
    check_column(report, "claude")  # the committed clause table matches this run
