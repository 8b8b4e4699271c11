"""The storage interface the search, sync and status code use.

:class:`IndexStore` lists exactly what ``engine/search/pipeline.py``,
``engine/indexing/sync.py`` and ``MemoryIndex`` ask of an index; the SQLite
:class:`~memext.engine.store.sqlite.store.Store` and the PostgreSQL
:class:`~memext.engine.store.postgres.store.PostgresStore` implement it
(``store.drivers.open_store`` picks one by ``store.driver``). The row types below
are what crosses the interface.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Collection, ContextManager, Iterable, Mapping, NamedTuple, Protocol, Sequence, runtime_checkable

if TYPE_CHECKING:
    import numpy as np  # loads on first use: keyword-only work never needs it

    from ..settings import VectorSettings
    from ..status import FtsStatus, StorageStatus, VectorStatus


class FileRow(NamedTuple):
    """An indexed file as the sync's fast path compares it with the disk.

    A named tuple rather than a frozen dataclass: every search of a
    one-shot ``memext search`` reads one per file, and a tuple is built
    about 3x faster (10k files: 10 ms instead of 30 ms)."""

    path: str
    source: str
    hash: str | None  # None: not fully indexed, the next sync retries it
    mtime_ns: int
    size: int
    chunks: int
    messages: int
    note: str | None
    #: The ISO date (``2026-03-01``) the file's name or its front matter's
    #: ``date:`` gives it (:func:`memext.engine.memory.dates.content_date`), stored
    #: at sync time; None when neither does, and then the local day of
    #: ``mtime_ns`` dates it. The ``after`` / ``before`` search filters read
    #: it (:meth:`~memext.engine.memory.dates.DayRange.keeps`).
    day: str | None = None


class FileStat(NamedTuple):
    """What the change check compares with the disk (:meth:`IndexStore.file_stats`):
    the part of a :class:`FileRow` that a stat can contradict, and whether
    the file is fully indexed. Reading only these is twice as fast as whole
    rows, and a default ``memext search`` reads one per file."""

    mtime_ns: int
    size: int
    #: False when the file was indexed without all its vectors (its hash is
    #: None): a sync with a working provider completes it.
    complete: bool


class ChunkRow(NamedTuple):
    """A stored chunk, as search and status read it."""

    rowid: int
    path: str
    source: str
    start_line: int
    end_line: int
    text: str


class NewChunk(NamedTuple):
    """A chunk to write: its id, place, text and (optional) unit vector."""

    id: str
    start_line: int
    end_line: int
    hash: str
    text: str
    vector: np.ndarray | None


class NewEntry(NamedTuple):
    """An entry of a file to write (:mod:`engine.memory.index_entries`): its
    lines, the hash of its text (the embedding cache key), the index terms
    of its words (space-separated, each once: what the keyword side would
    match) and its unit vector (None: keyword-only)."""

    start_line: int
    end_line: int
    hash: str
    stems: str
    vector: np.ndarray | None


class EntryRow(NamedTuple):
    """A stored entry, as search judges it: where it is, the index terms
    of its words (space-separated, as :class:`NewEntry` wrote them) and its
    vector (float16; None when it has none)."""

    path: str
    start_line: int
    end_line: int
    stems: str
    vector: np.ndarray | None


class EntryHit(NamedTuple):
    """An entry found by its vector: the chunk that holds it, its lines,
    its cosine similarity to the query and its vector (normalised, as the
    search compared it)."""

    chunk: int
    path: str
    start_line: int
    end_line: int
    similarity: float
    vector: np.ndarray | None = None


def entry_blob(vector: np.ndarray | None) -> bytes | None:
    """An entry vector as stored: float16 (half the reading of float32; a
    cosine moves by about 1e-3)."""
    if vector is None:
        return None
    import numpy as np

    return np.asarray(vector, dtype=np.float16).tobytes()


def entry_vector(blob: bytes | None) -> np.ndarray | None:
    if blob is None:
        return None
    import numpy as np

    return np.frombuffer(blob, dtype=np.float16)


def entry_rows(rows: Iterable[Sequence[Any]]) -> list[EntryRow]:
    """(path, start, end, stems, blob) rows as :class:`EntryRow`, each
    once (a row may be read for two spans), in file and line order."""
    out: list[EntryRow] = []
    last = None
    for path, start, end, stems, blob in sorted(rows, key=lambda r: (r[0], r[1], r[2])):
        key = (path, start, end)
        if key != last:
            last = key
            out.append(EntryRow(path, int(start), int(end), stems, entry_vector(blob)))
    return out


class CacheKey(NamedTuple):
    """Whose vectors an embedding-cache entry holds."""

    provider: str
    model: str
    endpoint_key: str


#: Prepared statements a reader's connection keeps (:attr:`StoreOptions.reader`):
#: the handful a search runs stay prepared.
READER_STATEMENTS = 8


class StoreOptions(NamedTuple):
    """How a store is opened (``memory_search.store.vector`` in the config)."""

    vector_enabled: bool = True
    #: A sqlite-vec build to load instead of the bundled one ("" = bundled).
    extension_path: str = ""
    #: "auto" (the memory-mapped sidecar, else vec0 or the matrix by size),
    #: "vec0" or "numpy": how vector searches run.
    vector_backend: str = "auto"
    #: With "auto" on a large index, load the in-memory matrix in the
    #: background while vec0 answers. Off for one-shot processes (the CLI),
    #: which would exit before the load pays off and only slow their search.
    background_matrix: bool = True
    #: The store a process keeps open to search (not a sync's writer): its
    #: SQLite connection keeps few statements prepared. FTS5 queries ran
    #: 7-15 % slower on a connection holding a dozen to forty prepared
    #: statements than on one holding eight (measured, bench/engine_bench.py
    #: at 21k chunks); a writer keeps the usual cache, which a sync's many
    #: statements need (eight cost a first sync 10-15 %).
    reader: bool = False
    #: The index is at memext's own default path (no ``store.path``): an
    #: empty database found there is an index whose first write never came,
    #: built in place (store/sqlite/ownership.py), and errors do not send
    #: the user to a setting they never set.
    own_path: bool = False

    @classmethod
    def from_settings(cls, vector: "VectorSettings") -> "StoreOptions":
        return cls(vector_enabled=vector.enabled, extension_path=vector.extension_path, vector_backend=vector.backend)


class CorruptIndex(Exception):
    """The file is not a usable index (garbage, truncated, wrong schema)."""


#: Each chunk's neighbours in its file, in (start_line, end_line, rowid)
#: order: two seeks in the (path, start_line, end_line) index per chunk
#: (a window over the files' chunks reads them all: 15x slower). Shared by
#: both stores.
NEIGHBOURS_SQL = (
    "SELECT c.rowid, "
    "(SELECT p.end_line FROM {table} p WHERE p.path = c.path "
    "AND (p.start_line, p.end_line, p.rowid) < (c.start_line, c.end_line, c.rowid) "
    "ORDER BY p.start_line DESC, p.end_line DESC, p.rowid DESC LIMIT 1), "
    "(SELECT n.start_line FROM {table} n WHERE n.path = c.path "
    "AND (n.start_line, n.end_line, n.rowid) > (c.start_line, c.end_line, c.rowid) "
    "ORDER BY n.start_line, n.end_line, n.rowid LIMIT 1) "
    "FROM {table} c WHERE c.rowid {ids}"
)


@runtime_checkable
class IndexStore(Protocol):
    """One agent's index, as search, sync and status use it.

    Writers hold the agent's writer lock (:func:`memext.engine.store.drivers.writer_lock`); each
    write method is one transaction. Readers call :meth:`refresh` before
    reading so they see an index another process rebuilt.
    """

    @property
    def location(self) -> str:
        """Where the index lives, as users are shown it (a file path, or a
        server URL without its password and the agent's schema)."""
        ...

    @property
    def read_only(self) -> str | None:
        """Why this store can be read but not written (a read-only file or
        folder, a read-only database role), or None when it can be written:
        then searches still answer and syncs refuse with that reason."""
        ...

    # -- lifecycle ----------------------------------------------------------------

    def close(self) -> None: ...

    def refresh(self) -> bool:
        """Pick up an index another process swapped in; True if it did."""
        ...

    def transaction(self) -> ContextManager[Any]:
        """``with store.transaction():`` groups meta writes atomically."""
        ...

    def open_shadow(self) -> "IndexStore":
        """A new, empty store beside this one, seeded with this one's
        embedding cache, to rebuild into (then :meth:`copy_into` and
        :meth:`discard`)."""
        ...

    def copy_into(self, target: "IndexStore") -> None:
        """Replace ``target``'s whole content with this store's, atomically
        for its readers."""
        ...

    def discard(self) -> None:
        """Close a shadow store and delete what it stored."""
        ...

    def finish_writes(self) -> None:
        """Called by the sync after its last write: bring derived data (the
        SQLite store's memory-mapped vector sidecar and the one-row summary
        of its file list) up to date. A store with nothing derived does
        nothing."""
        ...

    # -- bookkeeping ----------------------------------------------------------------

    def get_meta(self, key: str) -> str | None: ...

    def get_meta_json(self, key: str, default: Any = None) -> Any: ...

    def set_meta_json(self, key: str, value: Any) -> None: ...

    # -- files and chunks -----------------------------------------------------------

    def file_rows(self) -> dict[str, FileRow]: ...

    def file_stats(self) -> Mapping[str, FileStat]:
        """path -> :class:`FileStat` of every indexed file (the change check's
        read; read-only: a store may hand out the same mapping until its data changes)."""
        ...

    def file_count(self, source: str | None = None) -> int: ...

    def chunk_count(self, source: str | None = None) -> int: ...

    def chunks(self, rowids: Iterable[int]) -> dict[int, ChunkRow]: ...

    def chunk_at(self, path: str, line: int) -> ChunkRow | None:
        """The first chunk of ``path`` whose lines hold file line ``line``
        (an entry a citation names), else None."""
        ...

    def chunk_neighbours(self, rowids: Collection[int]) -> dict[int, tuple[int | None, int | None]]:
        """For each chunk, the last line of the chunk before it in its file
        and the first line of the chunk after it (None at either end; in
        line order): what a hit needs to know to cite only its own lines
        (:func:`..search.spans.own_lines`). Chunks gone are left out."""
        ...

    def replace_file(
        self,
        path: str,
        source: str,
        file_hash: str | None,
        mtime_ns: int,
        size: int,
        chunks: Sequence[NewChunk],
        model: str,
        *,
        messages: int = 0,
        note: str | None = None,
        day: str | None = None,
        new: bool = False,
        entries: Sequence[NewEntry] = (),
    ) -> None:
        """Swap a file's chunks (text, keyword index, vectors) and entries
        for new ones; ``day`` is stored as :attr:`FileRow.day`. ``new``: the
        caller knows the index holds nothing of ``path`` (a file new to
        it), so a store may skip looking for old chunks."""
        ...

    def entries_within(self, spans: Sequence[tuple[str, int, int]]) -> list[EntryRow]:
        """The entries that overlap each ``(path, first line, last line)``
        span, each once, in file and line order: one read for all the hits
        a search judges. Empty for an index that keeps no entries (made
        before they were kept, and read-only)."""
        ...

    def entry_vector_sample(self, limit: int) -> list[np.ndarray]:
        """Up to ``limit`` entry vectors spread over the index (the same
        ones for the same index): what a model's "nothing" level is
        estimated from when it was not measured (:mod:`..search.confidence`)."""
        ...

    def entry_vector_search(self, query: np.ndarray, k: int, chunks: Collection[int]) -> list[EntryHit]:
        """The ``k`` entries of ``chunks`` (rowids) nearest ``query`` by
        cosine, best first, each with the chunk that holds it
        (:mod:`.entry_vectors`). Empty for an index that keeps no entry
        vectors."""
        ...

    def touch_file(self, path: str, mtime_ns: int, size: int) -> None: ...

    def delete_file(self, path: str) -> None: ...

    # -- keyword side -------------------------------------------------------------

    def keyword_search(
        self, match: str, k: int, sources: Sequence[str] | None = None, paths: Collection[str] | None = None
    ) -> list[tuple[int, float]]:
        """Top-k ``(rowid, bm25)`` for an FTS5 MATCH expression (bm25 < 0).

        ``sources``: only chunks of these sources. ``paths``: only chunks of
        these files (workspace-relative paths as in :attr:`FileRow.path`; an
        empty collection matches nothing). Both filters apply before the
        top k are taken, so k hits come back whenever k chunks match."""
        ...

    def term_doc_counts(self, terms: Sequence[str]) -> dict[str, int]: ...

    # -- vector side ----------------------------------------------------------------

    @property
    def dims(self) -> int | None: ...

    @property
    def vector_store(self) -> str:
        """Where vectors go in this store: part of the index fingerprint."""
        ...

    def vector_search(
        self, query: np.ndarray, k: int, sources: Sequence[str] | None = None, paths: Collection[str] | None = None
    ) -> list[tuple[int, float]]:
        """Top-k ``(rowid, cosine similarity)``; ``sources`` and ``paths``
        filter before the top k are taken, as in :meth:`keyword_search`."""
        ...

    def chunk_vectors(self, rowids: Iterable[int]) -> dict[int, np.ndarray]: ...

    # -- embedding cache ------------------------------------------------------------

    def cache_get(self, key: CacheKey, hashes: Sequence[str], *, touch: bool = True) -> dict[str, np.ndarray]:
        """Cached vectors by text hash; ``touch`` marks hits as recently used
        (a search reads with ``touch=False``: it never writes the index)."""
        ...

    def cache_put(self, key: CacheKey, items: dict[str, np.ndarray]) -> None: ...

    def cache_prune(self, max_entries: int) -> int: ...

    def cache_count(self) -> int: ...

    # -- status -------------------------------------------------------------------------

    def vector_status(self) -> "VectorStatus": ...

    def fts_status(self) -> "FtsStatus": ...

    @property
    def keyword_search_available(self) -> bool:
        """True when keyword (full-text) search works: ``fts_status().available``
        without building a status."""
        ...

    def storage_status(self) -> "StorageStatus": ...
