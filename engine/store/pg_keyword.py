"""BM25 over term postings in PostgreSQL, ranked as FTS5's ``bm25()``.

PostgreSQL's own full-text search ranks with ``ts_rank`` (no IDF, no length
normalisation of BM25's kind) and stems with Snowball; the engine's scores
and defaults were tuned on FTS5's BM25. So this store keeps its own
postings, ``postings(term, rowid, tf, length)``, with the terms FTS5 would
index (:mod:`.pg_terms`), and computes FTS5's formula in one query:

    idf(t) = ln((N - n_t + 0.5) / (n_t + 0.5)), 1e-6 when <= 0
    bm25   = -sum idf(t) * tf * (k1 + 1) / (tf + k1 * (1 - b + b * len / avglen))

with k1 = 1.2, b = 0.75, N the chunk count and avglen the mean chunk length
in tokens (``stats``), so scores equal SQLite's for the same chunks. A
prefix phrase (ID-like terms) counts every token it starts, as FTS5 does;
a phrase of several tokens (rare: query terms are single words) counts
chunks holding all of them, an approximation of FTS5's adjacency.
"""

from __future__ import annotations

from typing import Any, Collection, Sequence

from .pg_connection import PgConnection
from .pg_terms import DocumentTerms, MatchTerm, parse_match, tokenizer

K1 = 1.2
B = 0.75


