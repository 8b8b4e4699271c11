"""Writing notes into memory (``%%memnote``): the write side of memory.

The engine does the writing (``memext.engine.append_entry``, the code
behind ``memory_append`` and ``memext note``): a note is appended under a
timestamp heading to today's daily log, to ``MEMORY.md`` or to another
memory file, and the engine's path rules keep it inside memory. This module
only maps the magic's options onto it.
"""

from __future__ import annotations

from datetime import datetime

from memext.engine import LONG_TERM_FILE, AgentConfig, AppendResult, EntryMeta, MemextError, append_entry

#: A note's provenance in its metadata comment (DESIGN.md §17).
NOTEBOOK_ORIGIN = EntryMeta(origin="person", via="notebook")
#: What a written note is (kept as a name for the notebook's callers).
WrittenNote = AppendResult


def append_note(
    agent: AgentConfig, body: str, *, file: str | None = None, long_term: bool = False, now: datetime | None = None
) -> AppendResult:
    """Append ``body`` to a memory file of ``agent``; returns where it went.

    The file (and ``memory/``) is created when missing; a daily log starts
    with a ``# YYYY-MM-DD`` title. The heading carries the date as well
    unless the file is today's daily log.
    """
    if file and long_term:
        raise MemextError("use either --file or --long-term, not both")
    if not body.strip():
        raise MemextError("the note is empty: write it in the cell body under %%memnote")
    return append_entry(agent, agent.db_path(), body, file=LONG_TERM_FILE if long_term else file, now=now, meta=NOTEBOOK_ORIGIN)
