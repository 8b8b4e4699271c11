"""Appending entries to memory files: the one write path into memory.

``memory_append``, ``memext note``, ``%%memnote`` and
``MemoryIndex.append`` all come here. An entry is a ``##`` heading (a
timestamp unless one is given) and the text, appended to today's daily log
(``memory/YYYY-MM-DD.md``, created with a ``# YYYY-MM-DD`` title), to
``MEMORY.md`` or to another memory file; the path rules are ``get()``'s
(:func:`~.read.resolve_memory_path`), so nothing lands outside memory.

Why it is safe:

- the file is opened ``O_APPEND`` (and ``O_NOFOLLOW``) and the whole entry,
  with the line break the file may lack, goes out in ONE ``os.write``: a
  crash leaves the file as it was or with the whole entry, and text others
  wrote is never rewritten or truncated;
- a write or ``fsync`` that fails (a full disk takes part of an entry, then
  refuses the rest) is undone: the file is cut back to its length before
  the entry (only when nothing else was appended meanwhile, so no one
  else's text is lost) and a file created for the entry is removed, so a
  full disk leaves the file as it was and raises :class:`DiskFull`;
- the agent's writer lock is held from reading the file's length to the
  ``fsync``, so two memext processes appending at once never interleave and
  each knows the lines its entry landed on (its citation).
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import asdict, dataclass, replace
from datetime import datetime
from pathlib import Path

from ..config import AgentConfig
from ..errors import AccessDenied, DiskFull, MemextError, is_disk_full
from ..store import writer_lock
from .chunking import split_lines
from .entries import EntryMeta, split_meta, with_meta
from .read import cite_lines, resolve_memory_path

LONG_TERM_FILE = "MEMORY.md"
#: The longest entry accepted: memory is notes, not a place to dump files.
MAX_ENTRY_CHARS = 100_000
#: How long an append waits for a sync of the same agent to let go of the lock.
APPEND_LOCK_TIMEOUT_S = 60.0
_OPEN_FLAGS = os.O_RDWR | os.O_APPEND | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)


@dataclass(frozen=True)
class AppendResult:
    """Where an entry went: lines ``start_line``..``end_line`` of ``path``,
    its heading included; its text starts at ``text_line``.

    ``indexed`` is False when the sync after the write failed (the entry is
    on disk all the same; ``notice`` says why it is not searchable yet).
    """

    path: str
    start_line: int
    end_line: int
    text_line: int
    created: bool
    indexed: bool = True
    notice: str | None = None
    #: The entries this one replaced, marked superseded (DESIGN.md §17).
    superseded: tuple[str, ...] = ()

    @property
    def citation(self) -> str:
        """The entry's own text as a citation, its heading (often just a
        time) left out: ``path:LINE`` for a one-line fact, else
        ``path:FIRST-LAST``, forms ``memext get`` and memory_get read."""
        return cite_lines(self.path, self.text_line, self.end_line)

    def to_dict(self) -> dict:
        return {**asdict(self), "citation": self.citation}


def daily_log_path(now: datetime) -> str:
    """Today's daily log, workspace-relative."""
    return f"memory/{now:%Y-%m-%d}.md"


def entry_target(agent: AgentConfig, file: str | None, now: datetime) -> tuple[Path, str]:
    """The real and display path an entry goes to (AccessDenied outside memory)."""
    return resolve_memory_path(file or daily_log_path(now), agent.workspace, agent.extra_path_list(), writing=True)


def format_entry(text: str, now: datetime, *, heading: str | None = None, dated: bool = True, meta: EntryMeta | None = None) -> str:
    """The block appended: a ``##`` heading (``heading``, else a timestamp
    with the date unless ``dated`` is False) with ``meta``'s comment at its
    end (DESIGN.md §17), and the text."""
    if heading is not None:
        title = " ".join(heading.split()).lstrip("#").strip()
        if not title:
            raise MemextError("the heading is empty: give a short title, or none for a timestamp")
    else:
        title = f"{now:%Y-%m-%d %H:%M}" if dated else f"{now:%H:%M}"
    if meta is not None:
        title = with_meta(split_meta(title)[0], meta)
    return f"## {title}\n{text.strip(chr(10)).rstrip()}\n"


