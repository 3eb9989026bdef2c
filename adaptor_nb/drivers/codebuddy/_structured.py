"""The structured answer of a run, recovered when CLI 2.163.0 offered its StructuredOutput tool in a fallback form.

The CLI reads the ``--json-schema`` for the tool's parameters from a per-request async-context store. When it finds
none there (the tool list built outside that context: a race inside the CLI), it offers ``{data: object}`` and rejects
calls in both forms (a ``data`` call fails the real schema, a real-form call lacks ``data``), so the turn ends with
``error_during_execution``. When
its schema checker rejects the schema itself (for example a draft 2020-12 ``$schema``), it offers ``{data: object}``
and checks calls against that, so a ``{"data": {...}}`` call is accepted and reported as the structured output.
Either way the object the model meant is among its calls: every candidate (the reported value, the object under
``data``, each call's input) is validated locally against the run's schema, and a valid one is used.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from ...driver import ClaudeLikeResult, validation_errors

TOOL = "StructuredOutput"
FALLBACK_KEY = "data"


@dataclass
class StructuredCalls:
    """The inputs of the model's StructuredOutput calls in one run, oldest first."""

    inputs: list[Any] = field(default_factory=list)

    def note(self, frame: dict[str, Any]) -> None:
        """Remember the StructuredOutput calls of an ``assistant`` frame."""
        message = frame.get("message")
        for block in (message.get("content") if isinstance(message, dict) else None) or ():
            if isinstance(block, dict) and block.get("type") == "tool_use" and block.get("name") == TOOL:
                self.inputs.append(block.get("input"))


def _forms(value: Any) -> list[Any]:
    """``value`` as given, then the object under the fallback form's only key."""
    if isinstance(value, dict) and set(value) == {FALLBACK_KEY}:
        return [value, value[FALLBACK_KEY]]
    return [value]


def settle(schema: dict[str, Any], reported: tuple[bool, Any], calls: StructuredCalls) -> tuple[bool, Any]:
    """The structured answer to give the run: the first candidate valid against ``schema``.

    Candidates: the CLI's reported ``structured_output`` (as given, then unwrapped from ``data``), then the model's
    calls, newest first. With no valid candidate the CLI's report is kept as it was, so the local validation of the
    result still turns an invalid answer into a PolicyViolation and a missing one stays missing.
    """
    has, value = reported
    candidates = _forms(value) if has else []
    for given in reversed(calls.inputs):
        candidates += _forms(given)
    for candidate in candidates:
        if not validation_errors(schema, candidate):
            return True, candidate
    return reported


def rescue(schema: dict[str, Any], res: ClaudeLikeResult, calls: StructuredCalls) -> ClaudeLikeResult | None:
    """A successful turn in place of the CLI's give-up, when the model did call StructuredOutput with a valid value.

    In the fallback form the CLI rejects every call in the real schema's form ("missing required parameter(s):
    data"), asks three more times and then ends the turn with ``error_during_execution`` ("No response received from
    model"). The value the model gave is valid for the run's schema, so the run succeeds with it.
    """
    if res.ok or res.subtype != "error_during_execution" or not calls.inputs:
        return None
    has, value = settle(schema, (False, None), calls)
    if not has:
        return None
    return replace(res, subtype="success", is_error=False, text=res.text or "", structured=value, has_structured=True)
