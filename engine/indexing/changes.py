"""The one change detector: does the index still match the memory files?

A sync's fast path, ``MemoryIndex.needs_sync()``/``status().dirty`` and the
freshness keeper's "sync only if something changed" checks all use
:func:`files_changed` / :func:`stat_matches`: a directory scan and a stat
per file, never a read.

Racy timestamps (the way git handles them): a file's mtime and size vouch
for its text only when that mtime is safely older than the moment the text
was read. Otherwise an edit in the same clock tick as the read (``- [ ]`` ->
``- [x]``: same size, and on a file system with 1 s timestamps the same
mtime) would look unchanged to every later sync. Such a file is recorded
with :data:`UNVERIFIED_MTIME_NS` instead of its mtime (:func:`recorded_mtime`),
so it matches no stat: the next sync reads it again and the index counts as
dirty until then. A sync re-reads these files itself when their window
closes soon (nanosecond timestamps: milliseconds), else the keeper comes
back once it has (:attr:`SyncReport.recheck_after_s`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Mapping, NamedTuple

from ..memory.discovery import FileRead, Skipped, SourceFile, discover_memory_files
from ..memory.matching import memory_files_match

if TYPE_CHECKING:
    from ..settings import AgentConfig
    from ..store import FileRow, FileStat, IndexStore


def discover_files(
    agent: "AgentConfig", indexed: Mapping[str, "FileRow"] | None = None, *, sniff: bool = True
) -> tuple[list[SourceFile], list[Skipped]]:
    """Every file a sync of ``agent`` would consider, and what was skipped.

    ``indexed`` (the store's file rows) spares re-checking unchanged files
    for binary content; ``sniff=False`` leaves that check to the reads of a
    sync (:func:`~..memory.discovery.discover_memory_files`)."""
    s = agent.settings
    files, skipped = discover_memory_files(agent.workspace, agent.extra_path_list(), s.max_file_bytes, indexed, sniff=sniff)
    if "sessions" in s.sources:
        from ..memory.transcripts import discover_session_files  # here: most agents index no sessions

        sess, sess_skipped = discover_session_files(agent.sessions_path, s.max_file_bytes)
        files += sess
        skipped += sess_skipped
    return files, skipped


def stat_matches(row: "FileRow", f: SourceFile) -> bool:
    """Same mtime and size as when indexed: the file is taken as unchanged
    (never for a file recorded unverified: see :func:`recorded_mtime`)."""
    return row.mtime_ns == f.mtime_ns and row.size == f.size and row.mtime_ns != UNVERIFIED_MTIME_NS


#: Recorded instead of a file's mtime when that mtime cannot vouch for the
#: text read (no file has it, so the next sync reads the file again).
UNVERIFIED_MTIME_NS = -1
#: How much older than the read an mtime must be to vouch for it. Whole-second
#: mtimes come from file systems with 1 s (ext3, HFS+) or 2 s (FAT)
#: timestamps; finer ones still tick with a coarse kernel clock (1-16 ms).
COARSE_WINDOW_NS = 2_000_000_000
FINE_WINDOW_NS = 25_000_000


def racy_window_ns(mtime_ns: int) -> int:
    """How long after ``mtime_ns`` another write could still get the same mtime."""
    return COARSE_WINDOW_NS if mtime_ns % 1_000_000_000 == 0 else FINE_WINDOW_NS


def verified_in_ns(read: FileRead) -> int:
    """How long (ns, from the read) until the stat of ``read`` can vouch for
    its text: 0 when it already can; unsettled reads need a new read at once."""
    if not read.settled:
        return 0
    return max(0, read.mtime_ns + racy_window_ns(read.mtime_ns) - read.read_at_ns)


def recorded_mtime(read: FileRead) -> int:
    """The mtime to store for a file read as ``read``: its own when it was
    safely older than the read and the read settled, else
    :data:`UNVERIFIED_MTIME_NS`."""
    if read.settled and verified_in_ns(read) == 0:
        return read.mtime_ns
    return UNVERIFIED_MTIME_NS


#: Files left keyword-only by a provider failure count as needing a sync
#: once the failure is this old: an outage does not make every search wait
#: through the provider's retries, and a healthy server is used again soon.
RETRY_EMBEDDINGS_AFTER_S = 60.0


class IndexChanges(NamedTuple):
    """What a sync would find, from a stat scan (no reads)."""

    #: Files added, changed (or unverified) or removed on disk.
    files: bool
    #: Files indexed without their vectors (a provider failed or has them
    #: pending): a sync with a working provider completes them.
    incomplete: int


def index_changes(agent: "AgentConfig", store: "IndexStore") -> IndexChanges:
    """Compare the memory files with the index (see :func:`files_changed`)."""
    known = store.file_stats()
    incomplete = sum(1 for r in known.values() if not r.complete)
    return IndexChanges(_files_differ(agent, known), incomplete)


def files_changed(agent: "AgentConfig", store: "IndexStore") -> bool:
    """True when a sync would find files to add, update or remove.

    Only a directory scan and stat per file (no reads): cheap enough for
    status. Transcripts count only once grown past ``delta_bytes`` (the
    message threshold needs a read), as a sync skips them until then.
    """
    return _files_differ(agent, store.file_stats())


def _files_differ(agent: "AgentConfig", known: Mapping[str, "FileStat"]) -> bool:
    s = agent.settings
    # Unverified files (UNVERIFIED_MTIME_NS) match no stat, so they differ here too.
    matched = memory_files_match(agent.workspace, agent.extra_path_list(), s.max_file_bytes, known)
    if matched is None:
        return True
    if "sessions" in s.sources:
        from ..memory.transcripts import discover_session_files

        deltas = s.sync.sessions
        sessions, _ = discover_session_files(agent.sessions_path, s.max_file_bytes)
        for f in sessions:
            row = known.get(f.path)
            if row is None or f.size < row.size or f.size - row.size >= deltas.delta_bytes:
                return True
        matched += len(sessions)
    return matched != len(known)
