"""Option scopes and merge rules: Agent defaults, per-call overrides, construction-only and call-only options."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import timedelta
from os import PathLike
from typing import TYPE_CHECKING, Any, Protocol, TypedDict, runtime_checkable

from .._enums import Timing
from .._errors import ConfigError, SkillKeyConflictError, SkillKeyMissingError
from .._policy import Author, Identity, MessageContext, Policy
from ._setters import AgentSetters, RunSetters, check_blocking_events, check_event_buffer

if TYPE_CHECKING:
    from .._schema import ResolvedSchema
    from ..mcp import Server
    from ..threadstore._protocol import Store


class RunOptions(TypedDict, total=False):
    """Execution options accepted by ``Agent(...)`` and by every ``send`` (nearer wins)."""

    model: str | None
    timeout: float | timedelta | None
    execution_timeout: float | timedelta | None
    spawn: bool
    instructions: str | None
    append_instructions: str | None
    workspace: str | None
    workspace_spec: Any
    metadata: Mapping[str, str] | None
    identity: Identity | None
    policy: Policy | None
    on_approval: Callable[..., Any] | None
    skills: Sequence[Any] | None
    mcp: Sequence[Server] | None
    profile_resources: Any
    services: Sequence[Any] | None
    run_services: Sequence[Any] | None


class ConstructionOptions(TypedDict, total=False):
    """Options only ``Agent(...)`` accepts."""

    thread_store: Store | None
    tools: Sequence[Any] | None
    event_buffer: int
    blocking_events: bool
    profile: Any
    skill_provider: Any
    skill_materializer: Any
    workspace_manager: Any
    service_manager: Any


class AgentOptions(RunOptions, ConstructionOptions, total=False):
    """Every option of ``Agent(driver, **options)``."""


class SchemaExtras(TypedDict, total=False):
    """How a structured-output schema is named and checked."""

    schema_name: str | None
    schema_description: str | None
    schema_return_invalid: bool
    schema_inline_references: bool
    schema_allow_additional_properties: bool
    schema_require_explicit_tags: bool


class SchemaOptions(SchemaExtras, total=False):
    """Structured output: ``schema=`` (a pydantic model, a type or a JSON-Schema dict) and its extras."""

    schema: Any


class MessageOptions(TypedDict, total=False):
    """The starting prompt as a message: its id, author and timing."""

    id: str | None
    author: Author | None
    when: Timing


class PromptOptions(TypedDict, total=False):
    """What the starting prompt carries besides its text: ``images`` (PNG/JPEG bytes or paths)."""

    images: Sequence[bytes | str | PathLike[str]] | None


class SendOptions(RunOptions, SchemaOptions, MessageOptions, PromptOptions, total=False):
    """Every option of ``send(prompt, **options)`` on an Agent, a Thread or a Standby."""


class RunAsOptions(RunOptions, SchemaExtras, MessageOptions, PromptOptions, total=False):
    """The options of ``run_as`` (its ``tp`` argument is the schema)."""


SHARED_OPTIONS = frozenset(RunOptions.__annotations__)
CONSTRUCTION_ONLY = frozenset(ConstructionOptions.__annotations__)
SCHEMA_OPTIONS = frozenset(SchemaOptions.__annotations__)
MESSAGE_OPTIONS = frozenset(MessageOptions.__annotations__)
PROMPT_OPTIONS = frozenset(PromptOptions.__annotations__)
CALL_ONLY = SCHEMA_OPTIONS | MESSAGE_OPTIONS | PROMPT_OPTIONS

_UNSET: Any = object()


@dataclass(frozen=True)
class RunSettings(RunSetters):
    """The resolved execution settings of a run: the Agent's defaults merged with the call's options."""

    model: str = ""
    timeout: float | None = None
    execution_timeout: float | None = None
    """Seconds the run may spend working; time waiting for a person's approval or answer does not count."""
    spawn: bool = False
    instructions: str = ""
    append_instructions: str = ""
    """Text added after ``instructions`` (never replacing them); every scope's text is kept, outermost first."""
    workspace: str = ""
    workspace_spec: Any = None
    metadata: Mapping[str, str] = field(default_factory=dict)
    identity: Identity = field(default_factory=Identity)
    policy: Policy = field(default_factory=Policy)
    on_approval: Callable[..., Any] | None = None
    skills: tuple[Any, ...] = ()
    mcp: tuple[Any, ...] | None = None
    profile_resources: Any = None
    services: tuple[Any, ...] | None = None
    run_services: tuple[Any, ...] = ()
    output_schema: ResolvedSchema | None = None
    output_schema_error: BaseException | None = None

    def has_execution_options(self) -> bool:
        return self != RunSettings()

    def cap_message_turns(self, remaining: int) -> RunSettings:
        """These settings with the message turn budget lowered to ``remaining`` (never raised); every other
        policy field is kept. For composite runners; a nonpositive budget is a ValueError."""
        if isinstance(remaining, bool) or not isinstance(remaining, int) or remaining <= 0:
            raise ValueError(f"cap_message_turns needs a positive turn budget, got {remaining!r}")
        messages = self.policy.messages
        if messages.effective_max_turns <= remaining:
            return self
        return replace(self, policy=replace(self.policy, messages=replace(messages, max_turns=remaining)))

    def _merged(self, name: str, value: Any) -> RunSettings:
        return merge_run(self, {name: value})


