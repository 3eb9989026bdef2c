"""The AG-UI 1.0 bridge: drive an Agent's named Threads from any AG-UI front end (needs the ``agui`` extra).

``thread_key`` maps a front end's ``threadId`` to a Thread key; ``RunRegistry`` routes input to the active run of a
Thread or starts one.
"""

from __future__ import annotations

from ._deps import require as _require

_require()

from . import _runframe as frame  # noqa: E402
from ._keys import thread_key  # noqa: E402
from ._mapping import EventMapper  # noqa: E402
from ._registry import RunRegistry  # noqa: E402

__all__ = ["EventMapper", "RunRegistry", "frame", "thread_key"]
