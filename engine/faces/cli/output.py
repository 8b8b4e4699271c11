"""The text the ``memext`` commands print: search results and status.

Kept apart from :mod:`memext.engine.faces.cli.commands` (the commands and their options)
so both stay readable; nothing here decides anything, it only formats.
"""

from __future__ import annotations

import os
import shutil
import sys
import time
import unicodedata
from typing import TYPE_CHECKING, Sequence

import click

from ... import SearchResult
from ...for_faces import human_size, term_spans, terminal_safe

if TYPE_CHECKING:
    from ... import IndexStatus, SearchMode

__all__ = ["human_size", "listed_results", "output_width", "result_lines", "search_words", "status_lines", "terminal_safe"]

#: Marks lines of a chunk left out of the excerpt.
GAP = "⋮"
#: The fewest columns a wrapped note line keeps for its text: on a terminal
#: narrower than its gutter plus this, lines are left to the terminal.
MIN_TEXT_COLUMNS = 20


def highlight(text: str, query: str, start: int = 0, end: int | None = None) -> str:
    """``text[start:end]`` with the terms that carried the match (found in
    the whole ``text``) in bold (a no-op where click strips styles, e.g.
    into a pipe)."""
    end = len(text) if end is None else end
    out, pos = [], start
    for a, b in term_spans(text, query):
        a, b = max(a, start), min(b, end)
        if a < b:
            out += [text[pos:a], click.style(text[a:b], bold=True, fg="yellow")]
            pos = b
    out.append(text[pos:end])
    return "".join(out)


def result_marks(r: SearchResult) -> list[str]:
    """The marks shown after a result's citation: forgotten or superseded,
    untrusted, who wrote it (DESIGN.md §17), and ``newer`` when the
    newer-first rule put it above a result with a higher score."""
    marks = [r.status] if r.status != "live" else []
    if r.untrusted:
        marks.append("untrusted")
    if r.origin:
        marks.append(f"by {r.origin}")
    if r.reordered:
        marks.append(r.reordered)
    return marks


def output_width() -> int | None:
    """The columns note lines wrap to: ``$COLUMNS``, else the terminal's
    when stdout is one; None (no wrapping) into a pipe or a file."""
    cols = os.environ.get("COLUMNS", "")
    if cols.isdigit() and int(cols) > 0:
        return int(cols)
    try:
        return shutil.get_terminal_size().columns if sys.stdout.isatty() else None
    except (AttributeError, ValueError):  # no real stdout
        return None


def _cells(ch: str) -> int:
    """Terminal columns of one character: 2 for wide East Asian ones, 0 for
    combining marks."""
    if unicodedata.combining(ch):
        return 0
    return 2 if unicodedata.east_asian_width(ch) in "WF" else 1


def wrap_spans(text: str, room: int) -> list[tuple[int, int]]:
    """``text`` cut into (start, end) pieces of at most ``room`` columns:
    at the last space (the spaces at a cut are dropped), unless the word
    after it is too long for any line (a URL, CJK without spaces), which
    then fills the line and goes on below, as textwrap does."""
    pieces: list[tuple[int, int]] = []
    start, used, space = 0, 0, -1
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == " ":
            space = i
        used += _cells(ch)
        if used > room and i > start:
            at_space = space > start and _word_cells(text, space + 1) <= room
            cut, resume = (space, space + 1) if at_space else (i, i)
            pieces.append((start, cut))
            while resume < len(text) and text[resume] == " ":
                resume += 1
            start, used, space, i = resume, 0, -1, resume
            continue
        i += 1
    if start < len(text) or not pieces:
        pieces.append((start, len(text)))
    return pieces


def _word_cells(text: str, start: int) -> int:
    """Columns of the word that starts at ``start`` (up to the next space)."""
    end = text.find(" ", start)
    return sum(_cells(ch) for ch in text[start : end if end >= 0 else len(text)])


def _hanging(gutter: str, text: str, query: str, width: int | None) -> list[str]:
    """``gutter`` + ``text``; past ``width`` columns the text wraps under
    itself (a hanging indent), never under the gutter."""
    room = width - len(gutter) if width else 0
    if room < MIN_TEXT_COLUMNS:
        return [f"{gutter}{highlight(text, query)}".rstrip()]
    pad = " " * len(gutter)
    return [f"{gutter if n == 0 else pad}{highlight(text, query, a, b)}".rstrip() for n, (a, b) in enumerate(wrap_spans(text, room))]


def listed_results(results: Sequence[SearchResult], query: str, *, explain: bool = False, scored: bool = True) -> list[str]:
    """The lines that list ``results`` (``memext search``, ``memext recall
    --list``): per result, a heading (number, citation, date, weak, source,
    marks, and with ``scored`` its confidence and score, last on the line
    so scripts read them there), its :func:`result_lines` and a blank line."""
    width = output_width()
    lines: list[str] = []
    for i, r in enumerate(results, start=1):
        citation = terminal_safe(r.citation)  # a file name can hold control characters too
        lines.append(
            click.style(f"{i}. {citation}", bold=True)
            + (f"  {r.date}" if r.date else "")
            + ("" if r.confident else click.style("  weak", fg="yellow"))
            + (f"  [{r.source}]" if r.source != "memory" else "")
            + "".join(f"  [{m}]" for m in result_marks(r) if scored or m != r.reordered)  # unscored: no order to explain
            + (f"  confidence {r.confidence:.2f}  score {r.score:.3f}" if scored else "")
        )
        lines += result_lines(r, query, explain=explain, width=width)
        lines.append("")
    return lines


