"""One agent's index in a SQLite file with FTS5, sqlite-vec and an embedding cache.

Tables (DESIGN.md §4): ``meta`` (fingerprint and bookkeeping), ``files``,
``chunks``, ``chunks_vec`` (vec0, created once the vector size is known),
``chunks_fts`` (contentless FTS5), ``entries`` (:mod:`.entries`) and
``embedding_cache``.

A :class:`Store` is one connection (:mod:`.connection`) and the parts that
use it: files, chunks and FTS (:mod:`.chunks`), vectors (:mod:`.vectors`)
and the embedding cache (:mod:`.cache`). It implements
:class:`~memext.engine.store.base.IndexStore`. Writers hold the agent's lock
(:mod:`.lock`); each write method is a transaction, and
nested ones join the outermost (a sync writes a group of files in one).
The vector sidecar (:mod:`.sidecar`, :mod:`.mapped`) is written beside the
file by :meth:`Store.finish_writes`.
"""

from __future__ import annotations

import os
import time
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any, Collection, Iterable, Mapping, Sequence

if TYPE_CHECKING:  # numpy loads on first use: keyword-only work never needs it
    import numpy as np

    from ...status import FtsStatus, StorageStatus, VectorStatus

from ..base import CacheKey, ChunkRow, EntryHit, EntryRow, FileRow, FileStat, IndexStore, NewChunk, NewEntry, StoreOptions
from ..entry_vectors import EntryVectors
from . import db, entries as entry_table
from .cache import EmbeddingCache
from .chunks import ChunkTable
from .connection import Connection, Transaction
from .index_files import remove_index_files, shadow_path
from .mapped import remove_sidecars
from .sidecar import SidecarInfo, sidecar_path
from .vectors import VectorTable


