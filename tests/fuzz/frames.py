"""Hypothesis strategies for hostile CLI output: recorded turns damaged at the frame and the sequence level.

Seeds are the recorded fixtures in tests/fixtures (Claude Code's stream-json also seeds CodeBuddy Code, which speaks
the same protocol; Codex seeds are the notifications of recorded app-server sessions, with the thread and turn ids
the stand-in uses). A script is ``{"lines": [...], "exit": bool}``: the stand-in exits after the lines when the
turn's terminal frame was damaged, moved or dropped, so a run that cannot see an end still sees EOF.

Damages change values (a field set to a value of any wrong type, or removed), types and structure (a number for a
list or object, a list for a string, NaN or Infinity for a number, a value nested hundreds deep, a key given twice,
a frame of another driver's protocol spliced in) and the sequence (frames dropped, repeated, swapped, truncated,
garbage lines put in between).
"""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

from adaptor_nb.testing._replay import load_fixture

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
_MAX_SEED_LINES = 40


def _objects(lines: list[bytes]) -> list[dict[str, Any]]:
    out = []
    for line in lines:
        try:
            obj = json.loads(line)
        except ValueError:
            continue
        if isinstance(obj, dict):
            out.append(obj)
    return out


def _stream_json_seeds(folder: str) -> list[list[dict[str, Any]]]:
    seeds = []
    for path in sorted((FIXTURES / folder).glob("*.jsonl")):
        frames = [f for f in _objects(load_fixture(str(path))) if "control" not in str(f.get("type"))]
        if frames and len(frames) <= _MAX_SEED_LINES and frames[-1].get("type") in ("result", "run.completed"):
            seeds.append(frames)
    return seeds


def _codex_seeds() -> list[list[dict[str, Any]]]:
    seeds = []
    for path in sorted((FIXTURES / "codex").glob("*.jsonl")):
        text = path.read_text()
        objs = _objects([line.encode() for line in text.splitlines()])
        thread = turn = ""
        for obj in objs:
            result = obj.get("result")
            if isinstance(result, dict) and isinstance(result.get("thread"), dict):
                thread = str(result["thread"].get("id", ""))
            if isinstance(result, dict) and isinstance(result.get("turn"), dict):
                turn = str(result["turn"].get("id", ""))
        if thread and turn:
            text = text.replace(thread, "thr_1").replace(turn, "@TURN@")
        notes = [o for o in _objects([line.encode() for line in text.splitlines()]) if "method" in o and "id" not in o]
        if notes and notes[-1].get("method") == "turn/completed":
            seeds.append(notes)
    return seeds


SEEDS: dict[str, list[list[dict[str, Any]]]] = {
    "claude": _stream_json_seeds("claude"),
    "codebuddy": _stream_json_seeds("claude"),
    "codex": _codex_seeds(),
    "cursor": _stream_json_seeds("cursor"),
}

# Values of every JSON type and then some: what a field of the wrong type gets.
WRONG = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=12),
    st.sampled_from(["", "0", "-1", "result", "success", "completed", "@TURN@", "turn_1", "thr_1", "\ud800"]),
    st.lists(st.one_of(st.none(), st.integers(), st.text(max_size=4)), max_size=3),
    st.dictionaries(st.text(max_size=6), st.one_of(st.none(), st.integers(), st.text(max_size=4)), max_size=3),
    st.just([[[[[]]]]]),
    st.just({"type": {"type": []}}),
)

# Lines that are not frames at all.
GARBAGE = st.one_of(
    st.sampled_from(
        [
            "",
            "   ",
            "not json",
            "{",
            '{"type": ',
            "null",
            "[]",
            "123",
            '"a string"',
            "[" * 5000 + "]" * 5000,
            '{"a":' * 3000 + "1" + "}" * 3000,
            "\ud800\udfff invalid utf-8",
            "\x00\x01\x02",
        ]
    ),
    st.text(max_size=40),
)


