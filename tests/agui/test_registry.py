"""The run registry on the reference driver: start or supplement, creator-only forget, concurrent callers."""

import asyncio
import threading

import pytest

from adaptor_nb import (
    Agent,
    AuthorKind,
    MessageError,
    MessagePolicy,
    MessageState,
    MessageUpdate,
    Policy,
    RunFinishedError,
)
from adaptor_nb.bridges import agui
from adaptor_nb.drivers import reference as ref

from .inputs import run_input


def test_thread_keys_are_stable_distinct_and_do_not_reveal_the_id() -> None:
    ids = ["a", "b", "A", "a ", "agui-a", "ü/../x", "x" * 10_000, "review"]
    keys = [agui.thread_key(i) for i in ids]
    assert len(set(keys)) == len(ids)
    assert keys == [agui.thread_key(i) for i in ids]
    assert all(k.startswith("agui-") and len(k) == 5 + 64 for k in keys)
    assert all(i not in k for i, k in zip(ids, keys, strict=True) if len(i) > 4)
    with pytest.raises(ValueError):
        agui.thread_key("")


async def test_send_starts_a_run_when_the_thread_is_idle_and_the_creator_forgets_it() -> None:
    reg = agui.RunRegistry()
    thread = Agent(ref.Driver()).thread(agui.thread_key("t"))
    stream, supplemented = await reg.send(thread, run_input("t", ("u1", "hello")))
    assert not supplemented and reg.active(thread.key) is stream
    assert reg.thread_id(thread.key) == "t"
    result = await stream
    assert reg.active(thread.key) is None  # a finished run is not active, even before forget
    reg.forget(thread.key, stream)
    assert result.thread_key == thread.key
    again, supplemented = await reg.send(thread, run_input("t", ("u1", "hello"), ("u2", "more")))
    assert not supplemented and again is not stream
    assert "1 earlier prompt" in (await again).text


async def test_send_supplements_an_active_run_with_the_latest_user_message() -> None:
    reg = agui.RunRegistry()
    gate = ref.Gate()
    thread = Agent(ref.Driver(scenario=ref.Scenario(ref.Turn("working ", gate, "done")))).thread("k")
    stream, _ = await reg.send(thread, run_input("t", ("u1", "go")))
    events = stream.events()
    await gate.reached.wait()
    same, supplemented = await reg.send(thread, run_input("t", ("u1", "go"), ("a1", "ignored"), ("u2", "also this")))
    assert supplemented and same is stream
    gate.open()
    seen = [ev async for ev in events]
    result = await stream
    (msg,) = result.messages()
    assert (msg.id, msg.text, msg.state) == ("u2", "also this", MessageState.DELIVERED)
    assert msg.author.kind is AuthorKind.HUMAN
    receipts = [e for e in seen if isinstance(e, MessageUpdate) and e.id == "u2"]
    assert [r.state for r in receipts][-1] is MessageState.DELIVERED


async def test_send_active_never_starts_a_run() -> None:
    reg = agui.RunRegistry()
    with pytest.raises(RunFinishedError) as info:
        await reg.send_active(agui.thread_key("t"), run_input("t", ("u1", "hi")))
    assert isinstance(info.value, MessageError) and info.value.text == "hi" and info.value.id == "u1"
    thread = Agent(ref.Driver()).thread("k")
    stream, _ = await reg.send(thread, run_input("t", ("u1", "hi")))
    await stream
    with pytest.raises(RunFinishedError):
        await reg.send_active("k", run_input("t", ("u2", "late")))


async def test_input_without_a_user_message_is_refused() -> None:
    reg = agui.RunRegistry()
    thread = Agent(ref.Driver()).thread("k")
    with pytest.raises(MessageError):
        await reg.send(thread, run_input("t"))
    assert reg.active("k") is None


