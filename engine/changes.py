"""The one change detector: does the index still match the memory files?

A sync's fast path, ``MemoryIndex.needs_sync()``/``status().dirty`` and the
freshness keeper's "sync only if something changed" checks all use
:func:`files_changed` / :func:`stat_matches`: a directory scan and a stat
per file, never a read.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Mapping

from .sessions import discover_session_files
from .sources import SourceFile, Skipped, discover_memory_files

if TYPE_CHECKING:
    from .config import AgentConfig
    from .store import FileRow, IndexStore


def discover_files(agent: "AgentConfig", indexed: Mapping[str, "FileRow"] | None = None) -> tuple[list[SourceFile], list[Skipped]]:
    """Every file a sync of ``agent`` would consider, and what was skipped.

    ``indexed`` (the store's file rows) spares re-checking unchanged files
    for binary content."""
    s = agent.settings
    files, skipped = discover_memory_files(agent.workspace, agent.extra_path_list(), s.max_file_bytes, indexed)
    if "sessions" in s.sources:
        sess, sess_skipped = discover_session_files(agent.sessions_path, s.max_file_bytes)
        files += sess
        skipped += sess_skipped
    return files, skipped


def stat_matches(row: "FileRow", f: SourceFile) -> bool:
    """Same mtime and size as when indexed: the file is taken as unchanged."""
    return row.mtime_ns == f.mtime_ns and row.size == f.size


def files_changed(agent: "AgentConfig", store: "IndexStore") -> bool:
    """True when a sync would find files to add, update or remove.

    Only a directory scan and stat per file (no reads): cheap enough for
    status. Transcripts count only once grown past ``delta_bytes`` (the
    message threshold needs a read), as a sync skips them until then.
    """
    known = store.file_rows()
    files, _ = discover_files(agent, known)
    if len(files) != len(known):
        return True
    deltas = agent.settings.sync.sessions
    for f in files:
        row = known.get(f.path)
        if row is None:
            return True
        if f.source == "sessions":
            if f.size < row.size or f.size - row.size >= deltas.delta_bytes:
                return True
        elif not stat_matches(row, f):
            return True
    return False
