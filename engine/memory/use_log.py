"""Which memories were used: a small log beside the agent's index
(DESIGN.md §17, "The use log").

Each search (or recall) whose answer is confident appends one line per
confident result: when, the agent, the citation, the line that matched
best and a hash of that line's text, so that a later edit of the line is
seen (:func:`line_hash`). ``memext consolidate`` reads it to find the
daily-note facts worth keeping in ``MEMORY.md``.

It lives in the app data folder beside the index
(``<index>.uses``, never in the workspace: it is bookkeeping, not memory),
and costs a one-shot search one ``open(O_APPEND)``, one ``write`` and one
``fstat``: no fsync, no SQLite. Past :data:`MAX_BYTES` the newest half is
kept. Losing it loses nothing but the counts; a failure to write it never
fails a search.
"""

from __future__ import annotations

import os
import time
import zlib
from pathlib import Path
from typing import TYPE_CHECKING, Iterable, NamedTuple

if TYPE_CHECKING:
    from ..results import SearchResult

from ..citations import cite_lines

SUFFIX = ".uses"
#: Past this size the log keeps its newest half: about 12k uses, months of
#: an agent searching all day, and a file read in a few milliseconds.
MAX_BYTES = 1 << 20
_FLAGS = os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
_CLEAN = str.maketrans({"\t": " ", "\n": " ", "\r": " "})


class Use(NamedTuple):
    """One result returned: when (epoch seconds), for which agent, its
    citation's path and lines, the line that matched best and the hash of
    that line's text when it was used ("" when unknown)."""

    at: float
    agent: str
    path: str
    start_line: int
    end_line: int
    line: int
    hash: str

    @property
    def citation(self) -> str:
        return cite_lines(self.path, self.start_line, self.end_line)


class Used(NamedTuple):
    """What a search returned, as the log records it (built by the index
    from its results, so this module knows nothing of search). Named
    tuples, not dataclasses: defining one costs a one-shot search a
    fraction of a dataclass's time."""

    path: str
    start_line: int
    end_line: int
    line: int
    text: str | None  # the best line's text, None when the result has no excerpt


def log_path(db_path: Path) -> Path:
    """The use log of the index at ``db_path``."""
    return Path(str(db_path) + SUFFIX)


def line_hash(text: str) -> str:
    """A short hash of a line's words (spacing does not count): a use and
    the line as it is now match when their hashes do. Callers hash a line
    without its metadata comment, as search shows it."""
    return f"{zlib.crc32(' '.join(text.split()).encode('utf-8')):08x}"


def used_results(results: Iterable[SearchResult]) -> list[Used]:
    """The confident ``results`` as uses, with the line that matched best."""
    used = []
    for r in results:
        if not r.confident:
            continue
        ex = r.excerpt
        best = next((ln.text for ln in ex.lines if ln.number == ex.best_line), None) if ex is not None else None
        used.append(Used(r.path, r.start_line, r.end_line, r.best_line, best))
    return used


def record_uses(db_path: Path, agent: str, used: Iterable[Used], *, now: float | None = None) -> None:
    """Append one line per use. Never raises: the log is a hint, and a
    search must not fail for it (a read-only folder, a full disk)."""
    at = int(time.time() if now is None else now)
    name = agent.translate(_CLEAN)
    lines = [
        f"{at}\t{name}\t{u.path.translate(_CLEAN)}\t{u.start_line}\t{u.end_line}\t{u.line}\t{'' if u.text is None else line_hash(u.text)}\n"
        for u in used
    ]
    if not lines:
        return
    path = log_path(db_path)
    try:
        try:
            fd = os.open(path, _FLAGS, 0o600)
        except FileNotFoundError:  # an index on a server: its local folder may not exist yet
            from ..paths import private_dir

            private_dir(path.parent)
            fd = os.open(path, _FLAGS, 0o600)
        try:
            os.write(fd, "".join(lines).encode("utf-8"))  # one write: O_APPEND keeps concurrent searches' lines whole
            size = os.fstat(fd).st_size
        finally:
            os.close(fd)
        if size > MAX_BYTES:
            _keep_newest(path, MAX_BYTES // 2)
    except OSError:
        pass


def _keep_newest(path: Path, keep: int) -> None:
    """Rewrite the log with its newest whole lines up to ``keep`` bytes (a
    use appended by another process while this runs may be lost: counts
    are a hint)."""
    data = path.read_bytes()
    tail = data[-keep:]
    cut = tail.find(b"\n") + 1
    tmp = path.with_name(f"{path.name}.tmp{os.getpid()}")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with open(fd, "wb") as out:
            out.write(tail[cut:])
        os.replace(tmp, path)
    except OSError:
        tmp.unlink(missing_ok=True)


def read_uses(db_path: Path, agent: str | None = None) -> list[Use]:
    """The uses logged for the index at ``db_path`` (of ``agent`` only,
    when given), oldest first; lines that do not parse are skipped."""
    try:
        text = log_path(db_path).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    out = []
    for line in text.splitlines():
        parts = line.split("\t")
        if len(parts) != 7 or (agent is not None and parts[1] != agent):
            continue
        try:
            out.append(Use(float(parts[0]), parts[1], parts[2], int(parts[3]), int(parts[4]), int(parts[5]), parts[6]))
        except ValueError:
            continue
    return out
