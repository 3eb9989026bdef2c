"""adaptor_nb: run coding-agent CLIs (Claude Code, Codex, Cursor, CodeBuddy) from Python and Jupyter.

One API over every driver: ``Agent`` starts runs, ``Thread`` continues named conversations, ``Stream`` carries
events and the ``Result``. In a notebook, ``%load_ext adaptor_nb`` adds the ``%%agent`` cell magic.
"""

from __future__ import annotations

import os as _os
from typing import TYPE_CHECKING, Any

from ._naming import lazy_exports

__version__ = "0.1.0"

# The public names, written once: public name -> defining module. ``__all__``, the lazy loader and the
# ``__module__ = "adaptor_nb"`` fix-up derive from this table; the block under TYPE_CHECKING repeats it for type
# checkers and IDEs, and tests/core/test_exports.py checks that the two agree exactly.
# Names load on first use, so `import adaptor_nb` (and `%load_ext adaptor_nb`) stays cheap.
_PUBLIC: dict[str, str] = {
    "Agent": "._agent",
    "ApprovalRequest": "._approvals",
    "Choice": "._approvals",
    "Decision": "._approvals",
    "Origin": "._approvals",
    "approve_all": "._approvals",
    "deny_all": "._approvals",
    "ApprovalKind": "._enums",
    "ApprovalMode": "._enums",
    "AuthorKind": "._enums",
    "FailureReason": "._enums",
    "FallbackAction": "._enums",
    "FeatureLevel": "._enums",
    "MessageFailure": "._enums",
    "MessageState": "._enums",
    "NoticeKind": "._enums",
    "Phase": "._enums",
    "ProcessKind": "._enums",
    "QuestionMode": "._enums",
    "Role": "._enums",
    "SandboxLevel": "._enums",
    "SubagentKind": "._enums",
    "Timing": "._enums",
    "AdaptorError": "._errors",
    "AgentClosedError": "._errors",
    "AgentFailed": "._errors",
    "ApprovalDenied": "._errors",
    "ApprovalError": "._errors",
    "ApprovalExpiredError": "._errors",
    "ApprovalKindMismatchError": "._errors",
    "ApprovalResolvedError": "._errors",
    "ApprovalTimeout": "._errors",
    "ApprovalUnavailableError": "._errors",
    "ConfigError": "._errors",
    "HumanDecisionModeUnsupportedError": "._errors",
    "InvalidDriverConfigError": "._errors",
    "InvalidMCPConfigError": "._errors",
    "InvalidOutputSchemaError": "._errors",
    "InvalidPolicyError": "._errors",
    "LimitExceeded": "._errors",
    "MCPTransportUnsupportedError": "._errors",
    "MCPUnsupportedError": "._errors",
    "MessageError": "._errors",
    "MessageUnsupportedError": "._errors",
    "PolicyCapabilityUnsupportedError": "._errors",
    "PolicyViolation": "._errors",
    "ResumeRejectedError": "._errors",
    "RunCancelled": "._errors",
    "RunError": "._errors",
    "RunFinishedError": "._errors",
    "SkillError": "._errors",
    "SkillKeyConflictError": "._errors",
    "SkillKeyMissingError": "._errors",
    "SkillMaterializationFailedError": "._errors",
    "SkillNotFoundError": "._errors",
    "SkillSourceMissingError": "._errors",
    "StructuredOutputUnsupportedError": "._errors",
    "ThreadAlreadyExistsError": "._errors",
    "ThreadBusyError": "._errors",
    "ThreadCheckpointMissingError": "._errors",
    "ThreadError": "._errors",
    "ThreadIncompatibleError": "._errors",
    "ThreadLeaseLostError": "._errors",
    "ThreadNotFoundError": "._errors",
    "Done": "._events",
    "Dropped": "._events",
    "Event": "._events",
    "EventMeta": "._events",
    "EventSourceMeta": "._events",
    "MessageUpdate": "._events",
    "Notice": "._events",
    "CapabilityEnd": "._events",
    "CapabilityStart": "._events",
    "PlanItem": "._events",
    "PlanUpdate": "._events",
    "ProcessInfo": "._events",
    "RunFinished": "._events",
    "RunStarted": "._events",
    "SubagentUpdate": "._events",
    "TextDelta": "._events",
    "Thinking": "._events",
    "ToolCall": "._events",
    "ToolResult": "._events",
    "TurnEnd": "._events",
    "APPROVALS_AUTO_APPROVE": "._policy",
    "APPROVALS_AUTO_DENY": "._policy",
    "ApprovalPolicy": "._policy",
    "Author": "._policy",
    "Identity": "._policy",
    "MessageContext": "._policy",
    "MessagePolicy": "._policy",
    "POLICY_READ_ONLY": "._policy",
    "POLICY_UNRESTRICTED": "._policy",
    "POLICY_WORKSPACE_WRITE": "._policy",
    "Policy": "._policy",
    "MessageOutcome": "._result",
    "RawStreams": "._result",
    "Result": "._result",
    "ServiceReport": "._result",
    "SubagentResult": "._result",
    "TerminalPayload": "._result",
    "TranscriptItem": "._result",
    "TranscriptMessage": "._result",
    "Usage": "._result",
    "compose_results": "._result",
    "Stream": "._stream",
    "Runner": "._sync",
    "run_as": "._sync",
    "run_sync": "._sync",
    "Standby": "._thread",
    "Thread": "._thread",
    "Checkpoint": ".driver",
    "Descriptor": ".driver",
    "Driver": ".driver",
    "AgentCloseError": "._errors",
    "AgentOptions": "._core._options",
    "RunOptions": "._core._options",
    "SendOptions": "._core._options",
    "message_attributes": "._core._options",
    "AgentOption": "._core._options",
    "AgentSettings": "._core._options",
    "CallOption": "._core._options",
    "RunSettings": "._core._options",
    "identity_from_context": "._host_identity",
    "EnvironmentReport": ".driver",
    "EnvironmentStatus": ".driver",
    "AgentProfile": ".driver",
    "Availability": ".driver",
    "ConfigSchema": ".driver",
    "ProfileKind": ".driver",
    "ProfileSnapshot": ".driver",
    "QuotaReport": ".driver",
    "ResourceSnapshot": ".driver",
    "SkillInfo": ".driver",
    "SkillSnapshot": ".driver",
    "EnvironmentCheck": ".driver",
    "ModelInfo": ".driver",
    "Inspector": "._inspect",
    "map_rows": ".batch._map",
    "map_rows_sync": ".batch._map",
    "DriverManagedWorkspace": ".workspace._specs",
    "GitWorktreeWorkspace": ".workspace._specs",
    "GitWorktrees": ".workspace._git",
    "SharedWorkspace": ".workspace._specs",
    "WorkspaceError": ".workspace._specs",
    "WorkspaceLease": ".workspace._specs",
    "WorkspaceManager": ".workspace._specs",
    "WorkspaceReleaseMode": ".workspace._specs",
    "WorkspaceRequest": ".workspace._specs",
    "LocalServices": ".services._local",
    "ServiceManager": ".services._specs",
    "ServiceRef": ".services._specs",
    "ServiceRequest": ".services._specs",
    "ServiceSpec": ".services._specs",
}

