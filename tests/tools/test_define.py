"""tool.define: schemas inferred from signatures and docstrings, overrides, validation, outcomes of a call."""

from __future__ import annotations

import asyncio
import threading
from typing import Annotated, Any

import pytest

from adaptor_nb import tool
from adaptor_nb.tools._invoke import call_tool


def google(column: str, limit: int = 10, *, exact: bool = False) -> list[str]:
    """Look up values of a column.

    Longer text about the tool.

    Args:
        column: the column to read
        limit (int): how many values,
            at most
        exact: match exactly

    Returns:
        the values
    """
    return [column] * min(limit, 2)


def numpy_style(x: float, label: Annotated[str, "shown on the plot"] = "x") -> dict[str, Any]:
    """Scale a number.

    Parameters
    ----------
    x : float
        the number to scale
    label : str
        ignored: Annotated text wins

    Returns
    -------
    dict
    """
    return {"x": x * 2, "label": label}


def test_the_input_schema_comes_from_hints_and_google_docstrings() -> None:
    t = tool.define(google)
    assert (t.name, t.description, t.revision) == (
        "google",
        "Look up values of a column.\n\nLonger text about the tool.",
        "1",
    )
    props = t.input_schema["properties"]
    assert props["column"] == {"type": "string", "description": "the column to read"}
    assert props["limit"] == {"type": "integer", "default": 10, "description": "how many values, at most"}
    assert props["exact"]["description"] == "match exactly"
    assert t.input_schema["required"] == ["column"]
    assert t.output_schema == {"type": "array", "items": {"type": "string"}}


def test_numpy_docstrings_and_annotated_text_describe_parameters() -> None:
    t = tool.define(numpy_style)
    props = t.input_schema["properties"]
    assert props["x"]["description"] == "the number to scale"
    assert props["label"]["description"] == "shown on the plot"
    assert t.description == "Scale a number."
    assert t.output_schema == {"type": "object", "additionalProperties": True}


def test_decorator_forms_and_explicit_fields() -> None:
    @tool.define
    def plain(a: int) -> int:
        return a

    @tool.define(name="renamed", description="explicit", revision="7", requires_approval=True, timeout=2)
    def other(a: int) -> int:
        return a + 1

    assert plain.name == "plain" and plain(3) == 3
    assert (other.name, other.description, other.revision, other.requires_approval, other.timeout) == (
        "renamed",
        "explicit",
        "7",
        True,
        2.0,
    )
    assert other(1) == 2


def test_explicit_schemas_override_inference() -> None:
    schema = {"type": "object", "properties": {"q": {"type": "string", "maxLength": 3}}, "required": ["q"]}
    t = tool.define(lambda **kw: kw["q"], name="q", input_schema=schema, output_schema={"type": "object"})
    assert t.input_schema == schema and t.output_schema == {"type": "object"}
    assert t.validate_args({"q": "abc"}) == {"q": "abc"}
    with pytest.raises(ValueError, match=r"maxLength|too long"):
        t.validate_args({"q": "abcd"})


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"name": "two__underscores"}, "no '__'"),
        ({"name": "1starts-with-digit"}, "start with a letter"),
        ({"revision": ""}, "revision"),
        ({"timeout": 0}, "timeout"),
        ({"input_schema": {"type": "string"}}, "object"),
        ({"input_schema": {"type": 5}}, "not a valid JSON Schema"),
    ],
)
def test_bad_definitions_fail_naming_the_field(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises((ValueError, TypeError), match=message):
        tool.define(google, **kwargs)


def test_unsupported_signatures_fail_at_definition() -> None:
    def star(*args: int) -> None: ...

    with pytest.raises(TypeError, match=r"\*args"):
        tool.define(star)


def test_only_package_minted_rejections_count() -> None:
    minted = tool.reject("no access to prod")
    assert tool.as_rejection(minted) is minted and minted.message == "no access to prod"
    assert tool.as_rejection(tool.ToolRejection("forged")) is None
    assert tool.as_rejection(ValueError("x")) is None
    with pytest.raises(TypeError):
        tool.reject("")


async def test_sync_functions_run_in_a_worker_thread_and_async_ones_on_the_loop() -> None:
    seen: dict[str, int] = {}

    def sync_fn(a: int) -> int:
        seen["sync"] = threading.get_ident()
        return a + 1

    async def async_fn(a: int) -> int:
        seen["async"] = threading.get_ident()
        return a + 2

    assert (await call_tool(tool.define(sync_fn), {"a": 1})).text == "2"
    assert (await call_tool(tool.define(async_fn), {"a": 1})).text == "3"
    assert seen["async"] == threading.get_ident() != seen["sync"]


async def test_every_outcome_the_model_can_see(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WAREHOUSE_TOKEN", "tok-9f8e7d6c5b")
    calls: list[str] = []

    def lookup(key: str) -> dict[str, str]:
        calls.append(key)
        if key == "prod":
            raise tool.reject("no access to prod")
        if key == "crash":
            raise ConnectionError("login with tok-9f8e7d6c5b refused\nsecond line\n  File x.py, line 3")
        if key == "bad":
            return "not a dict"  # type: ignore[return-value]
        if key == "obj":
            return {"value": object()}  # type: ignore[dict-item]
        return {"value": key.upper()}

    t = tool.define(lookup)
    ok = await call_tool(t, {"key": "a"})
    assert (ok.text, ok.is_error, ok.structured) == ('{"value": "A"}', False, {"value": "A"})
    rejected = await call_tool(t, {"key": "prod"})
    assert (rejected.text, rejected.is_error, rejected.kind, rejected.notice) == (
        "no access to prod",
        True,
        "rejected",
        "",
    )
    invalid = await call_tool(t, {"key": 5, "extra": 1})
    assert invalid.is_error and invalid.kind == "invalid_args" and "key" in invalid.text and "extra" in invalid.text
    crashed = await call_tool(t, {"key": "crash"})
    assert crashed.kind == "failed" and crashed.text == "tool 'lookup' failed: ConnectionError"
    assert crashed.notice == "tool 'lookup' failed: ConnectionError: login with <hidden> refused"
    bad = await call_tool(t, {"key": "bad"})
    assert bad.kind == "bad_result" and "output schema" in bad.text
    unserialisable = await call_tool(t, {"key": "obj"})
    assert unserialisable.kind == "bad_result" and unserialisable.is_error
    assert calls == ["a", "prod", "crash", "bad", "obj"]  # the invalid call never reached the function


async def test_a_timeout_ends_the_call_with_a_sanitized_error() -> None:
    never = asyncio.Event()

    async def stuck() -> str:
        await never.wait()
        return "never"

    outcome = await call_tool(tool.define(stuck, timeout=0.05), {})
    assert (outcome.kind, outcome.text) == ("timeout", "tool 'stuck' failed: timed out after 0.05 s")


async def test_a_timeout_error_raised_by_the_tool_itself_is_an_ordinary_failure() -> None:
    def flaky() -> str:
        raise TimeoutError("upstream slow")

    outcome = await call_tool(tool.define(flaky, timeout=30), {})
    assert outcome.kind == "failed" and "TimeoutError: upstream slow" in outcome.notice
