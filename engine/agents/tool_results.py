"""What the memory tools return: the dicts :class:`~.tools.MemoryTools`
answers with, in the compact form a model reads (docs/agents.md, "What the
tools return"). Every field of a tool result is shaped here, in one place:
nothing the citation already says is repeated, and a key whose value would
be null is left out.
"""

from __future__ import annotations

from dataclasses import is_dataclass
from typing import Any

from ..memory.append import AppendResult
from ..memory.read import ReadResult
from ..search.results import SearchResponse, SearchResult


def _plain(value: Any) -> Any:
    """A dataclass (typed status) or a dict as a JSON-ready dict."""
    if value is None or isinstance(value, dict):
        return value
    if is_dataclass(value):
        return {k: v for k, v in vars(value).items()}
    return value


def search_result(resp: SearchResponse, stale_notice: str | None = None) -> dict:
    """The memory_search result for a search response, in the compact form
    a model reads (docs/agents.md, "What a search returns"): each hit is its
    citation, score and numbered snippet, nothing the citation already says
    (path, lines; transcripts are under ``sessions/``) said again, and a
    key with no value (no fallback, no notice) left out."""
    fallback = _plain(resp.fallback)
    if fallback is not None and "from_provider" in fallback:
        fallback = {"from": fallback["from_provider"], "reason": fallback.get("reason")}
    notices = [n for n in (stale_notice, resp.notice) if n]
    result: dict[str, Any] = {
        "results": [_hit(r) for r in resp.results],
        # The answer's confidence (its best hit's): an empty, unconfident
        # answer means memory holds nothing on the question (docs/trust.md).
        "confidence": round(resp.confidence, 2),
        "confident": resp.confident,
        "provider": resp.provider,
        "model": resp.model,
        "stale": stale_notice is not None,
    }
    if fallback is not None:
        result["fallback"] = fallback
    if notices:
        result["notice"] = "; ".join(notices)
    return result


def _hit(r: SearchResult) -> dict[str, Any]:
    """One memory_search hit: what a model cites, how sure the search is
    and why it matched. Provenance and marks are said only when they say
    something: ``date`` when known, ``origin`` when the entry records it,
    ``status`` when not live, ``untrusted`` when true (DESIGN.md §17),
    ``reordered`` (``"newer"``) when a rule put it above a higher score."""
    hit: dict[str, Any] = {
        "citation": r.citation,
        "score": round(float(r.score), 3),
        "confidence": round(r.confidence, 2),
        "confident": r.confident,
        # The lines around the best-matching line, numbered as in the file
        # (``>`` marks it): an agent sees why it matched and where to read on.
        "snippet": r.excerpt.to_text() if r.excerpt is not None and r.excerpt.lines else r.snippet,
    }
    if r.date:
        hit["date"] = r.date
    if r.origin:
        hit["origin"] = r.origin
    if r.status != "live":
        hit["status"] = r.status
    if r.untrusted:
        hit["untrusted"] = True
    if r.reordered:
        hit["reordered"] = r.reordered
    return hit


def get_result(res: ReadResult, *, numbered: bool = False) -> dict:
    """The memory_get result for a read: its lines ``from_line``..``to_line``
    (the names of ``memext get --json``), numbered as in the file when
    ``numbered`` (the layout of a search snippet), the lines whose entry is
    forgotten or superseded (``retired``: the text keeps its metadata
    comments, which say so too), and a notice when the file is missing or
    the read stopped early."""
    notice = None
    if res.missing:
        notice = f"{res.path} does not exist yet (memory_append creates it)"
    elif res.truncated:
        notice = f"stopped at line {res.to_line} of {res.total_lines}; call again with from={res.to_line + 1}"
    result: dict[str, Any] = {
        "path": res.path,
        "from_line": res.from_line,
        "to_line": res.to_line,
        "text": numbered_lines(res.text, res.from_line) if numbered and res.to_line >= res.from_line else res.text,
        "truncated": res.truncated,
        "total_lines": res.total_lines,
    }
    if res.retired:  # the text stays the file's; the state of its lines is said beside it
        result["retired"] = [
            {"line": r.line, "status": r.status, **({"by": r.by} if r.by else {}), **({"reason": r.reason} if r.reason else {})}
            for r in res.retired
        ]
    if notice:
        result["notice"] = notice
    return result


def numbered_lines(text: str, first: int) -> str:
    """``text`` with each line prefixed by its number in the file, from
    ``first``: the layout of a search snippet's lines (engine/search/excerpt.py,
    ``Excerpt.to_text``), without its ``>`` mark, so a model reads both alike."""
    lines = text.split("\n")
    width = len(str(first + len(lines) - 1))
    return "\n".join(f"  {n:>{width}}  {line}".rstrip() for n, line in enumerate(lines, start=first))


def append_result(written: AppendResult) -> dict:
    """The memory_append result for a written entry: its citation (the
    entry's own text lines, heading left out), whether the file was created,
    the entries it superseded, and whether the entry is searchable yet (else
    a notice says why)."""
    result: dict[str, Any] = {"citation": written.citation, "created": written.created, "indexed": written.indexed}
    if written.superseded:  # the entries ``supersedes`` marked (DESIGN.md §17)
        result["superseded"] = list(written.superseded)
    if written.notice:
        result["notice"] = written.notice
    return result
