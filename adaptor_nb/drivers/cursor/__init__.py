"""The Cursor Agent driver: ``agent -p --output-format stream-json``, one process per turn, resume by session id."""

from ._config import Config
from ._driver import Driver
from ._hook_relay import run_hook_relay_if_requested
from ._relay import default_hook_relay

__all__ = ["Config", "Driver", "default_hook_relay", "run_hook_relay_if_requested"]
