"""The CodeBuddy Code driver: ``codebuddy-headless`` over stream-json, with approvals, resume and fork."""

from ._config import Config
from ._driver import Driver

__all__ = ["Config", "Driver"]
