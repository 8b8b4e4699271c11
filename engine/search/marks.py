"""Results read against the files' entry metadata (DESIGN.md §17).

The index holds text; whether an entry was forgotten, superseded or stored
untrusted, and where it came from, is read from the memory file at search
time, from the lines each result cites. The file is the truth: a mark takes
effect at once, before any sync.
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path
from typing import Callable, Sequence

from ..config import AgentConfig
from ..memory.entries import FileEntries, parse_entries
from .results import SearchResult


def annotate(results: Sequence[SearchResult], agent: AgentConfig) -> list[SearchResult]:
    """``results`` with ``origin``, ``status``, ``untrusted``, ``importance``
    and ``category`` filled in
    from the files they cite (a file that cannot be read leaves a result as it is)."""
    files: dict[str, FileEntries | None] = {}
    out: list[SearchResult] = []
    for r in results:
        if r.source != "memory":
            out.append(r)
            continue
        if r.path not in files:
            files[r.path] = _entries(agent, r.path)
        entries = files[r.path]
        if entries is None:
            out.append(r)
            continue
        # A chunk can hold several entries: the line that matched decides
        # whether the result is retired and whose it is; any untrusted line
        # cited marks the result, since its text is in what is shown.
        span = entries.span_info(r.start_line, r.end_line)
        best = entries.info(r.best_line) if 0 < r.best_line <= len(entries.lines) and entries.lines[r.best_line - 1].strip() else span
        out.append(
            dataclasses.replace(
                r,
                origin=best.origin,
                status=best.status,
                untrusted=best.untrusted or span.untrusted,
                importance=best.importance,
                category=best.category,
            )
        )
    return out


#: Parsed files by (real path, mtime, size): a search reads only the files
#: its results cite, and most are unchanged since the last search.
_CACHE: dict[tuple[str, int, int], FileEntries | None] = {}
_CACHE_MAX = 256


def _entries(agent: AgentConfig, path: str) -> FileEntries | None:
    """The file's entries; None when it has no metadata at all (nothing to
    read from it) or cannot be read (a result is never lost to its marks)."""
    # The index holds only paths that passed the memory path rules when it
    # was synced, and only metadata is read from the file here, so the
    # path is joined, not checked again (that costs more than the search).
    real = Path(path) if os.path.isabs(path) else agent.workspace / path
    try:
        st = real.stat()
        key = (str(real), st.st_mtime_ns, st.st_size)
        if key in _CACHE:
            return _CACHE[key]
        text = real.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    entries = parse_entries(text) if "<!--" in text else None
    if len(_CACHE) >= _CACHE_MAX:
        _CACHE.clear()
    _CACHE[key] = entries
    return entries


def live_results(
    search: Callable[[int], list[SearchResult]], agent: AgentConfig, max_results: int, *, include_retired: bool
) -> list[SearchResult]:
    """``search(n)`` annotated, forgotten and superseded results left out
    unless ``include_retired``. When some were left out, searches once more
    with room for them, so up to ``max_results`` live results come back."""
    results = annotate(search(max_results), agent)
    if include_retired:
        return results
    live = [r for r in results if r.status == "live"]
    if len(live) == len(results):
        return live
    wider = annotate(search(max_results + 2 * (len(results) - len(live)) + 4), agent)
    return [r for r in wider if r.status == "live"][:max_results]
