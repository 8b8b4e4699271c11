"""One agent's index in PostgreSQL with pgvector (``store.driver = "postgres"``).

The agent's schema (``memext_<agent id>``) holds ``meta``, ``files``,
``chunks``, ``postings`` and ``stats`` (the keyword side, :mod:`.keyword`),
``vectors`` (:mod:`.vectors`) and ``entries`` (:mod:`.entries`); the embedding cache is shared by all
machines in ``memext.embedding_cache`` (:mod:`.cache`). Many machines
read; one writes at a time, holding the agent's advisory lock
(:mod:`.lock`).

A rebuild fills a shadow schema (``memext_rebuild_<id>``) while readers
keep using the live one, then swaps them by renaming both schemas in one
transaction: readers see the old index until that commits, then the new
one. Chunk rowids of the shadow continue the live index's sequence, so a
rowid read before a swap never names a different chunk after it.
"""

from __future__ import annotations

import time
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any, Collection, ContextManager, Iterable, Sequence

if TYPE_CHECKING:  # numpy loads on first use
    import numpy as np

from ...status import FtsStatus, StorageStatus, VectorStatus
from ..base import NEIGHBOURS_SQL, CacheKey, ChunkRow, EntryHit, EntryRow, FileRow, FileStat, IndexStore, NewChunk, NewEntry, StoreOptions
from ..entry_vectors import EntryVectors
from .cache import PgEmbeddingCache
from .connection import PgConnection
from .entries import PgEntries
from .keyword import KeywordIndex
from .terms import tokenizer
from .url import SHADOW_PREFIX, agent_schema, redact_url
from .vectors import ROWID_INDEX, PgVectors

#: A sync that wrote this many chunks VACUUMs the tables it wrote (see
#: :meth:`PostgresStore.finish_writes`).
VACUUM_AFTER_CHUNKS = 1000


