"""The terms of the keyword index, for stores that keep their own postings.

The SQLite store hands text to FTS5 (``porter unicode61``, with CJK runs
rewritten as grams by :func:`memext.engine.text.fts_document`). A store
that computes BM25 itself (PostgreSQL) must see exactly the same terms, or
the two backends would rank differently. So the terms come from FTS5's own
tokenizer, run on an in-memory SQLite table: same folding, diacritics,
Porter stems and CJK grams, by the same code (about 0.2 ms a chunk).

:func:`parse_match` reads back the FTS5 MATCH string that search builds
(:func:`memext.engine.text.fts_match_expression`), so the store interface
stays one string for both backends.
"""

from __future__ import annotations

import functools
import re
import threading
from collections import Counter
from dataclasses import dataclass
from typing import Sequence

from ...text import FTS_TOKENIZER, fts_document
from ..tokenizer import tokenizer_connection

_PHRASE = re.compile(r'"((?:[^"]|"")*)"(\*?)')


@dataclass(frozen=True)
class MatchTerm:
    """One OR-ed phrase of a MATCH string: its text, its index tokens, and
    whether it is a prefix query (ID-like terms)."""

    text: str
    tokens: tuple[str, ...]
    prefix: bool


@dataclass(frozen=True)
class DocumentTerms:
    """A chunk as the keyword index sees it: term frequencies and length in tokens."""

    tf: dict[str, int]
    length: int


class Tokenizer:
    """FTS5's tokenizer on a private in-memory database (thread-safe)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._conn = tokenizer_connection()
        # Contentless, no sizes: only the tokenizer's output is wanted, and
        # 'delete-all' empties it without tokenizing the texts again (about
        # 3 times faster than a table that keeps them).
        self._conn.execute(f"CREATE VIRTUAL TABLE t USING fts5(x, content='', columnsize=0, tokenize=\"{FTS_TOKENIZER}\")")
        self._conn.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, 'instance')")

    def documents(self, texts: Sequence[str]) -> list[DocumentTerms]:
        """The terms of each chunk text, as FTS5 would index them."""
        if not texts:
            return []
        with self._lock:
            try:
                self._conn.executemany("INSERT INTO t(rowid, x) VALUES (?, ?)", enumerate(map(fts_document, texts)))
                rows = self._conn.execute("SELECT doc, term FROM v").fetchall()
            finally:
                self._clear()
        counts: list[Counter[str]] = [Counter() for _ in texts]
        for doc, term in rows:
            counts[doc][term] += 1
        return [DocumentTerms(dict(c), sum(c.values())) for c in counts]

    def tokens(self, text: str) -> tuple[str, ...]:
        """The index tokens of a query phrase, in order (as FTS5 tokenizes a
        MATCH phrase: no CJK gram rewriting, the index holds the grams)."""
        with self._lock:
            try:
                self._conn.execute("INSERT INTO t(rowid, x) VALUES (1, ?)", (text,))
                rows = self._conn.execute("SELECT term FROM v ORDER BY offset").fetchall()
            finally:
                self._clear()
        return tuple(r[0] for r in rows)

    def _clear(self) -> None:
        self._conn.execute("INSERT INTO t(t) VALUES ('delete-all')")

    def close(self) -> None:
        with self._lock:
            self._conn.close()


@functools.lru_cache(maxsize=1)
def tokenizer() -> Tokenizer:
    """The process's tokenizer (made on first use)."""
    return Tokenizer()


def parse_match(match: str) -> list[MatchTerm]:
    """The phrases of an FTS5 MATCH string made by ``fts_match_expression``
    (``"a" OR "b"*``), tokenized; phrases without tokens are dropped."""
    out: list[MatchTerm] = []
    tok = tokenizer()
    for m in _PHRASE.finditer(match):
        text = m.group(1).replace('""', '"')
        tokens = tok.tokens(text)
        if tokens:
            out.append(MatchTerm(text, tokens, m.group(2) == "*"))
    return out
