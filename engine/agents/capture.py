"""``capture(messages, agent=...)``: what a conversation stated, written to
the agent's memory by the rules of engine/memory/capture.py (DESIGN.md §17).

Calling it is consent: ``memext capture FILE`` and a program's call store
what they find. ``memory_search.capture.enabled`` gates automatic capture
only (``automatic=True``: the agent-loop helpers, the MCP server's
``memory_capture`` tool), which stores nothing for an agent that has not
turned it on."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from typing import Iterable, Mapping

from ..citations import cite_lines
from ..errors import MemextError
from ..index import MemoryIndex, open_index
from ..memory import changes
from ..memory.append import LONG_TERM_FILE, AppendResult, entry_title
from ..memory.capture import (
    Candidate,
    Captured,
    CaptureReport,
    KnownMemory,
    Message,
    Skipped,
    as_messages,
    content_tokens,
    extract,
    known_memory,
)
from ..memory.discovery import discover_memory_files, read_text
from ..memory.entries import parse_entries, strip_meta
from ..memory.read import resolve_memory_path
from ..memory.supersede import append_superseding
from ..settings import Config

#: How many search results a change of fact is checked against.
_CHANGE_POOL = 6


def capture(
    messages: Iterable[Message | Mapping[str, object]],
    agent: str | None = None,
    *,
    config: Config | None = None,
    index: MemoryIndex | None = None,
    dry_run: bool = False,
    include_assistant: bool = False,
    automatic: bool = False,
    sync: bool = True,
    now: datetime | None = None,
) -> CaptureReport:
    """Store what ``messages`` state (preferences, facts, decisions,
    people, changes of fact) in the memory of ``agent`` (or of ``index``,
    when given).

    A call stores what it finds: calling is consent. ``automatic=True``
    is for capture nobody asked for each time (an agent loop capturing
    every turn, a server hook): it writes only when
    ``memory_search.capture.enabled`` is true for the agent, and otherwise
    reports what it would have stored, with a notice. ``dry_run`` writes
    nothing. Only the user's messages are read unless
    ``include_assistant``. Duplicates of what memory already holds are
    skipped, with the citation they repeat; a change of fact supersedes
    the entry it replaces when the search finds one (``Captured.supersedes``).
    ``sync=False`` leaves indexing what was written to the caller (a
    freshness keeper that owns the index)."""
    own = index is None
    idx = index if index is not None else open_index(agent, config=config)
    try:
        return _capture(idx, as_messages(messages), dry_run, include_assistant, automatic, sync, now)
    finally:
        if own:
            idx.close()


def _capture(
    idx: MemoryIndex, messages: list[Message], dry_run: bool, include_assistant: bool, automatic: bool, sync: bool, now: datetime | None
) -> CaptureReport:
    agent = idx.agent
    enabled = agent.settings.capture.enabled
    store = not dry_run and (enabled or not automatic)
    notice = None
    if automatic and not enabled and not dry_run:
        notice = (
            f"automatic capture is off for agent {agent.id!r}: nothing was written "
            "(set memory_search.capture.enabled = true to let it store)"
        )
    roles = ("user", "assistant") if include_assistant else ("user",)
    run = _Run(idx, now or datetime.now(), store, sync)
    written: list[Captured] = []
    skipped: list[Skipped] = []
    for cand in extract(messages, roles=roles):
        if cand.unnamed:
            skipped.append(Skipped(cand, f"says {cand.unnamed!r} without naming who"))
            continue
        where = run.known.duplicate_of(cand.text)
        if where is not None:
            skipped.append(Skipped(cand, f"duplicate of {where}"))
            continue
        old = run.replaced(cand) if changes.states_change(cand.text) or changes.announces_change(cand.text) else None
        citation = run.write(cand, old) if store else None
        run.known.add(cand.text, citation or f"message {cand.turn + 1}")
        written.append(Captured(cand, citation, old.citation if old else None, old.text if old else None))
    if run.unsynced and sync:
        try:
            idx.sync(reason="note")
        except MemextError:
            pass  # the entries are on disk; the next sync indexes them
    return CaptureReport(agent.id, enabled, tuple(written), tuple(skipped), stored=store, notice=notice)


@dataclass(frozen=True)
class _Old:
    """An entry a change of fact replaces: its citation, file and text."""

    citation: str
    path: str
    text: str


class _Run:
    """One capture's writes: one heading per file (the run's minute), the
    memory read once and kept up to date as entries are written."""

    def __init__(self, idx: MemoryIndex, now: datetime, store: bool, sync: bool = True):
        self.idx, self.now, self.store, self.sync = idx, now, store, sync
        self.known = _known(idx)
        self.unsynced = self.synced = False
        self.heading = entry_title(None, now)

    def replaced(self, cand: Candidate) -> _Old | None:
        """The live entry ``cand`` (a sentence that may announce a change)
        replaces: among the confident results of searches for what it is
        about (:func:`_queries`), the entry
        :func:`~..memory.changes.replaces` agrees with that shares most of
        its words; None when there is none."""
        if self.sync and (self.unsynced or not self.synced):  # files edited since, and this run's entries, are candidates too
            try:
                self.idx.sync(reason="note")
                self.unsynced, self.synced = False, True
            except MemextError:
                pass
        hits = []
        for query in _queries(cand.text):
            try:
                hits += self.idx.search(query, max_results=_CHANGE_POOL, log_use=False).results
            except MemextError:
                continue
        mine = content_tokens(cand.text)
        best: tuple[int, _Old] | None = None
        for r in hits:
            if r.source != "memory" or not r.confident or r.status != "live":
                continue
            for old in _entries_of(self.idx, r.path, r.start_line, r.end_line):
                theirs = content_tokens(old.text)
                if changes.replaces(cand.text, old.text, mine, theirs):
                    shared = len(mine & theirs)
                    if best is None or shared > best[0]:
                        best = (shared, old)
        return best[1] if best else None

    def write(self, cand: Candidate, old: _Old | None) -> str:
        """Append ``cand`` as a list item under the run's heading (MEMORY.md
        when it replaces an entry there); a line to supersede that moved
        since it was found costs the mark, not the entry."""
        target = LONG_TERM_FILE if old is not None and old.path == LONG_TERM_FILE else cand.target
        try:
            done = self._append(cand, target, old.citation if old else None)
        except MemextError:
            if old is None:
                raise
            done = self._append(cand, target, None)
        self.unsynced = True
        return done.citation

    def _append(self, cand: Candidate, target: str | None, supersedes: str | None) -> AppendResult:
        agent = self.idx.agent
        text = f"- {cand.text}"
        return append_superseding(
            agent,
            self.idx.db_path,
            text,
            file=target,
            heading=self.heading,
            meta=cand.meta(),
            supersedes=supersedes,
            now=self.now,
            meta_on_text=True,
        )


def _queries(text: str) -> list[str]:
    """What to search for the entry a change of fact replaces: the old
    value it names ("not Lagos"), the names it holds ("Gullwing", "CI",
    a capitalised content word opening it),
    else its longest content words one by one. Not the sentence itself:
    most of its words are the new value and the telling of the change,
    which the old entry does not hold, so a search for all of them finds
    it weak at best."""
    queries = list(dict.fromkeys(changes.old_values(text)))
    # A name that opens the sentence ("Ada moved to Abuja") is its subject,
    # though names() leaves opening words out (most are just capitalised).
    opening = re.match(r"\s*([A-ZÀ-Ý][\w-]+)", changes.CHANGE.sub(" ", text))
    subject = [opening.group(1)] if opening and content_tokens(opening.group(1)) else []
    queries += list(dict.fromkeys(changes.names(text) + subject))
    if not queries:
        words = sorted(content_tokens(changes.CHANGE.sub(" ", text)), key=len, reverse=True)
        queries = words[:_CHANGE_WORDS]
    return [q for q in queries if q.strip()][: _CHANGE_WORDS + 2]


#: How many words a change of fact with no name is searched by.
_CHANGE_WORDS = 3


def _entries_of(idx: MemoryIndex, path: str, start: int, end: int) -> list[_Old]:
    """The live entries (list items, paragraphs) of lines ``start..end`` of a memory file."""
    try:
        real, _ = resolve_memory_path(path, idx.agent.workspace, idx.agent.extra_path_list())
        entries = parse_entries(real.read_bytes().decode("utf-8", "replace"))
    except (OSError, MemextError):
        return []
    out: list[_Old] = []
    for unit in entries.blocks:
        if unit.end < start or unit.start > end:
            continue
        if entries.span_info(unit.start, unit.end).status != "live":
            continue
        text = " ".join(strip_meta(entries.lines[n - 1]).strip() for n in range(unit.start, unit.end + 1))
        out.append(_Old(cite_lines(path, unit.start, unit.end), path, text))
    return out


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
