"""Checks of what a driver declares and what can be observed without a model task: the descriptor, the
configuration and inspection (clauses descriptor.1, config.1 and observation.1)."""

from __future__ import annotations

from typing import Any

from adaptor_nb.driver import (
    Boundary,
    EnvironmentReport,
    MessageCapabilities,
    ModelInfo,
    StreamCapability,
)

from ._harness import _Harness
from ._verdicts import _expect

MCP_TRANSPORTS = frozenset({"stdio", "http", "sse"})
SAMPLE_SESSION = "conformance-session-0001"


async def check_descriptor_truthful(h: _Harness) -> str | None:
    """The Descriptor names the driver and its provider, and its declarations agree with each other and with the
    driver: fork needs resume, resume needs a session codec whose round trip is exact, the host-tool channel needs
    host tools, MCP transports are known ones."""
    agent = await h.start()
    desc, driver = h.desc, agent.driver
    _expect(bool(desc.name) and bool(desc.provider), f"the Descriptor names no driver or provider: {desc!r}")
    _expect(desc.name == driver.name, f"Descriptor.name {desc.name!r} differs from the driver's name {driver.name!r}")
    _expect(not desc.fork or desc.resume, "the Descriptor declares fork without resume")
    _expect(
        not desc.host_tools_channel or desc.host_tools, "the Descriptor declares host_tools_channel without host_tools"
    )
    _expect(desc.mcp <= MCP_TRANSPORTS, f"unknown MCP transports declared: {sorted(desc.mcp - MCP_TRANSPORTS)}")
    _expect(isinstance(desc.messages, MessageCapabilities), "Descriptor.messages is not MessageCapabilities")
    if not desc.resume:
        return "no resume declared"
    codec: Any = getattr(driver, "session_codec", None)
    _expect(
        callable(getattr(codec, "encode", None)) and callable(getattr(codec, "decode", None)),
        "resume is declared but the driver has no session_codec",
    )
    token = codec.encode(SAMPLE_SESSION)
    _expect(isinstance(token, str), f"session_codec.encode() returned {type(token).__name__}, not a str")
    back = codec.decode(token)
    _expect(back == SAMPLE_SESSION, f"the session codec's round trip is not exact: {SAMPLE_SESSION!r} -> {back!r}")
    return None


async def check_config_stable(h: _Harness) -> str | None:
    """validate_config() accepts the configuration, and config_fingerprint() is a stable string, non-empty when the
    driver declares resume (a Thread needs it to tell compatible configurations apart)."""
    agent = await h.start()
    driver = agent.driver
    driver.validate_config()
    first, second = driver.config_fingerprint(), driver.config_fingerprint()
    _expect(isinstance(first, str), f"config_fingerprint() returned {type(first).__name__}, not a str")
    _expect(first == second, f"config_fingerprint() is not stable: {first!r} then {second!r}")
    if h.desc.resume:
        _expect(bool(first), "resume is declared but config_fingerprint() is empty")
    return None


async def check_observation_inspect(h: _Harness) -> str | None:
    """Inspection answers without a model task: an EnvironmentReport for this driver whose effective message
    capability never exceeds the declared one, a list of models, a stream capability."""
    agent = await h.start()
    inspector = agent.inspect()
    report = await inspector.environment()
    _expect(isinstance(report, EnvironmentReport), f"environment() returned {type(report).__name__}")
    declared = h.desc.messages
    effective = report.messages if report.messages is not None else declared
    extra: set[Boundary] = set(effective.boundaries) - set(declared.boundaries)
    _expect(not extra, f"the environment report offers undeclared message boundaries {sorted(b.value for b in extra)}")
    _expect(not effective.interrupt or declared.interrupt, "the environment report offers an undeclared interrupt")
    models = await inspector.models()
    _expect(all(isinstance(m, ModelInfo) for m in models), "models() returned something else than ModelInfo values")
    _expect(isinstance(inspector.stream_capability(), StreamCapability), "stream_capability() is not one")
    _expect(not agent.active, "inspection started a run")
    return f"status {report.status.value}, {len(models)} model(s)"
