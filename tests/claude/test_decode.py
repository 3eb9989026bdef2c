"""The stdout reader's line decoding: its short cut for text deltas must agree with json.loads on every line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from _support import json_values
from hypothesis import given, settings
from hypothesis import strategies as st

from adaptor_nb.driver._claude_family import decode_block

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "claude" / "recorded-text-deltas.jsonl"
SESSION = "a6a072aa-71ec-4121-9a46-04422e891c15"


def delta_line(text: str, index: int = 0, parent: str | None = None, *, ensure_ascii: bool = False) -> str:
    """A text delta in the layout Claude Code writes (compact, keys in its order)."""
    frame = {
        "type": "stream_event",
        "event": {"type": "content_block_delta", "index": index, "delta": {"type": "text_delta", "text": text}},
        "session_id": SESSION,
        "parent_tool_use_id": parent,
        "uuid": "8976c09b-aaa7-4923-8b11-b31edcdb5693",
    }
    return json.dumps(frame, separators=(",", ":"), ensure_ascii=ensure_ascii)


def expected(line: str) -> Any:
    """What the decoder must yield for ``line``: the parsed object, or its bytes when it is not a JSON object."""
    try:
        obj = json.loads(line)
    except ValueError:
        return line.encode()
    return obj if isinstance(obj, dict) else line.encode()


def per_line(frames: list[Any]) -> list[Any]:
    """The frames one per stdout line: a short-cut frame ``(index, [text, ...])`` becomes one ``(index, text)`` each."""
    out: list[Any] = []
    for frame in frames:
        if isinstance(frame, tuple):
            out.extend((frame[0], text) for text in frame[1])
        else:
            out.append(frame)
    return out


def as_object(frame: Any) -> Any:
    """A short-cut line ``(index, text)`` compared through what it stands for."""
    if isinstance(frame, tuple):
        index, text = frame
        return {"index": index, "text": text}
    return frame


_LAYOUT = {"type", "event", "session_id", "parent_tool_use_id", "uuid"}


def reduce(obj: Any) -> Any:
    """A parsed line as the short cut would give it: a top-level text delta in the CLI's layout becomes its parts."""
    if not (isinstance(obj, dict) and obj.get("type") == "stream_event" and set(obj) == _LAYOUT):
        return obj
    ev = obj["event"]
    is_text = ev.get("type") == "content_block_delta" and ev["delta"].get("type") == "text_delta"
    if is_text and obj["parent_tool_use_id"] is None:
        return {"index": ev["index"], "text": ev["delta"]["text"]}
    return obj


def test_recorded_cli_deltas_take_the_short_cut() -> None:
    lines = [x for x in FIXTURE.read_text().splitlines() if x.strip()]
    grouped, session_id = decode_block("\n".join(lines).encode(), {})
    frames = per_line(grouped)
    assert session_id == SESSION
    assert len(frames) == len(lines)
    assert len(grouped) < len(frames)  # the recording's consecutive deltas of one block share a frame
    shortcut = [f for f in frames if isinstance(f, tuple)]
    deltas = [json.loads(x) for x in lines if '"text_delta"' in x]
    assert len(shortcut) == len(deltas) > 0
    assert [t for _, t in shortcut] == [d["event"]["delta"]["text"] for d in deltas]
    for line, frame in zip(lines, frames, strict=True):
        assert as_object(frame) == reduce(expected(line))


@settings(max_examples=300, deadline=None)
@given(text=st.text(), index=st.integers(min_value=0, max_value=10**6), ascii_only=st.booleans())
def test_any_text_round_trips(text: str, index: int, ascii_only: bool) -> None:
    line = delta_line(text, index, ensure_ascii=ascii_only)
    frames, _ = decode_block(line.encode("utf-8", "surrogatepass"), {})
    assert frames == [(index, [text])]
    assert as_object(per_line(frames)[0]) == reduce(json.loads(line))


