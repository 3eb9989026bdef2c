"""Fields with a matching enum hold it: Notice.kind (NoticeKind) and message boundaries (Boundary)."""

import json

import pytest

from adaptor_nb import (
    Author,
    MessageOutcome,
    MessageState,
    MessageUpdate,
    Notice,
    NoticeKind,
    Timing,
    TranscriptMessage,
)
from adaptor_nb.driver import Boundary


@pytest.mark.parametrize("kind", list(NoticeKind))
def test_well_known_notice_kinds_become_the_enum_member_whichever_way_they_are_given(kind: NoticeKind) -> None:
    for given in (kind, kind.value):
        notice = Notice(kind=given, text="t")
        assert notice.kind is kind
        assert notice.kind == kind.value
        assert f"{notice.kind}" == kind.value


def test_driver_specific_notice_kinds_stay_plain_strings() -> None:
    notice = Notice(kind="claude.protocol_error")
    assert type(notice.kind) is str and notice.kind == "claude.protocol_error"


def test_the_default_notice_kind_is_lifecycle_and_kinds_serialise_as_their_strings() -> None:
    assert Notice().kind is NoticeKind.LIFECYCLE
    assert (
        json.dumps([Notice(kind="thread.continuity").kind, Notice(kind="x.y").kind]) == '["thread.continuity", "x.y"]'
    )
    assert {Notice(kind="runtime").kind: 1} == {"runtime": 1}


def test_message_boundaries_hold_the_boundary_enum_when_it_has_the_value() -> None:
    author = Author()
    records = [
        MessageUpdate(id="m", state=MessageState.DELIVERED, boundary="turn_end"),
        MessageOutcome("m", "t", author, Timing.SOON, MessageState.DELIVERED, boundary="in_run"),
        TranscriptMessage("m", author, "resume", "interrupt", "t"),
    ]
    assert [r.boundary for r in records] == [Boundary.TURN_END, Boundary.IN_RUN, Boundary.INTERRUPT]
    assert all(isinstance(r.boundary, Boundary) for r in records)
    receipt = MessageUpdate(id="m", boundary="receipt")
    assert type(receipt.boundary) is str and receipt.boundary == "receipt"
    assert MessageUpdate(id="m").boundary == ""
    assert f"{MessageUpdate(boundary=Boundary.IN_RUN).boundary}" == "in_run"
