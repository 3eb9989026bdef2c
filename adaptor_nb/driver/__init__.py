"""The Driver SPI: implement ``Driver`` to plug a provider CLI into adaptor_nb.

This package is the one door for driver authors: every name a driver needs (the SPI protocols and records, the
events it emits, the enums, the error classes, the result, usage and transcript types, the process helpers and the
MCP declarations) is importable from ``adaptor_nb.driver``. A driver imports only this package, public
``adaptor_nb`` names and its own modules.
"""

from __future__ import annotations

import os as _os
from typing import TYPE_CHECKING

from .._naming import lazy_exports

# public name -> defining module; __all__, lazy loading and the type checker's view come from here
_PUBLIC: dict[str, str] = {
    "ALL_APPROVAL_MODES": "._spi",
    "ALL_QUESTION_MODES": "._spi",
    "ApprovalCapabilities": "._spi",
    "ApprovalKind": ".._enums",
    "ApprovalMode": ".._enums",
    "ApprovalPort": "._spi",
    "ApprovalSpec": "._spi",
    "Boundary": ".._enums",
    "CLIProcess": "._process",
    "Checkpoint": "._spi",
    "Choice": ".._approvals",
    "ClaimedMessage": "._spi",
    "ClaudeFamilyConfig": "._claude_family",
    "ClaudeFamilyDriver": "._claude_family",
    "ClaudeFamilyProcess": "._claude_family",
    "ClaudeFamilyProfile": "._claude_family",
    "ClaudeFamilyRun": "._claude_family",
    "ClaudeLikeResult": "._claude_stream",
    "ClaudeLikeTranslator": "._claude_stream",
    "CommonConfig": "._config",
    "ConfigError": ".._errors",
    "ContinueMode": ".._enums",
    "Decision": ".._approvals",
    "Descriptor": "._spi",
    "Driver": "._spi",
    "DriverFailure": "._spi",
    "DriverOutcome": "._spi",
    "EnvironmentCheck": "._spi",
    "EnvironmentProbe": "._spi",
    "EnvironmentReport": "._spi",
    "EnvironmentStatus": "._probe",
    "Event": ".._events",
    "EventMeta": ".._events",
    "EventSourceMeta": ".._events",
    "FULL_APPROVALS": "._spi",
    "FailureReason": ".._enums",
    "FeatureLevel": ".._enums",
    "HTTP": "..mcp",
    "HOST_SERVER": "._hosted",
    "HostedTools": "._hosted",
    "mark_host_tool": "._hosted",
    "IdentityCodec": "._spi",
    "ImageInput": ".._images",
    "InvalidDriverConfigError": ".._errors",
    "InvalidMCPConfigError": ".._errors",
    "LineBuffer": "._process",
    "loads_line": "._jsonline",
    "dumps_line": "._jsonline",
    "LineTooLong": "._process",
    "Invocation": "._spi",
    "MCP_CONFIG_TRANSPORTS": "._mcp_config",
    "MCPTransportUnsupportedError": ".._errors",
    "MCPUnsupportedError": ".._errors",
    "MessageCapabilities": "._spi",
    "MessageFailure": ".._enums",
    "MessagePort": "._spi",
    "ModelInfo": "._spi",
    "ModelLister": "._spi",
    "MessageCapabilityResolver": "._optional",
    "ModelDetector": "._optional",
    "configured_model": "._detect",
    "ProcessLifecycleDriver": "._optional",
    "SkillCapability": "._optional",
    "SkillSupport": "._optional",
    "StreamCapability": "._optional",
    "StreamSupport": "._optional",
    "Notice": ".._events",
    "NoticeKind": ".._enums",
    "OutputSchema": "._spi",
    "Phase": ".._enums",
    "PolicyCapabilities": "._spi",
    "CapabilityEnd": ".._events",
    "CapabilityStart": ".._events",
    "PlanItem": ".._events",
    "PlanUpdate": ".._events",
    "ProcessInfo": ".._events",
    "ProcessKind": ".._enums",
    "ProcessSlot": "._spi",
    "QuestionMode": ".._enums",
    "ResumeRejectedError": ".._errors",
    "Role": ".._enums",
    "RunContext": "._spi",
    "SSE": "..mcp",
    "SandboxLevel": ".._enums",
    "Server": "..mcp",
    "SessionCodec": "._spi",
    "Stdio": "..mcp",
    "StructuredOutputCapabilities": "._spi",
    "SubagentKind": ".._enums",
    "SubagentUpdate": ".._events",
    "TextDelta": ".._events",
    "TextDeltas": "._emit",
    "Thinking": ".._events",
    "ToolCall": ".._events",
    "ToolResult": ".._events",
    "TranscriptItem": ".._result",
    "TranscriptMessage": ".._result",
    "Usage": ".._result",
    "capture_output": "._probe",
    "check_bearer_envs": "._mcp",
    "close_quietly": "._reuse",
    "continues_session": "._reuse",
    "mcp": "..:mcp",
    "mcp_config_args": "._mcp_config",
    "parked": "._reuse",
    "parse_claude_like_result": "._claude_stream",
    "probe_cli": "._cli_probe",
    "required_mcp_failures": "._mcp_config",
    "resolve_command": "._config",
    "secret_var": "._mcp",
    "shielded_close": "._reuse",
    "text_delta": ".._events",
    "with_meta": ".._events",
    "validation_errors": ".._schema",
    "AgentProfile": "._profile",
    "Availability": "._profile",
    "ConfigSchema": "._profile",
    "ProfileKind": "._profile",
    "ProfileSnapshot": "._profile",
    "QuotaReport": "._profile",
    "ResourceSnapshot": "._profile",
    "SkillInfo": "._profile",
    "SkillSnapshot": "._profile",
    "ProfileAware": "._profile",
    "ProfileLayout": "._profile",
    "QuotaProbe": "._profile",
    "ConfigSchemaProbe": "._profile",
}