class PostgresStore:
    """A connection to one agent's index in a PostgreSQL database.

    ``local_path`` is where this machine keeps the agent's local files (the
    path a SQLite index would have); the index itself is on the server.
    """

    def __init__(self, url: str, agent_id: str, local_path: Path, options: StoreOptions | None = None, *, schema: str | None = None):
        self._url = url
        self._agent_id = agent_id
        self._local_path = Path(local_path)
        self._options = options or StoreOptions()
        self._shadow = schema is not None
        # A shadow is filled without indexes, which it builds before the swap.
        self._db = PgConnection(url, agent_id, schema or agent_schema(agent_id), self._options, defer_indexes=self._shadow)
        self._keyword = KeywordIndex(self._db)
        self._vectors = PgVectors(self._db)
        self._cache = PgEmbeddingCache(self._db)
        self._entries = PgEntries(self._db)
        #: The chunk rowid sequence's qualified name (the same after a swap).
        self._seq: str | None = None
        #: Chunks written since the tables were last vacuumed (see finish_writes).
        self._written = 0
        #: A shadow's paths written so far (a path it has not written has no
        #: rows to delete); None for the live index.
        self._filled: set[str] | None = set() if self._shadow else None

    # -- lifecycle ----------------------------------------------------------------

    @property
    def path(self) -> Path:
        """This machine's local path for the agent (its files, not the index)."""
        return self._local_path

    @property
    def location(self) -> str:
        """The server (without password) and the agent's schema."""
        return f"{redact_url(self._url)} (schema {self._db.schema})"

    @property
    def read_only(self) -> str | None:
        """Why this index can be searched but not written (a standby, a
        read-only role), or None."""
        return self._db.server_info().read_only

    @property
    def schema(self) -> str:
        return self._db.schema

    @property
    def agent_id(self) -> str:
        return self._agent_id

    @property
    def options(self) -> StoreOptions:
        return self._options

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> "PostgresStore":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def refresh(self) -> bool:
        """Read meta and statistics again; True after another process swapped
        in a rebuilt index."""
        return self._db.refresh()

    def transaction(self) -> ContextManager[Any]:
        return self._db.transaction()

    # -- rebuilding into a shadow schema and swapping it in -----------------------------

    def open_shadow(self) -> "PostgresStore":
        """An empty index in a new schema, sharing this agent's embedding
        cache. Shadows a crashed rebuild left behind are dropped first (the
        caller holds the writer lock, so no live rebuild owns them)."""
        self._drop_stale_shadows()
        shadow = PostgresStore(self._url, self._agent_id, self._local_path, self._options, schema=f"{SHADOW_PREFIX}{uuid.uuid4().hex[:16]}")
        try:
            last = self._db.run(
                lambda conn: conn.execute("SELECT coalesce(pg_sequence_last_value(%s::regclass), 0)", (self._sequence(conn),)).fetchone()[0]
            )
            shadow._continue_rowids_after(int(last))
            with shadow.transaction():
                shadow._db.set_meta("shadow_of", self._agent_id)
        except BaseException:
            shadow.discard()
            raise
        return shadow

    def _sequence(self, conn: Any) -> str:
        table = self._db.sql.Identifier(self._db.schema, "chunks").as_string(conn)
        return conn.execute("SELECT pg_get_serial_sequence(%s, 'rowid')", (table,)).fetchone()[0]

    def _continue_rowids_after(self, last: int) -> None:
        with self._db.transaction():
            self._db.conn.execute(
                self._db.q("ALTER TABLE {s}.chunks ALTER COLUMN rowid RESTART WITH {n}").format(n=self._db.sql.Literal(last + 1))
            )

    def _drop_stale_shadows(self) -> None:
        def find(conn: Any) -> list[str]:
            names = [r[0] for r in conn.execute("SELECT nspname FROM pg_namespace WHERE starts_with(nspname, %s)", (SHADOW_PREFIX,))]
            mine = []
            for name in names:
                meta = self._db.sql.Identifier(name, "meta")
                row = conn.execute(self._db.sql.SQL("SELECT value FROM {} WHERE key = 'shadow_of'").format(meta)).fetchone()
                if row and row[0] == self._agent_id:
                    mine.append(name)
            return mine

        for name in self._db.run(find):
            self._db.run(
                lambda conn: conn.execute(self._db.sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(self._db.sql.Identifier(name)))
            )

    def copy_into(self, target: IndexStore) -> None:
        """Make this (shadow) index the live one: both schemas are renamed in
        one transaction, so readers see the old index until it commits."""
        live = agent_schema(self._agent_id)  # ``target`` is the agent's live store
        self.finish_writes()  # its indexes, statistics and HNSW index, before readers see it
        sql = self._db.sql
        retired = f"{SHADOW_PREFIX}old_{uuid.uuid4().hex[:12]}"
        with self._db.transaction():
            conn = self._db.conn
            conn.execute(self._db.q("DELETE FROM {s}.meta WHERE key = 'shadow_of'"))
            self._db.set_meta("generation", uuid.uuid4().hex)
            conn.execute(sql.SQL("ALTER SCHEMA {} RENAME TO {}").format(sql.Identifier(live), sql.Identifier(retired)))
            conn.execute(sql.SQL("ALTER SCHEMA {} RENAME TO {}").format(sql.Identifier(self._db.schema), sql.Identifier(live)))
            conn.execute(sql.SQL("DROP SCHEMA {} CASCADE").format(sql.Identifier(retired)))
        target.refresh()

    def discard(self) -> None:
        """Drop this shadow's schema (nothing when it was swapped in) and close."""
        if self._shadow:
            try:
                self._db.run(
                    lambda conn: conn.execute(
                        self._db.sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(self._db.sql.Identifier(self._db.schema))
                    )
                )
            except Exception:
                pass  # the server is gone: the next rebuild drops it (_drop_stale_shadows)
        self.close()

    # -- meta ---------------------------------------------------------------------------

    def get_meta(self, key: str) -> str | None:
        return self._db.get_meta(key)

    def get_meta_json(self, key: str, default: Any = None) -> Any:
        return self._db.get_meta_json(key, default)

    def set_meta_json(self, key: str, value: Any) -> None:
        self._db.set_meta_json(key, value)

    # -- files and chunks -----------------------------------------------------------------

    def file_rows(self) -> dict[str, FileRow]:
        rows = self._db.run(
            lambda conn: conn.execute(
                self._db.q("SELECT path, source, hash, mtime_ns, size, chunks, messages, note, day FROM {s}.files")
            ).fetchall()
        )
        return {r[0]: FileRow(*r) for r in rows}

    def file_stats(self) -> dict[str, FileStat]:
        rows = self._db.run(
            lambda conn: conn.execute(self._db.q("SELECT path, mtime_ns, size, hash IS NOT NULL FROM {s}.files")).fetchall()
        )
        return {r[0]: FileStat(r[1], r[2], bool(r[3])) for r in rows}

    def file_count(self, source: str | None = None) -> int:
        params: tuple[str, ...] = () if source is None else (source,)
        query = self._db.q("SELECT count(*) FROM {s}.files" + ("" if source is None else " WHERE source = %s"))
        return int(self._db.run(lambda conn: conn.execute(query, params).fetchone()[0]))

    def chunk_count(self, source: str | None = None) -> int:
        if source is None:
            return self._db.snapshot().docs
        query = self._db.q("SELECT count(*) FROM {s}.chunks WHERE source = %s")
        return int(self._db.run(lambda conn: conn.execute(query, (source,)).fetchone()[0]))

    def chunks(self, rowids: Iterable[int]) -> dict[int, ChunkRow]:
        ids = list(rowids)
        if not ids:
            return {}
        query = self._db.q("SELECT rowid, path, source, start_line, end_line, text FROM {s}.chunks WHERE rowid = ANY(%s)")
        rows = self._db.run(lambda conn: conn.execute(query, (ids,)).fetchall())
        return {int(r[0]): ChunkRow(int(r[0]), *r[1:]) for r in rows}

    def chunk_at(self, path: str, line: int) -> ChunkRow | None:
        query = self._db.q(
            "SELECT rowid, path, source, start_line, end_line, text FROM {s}.chunks"
            " WHERE path = %s AND start_line <= %s AND end_line >= %s ORDER BY start_line LIMIT 1"
        )
        row = self._db.run(lambda conn: conn.execute(query, (path, line, line)).fetchone())
        return None if row is None else ChunkRow(int(row[0]), *row[1:])

    def chunk_neighbours(self, rowids: Collection[int]) -> dict[int, tuple[int | None, int | None]]:
        ids = list(dict.fromkeys(rowids))
        if not ids:
            return {}
        query = self._db.q(NEIGHBOURS_SQL.format(table="{s}.chunks", ids="= ANY(%s)"))
        rows = self._db.run(lambda conn: conn.execute(query, (ids,)).fetchall())
        return {int(r): (None if p is None else int(p), None if n is None else int(n)) for r, p, n in rows}

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
        """Swap a file's chunks (text, postings, vectors) and entries for new ones, in the
        caller's transaction (or one of its own): one statement removes the
        old rows and reserves the new rowids, COPY writes the postings, then
        the chunks, vectors and file row go out together (pipeline mode,
        arrays unnested server-side). ``new`` changes nothing here: the one
        statement that removes old rows also reserves the new rowids."""
        terms = tokenizer().documents([c.text for c in chunks])
        now = time.time()
        dims = next((len(c.vector) for c in chunks if c.vector is not None), None)
        with self._db.lock, self._db.atomic():
            conn = self._db.conn
            if dims is not None:
                self._vectors.ensure_table(dims)
            rowids = self._delete_chunks(path, new_docs=len(chunks), new_tokens=sum(d.length for d in terms))
            if self._filled is not None:
                self._filled.add(path)
            self._keyword.add(list(zip(rowids, terms)))
            with self._db.pipeline():
                if chunks:
                    conn.execute(
                        self._db.q(
                            "INSERT INTO {s}.chunks(rowid, id, path, source, start_line, end_line, hash, model, text, updated_at, length) "
                            "SELECT r, i, %s, %s, sl, el, h, %s, t, %s, l FROM unnest(%s::bigint[], %s::text[], %s::int[], "
                            "%s::int[], %s::text[], %s::text[], %s::int[]) AS u(r, i, sl, el, h, t, l)"
                        ),
                        (
                            path,
                            source,
                            model,
                            now,
                            rowids,
                            [c.id for c in chunks],
                            [c.start_line for c in chunks],
                            [c.end_line for c in chunks],
                            [c.hash for c in chunks],
                            [c.text for c in chunks],
                            [d.length for d in terms],
                        ),
                    )
                self._vectors.insert([(r, c.vector, source) for r, c in zip(rowids, chunks) if c.vector is not None])
                self._entries.insert(conn, path, source, entries)
                conn.execute(
                    self._db.q(
                        "INSERT INTO {s}.files(path, source, hash, mtime_ns, size, chunks, messages, note, indexed_at, day) "
                        "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s) ON CONFLICT (path) DO UPDATE SET source = EXCLUDED.source, "
                        "hash = EXCLUDED.hash, mtime_ns = EXCLUDED.mtime_ns, size = EXCLUDED.size, chunks = EXCLUDED.chunks, "
                        "messages = EXCLUDED.messages, note = EXCLUDED.note, indexed_at = EXCLUDED.indexed_at, day = EXCLUDED.day"
                    ),
                    (path, source, file_hash, mtime_ns, size, len(chunks), messages, note, now, day),
                )
            self._written += len(chunks)

    def _delete_chunks(self, path: str, *, new_docs: int = 0, new_tokens: int = 0) -> list[int]:
        """Inside a transaction, in one statement: remove a file's chunks,
        postings and vectors and reserve rowids for ``new_docs`` chunks about
        to be written (returned); the keyword statistics are updated for
        both (with ``new_tokens``) at the commit."""
        conn = self._db.conn
        if self._seq is None:
            self._seq = self._sequence(conn)
        if self._filled is not None and path not in self._filled:
            # Nothing to delete (and a shadow being filled has no index to find it by).
            deleted = "d AS (SELECT NULL::bigint AS rowid, 0 AS length WHERE false)"
        else:
            vectors = ", v AS (DELETE FROM {s}.vectors WHERE rowid IN (SELECT rowid FROM d))" if self._vectors.dims is not None else ""
            deleted = (
                "d AS (DELETE FROM {s}.chunks WHERE path = %(path)s RETURNING rowid, length), "
                "p AS (DELETE FROM {s}.postings WHERE rowid IN (SELECT rowid FROM d)), "
                "e AS (DELETE FROM {s}.entries WHERE path = %(path)s)" + vectors
            )
        # The counts come back on every row, and alone when no rowid is reserved.
        query = self._db.q(
            "WITH " + deleted + ", gone AS (SELECT count(*) AS docs, coalesce(sum(length), 0) AS tokens FROM d) "
            "SELECT r, gone.docs, gone.tokens FROM gone LEFT JOIN (SELECT nextval(%(seq)s) AS r "
            "FROM generate_series(1, %(docs)s)) AS ids ON true"
        )
        rows = conn.execute(query, {"path": path, "docs": new_docs, "seq": self._seq}).fetchall()
        self._db.add_stats(new_docs - int(rows[0][1]), new_tokens - int(rows[0][2]))
        return sorted(int(r[0]) for r in rows if r[0] is not None)  # in the order reserved: the chunks' order

    def entries_within(self, spans: Sequence[tuple[str, int, int]]) -> list[EntryRow]:
        return self._entries.within(spans)

    def entry_vector_sample(self, limit: int) -> list[np.ndarray]:
        return self._entries.vector_sample(limit)

    def entry_vector_search(self, query: np.ndarray, k: int, chunks: Collection[int]) -> list[EntryHit]:
        if not self._entries.present():
            return []
        return self._db.cached("entry_vectors", lambda: EntryVectors(self._entries.vectors_of_chunks)).search(query, k, chunks)

    def touch_file(self, path: str, mtime_ns: int, size: int) -> None:
        with self._db.transaction():
            self._db.conn.execute(self._db.q("UPDATE {s}.files SET mtime_ns = %s, size = %s WHERE path = %s"), (mtime_ns, size, path))

    def delete_file(self, path: str) -> None:
        with self._db.transaction():
            self._delete_chunks(path)
            self._db.conn.execute(self._db.q("DELETE FROM {s}.files WHERE path = %s"), (path,))

    def finish_writes(self) -> None:
        """After a sync's writes: a shadow builds the indexes it was filled
        without; a sync that wrote many chunks VACUUMs what it wrote (the
        postings are then read from their index alone: a search about twice
        as fast); a large index gets its HNSW index (built once)."""
        if self._db.defer_indexes:
            self._db.build_indexes((ROWID_INDEX,) if self._vectors.dims is not None else ())
        if self._written >= VACUUM_AFTER_CHUNKS:
            self._db.vacuum(
                ("chunks", "postings", "entries", "vectors") if self._vectors.dims is not None else ("chunks", "postings", "entries")
            )
            self._written = 0
        self._vectors.build_index_if_large()

    # -- keyword side ----------------------------------------------------------------------

    def keyword_search(
        self, match: str, k: int, sources: Sequence[str] | None = None, paths: Collection[str] | None = None
    ) -> list[tuple[int, float]]:
        """Top-k ``(rowid, bm25)`` for an FTS5 MATCH expression (bm25 < 0, FTS5's scale)."""
        return self._keyword.search(match, k, sources, paths)

    def term_doc_counts(self, terms: Sequence[str]) -> dict[str, int]:
        return self._keyword.doc_counts(terms)

    # -- vector side -------------------------------------------------------------------------

    @property
    def dims(self) -> int | None:
        return self._vectors.dims

    @property
    def vector_store(self) -> str:
        return "pgvector"

    def vector_search(
        self, query: np.ndarray, k: int, sources: Sequence[str] | None = None, paths: Collection[str] | None = None
    ) -> list[tuple[int, float]]:
        return self._vectors.search(query, k, sources, paths)

    def chunk_vectors(self, rowids: Iterable[int]) -> dict[int, np.ndarray]:
        return self._vectors.chunk_vectors(rowids)

    # -- embedding cache -----------------------------------------------------------------------

    def cache_get(self, key: CacheKey, hashes: Sequence[str], *, touch: bool = True) -> dict[str, np.ndarray]:
        return self._cache.get(key, hashes, touch=touch)

    def cache_put(self, key: CacheKey, items: dict[str, np.ndarray]) -> None:
        self._cache.put(key, items)

    def cache_prune(self, max_entries: int) -> int:
        return self._cache.prune(max_entries)

    def cache_count(self) -> int:
        return self._cache.count()

    # -- status ------------------------------------------------------------------------------------

    def vector_status(self) -> VectorStatus:
        info = self._db.server_info()
        dims = self.dims
        return VectorStatus(
            available=info.pgvector_version is not None,
            extension=info.pgvector_version,
            store=self.get_meta("vector_store"),
            backend="none" if dims is None else self._vectors.index_kind,
            dims=dims,
        )

    @property
    def keyword_search_available(self) -> bool:
        return True

    def fts_status(self) -> FtsStatus:
        return FtsStatus(available=True)

    def storage_status(self) -> StorageStatus:
        info = self._db.server_info()
        return StorageStatus(
            binding=f"psycopg {info.driver_version}",
            version=info.server_version,
            backend="postgres",
            server=redact_url(self._url),
            schema=self._db.schema,
        )
