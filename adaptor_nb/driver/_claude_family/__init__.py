"""The Claude-family kit: one engine for the CLIs that speak Claude Code's stream-json protocol.

Process start and reuse, the chunked stdout decoder, control requests and replies, approvals, message delivery
and steering, the hosted-tool channel, structured output and resume live here once; a ``ClaudeFamilyProfile``
names what one CLI changes, and a driver subclasses ``ClaudeFamilyDriver`` (and, for behaviour of its own,
``ClaudeFamilyRun``).
"""

from ._approvals import PLAN_TOOL, allow_response, approval_spec, decision_response, error_response
from ._command import READ_ONLY_TOOLS, Launch, build_launch, cli_schema, config_fingerprint, instructions_for
from ._config import ClaudeFamilyConfig, config_key
from ._decode import EOF, LINES, STDERR, WAKE, Frame, decode_block
from ._driver import ClaudeFamilyDriver
from ._process import ClaudeFamilyProcess
from ._profile import ClaudeFamilyProfile
from ._run import ClaudeFamilyRun, source_meta, spawn_event
from ._steer import Pending

__all__ = [
    "EOF",
    "LINES",
    "PLAN_TOOL",
    "READ_ONLY_TOOLS",
    "STDERR",
    "WAKE",
    "ClaudeFamilyConfig",
    "ClaudeFamilyDriver",
    "ClaudeFamilyProcess",
    "ClaudeFamilyProfile",
    "ClaudeFamilyRun",
    "Frame",
    "Launch",
    "Pending",
    "allow_response",
    "approval_spec",
    "build_launch",
    "cli_schema",
    "config_fingerprint",
    "config_key",
    "decision_response",
    "decode_block",
    "error_response",
    "instructions_for",
    "source_meta",
    "spawn_event",
]
