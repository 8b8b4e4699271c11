"""Writing an entry with its provenance, refusing instruction-like text and
marking the entry it replaces (DESIGN.md §17): what ``MemoryIndex.append``,
the ``memory_append`` tool and ``memext note`` share."""

from __future__ import annotations

import dataclasses
from datetime import datetime
from pathlib import Path

from ..citations import cite_lines
from ..settings import AgentConfig
from .append import APPEND_LOCK_TIMEOUT_S, AppendResult, append_entry
from .entries import EntryMeta
from .forget import entries_at, retire
from .hostile import refuse_instructions
from .rewrite import shift_citation

#: Who wrote an entry when the caller does not say: a person, through the Python API.
API_ORIGIN = EntryMeta(origin="person", via="api")


def append_superseding(
    agent: AgentConfig,
    db_path: Path,
    text: str,
    *,
    file: str | None = None,
    heading: str | None = None,
    meta: EntryMeta | None = None,
    supersedes: str | None = None,
    now: datetime | None = None,
    lock_timeout: float | None = APPEND_LOCK_TIMEOUT_S,
    meta_on_text: bool = False,
) -> AppendResult:
    """Append ``text`` with ``meta`` (default :data:`API_ORIGIN`).

    Text that reads as instructions to a model raises
    :class:`~.hostile.HostileText` unless ``meta.untrusted`` says it is
    stored knowingly. ``supersedes`` (a citation) is checked before
    anything is written; after the append its entries are marked superseded
    by the new entry's citation. ``meta_on_text``: as for
    :func:`~.append.append_entry`."""
    meta = meta or API_ORIGIN
    if not meta.untrusted:
        refuse_instructions(text if heading is None else f"{heading}\n{text}")
    if supersedes:
        _, shown, _, units = entries_at(agent, supersedes)  # a bad citation fails before the write
        supersedes = cite_lines(shown, units[0].start, units[-1].end)
        meta = dataclasses.replace(meta, supersedes=supersedes)
    written = append_entry(
        agent, db_path, text, file=file, heading=heading, now=now, lock_timeout=lock_timeout, meta=meta, meta_on_text=meta_on_text
    )
    if not supersedes:
        return written
    if written.moved:  # the entry went in above the one it replaces: that one moved down
        supersedes = shift_citation(supersedes, written.path, *written.moved)
    marked = retire(agent, db_path, supersedes, by=written.citation, now=now, lock_timeout=lock_timeout)
    # A consolidated copy of the entry, or its source, is replaced with it (``from=``).
    return dataclasses.replace(written, superseded=marked.marked + marked.already + marked.linked)
