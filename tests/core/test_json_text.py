"""The one parser of JSON in model text, and the answers read through it (Result.decode, Result.to_pandas)."""

import json
from typing import Any

import pytest

from adaptor_nb import Result
from adaptor_nb._schema import parse_json_text


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ('{"a": 1}', {"a": 1}),
        ("  [1, 2]\n", [1, 2]),
        ("42", 42),
        ('"plain string"', "plain string"),
        ('```json\n{"a": 1}\n```', {"a": 1}),
        ('```JSON\n{"a": 1}\n```', {"a": 1}),
        ('```\n{"a": 1}\n```', {"a": 1}),
        ('```jsonc\n{"a": 1}\n```', {"a": 1}),
        ('```json {"a": 1}```', {"a": 1}),
        ('```json\n{"a": 1}', {"a": 1}),  # an answer cut off before its closing fence
        ('```json\n{"a": 1}```', {"a": 1}),
        ('Here is the answer:\n```json\n{"a": 1}\n```\nHope this helps.', {"a": 1}),
        ('Two tries:\n```json\n{"a": 1}\n```\nand\n```json\n{"a": 2}\n```', {"a": 1}),
        ('First some code:\n```python\nprint("x")\n```\nthen the data:\n```json\n[3]\n```', [3]),
        ('```json\n{"code": "```"}\n```', {"code": "```"}),
    ],
)
def test_json_is_read_from_plain_text_and_code_fences(text: str, value: Any) -> None:
    assert parse_json_text(text) == value


@pytest.mark.parametrize("text", ["", "not json", "```json\n{broken\n```", "Prose only.\n```python\nx = 1\n```"])
def test_text_without_json_raises_a_json_decode_error(text: str) -> None:
    with pytest.raises(json.JSONDecodeError):
        parse_json_text(text)


def test_result_decode_and_to_pandas_read_fenced_json_the_same_way() -> None:
    pytest.importorskip("pydantic")
    r = Result(text='The list:\n```json\n[{"n": 1}, {"n": 2}]\n```\n')
    assert r.decode(list[dict[str, int]]) == [{"n": 1}, {"n": 2}]
    pd = pytest.importorskip("pandas")
    assert isinstance(r.to_pandas(), pd.DataFrame)
    assert list(r.to_pandas()["n"]) == [1, 2]


def test_result_without_json_text_says_so() -> None:
    pytest.importorskip("pandas")
    with pytest.raises(ValueError, match="no structured output"):
        Result(text="just words").to_pandas()
