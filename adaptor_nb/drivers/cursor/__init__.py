"""The Cursor Agent driver: ``agent -p --output-format stream-json``, one process per turn, resume by session id."""

from ._config import Config
from ._driver import Driver

__all__ = ["Config", "Driver"]
