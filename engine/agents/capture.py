"""``capture(messages, agent=...)``: what a conversation stated, written to
the agent's memory by the rules of engine/memory/capture.py (DESIGN.md §17)."""

from __future__ import annotations

from datetime import datetime
from typing import Iterable, Mapping

from ..errors import MemextError
from ..index import MemoryIndex, open_index
from ..memory.capture import (
    Candidate,
    Captured,
    CaptureReport,
    KnownMemory,
    Message,
    Skipped,
    as_messages,
    extract,
    known_memory,
)
from ..memory.discovery import discover_memory_files, read_text
from ..memory.supersede import append_superseding
from ..settings import Config


def capture(
    messages: Iterable[Message | Mapping[str, object]],
    agent: str | None = None,
    *,
    config: Config | None = None,
    index: MemoryIndex | None = None,
    dry_run: bool = False,
    include_assistant: bool = False,
    now: datetime | None = None,
) -> CaptureReport:
    """Store what ``messages`` state (preferences, facts, decisions,
    people) in the memory of ``agent`` (or of ``index``, when given).

    Writes only when ``memory_search.capture.enabled`` is true for the
    agent; otherwise, or with ``dry_run``, nothing is written and the report
    lists what would be (``written`` with no citations). Only the user's
    messages are read unless ``include_assistant``. Duplicates of what
    memory already holds are skipped, with the citation they repeat."""
    own = index is None
    idx = index if index is not None else open_index(agent, config=config)
    try:
        return _capture(idx, as_messages(messages), dry_run, include_assistant, now)
    finally:
        if own:
            idx.close()


def _capture(idx: MemoryIndex, messages: list[Message], dry_run: bool, include_assistant: bool, now: datetime | None) -> CaptureReport:
    agent = idx.agent
    enabled = agent.settings.capture.enabled
    roles = ("user", "assistant") if include_assistant else ("user",)
    known = _known(idx)
    written: list[Captured] = []
    skipped: list[Skipped] = []
    for cand in extract(messages, roles=roles):
        where = known.duplicate_of(cand.text)
        if where is not None:
            skipped.append(Skipped(cand, f"duplicate of {where}"))
            continue
        citation = None
        old = known.replaced_by(cand.text)
        if enabled and not dry_run:
            citation = _write(idx, cand, old, now)
        known.add(cand.text, citation or f"message {cand.turn + 1}")
        written.append(Captured(cand, citation, old))
    if any(c.citation for c in written):
        try:
            idx.sync(reason="note")
        except MemextError:
            pass  # the entries are on disk; the next sync indexes them
    return CaptureReport(agent.id, enabled, tuple(written), tuple(skipped))


def _write(idx: MemoryIndex, cand: Candidate, old: str | None, now: datetime | None) -> str:
    """Append a candidate (superseding ``old``); a line to supersede that
    moved since memory was read costs the mark, not the entry."""
    try:
        done = append_superseding(idx.agent, idx.db_path, cand.text, file=cand.target, meta=cand.meta(), supersedes=old, now=now)
    except MemextError:
        if old is None:
            raise
        done = append_superseding(idx.agent, idx.db_path, cand.text, file=cand.target, meta=cand.meta(), now=now)
    return done.citation


def _known(idx: MemoryIndex) -> KnownMemory:
    agent = idx.agent
    files, _ = discover_memory_files(agent.workspace, agent.extra_path_list(), agent.settings.max_file_bytes)
    texts = []
    for f in files:
        try:
            texts.append((f.path, read_text(f.abs_path)[0]))
        except (OSError, MemextError):
            continue  # an unreadable file cannot be repeated either
    return known_memory(texts)
