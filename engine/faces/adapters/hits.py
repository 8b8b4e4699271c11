"""What every adapter does with a search: run it, and describe each hit
with the same citation metadata (one definition for all frameworks)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, Mapping, Protocol, Sequence

from ... import ReadResult, SearchResponse, SearchResult

Content = Literal["snippet", "lines"]


class Searchable(Protocol):
    """What an adapter needs of an index (a :class:`MemoryIndex` is one)."""

    def search(
        self,
        query: str,
        max_results: int | None = None,
        min_score: float | None = None,
        sources: Sequence[str] | None = None,
        **kwargs: Any,
    ) -> SearchResponse: ...

    def get(self, path: str, from_line: int | None = None, lines: int | None = None) -> ReadResult: ...


@dataclass(frozen=True)
class Hit:
    """One search result as an adapter hands it on."""

    id: str  # the citation, unique within one answer
    text: str
    score: float
    metadata: dict[str, Any] = field(default_factory=dict)


def hit_metadata(result: SearchResult) -> dict[str, Any]:
    """``path``, ``start_line``, ``end_line``, ``citation``, ``score`` and
    ``source`` of a result: the metadata every adapter attaches."""
    return {
        "path": result.path,
        "start_line": result.start_line,
        "end_line": result.end_line,
        "citation": result.citation,
        "score": result.score,
        "source": result.source,
        "confidence": result.confidence,
        "confident": result.confident,
    }


def search_hits(
    index: Searchable,
    query: str,
    *,
    max_results: int | None = None,
    min_score: float | None = None,
    sources: Sequence[str] | None = None,
    search_kwargs: Mapping[str, Any] | None = None,
    content: Content = "snippet",
) -> list[Hit]:
    """Search ``index`` and turn the results into :class:`Hit` s.

    ``content="lines"`` gives each hit the full text of its chunk's lines
    (read with ``get``) instead of the snippet of at most 700 characters;
    session transcripts, which ``get`` does not read, keep the snippet.
    ``search_kwargs`` go to ``index.search`` as they are.
    """
    if content not in ("snippet", "lines"):
        raise ValueError(f"content must be 'snippet' or 'lines', not {content!r}")
    response = index.search(query, max_results=max_results, min_score=min_score, sources=sources, **dict(search_kwargs or {}))
    hits = []
    for r in response.results:
        text = r.snippet
        if content == "lines" and r.source == "memory":
            text = index.get(r.path, from_line=r.start_line, lines=r.end_line - r.start_line + 1).text
        hits.append(Hit(r.citation, text, r.score, hit_metadata(r)))
    return hits
