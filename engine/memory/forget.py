"""Forgetting and superseding entries: marked in the file, never deleted
(DESIGN.md §17).

A mark is merged into the metadata comment at the end of the entry's first
line (engine/memory/entries.py), so the file keeps every line and every
citation into it stays true. The rewrite runs under the agent's writer
lock, as appends do (engine/memory/append.py), and replaces the file in one
``os.replace`` of a fully written and fsynced copy (engine/memory/rewrite.py):
a crash leaves the old file or the new one, never half of either.

Copies follow their source: an entry consolidation copied into MEMORY.md
cites its source (``from=PATH:LINE``), and marking either marks the
other through that link, so a forgotten fact does not live on in its copy.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Sequence

from ..citations import cite_lines, parse_get_spec
from ..config import AgentConfig
from ..errors import BadLineRange, MemextError
from ..store import writer_lock
from .append import APPEND_LOCK_TIMEOUT_S
from .entries import FileEntries, Mark, Unit, mark_lines, parse_entries, strip_meta
from .read import resolve_memory_path
from .rewrite import replace_file


@dataclass(frozen=True)
class RetireResult:
    """The entries a forget or supersede marked: their citations, and the
    ones that already were (left as they were)."""

    path: str
    status: str
    marked: tuple[str, ...]
    already: tuple[str, ...]
    reason: str | None = None
    by: str | None = None
    #: Copies of the entries marked, or the sources they were copied from
    #: (``from=``), marked with them.
    linked: tuple[str, ...] = ()

    def to_dict(self) -> dict:
        return {
            "path": self.path,
            "status": self.status,
            "marked": list(self.marked),
            "already": list(self.already),
            "reason": self.reason,
            "by": self.by,
            "linked": list(self.linked),
        }


def parse_citation(spec: str) -> tuple[str, int, int]:
    """``PATH:LINE`` or ``PATH:FROM-TO`` -> (path, from, to); a line is
    required, and an end (``PATH:FROM-``, to the end, is for reading)."""
    path, start, count = parse_get_spec(spec.strip())
    if start is None or count is None:
        raise BadLineRange(f"{spec}: say which entry, as PATH:LINE or PATH:FROM-TO (a search result's citation)")
    return path, start, start + count - 1


def entries_at(agent: AgentConfig, spec: str) -> tuple[Path, str, FileEntries, list[Unit]]:
    """The file a citation points into and the units a mark there would cover."""
    path, start, end = parse_citation(spec)
    real, shown = resolve_memory_path(path, agent.workspace, agent.extra_path_list())
    entries = parse_entries(_read_text(real, shown))
    if start > len(entries.lines):
        raise BadLineRange(f"{shown} has {len(entries.lines)} line(s); line {start} is past the end")
    units = entries.units_in(start, min(end, len(entries.lines)))
    if not units:
        raise MemextError(f"{shown}:{start}-{end} holds no entry (only blank lines)")
    return real, shown, entries, units


def retire(
    agent: AgentConfig,
    db_path: Path,
    spec: str,
    *,
    reason: str | None = None,
    by: str | None = None,
    now: datetime | None = None,
    lock_timeout: float | None = APPEND_LOCK_TIMEOUT_S,
) -> RetireResult:
    """Mark the entries at citation ``spec`` forgotten (``by`` None) or
    superseded by the entry at citation ``by``, with today's date and
    ``reason``. Entries already marked are left as they are."""
    day = (now or datetime.now()).date().isoformat()
    # One line, and no "-->" that would end the comment early.
    reason = " ".join(reason.split()).replace("-->", "->") if reason else None
    mark = Mark(day, reason, by)
    fresh, done, shown, links = _mark(agent, db_path, spec, mark, lock_timeout)
    linked: list[str] = []
    seen = {shown_spec for shown_spec in (*fresh, *done)}
    while links:
        link = links.pop(0)
        if link in seen:
            continue
        seen.add(link)
        try:
            more_fresh, more_done, _, more_links = _mark(agent, db_path, link, mark, lock_timeout)
        except MemextError:
            continue  # a copy or source that is gone or moved: the entry asked for is marked all the same
        linked += more_fresh
        seen.update(more_fresh + more_done)
        links += [x for x in more_links if x not in seen]
    return RetireResult(
        path=shown,
        status="superseded" if by else "forgotten",
        marked=tuple(fresh),
        already=tuple(done),
        reason=reason,
        by=by,
        linked=tuple(linked),
    )


def _mark(
    agent: AgentConfig, db_path: Path, spec: str, mark: Mark, lock_timeout: float | None
) -> tuple[list[str], list[str], str, list[str]]:
    """Mark the entries at ``spec``: (citations marked, citations already
    marked, the file's shown path, the citations linked to them by ``from=``)."""
    real, shown, _, _ = entries_at(agent, spec)
    try:
        with writer_lock(agent, db_path, timeout=lock_timeout):
            # Read again under the lock: an append may have landed since.
            _, _, entries, units = entries_at(agent, spec)
            fresh = [u for u in units if not (u.meta and u.meta.retired)]
            done = [u for u in units if u.meta and u.meta.retired]
            if fresh:
                replace_file(real, "\n".join(mark_lines(entries.lines, fresh, mark)))
    except OSError as exc:
        raise MemextError(f"cannot write {shown}: {exc.strerror or exc}") from exc
    links = [u.meta.source for u in units if u.meta is not None and u.meta.source]
    links += copies_of(agent, shown, entries, units)
    return (
        [cite_lines(shown, u.start, u.end) for u in fresh],
        [cite_lines(shown, u.start, u.end) for u in done],
        shown,
        [x for x in links if x],
    )


def copies_of(agent: AgentConfig, shown: str, entries: FileEntries, units: list[Unit]) -> list[str]:
    """The citations of entries, in any memory file of ``agent``, copied
    from ``units`` of file ``shown``: their ``from=`` cites lines of one
    of the units, or cites the file and holds the unit's text (lines were
    added above the source since it was copied)."""
    from .discovery import discover_memory_files

    texts = {_plain(entries.lines[u.start - 1 : u.end]) for u in units}
    found: list[str] = []
    files, _ = discover_memory_files(agent.workspace, agent.extra_path_list(), agent.settings.max_file_bytes)
    for f in files:
        try:
            text = f.abs_path.read_bytes().decode("utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        if f"from={shown}:" not in text and f'from="{shown}:' not in text:
            continue
        other = parse_entries(text)
        for u in (*other.blocks, *other.headings):
            source = u.meta.source if u.meta is not None else None
            if not source:
                continue
            try:
                path, a, b = parse_citation(source)
            except MemextError:
                continue
            if path != shown:
                continue
            overlaps = any(a <= x.end and x.start <= b for x in units)
            same = _plain(other.lines[u.start - 1 : u.end]) in texts
            if overlaps or same:
                found.append(cite_lines(f.path, u.start, u.end))
    return found


def _plain(lines: Sequence[str]) -> str:
    """An entry's words without markers, metadata or case: how a copy is
    told to say what its source says."""
    from .capture import normalized

    return normalized(" ".join(strip_meta(line) for line in lines))


def _read_text(real: Path, shown: str) -> str:
    try:
        data = real.read_bytes()
    except FileNotFoundError:
        raise MemextError(f"{shown} does not exist") from None
    except OSError as exc:
        raise MemextError(f"cannot read {shown}: {exc.strerror or exc}") from exc
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise MemextError(f"{shown} is not UTF-8 text: memext does not rewrite it") from None
