"""ACP ``plan`` updates as plan updates, on the real codex-acp: its ``update_plan`` tool reaches the client as the
whole plan each time, and the driver publishes it as a PlanUpdate with the next revision."""

from __future__ import annotations

from pathlib import Path

from _support import drain, of

from adaptor_nb import Agent, Notice, PlanUpdate
from adaptor_nb.testing import FakeOpenAIServer
from adaptor_nb.testing._openai import Reply

from .conftest import NetworkTripwire
from .test_acp_codex import codex_acp_bin, codex_driver, fake_responses  # noqa: F401  (fixtures)


async def test_codex_acp_plan_updates_are_plan_updates(
    codex_acp_bin: str,  # noqa: F811
    fake_responses: FakeOpenAIServer,  # noqa: F811
    tmp_path: Path,
    tripwire: NetworkTripwire,
) -> None:
    first = {"plan": [{"step": "read", "status": "in_progress"}, {"step": "write", "status": "pending"}]}
    second = {"plan": [{"step": "read", "status": "completed"}, {"step": "write", "status": "completed"}]}
    fake_responses.enqueue(
        Reply.function_call("update_plan", first), Reply.function_call("update_plan", second), Reply.text("planned")
    )
    workspace = tmp_path / "ws"
    workspace.mkdir()
    async with Agent(codex_driver(codex_acp_bin, tmp_path, fake_responses, tripwire), workspace=str(workspace)) as a:
        events, result, err = await drain(a.send("Plan it."))
    assert err is None and result is not None
    plans = of(events, PlanUpdate)
    assert [p.revision for p in plans] == [1, 2]
    assert [[(i.text, i.status) for i in p.items] for p in plans] == [
        [("read", "in_progress"), ("write", "pending")],
        [("read", "completed"), ("write", "completed")],
    ]
    assert {p.source for p in plans} == {"acp.plan"}
    assert not [n for n in of(events, Notice) if n.kind == "acp.plan"]
