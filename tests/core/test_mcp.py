"""MCP declarations: validation before launch, hidden secrets, and drivers that declare no MCP support."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import pytest

from adaptor_nb import Agent, Done, InvalidMCPConfigError, MCPUnsupportedError, mcp
from adaptor_nb.drivers import reference


@pytest.mark.parametrize(
    ("build", "server", "field"),
    [
        (lambda: mcp.Stdio("", "cmd"), "", "name"),
        (lambda: mcp.Stdio("has space", "cmd"), "has space", "name"),
        (lambda: mcp.Stdio("a__b", "cmd"), "a__b", "name"),
        (lambda: mcp.Stdio("x" * 49, "cmd"), "x" * 49, "name"),
        (lambda: mcp.Stdio("s", ""), "s", "command"),
        (lambda: mcp.Stdio("s", "cmd", args="--flag"), "s", "args"),
        (lambda: mcp.Stdio("s", "cmd", args=[1]), "s", "args"),
        (lambda: mcp.Stdio("s", "cmd", env={"TOKEN": 1}), "s", "env['TOKEN']"),
        (lambda: mcp.Stdio("s", "cmd", env={"BAD-NAME": "v"}), "s", "env"),
        (lambda: mcp.Stdio("s", "cmd", required="yes"), "s", "required"),
        (lambda: mcp.HTTP("h", "ftp://host/x"), "h", "url"),
        (lambda: mcp.HTTP("h", "http:///nohost"), "h", "url"),
        (lambda: mcp.SSE("e", "https://host/sse", headers={"X": "a\r\nb"}), "e", "headers['X']"),
        (lambda: mcp.HTTP("h", "https://host/", bearer_token_env="1BAD"), "h", "bearer_token_env"),
        (lambda: mcp.HTTP("h", "https://h/", headers={"authorization": "x"}, bearer_token_env="T"), "h",
         "bearer_token_env"),
    ],
)  # fmt: skip
def test_a_bad_declaration_names_the_server_and_the_field(build: Any, server: str, field: str) -> None:
    with pytest.raises(InvalidMCPConfigError) as info:
        build()
    assert info.value.option == "mcp"
    assert info.value.details == {"server": server, "field": field}
    assert field in str(info.value) and (not server or repr(server) in str(info.value))


def test_secret_values_stay_out_of_reprs_and_declarations_compare_by_value() -> None:
    stdio = mcp.Stdio("s", "cmd", args=["a"], env={"TOKEN": "hunter2"})
    http = mcp.HTTP("h", "https://host/mcp", headers={"X-Key": "hunter3"})
    assert "hunter" not in repr(stdio) + repr(http)
    assert "TOKEN" in repr(stdio) and "X-Key" in repr(http)
    assert stdio == mcp.Stdio("s", "cmd", args=("a",), env={"TOKEN": "hunter2"})
    assert len({stdio, http, mcp.Stdio("s", "cmd", args=["a"], env={"TOKEN": "hunter2"})}) == 2
    assert (stdio.transport, http.transport, mcp.SSE("e", "http://h/").transport) == ("stdio", "http", "sse")


async def _fails_before_launch(agent: Agent, **options: Any) -> BaseException:
    stream = agent.send("hi", **options)
    events = [e async for e in stream.events()]
    assert [type(e) for e in events] == [Done]  # nothing started
    with pytest.raises(Exception) as info:
        await stream.result()
    return info.value


@pytest.mark.parametrize(
    ("servers", "message"),
    [
        (["not a server"], "takes mcp.Stdio"),
        ([mcp.Stdio("same", "a"), mcp.HTTP("same", "https://host/")], "given twice"),
    ],
)
async def test_a_malformed_set_fails_before_launch(servers: list[Any], message: str) -> None:
    error = await _fails_before_launch(Agent(reference.Driver()), mcp=servers)
    assert isinstance(error, InvalidMCPConfigError) and error.option == "mcp" and message in str(error)


@pytest.mark.parametrize("scope", ["agent", "send"])
async def test_a_driver_without_mcp_refuses_servers_before_launch(scope: str) -> None:
    servers = [mcp.Stdio("docs", "docs-mcp")]
    agent = Agent(reference.Driver(), **({"mcp": servers} if scope == "agent" else {}))
    error = await _fails_before_launch(agent, **({"mcp": servers} if scope == "send" else {}))
    assert isinstance(error, MCPUnsupportedError) and error.option == "mcp"
    assert "'reference'" in str(error) and "docs" in str(error)


async def test_a_driver_without_mcp_accepts_an_empty_or_inherited_set() -> None:
    agent = Agent(reference.Driver(), mcp=[])
    assert (await agent.send("hi").result()).text
    assert (await agent.send("hi", mcp=None).result()).text
    assert (await Agent(reference.Driver(), mcp=[mcp.Stdio("a", "b")]).send("hi", mcp=[]).result()).text
    assert reference.Driver().descriptor().mcp == frozenset()


def test_the_vocabulary_loads_on_first_use() -> None:
    code = "import sys, adaptor_nb; print('adaptor_nb.mcp' in sys.modules);from adaptor_nb import mcp; print(mcp.Stdio)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["False", "<class", "'adaptor_nb.mcp.Stdio'>"]
    assert mcp.__all__ and all(getattr(mcp, name) is not None for name in mcp.__all__)
