"""The driver SPI's stdin line encoder: the value json would write, as one line of UTF-8."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from _support import json_values
from hypothesis import assume, given, settings

from adaptor_nb.driver import dumps_line, loads_line


def _floats(value: Any, test: Any = lambda _: True) -> bool:
    """Whether ``value`` holds a float that passes ``test``."""
    if isinstance(value, float):
        return bool(test(value))
    if isinstance(value, dict):
        return any(_floats(v, test) for v in value.values())
    if isinstance(value, list):
        return any(_floats(v, test) for v in value)
    return False


@settings(max_examples=300, deadline=None)
@given(json_values)
def test_a_line_reads_back_as_the_value_and_matches_json_byte_for_byte_without_floats(value: Any) -> None:
    assume(not _floats(value, math.isinf))  # json writes Infinity, which is not JSON; the line has null
    line = dumps_line(value)
    assert line.endswith(b"\n") and b"\n" not in line[:-1]
    assert json.loads(line) == value
    assert loads_line(line.decode()) == value
    if not _floats(value):
        assert line == json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"


def test_what_the_fast_encoder_refuses_is_written_as_json_writes_it() -> None:
    assert dumps_line({True: 1, None: 2}) == b'{"true":1,"null":2}\n'
    assert dumps_line(2**70) == str(2**70).encode() + b"\n"
    assert dumps_line([float("nan"), float("inf")]) == b"[null,null]\n"  # json's NaN is not JSON: no reader takes it
    assert math.isclose(json.loads(dumps_line(1e16)), 1e16)
    with pytest.raises(TypeError):
        dumps_line({"x": object()})
    with pytest.raises(UnicodeEncodeError):
        dumps_line("\ud800")  # a lone surrogate cannot be written as UTF-8, as with json.dumps(...).encode()
