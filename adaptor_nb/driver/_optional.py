"""The optional driver interfaces of section 15 that the core looks for with ``isinstance``: a driver implements
the ones that apply to its CLI, and the core (or inspection) uses them when present.

``EnvironmentProbe``, ``ModelLister``, ``ProfileAware`` (the profile reporter), ``QuotaProbe`` and
``ConfigSchemaProbe`` live next to what they report; the session codec is the ``session_codec`` attribute.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from ._spi import MessageCapabilities


@runtime_checkable
class ModelDetector(Protocol):
    """A driver that can tell which model its CLI runs when no model is asked for, from the CLI's configuration
    (settings files, environment), without a model request. ``Inspector.models()`` marks it as the default."""

    async def detect_model(self) -> str:
        """The effective default model, or "" when the configuration does not say."""
        ...


@dataclass(frozen=True)
class SkillCapability:
    """How a driver's CLI takes skills: ``native`` when it discovers them in its profile's skills folder (the core
    installs them there), otherwise the core writes them into the run's instructions."""

    native: bool = False


@runtime_checkable
class SkillSupport(Protocol):
    """A driver that says how its CLI takes skills; without it the core installs natively wherever the driver's
    profile layout has a skills folder."""

    def skill_support(self) -> SkillCapability: ...


@dataclass(frozen=True)
class StreamCapability:
    """The streaming fidelity a driver delivers; conservative, and the same for every instance with one config.

    ``native``: the CLI speaks an event protocol (not guessed from free text). ``token_level``: one assistant message
    arrives as several text deltas. ``reasoning``: thinking is streamed. ``tool_call_args``: tool arguments arrive
    as deltas (otherwise whole, with the call's start). ``hitl``: approval requests come from the protocol itself.
    """

    native: bool = False
    token_level: bool = False
    reasoning: bool = False
    tool_call_args: bool = False
    hitl: bool = False


@runtime_checkable
class StreamSupport(Protocol):
    """A driver that declares its streaming fidelity (``Inspector.stream_capability()``), so a host or a bridge can
    degrade gracefully (for example show whole messages when text is not token-level)."""

    def stream_capability(self) -> StreamCapability: ...


@runtime_checkable
class ProcessLifecycleDriver(Protocol):
    """A driver that owns provider processes beyond the Agent's process slots (a pool, a warm spare): ``aclose()``
    reclaims them when the Agent closes, after the slots. Persistent drivers that park every process in the slot
    the core gives them (``Invocation.slot``) have nothing more to reclaim and need not implement it."""

    async def aclose(self) -> None: ...


@runtime_checkable
class MessageCapabilityResolver(Protocol):
    """A driver that narrows its declared message capabilities for one run, before launch (a transport this
    machine cannot offer, a mode of the CLI that reads no input). The core never lets the answer widen the
    declaration: what is not declared stays refused."""

    async def resolve_message_capabilities(self, declared: MessageCapabilities) -> MessageCapabilities: ...


__all__ = [
    "MessageCapabilityResolver",
    "ModelDetector",
    "ProcessLifecycleDriver",
    "SkillCapability",
    "SkillSupport",
    "StreamCapability",
    "StreamSupport",
]