class KeywordIndex:
    """The postings of one agent's chunks and the BM25 search over them."""

    def __init__(self, db: PgConnection):
        self.db = db

    # -- writes (inside the caller's transaction) ------------------------------------

    def add(self, rows: Sequence[tuple[int, DocumentTerms]]) -> None:
        """Postings of new chunks, in one statement (the caller updates the statistics)."""
        postings = [(term, rowid, tf, doc.length) for rowid, doc in rows for term, tf in doc.tf.items()]
        if postings:
            terms, rowids, tfs, lengths = (list(col) for col in zip(*postings))
            self.db.conn.execute(
                self.db.q(
                    "INSERT INTO {s}.postings(term, rowid, tf, length) "
                    "SELECT * FROM unnest(%s::text[], %s::bigint[], %s::int[], %s::int[])"
                ),
                (terms, rowids, tfs, lengths),
            )

    # -- reads ------------------------------------------------------------------------------

    def search(
        self, match: str, k: int, sources: Sequence[str] | None = None, paths: Collection[str] | None = None
    ) -> list[tuple[int, float]]:
        """Top-k ``(rowid, bm25)`` for an FTS5 MATCH string (bm25 < 0)."""
        terms = parse_match(match)
        snap = self.db.snapshot()
        if not terms or k <= 0 or snap.docs <= 0 or (paths is not None and not paths):
            return []
        parts: list[Any] = []
        params: list[Any] = []
        for i, term in enumerate(terms):
            sql, args = self._hits(i, term)
            parts.append(sql)
            params += args
        sql = self.db.sql
        where = []
        if sources is not None:
            where.append(sql.SQL("c.source = ANY(%s)"))
            params.append(list(sources))
        if paths is not None:
            where.append(sql.SQL("c.path = ANY(%s)"))
            params.append(list(paths))
        join = sql.SQL("")
        if where:
            join = self.db.q("JOIN {s}.chunks c ON c.rowid = h.rowid WHERE ") + sql.SQL(" AND ").join(where)
        avglen = snap.tokens / snap.docs if snap.docs else 1.0
        query = sql.SQL(
            "WITH h AS ({hits}), w AS (SELECT t, greatest(ln(({n} - count(*) + 0.5::float8) / (count(*) + 0.5::float8)), 1e-6::float8) AS idf "
            "FROM h GROUP BY t) "
            "SELECT h.rowid, -sum(w.idf * h.tf * {k1p} / (h.tf + {k1} * ({one_b} + {b} * h.length / {avg}))) AS score "
            "FROM h JOIN w ON w.t = h.t {join} GROUP BY h.rowid ORDER BY score, h.rowid LIMIT {k}"
        ).format(
            hits=sql.SQL(" UNION ALL ").join(parts),
            # float8 throughout: literals like 2.2 would be numeric, whose
            # arithmetic is several times slower.
            n=_float8(snap.docs),
            k1p=_float8(K1 + 1),
            k1=_float8(K1),
            one_b=_float8(1 - B),
            b=_float8(B),
            avg=_float8(avglen or 1.0),
            join=join,
            k=sql.Literal(int(k)),
        )
        rows = self.db.run(lambda conn: conn.execute(query, params).fetchall())
        return [(int(r), float(s)) for r, s in rows]

    def _hits(self, i: int, term: MatchTerm) -> tuple[Any, list[Any]]:
        """The SQL for one phrase's matching chunks: ``(t, rowid, tf, length)``."""
        sql = self.db.sql
        t = sql.Literal(i)
        if len(term.tokens) == 1 and not term.prefix:
            return self.db.q("SELECT {t} AS t, rowid, tf, length FROM {s}.postings WHERE term = %s").format(t=t), [term.tokens[0]]
        if len(term.tokens) == 1:
            return (
                self.db.q(
                    "SELECT {t} AS t, rowid, sum(tf)::integer AS tf, max(length) AS length FROM {s}.postings "
                    "WHERE term LIKE %s GROUP BY rowid"
                ).format(t=t),
                [_like_prefix(term.tokens[0])],
            )
        # All tokens of the phrase in the chunk; tf the rarest token's.
        joins = sql.SQL(" ").join(
            self.db.q("JOIN {s}.postings {a} ON {a}.rowid = p0.rowid AND {a}.term = %s").format(a=sql.Identifier(f"p{j}"))
            for j in range(1, len(term.tokens))
        )
        least = sql.SQL(", ").join(sql.SQL("{}.tf").format(sql.Identifier(f"p{j}")) for j in range(len(term.tokens)))
        return (
            self.db.q("SELECT {t} AS t, p0.rowid, least({least}) AS tf, p0.length FROM {s}.postings p0 {joins} WHERE p0.term = %s").format(
                t=t, least=least, joins=joins
            ),
            [*term.tokens[1:], term.tokens[0]],
        )

    def doc_counts(self, terms: Sequence[str]) -> dict[str, int]:
        """How many chunks contain each query term (remembered until the data changes)."""
        if not terms:
            return {}
        known: dict[str, int] = self.db.cached("doc_counts", dict)
        missing = [t for t in terms if t not in known]
        if missing:
            if len(known) > 50_000:
                known.clear()
            tok = tokenizer()
            tokens = {t: tok.tokens(t) for t in missing}
            singles = sorted({ts[0] for ts in tokens.values() if len(ts) == 1})
            found: dict[str, int] = {}
            if singles:
                found = dict(
                    self.db.run(
                        lambda conn: conn.execute(
                            self.db.q("SELECT term, count(*) FROM {s}.postings WHERE term = ANY(%s) GROUP BY term"), (singles,)
                        ).fetchall()
                    )
                )
            for t, ts in tokens.items():
                if not ts:
                    known[t] = 0
                elif len(ts) == 1:
                    known[t] = int(found.get(ts[0], 0))
                else:
                    known[t] = self._phrase_count(ts)
        return {t: known[t] for t in terms}

    def _phrase_count(self, tokens: tuple[str, ...]) -> int:
        sql = self.db.sql
        joins = sql.SQL(" ").join(
            self.db.q("JOIN {s}.postings {a} ON {a}.rowid = p0.rowid AND {a}.term = %s").format(a=sql.Identifier(f"p{j}"))
            for j in range(1, len(tokens))
        )
        query = self.db.q("SELECT count(*) FROM {s}.postings p0 {joins} WHERE p0.term = %s").format(joins=joins)
        return int(self.db.run(lambda conn: conn.execute(query, [*tokens[1:], tokens[0]]).fetchone()[0]))


def _float8(value: float) -> Any:
    from psycopg import sql

    return sql.SQL("{}::float8").format(sql.Literal(float(value)))


def _like_prefix(token: str) -> str:
    return token.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
