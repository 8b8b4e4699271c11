"""One agent's index: a SQLite file with FTS5, sqlite-vec and an embedding cache.

Tables (DESIGN.md §4): ``meta`` (fingerprint and bookkeeping), ``files``,
``chunks``, ``chunks_vec`` (vec0, created once the vector size is known),
``chunks_fts`` (contentless FTS5 over the CJK-aware text of
:func:`engine.text.fts_document`) and ``embedding_cache``.

A :class:`Store` is one connection. Writers hold the agent's lock
(:mod:`engine.lock`) and write one transaction per file. Readers check
``PRAGMA data_version`` before each read and reopen when another process
has swapped in a rebuilt index (the ``generation`` in ``meta`` changed).
"""

from __future__ import annotations

import json
import os
import threading
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Iterator, Sequence

import numpy as np

from . import db
from .errors import IndexOpenError, MemextError
from .text import FTS_TOKENIZER, fts_document
from .vectors import MatrixIndex, l2_to_similarity, to_blob

SCHEMA_VERSION = 1
#: With ``store.vector.backend = "auto"``, indexes above this many chunks
#: search an in-memory matrix (see engine.vectors for the measurements).
VECTOR_AUTO_NUMPY_ABOVE = 20_000

_SCHEMA = f"""
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS files (
    path TEXT PRIMARY KEY,
    source TEXT NOT NULL,
    hash TEXT,
    mtime_ns INTEGER NOT NULL,
    size INTEGER NOT NULL,
    chunks INTEGER NOT NULL DEFAULT 0,
    messages INTEGER NOT NULL DEFAULT 0,
    note TEXT,
    indexed_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS chunks (
    rowid INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    path TEXT NOT NULL,
    source TEXT NOT NULL,
    start_line INTEGER NOT NULL,
    end_line INTEGER NOT NULL,
    hash TEXT NOT NULL,
    model TEXT NOT NULL,
    text TEXT NOT NULL,
    updated_at REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS chunks_path ON chunks(path);
CREATE TABLE IF NOT EXISTS embedding_cache (
    provider TEXT NOT NULL,
    model TEXT NOT NULL,
    endpoint_key TEXT NOT NULL,
    hash TEXT NOT NULL,
    dims INTEGER NOT NULL,
    embedding BLOB NOT NULL,
    used_at REAL NOT NULL,
    PRIMARY KEY (provider, model, endpoint_key, hash)
);
CREATE INDEX IF NOT EXISTS embedding_cache_used ON embedding_cache(used_at);
"""
_FTS_SCHEMA = f"CREATE VIRTUAL TABLE IF NOT EXISTS chunks_fts USING fts5(text, content='', tokenize=\"{FTS_TOKENIZER}\")"


@dataclass(frozen=True)
class FileRow:
    path: str
    source: str
    hash: str | None
    mtime_ns: int
    size: int
    chunks: int
    messages: int
    note: str | None


@dataclass(frozen=True)
class ChunkRow:
    """A stored chunk, as search and status read it."""

    rowid: int
    path: str
    source: str
    start_line: int
    end_line: int
    text: str


@dataclass(frozen=True)
class NewChunk:
    """A chunk to write: its id, place, text and (optional) unit vector."""

    id: str
    start_line: int
    end_line: int
    hash: str
    text: str
    vector: np.ndarray | None


@dataclass(frozen=True)
class CacheKey:
    provider: str
    model: str
    endpoint_key: str


class CorruptIndex(Exception):
    """The file is not a usable SQLite index (garbage, truncated, wrong app)."""


