"""A real PostgreSQL server with pgvector on 127.0.0.1, for tests and benchmarks.

The binaries come from the ``pgserver`` wheel (PostgreSQL 16 with pgvector,
in the ``dev`` extra); this module runs them itself rather than through
pgserver's own server object, which listens on a Unix socket only: memext
talks to servers over TCP, with a password (scram-sha-256), as a team's
server would be reached. PostgreSQL refuses to run as root, so under root
the server runs as a system user ``pgserver`` (created when missing, as
pgserver does).
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

PASSWORD = "memext-test-Secr3t"
USER = "postgres"
TEMPLATE = "memext_template"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class PostgresServer:
    """``with PostgresServer() as pg:`` a fresh cluster; ``pg.new_database()``
    gives a database with pgvector installed; stopped and deleted on exit."""

    def __init__(self) -> None:
        import importlib.util

        # The wheel's binaries, found without importing the package (its
        # import warns about XDG_RUNTIME_DIR and starts nothing we use).
        spec = importlib.util.find_spec("pgserver")
        if spec is None or not spec.submodule_search_locations:
            raise RuntimeError('the PostgreSQL tests need the pgserver wheel: pip install -e ".[dev]"')
        self.bin = Path(list(spec.submodule_search_locations)[0]) / "pginstall" / "bin"
        self.root = Path(tempfile.mkdtemp(prefix="memext-pg-"))
        self.data = self.root / "data"
        self.port = _free_port()
        self.host = "127.0.0.1"
        self._user: str | None = None
        self._databases: list[str] = []

    # -- running the binaries -------------------------------------------------------

    def _prepare_user(self) -> None:
        if os.geteuid() != 0:
            return
        import pwd

        self._user = "pgserver"
        try:
            pwd.getpwnam(self._user)
        except KeyError:
            subprocess.run(["useradd", "-s", "/bin/sh", self._user], check=True, capture_output=True)
        # The server's user must reach and read the binaries...
        for folder in [*self.bin.parents][: len(self.bin.parents) - 1]:
            folder.chmod(folder.stat().st_mode | 0o055)
        for folder in (self.bin, self.bin.parent / "lib", self.bin.parent / "share"):
            for path in [folder, *folder.rglob("*")]:
                path.chmod(path.stat().st_mode | (0o055 if path.is_dir() or os.access(path, os.X_OK) else 0o044))
        # ...and own its data folder.
        self.root.chmod(0o755)
        shutil.chown(self.root, self._user, self._user)

    def _run(self, exe: str, *args: str, timeout: float = 60) -> str:
        result = subprocess.run(
            [str(self.bin / exe), *args], user=self._user, capture_output=True, text=True, timeout=timeout, cwd=self.root
        )
        if result.returncode != 0:
            log = (self.root / "log").read_text(errors="replace")[-3000:] if (self.root / "log").exists() else ""
            raise RuntimeError(f"{exe} failed: {result.stderr or result.stdout}\n{log}")
        return result.stdout

    def start(self) -> "PostgresServer":
        self._prepare_user()
        pwfile = self.root / "pw"
        pwfile.write_text(PASSWORD)
        if self._user:
            shutil.chown(pwfile, self._user, self._user)
        self._run(
            "initdb", "-D", str(self.data), "-U", USER, "--pwfile", str(pwfile), "--auth-host=scram-sha-256",
            "--auth-local=trust", "--encoding=UTF8", "--locale=C",
        )
        pwfile.unlink()
        self.run_ctl_start()
        admin = self.admin("postgres")
        try:
            admin.execute(f"CREATE DATABASE {TEMPLATE}")
        finally:
            admin.close()
        conn = self.admin(TEMPLATE)
        try:
            conn.execute("CREATE EXTENSION vector")
        finally:
            conn.close()
        return self

    def run_ctl_start(self) -> None:
        """Start (or restart after :meth:`stop_server`) the server process."""
        options = f"-h {self.host} -p {self.port} -k {self.root} -c fsync=off -c full_page_writes=off"
        self._run("pg_ctl", "-D", str(self.data), "-l", str(self.root / "log"), "-o", options, "-w", "start")

    def stop_server(self, mode: str = "fast") -> None:
        """Stop the server process, keeping its data (``start`` it again later)."""
        self._run("pg_ctl", "-D", str(self.data), "-m", mode, "-w", "stop")

    def stop(self) -> None:
        try:
            self.stop_server("immediate")
        except Exception:
            pass
        shutil.rmtree(self.root, ignore_errors=True)

    def __enter__(self) -> "PostgresServer":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- databases ---------------------------------------------------------------------

    def url(self, database: str = "postgres", *, with_password: bool = False) -> str:
        secret = f":{PASSWORD}" if with_password else ""
        return f"postgresql://{USER}{secret}@{self.host}:{self.port}/{database}"

    def admin(self, database: str = "postgres") -> Any:
        import psycopg

        return psycopg.connect(self.url(database, with_password=True), autocommit=True)

    def new_database(self) -> str:
        """A fresh database (pgvector installed); returns its URL (no password)."""
        name = "t_" + uuid.uuid4().hex[:12]
        conn = self.admin()
        try:
            for attempt in range(50):
                try:
                    conn.execute(f"CREATE DATABASE {name} TEMPLATE {TEMPLATE}")
                    break
                except Exception as exc:  # the template is briefly busy
                    if "being accessed" not in str(exc) or attempt == 49:
                        raise
                    time.sleep(0.1)
        finally:
            conn.close()
        self._databases.append(name)
        return self.url(name)

    def drop_database(self, url: str) -> None:
        name = url.rsplit("/", 1)[-1]
        conn = self.admin()
        try:
            conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        finally:
            conn.close()
