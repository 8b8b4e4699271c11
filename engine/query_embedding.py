"""Embedding a search query, with a back-off after failures.

After a query embedding fails, the provider is left alone for
:data:`QUERY_RETRY_AFTER_S`, so that during an outage every search is
keyword-only at once instead of waiting through the provider's retries
each time (DESIGN.md §6).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # numpy loads on first use: keyword-only work never needs it
    import numpy as np

from .errors import MemextError
from .providers import EmbeddingProvider
from .vectors import normalize

#: After a query embedding fails, searches stay keyword-only this long.
QUERY_RETRY_AFTER_S = 30.0


class QueryEmbedder:
    """Turns queries into unit vectors and remembers the last failure."""

    def __init__(self) -> None:
        self._error: str | None = None
        self._failed_at = 0.0

    def backing_off(self) -> str | None:
        """The last failure while searches stay keyword-only, else None."""
        if self._error and time.monotonic() - self._failed_at < QUERY_RETRY_AFTER_S:
            return self._error
        return None

    def vector(self, provider: EmbeddingProvider, query: str, dims: int | None) -> tuple[np.ndarray | None, str | None, str | None]:
        """``(vector, error, notice)`` for a query against an index of ``dims``."""
        error = self.backing_off()
        if error:
            since = time.monotonic() - self._failed_at
            return None, error, f"embedding queries failed {since:.0f} s ago ({error}): keyword-only results"
        try:
            qvec = normalize(provider.embed_query(query))
            if len(qvec) != dims:
                raise MemextError(f"query vector has {len(qvec)} dims, the index {dims}")
        except Exception as exc:
            self._error = f"{provider.id}: {exc}"
            self._failed_at = time.monotonic()
            return None, self._error, f"embedding the query failed ({self._error}): keyword-only results"
        self._error = None
        return qvec, None, None
