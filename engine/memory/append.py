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
import re
from dataclasses import asdict, dataclass
from datetime import datetime
from pathlib import Path

from ..citations import cite_lines
from ..config import AgentConfig
from ..errors import AccessDenied, DiskFull, MemextError, is_disk_full
from ..store import writer_lock
from .chunking import split_lines
from .entries import EntryMeta, parse_entries, split_meta, with_meta
from .read import resolve_memory_path
from .rewrite import replace_file, shift_citations, shift_elsewhere
from .workspace import check_workspace

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
    #: (line, count) when the entry went in above other lines (under a
    #: heading in the middle of the file): ``count`` lines were inserted
    #: before ``line`` and the lines from there on moved down.
    moved: tuple[int, ...] = ()

    @property
    def citation(self) -> str:
        """The entry's own text as a citation, its heading (often just a
        time) left out: ``path:LINE`` for a one-line fact, else
        ``path:FIRST-LAST``, forms ``memext get`` and memory_get read."""
        return cite_lines(self.path, self.text_line, self.end_line)

    def to_dict(self) -> dict:
        out = {**asdict(self), "citation": self.citation}
        del out["moved"]
        return out


def daily_log_path(now: datetime) -> str:
    """Today's daily log, workspace-relative."""
    return f"memory/{now:%Y-%m-%d}.md"


def entry_target(agent: AgentConfig, file: str | None, now: datetime) -> tuple[Path, str]:
    """The real and display path an entry goes to (AccessDenied outside memory)."""
    return resolve_memory_path(file or daily_log_path(now), agent.workspace, agent.extra_path_list(), writing=True)


def entry_title(heading: str | None, now: datetime, *, dated: bool = True) -> str:
    """An entry's heading title: ``heading`` on one line, else a timestamp
    (with the date unless ``dated`` is False)."""
    if heading is None:
        return f"{now:%Y-%m-%d %H:%M}" if dated else f"{now:%H:%M}"
    title = " ".join(heading.split()).lstrip("#").strip()
    if not title:
        raise MemextError("the heading is empty: give a short title, or none for a timestamp")
    return title


def format_entry(text: str, now: datetime, *, heading: str | None = None, dated: bool = True, meta: EntryMeta | None = None) -> str:
    """The block appended under a new heading: a ``##`` heading
    (``heading``, else a timestamp with the date unless ``dated`` is
    False) with ``meta``'s comment at its end (DESIGN.md §17), and the text."""
    title = entry_title(heading, now, dated=dated)
    if meta is not None:
        title = with_meta(split_meta(title)[0], meta)
    return f"## {title}\n{text.strip(chr(10)).rstrip()}\n"


@dataclass(frozen=True)
class Entry:
    """What an append writes: under a heading titled ``title`` that the file
    has (any such heading when ``explicit``, the file's last one for a
    timestamp), else under a new one. ``meta`` goes on the new heading, or
    on the text's first line when the entry joins an existing heading (or
    ``meta_on_text``)."""

    title: str
    text: str
    meta: EntryMeta | None = None
    explicit: bool = False
    meta_on_text: bool = False

    def new_block(self) -> str:
        heading = self.title
        lines = self._lines(with_meta_first=self.meta_on_text)
        if self.meta is not None and not self.meta_on_text:
            heading = with_meta(split_meta(heading)[0], self.meta)
        return "\n".join([f"## {heading}", *lines]) + "\n"

    def joined_lines(self) -> list[str]:
        return self._lines(with_meta_first=True)

    def _lines(self, *, with_meta_first: bool) -> list[str]:
        lines = self.text.strip("\n").rstrip().split("\n")
        if with_meta_first and self.meta is not None:
            first, old = split_meta(lines[0])
            lines[0] = with_meta(first, _merged(self.meta, old)) if old is not None else with_meta(first, self.meta)
        return lines


def _merged(meta: EntryMeta, own: EntryMeta) -> EntryMeta:
    """``meta`` with what a line's own comment says put over it: the line
    is the more particular (a consolidated fact's ``date`` is its source's)."""
    fields = {f.name: getattr(meta, f.name) for f in dataclasses.fields(meta) if f.name != "extra"}
    mine = {
        f.name: getattr(own, f.name) for f in dataclasses.fields(own) if f.name != "extra" and getattr(own, f.name) not in (None, False)
    }
    extra = tuple(kv for kv in meta.extra if kv[0] not in {k for k, _ in own.extra}) + tuple(own.extra)
    return EntryMeta(**{**fields, **mine}, extra=extra)


@dataclass(frozen=True)
class Plan:
    """How an entry goes into a file's text: ``data`` appended at the end,
    or (``rewrite``) the file's whole new text, with the entry's lines, and
    the ``count`` lines inserted before line ``at`` (0: none, an append)."""

    data: str
    rewrite: bool
    start_line: int
    end_line: int
    text_line: int
    at: int = 0
    count: int = 0


