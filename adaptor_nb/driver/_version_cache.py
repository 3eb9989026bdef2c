"""A CLI's ``--version`` answer kept on disk, so a fresh process does not start the CLI once more just to ask.

A Claude-family CLI takes a second or more to answer ``--version`` (it loads its whole bundle), and the core asks
before a driver's first run (the version decides the message capabilities). The answer is kept per binary: the
resolved path of the command with its size, modification time and inode, the rest of the argv and ``PATH``
(hashed, never written in clear). A binary that changes, or moves, is asked again. Only a successful, non-empty
answer is kept; a cache that cannot be read or written is ignored.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import tempfile
from collections.abc import Mapping, Sequence

_FILE = "cli-versions.json"
_LIMIT = 256  # entries kept; the oldest go first


def cache_dir() -> str:
    """``$ADAPTOR_NB_CACHE_DIR``, else ``$XDG_CACHE_HOME/adaptor_nb``, else ``~/.cache/adaptor_nb``."""
    explicit = os.environ.get("ADAPTOR_NB_CACHE_DIR")
    if explicit:
        return explicit
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "adaptor_nb")


def version_key(argv: Sequence[str], env: Mapping[str, str]) -> str | None:
    """The cache key of ``argv`` run with ``env``; None when its command cannot be found."""
    import shutil

    found = shutil.which(argv[0], path=env.get("PATH")) if os.sep not in argv[0] else argv[0]
    if not found:
        return None
    try:
        real = os.path.realpath(found)
        st = os.stat(real)
    except OSError:
        return None
    text = "\0".join([real, str(st.st_size), str(st.st_mtime_ns), str(st.st_ino), *argv[1:], env.get("PATH", "")])
    return hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()


def _load() -> dict[str, str]:
    import json

    try:
        with open(os.path.join(cache_dir(), _FILE), encoding="utf-8") as fh:
            data = json.load(fh)
    except (OSError, ValueError):
        return {}
    return (
        {k: v for k, v in data.items() if isinstance(k, str) and isinstance(v, str)} if isinstance(data, dict) else {}
    )


def cached_output(key: str) -> str | None:
    """The kept answer for ``key``, if any."""
    return _load().get(key)


def keep_output(key: str, output: str) -> None:
    """Keep ``output`` for ``key`` (best effort: a read-only home or a race loses nothing but the cache)."""
    import json

    if not output.strip():
        return
    data = _load()
    data.pop(key, None)
    data[key] = output
    while len(data) > _LIMIT:
        data.pop(next(iter(data)))
    directory = cache_dir()
    with contextlib.suppress(OSError):
        os.makedirs(directory, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=directory, prefix=".cli-versions.")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump(data, fh)
            os.replace(tmp, os.path.join(directory, _FILE))
        except OSError:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
