"""``recall(text, agent=...)``: the memories a user's message calls for, as a
context block to put before the model's turn (DESIGN.md §18; the rules are
in engine/search/recall.py). Recall only reads the memory files' index."""

from __future__ import annotations

import time
from datetime import datetime

from ..config import Config, load_config
from ..index import MemoryIndex
from ..search.recall import SLOW, Recall, no_query_notice, nothing, query_of, recall_from, resolve_deadline, resolve_limit, within


def recall(
    text: str,
    agent: str | None = None,
    *,
    config: Config | None = None,
    index: MemoryIndex | None = None,
    limit: int | None = None,
    deadline: float | None = None,
    now: datetime | None = None,
) -> Recall:
    """The few memories of ``agent`` (or of ``index``, when given) that the
    message ``text`` calls for, and ``context``: the block that quotes them
    for a model as notes the user wrote earlier, not instructions.

    At most ``limit`` (default ``memory_search.recall.max_results``, 3)
    confident matches; never a forgotten, superseded or untrusted entry;
    MEMORY.md and important entries first. Nothing confident: an empty
    recall. ``deadline``: seconds recall may take, opening the index
    included (default ``recall.deadline_ms``, 1.5 s); past it, an empty
    recall whose ``notice`` says why, never an exception. A message that
    quotes a recalled block is searched without it. Searches the index as
    it is: it never syncs (see :meth:`MemoryIndex.sync`)."""
    if index is not None:
        return index.recall(text, limit=limit, deadline=deadline, now=now)
    started = time.perf_counter()
    cfg = config or load_config()
    agent_cfg = cfg.agent(agent)
    settings = agent_cfg.settings.recall
    n = resolve_limit(limit, settings.max_results)
    seconds = resolve_deadline(deadline, settings.deadline_ms)
    query = query_of(text)
    if query is None:
        return nothing(no_query_notice(text), started)

    def work() -> Recall:
        # Opened for one search and closed: no background work (one_shot).
        with MemoryIndex(agent_cfg, config_file=cfg.path, one_shot=True) as idx:
            return recall_from(idx, query, n, now, started)

    return within(seconds, work, started, SLOW)