@dataclass(frozen=True)
class AgentSettings(AgentSetters):
    """The construction-only settings of an Agent plus its default RunSettings (``run``)."""

    run: RunSettings = field(default_factory=RunSettings)
    thread_store: Any = None
    tools: tuple[Any, ...] = ()
    event_buffer: int = 1024
    blocking_events: bool = False
    profile: Any = None
    skill_provider: Any = None
    skill_materializer: Any = None
    workspace_manager: Any = None
    service_manager: Any = None


@runtime_checkable
class CallOption(Protocol):
    """An option object for a run: passed positionally to ``send(...)`` (or to ``Agent(...)`` as a default)."""

    def apply_run(self, settings: RunSettings, /) -> RunSettings: ...


@runtime_checkable
class AgentOption(Protocol):
    """A construction-only option object: passed positionally to ``Agent(...)``."""

    def apply_new(self, settings: AgentSettings, /) -> AgentSettings: ...


def _seconds(name: str, value: Any) -> float | None:
    if value is None:
        return None
    if isinstance(value, timedelta):
        value = value.total_seconds()
    if isinstance(value, bool) or not isinstance(value, int | float) or math.isnan(value):
        raise ConfigError(f"{name} must be seconds (a number or timedelta), got {value!r}", option=name)
    if value < 0:
        raise ConfigError(f"{name} must not be negative, got {value!r}", option=name)
    return float(value) if value > 0 else None


def _skill_key(skill: Any) -> str:
    key = skill if isinstance(skill, str) else getattr(skill, "key", None)
    if not isinstance(key, str) or not key:
        raise SkillKeyMissingError(f"skill {skill!r} has no key", option="skills")
    return key


def _append_skills(existing: tuple[Any, ...], new: Sequence[Any]) -> tuple[Any, ...]:
    """Append skills; a key given again with the identical reference is kept once, a conflicting one fails."""
    by_key = {_skill_key(s): s for s in existing}
    out = list(existing)
    for s in new:
        k = _skill_key(s)
        if k in by_key:
            if _same_skill(by_key[k], s):
                continue
            raise SkillKeyConflictError(
                f"skill key {k!r} is given twice with different sources ({by_key[k]!r} and {s!r})", option="skills"
            )
        by_key[k] = s
        out.append(s)
    return tuple(out)


def _same_skill(a: Any, b: Any) -> bool:
    try:
        return type(a) is type(b) and bool(a == b)
    except Exception:  # a reference whose comparison fails is not known to be the same
        return False


def check_names(options: Mapping[str, Any], *, allowed: frozenset[str], where: str) -> None:
    """Raise TypeError for an option that does not belong in this scope."""
    for name in options:
        if name in allowed:
            continue
        if name in CONSTRUCTION_ONLY:
            raise TypeError(f"{where}() got construction-only option {name!r}: pass it to Agent(...)")
        if name in CALL_ONLY:
            raise TypeError(f"{where}() got call-only option {name!r}: pass it to send(...)")
        import difflib

        near = difflib.get_close_matches(name, sorted(allowed), n=1)
        hint = f"; did you mean {near[0]!r}?" if near else ""
        raise TypeError(f"{where}() got an unexpected option {name!r}{hint}")


def merge_run(base: RunSettings, options: Mapping[str, Any]) -> RunSettings:
    """Apply shared options to ``base`` with the seed's merge rules (nearer wins)."""
    changes: dict[str, Any] = {}
    for name, value in options.items():
        if name == "model":
            if value is None:
                continue
            if not isinstance(value, str):
                raise ConfigError(f"model must be a string, got {value!r}", option="model")
            if value:
                changes["model"] = value
        elif name in ("timeout", "execution_timeout"):
            changes[name] = _seconds(name, value)
        elif name == "spawn":
            if not isinstance(value, bool):
                raise ConfigError(f"spawn must be a bool, got {value!r}", option="spawn")
            changes["spawn"] = value
        elif name in ("instructions", "workspace"):
            if value is None:
                continue
            if not isinstance(value, str):
                raise ConfigError(f"{name} must be a string, got {value!r}", option=name)
            changes[name] = value
        elif name == "append_instructions":
            if value is None or value == "":
                continue
            if not isinstance(value, str):
                raise ConfigError(f"append_instructions must be a string, got {value!r}", option=name)
            earlier = changes.get(name, base.append_instructions)
            changes[name] = f"{earlier}\n\n{value}" if earlier else value
        elif name == "metadata":
            if value is None:
                continue
            if not isinstance(value, Mapping) or not all(
                isinstance(k, str) and isinstance(v, str) for k, v in value.items()
            ):
                raise ConfigError("metadata must map strings to strings", option="metadata")
            changes["metadata"] = {**base.metadata, **value}
        elif name == "identity":
            if value is None:
                continue
            if not isinstance(value, Identity):
                raise ConfigError(f"identity must be an Identity, got {value!r}", option="identity")
            changes["identity"] = value
        elif name == "policy":
            if value is None:
                continue
            if not isinstance(value, Policy):
                raise ConfigError(f"policy must be a Policy, got {type(value).__name__}", option="policy")
            changes["policy"] = value
        elif name == "on_approval":
            if value is not None and not callable(value):
                raise ConfigError("on_approval must be callable or None", option="on_approval")
            changes["on_approval"] = value
        elif name == "skills":
            if value is None:
                continue
            changes["skills"] = _append_skills(changes.get("skills", base.skills), list(value))
        elif name == "mcp":
            if value is None:
                continue
            changes["mcp"] = tuple(value)
        elif name == "services":
            if value is None:
                continue
            changes["services"] = tuple(value)
        elif name == "run_services":
            if value is None:
                continue
            existing = list(changes.get("run_services", base.run_services))
            for provider in value:
                if not any(p is provider for p in existing):
                    existing.append(provider)
            changes["run_services"] = tuple(existing)
        elif name == "workspace_spec":
            changes["workspace_spec"] = value
        elif name == "profile_resources":
            if value is None:
                continue
            from ..profile._resources import merge_resources  # the profile vocabulary loads when used

            changes["profile_resources"] = merge_resources(
                changes.get("profile_resources", base.profile_resources), value
            )
    return replace(base, **changes) if changes else base


