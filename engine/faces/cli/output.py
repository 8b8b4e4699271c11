"""The text the ``memext`` commands print: search results and status.

Kept apart from :mod:`memext.engine.faces.cli.commands` (the commands and their options)
so both stay readable; nothing here decides anything, it only formats.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

import click

from ...search.pipeline import SearchResult
from ...text import term_spans
from ...units import human_size

if TYPE_CHECKING:
    from ...status import IndexStatus, SearchMode

__all__ = ["human_size", "result_lines", "search_words", "status_lines"]

#: Marks lines of a chunk left out of the excerpt.
GAP = "⋮"


def highlight(text: str, query: str) -> str:
    """``text`` with the terms that carried the match in bold (a no-op
    where click strips styles, e.g. into a pipe)."""
    out, pos = [], 0
    for start, end in term_spans(text, query):
        out += [text[pos:start], click.style(text[start:end], bold=True, fg="yellow")]
        pos = end
    out.append(text[pos:])
    return "".join(out)


def result_marks(r: SearchResult) -> list[str]:
    """The marks shown after a result's citation: forgotten or superseded,
    untrusted, and who wrote it (DESIGN.md §17)."""
    marks = [r.status] if r.status != "live" else []
    if r.untrusted:
        marks.append("untrusted")
    if r.origin:
        marks.append(f"by {r.origin}")
    return marks


def result_lines(r: SearchResult, query: str, *, explain: bool) -> list[str]:
    """The lines below a result's citation: its excerpt with file line
    numbers (``>`` at the best line, GAP where lines are left out), then
    the explain table."""
    lines: list[str] = []
    ex = r.excerpt
    if ex is None:
        lines += [f"   {line}" for line in r.snippet.splitlines()]
    else:
        width = len(str(ex.lines[-1].number)) if ex.lines else 1
        if ex.omitted_before:
            lines.append(f"   {GAP:>{width}}")
        for ln in ex.lines:
            mark = ">" if ln.number == ex.best_line and ln.hit else " "
            lines.append(f" {mark} {ln.number:>{width}}  {highlight(ln.text, query)}".rstrip())
        if ex.omitted_after:
            lines.append(f"   {GAP:>{width}}")
    if explain and r.explain:
        from ...search.explain import explain_table  # only --explain needs it
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
    from ...status import SearchKind  # loaded with the status it words

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
    if s.last_error:
        out.append(click.style(f"  {'error':<10} {s.last_error}", fg="red"))
    return out