class Store:
    """A connection to one agent's index file."""

    def __init__(
        self,
        path: str | Path,
        *,
        vector_enabled: bool = True,
        extension_path: str = "",
        vector_backend: str = "auto",
    ):
        self.path = Path(path)
        self._vector_enabled = vector_enabled
        self._extension_path = extension_path
        self._vector_backend = vector_backend
        self._lock = threading.RLock()
        self._matrix: MatrixIndex | None = None
        self._matrix_loading = False
        self._memo: dict[str, tuple[Any, Any]] = {}
        self._open()

    # -- connection -----------------------------------------------------

    def _open(self) -> None:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise IndexOpenError(
                f"cannot create the folder of the index {self.path}: {exc.strerror or exc} (check store.path)"
            ) from exc
        try:
            self.conn, self.caps = db.connect(
                self.path, load_vec=self._vector_enabled, extension_path=self._extension_path
            )
            self._init_schema()
        except (CorruptIndex, MemextError):
            self._close_quietly()
            raise
        except Exception as exc:
            self._close_quietly()
            if db.is_sqlite_error(exc) and _looks_corrupt(exc):
                raise CorruptIndex(f"{self.path} is not a usable index ({exc})") from exc
            if isinstance(exc, OSError) or db.is_sqlite_error(exc):
                raise IndexOpenError(f"cannot open the index {self.path}: {exc} (check store.path)") from exc
            raise
        self._data_version = self._read_data_version()
        self._generation = self.get_meta("generation")
        self._inode = _inode(self.path)
        self._matrix = None
        self._matrix_key: Any = None
        self._memo = {}

    def _init_schema(self) -> None:
        # Readers must not take the write lock, so only write when needed.
        exists = self.conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'meta'").fetchone()
        if not exists and self.conn.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchone():
            # Another program's database: adding our tables to it (or moving
            # it aside as corrupt) would damage that program's data.
            raise IndexOpenError(f"{self.path} is a SQLite database of another program, not a memext index (check store.path)")
        if not exists or self.get_meta("schema_version") is None:
            with self.transaction():
                for statement in _SCHEMA.split(";"):
                    if statement.strip():
                        self.conn.execute(statement)
                if self.caps.fts5:
                    self.conn.execute(_FTS_SCHEMA)
                if self.get_meta("schema_version") is None:
                    self.set_meta("schema_version", str(SCHEMA_VERSION))
                    self.set_meta("generation", uuid.uuid4().hex)
                    self.set_meta("created_at", str(time.time()))
        version = int(self.get_meta("schema_version") or 0)
        if version != SCHEMA_VERSION:
            raise CorruptIndex(f"{self.path} has index schema {version}, this memext uses {SCHEMA_VERSION}")

    def close(self) -> None:
        with self._lock:
            self._close_quietly()

    def _close_quietly(self) -> None:
        try:
            self.conn.close()
        except Exception:
            pass

    def _read_data_version(self) -> int:
        return self.conn.execute("PRAGMA data_version").fetchone()[0]

    def refresh(self) -> bool:
        """Reopen when another process replaced the index; True if it did.

        Cheap enough to call before every read: one stat and one pragma.
        """
        with self._lock:
            if _inode(self.path) != self._inode:
                self._close_quietly()
                self._open()
                return True
            version = self._read_data_version()
            if version == self._data_version:
                return False
            self._data_version = version
            if self.get_meta("generation") != self._generation:
                self._close_quietly()
                self._open()
                return True
            return False

    # -- transactions and meta -------------------------------------------

    class _Tx:
        def __init__(self, store: "Store"):
            self.store = store

        def __enter__(self):
            self.store._lock.acquire()
            self.store.conn.execute("BEGIN IMMEDIATE")
            return self.store

        def __exit__(self, exc_type, exc, tb):
            try:
                if exc_type is None:
                    self.store.conn.execute("COMMIT")
                else:
                    self.store.conn.execute("ROLLBACK")
            finally:
                self.store._lock.release()
            return False

    def transaction(self) -> "Store._Tx":
        """``with store.transaction():`` one write transaction (BEGIN IMMEDIATE)."""
        return Store._Tx(self)

    def get_meta(self, key: str) -> str | None:
        row = self.conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    def set_meta(self, key: str, value: str) -> None:
        self.conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (key, value))

    def get_meta_json(self, key: str, default: Any = None) -> Any:
        raw = self.get_meta(key)
        return json.loads(raw) if raw else default

    def set_meta_json(self, key: str, value: Any) -> None:
        self.set_meta(key, json.dumps(value, sort_keys=True, ensure_ascii=False))

    # -- vectors ----------------------------------------------------------

    @property
    def dims(self) -> int | None:
        raw = self.get_meta("dims")
        return int(raw) if raw else None

    @property
    def vector_store(self) -> str:
        """"vec0" when sqlite-vec is loaded, else "blob" (numpy scan)."""
        return "vec0" if self.caps.vec_version else "blob"

    def ensure_vector_table(self, dims: int) -> None:
        """Create ``chunks_vec`` for vectors of ``dims`` (inside a transaction)."""
        current = self.dims
        if current == dims:
            return
        if current is not None:
            raise ValueError(f"index holds {current}-dim vectors, got {dims}; the index must be rebuilt")
        if self.vector_store == "vec0":
            # L2 on unit vectors orders like cosine and is the faster vec0 path.
            self.conn.execute(f"CREATE VIRTUAL TABLE chunks_vec USING vec0(embedding float[{dims}], source text)")
        else:
            self.conn.execute("CREATE TABLE chunks_vec (rowid INTEGER PRIMARY KEY, embedding BLOB NOT NULL, source TEXT NOT NULL)")
        self.set_meta("dims", str(dims))
        self.set_meta("vector_store", self.vector_store)

    def vector_search(self, query: np.ndarray, k: int, sources: Sequence[str] | None = None) -> list[tuple[int, float]]:
        """Top-k ``(rowid, cosine similarity)``.

        vec0 KNN for small indexes; an in-memory matrix for large ones or
        when sqlite-vec is unavailable.
        """
        if self.dims is None or k <= 0:
            return []
        if self._use_matrix():
            matrix = self._matrix_ready()
            if matrix is not None:
                return matrix.search(query, k, sources)
        if self.get_meta("vector_store") != "vec0":
            return []
        sql = "SELECT rowid, distance FROM chunks_vec WHERE embedding MATCH ? AND k = ?"
        params: list[Any] = [to_blob(query), k]
        if sources is not None and len(sources) == 1:
            sql += " AND source = ?"
            params.append(sources[0])
        with self._lock:
            rows = self.conn.execute(sql, params).fetchall()
        out = [(rowid, l2_to_similarity(dist)) for rowid, dist in rows]
        if sources is not None and len(sources) > 1:
            allowed = set(sources)
            keep = self.sources_of([r for r, _ in out])
            out = [(r, s) for r, s in out if keep.get(r) in allowed]
        return out

    def vector_backend_in_use(self) -> str:
        """"vec0", "numpy" or "none" as the next search would use it."""
        if self.dims is None:
            return "none"
        return "numpy" if self._use_matrix() else "vec0"

    def _use_matrix(self) -> bool:
        if self.get_meta("vector_store") == "blob":
            return True
        if self._vector_backend == "numpy":
            return True
        if self._vector_backend == "vec0":
            return False
        return self.chunk_count() > VECTOR_AUTO_NUMPY_ABOVE

    def _matrix_ready(self) -> MatrixIndex | None:
        """The up-to-date matrix, or None while it loads in the background
        (the caller then uses vec0, so the first search never waits)."""
        with self._lock:
            if self._matrix is None:
                if self.get_meta("vector_store") == "blob" or self._vector_backend == "numpy":
                    self._load_matrix()
                elif not self._matrix_loading:
                    self._matrix_loading = True
                    threading.Thread(target=self._load_matrix_in_background, daemon=True).start()
                    return None
                else:
                    return None
            matrix = self._matrix
            key = self._data_key()
            stale = key != self._matrix_key
            self._matrix_key = key
        if matrix is not None and stale:
            matrix.refresh(self._vector_rows_after, self._live_rowids)
        return matrix

    def _load_matrix(self) -> None:
        matrix = MatrixIndex(self.dims or 0)
        matrix.refresh(self._vector_rows_after, self._live_rowids)
        self._matrix = matrix

    def _load_matrix_in_background(self) -> None:
        try:
            # Its own connection: the main one stays free for searches.
            other = Store(self.path, vector_enabled=self._vector_enabled, extension_path=self._extension_path)
            try:
                matrix = MatrixIndex(other.dims or 0)
                matrix.refresh(other._vector_rows_after, other._live_rowids)
            finally:
                other.close()
            with self._lock:
                self._matrix = matrix
        except Exception:
            pass  # vec0 keeps serving; the next search tries again
        finally:
            self._matrix_loading = False

    def _vector_rows_after(self, rowid: int) -> Iterator[tuple[int, bytes, str]]:
        with self._lock:
            rows = self.conn.execute(
                "SELECT rowid, embedding, source FROM chunks_vec WHERE rowid > ?", (rowid,)
            ).fetchall()
        return iter(rows)

    def _live_rowids(self) -> np.ndarray:
        with self._lock:
            # chunks, not the vec0 table: same rowids, and a plain table scans faster.
            rows = self.conn.execute("SELECT rowid FROM chunks").fetchall()
        return np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))

    # -- keyword side -----------------------------------------------------

    def keyword_search(self, match: str, k: int, sources: Sequence[str] | None = None) -> list[tuple[int, float]]:
        """Top-k ``(rowid, bm25)`` for an FTS5 MATCH expression.

        FTS5's bm25() is negative, more negative meaning more relevant.
        """
        if not self.caps.fts5 or k <= 0:
            return []
        if sources is None:
            sql = "SELECT rowid, bm25(chunks_fts) AS r FROM chunks_fts WHERE chunks_fts MATCH ? ORDER BY r LIMIT ?"
            params: list[Any] = [match, k]
        else:
            marks = ",".join("?" * len(sources))
            sql = (
                "SELECT f.rowid, bm25(chunks_fts) AS r FROM chunks_fts f JOIN chunks c ON c.rowid = f.rowid "
                f"WHERE chunks_fts MATCH ? AND c.source IN ({marks}) ORDER BY r LIMIT ?"
            )
            params = [match, *sources, k]
        with self._lock:
            return [(r, float(s)) for r, s in self.conn.execute(sql, params).fetchall()]

    def term_doc_counts(self, terms: Sequence[str]) -> dict[str, int]:
        """How many chunks contain each term (from the FTS index).

        Counted with a MATCH, so the term goes through the tokenizer (the
        index holds Porter stems: "painting" is stored as "paint") at the
        cost of an fts5vocab lookup (both walk the term's postings); counts
        are remembered until the data changes.
        """
        if not self.caps.fts5 or not terms:
            return {}
        with self._lock:
            known: dict[str, int] = self._cached("doc_counts", dict)
            missing = [t for t in terms if t not in known]
            if missing:
                if len(known) > 50_000:
                    known.clear()
                for t in missing:
                    phrase = '"' + t.replace('"', '""') + '"'
                    row = self.conn.execute("SELECT count(*) FROM chunks_fts WHERE chunks_fts MATCH ?", (phrase,)).fetchone()
                    known[t] = row[0] if row else 0
            return {t: known[t] for t in terms}

    # -- chunks and files -------------------------------------------------

    def chunks(self, rowids: Iterable[int]) -> dict[int, ChunkRow]:
        ids = list(rowids)
        if not ids:
            return {}
        out: dict[int, ChunkRow] = {}
        with self._lock:
            for start in range(0, len(ids), 500):
                part = ids[start : start + 500]
                marks = ",".join("?" * len(part))
                for row in self.conn.execute(
                    f"SELECT rowid, path, source, start_line, end_line, text FROM chunks WHERE rowid IN ({marks})", part
                ):
                    out[row[0]] = ChunkRow(*row)
        return out

    def chunk_vectors(self, rowids: Iterable[int]) -> dict[int, np.ndarray]:
        """Stored vectors of some chunks (for MMR and hybrid scoring).

        From the in-memory matrix when it is loaded, else from the embedding
        cache (the same vectors, by text hash: about 0.02 ms a chunk), else
        from ``chunks_vec``, where a vec0 point lookup costs about 0.3 ms.
        """
        ids = list(rowids)
        if not ids or self.dims is None:
            return {}
        out: dict[int, np.ndarray] = {}
        matrix = self._matrix
        if matrix is not None:
            out.update(matrix.vectors(ids))
        missing = [r for r in ids if r not in out]
        fp = self.get_meta_json("fingerprint") or {}
        if missing and fp.get("provider", "none") != "none":
            marks = ",".join("?" * len(missing))
            with self._lock:
                rows = self.conn.execute(
                    "SELECT c.rowid, e.embedding FROM chunks c JOIN embedding_cache e ON e.provider = ? AND e.model = ? "
                    f"AND e.endpoint_key = ? AND e.hash = c.hash WHERE c.rowid IN ({marks})",
                    [fp["provider"], fp.get("model", ""), fp.get("endpoint", ""), *missing],
                ).fetchall()
            out.update((r, np.frombuffer(b, dtype="<f4")) for r, b in rows if len(b) == 4 * self.dims)
            missing = [r for r in missing if r not in out]
        if missing:
            marks = ",".join("?" * len(missing))
            with self._lock:
                rows = self.conn.execute(f"SELECT rowid, embedding FROM chunks_vec WHERE rowid IN ({marks})", missing).fetchall()
            out.update((r, np.frombuffer(b, dtype="<f4")) for r, b in rows)
        return out

    def sources_of(self, rowids: Sequence[int]) -> dict[int, str]:
        if not rowids:
            return {}
        marks = ",".join("?" * len(rowids))
        with self._lock:
            return dict(self.conn.execute(f"SELECT rowid, source FROM chunks WHERE rowid IN ({marks})", list(rowids)))

    def file_rows(self) -> dict[str, FileRow]:
        with self._lock:
            rows = self.conn.execute(
                "SELECT path, source, hash, mtime_ns, size, chunks, messages, note FROM files"
            ).fetchall()
        return {r[0]: FileRow(*r) for r in rows}

    def _data_key(self) -> tuple[int, int]:
        """Changes whenever this or any other connection changed the data."""
        return (self._read_data_version(), self.conn.total_changes)

    def _cached(self, name: str, compute):
        """``compute()`` remembered until the data changes (searches ask
        for counts every time, and count(*) scans)."""
        key = self._data_key()
        hit = self._memo.get(name)
        if hit is None or hit[0] != key:
            hit = (key, compute())
            self._memo[name] = hit
        return hit[1]

    def chunk_count(self, source: str | None = None) -> int:
        with self._lock:
            if source is None:
                return self._cached("count", lambda: self.conn.execute("SELECT count(*) FROM chunks").fetchone()[0])
            return self.conn.execute("SELECT count(*) FROM chunks WHERE source = ?", (source,)).fetchone()[0]

    def file_count(self, source: str | None = None) -> int:
        with self._lock:
            if source is None:
                return self.conn.execute("SELECT count(*) FROM files").fetchone()[0]
            return self.conn.execute("SELECT count(*) FROM files WHERE source = ?", (source,)).fetchone()[0]

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
    ) -> None:
        """Swap a file's chunks for new ones, in one transaction.

        ``file_hash`` None records the file as not fully indexed (e.g. its
        vectors are missing after a provider failure) so the next sync
        tries it again.
        """
        now = time.time()
        with self.transaction():
            self._delete_chunks(path)
            dims = next((len(c.vector) for c in chunks if c.vector is not None), None)
            if dims is not None:
                self.ensure_vector_table(dims)
            for c in chunks:
                cur = self.conn.execute(
                    "INSERT INTO chunks(id, path, source, start_line, end_line, hash, model, text, updated_at) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (c.id, path, source, c.start_line, c.end_line, c.hash, model, c.text, now),
                )
                rowid = cur.lastrowid
                if self.caps.fts5:
                    self.conn.execute("INSERT INTO chunks_fts(rowid, text) VALUES (?, ?)", (rowid, fts_document(c.text)))
                if c.vector is not None:
                    self.conn.execute(
                        "INSERT INTO chunks_vec(rowid, embedding, source) VALUES (?, ?, ?)",
                        (rowid, to_blob(c.vector), source),
                    )
            self.conn.execute(
                "INSERT OR REPLACE INTO files(path, source, hash, mtime_ns, size, chunks, messages, note, indexed_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (path, source, file_hash, mtime_ns, size, len(chunks), messages, note, now),
            )

    def touch_file(self, path: str, mtime_ns: int, size: int) -> None:
        """Record a new mtime/size for a file whose content did not change."""
        with self.transaction():
            self.conn.execute("UPDATE files SET mtime_ns = ?, size = ? WHERE path = ?", (mtime_ns, size, path))

    def delete_file(self, path: str) -> None:
        with self.transaction():
            self._delete_chunks(path)
            self.conn.execute("DELETE FROM files WHERE path = ?", (path,))

    def _delete_chunks(self, path: str) -> None:
        rows = self.conn.execute("SELECT rowid, text FROM chunks WHERE path = ?", (path,)).fetchall()
        has_vec = self.dims is not None
        for rowid, text in rows:
            if self.caps.fts5:
                # Contentless FTS5 deletes by replaying the indexed text.
                self.conn.execute(
                    "INSERT INTO chunks_fts(chunks_fts, rowid, text) VALUES ('delete', ?, ?)", (rowid, fts_document(text))
                )
            if has_vec:
                self.conn.execute("DELETE FROM chunks_vec WHERE rowid = ?", (rowid,))
        self.conn.execute("DELETE FROM chunks WHERE path = ?", (path,))

    # -- embedding cache --------------------------------------------------

    def cache_get(self, key: CacheKey, hashes: Sequence[str]) -> dict[str, np.ndarray]:
        """Cached vectors by text hash; hits are marked as recently used."""
        out: dict[str, np.ndarray] = {}
        if not hashes:
            return out
        now = time.time()
        with self._lock:
            for start in range(0, len(hashes), 500):
                part = list(hashes[start : start + 500])
                marks = ",".join("?" * len(part))
                rows = self.conn.execute(
                    f"SELECT hash, embedding FROM embedding_cache WHERE provider = ? AND model = ? AND endpoint_key = ? "
                    f"AND hash IN ({marks})",
                    [key.provider, key.model, key.endpoint_key, *part],
                ).fetchall()
                for h, blob in rows:
                    out[h] = np.frombuffer(blob, dtype="<f4")
            if out:
                with self.transaction():
                    self.conn.executemany(
                        "UPDATE embedding_cache SET used_at = ? WHERE provider = ? AND model = ? AND endpoint_key = ? AND hash = ?",
                        [(now, key.provider, key.model, key.endpoint_key, h) for h in out],
                    )
        return out

    def cache_put(self, key: CacheKey, items: dict[str, np.ndarray]) -> None:
        if not items:
            return
        now = time.time()
        with self.transaction():
            self.conn.executemany(
                "INSERT OR REPLACE INTO embedding_cache(provider, model, endpoint_key, hash, dims, embedding, used_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                [(key.provider, key.model, key.endpoint_key, h, len(v), to_blob(v), now) for h, v in items.items()],
            )

    def cache_prune(self, max_entries: int) -> int:
        """Drop the least recently used entries above ``max_entries``."""
        with self.transaction():
            count = self.conn.execute("SELECT count(*) FROM embedding_cache").fetchone()[0]
            extra = count - max_entries
            if extra <= 0:
                return 0
            self.conn.execute(
                "DELETE FROM embedding_cache WHERE rowid IN (SELECT rowid FROM embedding_cache ORDER BY used_at ASC LIMIT ?)",
                (extra,),
            )
            return extra

    def cache_count(self) -> int:
        with self._lock:
            return self.conn.execute("SELECT count(*) FROM embedding_cache").fetchone()[0]

    def copy_cache_from(self, other_path: Path) -> int:
        """Seed this index's embedding cache from another index file."""
        with self._lock:
            self.conn.execute("ATTACH DATABASE ? AS old", (str(other_path),))
            try:
                with self.transaction():
                    self.conn.execute("INSERT OR IGNORE INTO embedding_cache SELECT * FROM old.embedding_cache")
            finally:
                self.conn.execute("DETACH DATABASE old")
        return self.cache_count()

    # -- swapping a rebuilt index in ----------------------------------------

    def copy_into(self, target: "Store") -> None:
        """Replace ``target``'s whole content with this index, atomically.

        SQLite's backup API writes every page into the target in one write
        transaction: readers of the target (in any process) keep their
        snapshot until it commits, then see the new index. Unlike renaming
        files over a live WAL database, it cannot pair a new file with the
        old file's ``-wal``/``-shm``.
        """
        with self._lock, target._lock:
            self.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            self.conn.backup(target.conn)
            target.conn.execute("PRAGMA wal_checkpoint(PASSIVE)")
        target._reset_after_swap()

    def _reset_after_swap(self) -> None:
        with self._lock:
            self._close_quietly()
            self._open()


