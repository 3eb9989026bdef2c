"""pytest options for notebook runs under nbval: ``--agent-cassette PATH`` and ``--agent-record-mode MODE``.

Kernels started by nbval inherit the environment, so the options are passed on as ``$ADAPTOR_NB_CASSETTE`` and
``$ADAPTOR_NB_RECORD_MODE``; the mode also overrides the one a notebook gives ``%agent record``.
"""

from __future__ import annotations

import os
from typing import Any

from ._cassette import CASSETTE_ENV, MODE_ENV, MODES


def pytest_addoption(parser: Any) -> None:
    group = parser.getgroup("adaptor_nb", "adaptor_nb record/replay")
    group.addoption(
        "--agent-cassette",
        default=None,
        metavar="PATH",
        help="replay (and record, per --agent-record-mode) the agent runs of notebooks from this cassette",
    )
    group.addoption(
        "--agent-record-mode",
        default=None,
        choices=MODES,
        help="none: replay only (a missing recording fails); once: record what is missing; rewrite: record again",
    )


def pytest_configure(config: Any) -> None:
    path = config.getoption("--agent-cassette")
    mode = config.getoption("--agent-record-mode")
    if path:
        os.environ[CASSETTE_ENV] = os.path.abspath(path)
    if mode:
        os.environ[MODE_ENV] = mode
