"""The embedding cache in PostgreSQL: one table for every agent of the
database (``memext.embedding_cache``), keyed by agent, provider, model,
endpoint and text hash.

It lives outside the agent's schema, so it survives rebuilds (a shadow
index shares it instead of copying it) and every machine that syncs the
agent finds the vectors another machine paid for: a second device embeds
nothing that the first one already did.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, Sequence

if TYPE_CHECKING:  # numpy loads on first use
    import numpy as np

from ...vector_math import to_blob
from ..base import CacheKey
from .connection import PgConnection


class PgEmbeddingCache:
    """One agent's entries in the shared cache table."""

    def __init__(self, db: PgConnection):
        self.db = db

    def get(self, key: CacheKey, hashes: Sequence[str], *, touch: bool = True) -> dict[str, np.ndarray]:
        """Cached vectors by text hash; hits are marked as recently used unless ``touch`` is False."""
        import numpy as np

        if not hashes:
            return {}
        ident = [self.db.agent_id, key.provider, key.model, key.endpoint_key]

        def read(conn: Any) -> list[tuple[str, bytes]]:
            return conn.execute(
                "SELECT hash, embedding FROM memext.embedding_cache WHERE agent = %s AND provider = %s AND model = %s "
                "AND endpoint_key = %s AND hash = ANY(%s)",
                [*ident, list(hashes)],
            ).fetchall()

        rows = self.db.run(read)
        out = {h: np.frombuffer(bytes(blob), dtype="<f4") for h, blob in rows}
        if out and touch:
            with self.db.transaction():
                self.db.conn.execute(
                    "UPDATE memext.embedding_cache SET used_at = %s WHERE agent = %s AND provider = %s AND model = %s "
                    "AND endpoint_key = %s AND hash = ANY(%s)",
                    [time.time(), *ident, list(out)],
                )
        return out

    def put(self, key: CacheKey, items: dict[str, np.ndarray]) -> None:
        if not items:
            return
        now = time.time()
        rows = [(self.db.agent_id, key.provider, key.model, key.endpoint_key, h, len(v), to_blob(v), now) for h, v in items.items()]
        with self.db.transaction():
            with self.db.conn.cursor() as cur:
                cur.executemany(
                    "INSERT INTO memext.embedding_cache(agent, provider, model, endpoint_key, hash, dims, embedding, used_at) "
                    "VALUES (%s, %s, %s, %s, %s, %s, %s, %s) ON CONFLICT (agent, provider, model, endpoint_key, hash) "
                    "DO UPDATE SET dims = EXCLUDED.dims, embedding = EXCLUDED.embedding, used_at = EXCLUDED.used_at",
                    rows,
                )

    def prune(self, max_entries: int) -> int:
        """Drop this agent's least recently used entries above ``max_entries``."""
        with self.db.transaction():
            count = self.db.conn.execute("SELECT count(*) FROM memext.embedding_cache WHERE agent = %s", (self.db.agent_id,)).fetchone()[0]
            extra = count - max_entries
            if extra <= 0:
                return 0
            self.db.conn.execute(
                "DELETE FROM memext.embedding_cache WHERE ctid IN (SELECT ctid FROM memext.embedding_cache WHERE agent = %s "
                "ORDER BY used_at ASC LIMIT %s)",
                (self.db.agent_id, extra),
            )
            return int(extra)

    def count(self) -> int:
        return int(
            self.db.run(
                lambda conn: conn.execute("SELECT count(*) FROM memext.embedding_cache WHERE agent = %s", (self.db.agent_id,)).fetchone()[0]
            )
        )