def append_entry(
    agent: AgentConfig,
    db_path: Path,
    text: str,
    *,
    file: str | None = None,
    heading: str | None = None,
    now: datetime | None = None,
    lock_timeout: float | None = APPEND_LOCK_TIMEOUT_S,
    meta: EntryMeta | None = None,
) -> AppendResult:
    """Append ``text`` as one entry to a memory file of ``agent``.

    ``db_path`` is the agent's index (its writer lock is taken). The file
    (and its folders) is created when missing. Raises AccessDenied for a
    path outside memory and MemextError for an empty or oversized entry or
    a file that cannot be written; nothing is written then. ``meta``: the
    entry's metadata (origin, category...), dated today when it has no date.
    """
    if not isinstance(text, str) or not text.strip():
        raise MemextError("the note is empty: give the text to remember")
    if len(text) > MAX_ENTRY_CHARS:
        raise MemextError(f"the note has {len(text):,} characters; the limit is {MAX_ENTRY_CHARS:,} (split it up)")
    now = now or datetime.now()
    real, shown = entry_target(agent, file, now)
    is_daily = shown == daily_log_path(now)
    if meta is not None and meta.date is None:
        meta = dataclasses.replace(meta, date=f"{now:%Y-%m-%d}")
    entry = format_entry(text, now, heading=heading, dated=not is_daily, meta=meta)
    try:
        with writer_lock(agent, db_path, timeout=lock_timeout):
            written = _write_locked(real, shown, entry, title=f"# {now:%Y-%m-%d}\n\n" if is_daily else "")
    except OSError as exc:
        if is_disk_full(exc):
            raise DiskFull(f"cannot write {shown}: the disk is full (nothing was written; free some space and try again)") from exc
        raise MemextError(f"cannot write {shown}: {exc.strerror or exc}") from exc
    # The entry ends with its text: count its lines back from the end.
    text_lines = text.strip("\n").rstrip().count("\n") + 1
    return replace(written, text_line=max(written.start_line, written.end_line - text_lines + 1))


def _write_locked(real: Path, shown: str, entry: str, *, title: str) -> AppendResult:
    if real.exists() and not real.is_file():
        raise AccessDenied(f"{shown}: not a file")
    made = _make_folders(real.parent)
    created = not real.exists()
    try:
        fd = os.open(real, _OPEN_FLAGS, 0o644)
    except OSError:
        _remove_folders(made)
        raise
    try:
        existing = _read_all(fd)
        prefix = separator(existing, title if created else "")
        start = len(split_lines(existing.decode("utf-8", "replace") + prefix)) + 1
        data = (prefix + entry).encode("utf-8")
        _write_whole(fd, data, len(existing))
    except BaseException:
        os.close(fd)
        if created:
            _remove_created(real, made)
        raise
    os.close(fd)
    end = start + entry.count("\n") - 1
    return AppendResult(shown, start, end, start, created)


def separator(existing: bytes, title: str = "") -> str:
    """What goes between a file's bytes and an appended entry: a blank line
    unless the file ends with one, ``title`` for a file the entry creates."""
    if not existing:
        return title
    if existing.endswith((b"\n\n", b"\r\n\r\n", b"\r\r")):
        return ""
    return "\n" if existing.endswith((b"\n", b"\r")) else "\n\n"


def _write_whole(fd: int, data: bytes, size_before: int) -> None:
    """Append ``data`` and fsync it, or leave the file at ``size_before``."""
    written = 0
    try:
        # One write: O_APPEND places it at the end as a whole. A regular
        # file takes all of it unless the disk fills up; finish a short
        # write rather than leave half an entry.
        while written < len(data):
            written += os.write(fd, data[written:])
        os.fsync(fd)
    except BaseException:
        _undo(fd, size_before, written)
        raise


def _undo(fd: int, size_before: int, written: int) -> None:
    """Cut the file back to ``size_before`` when it holds exactly that plus
    the ``written`` bytes of the failed entry; bytes someone else (not a
    memext appender: those wait for the lock) appended meanwhile are never
    cut, so then the part-entry stays."""
    try:
        if os.fstat(fd).st_size == size_before + written and written:
            os.ftruncate(fd, size_before)
            os.fsync(fd)
    except OSError:
        pass  # the original error says what went wrong; nothing more can be done here


def _make_folders(folder: Path) -> list[Path]:
    """Create ``folder`` and its missing parents; the ones made, deepest first."""
    missing: list[Path] = []
    p = folder
    while not p.exists():
        missing.append(p)
        p = p.parent
    folder.mkdir(parents=True, exist_ok=True)
    return missing


def _remove_folders(made: list[Path]) -> None:
    for p in made:
        try:
            p.rmdir()
        except OSError:
            return  # someone put something there meanwhile: it stays


def _remove_created(real: Path, made: list[Path]) -> None:
    """Remove the file this append created, once the failed entry is cut
    from it (empty: nothing else was written to it), and the folders made
    for it, so a failed append leaves no empty file behind."""
    try:
        if real.stat().st_size:
            return
        real.unlink()
    except OSError:
        return
    _remove_folders(made)


def _read_all(fd: int) -> bytes:
    """The file's bytes as they are now, read through the descriptor the
    entry is written to (the writer lock keeps memext appenders out until
    the entry is written)."""
    chunks: list[bytes] = []
    offset = 0
    while True:
        chunk = os.pread(fd, 1 << 20, offset)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)
        offset += len(chunk)
