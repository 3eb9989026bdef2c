"""Host-tool checks (``Agent(driver, tools=[...])``): a call and its result in the next model request, parallel calls,
a validation error, a rejection, a sanitized exception, and cancellation during a call.

They apply to drivers that declare ``Descriptor.host_tools``; the driver's model script
must make ``ModelRun.host_calls`` as calls of the CLI tools ``mcp__pytools__<name>`` and answer ``reply`` only when
its next request carries tool results containing every ``ModelRun.host_expect`` text.

A driver whose CLI checks a host tool's arguments against its input schema before the host sees them declares it
with the attribute ``cli_host_tool_validation``: the text the CLI's own error result contains. The validation part
of ``host_tool_errors`` then makes a call the CLI cannot coerce (an object for a string) and expects that text; it
still requires an error result and that the function is not called.
"""

from __future__ import annotations

import asyncio
from typing import Any

from adaptor_nb import Notice, Phase, RunCancelled, ToolCall, ToolResult, tool

from ._cases import ConformanceCase, ModelRun
from ._harness import _Harness, _make_driver, _same_text, _success
from ._verdicts import _expect, _skip

HOST_TOOL_PREFIX = "mcp__pytools__"
LOOKUP = "conformance_lookup"
WAIT = "conformance_wait"
REJECTION = "conformance rejection: no access"
CLI_VALIDATION = "cli_host_tool_validation"


class _Tools:
    """The check's tools and what they saw."""

    def __init__(self) -> None:
        self.looked_up: list[str] = []
        self.entered = asyncio.Event()
        self.cancelled = asyncio.Event()

    def lookup(self, key: str) -> dict[str, str]:
        """Look a key up (conformance)."""
        self.looked_up.append(key)
        if key == "secret":
            raise tool.reject(REJECTION)
        if key == "boom":
            raise RuntimeError("conformance failure")
        return {"value": key.upper()}

    async def wait(self) -> str:
        """Wait until cancelled (conformance)."""
        self.entered.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            self.cancelled.set()
            raise
        return "never"

    def definitions(self) -> list[Any]:
        return [tool.define(self.lookup, name=LOOKUP), tool.define(self.wait, name=WAIT)]


def _applies(h: _Harness) -> None:
    if not h.desc.host_tools:
        _skip("the driver does not declare host_tools, so it refuses tools=")


async def _cli_validation(h: _Harness) -> str:
    """The text of the CLI's own argument-validation error the driver declares, or "" (the host validates)."""
    driver = await _make_driver(h.settings, ConformanceCase(check=h.name), h.stack)
    marker = getattr(driver, CLI_VALIDATION, "")
    return marker if isinstance(marker, str) else ""


def _host_results(events: list[Any]) -> list[ToolResult]:
    results = [e for e in events if isinstance(e, ToolResult)]
    for r in results:
        _expect(not r.name.startswith("mcp__"), f"a host-tool result is named {r.name!r}, not by the tool's own name")
        _expect(r.details.get("host_tool") is True, f"the result of {r.name!r} lacks details['host_tool']=True")
    return results


async def check_host_tool_calls(h: _Harness) -> str | None:
    """Two calls in one model step run, are reported under the tools' own names, and reach the next request."""
    _applies(h)
    tools = _Tools()
    reply = "Conformance answer after two host-tool calls."
    calls = ((LOOKUP, {"key": "abc"}), (LOOKUP, {"key": "xyz"}))
    agent = await h.start(
        ModelRun(reply=reply, host_calls=calls, host_expect=("ABC", "XYZ")), tools=tools.definitions()
    )
    out = await h.run(agent.send(h.prompt(0)))
    result = _success(out, "a run with two host-tool calls")
    _same_text(result.text, reply, "a run with two host-tool calls (the model did not get both results)")
    starts = [e for e in out.events if isinstance(e, ToolCall) and e.phase is Phase.START]
    _expect(len(starts) == 2, f"{len(starts)} ToolCall START events for two host-tool calls")
    for c in starts:
        _expect(c.name == LOOKUP and c.details.get("host_tool") is True, f"ToolCall {c.name!r} is not marked")
    results = _host_results(out.events)
    _expect(len(results) == 2 and not any(r.is_error for r in results), "two successful ToolResults expected")
    _expect(sorted(tools.looked_up) == ["abc", "xyz"], f"the tool was called with {tools.looked_up}")
    return None


async def check_host_tool_errors(h: _Harness) -> str | None:
    """A validation error, a rejection and an exception reach the model as error results (the exception as the tool's
    name and error type only); the run goes on."""
    _applies(h)
    tools = _Tools()
    reply = "Conformance answer after three failed host-tool calls."
    cli_marker = await _cli_validation(h)
    ill_typed: dict[str, Any] = {"key": {"not": "a string"}} if cli_marker else {"key": 5}
    calls = ((LOOKUP, ill_typed), (LOOKUP, {"key": "secret"}), (LOOKUP, {"key": "boom"}))
    expect = (cli_marker or "invalid arguments", REJECTION, f"tool {LOOKUP!r} failed: RuntimeError")
    agent = await h.start(ModelRun(reply=reply, host_calls=calls, host_expect=expect), tools=tools.definitions())
    out = await h.run(agent.send(h.prompt(0)))
    result = _success(out, "a run whose host-tool calls fail")
    _same_text(result.text, reply, "a run whose host-tool calls fail (the model did not get the three errors)")
    results = _host_results(out.events)
    _expect(len(results) == 3 and all(r.is_error for r in results), "three error ToolResults expected")
    _expect(sorted(tools.looked_up) == ["boom", "secret"], "the ill-typed call must not reach the function")
    notices = [e for e in out.events if isinstance(e, Notice) and e.kind == "tool.error"]
    _expect(len(notices) == 1 and "Traceback" not in notices[0].text, "one sanitized tool.error Notice expected")
    _expect("conformance failure" in notices[0].text, "the host's notice names the exception's message")
    leaked = [r for r in results if "conformance failure" in str(r.result)]
    _expect(not leaked, "an exception's message must not reach the model (only the tool name and error type)")
    return "the CLI validated the arguments (declared)" if cli_marker else None


async def check_host_tool_cancel(h: _Harness) -> str | None:
    """Cancelling a run while a host tool runs cancels the call and ends the run with RunCancelled."""
    _applies(h)
    tools = _Tools()
    agent = await h.start(ModelRun(reply="Never reached.", host_calls=((WAIT, {}),)), tools=tools.definitions())
    stream = agent.send(h.prompt(0))
    watch = h.watch(stream)
    entered = asyncio.ensure_future(tools.entered.wait())
    try:
        await asyncio.wait({entered, watch.task}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        entered.cancel()
    _expect(tools.entered.is_set(), "the run ended before the model called the host tool")
    stream.cancel()
    out = await watch.finish()
    _expect(isinstance(out.error, RunCancelled), f"a cancelled run must raise RunCancelled; got {out.describe_error()}")
    try:
        await asyncio.wait_for(tools.cancelled.wait(), h.settings.timeout)
    except TimeoutError:
        _expect(False, "the host tool's call was not cancelled with the run")
    return None
