"""Embedding a search query, with a back-off after failures.

After a query embedding fails (a timeout, a server that is down or
refuses), or a sync's call to the provider ran out its deadline, the
provider is left alone for :data:`QUERY_RETRY_AFTER_S`, so
that during an outage every search is keyword-only at once instead of
waiting through the provider's retries each time (DESIGN.md §6). A bad
answer (a vector of the wrong size, NaN: :class:`BadEmbeddings`) came back
at once and costs the next search nothing to retry, so it is not held
against the provider: the next search uses a healthy server again.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # numpy loads on first use: keyword-only work never needs it
    import numpy as np

from ..errors import BadEmbeddings
from ..providers import EmbeddingProvider
from ..vector_math import normalize

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

    def provider_failed(self, error: str) -> None:
        """Back off from the provider as after a failed query: a sync's
        call to it just ran out its deadline."""
        self._error, self._failed_at = error, time.monotonic()

    def vector(self, provider: EmbeddingProvider, query: str, dims: int | None) -> tuple[np.ndarray | None, str | None, str | None]:
        """``(vector, error, notice)`` for a query against an index of
        ``dims`` (the provider is told the size, so a wrong-size answer is
        rejected rather than taken as the model's)."""
        error = self.backing_off()
        if error:
            since = time.monotonic() - self._failed_at
            return None, error, f"the embedding provider failed {since:.0f} s ago ({error}): keyword-only results"
        try:
            provider.expected_dims = dims
            qvec = normalize(provider.embed_query(query))
            if len(qvec) != dims:
                raise BadEmbeddings(f"query vector has {len(qvec)} dims, the index {dims}")
        except Exception as exc:
            error = f"{provider.id}: {exc}"
            if not isinstance(exc, BadEmbeddings):
                self._error, self._failed_at = error, time.monotonic()
            return None, error, f"embedding the query failed ({error}): keyword-only results"
        self._error = None
        return qvec, None, None
