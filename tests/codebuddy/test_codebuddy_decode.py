"""CodeBuddy's stdout reader decodes every line exactly as json.loads does, and survives lines json cannot read."""

from __future__ import annotations

import json
from typing import Any

from _support import json_values
from hypothesis import given, settings
from hypothesis import strategies as st

from adaptor_nb.driver._claude_family import decode_block


def expected(line: str) -> Any:
    try:
        obj = json.loads(line)
    except (ValueError, RecursionError):
        return line.encode("utf-8", "surrogateescape")
    return obj if isinstance(obj, dict) else line.encode("utf-8", "surrogateescape")


def test_awkward_lines_read_as_json_reads_them_and_a_too_deep_one_is_a_bad_line() -> None:
    lines = [
        '{"big":123456789012345678901234567890,"neg":-99999999999999999999999}',  # beyond 64 bits: exact
        '{"huge":1e400,"tiny":-1e400}',  # beyond a double: inf, as json gives
        '{"nan":NaN,"inf":Infinity}',
        '{"lone":"\\ud800"}',
        '{"deep":' + "[" * 5000 + "]" * 5000 + "}",  # deeper than either decoder goes
        '{"tab":"a\tb"}',  # a raw control character: not JSON
        '{"type":"system","subtype":"init","session_id":"s-1"}',
    ]
    block = "\n".join(lines).encode("utf-8", "surrogatepass")
    frames, session_id = decode_block(block, {})  # a RecursionError here would kill the reader
    assert session_id == "s-1"
    assert [repr(f) for f in frames] == [repr(expected(x)) for x in lines]
    assert frames[4] == lines[4].encode()


@settings(max_examples=300, deadline=None)
@given(obj=st.dictionaries(st.text(max_size=8), json_values, max_size=6), ascii_only=st.booleans())
def test_any_object_decodes_as_json_decodes_it(obj: dict[str, Any], ascii_only: bool) -> None:
    line = json.dumps(obj, ensure_ascii=ascii_only, separators=(",", ":"))
    frames, _ = decode_block(line.encode("utf-8", "surrogatepass"), {})
    assert [repr(f) for f in frames] == [repr(json.loads(line))]
