"""The Agent Client Protocol driver: any ACP agent over stdio, with presets for the known ones.

``import adaptor_nb.drivers.acp`` does not import the ``agent-client-protocol`` SDK; the first run does (install
it with ``pip install 'adaptor_nb[acp]'``).
"""

from ._config import Config
from ._driver import Driver
from ._presets import PRESETS, Preset, preset

__all__ = ["PRESETS", "Config", "Driver", "Preset", "preset"]
