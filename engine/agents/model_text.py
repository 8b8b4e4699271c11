"""What a model may read of memext's errors and notices.

Tool results go into a conversation with a model (and whoever else reads
it); memext's messages are written for the person at the terminal. The
absolute path of an index file, and the pid and host of a process holding
its writer lock, help that person and nobody in the conversation: the
model can act on none of them, and they describe the machine. Logs and
``memext status`` keep them.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Callable, Iterable

from ..errors import MemextError

#: How a writer lock names its holder in messages (the SQLite lock: " by pid
#: 4242 on laptop"; the PostgreSQL one may add " from 10.0.0.7"): kept in logs
#: and status, left out of what a model reads.
_LOCK_HOLDER = re.compile(r" by pid \d+ on [^\s;,()]+(?: from [^\s;,()]+)?")


def for_model(text: str, index_paths: Iterable[Path] = ()) -> str:
    """An error or notice as a model may read it: the absolute paths of the
    index files (``index_paths``) and their folders are left out, and so are
    the pid and host of a process holding a writer lock. A model can act on
    none of them, and they describe the machine to whoever reads the
    conversation; logs and ``memext status`` keep them."""
    for path in sorted({str(p) for p in index_paths}, key=len, reverse=True):
        text = text.replace(f"the index {path}", "the index").replace(path, "the index file")
        folder = str(Path(path).parent)
        if folder not in ("", "/", "."):
            text = re.sub(re.escape(folder) + r"(?=$|[\s;,)'\"])", "the index folder", text)
    return _LOCK_HOLDER.sub(" by another process", text)


def notices_for_model(result: dict, index_paths: Iterable[Path] = ()) -> dict:
    """A tool result with its notice (and a fallback's reason) fit for a
    model (:func:`for_model`); note text (snippets, lines read) is left as
    it is: a note may name any path it likes."""
    paths = list(index_paths)
    out = dict(result)
    if isinstance(out.get("notice"), str):
        out["notice"] = for_model(out["notice"], paths)
    fallback = out.get("fallback")
    if isinstance(fallback, dict) and isinstance(fallback.get("reason"), str):
        out["fallback"] = {**fallback, "reason": for_model(fallback["reason"], paths)}
    return out


class IndexPaths:
    """Where the index files of the agents a tool host serves are: from
    ``configured(agent_id)`` (the config, before an index opens), and from
    the indexes opened so far."""

    def __init__(self, configured: Callable[[str], Path | None] | None = None):
        self._configured = configured
        self._opened: dict[str, Path] = {}

    def opened(self, agent_id: str, path: Callable[[], Path]) -> None:
        """Note the path of ``agent_id``'s index, open now (asked once)."""
        if agent_id not in self._opened:
            self._opened[agent_id] = path()

    def all(self, agent_ids: Iterable[str]) -> list[Path]:
        """Every index path known for ``agent_ids``."""
        paths = list(self._opened.values())
        configured = self._configured
        if configured is None:
            return paths
        for agent_id in agent_ids:
            try:
                found = configured(agent_id)
            except MemextError:  # an index that cannot open: its path is known from the config, if at all
                continue
            if found is not None:
                paths.append(found)
        return paths
