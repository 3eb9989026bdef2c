"""Output that is the same on every headless run, so ``%agent threads`` and ``%agent status`` compare under nbval.

In a headless run (nbconvert, nbclient, nbval) the thread table leaves out its ``last run`` column and lists
threads by key, and the status text names found CLIs by file name instead of absolute path: with the fresh
thread store such a run starts from, nothing else differs between two runs. Live sessions keep the full detail.
"""

from __future__ import annotations

import os
import re
from typing import Any

from .._views._frontend import front_end

# An absolute path on this machine: starts a word (not after a scheme's ":" or "/", a "~", a "$VAR" or a quote,
# which marks an example such as Config(command=['/path/to/agent'])), has no empty part ("//"), and ends in its
# last part, which is what is kept.
_ABSOLUTE = re.compile(r"(?<![\w.:/~$}'\"=\[])/(?:[^\s,;:()'\"/]+/)+([^\s,;:()'\"/]+)")
CLOCK_COLUMNS = ("last run",)


def headless() -> bool:
    """True in a headless run (nbconvert, nbclient, nbval): no front end shows live views (see ``front_end``)."""
    from IPython import get_ipython

    return not front_end(get_ipython())


def stable_rows(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The thread table without its clock columns, in a fixed order (by key) when headless."""
    if not headless():
        return rows
    kept = [{k: v for k, v in row.items() if k not in CLOCK_COLUMNS} for row in rows]
    return sorted(kept, key=lambda r: str(r.get("key", "")))


def stable_status(text: str) -> str:
    """The status text with this machine's absolute paths shortened to their last part when headless; URLs
    (``https://cursor.com/install``) and paths relative to a home (``~/.codex/config.toml``) stay as written."""
    if not headless():
        return text
    return _ABSOLUTE.sub(lambda m: m.group(1) if os.sep == "/" else m.group(0), text)