# Names whose home is now another public module: they still resolve here, with a DeprecationWarning naming the new
# home, until the next minor release.
_MOVED: dict[str, str] = {
    "RunAttachment": "adaptor_nb.services",
    "RunEventSource": "adaptor_nb.services",
    "RunServiceProvider": "adaptor_nb.services",
    "with_meta": "adaptor_nb.driver",
}

if TYPE_CHECKING:
    from . import mcp as mcp
    from . import profile as profile
    from . import skill as skill
    from . import tool as tool
    from ._agent import Agent as Agent
    from ._approvals import ApprovalRequest as ApprovalRequest
    from ._approvals import Choice as Choice
    from ._approvals import Decision as Decision
    from ._approvals import Origin as Origin
    from ._approvals import approve_all as approve_all
    from ._approvals import deny_all as deny_all
    from ._core._options import AgentOption as AgentOption
    from ._core._options import AgentOptions as AgentOptions
    from ._core._options import AgentSettings as AgentSettings
    from ._core._options import CallOption as CallOption
    from ._core._options import RunOptions as RunOptions
    from ._core._options import RunSettings as RunSettings
    from ._core._options import SendOptions as SendOptions
    from ._core._options import message_attributes as message_attributes
    from ._enums import ApprovalKind as ApprovalKind
    from ._enums import ApprovalMode as ApprovalMode
    from ._enums import AuthorKind as AuthorKind
    from ._enums import FailureReason as FailureReason
    from ._enums import FallbackAction as FallbackAction
    from ._enums import FeatureLevel as FeatureLevel
    from ._enums import MessageFailure as MessageFailure
    from ._enums import MessageState as MessageState
    from ._enums import NoticeKind as NoticeKind
    from ._enums import Phase as Phase
    from ._enums import ProcessKind as ProcessKind
    from ._enums import QuestionMode as QuestionMode
    from ._enums import Role as Role
    from ._enums import SandboxLevel as SandboxLevel
    from ._enums import SubagentKind as SubagentKind
    from ._enums import Timing as Timing
    from ._errors import AdaptorError as AdaptorError
    from ._errors import AgentClosedError as AgentClosedError
    from ._errors import AgentCloseError as AgentCloseError
    from ._errors import AgentFailed as AgentFailed
    from ._errors import ApprovalDenied as ApprovalDenied
    from ._errors import ApprovalError as ApprovalError
    from ._errors import ApprovalExpiredError as ApprovalExpiredError
    from ._errors import ApprovalKindMismatchError as ApprovalKindMismatchError
    from ._errors import ApprovalResolvedError as ApprovalResolvedError
    from ._errors import ApprovalTimeout as ApprovalTimeout
    from ._errors import ApprovalUnavailableError as ApprovalUnavailableError
    from ._errors import ConfigError as ConfigError
    from ._errors import HumanDecisionModeUnsupportedError as HumanDecisionModeUnsupportedError
    from ._errors import InvalidDriverConfigError as InvalidDriverConfigError
    from ._errors import InvalidMCPConfigError as InvalidMCPConfigError
    from ._errors import InvalidOutputSchemaError as InvalidOutputSchemaError
    from ._errors import InvalidPolicyError as InvalidPolicyError
    from ._errors import LimitExceeded as LimitExceeded
    from ._errors import MCPTransportUnsupportedError as MCPTransportUnsupportedError
    from ._errors import MCPUnsupportedError as MCPUnsupportedError
    from ._errors import MessageError as MessageError
    from ._errors import MessageUnsupportedError as MessageUnsupportedError
    from ._errors import PolicyCapabilityUnsupportedError as PolicyCapabilityUnsupportedError
    from ._errors import PolicyViolation as PolicyViolation
    from ._errors import ResumeRejectedError as ResumeRejectedError
    from ._errors import RunCancelled as RunCancelled
    from ._errors import RunError as RunError
    from ._errors import RunFinishedError as RunFinishedError
    from ._errors import SkillError as SkillError
    from ._errors import SkillKeyConflictError as SkillKeyConflictError
    from ._errors import SkillKeyMissingError as SkillKeyMissingError
    from ._errors import SkillMaterializationFailedError as SkillMaterializationFailedError
    from ._errors import SkillNotFoundError as SkillNotFoundError
    from ._errors import SkillSourceMissingError as SkillSourceMissingError
    from ._errors import StructuredOutputUnsupportedError as StructuredOutputUnsupportedError
    from ._errors import ThreadAlreadyExistsError as ThreadAlreadyExistsError
    from ._errors import ThreadBusyError as ThreadBusyError
    from ._errors import ThreadCheckpointMissingError as ThreadCheckpointMissingError
    from ._errors import ThreadError as ThreadError
    from ._errors import ThreadIncompatibleError as ThreadIncompatibleError
    from ._errors import ThreadLeaseLostError as ThreadLeaseLostError
    from ._errors import ThreadNotFoundError as ThreadNotFoundError
    from ._events import CapabilityEnd as CapabilityEnd
    from ._events import CapabilityStart as CapabilityStart
    from ._events import Done as Done
    from ._events import Dropped as Dropped
    from ._events import Event as Event
    from ._events import EventMeta as EventMeta
    from ._events import EventSourceMeta as EventSourceMeta
    from ._events import MessageUpdate as MessageUpdate
    from ._events import Notice as Notice
    from ._events import PlanItem as PlanItem
    from ._events import PlanUpdate as PlanUpdate
    from ._events import ProcessInfo as ProcessInfo
    from ._events import RunFinished as RunFinished
    from ._events import RunStarted as RunStarted
    from ._events import SubagentUpdate as SubagentUpdate
    from ._events import TextDelta as TextDelta
    from ._events import Thinking as Thinking
    from ._events import ToolCall as ToolCall
    from ._events import ToolResult as ToolResult
    from ._events import TurnEnd as TurnEnd
    from ._host_identity import identity_from_context as identity_from_context
    from ._inspect import Inspector as Inspector
    from ._policy import APPROVALS_AUTO_APPROVE as APPROVALS_AUTO_APPROVE
    from ._policy import APPROVALS_AUTO_DENY as APPROVALS_AUTO_DENY
    from ._policy import POLICY_READ_ONLY as POLICY_READ_ONLY
    from ._policy import POLICY_UNRESTRICTED as POLICY_UNRESTRICTED
    from ._policy import POLICY_WORKSPACE_WRITE as POLICY_WORKSPACE_WRITE
    from ._policy import ApprovalPolicy as ApprovalPolicy
    from ._policy import Author as Author
    from ._policy import Identity as Identity
    from ._policy import MessageContext as MessageContext
    from ._policy import MessagePolicy as MessagePolicy
    from ._policy import Policy as Policy
    from ._result import MessageOutcome as MessageOutcome
    from ._result import RawStreams as RawStreams
    from ._result import Result as Result
    from ._result import ServiceReport as ServiceReport
    from ._result import SubagentResult as SubagentResult
    from ._result import TerminalPayload as TerminalPayload
    from ._result import TranscriptItem as TranscriptItem
    from ._result import TranscriptMessage as TranscriptMessage
    from ._result import Usage as Usage
    from ._result import compose_results as compose_results
    from ._stream import Stream as Stream
    from ._sync import Runner as Runner
    from ._sync import run_as as run_as
    from ._sync import run_sync as run_sync
    from ._thread import Standby as Standby
    from ._thread import Thread as Thread
    from .batch._map import map_rows as map_rows
    from .batch._map import map_rows_sync as map_rows_sync
    from .driver import AgentProfile as AgentProfile
    from .driver import Availability as Availability
    from .driver import Checkpoint as Checkpoint
    from .driver import ConfigSchema as ConfigSchema
    from .driver import Descriptor as Descriptor
    from .driver import Driver as Driver
    from .driver import EnvironmentCheck as EnvironmentCheck
    from .driver import EnvironmentReport as EnvironmentReport
    from .driver import EnvironmentStatus as EnvironmentStatus
    from .driver import ModelInfo as ModelInfo
    from .driver import ProfileKind as ProfileKind
    from .driver import ProfileSnapshot as ProfileSnapshot
    from .driver import QuotaReport as QuotaReport
    from .driver import ResourceSnapshot as ResourceSnapshot
    from .driver import SkillInfo as SkillInfo
    from .driver import SkillSnapshot as SkillSnapshot
    from .services._local import LocalServices as LocalServices
    from .services._specs import ServiceManager as ServiceManager
    from .services._specs import ServiceRef as ServiceRef
    from .services._specs import ServiceRequest as ServiceRequest
    from .services._specs import ServiceSpec as ServiceSpec
    from .workspace._git import GitWorktrees as GitWorktrees
    from .workspace._specs import DriverManagedWorkspace as DriverManagedWorkspace
    from .workspace._specs import GitWorktreeWorkspace as GitWorktreeWorkspace
    from .workspace._specs import SharedWorkspace as SharedWorkspace
    from .workspace._specs import WorkspaceError as WorkspaceError
    from .workspace._specs import WorkspaceLease as WorkspaceLease
    from .workspace._specs import WorkspaceManager as WorkspaceManager
    from .workspace._specs import WorkspaceReleaseMode as WorkspaceReleaseMode
    from .workspace._specs import WorkspaceRequest as WorkspaceRequest

__getattr__, __dir__, __all__ = lazy_exports(
    __name__,
    globals(),
    _PUBLIC,
    defined=("load_ipython_extension", "unload_ipython_extension"),
    submodules=(
        "mcp",
        "batch",
        "skill",
        "profile",
        "tool",
    ),  # vocabulary submodules: ``adaptor_nb.mcp`` and ``from adaptor_nb import mcp``
    moved=_MOVED,
    public_module=__name__,
)

if _os.environ.get("ADAPTOR_NB_CASSETTE", "").strip():
    # a cassette named in the environment registers its tap with the driver door before any driver asks for one
    from . import cassette as _cassette  # noqa: F401


def load_ipython_extension(ipython: Any) -> None:
    """``%load_ext adaptor_nb``: register the ``%%agent`` and ``%agent`` magics."""
    from .notebook import load_ipython_extension as load

    load(ipython)


def unload_ipython_extension(ipython: Any) -> None:
    """``%unload_ext adaptor_nb``."""
    from .notebook import unload_ipython_extension as unload

    unload(ipython)
