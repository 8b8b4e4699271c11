"""How one search runs: :class:`SearchOptions`, built once by the face that
asks (the CLI, the notebook, the agent tools) and passed down unchanged to
the index and the pipeline (DESIGN.md §7)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import date, datetime
from typing import TYPE_CHECKING, Sequence

from ..errors import MemextError

if TYPE_CHECKING:
    from ..memory.dates import When
    from ..settings import AgentConfig, QuerySettings

#: Results a ``max_lines`` search may return when no ``max_results`` is
#: given: the budget, not a count, is the limit then (LoCoMo protocol v2
#: asks for 80).
BUDGET_MAX_RESULTS = 80


@dataclass(frozen=True)
class SearchOptions:
    """The options of one search, as :meth:`MemoryIndex.search
    <memext.engine.MemoryIndex.search>` documents them; None: the agent's
    setting (``query.max_results``, ``query.min_score``, every source).

    ``snippets=False`` leaves snippets and excerpts out, for callers that
    only rank (benchmarks); ``today`` is the day temporal decay counts ages
    from (default: the current date; ``now`` moves the time cues only)."""

    max_results: int | None = None
    min_score: float | None = None
    sources: Sequence[str] | None = None
    explain: bool = False
    max_lines: int | None = None
    now: datetime | None = None
    after: When | None = None
    before: When | None = None
    include_weak: bool = False
    include_forgotten: bool = False
    log_use: bool = True
    snippets: bool = True
    today: date | None = None

    def __post_init__(self) -> None:
        if isinstance(self.sources, str):  # one source by name
            object.__setattr__(self, "sources", (self.sources,))
        elif self.sources is not None:
            object.__setattr__(self, "sources", tuple(self.sources))

    def with_defaults(self, query: QuerySettings) -> SearchOptions:
        """These options with ``max_results`` and ``min_score`` filled in
        from the ``query`` settings (a reading budget allows
        :data:`BUDGET_MAX_RESULTS`); MemextError for values out of range."""
        if self.max_lines is not None and int(self.max_lines) < 1:
            raise MemextError(f"max_lines must be at least 1, got {self.max_lines}")
        default_results = query.max_results if self.max_lines is None else BUDGET_MAX_RESULTS
        max_results = default_results if self.max_results is None else int(self.max_results)
        if max_results < 1:
            raise MemextError("max_results must be at least 1")
        min_score = query.min_score if self.min_score is None else float(self.min_score)
        max_lines = None if self.max_lines is None else int(self.max_lines)
        return replace(self, max_results=max_results, min_score=min_score, max_lines=max_lines)

    def for_agent(self, agent: AgentConfig) -> SearchOptions:
        """:meth:`with_defaults` for ``agent``, and ``sources`` checked
        against the sources it indexes (None when they are all of them)."""
        filled = self.with_defaults(agent.settings.query)
        return replace(filled, sources=_source_filter(agent, self.sources))


def _source_filter(agent: AgentConfig, sources: Sequence[str] | None) -> tuple[str, ...] | None:
    configured = agent.settings.sources
    if sources is None:
        return None
    unknown = [s for s in sources if s not in configured]
    if unknown:
        raise MemextError(f"source {unknown[0]!r} is not indexed for agent {agent.id} (sources: {', '.join(configured)})")
    return None if set(sources) == set(configured) else tuple(sources)
