"""Results read against the files' entry metadata (DESIGN.md §17).

The index holds text; whether an entry was forgotten, superseded or stored
untrusted, and where it came from, is read from the memory file at search
time, from the lines each result cites. The file is the truth: a mark takes
effect at once, before any sync.
"""

from __future__ import annotations

import dataclasses
import os
from typing import TYPE_CHECKING, Any, Callable, NamedTuple, Sequence

from ..settings import AgentConfig
from .results import SearchResult

if TYPE_CHECKING:  # the parser loads only for a file that holds a comment
    from ..memory.entries import FileEntries, LineInfo
    from .judging import FileMarks


class Marked(NamedTuple):
    """Results with their marks filled in, and the cited files that can no
    longer be read (path -> why), whose results are left out."""

    results: list[SearchResult]
    unreadable: dict[str, str]


class _Look(NamedTuple):
    """One file as a search last found it: its stat and its entries."""

    mtime_ns: int
    size: int
    ctime_ns: int
    entries: FileEntries | None


def annotate(results: Sequence[SearchResult], agent: AgentConfig, *, include_retired: bool = False) -> Marked:
    """``results`` with ``origin``, ``status``, ``untrusted``, ``importance``
    and ``category`` filled in from the files they cite; the results of a
    file that can no longer be read are left out and named in
    :attr:`Marked.unreadable`. Each cited file is looked at once.

    A chunk holds several entries: each retired one among a result's lines
    is marked where it is shown (:attr:`~.excerpt.ExcerptLine.retired`),
    its text left out of the excerpt and the snippet unless
    ``include_retired`` (DESIGN.md §17)."""
    files: dict[str, FileEntries | None] = {}
    unreadable: dict[str, str] = {}
    out: list[SearchResult] = []
    for r in results:
        if r.source != "memory":
            out.append(r)
            continue
        if r.path not in files and r.path not in unreadable:
            try:
                files[r.path] = _entries(agent, r.path)
            except _Unreadable as exc:
                unreadable[r.path] = exc.why
        if r.path in unreadable:
            continue
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
                _retired_lines(r, entries, include_retired),
                date=meta_date(best) or r.date,
                origin=best.origin,
                status=best.status,
                untrusted=best.untrusted or span.untrusted,
                importance=best.importance,
                category=best.category,
            )
        )
    return Marked(out, unreadable)


def _retired_lines(r: SearchResult, entries: FileEntries, include_retired: bool) -> SearchResult:
    """``r`` with the lines of its retired entries marked in its excerpt and,
    unless ``include_retired``, their text left out of the excerpt and the
    snippet (a ``⋮`` that says why in its place)."""
    why = {n: w for n in range(r.start_line, min(r.end_line, len(entries.lines)) + 1) if (w := retired_why(entries, n))}
    if not why:
        return r
    excerpt = r.excerpt
    if excerpt is not None:
        lines = tuple(
            dataclasses.replace(ln, retired=why[ln.number], text=ln.text if include_retired else "", hit=ln.hit and include_retired)
            if ln.number in why
            else ln
            for ln in excerpt.lines
        )
        excerpt = dataclasses.replace(excerpt, lines=lines)
    snippet = r.snippet
    if not include_retired and snippet:
        first = r.snippet_line or r.start_line
        snippet = "\n".join(f"⋮ {why[n]}" if n in why else line for n, line in enumerate(snippet.split("\n"), start=first))
    return dataclasses.replace(r, excerpt=excerpt, snippet=snippet)


def meta_date(info: LineInfo) -> str | None:
    """The ISO day the metadata of a line's entry (or of its section's
    heading) says it is from (``date=``; a consolidated copy keeps its
    source's), else None: it dates the entry before any heading does."""
    from ..note_dates import parse_iso

    for unit in (info.block_unit, info.heading_unit):
        if unit is not None and unit.meta is not None and unit.meta.date:
            parsed = parse_iso(unit.meta.date)
            if parsed is not None:
                return parsed.date().isoformat()
    return None


def retired_why(entries: FileEntries, number: int) -> str | None:
    """Why line ``number``'s entry no longer holds (``"superseded by
    PATH:LINE"``, ``"superseded"``, ``"forgotten"``), None while it does."""
    retired = entries.retired(number)
    return retired.why if retired is not None else None


def file_marks(agent: AgentConfig) -> Callable[[str, str], FileMarks]:
    """The retired entries of a file of ``source`` at ``path`` as it says
    now (:class:`~.judging.FileMarks`): what judging asks so that the entry
    that answers is a live one (DESIGN.md §17). Each file is looked at as
    :func:`annotate` looks at it (once per stat); one that cannot be read
    has no marks here (:func:`annotate` leaves its results out)."""
    from .judging import NO_MARKS

    def marks(source: str, path: str) -> FileMarks:
        if source != "memory":
            return NO_MARKS
        try:
            entries = _entries(agent, path)
        except _Unreadable:
            return NO_MARKS
        if entries is None:
            return NO_MARKS
        key = id(entries)
        got = _MARKS.get(key)
        if got is None or got[0] is not entries:
            _remember(_MARKS, _PARSED_MAX, key, (entries, _marks_of(entries)))
            got = _MARKS[key]
        return got[1]

    return marks


