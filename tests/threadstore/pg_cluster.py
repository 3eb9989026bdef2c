"""A throwaway PostgreSQL cluster for tests and benchmarks: initdb in a temporary directory, a free loopback port.

The server runs as an unprivileged user (PostgreSQL refuses to run as root): the current user when that is not root,
otherwise Debian's ``postgres`` system user, which the ``postgresql`` package creates. ``scripts/setup.sh`` installs it.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path

USER = "adaptor"
PASSWORD = "pg-Secret-7f3a"
SERVER_USER = "postgres"
INSTALL_HINT = (
    "PostgreSQL's server binaries (initdb, pg_ctl) were not found under /usr/lib/postgresql/*/bin: "
    "run scripts/setup.sh, or install Debian's package yourself: apt-get install postgresql"
)


def find_bindir() -> Path:
    """The newest /usr/lib/postgresql/N/bin holding initdb and pg_ctl; AssertionError naming the install if none."""
    found = sorted(
        (Path(p) for p in glob.glob("/usr/lib/postgresql/*/bin")),
        key=lambda p: int(p.parent.name) if p.parent.name.isdigit() else 0,
    )
    for bindir in reversed(found):
        if (bindir / "initdb").is_file() and (bindir / "pg_ctl").is_file():
            return bindir
    raise AssertionError(INSTALL_HINT)


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class Cluster:
    """One PostgreSQL server in a temporary directory; ``start()``/``stop()`` may be called again (a restart)."""

    def __init__(self) -> None:
        self.bindir = find_bindir()
        self.port = free_port()
        self.root = Path(tempfile.mkdtemp(prefix="adaptor_nb-pg-"))
        self.data = self.root / "data"
        self.log = self.root / "server.log"
        self._as: list[str] = []
        if os.geteuid() == 0:
            try:
                account = pwd.getpwnam(SERVER_USER)
            except KeyError:
                raise AssertionError(
                    f"no {SERVER_USER!r} system user to run the test server as (not root): {INSTALL_HINT}"
                ) from None
            os.chown(self.root, account.pw_uid, account.pw_gid)
            self._as = ["runuser", "-u", SERVER_USER, "--"]
        pwfile = self.root / "pw"
        pwfile.write_text(PASSWORD + "\n")
        if self._as:
            os.chown(pwfile, account.pw_uid, account.pw_gid)
        self._run(
            str(self.bindir / "initdb"),
            "-D",
            str(self.data),
            "-U",
            USER,
            f"--pwfile={pwfile}",
            "--auth-local=trust",
            "--auth-host=scram-sha-256",
            "-E",
            "UTF8",
            "--no-instructions",
        )
        pwfile.unlink()

    def _run(self, *argv: str) -> None:
        done = subprocess.run([*self._as, *argv], capture_output=True, text=True, timeout=120, check=False)
        if done.returncode != 0:
            log = self.log.read_text()[-3000:] if self.log.exists() else ""
            raise AssertionError(f"{argv[0]} failed ({done.returncode}): {done.stdout}{done.stderr}{log}")

    def start(self) -> None:
        options = f"-p {self.port} -c listen_addresses=127.0.0.1 -k {self.root} -c max_connections=200"
        self._run(str(self.bindir / "pg_ctl"), "-D", str(self.data), "-l", str(self.log), "-o", options, "-w", "start")

    def stop(self) -> None:
        self._run(str(self.bindir / "pg_ctl"), "-D", str(self.data), "-m", "fast", "-w", "stop")

    def dsn(self, *, dbname: str = "postgres", user: str = USER, password: str = PASSWORD, port: int = 0) -> str:
        return f"postgresql://{user}:{password}@127.0.0.1:{port or self.port}/{dbname}"

    def remove(self) -> None:
        if (self.data / "postmaster.pid").exists():
            try:
                self.stop()
            finally:
                shutil.rmtree(self.root, ignore_errors=True)
        else:
            shutil.rmtree(self.root, ignore_errors=True)
