import asyncio
import threading

import pytest

from adaptor_nb import (
    Agent,
    Done,
    InvalidDriverConfigError,
    Notice,
    RunCancelled,
    RunFinished,
    RunStarted,
    TextDelta,
    TurnEnd,
)
from adaptor_nb.drivers import reference as ref

from .helpers import collect, done_of, of_type


async def test_run_id_is_known_at_once() -> None:
    stream = Agent(ref.Driver()).send("hi")
    assert stream.run_id.startswith("run_")
    await stream


async def test_events_start_with_run_started_and_end_with_done() -> None:
    stream = Agent(ref.Driver()).send("hi")
    events = await collect(stream)
    assert isinstance(events[0], RunStarted)
    assert isinstance(events[-1], Done)
    seqs = [e.meta.sequence for e in events]
    assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)
    assert all(e.meta.run_id == stream.run_id for e in events)
    assert isinstance(events[-2], RunFinished)


async def test_done_carries_exactly_what_result_returns() -> None:
    stream = Agent(ref.Driver()).send("hi")
    events = await collect(stream)
    result = await stream.result()
    assert done_of(events).result is result
    assert done_of(events).err is None


async def test_done_carries_the_same_error_as_result() -> None:
    stream = Agent(ref.Driver(scenario=ref.Scenario(ref.Turn("partial ", ref.Fail("boom"))))).send("hi")
    events = await collect(stream)
    with pytest.raises(Exception) as info:
        await stream.result()
    assert done_of(events).err is info.value
    assert done_of(events).result is None


async def test_result_is_repeatable_and_concurrency_safe() -> None:
    stream = Agent(ref.Driver()).send("hi")
    results = await asyncio.gather(*(stream.result() for _ in range(5)))
    assert all(r is results[0] for r in results)
    assert await stream.result() is results[0]


async def test_events_has_a_single_consumer() -> None:
    stream = Agent(ref.Driver()).send("hi")
    it = stream.events()
    with pytest.raises(RuntimeError, match="already has a consumer"):
        stream.events()
    assert [e async for e in it][-1].__class__ is Done


async def test_start_up_errors_arrive_only_through_result_and_done() -> None:
    driver = ref.Driver(state_dir="/nonexistent/dir")
    stream = Agent(driver).send("hi")
    events = await collect(stream)
    assert [type(e) for e in events] == [Done]
    assert isinstance(done_of(events).err, InvalidDriverConfigError)
    with pytest.raises(InvalidDriverConfigError, match="state_dir"):
        await stream.result()


async def test_cancel_is_idempotent_and_ends_with_run_cancelled() -> None:
    gate = ref.Gate()
    stream = Agent(ref.Driver(scenario=ref.Scenario(ref.Turn("a", gate, "b")))).send("hi")
    await gate.reached.wait()
    stream.cancel()
    stream.cancel()
    events = await collect(stream)
    assert isinstance(done_of(events).err, RunCancelled)
    with pytest.raises(RunCancelled) as info:
        await stream.result()
    assert info.value.result is not None
    assert info.value.result.text == "a"


async def test_cancel_from_another_thread() -> None:
    gate = ref.Gate()
    stream = Agent(ref.Driver(scenario=ref.Scenario(ref.Turn(gate, "b")))).send("hi")
    await gate.reached.wait()
    t = threading.Thread(target=stream.cancel)
    t.start()
    t.join()
    with pytest.raises(RunCancelled):
        await stream.result()


async def test_cancel_after_completion_changes_nothing() -> None:
    stream = Agent(ref.Driver()).send("hi")
    result = await stream.result()
    stream.cancel()
    assert await stream.result() is result


async def test_late_subscriber_gets_the_critical_log_not_a_replay() -> None:
    stream = Agent(ref.Driver()).send("hello there, this is a longer prompt")
    result = await stream.result()
    events = await collect(stream)
    assert not of_type(events, TextDelta) or all(e.phase.value for e in of_type(events, TextDelta))
    kinds = {type(e) for e in events}
    assert {RunStarted, TurnEnd, RunFinished, Done} <= kinds
    assert done_of(events).result is result


async def test_timeout_cancels_the_run_with_partial_output() -> None:
    gate = ref.Gate()
    stream = Agent(ref.Driver(scenario=ref.Scenario(ref.Turn("started", gate)))).send("hi", timeout=0.2)
    with pytest.raises(RunCancelled, match="timed out") as info:
        await stream.result()
    assert info.value.result is not None and info.value.result.text == "started"


async def test_await_stream_is_result() -> None:
    result = await Agent(ref.Driver()).send("ping")
    assert "ping" in result.text


async def test_default_reply_says_it_is_scripted() -> None:
    stream = Agent(ref.Driver()).send("ping")
    events = await collect(stream)
    result = await stream.result()
    assert "scripted" in result.text
    assert any(isinstance(e, Notice) and "scripted" in e.text for e in events)
