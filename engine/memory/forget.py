"""Forgetting and superseding entries: marked in the file, never deleted
(DESIGN.md §17).

A mark is merged into the metadata comment at the end of the entry's first
line (engine/memory/entries.py), so the file keeps every line and every
citation into it stays true. The rewrite runs under the agent's writer
lock, as appends do (engine/memory/append.py), and replaces the file in one
``os.replace`` of a fully written and fsynced copy: a crash leaves the old
file or the new one, never half of either.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from ..config import AgentConfig
from ..errors import BadLineRange, MemextError
from ..store import writer_lock
from .append import APPEND_LOCK_TIMEOUT_S
from .entries import FileEntries, Mark, Unit, mark_lines, parse_entries
from .read import cite_lines, parse_get_spec, resolve_memory_path


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

    def to_dict(self) -> dict:
        return {
            "path": self.path,
            "status": self.status,
            "marked": list(self.marked),
            "already": list(self.already),
            "reason": self.reason,
            "by": self.by,
        }


def parse_citation(spec: str) -> tuple[str, int, int]:
    """``PATH:LINE`` or ``PATH:FROM-TO`` -> (path, from, to); a line is required."""
    path, start, count = parse_get_spec(spec.strip())
    if start is None:
        raise BadLineRange(f"{spec}: say which entry, as PATH:LINE or PATH:FROM-TO (a search result's citation)")
    return path, start, start + (count or 1) - 1


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
    real, shown, _, _ = entries_at(agent, spec)
    try:
        with writer_lock(agent, db_path, timeout=lock_timeout):
            # Read again under the lock: an append may have landed since.
            _, _, entries, units = entries_at(agent, spec)
            fresh = [u for u in units if not (u.meta and u.meta.retired)]
            done = [u for u in units if u.meta and u.meta.retired]
            if fresh:
                _replace(real, "\n".join(mark_lines(entries.lines, fresh, mark)))
    except OSError as exc:
        raise MemextError(f"cannot write {shown}: {exc.strerror or exc}") from exc
    return RetireResult(
        path=shown,
        status="superseded" if by else "forgotten",
        marked=tuple(cite_lines(shown, u.start, u.end) for u in fresh),
        already=tuple(cite_lines(shown, u.start, u.end) for u in done),
        reason=reason,
        by=by,
    )


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


def _replace(real: Path, text: str) -> None:
    """Write ``text`` to a sibling temporary file, fsync it, rename it over ``real``."""
    mode = real.stat().st_mode & 0o7777
    fd, tmp = tempfile.mkstemp(prefix=f".{real.name}.", suffix=".tmp", dir=real.parent)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(text.encode("utf-8"))
            out.flush()
            os.fsync(out.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, real)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
