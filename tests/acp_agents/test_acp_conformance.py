"""The public driver conformance suite on the ACP driver: the real Qwen Code against the fake Chat Completions server,
with the capabilities the driver declares."""

from __future__ import annotations

import contextlib
import re
import tempfile
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest

from adaptor_nb import ApprovalKind
from adaptor_nb.drivers import acp
from adaptor_nb.testing import (
    ChatReply,
    ChatRequest,
    ConformanceCase,
    FakeChatCompletionsServer,
    run_driver_conformance,
)

from .conftest import NetworkTripwire, qwen_config

_RUN = re.compile(r"adaptor_nb conformance check '[^']*', run (\d+)\.")


def responder_for(case: ConformanceCase) -> Callable[[ChatRequest], ChatReply]:
    """Plays the case: the run named in the newest prompt, its approval (a shell command), hold and failure."""

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
        if run.approval is ApprovalKind.PERMISSION and not req.tool_outputs:
            return ChatReply.tool("run_shell_command", {"command": "touch conformance.txt"})
        return ChatReply.text(run.reply, hold=case.hold if run.hold else None)

    return respond


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
    report = await run_driver_conformance(make_factory(qwen_bin, tripwire), raise_on_failure=False)
    print(report)
    assert report.ok, str(report)
    assert {"event_ordering", "results", "structured_output", "cancellation"} <= set(report.passed), str(report)