def agent_settings(options: Mapping[str, Any], extensions: Sequence[Any] = ()) -> AgentSettings:
    """Build AgentSettings from ``Agent(*extensions, **options)``: keywords first, then each option object."""
    check_names(options, allowed=SHARED_OPTIONS | CONSTRUCTION_ONLY, where="Agent")
    shared = {k: v for k, v in options.items() if k in SHARED_OPTIONS}
    run = merge_run(RunSettings(), shared)
    settings = AgentSettings(
        run=run,
        thread_store=options.get("thread_store"),
        tools=tuple(options.get("tools") or ()),
        event_buffer=check_event_buffer(options.get("event_buffer", 1024)),
        blocking_events=check_blocking_events(options.get("blocking_events", False)),
        profile=options.get("profile"),
        skill_provider=options.get("skill_provider"),
        skill_materializer=options.get("skill_materializer"),
        workspace_manager=options.get("workspace_manager"),
        service_manager=options.get("service_manager"),
    )
    for option in extensions:
        if isinstance(option, AgentOption):
            settings = _checked(option.apply_new(settings), AgentSettings, option)
        elif isinstance(option, CallOption):
            settings = replace(settings, run=_checked(option.apply_run(settings.run), RunSettings, option))
        else:
            raise TypeError(f"Agent() got {option!r}, which is not an option object (no apply_new or apply_run)")
    return settings


def apply_call_options(settings: RunSettings, extensions: Sequence[Any], where: str) -> RunSettings:
    """Apply ``send(prompt, *extensions)``'s option objects, in order, after the keyword options."""
    for option in extensions:
        if isinstance(option, AgentOption) and not isinstance(option, CallOption):
            raise TypeError(f"{where}() got construction-only option object {option!r}: pass it to Agent(...)")
        if not isinstance(option, CallOption):
            raise TypeError(f"{where}() got {option!r}, which is not an option object (no apply_run)")
        settings = _checked(option.apply_run(settings), RunSettings, option)
    return settings


def _checked(value: Any, tp: type[Any], option: Any) -> Any:
    if not isinstance(value, tp):
        raise TypeError(f"option object {option!r} returned {type(value).__name__}, not {tp.__name__}")
    return value


def split_call(options: Mapping[str, Any], where: str = "send") -> tuple[dict[str, Any], dict[str, Any]]:
    """Split ``send(**options)`` into shared options and call-only options (TypeError for construction-only)."""
    check_names(options, allowed=SHARED_OPTIONS | CALL_ONLY, where=where)
    shared = {k: v for k, v in options.items() if k in SHARED_OPTIONS}
    call = {k: v for k, v in options.items() if k in CALL_ONLY}
    return shared, call


def message_attributes(**options: Any) -> MessageContext:
    """The message attributes (id, author, timing) of a set of send options, for composite runners.

    Only message options are read, later values over earlier ones; execution options are ignored without being
    applied. Defaults: a human author, ``Timing.SOON`` and no generated id (``id`` stays empty).
    """
    msg_id = options.get("id") or ""
    author = options.get("author")
    when = options.get("when")
    if not isinstance(msg_id, str):
        raise ConfigError(f"id must be a string, got {msg_id!r}", option="id")
    if author is not None and not isinstance(author, Author):
        raise ConfigError(f"author must be an Author, got {author!r}", option="author")
    if when is not None and not isinstance(when, Timing):
        raise ConfigError(f"when must be a Timing, got {when!r}", option="when")
    return MessageContext(id=msg_id, text="", author=author or Author(), timing=when or Timing.SOON)