def _marks_of(entries: FileEntries) -> FileMarks:
    from .judging import FileMarks

    blocks = {u.start: u.meta.by if u.meta.superseded else None for u in entries.blocks if u.meta is not None and u.meta.retired}
    sections = tuple(
        (u.start, u.end, u.meta.by if u.meta.superseded else None) for u in entries.headings if u.meta is not None and u.meta.retired
    )
    return FileMarks(blocks, sections)


#: The marks of parsed files (:func:`file_marks`), by the parse they were
#: read from (kept with it, so a new parse of the file is read anew).
_MARKS: dict[int, tuple[FileEntries, FileMarks]] = {}


class _Unreadable(Exception):
    """A cited file that can no longer be read; ``why`` says how, for the notice."""

    def __init__(self, why: str):
        super().__init__(why)
        self.why = why


#: Files as last looked at, by real path: a search reads only the files its
#: results cite, and most are unchanged since the last search. A file
#: without metadata, most of them, is remembered by its stat alone, so a
#: long-lived process keeps thousands; parsed files hold their lines.
_PLAIN: dict[str, tuple[int, int, int]] = {}
_PLAIN_MAX = 8192
_PARSED: dict[str, _Look] = {}
_PARSED_MAX = 256


def _entries(agent: AgentConfig, path: str) -> FileEntries | None:
    """The file's entries; None when it has no metadata at all (nothing to
    read from it). Raises :class:`_Unreadable` when the file can no longer
    be read: the index may hold a file's old text until the next sync, and
    a citation ``get`` cannot open must not be offered."""
    # The index holds only paths that passed the memory path rules when it
    # was synced, and only metadata is read from the file here, so the
    # path is joined, not checked again (that costs more than the search).
    real = path if os.path.isabs(path) else os.path.join(agent.workspace, path)
    try:
        st = os.stat(real)
        # A file read before with the same stat is readable still: a chmod
        # (which keeps the mtime the change check compares) moves its ctime.
        seen = (st.st_mtime_ns, st.st_size, st.st_ctime_ns)
        if _PLAIN.get(real) == seen:
            return None
        look = _PARSED.get(real)
        if look is not None and (look.mtime_ns, look.size, look.ctime_ns) == seen:
            return look.entries
        with open(real, "rb") as f:
            data = f.read()
    except OSError:
        raise _Unreadable("no longer exists" if not os.path.lexists(real) else "can no longer be read") from None
    if b"<!--" not in data:  # decoded only when there is metadata to read
        _remember(_PLAIN, _PLAIN_MAX, real, seen)
        _PARSED.pop(real, None)
        return None
    from ..memory.entries import parse_entries

    # Line ends as a file read as text has them (universal newlines).
    entries = parse_entries(data.decode("utf-8", errors="replace").replace("\r\n", "\n").replace("\r", "\n"))
    _remember(_PARSED, _PARSED_MAX, real, _Look(*seen, entries))
    _PLAIN.pop(real, None)
    return entries


def _remember(cache: dict[Any, Any], most: int, key: Any, value: Any) -> None:
    if len(cache) >= most:
        cache.clear()
    cache[key] = value


def live_results(search: Callable[[int], list[SearchResult]], agent: AgentConfig, max_results: int, *, include_retired: bool) -> Marked:
    """``search(n)`` annotated, forgotten and superseded results left out
    unless ``include_retired``. When some were left out, searches once more
    with room for them, so up to ``max_results`` live results come back."""
    marked = annotate(search(max_results), agent, include_retired=include_retired)
    if include_retired:
        return marked
    live = [r for r in marked.results if r.status == "live"]
    if len(live) == len(marked.results):
        return Marked(live, marked.unreadable)
    wider = annotate(search(max_results + 2 * (len(marked.results) - len(live)) + 4), agent, include_retired=False)
    return Marked([r for r in wider.results if r.status == "live"][:max_results], wider.unreadable)


def left_out_notice(unreadable: dict[str, str]) -> str | None:
    """The notice naming the files whose results a search left out because
    they can no longer be read (:func:`annotate`): the index
    may hold a file's old text until the next sync (a chmod keeps the stat
    the change check compares)."""
    if not unreadable:
        return None
    listed = ", ".join(f"{path} {why}" for path, why in unreadable.items())
    return f"left out results of files since changed: {listed} (the next sync updates the index)"