def result_lines(r: SearchResult, query: str, *, explain: bool, width: int | None = None) -> list[str]:
    """The lines below a result's citation: its excerpt with file line
    numbers (``>`` at the best line, GAP where lines are left out), then
    the explain table. Past ``width`` columns a line wraps under its text."""
    lines: list[str] = []
    ex = r.excerpt
    if ex is None:
        for line in r.snippet.splitlines():
            lines += _hanging("   ", terminal_safe(line), "", width)
    else:
        digits = len(str(ex.lines[-1].number)) if ex.lines else 1
        if ex.omitted_before:
            lines.append(f"   {GAP:>{digits}}")
        for ln in ex.lines:
            mark = ">" if ln.number == ex.best_line and ln.hit else " "
            lines += _hanging(f" {mark} {ln.number:>{digits}}  ", terminal_safe(ln.shown), query, width)
        if ex.omitted_after:
            lines.append(f"   {GAP:>{digits}}")
    if explain and r.explain:
        from ...for_faces import explain_table  # only --explain needs it

        lines.append(click.style("   how it scored:", dim=True))
        lines += [click.style(f"     {row}", dim=True) for row in explain_table(r.explain)]
    return lines


def ago(ts: float | None) -> str:
    """``"5 min ago"``; ``"never"`` for no time."""
    if not ts:
        return "never"
    secs = max(0, time.time() - ts)
    for unit, size in (("d", 86400), ("h", 3600), ("min", 60)):
        if secs >= size:
            return f"{secs / size:.0f} {unit} ago"
    return f"{secs:.0f} s ago"


def search_words(mode: SearchMode) -> str:
    """``hybrid (local all-MiniLM...) search``, ``keyword-only search`` or
    ``search turned off``: the status line's words for the mode."""
    from ... import SearchKind  # loaded with the status it words

    return "search turned off" if mode.kind == SearchKind.OFF else f"{mode.describe()} search"


def status_lines(s: IndexStatus) -> list[str]:
    """The text form of one agent's status: plain words, no ``None``."""
    out = [click.style(s.agent, bold=True) + f": {search_words(s.search_mode)}"]

    def row(label: str, value: str) -> None:
        out.append(f"  {label:<10} {value}")

    row("workspace", s.workspace)
    row("index", s.db_path)
    if s.read_only:
        row("read-only", f"{s.read_only}: searched as it is, it cannot be updated")
    row("files", ", ".join(f"{k} {v}" for k, v in s.files.items()) or "none indexed yet")
    row("chunks", ", ".join(f"{k} {v}" for k, v in s.chunks.items()) or "none yet")
    prov = s.provider
    if prov.in_force == "none":
        row("provider", f"none (requested {prov.requested})")
    else:
        row("provider", f"{prov.in_force} {prov.model} (requested {prov.requested})".replace("  ", " "))
        row("embedding", prov.embedded)
    if prov.reason:
        row("", prov.reason)
    if s.keyword_only_reason:
        row("", f"keyword-only because {s.keyword_only_reason}")
    if s.fallback:
        row("fallback", f"from {s.fallback.from_provider}: {s.fallback.reason}")
    vec = s.vector
    pg = s.storage.backend == "postgres"
    ext = "pgvector" if pg else "sqlite-vec"
    how = {"exact": "an exact scan", "hnsw": "an HNSW index"}.get(vec.backend, vec.backend)
    if not vec.available:
        row("vectors", f"unavailable ({vec.error or 'no ' + ext})")
    elif vec.dims is None:
        row("vectors", f"none stored yet ({ext} {vec.extension})")
    else:
        row("vectors", f"{vec.dims} dimensions, searched with {how} ({ext} {vec.extension})")
    if pg:
        row("keyword", "BM25 over FTS5's terms, in PostgreSQL")
        row("postgres", f"{s.storage.version} ({s.storage.binding})")
    else:
        row("keyword", "FTS5" if s.fts.available else f"unavailable ({s.fts.error or 'no FTS5'})")
        row("sqlite", f"{s.storage.binding} {s.storage.version}")
    cap = f" of at most {s.cache.max_entries}" if s.cache.max_entries else ""
    row("cache", f"{s.cache.entries}{cap} embeddings" if s.cache.enabled else "off")
    if s.local_model:
        lm = s.local_model
        row("model", f"{lm.model_file}, probe {lm.probe or 'not run yet'}{', loaded' if lm.loaded else ''}")
    if s.batch:
        b = s.batch
        extra = f", {len(b.pending)} pending job(s)" if b.pending else ""
        reason = f" ({b.disabled_reason})" if b.disabled_reason else ""
        row("batch", f"{b.mode}, {b.failures} failure(s){extra}{reason}")
    last = s.last_sync
    row("last sync", f"{ago(last.at)}, took {last.duration_s:.1f} s" if last else "never (run `memext index`)")
    if s.settings_changed:
        then = "it is read-only, so it is searched as it was built" if s.read_only else "the next sync rebuilds it (`memext index`)"
        row("settings", f"changed since the index was built (provider, model or chunking): {then}")
    if s.dirty and s.read_only:
        row("changes", "memory files changed since the index was built; it is read-only, so they are not in it")
    elif s.dirty:
        row("changes", "memory files changed since the last sync (`memext index` or a search syncs them)")
    for item in s.skipped:
        row("skipped", f"{item.path}: {item.reason}")
    too_big = s.long_term.warning() if s.long_term else None
    if too_big:
        out.append(click.style(f"  {'warning':<10} {too_big}", fg="yellow"))
    for problem in s.problems:
        out.append(click.style(f"  {'error':<10} {problem}", fg="red"))
    return out