def _wrong(draw: st.DrawFn) -> Any:
    return copy.deepcopy(draw(WRONG))  # ``st.just`` hands out one object: it must never be changed in place


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every path to a field below ``value`` (dict keys and list indexes)."""
    found: list[tuple[Any, ...]] = []
    if isinstance(value, dict):
        for key, sub in value.items():
            found.append((*prefix, key))
            found.extend(_paths(sub, (*prefix, key)))
    elif isinstance(value, list):
        for i, sub in enumerate(value):
            found.append((*prefix, i))
            found.extend(_paths(sub, (*prefix, i)))
    return found


def _at(frame: Any, path: tuple[Any, ...]) -> Any:
    for step in path:
        frame = frame[step]
    return frame


@st.composite
def _mutated_frame(draw: st.DrawFn, frame: dict[str, Any]) -> Any:
    """``frame`` with one to three fields set to a wrong-typed value or removed (or the whole frame replaced)."""
    frame = copy.deepcopy(frame)
    for _ in range(draw(st.integers(1, 3))):
        paths = _paths(frame) if isinstance(frame, dict | list) else []
        if not paths or draw(st.integers(0, 19)) == 0:
            return _wrong(draw)
        path = draw(st.sampled_from(paths))
        parent = _at(frame, path[:-1])
        if isinstance(parent, dict) and draw(st.integers(0, 4)) == 0:
            del parent[path[-1]]
        else:
            parent[path[-1]] = _wrong(draw)
    return frame


_DEEP = re.compile(r'"@DEEP:(\d+):(list|dict)@"')


def _deep(match: re.Match[str]) -> str:
    depth = int(match.group(1))
    if match.group(2) == "list":
        return "[" * depth + "0" + "]" * depth
    return '{"type":' * depth + "0" + "}" * depth


def _dumps(frame: Any) -> str:
    """``frame`` as a JSON line, each deep-nesting marker (see ``_retyped``) written out as its nesting."""
    return _DEEP.sub(_deep, json.dumps(frame, ensure_ascii=False))


_NONFINITE = st.sampled_from([float("nan"), float("inf"), float("-inf")])


@st.composite
def _retyped(draw: st.DrawFn, value: Any) -> Any:
    """``value`` as a neighbouring wrong type: a number for a list or object, a list for a string, NaN or
    Infinity for a number, a string for a number, or the value nested hundreds deep."""
    kind = draw(st.integers(0, 5))
    if kind == 0:  # a marker until the line is written: frames stay shallow for the strategies that walk them
        return f"@DEEP:{draw(st.sampled_from([200, 500, 900]))}:{draw(st.sampled_from(['list', 'dict']))}@"
    if isinstance(value, list | dict):
        return draw(st.one_of(st.integers(-3, 3), _NONFINITE, st.just(str(value)[:20])))
    if isinstance(value, str):
        return draw(st.sampled_from([[value], [[value]], {"text": value}, 0, float("nan")]))
    if isinstance(value, bool) or value is None:
        return draw(st.sampled_from([[], {}, "true", 1]))
    if isinstance(value, int | float):
        return draw(st.one_of(_NONFINITE, st.just(str(value)), st.just([value]), st.just(10**400)))
    return draw(WRONG)


@st.composite
def _restructured(draw: st.DrawFn, frame: dict[str, Any]) -> Any:
    """``frame`` with one to three values turned into a neighbouring wrong type (see ``_retyped``)."""
    frame = copy.deepcopy(frame)
    for _ in range(draw(st.integers(1, 3))):
        paths = _paths(frame)
        if not paths:
            return draw(_retyped(frame))
        path = draw(st.sampled_from(paths))
        parent = _at(frame, path[:-1])
        parent[path[-1]] = draw(_retyped(parent[path[-1]]))
    return frame


@st.composite
def _duplicate_key(draw: st.DrawFn, frame: dict[str, Any]) -> str:
    """``frame`` as a JSON line whose first or last key appears twice, once with a wrong value."""
    text = _dumps(frame)
    if not frame:
        return text
    key = draw(st.sampled_from(sorted(frame, key=str)))
    extra = f"{json.dumps(str(key))}: {_dumps(_wrong(draw))}"
    return "{" + extra + ", " + text[1:] if draw(st.booleans()) else text[:-1] + ", " + extra + "}"


def _other_frames(driver: str) -> list[dict[str, Any]]:
    return [f for name, seeds in SEEDS.items() if name != driver for seed in seeds for f in seed]


TAIL = ["truncate", "dupkey", "splice"]


@st.composite
def turn_scripts(draw: st.DrawFn, driver: str) -> dict[str, Any]:
    """A script for one turn of ``driver``: a recorded turn damaged at frame level and sequence level."""
    seed = draw(st.sampled_from(SEEDS[driver]))
    terminal = seed[-1]
    items: list[tuple[Any, bool]] = [(f, True) for f in seed]  # (frame or raw line, untouched)
    for _ in range(draw(st.integers(1, 4))):
        op = draw(st.sampled_from(["field"] * 4 + ["retype"] * 4 + ["drop", "duplicate", "swap", "garbage"] + TAIL))
        i = draw(st.integers(0, len(items) - 1)) if items else 0
        if not items:
            items.append((draw(GARBAGE), False))
        elif op == "field" and isinstance(items[i][0], dict):
            items[i] = (draw(_mutated_frame(items[i][0])), False)
        elif op == "retype" and isinstance(items[i][0], dict):
            items[i] = (draw(_restructured(items[i][0])), False)
        elif op == "dupkey" and isinstance(items[i][0], dict):
            items[i] = (draw(_duplicate_key(items[i][0])), False)
        elif op == "splice":
            items.insert(i, (copy.deepcopy(draw(st.sampled_from(_other_frames(driver)))), False))
        elif op == "drop":
            del items[i]
        elif op == "duplicate":
            items.insert(i, items[i])
        elif op == "swap":
            j = draw(st.integers(0, len(items) - 1))
            items[i], items[j] = items[j], items[i]
        elif op == "garbage":
            items.insert(i, (draw(GARBAGE), False))
        elif op == "truncate":
            text = items[i][0] if isinstance(items[i][0], str) else _dumps(items[i][0])
            items[i] = (text[: draw(st.integers(0, max(0, len(text) - 1)))], False)
    lines = [item if isinstance(item, str) else _dumps(item) for item, _ in items]
    intact_end = bool(items) and items[-1][1] and items[-1][0] is terminal
    return {"lines": lines, "exit": not intact_end or draw(st.integers(0, 9)) == 0}
