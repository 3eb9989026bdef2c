"""compose_results numbers messages along the composite turn sequence; audit methods share nothing with the Result."""

import copy
from typing import Any

from adaptor_nb import (
    Author,
    AuthorKind,
    MessageFailure,
    MessageOutcome,
    MessageState,
    RawStreams,
    Result,
    ServiceReport,
    SubagentResult,
    TerminalPayload,
    Timing,
    TranscriptItem,
    TranscriptMessage,
    Usage,
    compose_results,
)


def _outcome(id: str, turn: int, state: MessageState = MessageState.DELIVERED) -> MessageOutcome:
    return MessageOutcome(
        id=id,
        text=f"text {id}",
        author=Author(AuthorKind.HUMAN, id="u", name="User"),
        timing=Timing.AFTER_TURN,
        state=state,
        turn=turn,
        reason=MessageFailure.RUN_FAILED if state is MessageState.FAILED else MessageFailure.NONE,
    )


def test_message_turns_follow_the_composite_turn_sequence() -> None:
    first = Result(turns=3, _messages=[_outcome("m1", 1)])
    second = Result(turns=1, _messages=[_outcome("m2", 1)])
    composite = compose_results("c", first, second)
    assert composite.turns == 4
    assert [(m.id, m.turn) for m in composite.messages()] == [("m1", 1), ("m2", 4)]


def test_message_turns_skip_children_without_messages_and_keep_unnumbered_messages_at_zero() -> None:
    parts = [
        Result(turns=2),
        Result(turns=2, _messages=[_outcome("a", 2), _outcome("b", 0, MessageState.FAILED)]),
        None,
        Result(turns=1, _messages=[_outcome("c", 1)]),
    ]
    composite = compose_results("c", *parts)
    assert [(m.id, m.turn) for m in composite.messages()] == [("a", 4), ("b", 0), ("c", 5)]


def _full_result() -> Result:
    message = TranscriptMessage("m1", Author(AuthorKind.AGENT, "peer"), "resume", "turn_end", "hello")
    return Result(
        turns=1,
        text="answer",
        usage=Usage(1, 2),
        metadata={"k": "v"},
        _raw=RawStreams(b"out", b"err", TerminalPayload("result", {"nested": {"list": [1, 2]}})),
        _transcript=[
            TranscriptItem(
                kind="tool_use",
                tool_name="Bash",
                input={"command": "ls", "args": ["-l"]},
                metadata={"a": "b"},
                data={"deep": {"x": [1]}},
            ),
            TranscriptItem(kind="message", message=message),
        ],
        _messages=[_outcome("m1", 1), _outcome("m2", 0, MessageState.FAILED)],
        _subagents=[SubagentResult(member="m", task="t", state="completed", usage=Usage(1, 1), unread=("x",))],
        _services=[ServiceReport("db", "ready", "http://localhost:1")],
    )


def _scribble(value: Any) -> None:
    """Change every mutable thing reachable from ``value`` (frozen dataclasses included, through their __dict__)."""
    if isinstance(value, dict):
        for v in list(value.values()):
            _scribble(v)
        value["scribbled"] = True
    elif isinstance(value, list):
        for v in value:
            _scribble(v)
        value.append("scribbled")
    elif hasattr(value, "__dict__") and not isinstance(value, type):
        for v in list(vars(value).values()):
            _scribble(v)


def test_audit_methods_return_copies_that_share_nothing_with_the_result() -> None:
    result = _full_result()
    before = copy.deepcopy(result)
    for method in (result.transcript, result.messages, result.undelivered, result.subagents, result.services):
        items = method()
        assert items, method.__name__
        _scribble(items)
        for item in items:
            _scribble(item)
    raw = result.raw()
    _scribble(raw)
    assert raw.terminal is not None
    raw.terminal.json["nested"]["list"].append(3)
    assert result.transcript() == before.transcript()
    assert result.messages() == before.messages()
    assert result.undelivered() == before.undelivered()
    assert result.subagents() == before.subagents()
    assert result.services() == before.services()
    assert result.raw() == before.raw()
    assert result.raw().terminal == TerminalPayload("result", {"nested": {"list": [1, 2]}})
    assert result.transcript()[0].input == {"command": "ls", "args": ["-l"]}
    assert result.transcript()[0].data == {"deep": {"x": [1]}}


def test_structured_output_is_a_copy_too() -> None:
    result = Result(_structured={"rows": [{"a": 1}]}, _has_structured=True)
    result.structured["rows"].append({"a": 2})
    assert result.structured == {"rows": [{"a": 1}]}
