"""BM25 over term postings in PostgreSQL, ranked as FTS5's ``bm25()``.

PostgreSQL's own full-text search ranks with ``ts_rank`` (no IDF, no length
normalisation of BM25's kind) and stems with Snowball; the engine's scores
and defaults were tuned on FTS5's BM25. So this store keeps its own
postings, ``postings(term, rowid, tf, length)``, with the terms FTS5 would
index (:mod:`.terms`), and computes FTS5's formula in one query:

    idf(t) = ln((N - n_t + 0.5) / (n_t + 0.5)), 1e-6 when <= 0
    bm25   = -sum idf(t) * tf * (k1 + 1) / (tf + k1 * (1 - b + b * len / avglen))

with k1 = 1.2, b = 0.75, N the chunk count and avglen the mean chunk length
in tokens (``stats``), so scores equal SQLite's for the same chunks. A
prefix phrase (ID-like terms) counts every token it starts, as FTS5 does;
a phrase of several tokens (rare: query terms are single words) counts
chunks holding all of them, an approximation of FTS5's adjacency.
"""

from __future__ import annotations

import re
from typing import Any, Collection, Sequence

from .connection import PgConnection
from .terms import DocumentTerms, MatchTerm, parse_match, tokenizer

K1 = 1.2
B = 0.75
#: Characters COPY's text format escapes.
_NEEDS_ESCAPE = re.compile(r"[\\\t\n\r]")


class KeywordIndex:
    """The postings of one agent's chunks and the BM25 search over them."""

    def __init__(self, db: PgConnection):
        self.db = db

    # -- writes (inside the caller's transaction) ------------------------------------

    def add(self, rows: Sequence[tuple[int, DocumentTerms]]) -> None:
        """Postings of new chunks, by COPY (the caller updates the statistics).

        The rows are written as COPY's text format by Python's own string
        joins: a file's hundreds of postings as parameter arrays cost more to
        encode than the server takes to store them."""
        lines = []
        for rowid, doc in rows:
            terms = doc.tf
            if _NEEDS_ESCAPE.search("".join(terms)):  # never from FTS5's token classes; kept safe anyway
                terms = {_copy_escape(t): tf for t, tf in terms.items()}
            tail = f"\t{rowid}\t"
            length = f"\t{doc.length}"
            lines += [f"{term}{tail}{tf}{length}" for term, tf in terms.items()]
        if lines:
            data = "\n".join(lines) + "\n"
            with self.db.conn.cursor() as cur:
                with cur.copy(self.db.q("COPY {s}.postings(term, rowid, tf, length) FROM STDIN")) as copy:
                    copy.write(data.encode("utf-8"))

    # -- reads ------------------------------------------------------------------------------

    def search(
        self, match: str, k: int, sources: Sequence[str] | None = None, paths: Collection[str] | None = None
    ) -> list[tuple[int, float]]:
        """Top-k ``(rowid, bm25)`` for an FTS5 MATCH string (bm25 < 0).

        One statement: each phrase's postings carry its IDF, computed from
        the phrase's chunk count (:meth:`doc_counts`, which search asked for
        just before, so remembered), and are summed per chunk."""
        terms = parse_match(match)
        snap = self.db.snapshot()
        if not terms or k <= 0 or snap.docs <= 0 or (paths is not None and not paths):
            return []
        counts = self.doc_counts([t.text for t in terms if not _is_prefix(t)])
        sql = self.db.sql
        parts: list[Any] = []
        params: list[Any] = []
        for term in terms:
            part, args = self._hits(term, snap.docs, counts.get(term.text))
            parts.append(part)
            params += args
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
            "SELECT h.rowid, -sum(h.idf * h.tf * {k1p} / (h.tf + {k1} * ({one_b} + {b} * h.length / {avg}))) AS score "
            "FROM ({hits}) AS h {join} GROUP BY h.rowid ORDER BY score, h.rowid LIMIT {k}"
        ).format(
            hits=sql.SQL(" UNION ALL ").join(parts),
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

    def _hits(self, term: MatchTerm, docs: int, count: int | None) -> tuple[Any, list[Any]]:
        """The SQL for one phrase's matching chunks, ``(idf, rowid, tf,
        length)``; ``count``: the chunks holding it (None: counted here)."""
        sql = self.db.sql
        # FTS5's IDF, in float8 throughout (a literal like 2.2 would be
        # numeric, whose arithmetic is several times slower).
        n = _float8(docs)
        if count is None:  # a prefix: the chunks holding any token it starts
            df = self.db.q("(SELECT count(DISTINCT rowid) FROM {s}.postings WHERE term LIKE %s)")
            df_args = [_like_prefix(term.tokens[0])]
        else:
            df, df_args = _float8(count), []
        idf = sql.SQL("greatest(ln(({n} - {df} + 0.5::float8) / ({df} + 0.5::float8)), 1e-6::float8)").format(n=n, df=df)
        idf_args = df_args * 2
        if len(term.tokens) == 1 and not term.prefix:
            return self.db.q("SELECT {idf} AS idf, rowid, tf, length FROM {s}.postings WHERE term = %s").format(idf=idf), [
                *idf_args,
                term.tokens[0],
            ]
        if len(term.tokens) == 1:
            return (
                self.db.q(
                    "SELECT {idf} AS idf, rowid, sum(tf)::integer AS tf, max(length) AS length FROM {s}.postings "
                    "WHERE term LIKE %s GROUP BY rowid"
                ).format(idf=idf),
                [*idf_args, _like_prefix(term.tokens[0])],
            )
        # All tokens of the phrase in the chunk; tf the rarest token's.
        joins = sql.SQL(" ").join(
            self.db.q("JOIN {s}.postings {a} ON {a}.rowid = p0.rowid AND {a}.term = %s").format(a=sql.Identifier(f"p{j}"))
            for j in range(1, len(term.tokens))
        )
        least = sql.SQL(", ").join(sql.SQL("{}.tf").format(sql.Identifier(f"p{j}")) for j in range(len(term.tokens)))
        return (
            self.db.q(
                "SELECT {idf} AS idf, p0.rowid, least({least}) AS tf, p0.length FROM {s}.postings p0 {joins} WHERE p0.term = %s"
            ).format(idf=idf, least=least, joins=joins),
            [*idf_args, *term.tokens[1:], term.tokens[0]],
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


def _is_prefix(term: MatchTerm) -> bool:
    """A one-token prefix phrase, whose chunk count :meth:`KeywordIndex.doc_counts` does not know."""
    return term.prefix and len(term.tokens) == 1


def _float8(value: float) -> Any:
    from psycopg import sql

    return sql.SQL("{}::float8").format(sql.Literal(float(value)))


def _like_prefix(token: str) -> str:
    return token.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


def _copy_escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n").replace("\r", "\\r")
