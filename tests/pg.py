"""A throwaway PostgreSQL server for tests and benchmarks, from Debian's binaries.

``PostgresServer`` runs initdb into a temporary data folder, starts the server on a free
loopback port with its unix socket in that folder, and stops it (and removes the folder) at the
end. initdb and the server refuse to run as root: as root they run as an unprivileged user
(``postgres`` when the package made it, else ``nobody``) through ``setpriv``; as anyone else,
as that user. Each test gets a database of its own (``database()``), cheap to create since the
cluster runs with fsync off: what is tested is Parlour's SQL, not the disk.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

__all__ = ["PostgresServer", "find_binaries", "missing_reason"]

#: Where Debian's packages put a server's programs (one folder per major version).
BIN_GLOB = "/usr/lib/postgresql/*/bin"


def find_binaries() -> Path | None:
    """The newest installed version's bin folder with initdb and pg_ctl, if any."""
    found = [Path(p) for p in glob.glob(BIN_GLOB) if (Path(p) / "initdb").exists()]
    if not found:
        return None
    return max(found, key=lambda p: int(p.parent.name) if p.parent.name.isdigit() else 0)


def missing_reason() -> str | None:
    """Why no test server can run here, or None when one can."""
    if find_binaries() is None:
        return f"PostgreSQL's binaries are not installed (no initdb under {BIN_GLOB}; `make postgres`)"
    if os.geteuid() == 0 and not shutil.which("setpriv"):
        return "running as root without setpriv: cannot start PostgreSQL as an unprivileged user"
    return None


def _server_user() -> pwd.struct_passwd:
    for name in ("postgres", "nobody"):
        try:
            return pwd.getpwnam(name)
        except KeyError:
            continue
    raise RuntimeError("no unprivileged user (postgres or nobody) to run PostgreSQL as")


def _free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


class PostgresServer:
    """A PostgreSQL cluster of its own, on 127.0.0.1; ``url(db)`` names a database of it."""

    def __init__(self, *, fsync: bool = False) -> None:
        binaries = find_binaries()
        if binaries is None:
            raise RuntimeError(missing_reason() or "no PostgreSQL")
        self.bin = binaries
        self.port = _free_port()
        self.root = Path(tempfile.mkdtemp(prefix="parlour-pg-"))
        self.data = self.root / "data"
        self.user = "parlour"
        self._prefix: list[str] = []
        if os.geteuid() == 0:
            account = _server_user()
            # The folder must be the server user's: it creates the data folder and the socket.
            os.chown(self.root, account.pw_uid, account.pw_gid)
            self._prefix = [
                "setpriv",
                f"--reuid={account.pw_uid}",
                f"--regid={account.pw_gid}",
                "--clear-groups",
                "--",
            ]
        self._run(
            "initdb",
            "-D",
            str(self.data),
            "-U",
            self.user,
            "--auth=trust",
            "--no-locale",
            "--encoding=UTF8",
            "--no-sync",
        )
        self.options = [
            f"-p {self.port}",
            "-c listen_addresses=127.0.0.1",
            f"-c unix_socket_directories={self.root}",
            "-c max_connections=60",
            "-c shared_buffers=16MB",
        ]
        if not fsync:
            self.options += ["-c fsync=off", "-c synchronous_commit=off", "-c full_page_writes=off"]
        self.start()
        self._databases = 0
        self._reused: str | None = None
        self._admin: Any = None

    def start(self, *options: str) -> None:
        """Start the server (again, on the same port and data), with ``options`` added."""
        self._run(
            "pg_ctl",
            "-D",
            str(self.data),
            "-l",
            str(self.root / "server.log"),
            "-o",
            " ".join([*self.options, *options]),
            "-w",
            "-t",
            "30",
            "start",
        )

    def stop_now(self) -> None:
        """``pg_ctl stop -m immediate``: every connection is cut, nothing is flushed (a crash,
        as far as clients can tell); what was committed is there at the next start."""
        self._run("pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "-t", "30", "stop")

    def _run(self, program: str, *args: str) -> None:
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LC_ALL": "C", "HOME": str(self.root)}
        done = subprocess.run(
            [*self._prefix, str(self.bin / program), *args],
            cwd=self.root,
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode != 0:
            log = self.root / "server.log"
            tail = log.read_text()[-2000:] if log.exists() else ""
            raise RuntimeError(f"{program} failed ({done.returncode}): {done.stderr.strip()}\n{tail}")

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://{self.user}@127.0.0.1:{self.port}/{database}"

    def database(self) -> str:
        """The URL of a new, empty store: a schema of its own in the ``parlour`` database (a new
        schema costs a millisecond; a new database, a checkpoint of the whole cluster)."""
        import psycopg

        if not self._databases:
            with psycopg.connect(self.url(), autocommit=True) as conn:
                conn.execute('CREATE DATABASE "parlour"')
        self._databases += 1
        name = f"t{self._databases}_{os.getpid()}"
        with psycopg.connect(self.url("parlour"), autocommit=True) as conn:
            conn.execute(f'CREATE SCHEMA "{name}"')
        # libpq's options parameter: every session of this URL works in that schema.
        return self.url("parlour") + f"?options=-csearch_path%3D{name}"

    def emptied(self) -> str:
        """The URL of a migrated store with no rows: one schema reused by every caller, its rows
        deleted before each (migrating a new schema costs a few hundred milliseconds of catalog
        writes; the store's own metadata, its version, stays)."""
        import psycopg

        from parlour.storage.sql import TABLES

        if self._reused is None:
            self._reused = self.database()
            from parlour.storage.postgres import PostgresStore

            PostgresStore(self._reused).close()
        schema = self._reused.rsplit("%3D", 1)[1]
        if self._admin is None:
            self._admin = psycopg.connect(self.url("parlour"), autocommit=True)
        conn = self._admin
        # DELETE rather than TRUNCATE: a truncate gives each table new files, slower for a
        # handful of rows. The rows that refer to others go first.
        with conn.transaction():
            for table in reversed(TABLES):
                conn.execute(f'DELETE FROM "{schema}".{table}')
        conn.execute(
            f"DELETE FROM \"{schema}\".parlour_meta WHERE key NOT IN ('application', 'schema_version')"
        )
        return self._reused

    def stop(self) -> None:
        if self._admin is not None:
            self._admin.close()
        try:
            if (self.data / "postmaster.pid").exists():  # not stopped already (stop_now)
                self._run("pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "-t", "30", "stop")
        finally:
            # Wait for the last backend to let go of the folder, then remove it.
            for _ in range(50):
                try:
                    shutil.rmtree(self.root)
                    break
                except OSError:
                    time.sleep(0.05)
