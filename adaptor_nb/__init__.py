"""adaptor_nb: run coding-agent CLIs (Claude Code, Codex, Cursor, CodeBuddy) from Python and Jupyter.

One API over every driver: ``Agent`` starts runs, ``Thread`` continues named conversations, ``Stream`` carries
events and the ``Result``. In a notebook, ``%load_ext adaptor_nb`` adds the ``%%agent`` cell magic.
"""

from __future__ import annotations

from typing import Any

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

for _name in __all__:
    _obj = globals().get(_name)
    if isinstance(_obj, type) and _obj.__module__.startswith("adaptor_nb._"):
        _obj.__module__ = "adaptor_nb"
del _name, _obj


def load_ipython_extension(ipython: Any) -> None:
    """``%load_ext adaptor_nb``: register the ``%%agent`` and ``%agent`` magics."""
    from .notebook import load_ipython_extension as load

    load(ipython)


def unload_ipython_extension(ipython: Any) -> None:
    """``%unload_ext adaptor_nb``."""
    from .notebook import unload_ipython_extension as unload

    unload(ipython)
