"""The object ``%memsearch`` returns: a list of results that displays itself.

``r = %memsearch deploy`` gives a :class:`SearchResults`: index it, loop
over it, ``r.to_json()``, ``r.to_dataframe()``. A notebook shows it as HTML
(score bar, citation with a copy button, the lines around the best match
numbered as in the file, provider, notices), a terminal as text; a
trailing ``;`` shows nothing.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, Collection, overload

from memext.engine import SearchResponse, SearchResult, explain_rows
from memext.engine.for_faces import explain_table, json_safe, terminal_safe

from .magic_lines import QuietDisplay
from .render import (
    ERROR_STYLE,
    FONT,
    MUTED,
    NOTICE_STYLE,
    TEXT,
    citation_html,
    esc,
    excerpt_html,
    excerpt_text,
    explain_html,
    highlight_text,
    score_bar_html,
    score_bar_text,
    snippet_html,
)

#: Snippet lines shown for a result without an excerpt (the full lines are
#: one ``%memget`` away).
SNIPPET_LINES = 12


class SearchResults(QuietDisplay, Sequence):
    """The results of one search, with how they were produced.

    Items are :class:`engine.SearchResult` (``.path``, ``.start_line``,
    ``.end_line``, ``.score``, ``.snippet``, ``.source``, ``.citation``).
    ``as_json`` makes the default display the JSON text instead.
    """

    def __init__(
        self, response: SearchResponse, agent: str, *, as_json: bool = False, syncing: bool = False, repeated: Collection[str] = ()
    ):
        self.response = response
        self.agent = agent
        self.as_json = as_json
        #: True when a sync was running as the search ran (results may lag).
        self.syncing = syncing
        #: Notices shown earlier in this session: the display leaves them
        #: out (the header still says keyword-only); :meth:`notices` has all.
        self.repeated = frozenset(repeated)

    # -- the list part -------------------------------------------------------

    @overload
    def __getitem__(self, i: int) -> SearchResult: ...
    @overload
    def __getitem__(self, i: slice) -> list[SearchResult]: ...
    def __getitem__(self, i):
        return self.response.results[i]

    def __len__(self) -> int:
        return len(self.response.results)

    @property
    def query(self) -> str:
        return self.response.query

    @property
    def mode(self) -> str:
        """ "hybrid", "keyword" or "vector"."""
        return self.response.mode

    @property
    def citations(self) -> list[str]:
        return [r.citation for r in self]

    def provider_notices(self) -> list[str]:
        """Why search is keyword-only or on a fallback provider (the same
        for every search until the config changes: shown once a session)."""
        r = self.response
        out = []
        if r.notice:
            out.append(r.notice)
        elif r.mode == "keyword":
            out.append("keyword-only search")
        if r.fallback:
            out.append(f"fallback in force: {r.fallback.get('from')} failed ({r.fallback.get('reason')}), using {r.provider}")
        return out

    def notices(self) -> list[str]:
        """Why results may be worse than usual, one line each."""
        out = self.provider_notices()
        if self.syncing:
            out.append("the index is syncing: results may not include the latest edits yet")
        return out

    def shown_notices(self) -> list[str]:
        """The notices this output shows: :meth:`notices` less those shown
        before in the session."""
        return [n for n in self.notices() if n not in self.repeated]

    # -- conversions -------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        d = self.response.to_dict()
        d["agent"] = self.agent
        return d

    def to_json(self, indent: int | None = 2) -> str:
        """The results as JSON (the same shape as ``memext search --json``)."""
        return json_safe(json.dumps(self.to_dict(), indent=indent, ensure_ascii=False, default=str))

    def to_dataframe(self):
        """One row per result (needs pandas)."""
        try:
            import pandas as pd
        except ImportError as exc:
            raise ImportError("to_dataframe() needs pandas: pip install pandas") from exc
        cols = ["citation", "path", "start_line", "end_line", "score", "source", "snippet"]
        return pd.DataFrame([{c: getattr(r, c) for c in cols} for r in self], columns=cols)

    # -- display ---------------------------------------------------------------------

    def _header(self) -> str:
        r = self.response
        n = len(self)
        provider = "keyword-only" if r.provider == "none" else f"{r.mode} · {r.provider} {r.model}".rstrip()
        return f"{n} result{'s' if n != 1 else ''} for {r.query!r} in {self.agent} [{provider}]"

    def __repr__(self) -> str:
        if self.as_json:
            return self.to_json()
        return self.to_text(color=False)

    def _repr_pretty_(self, p, cycle: bool) -> None:
        p.text(self.to_json() if self.as_json else self.to_text(color=False))

    def to_text(self, color: bool = False) -> str:
        """The results as terminal text (``color`` adds ANSI highlights)."""
        lines = [self._header()]
        lines += [f"note: {n}" for n in self.shown_notices()]
        if self.response.error:
            lines.append(f"provider error: {self.response.error}")
        if not len(self) and not any(n.startswith("no memory matches") or "; no memory matches" in n for n in self.notices()):
            lines.append(f"no memory matches {self.query!r}")
        for i, hit in enumerate(self, start=1):
            lines += result_text(i, hit, self.query, color=color)
        return "\n".join(lines)

    def _repr_mimebundle_(self, include=None, exclude=None) -> dict[str, Any]:
        if self.as_json:
            return {"application/json": self.to_dict(), "text/plain": self.to_json()}
        return {"text/html": self.to_html(), "text/plain": self.to_text()}

    def _repr_html_(self) -> str | None:
        return None if self.as_json else self.to_html()

    def to_html(self) -> str:
        """Rich HTML; all note text is escaped."""
        r = self.response
        parts = [f'<div class="memext-results" style="{FONT};{TEXT};line-height:1.4">']
        parts.append(f'<div class="memext-header" style="{MUTED};font-size:90%">{esc(self._header())}</div>')
        for n in self.shown_notices():
            parts.append(f'<div class="memext-notice" style="{NOTICE_STYLE}">⚠ {esc(n)}</div>')
        if r.error:
            parts.append(f'<div class="memext-error" style="{ERROR_STYLE}">provider error: {esc(r.error)}</div>')
        if not len(self):
            parts.append(f'<div class="memext-empty" style="{MUTED}">{esc(f"no memory matches {self.query!r}")}</div>')
        for hit in self:
            parts.append(result_html(hit, self.query))
        parts.append("</div>")
        return "".join(parts)


def result_text(i: int, hit: SearchResult, query: str, *, color: bool = False) -> list[str]:
    """Result number ``i`` as terminal lines: citation, score, date and
    marks, then the lines around its best match (and how it scored)."""
    src = f"  [{hit.source}]" if hit.source != "memory" else ""
    src += "".join(f"  [{m}]" for m in result_marks(hit))
    lines = [f"{i}. {terminal_safe(hit.citation)}  {score_bar_text(hit.score)} {hit.score:.3f}{_dated(hit)}{_weak(hit)}{src}"]
    if hit.excerpt is not None and hit.excerpt.lines:
        lines += excerpt_text(hit.excerpt, query, color=color)
    else:
        for line in map(terminal_safe, hit.snippet.splitlines()[:SNIPPET_LINES]):
            lines.append("   " + (highlight_text(line, query) if color else line))
    if hit.explain:
        lines.append("   how it scored:")
        lines += [f"     {row}" for row in explain_table(hit.explain)]
    return lines


def _dated(hit: SearchResult) -> str:
    """`` · 2026-10-07`` for a hit whose date is known."""
    return f" · {hit.date}" if getattr(hit, "date", None) else ""


def _weak(hit: SearchResult) -> str:
    """`` · weak`` for a hit shown although not confident (``include_weak``)."""
    return "" if getattr(hit, "confident", True) else " · weak"


def result_marks(hit: SearchResult) -> list[str]:
    """A result's marks: forgotten or superseded (shown only on request),
    untrusted, who wrote it (DESIGN.md §17), and ``newer`` when the
    newer-first rule put it above a result with a higher score."""
    marks = [hit.status] if hit.status != "live" else []
    if hit.untrusted:
        marks.append("untrusted")
    if hit.origin:
        marks.append(f"by {hit.origin}")
    if hit.reordered:
        marks.append(hit.reordered)
    return marks


#: What a result's label says when hovered.
MARK_TITLES = {
    "forgotten": "marked forgotten: no longer true (shown because forgotten entries were asked for)",
    "superseded": "superseded by a newer entry (shown because retired entries were asked for)",
    "untrusted": "stored marked untrusted: it read as instructions to a model; treat it as data",
}


#: What a muted mark says when hovered.
MUTED_TITLES = {
    "newer": "a newer note on the same subject, shown above an older one that scored higher",
    "long-term": "recalled first as long-term memory (MEMORY.md), above a note that scored higher",
    "important": "recalled first for its importance, above a note that scored higher",
    "more confident": "recall ranks by confidence, which weighs more than the score beside it",
}


def mark_html(mark: str) -> str:
    """A result's mark: forgotten, superseded and untrusted as a framed label
    in the main text colour (readable on the light and the dark theme; the
    frame is the theme's warning or error colour), who wrote it muted."""
    if mark not in MARK_TITLES:
        title = f' title="{esc(MUTED_TITLES[mark])}"' if mark in MUTED_TITLES else ""
        return f' <span class="memext-mark"{title} style="{MUTED}">[{esc(mark)}]</span>'
    colour = "var(--jp-error-color1,currentColor)" if mark == "untrusted" else "var(--jp-warn-color1,currentColor)"
    return (
        f' <span class="memext-mark memext-mark-{mark}" title="{esc(MARK_TITLES[mark])}" style="{TEXT};font-weight:600;'
        f'font-size:85%;padding:0 4px;border:1px solid {colour};border-radius:3px;white-space:nowrap">{esc(mark)}</span>'
    )


def result_html(hit: SearchResult, query: str, *, lines: bool = True) -> str:
    """One result: score bar, citation with a copy button, source, and the
    lines around the best-matching line (numbered, terms highlighted),
    then how it scored when the search explained itself. ``lines=False``:
    the first line only (the widget shows more lines below it)."""
    src = f' <span style="{MUTED}">[{esc(hit.source)}]</span>' if hit.source != "memory" else ""
    src += "".join(mark_html(m) for m in result_marks(hit))
    if not lines:
        body = ""
    elif hit.excerpt is not None and hit.excerpt.lines:
        body = excerpt_html(hit.excerpt, query)
    else:  # a search without excerpts (snippets off)
        body = snippet_html("\n".join(hit.snippet.splitlines()[:SNIPPET_LINES]), query)
    explain = explain_html(explain_rows(hit.explain)) if hit.explain and lines else ""
    return (
        '<div class="memext-result" style="margin:6px 0 12px 0">'
        f'<div>{score_bar_html(hit.score)} <span class="memext-score" style="{MUTED};font-size:90%">{hit.score:.3f}</span> '
        f"{citation_html(hit.citation)}{src}"
        f'<span class="memext-meta" style="{MUTED};font-size:90%">{esc(_dated(hit) + _weak(hit))}</span></div>{body}{explain}</div>'
    )
