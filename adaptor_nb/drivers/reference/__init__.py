"""The offline reference driver: scripted, deterministic, in memory; the core's test bed and the demo default."""

from ._driver import SCRIPTED_NOTE, Config, Driver
from ._sample import sample
from ._scenario import (
    Ask,
    Crash,
    Delay,
    Fail,
    Gate,
    HostCall,
    HostCalls,
    PlanReview,
    Scenario,
    Stderr,
    Structured,
    Subagent,
    Text,
    ThinkingStep,
    ToolUse,
    Turn,
    WaitForMessage,
    scenario,
)

__all__ = [
    "SCRIPTED_NOTE",
    "Ask",
    "Config",
    "Crash",
    "Delay",
    "Driver",
    "Fail",
    "Gate",
    "HostCall",
    "HostCalls",
    "PlanReview",
    "Scenario",
    "Stderr",
    "Structured",
    "Subagent",
    "Text",
    "ThinkingStep",
    "ToolUse",
    "Turn",
    "WaitForMessage",
    "sample",
    "scenario",
]