def test_lines_off_the_layout_are_decoded_in_full() -> None:
    good = delta_line('say "hi"\\n')
    variants = [
        delta_line("sub agent text", parent="toolu_01"),  # a subagent's delta keeps its parent
        good.replace('"index":0', '"index":00'),  # not JSON: a leading zero
        good.replace('"index":0', '"index":-1'),
        good.replace('"index":0', '"index":1.0'),
        good[:-1] + ',"extra":1}',  # another key: the object is passed on whole
        good + " trailing",  # not JSON
        good[:-1],  # cut short
        good.replace('"text":"', '"text":"\\x'),  # a bad escape
        good.replace("say", "say\x01"),  # a raw control character
        good.replace(',"uuid"', ' ,"uuid"'),  # still JSON, different spacing
        good.replace('"session_id":"', '"session_id":"\\u0041'),  # escapes outside the text
        json.dumps(json.loads(good)),  # default separators
    ]
    for line in variants:
        frames, _ = decode_block(line.encode(), {})
        assert len(frames) == 1, line
        assert not isinstance(frames[0], tuple), line
        assert frames[0] == expected(line), line


def test_mixed_block_keeps_order_and_bytes_of_bad_lines() -> None:
    lines = [delta_line("a"), "not json", delta_line("b", index=2), '{"type":"system","subtype":"init"}', "[1]"]
    frames, _ = decode_block("\n".join(lines).encode(), {})
    assert frames == [(0, ["a"]), b"not json", (2, ["b"]), {"type": "system", "subtype": "init"}, b"[1]"]


def test_consecutive_deltas_of_one_block_share_a_frame_and_anything_else_starts_a_new_one() -> None:
    lines = [
        delta_line("a"),
        delta_line("b"),
        delta_line("c", index=1),  # another block
        delta_line("d", index=1),
        delta_line("sub", index=1, parent="toolu_01"),  # decoded in full: it ends the run
        delta_line("e", index=1),
        "",  # a blank line is no frame and keeps the run
        delta_line("f", index=1),
        '{"type":"system","subtype":"status"}',  # any other frame ends the run too
        delta_line("g", index=1),
    ]
    frames, _ = decode_block("\n".join(lines).encode(), {})
    assert frames[:3] == [(0, ["a", "b"]), (1, ["c", "d"]), json.loads(lines[4])]
    assert frames[3:] == [(1, ["e", "f"]), json.loads(lines[8]), (1, ["g"])]


def test_lines_the_fast_decoder_refuses_read_as_json_reads_them() -> None:
    awkward = [
        '{"big":123456789012345678901234567890,"neg":-99999999999999999999999}',  # beyond 64 bits: exact ints
        '{"huge":1e400,"tiny":-1e400}',  # beyond a double: json gives inf
        '{"nan":NaN,"inf":Infinity,"minf":-Infinity}',  # json's own extensions
        '{"lone":"\\ud800 and \\udfff"}',  # lone surrogates
        '{"deep":' + "[" * 5000 + "]" * 5000 + "}",  # deeper than either decoder goes: not a frame
        '{"tab":"a\tb"}',  # a raw control character: refused by both
        "\ufeff{}",  # a byte order mark: refused by both
    ]
    for line in awkward:
        frames, _ = decode_block(line.encode("utf-8", "surrogatepass"), {})
        assert len(frames) == 1, line[:40]
        want = expected(line) if not line.startswith('{"deep"') else line.encode()
        got = frames[0]
        assert repr(got) == repr(want), line[:40]  # repr: NaN != NaN, and 1 == 1.0 must not pass


@settings(max_examples=300, deadline=None)
@given(obj=st.dictionaries(st.text(max_size=8), json_values, max_size=6), ascii_only=st.booleans())
def test_any_object_decodes_as_json_decodes_it(obj: dict[str, Any], ascii_only: bool) -> None:
    line = json.dumps(obj, ensure_ascii=ascii_only, separators=(",", ":"))
    frames, _ = decode_block(line.encode("utf-8", "surrogatepass"), {})
    assert len(per_line(frames)) == 1
    assert repr(as_object(per_line(frames)[0])) == repr(reduce(json.loads(line)))
