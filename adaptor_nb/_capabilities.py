"""Checks made before launch: a request's policy against the driver's truthful Descriptor."""

from __future__ import annotations

from ._enums import ApprovalMode, FeatureLevel, QuestionMode, SandboxLevel
from ._errors import HumanDecisionModeUnsupportedError, PolicyCapabilityUnsupportedError
from ._policy import Policy, validate_policy
from .driver._spi import Descriptor


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
