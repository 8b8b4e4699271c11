"""The index's tokenizer: the terms FTS5 makes of a text (``unicode61``
case folding, Porter stems), which every backend's keyword side uses.

The SQLite store indexes with FTS5 itself; the PostgreSQL store computes
its postings with the same tokenizer (store/postgres/terms.py), so both
rank alike; and the text functions ask it how words fold and stem
(engine/unicode_tables.py, engine/search/stems.py) so that a query term
matches what the index holds. It runs on the SQLite binding the store uses
(:mod:`.sqlite.db`): the first one that has FTS5 and can load extensions.
"""

from __future__ import annotations

import threading
from typing import Any, Sequence

from .sqlite.db import binding


def tokenizer_version() -> str:
    """The binding and SQLite version the tokenizer runs on (``sqlean-3.45.1``):
    what it answers can change with them."""
    b = binding()
    return f"{b.name}-{b.sqlite_version}"


def tokenizer_connection() -> Any:
    """A private in-memory SQLite connection of the binding in use (usable
    from any thread, autocommit), for a store that runs FTS5's tokenizer on
    tables of its own."""
    return binding().module.connect(":memory:", check_same_thread=False, isolation_level=None)


def fts_tokenize(tokenizer: str, texts: Sequence[str]) -> list[list[str]]:
    """The tokens FTS5 makes of each text with ``tokenizer`` (a
    ``tokenize=`` option), in order: SQLite's own answer (unicode61's case
    folding, Porter stems). Raises the binding's error when this SQLite has
    no FTS5."""
    conn = _tokenizer_table(tokenizer)
    # Written and read inside a transaction that is rolled back: the table
    # stays empty for the next call, and a rollback costs less than a delete.
    conn.execute("BEGIN")
    try:
        conn.executemany("INSERT INTO t(rowid, x) VALUES (?, ?)", enumerate(texts))
        rows = conn.execute("SELECT doc, term FROM v ORDER BY doc, offset").fetchall()
    finally:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
    tokens: list[list[str]] = [[] for _ in texts]
    for doc, term in rows:
        tokens[doc].append(term)
    return tokens


#: An in-memory FTS5 table per tokenizer and thread (a connection belongs
#: to its thread): a search stems the new words of its hits, and making a
#: throwaway table each time cost more than the stemming (about 0.5 ms).
_TOKENIZER_TABLES = threading.local()


def _tokenizer_table(tokenizer: str) -> Any:
    """This thread's in-memory connection holding an empty FTS5 table ``t``
    with ``tokenizer`` and its fts5vocab table ``v`` (autocommit)."""
    tables: dict[str, Any] = _TOKENIZER_TABLES.__dict__.setdefault("tables", {})
    conn = tables.get(tokenizer)
    if conn is None:
        conn = binding().module.connect(":memory:", isolation_level=None)
        try:
            conn.execute(f'CREATE VIRTUAL TABLE t USING fts5(x, tokenize="{tokenizer}")')
            conn.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, instance)")
        except BaseException:
            conn.close()
            raise
        tables[tokenizer] = conn
    return conn
