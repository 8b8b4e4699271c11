"""A real PostgreSQL server with pgvector on 127.0.0.1, for tests and benchmarks.

The binaries come from the ``pgserver`` wheel (PostgreSQL 16 with pgvector,
in the ``dev`` extra); this module runs them itself rather than through
pgserver's own server object, which listens on a Unix socket only: memext
talks to servers over TCP, with a password (scram-sha-256), as a team's
server would be reached. PostgreSQL refuses to run as root, so under root
the server runs as a system user ``pgserver`` (created when missing, as
pgserver does).

Nothing outlives the process that started the server: the postmaster is
its child (not daemonized by ``pg_ctl``), told by the kernel to quit when
that process dies, however it dies (a test run killed by a timeout); and
the folders of servers whose starter died are deleted by the next start.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

PASSWORD = "memext-test-Secr3t"
USER = "postgres"
TEMPLATE = "memext_template"
#: Folders are ``<tmp>/memext-pg-*``; this file in one names the process that owns it.
OWNER_FILE = "owner.pid"
START_TIMEOUT_S = 60


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
        remove_orphans()
        self.root = Path(tempfile.mkdtemp(prefix="memext-pg-"))
        (self.root / OWNER_FILE).write_text(str(os.getpid()))
        self.data = self.root / "data"
        self.port = _free_port()
        self.host = "127.0.0.1"
        self._user: str | None = None
        self._databases: list[str] = []
        self._postmaster: subprocess.Popen | None = None

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
            "initdb",
            "-D",
            str(self.data),
            "-U",
            USER,
            "--pwfile",
            str(pwfile),
            "--auth-host=scram-sha-256",
            "--auth-local=trust",
            "--encoding=UTF8",
            "--locale=C",
        )
        pwfile.unlink()
        self.start_server()
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

    def start_server(self) -> None:
        """Start (or restart after :meth:`stop_server`) the server process and
        wait until it accepts connections."""
        log = open(self.root / "log", "ab")
        try:
            self._postmaster = subprocess.Popen(
                [
                    str(self.bin / "postgres"),
                    "-D",
                    str(self.data),
                    "-h",
                    self.host,
                    "-p",
                    str(self.port),
                    "-k",
                    str(self.root),
                    "-c",
                    "fsync=off",
                    "-c",
                    "full_page_writes=off",
                ],
                user=self._user,
                cwd=self.root,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                preexec_fn=_quit_with_parent_hook(),
            )
        finally:
            log.close()
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            ready = subprocess.run(
                [str(self.bin / "pg_isready"), "-q", "-h", self.host, "-p", str(self.port)], capture_output=True, timeout=30
            )
            if ready.returncode == 0:
                return
            if self._postmaster.poll() is not None or time.monotonic() > deadline:
                tail = (self.root / "log").read_text(errors="replace")[-3000:]
                self._kill()
                raise RuntimeError(f"PostgreSQL did not start on {self.host}:{self.port}:\n{tail}")
            time.sleep(0.1)

    def stop_server(self, mode: str = "fast") -> None:
        """Stop the server process, keeping its data (``start_server`` it again later)."""
        self._run("pg_ctl", "-D", str(self.data), "-m", mode, "-w", "stop")
        if self._postmaster is not None:
            self._postmaster.wait(60)
            self._postmaster = None

    def freeze(self) -> None:
        """Stop every process of the server (SIGSTOP), as a stalled network
        or a paused VM does: connections stay open and the kernel still
        acknowledges them, but nothing answers. :meth:`thaw` resumes it."""
        assert self._postmaster is not None, "the server is not running"
        for pid in [self._postmaster.pid, *self._children()]:
            os.kill(pid, signal.SIGSTOP)

    def thaw(self) -> None:
        """Resume a server stopped by :meth:`freeze`."""
        if self._postmaster is None:
            return
        for pid in [self._postmaster.pid, *self._children()]:
            try:
                os.kill(pid, signal.SIGCONT)
            except ProcessLookupError:
                pass

    def _children(self) -> list[int]:
        """The server's backends and helpers (the postmaster's children)."""
        assert self._postmaster is not None
        found: list[int] = []
        for task in Path(f"/proc/{self._postmaster.pid}/task").iterdir():
            children = (task / "children").read_text().split()
            found += [int(pid) for pid in children]
        return found

    def _kill(self) -> None:
        if self._postmaster is not None and self._postmaster.poll() is None:
            self.thaw()  # a stopped server would not act on the signal
            self._postmaster.send_signal(signal.SIGQUIT)  # immediate shutdown: it is deleted next
            try:
                self._postmaster.wait(30)
            except subprocess.TimeoutExpired:
                self._postmaster.kill()
                self._postmaster.wait(30)
        self._postmaster = None

    def stop(self) -> None:
        self._kill()
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


def _quit_with_parent_hook() -> Any:
    """What the server's process runs before the server (Linux; elsewhere
    nothing): SIGQUIT, an immediate shutdown, when the process that started
    it dies. Made in the parent: the child of a threaded process may not
    import anything."""
    if not sys.platform.startswith("linux"):
        return None
    import ctypes

    prctl = ctypes.CDLL(None, use_errno=True).prctl
    PR_SET_PDEATHSIG = 1
    return lambda: prctl(PR_SET_PDEATHSIG, signal.SIGQUIT)


def remove_orphans() -> None:
    """Delete the folders of test servers whose starting process is gone
    (their servers went with it: see :func:`_quit_with_parent_hook`)."""
    for folder in Path(tempfile.gettempdir()).glob("memext-pg-*"):
        try:
            owner = int((folder / OWNER_FILE).read_text())
        except (OSError, ValueError):
            continue  # another run's folder being made, or not one of ours
        if not _alive(owner):
            shutil.rmtree(folder, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
