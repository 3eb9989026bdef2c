"""The in-process MCP handler behind Claude's SDK channel: what a ``tools/call`` is answered with."""

from __future__ import annotations

from typing import Any

from adaptor_nb import tool
from adaptor_nb.tools._host import ToolHost


def greet(name: str) -> str:
    """Say hello."""
    return f"hello {name}"


def stats(n: int) -> dict[str, int]:
    """Double a number."""
    return {"double": n * 2}


async def _serve(message: dict[str, Any]) -> dict[str, Any] | None:
    host = ToolHost((tool.define(greet), tool.define(stats)))
    await host.ensure(http=False)
    serve = host.hosted("thread").serve
    assert serve is not None
    try:
        return await serve(message)
    finally:
        await host.close()


def _call(mid: int, params: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": mid, "method": "tools/call", "params": params}


async def test_a_call_is_answered_with_its_text_and_no_extra_fields() -> None:
    reply = await _serve(_call(3, {"name": "greet", "arguments": {"name": "ada"}, "_meta": {"progressToken": 3}}))
    assert reply == {
        "jsonrpc": "2.0",
        "id": 3,
        "result": {"content": [{"type": "text", "text": "hello ada"}], "isError": False},
    }


async def test_a_structured_result_is_carried_as_structured_content() -> None:
    reply = await _serve(_call(4, {"name": "stats", "arguments": {"n": 21}}))
    assert reply is not None
    assert reply["result"]["structuredContent"] == {"double": 42}
    assert reply["result"]["isError"] is False


async def test_invalid_arguments_are_an_error_result_without_structured_content() -> None:
    reply = await _serve(_call(5, {"name": "stats", "arguments": {"n": "many"}}))
    assert reply is not None
    assert reply["result"]["isError"] is True
    assert "structuredContent" not in reply["result"]


async def test_malformed_params_get_invalid_params() -> None:
    for params in ({"name": "greet", "arguments": ["ada"]}, {"name": 7}, {}):
        reply = await _serve(_call(6, params))
        assert reply is not None
        assert reply["error"]["code"] == -32602, params
