"""The clause each check verifies: a family of the specification's contract and a number within it.

The families follow the driver contract from the outside in: what a driver declares (descriptor, config,
capability), what it produces (structured output, session, event), how a run goes (run, turn), what comes back
(response) and what can be observed without a model task (observation).
"""

from __future__ import annotations

from dataclasses import dataclass

FAMILIES: tuple[str, ...] = (
    "descriptor",
    "config",
    "capability",
    "structured_output",
    "session",
    "event",
    "run",
    "turn",
    "response",
    "observation",
)


@dataclass(frozen=True)
class Clause:
    """``family.number``: the clause a check verifies, and what it says in a line."""

    family: str
    number: int
    title: str

    @property
    def id(self) -> str:
        return f"{self.family}.{self.number}"

    def __str__(self) -> str:
        return self.id


CLAUSES: dict[str, Clause] = {
    # check name -> clause
    "descriptor_truthful": Clause("descriptor", 1, "the Descriptor is well formed and its declarations agree"),
    "config_stable": Clause("config", 1, "the configuration validates and its fingerprint is stable"),
    "policy_rejected": Clause("capability", 1, "undeclared policy and approval modes fail before launch"),
    "policy_accepted": Clause("capability", 2, "declared policy and approval modes are honoured"),
    "approval_permission": Clause("capability", 3, "declared permission requests reach the host"),
    "approval_plan_review": Clause("capability", 4, "declared plan reviews reach the host"),
    "approval_question": Clause("capability", 5, "declared questions reach the host with their choices"),
    "approval_denied": Clause("capability", 6, "a denial ends the run as ApprovalDenied"),
    "skills_profiles": Clause("capability", 7, "skills and profiles land where the driver says"),
    "host_tool_calls": Clause("capability", 8, "host tools are called and their results reach the model"),
    "host_tool_errors": Clause("capability", 9, "host tool failures reach the model sanitized"),
    "host_tool_cancel": Clause("capability", 10, "cancelling a run cancels its host tool calls"),
    "structured_output": Clause("structured_output", 1, "schemas are honoured natively or by prompt"),
    "checkpoints": Clause("session", 1, "a Thread resumes from a healthy checkpoint"),
    "event_ordering": Clause("event", 1, "events are ordered, sequenced and end with Done"),
    "cancellation": Clause("run", 1, "cancel() ends a run as RunCancelled with its partial result"),
    "messages_soon": Clause("turn", 1, "SOON messages are delivered at a declared boundary"),
    "messages_after_turn": Clause("turn", 2, "AFTER_TURN messages are delivered at the turn's end"),
    "messages_interrupt": Clause("turn", 3, "INTERRUPT messages interrupt the turn where declared"),
    "message_lifecycle": Clause("turn", 4, "every admitted message ends delivered or failed, once"),
    "results": Clause("response", 1, "the Result carries text, usage, raw streams and the verdict"),
    "observation_inspect": Clause("observation", 1, "inspection answers without a model task"),
}


def clause_of(check: str) -> Clause:
    """The clause of check ``check`` (KeyError for an unknown check)."""
    return CLAUSES[check]


def check_for(name_or_clause: str) -> str:
    """The check name for a check name or a clause id (``"event.1"``); the input when it is neither."""
    if name_or_clause in CLAUSES:
        return name_or_clause
    for name, clause in CLAUSES.items():
        if clause.id == name_or_clause:
            return name
    return name_or_clause


def ordered(names: list[str]) -> list[str]:
    """Check names in clause order (family order, then number)."""
    return sorted(names, key=lambda n: (FAMILIES.index(CLAUSES[n].family), CLAUSES[n].number))
