"""``consolidate(agent=...)``: propose the daily-note facts searches keep
returning for ``MEMORY.md``, and append them when asked, by the rules of
engine/memory/consolidation.py (DESIGN.md §17)."""

from __future__ import annotations

import dataclasses
from datetime import datetime

from ..errors import MemextError
from ..index import MemoryIndex, open_index
from ..memory.append import LONG_TERM_FILE, append_entry
from ..memory.consolidation import HEADING, Proposal, body, entry_meta, propose
from ..memory.use_log import read_uses
from ..settings import Config


def consolidate(
    agent: str | None = None,
    *,
    config: Config | None = None,
    index: MemoryIndex | None = None,
    apply: bool = False,
    via: str = "api",
    now: datetime | None = None,
) -> Proposal:
    """The facts of ``agent``'s daily notes worth keeping in ``MEMORY.md``
    (chosen from how often and how recently searches returned them), with
    the unified diff appending them makes. ``apply=True`` appends them
    under a ``## Consolidated`` heading and syncs; nothing already in
    ``MEMORY.md`` is changed and the daily notes are left as they are.
    ``via`` names the face in the entry's metadata (cli, notebook)."""
    own = index is None
    idx = index if index is not None else open_index(agent, config=config)
    try:
        proposal = propose(idx.agent, read_uses(idx.db_path, idx.agent.id), via=via, now=now)
        return apply_proposal(proposal, index=idx, via=via, now=now) if apply else proposal
    finally:
        if own:
            idx.close()


def apply_proposal(
    proposal: Proposal,
    *,
    index: MemoryIndex | None = None,
    config: Config | None = None,
    via: str = "api",
    now: datetime | None = None,
) -> Proposal:
    """Append the facts of ``proposal`` (one shown earlier, say) to
    ``MEMORY.md`` of its agent, then sync; the proposal comes back with
    ``applied`` and the entry's ``citation``. A proposal already applied,
    or without facts, is returned as it is."""
    if proposal.applied or not proposal.facts:
        return proposal
    own = index is None
    idx = index if index is not None else open_index(proposal.agent, config=config)
    try:
        if idx.agent.id != proposal.agent:
            raise MemextError(f"the proposal is for agent {proposal.agent!r}, not {idx.agent.id!r}")
        now = now or datetime.now()
        written = append_entry(
            idx.agent, idx.db_path, body(proposal.facts), file=LONG_TERM_FILE, heading=HEADING, meta=entry_meta(via, now), now=now
        )
        notice = None
        try:
            idx.sync(reason="note")
        except MemextError as exc:  # the lines are in MEMORY.md; only their indexing waits
            notice = f"written, but not indexed yet: {exc}"
        return dataclasses.replace(proposal, applied=True, citation=written.citation, notice=notice)
    finally:
        if own:
            idx.close()
