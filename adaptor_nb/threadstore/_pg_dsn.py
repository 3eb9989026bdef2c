"""A PostgreSQL connection string: checked up front, shown without its password, and errors that say what to fix."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ._errors import ThreadStoreError

EXTRA_HINT = "install the extra: pip install 'adaptor_nb[postgres]' (psycopg 3 and psycopg_pool)"


def require_psycopg() -> None:
    """Import psycopg and its pool, or fail with an ImportError that names the extra to install."""
    try:
        import psycopg  # noqa: F401
        import psycopg_pool  # noqa: F401
    except ImportError as exc:
        raise ImportError(f"the PostgreSQL thread store needs psycopg 3 and psycopg_pool: {EXTRA_HINT}") from exc


@dataclass(frozen=True)
class Dsn:
    """A parsed connection string; ``shown`` names the server and database without the password."""

    conninfo: str
    password: str
    shown: str

    def scrub(self, text: str) -> str:
        """``text`` with every occurrence of the password replaced."""
        return text.replace(self.password, "***") if self.password else text


def parse_dsn(dsn: str) -> Dsn:
    """Parse ``dsn`` (a URI or key=value string); a malformed one fails here, with the password hidden."""
    from psycopg import conninfo

    if not isinstance(dsn, str) or not dsn.strip():
        raise ValueError(
            "Postgres store needs a connection string such as 'postgresql://user@host:5432/dbname', got "
            f"{'an empty string' if isinstance(dsn, str) else type(dsn).__name__}"
        )
    try:
        params: dict[str, Any] = conninfo.conninfo_to_dict(dsn)
    except Exception as exc:  # psycopg.ProgrammingError: libpq could not parse it
        password = _guess_password(dsn)
        text = str(exc).replace(password, "***") if password else str(exc)
        raise ValueError(
            f"Postgres store: the connection string is malformed ({text.strip()}); write it as "
            "'postgresql://user:password@host:port/dbname' or 'host=... port=... dbname=... user=...'"
        ) from None
    password = str(params.get("password") or "")
    host = str(params.get("host") or params.get("hostaddr") or "localhost")
    port = str(params.get("port") or "5432")
    user = str(params.get("user") or "")
    dbname = str(params.get("dbname") or user or "")
    shown = f"postgresql://{user + '@' if user else ''}{host}:{port}/{dbname}"
    return Dsn(conninfo=conninfo.make_conninfo(dsn), password=password, shown=shown)


def _guess_password(dsn: str) -> str:
    """The password of a connection string libpq could not parse, as well as it can be told (to hide it)."""
    if "://" in dsn:
        userinfo = dsn.split("://", 1)[1].split("@", 1)
        if len(userinfo) == 2 and ":" in userinfo[0]:
            return userinfo[0].split(":", 1)[1]
    for part in dsn.split():
        if part.startswith("password="):
            return part.removeprefix("password=")
    return ""


def server_error(store: str, dsn: Dsn, exc: BaseException, doing: str) -> ThreadStoreError:
    """``exc`` (raised talking to the server) as a ThreadStoreError naming the store and what to fix."""
    cause = dsn.scrub(f"{type(exc).__name__}: {exc}".strip())
    low = cause.lower()
    if "password authentication failed" in low or "no password supplied" in low or "authentication" in low:
        advice = "the server refused the user name or password: fix the credentials in the connection string"
    elif "does not exist" in low and "database" in low:
        advice = "the database does not exist: create it (createdb) or name an existing one in the connection string"
    elif "role" in low and "does not exist" in low:
        advice = "the user does not exist on the server: create it or name another user in the connection string"
    elif "permission denied" in low:
        advice = "the user may not create or use the store's schema: grant it, or pass another schema="
    elif "invalid response" in low or "ssl negotiation" in low:
        advice = "something other than a PostgreSQL server answers at that host and port: check the port"
    elif "timeout" in low or "timed out" in low or "refused" in low or "could not" in low or "closed" in low:
        advice = "the server cannot be reached: check that it is running and the host and port are right"
    else:
        advice = "check the server and the connection string"
    return ThreadStoreError(
        f"thread store {store} at {dsn.shown} failed while {doing}: {cause}; {advice}",
        details={"store": store, "dsn": dsn.shown, "cause": cause},
    )