async def test_forget_by_a_non_creator_leaves_the_active_run() -> None:
    reg = agui.RunRegistry()
    gate = ref.Gate()
    thread = Agent(ref.Driver(scenario=ref.Scenario(ref.Turn(gate, "x")))).thread("k")
    stream, _ = await reg.send(thread, run_input("t", ("u1", "go")))
    other = Agent(ref.Driver()).send("elsewhere")
    reg.forget("k", other)
    assert reg.active("k") is stream
    gate.open()
    await stream
    reg.forget("k", stream)
    await other


async def test_concurrent_callers_start_exactly_one_run_and_supplement_it() -> None:
    reg = agui.RunRegistry()
    gate = ref.Gate()
    thread = Agent(ref.Driver(scenario=ref.Scenario(ref.Turn(gate, "x")))).thread("k")
    calls = [reg.send(thread, run_input("t", (f"u{i}", f"message {i}"))) for i in range(50)]
    answers = await asyncio.gather(*calls)
    started = [s for s, supplemented in answers if not supplemented]
    assert len(started) == 1
    assert all(s is started[0] for s, _ in answers)
    gate.open()
    result = await started[0]
    assert len(result.messages()) == 49 and all(m.state is MessageState.DELIVERED for m in result.messages())


async def test_the_registry_is_safe_from_other_os_threads() -> None:
    reg = agui.RunRegistry()
    gate = ref.Gate()
    thread = Agent(ref.Driver(scenario=ref.Scenario(ref.Turn(gate, "x")))).thread("k")
    stream, _ = await reg.send(thread, run_input("t", ("u1", "go")))
    seen: list[object] = []
    others = Agent(ref.Driver())

    def worker() -> None:
        for _ in range(2000):
            seen.append(reg.active("k"))
            reg.forget("k", stream_of_other)

    stream_of_other = others.send("x")
    workers = [threading.Thread(target=worker) for _ in range(4)]
    for w in workers:
        w.start()
    futures = [asyncio.wrap_future(stream.send_threadsafe(f"m{i}")) for i in range(20)]
    await asyncio.gather(*futures)
    for w in workers:
        await asyncio.to_thread(w.join)
    assert all(s is stream for s in seen) and len(seen) == 8000
    gate.open()
    await stream
    await stream_of_other


async def test_cancelling_the_caller_withdraws_input_that_waits_for_queue_space() -> None:
    reg = agui.RunRegistry()
    gate, gate2 = ref.Gate(), ref.Gate()
    thread = Agent(ref.Driver(scenario=ref.Scenario(ref.Turn("w ", gate, "m ", gate2, "done")))).thread("k")
    policy = Policy(messages=MessagePolicy(max_pending=1))
    stream, _ = await reg.send(thread, run_input("t", ("u1", "go")), policy=policy)
    await gate.reached.wait()
    await reg.send_active("k", run_input("t", ("u2", "fills the queue")))
    reached = [asyncio.Event(), asyncio.Event()]

    async def attempt(n: int, call):  # type: ignore[no-untyped-def]
        reached[n].set()  # the call below runs on, in this same step, until it blocks on queue space
        return await call

    waiting = asyncio.ensure_future(attempt(0, reg.send_active("k", run_input("t", ("u3", "withdrawn")))))
    blocked = asyncio.ensure_future(attempt(1, reg.send(thread, run_input("t", ("u4", "also withdrawn")))))
    for event in reached:
        await event.wait()
    assert not waiting.done() and not blocked.done()
    waiting.cancel()
    blocked.cancel()
    gate.open()
    gate2.open()
    result = await stream
    assert [m.id for m in result.messages()] == ["u2"]
    assert waiting.cancelled() and blocked.cancelled()


async def test_call_options_apply_only_to_a_newly_started_run() -> None:
    reg = agui.RunRegistry()
    gate = ref.Gate()
    thread = Agent(ref.Driver(scenario=ref.Scenario(ref.Turn(gate, "x")))).thread("k")
    stream, _ = await reg.send(thread, run_input("t", ("u1", "go")), model="first-model")
    _, supplemented = await reg.send(thread, run_input("t", ("u2", "more")), model="second-model")
    assert supplemented
    gate.open()
    assert (await stream).model == "first-model"
