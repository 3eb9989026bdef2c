"""The AG-UI 1.0 bridge: drive an Agent's named Threads from any AG-UI front end (needs the ``agui`` extra).

``thread_key`` maps a front end's ``threadId`` to a Thread key; ``RunRegistry`` routes input to the active run of a
Thread or starts one; ``app(agent)`` is the ASGI endpoint (``POST /agui``, Server-Sent Events) and
``serve(app)`` runs it on the current event loop, on 127.0.0.1 by default. See docs/agui.md.
"""

from __future__ import annotations

from ._deps import require as _require

_require()

from . import _runframe as frame  # noqa: E402
from ._app import AguiApp, app  # noqa: E402
from ._keys import thread_key  # noqa: E402
from ._mapping import EventMapper  # noqa: E402
from ._registry import RunRegistry  # noqa: E402
from ._server import Server, serve  # noqa: E402

__all__ = ["AguiApp", "EventMapper", "RunRegistry", "Server", "app", "frame", "serve", "thread_key"]
