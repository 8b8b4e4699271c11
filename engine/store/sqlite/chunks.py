"""Files, chunks and the keyword index (``files``, ``chunks``, ``chunks_fts``).

``chunks_fts`` is a contentless FTS5 table over the CJK-aware text of
:func:`memext.engine.text.fts_document`, keyed by the chunk's rowid. Write
methods run inside a transaction the caller opened.
"""

from __future__ import annotations

import json
from functools import partial
from operator import itemgetter
from typing import Any, Collection, Iterable, Mapping, Sequence

from ...note_dates import name_date
from ...text import FTS_TOKENIZER, STOP_WORDS, fts_document
from ..base import NEIGHBOURS_SQL, ChunkRow, FileRow, FileStat
from ..tokenizer import fts_tokenize
from . import file_summary
from .connection import Connection

_PATH_COLUMN = itemgetter(0)
_STAT_COLUMNS = itemgetter(slice(1, 4))
#: A FileStat from a tuple of its fields, in C (``tuple.__new__``).
_FILE_STAT = partial(tuple.__new__, FileStat)

#: ``IN`` over one parameter holding a JSON array (:func:`json_array`): one
#: statement text for any number of values, where ``IN (?, ?, ...)`` makes a
#: statement per count (each prepared and kept in the connection's statement
#: cache) and must be cut into parts below SQLite's limit on parameters.
#: SQLite still looks each value up by its index (about 0.5 µs more a query).
IN_JSON = "IN (SELECT value FROM json_each(?))"


#: From this many chunks on, a query's common words (:data:`~..text.STOP_WORDS`)
#: are counted from an fts5vocab table: a MATCH count hands every matching
#: row up to SQL to be counted, the vocabulary table counts the word's
#: postings inside FTS5 (``the`` in 206k chunks: 4.8 ms against 11.9 ms),
#: which saved a one-shot search of "what did we decide to be the plan" at
#: 10k files 12 ms of 28 ms of counting. Below it the saving does not pay
#: for setting the table up (at 21k chunks a search took the same time).
VOCAB_COUNTS_FROM = 50_000
#: The read-only fts5vocab table over ``chunks_fts`` (in the connection's
#: temp schema: nothing is written to the index).
_VOCAB = "temp.memext_chunks_vocab"


def json_array(values: Iterable[Any]) -> str:
    """The parameter of :data:`IN_JSON`: rowids (numpy integers too) or strings."""
    return json.dumps([v if isinstance(v, str) else int(v) for v in values], ensure_ascii=False)


