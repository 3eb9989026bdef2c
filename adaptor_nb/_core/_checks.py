"""Checks made before launch: a request's policy against the driver's truthful Descriptor, and resource options
that nothing can honour yet."""

from __future__ import annotations

from typing import Any

from .._enums import ApprovalMode, FeatureLevel, QuestionMode, SandboxLevel
from .._errors import (
    ConfigError,
    HumanDecisionModeUnsupportedError,
    InvalidDriverConfigError,
    PolicyCapabilityUnsupportedError,
)
from .._images import ImageInput
from .._policy import Policy, validate_policy
from ..driver._spi import Descriptor
from ._options import AgentSettings, RunSettings


def check_policy(policy: Policy, desc: Descriptor) -> None:
    """Raise InvalidPolicy / PolicyCapabilityUnsupported / HumanDecisionModeUnsupported before any process starts."""
    validate_policy(policy)
    caps = desc.policy
    dims: list[tuple[str, SandboxLevel | FeatureLevel, frozenset[SandboxLevel] | frozenset[FeatureLevel]]] = [
        ("sandbox", policy.sandbox, caps.sandbox),
        ("web_search", policy.web_search, caps.web_search),
        ("browser", policy.browser, caps.browser),
    ]
    for name, value, supported in dims:
        if value.value and value not in supported:
            raise PolicyCapabilityUnsupportedError(
                f"driver {desc.name!r} cannot enforce policy.{name}={value.name}; "
                f"supported: {sorted(v.name for v in supported) or 'none (leave it INHERIT)'}",
                option=f"policy.{name}",
            )
    a = policy.approvals
    ac = desc.approvals
    modes: list[tuple[str, ApprovalMode | QuestionMode, frozenset[ApprovalMode] | frozenset[QuestionMode]]] = [
        ("permission", a.permission, ac.permission_modes),
        ("plan_review", a.plan_review, ac.plan_review_modes),
        ("question", a.question, ac.question_modes),
    ]
    for name, mode, supported_modes in modes:
        if mode.value and mode not in supported_modes:
            raise HumanDecisionModeUnsupportedError(
                f"driver {desc.name!r} cannot honour policy.approvals.{name}={mode.name}; "
                f"supported: {sorted(m.name for m in supported_modes) or 'none (leave it INHERIT)'}",
                option=f"policy.approvals.{name}",
            )


def check_images(images: tuple[ImageInput, ...], desc: Descriptor) -> None:
    """Refuse ``images=`` before launch on a driver whose Descriptor does not declare the ``images`` capability."""
    if images and not desc.images:
        raise ConfigError(
            f"driver {desc.name!r} does not accept images in a prompt (its Descriptor's images capability is "
            f"False); send the prompt without images=, or use a driver that declares images",
            option="images",
            details={"capability": "images"},
        )


def check_construction(agent: AgentSettings) -> None:
    """Raise a ConfigError naming the first construction-only option whose value cannot be used."""
    if agent.run.workspace_spec is not None or agent.workspace_manager is not None or agent.service_manager is not None:
        from ._workspace import check_managers  # the workspace and service vocabulary loads when an option uses it

        check_managers(agent)


def check_resources(agent: AgentSettings, run: RunSettings, desc: Descriptor) -> None:
    """Raise a ConfigError naming the option when a run asks for resources that would silently do nothing."""

    def unsupported(option: str) -> str:
        return (
            f"{option}= is not supported yet: the driver interface does not carry it to {desc.name!r} or any other "
            "driver, so it would be ignored; remove it"
        )

    # skills= and profile_resources= are resolved and materialized by the Agent's profile (_core/_profile.py)


def check_resume_prerequisite(driver: Any, desc: Descriptor) -> None:
    """Section 15: a driver that declares resume needs a session codec and a stable, non-empty config fingerprint;
    a Thread run of one that lacks either is refused before any Thread resource (lease, record) is taken."""
    if not desc.resume:
        return
    codec = getattr(driver, "session_codec", None)
    if not (callable(getattr(codec, "encode", None)) and callable(getattr(codec, "decode", None))):
        raise InvalidDriverConfigError(
            f"driver {desc.name!r} declares resume but has no session_codec (an object with encode() and decode()); "
            "give it one (adaptor_nb.driver.IdentityCodec() for opaque ids) or declare resume=False",
            option="driver",
        )
    fingerprint = driver.config_fingerprint()
    if not isinstance(fingerprint, str) or not fingerprint:
        raise InvalidDriverConfigError(
            f"driver {desc.name!r} declares resume but its config_fingerprint() is empty: a Thread could not tell "
            "a compatible configuration from another; return a stable string that names the configuration",
            option="driver",
        )
