"""The embedding cache (``embedding_cache``): vectors by provider, model,
endpoint and text hash, so unchanged text is never embedded twice and a
rebuild costs no provider calls. Least recently used entries are pruned.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Sequence

if TYPE_CHECKING:  # numpy loads on first use: keyword-only work never needs it
    import numpy as np

from ...vector_math import to_blob
from ..base import CacheKey
from .chunks import IN_JSON, json_array
from .connection import Connection


class EmbeddingCache:
    """One index's embedding cache."""

    def __init__(self, db: Connection):
        self.db = db

    def get(self, key: CacheKey, hashes: Sequence[str], *, touch: bool = True) -> dict[str, np.ndarray]:
        """Cached vectors by text hash; hits are marked as recently used unless ``touch`` is False."""
        import numpy as np

        out: dict[str, np.ndarray] = {}
        if not hashes:
            return out
        now = time.time()
        with self.db.lock:
            rows = self.db.conn.execute(
                f"SELECT hash, embedding FROM embedding_cache WHERE provider = ? AND model = ? AND endpoint_key = ? AND hash {IN_JSON}",
                [key.provider, key.model, key.endpoint_key, json_array(hashes)],
            ).fetchall()
            for h, blob in rows:
                out[h] = np.frombuffer(blob, dtype="<f4")
            if out and touch:
                with self.db.transaction():
                    self.db.conn.executemany(
                        "UPDATE embedding_cache SET used_at = ? WHERE provider = ? AND model = ? AND endpoint_key = ? AND hash = ?",
                        [(now, key.provider, key.model, key.endpoint_key, h) for h in out],
                    )
        return out

    def put(self, key: CacheKey, items: dict[str, np.ndarray]) -> None:
        if not items:
            return
        now = time.time()
        with self.db.transaction():
            self.db.conn.executemany(
                "INSERT OR REPLACE INTO embedding_cache(provider, model, endpoint_key, hash, dims, embedding, used_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                [(key.provider, key.model, key.endpoint_key, h, len(v), to_blob(v), now) for h, v in items.items()],
            )

    def prune(self, max_entries: int) -> int:
        """Drop the least recently used entries above ``max_entries``."""
        with self.db.transaction():
            count = self.db.conn.execute("SELECT count(*) FROM embedding_cache").fetchone()[0]
            extra = count - max_entries
            if extra <= 0:
                return 0
            self.db.conn.execute(
                "DELETE FROM embedding_cache WHERE rowid IN (SELECT rowid FROM embedding_cache ORDER BY used_at ASC LIMIT ?)",
                (extra,),
            )
            return extra

    def count(self) -> int:
        with self.db.lock:
            return self.db.conn.execute("SELECT count(*) FROM embedding_cache").fetchone()[0]

    def copy_from(self, other_path: Path) -> int:
        """Seed this cache from another index file's; returns the entries now held."""
        with self.db.lock:
            self.db.conn.execute("ATTACH DATABASE ? AS old", (str(other_path),))
            try:
                with self.db.transaction():
                    self.db.conn.execute("INSERT OR IGNORE INTO embedding_cache SELECT * FROM old.embedding_cache")
            finally:
                self.db.conn.execute("DETACH DATABASE old")
        return self.count()