class ChunkTable:
    """The text side of an index: what is indexed and the FTS5 search over it."""

    def __init__(self, db: Connection):
        self.db = db
        #: The FTS token of each stop word met so far (None: not one token),
        #: for :meth:`_vocab_counts`.
        self._stop_tokens: dict[str, str | None] = {}
        #: The connection (its :attr:`Connection.epoch`) that has the vocab table.
        self._vocab_epoch = -1

    @property
    def fts(self) -> bool:
        return self.db.caps.fts5

    # -- reads --------------------------------------------------------------------

    def keyword_search(
        self, match: str, k: int, sources: Sequence[str] | None = None, paths: Collection[str] | None = None
    ) -> list[tuple[int, float]]:
        """Top-k ``(rowid, bm25)`` for an FTS5 MATCH expression, optionally
        only of some sources and some files (filtered before the top k).

        FTS5's bm25() is negative, more negative meaning more relevant.
        """
        if not self.fts or k <= 0 or (paths is not None and not paths):
            return []
        if sources is None and paths is None:
            sql = "SELECT rowid, bm25(chunks_fts) AS r FROM chunks_fts WHERE chunks_fts MATCH ? ORDER BY r LIMIT ?"
            params: list[Any] = [match, k]
        else:
            where, params = chunk_filter("c", sources, paths)
            sql = (
                "SELECT f.rowid, bm25(chunks_fts) AS r FROM chunks_fts f JOIN chunks c ON c.rowid = f.rowid "
                f"WHERE chunks_fts MATCH ? AND {where} ORDER BY r LIMIT ?"
            )
            params = [match, *params, k]
        with self.db.lock:
            return [(r, float(s)) for r, s in self.db.conn.execute(sql, params).fetchall()]

    def term_doc_counts(self, terms: Sequence[str]) -> dict[str, int]:
        """How many chunks contain each term (from the FTS index).

        Counted with a MATCH, so the term goes through the tokenizer (the
        index holds Porter stems: "painting" is stored as "paint"); on a
        large index a common word is looked up by its token in an fts5vocab
        table instead, which gives the same count faster
        (:data:`VOCAB_COUNTS_FROM`). Counts are remembered until the data
        changes.
        """
        if not self.fts or not terms:
            return {}
        with self.db.lock:
            known: dict[str, int] = self.db.cached("doc_counts", dict)
            missing = [t for t in terms if t not in known]
            if missing:
                if len(known) > 50_000:
                    known.clear()
                common = [t for t in missing if t in STOP_WORDS]
                if common and self.chunk_count() >= VOCAB_COUNTS_FROM:
                    known.update(self._vocab_counts(common))
                for t in missing:
                    if t not in known:
                        known[t] = self._match_count(t)
            return {t: known[t] for t in terms}

    def _match_count(self, term: str) -> int:
        """The chunks a MATCH of ``term`` (as one phrase) finds."""
        phrase = '"' + term.replace('"', '""') + '"'
        row = self.db.conn.execute("SELECT count(*) FROM chunks_fts WHERE chunks_fts MATCH ?", (phrase,)).fetchone()
        return row[0] if row else 0

    def _vocab_counts(self, words: Sequence[str]) -> dict[str, int]:
        """Chunk counts of stop words from the fts5vocab table (see
        :data:`VOCAB_COUNTS_FROM`), the same as :meth:`_match_count` gives;
        a word that is not one token is left out (counted with a MATCH).
        Call it holding the connection's lock."""
        new = [w for w in words if w not in self._stop_tokens]
        if new:
            self._stop_tokens.update(fts_tokens(new))
        if self._vocab_epoch != self.db.epoch:
            # DDL in the temp schema: no change to the index or to total_changes.
            self.db.conn.execute(f"CREATE VIRTUAL TABLE IF NOT EXISTS {_VOCAB} USING fts5vocab(main, chunks_fts, row)")
            self._vocab_epoch = self.db.epoch
        out: dict[str, int] = {}
        for w in words:
            token = self._stop_tokens.get(w)
            if token is not None:
                row = self.db.conn.execute(f"SELECT doc FROM {_VOCAB} WHERE term = ?", (token,)).fetchone()
                out[w] = row[0] if row else 0
        return out

    def chunks(self, rowids: Iterable[int]) -> dict[int, ChunkRow]:
        ids = list(rowids)
        if not ids:
            return {}
        with self.db.lock:
            rows = self.db.conn.execute(
                f"SELECT rowid, path, source, start_line, end_line, text FROM chunks WHERE rowid {IN_JSON}", (json_array(ids),)
            ).fetchall()
        return {row[0]: ChunkRow(*row) for row in rows}

    def chunk_at(self, path: str, line: int) -> ChunkRow | None:
        with self.db.lock:
            row = self.db.conn.execute(
                "SELECT rowid, path, source, start_line, end_line, text FROM chunks"
                " WHERE path = ? AND start_line <= ? AND end_line >= ? ORDER BY start_line LIMIT 1",
                (path, line, line),
            ).fetchone()
        return None if row is None else ChunkRow(*row)

    def chunk_neighbours(self, rowids: Collection[int]) -> dict[int, tuple[int | None, int | None]]:
        ids = list(dict.fromkeys(rowids))
        if not ids:
            return {}
        with self.db.lock:
            rows = self.db.conn.execute(NEIGHBOURS_SQL.format(table="chunks", ids=IN_JSON), (json_array(ids),)).fetchall()
        return {r: (p, n) for r, p, n in rows}

    def sources_of(self, rowids: Sequence[int]) -> dict[int, str]:
        if not rowids:
            return {}
        with self.db.lock:
            return dict(self.db.conn.execute(f"SELECT rowid, source FROM chunks WHERE rowid {IN_JSON}", (json_array(rowids),)))

    def file_rows(self) -> dict[str, FileRow]:
        with self.db.lock:
            if not self.db.file_days:  # an old index read-only: date files by name (and mtime)
                rows = self.db.conn.execute("SELECT path, source, hash, mtime_ns, size, chunks, messages, note FROM files").fetchall()
                return {r[0]: FileRow(*r)._replace(day=_iso(name_date(r[0]))) for r in rows}
            rows = self.db.conn.execute("SELECT path, source, hash, mtime_ns, size, chunks, messages, note, day FROM files").fetchall()
        return {r[0]: FileRow(*r) for r in rows}

    def file_stats(self) -> Mapping[str, FileStat]:
        # Kept until the data changes (the freshness keeper and a long-lived
        # process check again and again on an unchanged index); handed out
        # as is, not copied: callers only read it (a Mapping).
        with self.db.lock:
            return self.db.cached("file_stats", self._read_file_stats)

    def _read_file_stats(self) -> dict[str, FileStat]:
        if self.db.file_summary:
            summary = file_summary.load(self.db.conn)
            if summary is not None:
                return summary
        rows = self.db.conn.execute("SELECT path, mtime_ns, size, hash IS NOT NULL FROM files").fetchall()
        # Built without a Python step per row (0.92x a comprehension's time
        # quiet, 0.67x loaded). ``complete`` is SQLite's 0 or 1, which reads
        # as the bool it stands for.
        stats = map(_FILE_STAT, map(_STAT_COLUMNS, rows))
        return dict(zip(map(_PATH_COLUMN, rows), stats))

    def save_summary(self) -> None:
        """Write the file list's summary again after a sync's writes (:mod:`.file_summary`)."""
        if not self.db.file_summary:
            return
        with self.db.lock, self.db.transaction():
            file_summary.save(self.db.conn)

    def chunk_count(self, source: str | None = None) -> int:
        with self.db.lock:
            if source is None:
                # Each file row counts its chunks in the transaction that writes
                # them: summing 10k rows costs a tenth of counting 200k chunks.
                return self.db.cached("count", lambda: int(self.db.conn.execute("SELECT total(chunks) FROM files").fetchone()[0]))
            return self.db.conn.execute("SELECT count(*) FROM chunks WHERE source = ?", (source,)).fetchone()[0]

    def file_count(self, source: str | None = None) -> int:
        with self.db.lock:
            if source is None:
                return self.db.conn.execute("SELECT count(*) FROM files").fetchone()[0]
            return self.db.conn.execute("SELECT count(*) FROM files WHERE source = ?", (source,)).fetchone()[0]

    # -- writes (inside the caller's transaction) ------------------------------------------

    def insert_chunk(
        self, path: str, source: str, chunk_id: str, start_line: int, end_line: int, text_hash: str, model: str, text: str, now: float
    ) -> int:
        """Add one chunk and its keyword entry; returns its rowid."""
        cur = self.db.conn.execute(
            "INSERT INTO chunks(id, path, source, start_line, end_line, hash, model, text, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (chunk_id, path, source, start_line, end_line, text_hash, model, text, now),
        )
        rowid = cur.lastrowid
        if self.fts:
            self.db.conn.execute("INSERT INTO chunks_fts(rowid, text) VALUES (?, ?)", (rowid, fts_document(text)))
        return rowid

    def delete_chunks(self, path: str) -> list[int]:
        """Remove a file's chunks and keyword entries; returns their rowids
        (the caller removes their vectors)."""
        rows = self.db.conn.execute("SELECT rowid, text FROM chunks WHERE path = ?", (path,)).fetchall()
        if self.fts:
            for rowid, text in rows:
                # Contentless FTS5 deletes by replaying the indexed text.
                self.db.conn.execute("INSERT INTO chunks_fts(chunks_fts, rowid, text) VALUES ('delete', ?, ?)", (rowid, fts_document(text)))
        self.db.conn.execute("DELETE FROM chunks WHERE path = ?", (path,))
        return [r for r, _ in rows]

    def put_file(
        self,
        path: str,
        source: str,
        file_hash: str | None,
        mtime_ns: int,
        size: int,
        chunks: int,
        messages: int,
        note: str | None,
        now: float,
        day: str | None = None,
    ) -> None:
        self.db.conn.execute(
            "INSERT OR REPLACE INTO files(path, source, hash, mtime_ns, size, chunks, messages, note, indexed_at, day) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (path, source, file_hash, mtime_ns, size, chunks, messages, note, now, day),
        )

    def touch_file(self, path: str, mtime_ns: int, size: int) -> None:
        self.db.conn.execute("UPDATE files SET mtime_ns = ?, size = ? WHERE path = ?", (mtime_ns, size, path))

    def delete_file_row(self, path: str) -> None:
        self.db.conn.execute("DELETE FROM files WHERE path = ?", (path,))


def chunk_filter(alias: str, sources: Sequence[str] | None, paths: Collection[str] | None) -> tuple[str, list[Any]]:
    """A WHERE condition on ``chunks`` (as ``alias``) keeping only some
    sources and some files, and its parameters. The paths go in as one JSON
    array, so any number of them fits in one statement."""
    where, params = ["1"], []
    if sources is not None:
        where.append(f"{alias}.source IN ({','.join('?' * len(sources))})")
        params += list(sources)
    if paths is not None:
        where.append(f"{alias}.path {IN_JSON}")
        params.append(json_array(paths))
    return " AND ".join(where), params


def _iso(day: Any) -> str | None:
    return day.isoformat() if day is not None else None


def fts_tokens(words: Sequence[str]) -> dict[str, str | None]:
    """The token the index's tokenizer (:data:`~...text.FTS_TOKENIZER`: Porter
    stems, "was" -> "wa") makes of each word, None where it makes none or
    several."""
    return {w: made[0] if len(made) == 1 else None for w, made in zip(words, fts_tokenize(FTS_TOKENIZER, words))}
