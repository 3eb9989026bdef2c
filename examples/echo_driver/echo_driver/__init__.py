"""A complete small third-party driver for adaptor_nb: an echo CLI that answers in JSON lines."""

from ._driver import CLI, Config, Driver

__all__ = ["CLI", "Config", "Driver"]
