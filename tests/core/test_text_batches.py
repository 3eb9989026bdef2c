"""Broker.push_texts: a block of text deltas published in one loop, exactly as push_text would one by one."""

from __future__ import annotations

from typing import Any

from adaptor_nb import Done, TextDelta
from adaptor_nb._core._broker import Broker


async def test_a_batch_publishes_in_order_and_stops_where_a_hand_over_is_due() -> None:
    broker = Broker("run-1", "thread-1", capacity=8)  # hands over to the consumer every 4 unread events
    events = broker.subscribe()
    texts = [f"t{i}" for i in range(10)]
    assert broker.push_texts(texts, 0, "msg", None) == 4
    assert broker.push_texts(texts, 4, "msg", None) == 4  # nothing was read: no room without the full path
    got = [await events.__anext__() for _ in range(4)]
    assert broker.push_texts(texts, 4, "msg", None) == 8
    got += [await events.__anext__() for _ in range(4)]
    assert [e.text for e in got] == texts[:8]
    assert all(type(e) is TextDelta and e.message_id == "msg" for e in got)
    assert [e.meta.sequence for e in got] == list(range(1, 9))
    assert {(e.meta.run_id, e.meta.thread_key) for e in got} == {("run-1", "thread-1")}
    assert broker.published == 8


async def test_a_batch_stops_at_an_item_that_is_not_text() -> None:
    broker = Broker("run-1", "", capacity=64)
    events = broker.subscribe()
    texts: list[Any] = ["a", "b", 3, "d"]
    assert broker.push_texts(texts, 0, "", None) == 2
    broker.publish_critical(Done(result=None, err=None), None)
    got = [e async for e in events]
    assert [type(e).__name__ for e in got] == ["TextDelta", "TextDelta", "Done"]


async def test_a_closed_broker_takes_nothing_through_the_batch() -> None:
    broker = Broker("run-1", "", capacity=64)
    events = broker.subscribe()
    broker.close(Done(result=None, err=None))
    assert broker.push_texts(["a", "b"], 0, "", None) == 0
    assert [type(e).__name__ async for e in events] == ["Done"]
