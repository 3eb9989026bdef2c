"""The Claude Code driver: ``claude`` over stream-json, with approvals, messages, resume and fork."""

from ._config import Config
from ._driver import Driver

__all__ = ["Config", "Driver"]
