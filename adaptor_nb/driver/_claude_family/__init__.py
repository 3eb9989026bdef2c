"""The Claude-family kit: one engine for the CLIs that speak Claude Code's stream-json protocol.

Process start and reuse, the chunked stdout decoder, control requests and replies, approvals, message delivery
and steering, the hosted-tool channel, structured output and resume live here once; a ``ClaudeFamilyProfile``
names what one CLI changes, and a driver subclasses ``ClaudeFamilyDriver`` (and, for behaviour of its own,
``ClaudeFamilyRun``).
"""

from typing import TYPE_CHECKING

from ..._naming import lazy_exports

_TABLE: dict[str, str] = {
    "PLAN_TOOL": "._approvals",
    "allow_response": "._approvals",
    "approval_spec": "._approvals",
    "decision_response": "._approvals",
    "error_response": "._approvals",
    "READ_ONLY_TOOLS": "._command",
    "Launch": "._command",
    "build_launch": "._command",
    "cli_schema": "._command",
    "config_fingerprint": "._command",
    "instructions_for": "._command",
    "ClaudeFamilyConfig": "._config",
    "config_key": "._config",
    "EOF": "._decode",
    "LINES": "._decode",
    "STDERR": "._decode",
    "WAKE": "._decode",
    "Frame": "._decode",
    "decode_block": "._decode",
    "ClaudeFamilyDriver": "._driver",
    "ClaudeFamilyProcess": "._process",
    "ClaudeFamilyProfile": "._profile",
    "ClaudeFamilyRun": "._run",
    "source_meta": "._run",
    "spawn_event": "._run",
    "Pending": "._steer",
}

if TYPE_CHECKING:
    from ._approvals import PLAN_TOOL as PLAN_TOOL
    from ._approvals import allow_response as allow_response
    from ._approvals import approval_spec as approval_spec
    from ._approvals import decision_response as decision_response
    from ._approvals import error_response as error_response
    from ._command import READ_ONLY_TOOLS as READ_ONLY_TOOLS
    from ._command import Launch as Launch
    from ._command import build_launch as build_launch
    from ._command import cli_schema as cli_schema
    from ._command import config_fingerprint as config_fingerprint
    from ._command import instructions_for as instructions_for
    from ._config import ClaudeFamilyConfig as ClaudeFamilyConfig
    from ._config import config_key as config_key
    from ._decode import EOF as EOF
    from ._decode import LINES as LINES
    from ._decode import STDERR as STDERR
    from ._decode import WAKE as WAKE
    from ._decode import Frame as Frame
    from ._decode import decode_block as decode_block
    from ._driver import ClaudeFamilyDriver as ClaudeFamilyDriver
    from ._process import ClaudeFamilyProcess as ClaudeFamilyProcess
    from ._profile import ClaudeFamilyProfile as ClaudeFamilyProfile
    from ._run import ClaudeFamilyRun as ClaudeFamilyRun
    from ._run import source_meta as source_meta
    from ._run import spawn_event as spawn_event
    from ._steer import Pending as Pending

__getattr__, __dir__, __all__ = lazy_exports(__name__, globals(), _TABLE)