class Store:
    """A connection to one agent's index file."""

    def __init__(self, path: str | Path, options: StoreOptions | None = None):
        self._db = Connection(Path(path), options or StoreOptions())
        self._chunks = ChunkTable(self._db)
        self._vectors = VectorTable(self._db, self._chunks.chunk_count)
        self._cache = EmbeddingCache(self._db)

    # -- lifecycle ----------------------------------------------------------------

    @property
    def path(self) -> Path:
        return self._db.path

    @property
    def location(self) -> str:
        """The index file, as users are shown it."""
        return str(self._db.path)

    @property
    def options(self) -> StoreOptions:
        return self._db.options

    @property
    def read_only(self) -> str | None:
        """Why this index cannot be written (its file or folder is read-only), or None."""
        return self._db.read_only

    @property
    def conn(self) -> Any:
        """The DB-API connection (for tests and experiments; the engine goes
        through the methods)."""
        return self._db.conn

    @property
    def caps(self) -> db.Capabilities:
        """What this connection can do: sqlite-vec and FTS5."""
        return self._db.caps

    def close(self) -> None:
        self._vectors.reset()
        self._db.close()

    def __enter__(self) -> "Store":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def refresh(self) -> bool:
        """Reopen when another process replaced the index; True if it did.

        Cheap enough to call before every read: one stat and one pragma.
        """
        with self._db.lock:
            if not self._db.refresh():
                return False
            self._vectors.reset()
            return True

    def transaction(self) -> Transaction:
        """``with store.transaction():`` one write transaction (BEGIN IMMEDIATE)."""
        return self._db.transaction()

    # -- rebuilding into a shadow and swapping it in -----------------------------------

    def open_shadow(self) -> "Store":
        """An empty index beside this one, with the same options and a copy
        of this index's embedding cache (so a rebuild re-embeds nothing)."""
        path = shadow_path(self.path)
        try:
            shadow = Store(path, self.options)
        except BaseException:
            remove_index_files(path)
            raise
        try:
            shadow.copy_cache_from(self.path)
        except BaseException:
            shadow.discard()
            raise
        return shadow

    def copy_into(self, target: IndexStore) -> None:
        """Replace ``target``'s whole content with this index, atomically.

        SQLite's backup API writes every page into the target in one write
        transaction: readers of the target (in any process) keep their
        snapshot until it commits, then see the new index (a new
        ``generation``, so they reopen). Unlike renaming files over a live
        WAL database, it cannot pair a new file with the old file's
        ``-wal``/``-shm``.
        """
        target_file = Path(target.location)  # a SQLite store's location is its file
        with self._db.lock:
            with self.transaction():
                self._db.set_meta("generation", uuid.uuid4().hex)
            # The vector sidecar goes first, under the target's name: until
            # the backup commits, the target's meta does not name it.
            sidecar = SidecarInfo.from_json(self._db.get_meta_json("vector_sidecar"))
            if sidecar is not None:
                self._vectors.reset()
                try:
                    os.replace(sidecar_path(self.path, sidecar.token), sidecar_path(target_file, sidecar.token))
                except FileNotFoundError:
                    pass  # readers then find no sidecar and use vec0 until the next sync writes one
            self._db.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            dest, _ = db.connect(target_file, load_vec=False)
            try:
                self._db.conn.backup(dest)
                dest.execute("PRAGMA wal_checkpoint(PASSIVE)")
            finally:
                dest.close()
        target.refresh()
        remove_sidecars(target_file, keep=sidecar.token if sidecar is not None else None)

    def discard(self) -> None:
        """Close this store and delete its files (rebuild shadows only)."""
        self._vectors.reset()
        self.close()
        remove_index_files(self.path)
        remove_sidecars(self.path, keep=None)

    def finish_writes(self) -> None:
        """Bring the memory-mapped vector sidecar and the file list's
        summary up to date (the sync calls this after its last write,
        holding the writer lock)."""
        self._vectors.finish_writes()
        self._chunks.save_summary()

    # -- meta ------------------------------------------------------------------------

    def get_meta(self, key: str) -> str | None:
        return self._db.get_meta(key)

    def set_meta(self, key: str, value: str) -> None:
        self._db.set_meta(key, value)

    def get_meta_json(self, key: str, default: Any = None) -> Any:
        return self._db.get_meta_json(key, default)

    def set_meta_json(self, key: str, value: Any) -> None:
        self._db.set_meta_json(key, value)

    # -- files and chunks ---------------------------------------------------------------

    def file_rows(self) -> dict[str, FileRow]:
        return self._chunks.file_rows()

    def file_stats(self) -> Mapping[str, FileStat]:
        return self._chunks.file_stats()

    def file_count(self, source: str | None = None) -> int:
        return self._chunks.file_count(source)

    def chunk_count(self, source: str | None = None) -> int:
        return self._chunks.chunk_count(source)

    def chunks(self, rowids: Iterable[int]) -> dict[int, ChunkRow]:
        return self._chunks.chunks(rowids)

    def chunk_at(self, path: str, line: int) -> ChunkRow | None:
        return self._chunks.chunk_at(path, line)

    def chunk_neighbours(self, rowids: Collection[int]) -> dict[int, tuple[int | None, int | None]]:
        return self._chunks.chunk_neighbours(rowids)

    def sources_of(self, rowids: Sequence[int]) -> dict[int, str]:
        return self._chunks.sources_of(rowids)

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
        """Swap a file's chunks and entries for new ones, in one transaction.

        ``file_hash`` None records the file as not fully indexed (e.g. its
        vectors are missing after a provider failure) so the next sync
        tries it again. ``day``: see :attr:`FileRow.day`. ``new``: the index
        holds nothing of ``path``; the look for old chunks is skipped (on a
        first sync it is two statements of every five per file).
        """
        now = time.time()
        with self.transaction():
            if not new:
                self._vectors.delete(self._chunks.delete_chunks(path))
                if self._db.entries:
                    entry_table.delete(self._db.conn, path)
            if self._db.entries:
                entry_table.insert(self._db.conn, path, source, entries)
            dims = next((len(c.vector) for c in chunks if c.vector is not None), None)
            if dims is not None:
                self._vectors.ensure_table(dims)
            for c in chunks:
                rowid = self._chunks.insert_chunk(path, source, c.id, c.start_line, c.end_line, c.hash, model, c.text, now)
                if c.vector is not None:
                    self._vectors.insert(rowid, c.vector, source)
            self._chunks.put_file(path, source, file_hash, mtime_ns, size, len(chunks), messages, note, now, day)

    def touch_file(self, path: str, mtime_ns: int, size: int) -> None:
        """Record a new mtime/size for a file whose content did not change."""
        with self.transaction():
            self._chunks.touch_file(path, mtime_ns, size)

    def delete_file(self, path: str) -> None:
        with self.transaction():
            self._vectors.delete(self._chunks.delete_chunks(path))
            if self._db.entries:
                entry_table.delete(self._db.conn, path)
            self._chunks.delete_file_row(path)

    def entries_within(self, spans: Sequence[tuple[str, int, int]]) -> list[EntryRow]:
        if not self._db.entries:
            return []
        with self._db.lock:
            return entry_table.within(self._db.conn, spans)

    def entry_vector_sample(self, limit: int) -> list[np.ndarray]:
        if not self._db.entries:
            return []
        with self._db.lock:
            return entry_table.vector_sample(self._db.conn, limit)

    def entry_vector_search(self, query: np.ndarray, k: int, chunks: Collection[int]) -> list[EntryHit]:
        if not self._db.entries:
            return []
        with self._db.lock:
            vectors = self._db.cached(
                "entry_vectors", lambda: EntryVectors(lambda ids, known: entry_table.vectors_of_chunks(self._db.conn, ids, known))
            )
            return vectors.search(query, k, chunks)  # under the lock: it may read a file's entries

    # -- keyword side -----------------------------------------------------------------

    def keyword_search(
        self, match: str, k: int, sources: Sequence[str] | None = None, paths: Collection[str] | None = None
    ) -> list[tuple[int, float]]:
        """Top-k ``(rowid, bm25)`` for an FTS5 MATCH expression (bm25 < 0),
        of some sources and files only when given (filtered before the top k)."""
        return self._chunks.keyword_search(match, k, sources, paths)

    def term_doc_counts(self, terms: Sequence[str]) -> dict[str, int]:
        """How many chunks contain each term (remembered until the data changes)."""
        return self._chunks.term_doc_counts(terms)

    # -- vector side --------------------------------------------------------------------

    @property
    def dims(self) -> int | None:
        return self._vectors.dims

    @property
    def vector_store(self) -> str:
        """ "vec0" when sqlite-vec is loaded, else "blob" (numpy scan)."""
        return self._vectors.vector_store

    @property
    def matrix_loaded(self) -> bool:
        """True once the in-memory matrix for large indexes is loaded."""
        return self._vectors.matrix_loaded

    def ensure_vector_table(self, dims: int) -> None:
        """Create ``chunks_vec`` for vectors of ``dims`` (inside a transaction)."""
        self._vectors.ensure_table(dims)

    def vector_search(
        self, query: np.ndarray, k: int, sources: Sequence[str] | None = None, paths: Collection[str] | None = None
    ) -> list[tuple[int, float]]:
        """Top-k ``(rowid, cosine similarity)``, of some sources and files only
        when given (filtered before the top k)."""
        return self._vectors.search(query, k, sources, paths)

    def vector_backend_in_use(self) -> str:
        """ "mmap", "mmap+bits", "vec0", "numpy" or "none" as the next search would use it."""
        return self._vectors.backend_in_use()

    def chunk_vectors(self, rowids: Iterable[int]) -> dict[int, np.ndarray]:
        """Stored vectors of some chunks (for MMR and hybrid scoring)."""
        return self._vectors.chunk_vectors(rowids)

    # -- embedding cache ----------------------------------------------------------------

    def cache_get(self, key: CacheKey, hashes: Sequence[str], *, touch: bool = True) -> dict[str, np.ndarray]:
        """Cached vectors by text hash; hits are marked as recently used unless ``touch`` is False."""
        return self._cache.get(key, hashes, touch=touch)

    def cache_put(self, key: CacheKey, items: dict[str, np.ndarray]) -> None:
        self._cache.put(key, items)

    def cache_prune(self, max_entries: int) -> int:
        """Drop the least recently used entries above ``max_entries``."""
        return self._cache.prune(max_entries)

    def cache_count(self) -> int:
        return self._cache.count()

    def copy_cache_from(self, other_path: Path) -> int:
        """Seed this index's embedding cache from another index file."""
        return self._cache.copy_from(other_path)

    # -- status ---------------------------------------------------------------------------

    def vector_status(self) -> VectorStatus:
        from ...status import VectorStatus  # status types load when status is asked for

        caps = self._db.caps
        return VectorStatus(
            available=caps.vec_version is not None,
            extension=caps.vec_version,
            store=self.get_meta("vector_store"),
            backend=self.vector_backend_in_use(),
            dims=self.dims,
            error=caps.vec_error,
        )

    @property
    def keyword_search_available(self) -> bool:
        return self._db.caps.fts5

    def fts_status(self) -> FtsStatus:
        from ...status import FtsStatus  # status types load when status is asked for

        return FtsStatus(available=self._db.caps.fts5, error=self._db.caps.fts5_error)

    def storage_status(self) -> StorageStatus:
        from ...status import StorageStatus  # status types load when status is asked for

        b = db.binding()
        return StorageStatus(binding=b.name, version=b.sqlite_version)