def _inode(path: Path) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino)


def _looks_corrupt(exc: BaseException) -> bool:
    text = str(exc).lower()
    return any(s in text for s in ("not a database", "malformed", "file is encrypted", "disk image", "no such table: meta"))


INDEX_COMPANIONS = ("", "-wal", "-shm", "-journal")


def move_aside(path: Path) -> Path:
    """Rename an unusable index file and its WAL companions to
    ``<name>.corrupt-<time>`` (never delete: ``store.path`` may name a file
    that is not ours); returns the new name of the main file."""
    stamp = time.strftime("%Y%m%dT%H%M%S")
    aside = path.with_name(f"{path.name}.corrupt-{stamp}")
    n = 1
    while any(Path(str(aside) + s).exists() for s in INDEX_COMPANIONS):
        n += 1
        aside = path.with_name(f"{path.name}.corrupt-{stamp}-{n}")
    try:
        for suffix in INDEX_COMPANIONS:
            src = Path(str(path) + suffix)
            if src.exists():
                os.replace(src, str(aside) + suffix)
    except OSError as exc:
        raise IndexOpenError(f"{path} is not a usable index and could not be moved aside: {exc.strerror or exc}") from exc
    return aside


def remove_index_files(path: Path) -> None:
    """Delete an index file and its WAL companions (missing ones are fine).

    Only for files memext made itself (rebuild shadows): an unusable index
    is moved aside with :func:`move_aside` instead."""
    for suffix in INDEX_COMPANIONS:
        try:
            os.remove(str(path) + suffix)
        except FileNotFoundError:
            pass
