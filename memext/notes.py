"""Writing notes into memory (``%%memnote``): the write side of memory.

A note is appended under a timestamp heading to today's daily log
(``memory/YYYY-MM-DD.md``, created with a date title if needed), to
``MEMORY.md``, or to another memory file. The engine's path rules decide
what counts as memory, so a note can never land outside it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from memext.engine import AccessDenied, AgentConfig, MemextError, resolve_memory_path

LONG_TERM_FILE = "MEMORY.md"


@dataclass(frozen=True)
class WrittenNote:
    """Where a note went: ``path:start-end`` like a search citation."""

    path: str
    start_line: int
    end_line: int
    created: bool

    @property
    def citation(self) -> str:
        return f"{self.path}:{self.start_line}-{self.end_line}"


def daily_log_path(now: datetime) -> str:
    return f"memory/{now:%Y-%m-%d}.md"


def note_target(agent: AgentConfig, file: str | None, long_term: bool, now: datetime) -> tuple[Path, str]:
    """The real path and display path a note goes to (AccessDenied outside memory)."""
    if file and long_term:
        raise MemextError("use either --file or --long-term, not both")
    raw = file or (LONG_TERM_FILE if long_term else daily_log_path(now))
    return resolve_memory_path(raw, agent.workspace, agent.extra_path_list())


def format_note(body: str, now: datetime, *, dated: bool) -> str:
    """The block appended: a ``##`` timestamp heading and the body."""
    stamp = f"{now:%Y-%m-%d %H:%M}" if dated else f"{now:%H:%M}"
    return f"## {stamp}\n{body.strip(chr(10)).rstrip()}\n"


def append_note(agent: AgentConfig, body: str, *, file: str | None = None, long_term: bool = False,
                now: datetime | None = None) -> WrittenNote:
    """Append ``body`` to a memory file of ``agent``; returns where it went.

    The file (and ``memory/``) is created when missing; a daily log starts
    with a ``# YYYY-MM-DD`` title. The heading carries the date as well
    unless the file is today's daily log.
    """
    if not body.strip():
        raise MemextError("the note is empty: write it in the cell body under %%memnote")
    now = now or datetime.now()
    real, shown = note_target(agent, file, long_term, now)
    if real.exists() and not real.is_file():
        raise AccessDenied(f"{shown}: not a file")
    existing = real.read_bytes() if real.exists() else b""
    created = not real.exists()
    prefix = ""
    if created and shown == daily_log_path(now):
        prefix = f"# {now:%Y-%m-%d}\n\n"
    elif existing and not existing.endswith(b"\n"):
        prefix = "\n\n"
    elif existing and not existing.endswith(b"\n\n"):
        prefix = "\n"
    note = format_note(body, now, dated=shown != daily_log_path(now))
    start = (existing.decode("utf-8", "replace") + prefix).count("\n") + 1
    real.parent.mkdir(parents=True, exist_ok=True)
    # Append, never rewrite: whatever else is editing the file keeps its text.
    with open(real, "a", encoding="utf-8", newline="") as fh:
        fh.write(prefix + note)
        fh.flush()
        os.fsync(fh.fileno())
    end = start + note.count("\n") - 1
    return WrittenNote(shown, start, end, created)
