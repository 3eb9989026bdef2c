"""Folding a batch of events (``RunState.stream_texts``) leaves the view exactly as folding them one at a time."""

from __future__ import annotations

from adaptor_nb import Agent, Event, Phase, Role, TextDelta
from adaptor_nb._views._model import RunState
from adaptor_nb.drivers.reference import Driver, Text, ThinkingStep, Turn, scenario
from adaptor_nb.notebook import RunView


def _deltas() -> list[Event]:
    return [
        TextDelta(text="a", message_id="m1"),
        TextDelta(text="b", message_id="m1"),
        TextDelta(text="", message_id="m1"),
        TextDelta(text="c", message_id=""),
        TextDelta(text="d", message_id="m2"),
        TextDelta(text="e", message_id="m2"),
        TextDelta(text="you", message_id="m2", role=Role.USER),
        TextDelta(text="f", message_id="m3"),
        TextDelta(text="", message_id="m3", phase=Phase.END),
        TextDelta(text="g", message_id="m3"),
    ]


def _one_by_one(events: list[Event]) -> RunState:
    state = RunState(driver="reference")
    for event in events:
        state.apply(event)
    return state


def _batched(events: list[Event]) -> RunState:
    state = RunState(driver="reference")
    i = 0
    while i < len(events):
        i = state.stream_texts(events, i)
        if i < len(events):
            state.apply(events[i])
            i += 1
    return state


def _seen(state: RunState) -> list[tuple[str, str, str, str]]:
    return [(i["kind"], i["role"], i["message_id"], i["text"] or state.live_text(i["id"])) for i in state.items]


def test_a_batch_folds_like_single_events() -> None:
    one, batch = _one_by_one(_deltas()), _batched(_deltas())
    assert _seen(batch) == _seen(one)
    assert batch.events == one.events
    assert [t for *_, t in _seen(batch)] == ["abc", "de", "you", "f", "g"]


def test_stream_texts_folds_nothing_without_an_open_text_item() -> None:
    state = RunState(driver="reference")
    assert state.stream_texts(_deltas(), 0) == 0
    state.apply(_deltas()[0])
    assert state.stream_texts(_deltas(), 1) == 2  # the empty delta (index 2) is left to apply()


async def test_the_view_of_a_long_run_shows_every_delta() -> None:
    text = "".join(chr(ord("a") + i % 26) for i in range(5000))
    agent = Agent(Driver(scenario=scenario(Turn(Text(text, chunk=1), ThinkingStep("hm"), "tail"))))
    view = RunView(driver="reference")
    await view.consume(agent.send("go"))
    assert view.state.final_text() == text + "tail"
    assert [i["kind"] for i in view.state.items] == ["text", "thinking", "text"]
