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


@pytest.mark.parametrize(
    "first",
    [
        "loads_line('{\"a\": NaN}')",  # msgspec refuses NaN: the json fallback
        "loads_line('[' * 100000 + ']' * 100000)",  # too deep for both
        "dumps_line({True: 1})",  # msgspec refuses a bool key: the json fallback
        "dumps_line({'a': [1, 'é']})",
    ],
)
def test_the_codecs_load_on_first_use_and_the_first_call_takes_every_path(first: str) -> None:
    import subprocess
    import sys

    code = (
        "import sys\nfrom adaptor_nb.driver._jsonline import dumps_line, loads_line\n"
        "assert 'msgspec' not in sys.modules and 'json' not in sys.modules\n"
        f"try:\n    print(repr({first}))\nexcept ValueError as e:\n    print('ValueError', e)\n"
        "print(loads_line('{\"b\": 2}'), dumps_line([1]))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.splitlines()
    expected = {
        "loads_line('{\"a\": NaN}')": "{'a': nan}",
        "loads_line('[' * 100000 + ']' * 100000)": "ValueError nested too deeply to decode",
        "dumps_line({True: 1})": repr(b'{"true":1}\n'),
        "dumps_line({'a': [1, 'é']})": repr('{"a":[1,"é"]}\n'.encode()),
    }[first]
    assert out == [expected, "{'b': 2} b'[1]\\n'"]