def plan_entry(existing: str, entry: Entry, *, file_title: str = "") -> Plan:
    """Where ``entry`` goes in a file holding ``existing``: under the
    heading it names when the file has it (an explicit title: the last
    heading with that title, wherever it is; a timestamp: the file's last
    heading, when it is the same minute), else under a new heading at the
    end (after ``file_title`` for a file that is empty)."""
    lines = split_lines(existing)
    section = _section_of(lines, entry)
    if section is None:
        prefix = separator(existing.encode("utf-8"), file_title)
        block = entry.new_block()
        start = len(split_lines(existing + prefix)) + 1
        end = start + block.count("\n") - 1
        body = len(entry.text.strip("\n").rstrip().split("\n"))
        return Plan(prefix + block, False, start, end, max(start, end - body + 1))
    end = section
    body_lines = entry.joined_lines()
    together = _ITEM.match(lines[end - 1]) is not None and _ITEM.match(body_lines[0]) is not None
    gap = [] if together else [""]
    if all(not line.strip() for line in lines[end:]):
        # The section is the file's last: an append, the lines after it kept.
        tail_blank = len(lines) - end
        if tail_blank:
            gap = []
        prefix = "" if existing.endswith(("\n", "\r")) else "\n"
        data = prefix + "\n".join([*gap, *body_lines]) + "\n"
        start = len(lines) + len(gap) + 1
        return Plan(data, False, start, start + len(body_lines) - 1, start)
    newline = "\r\n" if "\r\n" in existing else "\n"
    inserted = [*gap, *body_lines] + ([""] if lines[end].strip() else [])
    new = lines[:end] + inserted + lines[end:]
    text = newline.join(new) + (newline if existing.endswith(("\n", "\r")) else "")
    start = end + len(gap) + 1
    return Plan(text, True, start, start + len(body_lines) - 1, start, at=end + 1, count=len(inserted))


_ITEM = re.compile(r"^\s*(?:[-*+]|\d{1,9}[.)])\s")
_HEADING_LEVEL = re.compile(r"^ {0,3}(#{1,6})(?:\s|$)")


def _title_of(line: str) -> str:
    return " ".join(split_meta(line)[0].strip().lstrip("#").split()).casefold()


def _section_of(lines: list[str], entry: Entry) -> int | None:
    """The last line with text of the section ``entry`` joins, else None."""
    headings = parse_entries(lines).headings
    if not headings:
        return None
    want = entry.title.casefold()
    if entry.explicit:
        chosen = [u for u in headings if _title_of(lines[u.start - 1]) == want]
    else:
        chosen = [headings[-1]] if _title_of(lines[headings[-1].start - 1]) == want else []
    if not chosen:
        return None
    unit = chosen[-1]
    if unit.meta is not None and unit.meta.retired:
        return None  # an entry under it would read as retired too
    level = len(_HEADING_LEVEL.match(lines[unit.start - 1]).group(1))  # type: ignore[union-attr]
    end = len(lines)
    for u in headings:
        if u.start > unit.start and len(_HEADING_LEVEL.match(lines[u.start - 1]).group(1)) <= level:  # type: ignore[union-attr]
            end = u.start - 1
            break
    while end > unit.start and not lines[end - 1].strip():
        end -= 1
    return end


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
    meta_on_text: bool = False,
) -> AppendResult:
    """Append ``text`` as one entry to a memory file of ``agent``.

    ``db_path`` is the agent's index (its writer lock is taken). The file
    (and its folders) is created when missing, the workspace never: a
    workspace that is gone or cannot be read raises WorkspaceMissing.
    Raises AccessDenied for a path outside memory and MemextError for an
    empty or oversized entry or a file that cannot be written; nothing is
    written then. ``meta``: the
    entry's metadata (origin, category...), dated today when it has no date.

    ``heading``: the entry goes under the file's heading with that title
    when there is one (the last, if several), else under a new one; with
    no ``heading``, under a timestamp heading, the file's last one when it
    is of the same minute. An entry under a heading in the middle of the
    file rewrites the file (:mod:`.rewrite`), and the citations kept in
    metadata comments that point below it move with their lines.
    ``meta_on_text``: the metadata goes on the text's first line even
    under a new heading (each entry of a heading then carries its own).
    """
    if not isinstance(text, str) or not text.strip():
        raise MemextError("the note is empty: give the text to remember")
    if len(text) > MAX_ENTRY_CHARS:
        raise MemextError(f"the note has {len(text):,} characters; the limit is {MAX_ENTRY_CHARS:,} (split it up)")
    # The workspace itself is never created: on an unmounted drive's mount
    # point the note would be out of sight once the drive is back.
    check_workspace(agent)
    now = now or datetime.now()
    real, shown = entry_target(agent, file, now)
    is_daily = shown == daily_log_path(now)
    if meta is not None and meta.date is None:
        meta = dataclasses.replace(meta, date=f"{now:%Y-%m-%d}")
    entry = Entry(entry_title(heading, now, dated=not is_daily), text, meta, explicit=heading is not None, meta_on_text=meta_on_text)
    try:
        with writer_lock(agent, db_path, timeout=lock_timeout):
            written = _write_locked(real, shown, entry, title=f"# {now:%Y-%m-%d}\n\n" if is_daily else "")
            if written.moved:
                from .discovery import discover_memory_files

                files, _ = discover_memory_files(agent.workspace, agent.extra_path_list(), agent.settings.max_file_bytes)
                shift_elsewhere(((f.abs_path, f.path) for f in files), shown, written.moved[0], written.moved[1])
    except OSError as exc:
        if is_disk_full(exc):
            raise DiskFull(f"cannot write {shown}: the disk is full (nothing was written; free some space and try again)") from exc
        raise MemextError(f"cannot write {shown}: {exc.strerror or exc}") from exc
    return written


def _write_locked(real: Path, shown: str, entry: Entry, *, title: str) -> AppendResult:
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
        plan = plan_entry(existing.decode("utf-8", "replace"), entry, file_title=title if created else "")
        if plan.rewrite:
            # Citations in the file's comments (the new entry's included) count lines as they were.
            replace_file(real, shift_citations(plan.data, shown, plan.at, plan.count))
        else:
            _write_whole(fd, plan.data.encode("utf-8"), len(existing))
    except BaseException:
        os.close(fd)
        if created:
            _remove_created(real, made)
        raise
    os.close(fd)
    moved = (plan.at, plan.count) if plan.count else ()
    return AppendResult(shown, plan.start_line, plan.end_line, plan.text_line, created, moved=moved)


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
