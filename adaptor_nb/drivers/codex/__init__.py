"""OpenAI Codex driver over ``codex app-server``: ``Driver(Config(model=..., reasoning_effort=..., fast_mode=...))``."""

from ._config import Config
from ._driver import Driver

__all__ = ["Config", "Driver"]
