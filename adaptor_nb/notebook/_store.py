"""``%agent store keep [NAME]``: keep this notebook's threads between runs, also in headless runs.

A headless run (nbconvert, nbclient, nbval) starts from a fresh in-memory thread store, so running a notebook
twice gives the same outputs. A notebook that wants its threads to outlive the run says so with this line
before its first ``%%agent`` cell: its threads then live in ``.adaptor_nb/NAME.sqlite`` beside the notebook
(NAME defaults to the notebook's name where the kernel knows it, else ``threads``), headless or not.
``%agent store`` says where the threads live.
"""

from __future__ import annotations

import re
from pathlib import Path

from ._args import OptionError
from ._notebook_file import store_name
from ._session import STORE_DIR, STORE_SUFFIX, NotebookSession

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,80}$")


def store_command(session: NotebookSession, words: list[str]) -> str:
    """Do what ``%agent store ...`` asks; returns the line to print."""
    if not words:
        session.store()
        return f"thread store: {session.store_note}"
    if words[0] != "keep" or len(words) > 2:
        raise OptionError("%agent store: use %agent store keep [NAME] (or %agent store to see where threads live)")
    name = words[1] if len(words) == 2 else store_name()  # the notebook's name where the kernel knows it
    if not _NAME.match(name):
        raise OptionError(f"%agent store keep: {name!r} is not a plain file name (letters, digits, - _ .)")
    if session.agents or session._store is not None:
        raise OptionError("%agent store keep must come before the notebook's first %%agent cell or %agent threads")
    session.kept = Path.cwd() / STORE_DIR / (name + STORE_SUFFIX)
    return f"threads are kept between runs in {STORE_DIR}/{name}{STORE_SUFFIX}"