if TYPE_CHECKING:
    from .. import mcp as mcp
    from .._approvals import Choice as Choice
    from .._approvals import Decision as Decision
    from .._enums import ApprovalKind as ApprovalKind
    from .._enums import ApprovalMode as ApprovalMode
    from .._enums import Boundary as Boundary
    from .._enums import ContinueMode as ContinueMode
    from .._enums import FailureReason as FailureReason
    from .._enums import FeatureLevel as FeatureLevel
    from .._enums import MessageFailure as MessageFailure
    from .._enums import NoticeKind as NoticeKind
    from .._enums import Phase as Phase
    from .._enums import ProcessKind as ProcessKind
    from .._enums import QuestionMode as QuestionMode
    from .._enums import Role as Role
    from .._enums import SandboxLevel as SandboxLevel
    from .._enums import SubagentKind as SubagentKind
    from .._errors import ConfigError as ConfigError
    from .._errors import InvalidDriverConfigError as InvalidDriverConfigError
    from .._errors import InvalidMCPConfigError as InvalidMCPConfigError
    from .._errors import MCPTransportUnsupportedError as MCPTransportUnsupportedError
    from .._errors import MCPUnsupportedError as MCPUnsupportedError
    from .._errors import ResumeRejectedError as ResumeRejectedError
    from .._events import CapabilityEnd as CapabilityEnd
    from .._events import CapabilityStart as CapabilityStart
    from .._events import Event as Event
    from .._events import EventMeta as EventMeta
    from .._events import EventSourceMeta as EventSourceMeta
    from .._events import Notice as Notice
    from .._events import PlanItem as PlanItem
    from .._events import PlanUpdate as PlanUpdate
    from .._events import ProcessInfo as ProcessInfo
    from .._events import SubagentUpdate as SubagentUpdate
    from .._events import TextDelta as TextDelta
    from .._events import Thinking as Thinking
    from .._events import ToolCall as ToolCall
    from .._events import ToolResult as ToolResult
    from .._events import text_delta as text_delta
    from .._events import with_meta as with_meta
    from .._images import ImageInput as ImageInput
    from .._result import TranscriptItem as TranscriptItem
    from .._result import TranscriptMessage as TranscriptMessage
    from .._result import Usage as Usage
    from .._schema import validation_errors as validation_errors
    from ..mcp import HTTP as HTTP
    from ..mcp import SSE as SSE
    from ..mcp import Server as Server
    from ..mcp import Stdio as Stdio
    from ._claude_family import ClaudeFamilyConfig as ClaudeFamilyConfig
    from ._claude_family import ClaudeFamilyDriver as ClaudeFamilyDriver
    from ._claude_family import ClaudeFamilyProcess as ClaudeFamilyProcess
    from ._claude_family import ClaudeFamilyProfile as ClaudeFamilyProfile
    from ._claude_family import ClaudeFamilyRun as ClaudeFamilyRun
    from ._claude_stream import ClaudeLikeResult as ClaudeLikeResult
    from ._claude_stream import ClaudeLikeTranslator as ClaudeLikeTranslator
    from ._claude_stream import parse_claude_like_result as parse_claude_like_result
    from ._cli_probe import probe_cli as probe_cli
    from ._config import CommonConfig as CommonConfig
    from ._config import resolve_command as resolve_command
    from ._detect import configured_model as configured_model
    from ._emit import TextDeltas as TextDeltas
    from ._hosted import HOST_SERVER as HOST_SERVER
    from ._hosted import HostedTools as HostedTools
    from ._hosted import mark_host_tool as mark_host_tool
    from ._jsonline import dumps_line as dumps_line
    from ._jsonline import loads_line as loads_line
    from ._mcp import check_bearer_envs as check_bearer_envs
    from ._mcp import secret_var as secret_var
    from ._mcp_config import MCP_CONFIG_TRANSPORTS as MCP_CONFIG_TRANSPORTS
    from ._mcp_config import mcp_config_args as mcp_config_args
    from ._mcp_config import required_mcp_failures as required_mcp_failures
    from ._optional import MessageCapabilityResolver as MessageCapabilityResolver
    from ._optional import ModelDetector as ModelDetector
    from ._optional import ProcessLifecycleDriver as ProcessLifecycleDriver
    from ._optional import SkillCapability as SkillCapability
    from ._optional import SkillSupport as SkillSupport
    from ._optional import StreamCapability as StreamCapability
    from ._optional import StreamSupport as StreamSupport
    from ._probe import EnvironmentStatus as EnvironmentStatus
    from ._probe import capture_output as capture_output
    from ._process import CLIProcess as CLIProcess
    from ._process import LineBuffer as LineBuffer
    from ._process import LineTooLong as LineTooLong
    from ._profile import AgentProfile as AgentProfile
    from ._profile import Availability as Availability
    from ._profile import ConfigSchema as ConfigSchema
    from ._profile import ConfigSchemaProbe as ConfigSchemaProbe
    from ._profile import ProfileAware as ProfileAware
    from ._profile import ProfileKind as ProfileKind
    from ._profile import ProfileLayout as ProfileLayout
    from ._profile import ProfileSnapshot as ProfileSnapshot
    from ._profile import QuotaProbe as QuotaProbe
    from ._profile import QuotaReport as QuotaReport
    from ._profile import ResourceSnapshot as ResourceSnapshot
    from ._profile import SkillInfo as SkillInfo
    from ._profile import SkillSnapshot as SkillSnapshot
    from ._reuse import close_quietly as close_quietly
    from ._reuse import continues_session as continues_session
    from ._reuse import parked as parked
    from ._reuse import shielded_close as shielded_close
    from ._spi import ALL_APPROVAL_MODES as ALL_APPROVAL_MODES
    from ._spi import ALL_QUESTION_MODES as ALL_QUESTION_MODES
    from ._spi import FULL_APPROVALS as FULL_APPROVALS
    from ._spi import ApprovalCapabilities as ApprovalCapabilities
    from ._spi import ApprovalPort as ApprovalPort
    from ._spi import ApprovalSpec as ApprovalSpec
    from ._spi import Checkpoint as Checkpoint
    from ._spi import ClaimedMessage as ClaimedMessage
    from ._spi import Descriptor as Descriptor
    from ._spi import Driver as Driver
    from ._spi import DriverFailure as DriverFailure
    from ._spi import DriverOutcome as DriverOutcome
    from ._spi import EnvironmentCheck as EnvironmentCheck
    from ._spi import EnvironmentProbe as EnvironmentProbe
    from ._spi import EnvironmentReport as EnvironmentReport
    from ._spi import IdentityCodec as IdentityCodec
    from ._spi import Invocation as Invocation
    from ._spi import MessageCapabilities as MessageCapabilities
    from ._spi import MessagePort as MessagePort
    from ._spi import ModelInfo as ModelInfo
    from ._spi import ModelLister as ModelLister
    from ._spi import OutputSchema as OutputSchema
    from ._spi import PolicyCapabilities as PolicyCapabilities
    from ._spi import ProcessSlot as ProcessSlot
    from ._spi import RunContext as RunContext
    from ._spi import SessionCodec as SessionCodec
    from ._spi import StructuredOutputCapabilities as StructuredOutputCapabilities

MCP_LAUNCHER: str = _os.path.join(_os.path.dirname(_os.path.abspath(__file__)), "_mcp_exec.py")
"""Path of the standard-library script that starts a stdio MCP server with secrets renamed (see ``_mcp_exec``)."""

__getattr__, __dir__, __all__ = lazy_exports(__name__, globals(), _PUBLIC, defined=("MCP_LAUNCHER",))
