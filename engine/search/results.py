"""What a search returns: :class:`SearchResult` per hit and the
:class:`SearchResponse` around them (DESIGN.md §7), built by
:mod:`.pipeline` and read by every face."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from ..citations import cite_lines
from .excerpt import Excerpt


@dataclass
class SearchResult:
    """One hit: where it is, how well it scored, a snippet, and an
    excerpt (the lines around the best-matching line, with line numbers)."""

    path: str
    start_line: int
    end_line: int
    score: float
    snippet: str
    source: str
    explain: dict | None = None
    excerpt: Excerpt | None = None
    #: How sure the search is that this hit answers the query, 0..1
    #: (:mod:`.confidence`); ``confident``: ``confidence >= 0.5``. A result
    #: made by hand is vouched for by its maker.
    confidence: float = 1.0
    confident: bool = True
    #: How sure the search is, from this hit's evidence, that a hit shown
    #: answers the query: the answer's confidence is its best hit's, and
    #: below :data:`~.confidence.NOTHING_BELOW` the answer is "nothing"
    #: (:mod:`.confidence`).
    answer_confidence: float = 1.0
    date: str | None = None  # ISO day from the file's name or front matter, or a dated heading
    #: Where the cited entry came from (person, agent, capture; None when
    #: its file says nothing), and its marks (DESIGN.md §17): ``status`` is
    #: live, forgotten or superseded; ``untrusted`` text was stored marked.
    origin: str | None = None
    status: str = "live"
    untrusted: bool = False
    #: The cited entry's ``importance`` (0..1) and ``category`` as its
    #: metadata comment gives them; None when it says nothing.
    importance: float | None = None
    category: str | None = None
    #: The file line ``snippet`` starts at. The snippet is the cited lines,
    #: from ``start_line``, cut to 700 characters; when they run past that
    #: and the best match lies further down, it starts at a later line.
    #: None: ``start_line`` (a result made by hand).
    snippet_line: int | None = None
    #: Why the result sits above one with a higher score: ``"newer"`` when
    #: the newer-first rule moved it there (a later note on the same
    #: subject, :mod:`.updates`), ``"more confident"`` when its confidence
    #: did (results come in the order of their confidence); in a recall
    #: also ``"long-term"`` or ``"important"``. None when its place is its
    #: score's.
    reordered: str | None = None

    @property
    def best_line(self) -> int:
        """The file line that matched best (the chunk's first without an excerpt)."""
        return self.excerpt.best_line if self.excerpt else self.start_line

    @property
    def citation(self) -> str:
        """``path:start-end``, the form agents quote (``path:LINE`` for one
        line: :mod:`~memext.engine.citations`)."""
        return cite_lines(self.path, self.start_line, self.end_line)

    def to_dict(self) -> dict:
        d = asdict(self)
        del d["answer_confidence"]  # the answer's confidence says it (SearchResponse.confidence)
        if d["explain"] is None:
            del d["explain"]
        if d["excerpt"] is None:
            del d["excerpt"]
        else:  # a line says it is retired only when it is
            for line in d["excerpt"]["lines"]:
                if line["retired"] is None:
                    del line["retired"]
        d["citation"] = self.citation
        d["best_line"] = self.best_line
        if d["snippet_line"] is None:
            d["snippet_line"] = self.start_line
        return d


@dataclass
class SearchResponse:
    """The results of one search plus how they were produced.

    Behaves as a list of :class:`SearchResult`.
    """

    query: str
    results: list[SearchResult]
    mode: str  # "hybrid", "keyword" or "vector"
    provider: str  # "none" when keyword-only
    model: str
    fallback: dict | None = None  # {"from": ..., "reason": ...} when in force
    notice: str | None = None  # why search is degraded, for display
    error: str | None = None  # a provider error at query time
    stats: dict = field(default_factory=dict)
    #: The answer's confidence that a hit shown answers the query (0 with
    #: no hit); ``confident``: :data:`~.confidence.NOTHING_BELOW` and up,
    #: else the answer is "nothing".
    confidence: float = 0.0
    confident: bool = False
    weak_hidden: int = 0  # weak hits left out as none was confident (``include_weak`` shows them)
    #: ``notice``'s parts, in order: the index's state, the provider or the
    #: query's embedding, the dates asked for.
    notices: tuple[str, ...] = ()
    #: The part of ``notices`` that says search is keyword-only by set-up (no
    #: embedding provider in force, by choice or for want of one), else
    #: None: it holds for every search, so a face may say it once.
    setup_notice: str | None = None

    #: The part of ``notices`` about the answer itself: nothing confident
    #: matched ("no memory matches 'X'", weak matches left out or shown),
    #: else None. A face may say it in place of results.
    answer_notice: str | None = None

    def notice_besides_setup(self) -> str | None:
        """``notice`` without ``setup_notice``: what only this search has to say."""
        return "; ".join(n for n in self.notices if n != self.setup_notice) or None

    def notice_besides(self, *parts: str | None) -> str | None:
        """``notice`` without the given parts (e.g. ``setup_notice``, ``answer_notice``)."""
        return "; ".join(n for n in self.notices if n not in parts) or None

    def __iter__(self):
        return iter(self.results)

    def __len__(self) -> int:
        return len(self.results)

    def __getitem__(self, i):
        return self.results[i]

    def to_dict(self) -> dict:
        return {
            "query": self.query,
            "mode": self.mode,
            "provider": self.provider,
            "model": self.model,
            "fallback": self.fallback,
            "notice": self.notice,
            "error": self.error,
            "confidence": self.confidence,
            "confident": self.confident,
            "results": [r.to_dict() for r in self.results],
        }
