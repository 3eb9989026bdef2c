"""adaptor_nb: run coding-agent CLIs (Claude Code, Codex, Cursor, CodeBuddy) from Python and Jupyter.

One API over every driver: ``Agent`` starts runs, ``Thread`` continues named conversations, ``Stream`` carries
events and the ``Result``. In a notebook, ``%load_ext adaptor_nb`` adds the ``%%agent`` cell magic.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from . import mcp as mcp
    from ._agent import Agent
    from ._approvals import ApprovalRequest, Choice, Decision, Origin, approve_all, deny_all
    from ._enums import (
        ApprovalKind,
        ApprovalMode,
        AuthorKind,
        FailureReason,
        FallbackAction,
        FeatureLevel,
        MessageFailure,
        MessageState,
        NoticeKind,
        Phase,
        ProcessKind,
        QuestionMode,
        Role,
        SandboxLevel,
        SubagentKind,
        Timing,
    )
    from ._errors import (
        AdaptorError,
        AgentClosedError,
        AgentFailed,
        ApprovalDenied,
        ApprovalError,
        ApprovalExpiredError,
        ApprovalKindMismatchError,
        ApprovalResolvedError,
        ApprovalTimeout,
        ApprovalUnavailableError,
        ConfigError,
        HumanDecisionModeUnsupportedError,
        InvalidDriverConfigError,
        InvalidMCPConfigError,
        InvalidOutputSchemaError,
        InvalidPolicyError,
        LimitExceeded,
        MCPTransportUnsupportedError,
        MCPUnsupportedError,
        MessageError,
        MessageUnsupportedError,
        PolicyCapabilityUnsupportedError,
        PolicyViolation,
        ResumeRejectedError,
        RunCancelled,
        RunError,
        RunFinishedError,
        SkillError,
        SkillKeyConflictError,
        SkillKeyMissingError,
        SkillMaterializationFailedError,
        SkillNotFoundError,
        SkillSourceMissingError,
        StructuredOutputUnsupportedError,
        ThreadAlreadyExistsError,
        ThreadBusyError,
        ThreadCheckpointMissingError,
        ThreadError,
        ThreadIncompatibleError,
        ThreadLeaseLostError,
        ThreadNotFoundError,
    )
    from ._events import (
        Done,
        Dropped,
        Event,
        EventMeta,
        EventSourceMeta,
        MessageUpdate,
        Notice,
        ProcessInfo,
        RunFinished,
        RunStarted,
        SubagentUpdate,
        TextDelta,
        Thinking,
        ToolCall,
        ToolResult,
        TurnEnd,
        with_meta,
    )
    from ._policy import (
        APPROVALS_AUTO_APPROVE,
        APPROVALS_AUTO_DENY,
        POLICY_READ_ONLY,
        POLICY_UNRESTRICTED,
        POLICY_WORKSPACE_WRITE,
        ApprovalPolicy,
        Author,
        Identity,
        MessageContext,
        MessagePolicy,
        Policy,
    )
    from ._result import (
        MessageOutcome,
        RawStreams,
        Result,
        ServiceReport,
        SubagentResult,
        TerminalPayload,
        TranscriptItem,
        TranscriptMessage,
        Usage,
        compose_results,
    )
    from ._stream import Stream
    from ._sync import Runner, run_as, run_sync
    from ._thread import Standby, Thread
    from .driver import Checkpoint, Descriptor, Driver

__version__ = "0.1.0"

# Public names load on first use: `import adaptor_nb` (and `%load_ext adaptor_nb`) stays cheap, and the first
# attribute access loads the whole core at once so every public class reports the module `adaptor_nb`.
_LAZY: dict[str, str] = {
    "APPROVALS_AUTO_APPROVE": "._policy",
    "APPROVALS_AUTO_DENY": "._policy",
    "AdaptorError": "._errors",
    "Agent": "._agent",
    "AgentClosedError": "._errors",
    "AgentFailed": "._errors",
    "ApprovalDenied": "._errors",
    "ApprovalError": "._errors",
    "ApprovalExpiredError": "._errors",
    "ApprovalKind": "._enums",
    "ApprovalKindMismatchError": "._errors",
    "ApprovalMode": "._enums",
    "ApprovalPolicy": "._policy",
    "ApprovalRequest": "._approvals",
    "ApprovalResolvedError": "._errors",
    "ApprovalTimeout": "._errors",
    "ApprovalUnavailableError": "._errors",
    "Author": "._policy",
    "AuthorKind": "._enums",
    "Checkpoint": ".driver",
    "Choice": "._approvals",
    "ConfigError": "._errors",
    "Decision": "._approvals",
    "Descriptor": ".driver",
    "Done": "._events",
    "Driver": ".driver",
    "Dropped": "._events",
    "Event": "._events",
    "EventMeta": "._events",
    "EventSourceMeta": "._events",
    "FailureReason": "._enums",
    "FallbackAction": "._enums",
    "FeatureLevel": "._enums",
    "HumanDecisionModeUnsupportedError": "._errors",
    "Identity": "._policy",
    "InvalidDriverConfigError": "._errors",
    "InvalidMCPConfigError": "._errors",
    "InvalidOutputSchemaError": "._errors",
    "InvalidPolicyError": "._errors",
    "LimitExceeded": "._errors",
    "MCPTransportUnsupportedError": "._errors",
    "MCPUnsupportedError": "._errors",
    "MessageContext": "._policy",
    "MessageError": "._errors",
    "MessageFailure": "._enums",
    "MessageOutcome": "._result",
    "MessagePolicy": "._policy",
    "MessageState": "._enums",
    "MessageUnsupportedError": "._errors",
    "MessageUpdate": "._events",
    "Notice": "._events",
    "NoticeKind": "._enums",
    "Origin": "._approvals",
    "POLICY_READ_ONLY": "._policy",
    "POLICY_UNRESTRICTED": "._policy",
    "POLICY_WORKSPACE_WRITE": "._policy",
    "Phase": "._enums",
    "Policy": "._policy",
    "PolicyCapabilityUnsupportedError": "._errors",
    "PolicyViolation": "._errors",
    "ProcessInfo": "._events",
    "ProcessKind": "._enums",
    "QuestionMode": "._enums",
    "RawStreams": "._result",
    "Result": "._result",
    "ResumeRejectedError": "._errors",
    "Role": "._enums",
    "RunCancelled": "._errors",
    "RunError": "._errors",
    "RunFinished": "._events",
    "RunFinishedError": "._errors",
    "RunStarted": "._events",
    "Runner": "._sync",
    "SandboxLevel": "._enums",
    "ServiceReport": "._result",
    "SkillError": "._errors",
    "SkillKeyConflictError": "._errors",
    "SkillKeyMissingError": "._errors",
    "SkillMaterializationFailedError": "._errors",
    "SkillNotFoundError": "._errors",
    "SkillSourceMissingError": "._errors",
    "Standby": "._thread",
    "Stream": "._stream",
    "StructuredOutputUnsupportedError": "._errors",
    "SubagentKind": "._enums",
    "SubagentResult": "._result",
    "SubagentUpdate": "._events",
    "TerminalPayload": "._result",
    "TextDelta": "._events",
    "Thinking": "._events",
    "Thread": "._thread",
    "ThreadAlreadyExistsError": "._errors",
    "ThreadBusyError": "._errors",
    "ThreadCheckpointMissingError": "._errors",
    "ThreadError": "._errors",
    "ThreadIncompatibleError": "._errors",
    "ThreadLeaseLostError": "._errors",
    "ThreadNotFoundError": "._errors",
    "Timing": "._enums",
    "ToolCall": "._events",
    "ToolResult": "._events",
    "TranscriptItem": "._result",
    "TranscriptMessage": "._result",
    "TurnEnd": "._events",
    "Usage": "._result",
    "approve_all": "._approvals",
    "compose_results": "._result",
    "deny_all": "._approvals",
    "run_as": "._sync",
    "run_sync": "._sync",
    "with_meta": "._events",
}

__all__ = [
    "APPROVALS_AUTO_APPROVE",
    "APPROVALS_AUTO_DENY",
    "POLICY_READ_ONLY",
    "POLICY_UNRESTRICTED",
    "POLICY_WORKSPACE_WRITE",
    "AdaptorError",
    "Agent",
    "AgentClosedError",
    "AgentFailed",
    "ApprovalDenied",
    "ApprovalError",
    "ApprovalExpiredError",
    "ApprovalKind",
    "ApprovalKindMismatchError",
    "ApprovalMode",
    "ApprovalPolicy",
    "ApprovalRequest",
    "ApprovalResolvedError",
    "ApprovalTimeout",
    "ApprovalUnavailableError",
    "Author",
    "AuthorKind",
    "Checkpoint",
    "Choice",
    "ConfigError",
    "Decision",
    "Descriptor",
    "Done",
    "Driver",
    "Dropped",
    "Event",
    "EventMeta",
    "EventSourceMeta",
    "FailureReason",
    "FallbackAction",
    "FeatureLevel",
    "HumanDecisionModeUnsupportedError",
    "Identity",
    "InvalidDriverConfigError",
    "InvalidMCPConfigError",
    "InvalidOutputSchemaError",
    "InvalidPolicyError",
    "LimitExceeded",
    "MCPTransportUnsupportedError",
    "MCPUnsupportedError",
    "MessageContext",
    "MessageError",
    "MessageFailure",
    "MessageOutcome",
    "MessagePolicy",
    "MessageState",
    "MessageUnsupportedError",
    "MessageUpdate",
    "Notice",
    "NoticeKind",
    "Origin",
    "Phase",
    "Policy",
    "PolicyCapabilityUnsupportedError",
    "PolicyViolation",
    "ProcessInfo",
    "ProcessKind",
    "QuestionMode",
    "RawStreams",
    "Result",
    "ResumeRejectedError",
    "Role",
    "RunCancelled",
    "RunError",
    "RunFinished",
    "RunFinishedError",
    "RunStarted",
    "Runner",
    "SandboxLevel",
    "ServiceReport",
    "SkillError",
    "SkillKeyConflictError",
    "SkillKeyMissingError",
    "SkillMaterializationFailedError",
    "SkillNotFoundError",
    "SkillSourceMissingError",
    "Standby",
    "Stream",
    "StructuredOutputUnsupportedError",
    "SubagentKind",
    "SubagentResult",
    "SubagentUpdate",
    "TerminalPayload",
    "TextDelta",
    "Thinking",
    "Thread",
    "ThreadAlreadyExistsError",
    "ThreadBusyError",
    "ThreadCheckpointMissingError",
    "ThreadError",
    "ThreadIncompatibleError",
    "ThreadLeaseLostError",
    "ThreadNotFoundError",
    "Timing",
    "ToolCall",
    "ToolResult",
    "TranscriptItem",
    "TranscriptMessage",
    "TurnEnd",
    "Usage",
    "approve_all",
    "compose_results",
    "deny_all",
    "load_ipython_extension",
    "run_as",
    "run_sync",
    "unload_ipython_extension",
    "with_meta",
]


# Vocabulary submodules, loaded on first use like the names above (``from adaptor_nb import mcp`` works too).
_SUBMODULES = frozenset({"mcp"})


def __getattr__(name: str) -> Any:
    if name in _SUBMODULES:
        return importlib.import_module(f".{name}", __name__)
    if name not in _LAZY:
        raise AttributeError(f"module 'adaptor_nb' has no attribute {name!r}")
    _load_all()
    return globals()[name]


def __dir__() -> list[str]:
    return sorted({*__all__, "__version__"})


def _load_all() -> None:
    g = globals()
    for public, module in _LAZY.items():
        obj = getattr(importlib.import_module(module, __name__), public)
        if isinstance(obj, type) and obj.__module__.startswith("adaptor_nb._"):
            obj.__module__ = "adaptor_nb"
        g[public] = obj


def load_ipython_extension(ipython: Any) -> None:
    """``%load_ext adaptor_nb``: register the ``%%agent`` and ``%agent`` magics."""
    from .notebook import load_ipython_extension as load

    load(ipython)


def unload_ipython_extension(ipython: Any) -> None:
    """``%unload_ext adaptor_nb``."""
    from .notebook import unload_ipython_extension as unload

    unload(ipython)
