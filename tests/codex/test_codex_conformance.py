"""The public driver conformance suite on the Codex driver, with the real CLI and the fake OpenAI server playing each
check's neutral script."""

from __future__ import annotations

import contextlib
import json
import re
import shutil
import tempfile
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest
from conformance_table import check_column

from adaptor_nb import ApprovalKind
from adaptor_nb.drivers.codex import Config, Driver
from adaptor_nb.testing import HOST_TOOL_PREFIX, ConformanceCase, FakeOpenAIServer, ModelRun, run_driver_conformance
from adaptor_nb.testing._openai import RecordedRequest, Reply

from .conftest import API_KEY, API_KEY_ENV, NetworkTripwire, make_home

pytestmark = pytest.mark.codex

_RUN = re.compile(r"\[\[conformance run (\d+)\]\]")


def prompt_for(case: ConformanceCase, index: int) -> str:
    return f"Conformance check {case.check!r}. Reply as scripted. [[conformance run {index}]]"


def _host_step(run: ModelRun, request: RecordedRequest) -> Reply:
    """Every host-tool call of the run in one model step, then the reply if every expected text came back in the
    tool outputs."""
    items = request.input_items
    last_user = max((i for i, it in enumerate(items) if it.get("role") == "user"), default=-1)
    outputs = [it.get("output") for it in items[last_user + 1 :] if it.get("type") == "function_call_output"]
    if not outputs:
        calls = [(name, dict(args)) for name, args in run.host_calls]
        return Reply.function_calls(*calls, namespace=HOST_TOOL_PREFIX.rstrip("_"))
    seen = json.dumps(outputs)
    missing = [t for t in run.host_expect if t not in seen]
    return Reply.text(run.reply if not missing else f"the tool outputs lack {missing}")


def responder_for(case: ConformanceCase) -> Callable[[RecordedRequest], Reply]:
    """Plays the case: the run named in the newest run prompt, its approval, hold, failure and follow-ups."""

    def respond(request: RecordedRequest) -> Reply:
        texts = request.user_texts()
        marked = [(i, int(m.group(1))) for i, t in enumerate(texts) if (m := _RUN.search(t))]
        if not marked or not case.runs:
            return Reply.text("unscripted request")
        position, index = marked[-1]
        run = case.runs[min(index, len(case.runs) - 1)]
        if run.fail:
            return Reply.error(500, "conformance: the scripted model request failed")
        if texts[position + 1 :]:
            return Reply.text(run.follow_up)
        if run.host_calls:
            return _host_step(run, request)
        after_tool = request.input_items[-1].get("type") == "function_call_output"
        if run.approval is ApprovalKind.PERMISSION and not after_tool:
            return Reply.exec_command(
                "echo conformance", sandbox_permissions="require_escalated", justification="conformance check"
            )
        if run.structured is not None:
            return Reply.json(run.structured)
        return Reply.text(run.reply, hold=case.hold if run.hold and not after_tool else None)

    return respond


def make_factory(
    codex_bin: str, tripwire: NetworkTripwire
) -> Callable[[ConformanceCase], contextlib.AbstractAsyncContextManager[Driver]]:
    @contextlib.asynccontextmanager
    async def codex_for(case: ConformanceCase) -> AsyncIterator[Driver]:
        tmp = Path(tempfile.mkdtemp(prefix="codex-conformance-"))
        try:
            async with FakeOpenAIServer() as fake:
                fake.responder = responder_for(case)
                home = make_home(tmp / "codex-home", fake)
                yield Driver(
                    Config(
                        command=[codex_bin],
                        codex_home=str(home),
                        env={"HOME": str(tmp), **tripwire.env()},
                        secret_env={API_KEY_ENV: API_KEY},
                        grace_period=1.0,
                    )
                )
        finally:
            shutil.rmtree(tmp, ignore_errors=True)

    return codex_for


async def test_the_codex_driver_passes_the_conformance_suite(codex_bin: str, tripwire: NetworkTripwire) -> None:
    factory = make_factory(codex_bin, tripwire)
    report = await run_driver_conformance(factory, prompt_for=prompt_for, raise_on_failure=False)
    print(report)
    assert report.ok, str(report)
    assert {r.name for r in report.skipped} == {"approval_plan_review", "approval_question"}
    check_column(report, "codex")  # the committed clause table matches this run
