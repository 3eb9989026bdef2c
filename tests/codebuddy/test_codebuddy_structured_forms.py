"""Which StructuredOutput call becomes a run's structured answer (no CLI: the choice is local validation)."""

from __future__ import annotations

from typing import Any

from adaptor_nb.drivers.codebuddy._structured import StructuredCalls, settle

PERSON: dict[str, Any] = {
    "type": "object",
    "properties": {"name": {"type": "string"}},
    "required": ["name"],
    "additionalProperties": False,
}
DATA: dict[str, Any] = {
    "type": "object",
    "properties": {"data": {"type": "object"}},
    "required": ["data"],
    "additionalProperties": False,
}


def calls(*inputs: Any) -> StructuredCalls:
    found = StructuredCalls()
    content = [{"type": "tool_use", "name": "StructuredOutput", "input": i} for i in inputs]
    found.note({"type": "assistant", "message": {"content": [{"type": "text", "text": "x"}, *content]}})
    return found


def test_a_schema_with_its_own_data_property_keeps_the_value_as_given() -> None:
    assert settle(DATA, (True, {"data": {"a": 1}}), StructuredCalls()) == (True, {"data": {"a": 1}})


def test_the_fallback_wrapper_is_unwrapped_only_when_that_validates() -> None:
    assert settle(PERSON, (True, {"data": {"name": "x"}}), StructuredCalls()) == (True, {"name": "x"})
    assert settle(PERSON, (True, {"data": {"name": 5}}), StructuredCalls()) == (True, {"data": {"name": 5}})


def test_the_newest_valid_call_wins_and_invalid_calls_leave_no_answer() -> None:
    assert settle(PERSON, (False, None), calls({"name": "old"}, {"name": "new"})) == (True, {"name": "new"})
    assert settle(PERSON, (False, None), calls({"name": 1}, {"data": {"nom": "x"}})) == (False, None)
