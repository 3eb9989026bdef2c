"""``%agent store keep [NAME]``: keep this notebook's threads between runs, also in headless runs.

A headless run (nbconvert, nbclient, nbval) starts from a fresh in-memory thread store, so running a notebook
twice gives the same outputs. A notebook that wants its threads to outlive the run says so with this line
before its first ``%%agent`` cell: its threads then live in ``.adaptor_nb/NAME.sqlite`` beside the notebook
(NAME defaults to the notebook's name where the kernel knows it, else ``threads``), headless or not.
``%agent store`` says where the threads live. ``%agent store postgres DSN [SCHEMA]`` keeps them on a PostgreSQL
server instead (write ``$name`` to take the connection string from a variable, so no password is in the notebook);
the server is checked at once, and the password never appears in what is printed.
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
    if words[0] == "postgres":
        return _postgres(session, words[1:])
    if words[0] != "keep" or len(words) > 2:
        raise OptionError(
            "%agent store: use %agent store keep [NAME] or %agent store postgres DSN [SCHEMA] "
            "(or %agent store to see where threads live)"
        )
    name = words[1] if len(words) == 2 else store_name()  # the notebook's name where the kernel knows it
    if not _NAME.match(name):
        raise OptionError(f"%agent store keep: {name!r} is not a plain file name (letters, digits, - _ .)")
    if session.agents or session._store is not None:
        raise OptionError("%agent store keep must come before the notebook's first %%agent cell or %agent threads")
    session.kept = Path.cwd() / STORE_DIR / (name + STORE_SUFFIX)
    return f"threads are kept between runs in {STORE_DIR}/{name}{STORE_SUFFIX}"


def _postgres(session: NotebookSession, words: list[str]) -> str:
    """``%agent store postgres DSN [SCHEMA]``: threads on a PostgreSQL server, checked before any cell runs."""
    import asyncio
    import concurrent.futures

    from ..threadstore import PostgresStore, ThreadStoreError

    if len(words) not in (1, 2):
        raise OptionError("%agent store postgres: use %agent store postgres DSN [SCHEMA]")
    if session.agents or session._store is not None:
        raise OptionError("%agent store postgres must come before the notebook's first %%agent cell or %agent threads")
    try:
        store = PostgresStore(words[0], schema=words[1] if len(words) == 2 else "adaptor_nb")
    except (ImportError, ValueError) as exc:
        raise OptionError(f"%agent store postgres: {exc}") from None

    async def check() -> None:  # connect and create the tables now, on a loop of its own (the kernel's may run)
        try:
            await store.resolve("")
        finally:
            await store.aclose()

    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        try:
            pool.submit(asyncio.run, check()).result()
        except ThreadStoreError as exc:
            raise OptionError(f"%agent store postgres: {exc}") from None
    session._store = store
    session.store_note = repr(store)
    return f"threads are kept on the PostgreSQL server {store.dsn} (schema {store.schema})"
