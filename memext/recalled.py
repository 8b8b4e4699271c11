"""What ``%memrecall`` returns: the memories a message calls for, which
display themselves as search results do, or "nothing recalled" and why.

``r = %memrecall book my flight to Lisbon`` gives a :class:`RecalledMemories`:
index it or loop over it (:class:`~memext.engine.SearchResult` items),
``r.context`` is the block a model would read (DESIGN.md §18),
``r.to_json()`` the ``memext recall --json`` shape.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, overload

from memext.engine import Recall, SearchResult
from memext.engine.for_faces import json_safe

from .magic_lines import QuietDisplay
from .render import FONT, MUTED, NOTICE_STYLE, TEXT, esc
from .results import result_html, result_text


class RecalledMemories(QuietDisplay, Sequence):
    """The memories recalled for one message (items: ``SearchResult``)."""

    def __init__(self, recall: Recall, agent: str, message: str, *, as_json: bool = False):
        self.recall = recall
        self.agent = agent
        self.message = message
        self.as_json = as_json

    @overload
    def __getitem__(self, i: int) -> SearchResult: ...
    @overload
    def __getitem__(self, i: slice) -> tuple[SearchResult, ...]: ...
    def __getitem__(self, i):
        return self.recall.results[i]

    def __len__(self) -> int:
        return len(self.recall.results)

    @property
    def context(self) -> str:
        """The context block a model reads ("" when nothing was recalled)."""
        return self.recall.context

    @property
    def citations(self) -> list[str]:
        return [r.citation for r in self]

    def to_dict(self) -> dict[str, Any]:
        return {"agent": self.agent, **self.recall.to_dict()}

    def to_json(self, indent: int | None = 2) -> str:
        return json_safe(json.dumps(self.to_dict(), indent=indent, ensure_ascii=False, default=str))

    def _header(self) -> str:
        n = len(self)
        what = f"{n} memor{'y' if n == 1 else 'ies'} recalled" if n else "nothing recalled"
        return f"{what} for {self.message!r} in {self.agent} ({self.recall.elapsed_ms:.0f} ms)"

    def to_text(self, color: bool = False) -> str:
        lines = [self._header()]
        if self.recall.notice:
            lines.append(f"note: {self.recall.notice}")
        for i, hit in enumerate(self, start=1):
            lines += result_text(i, hit, self.message, color=color)
        return "\n".join(lines)

    def __repr__(self) -> str:
        return self.to_json() if self.as_json else self.to_text()

    def _repr_pretty_(self, p, cycle: bool) -> None:
        p.text(repr(self))

    def _repr_mimebundle_(self, include=None, exclude=None) -> dict[str, Any]:
        if self.as_json:
            return {"application/json": self.to_dict(), "text/plain": self.to_json()}
        return {"text/html": self.to_html(), "text/plain": self.to_text()}

    def to_html(self) -> str:
        """The memories as search results show them; all note text is escaped."""
        parts = [f'<div class="memext-recall" style="{FONT};{TEXT};line-height:1.4">']
        parts.append(f'<div class="memext-header" style="{MUTED};font-size:90%">{esc(self._header())}</div>')
        if self.recall.notice:
            parts.append(f'<div class="memext-notice" style="{NOTICE_STYLE}">⚠ {esc(self.recall.notice)}</div>')
        parts += [result_html(hit, self.message) for hit in self]
        parts.append("</div>")
        return "".join(parts)
