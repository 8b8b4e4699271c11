"""Embedding a search query, with a back-off after failures.

After a query embedding fails (a timeout, a server that is down or
refuses), or a sync's call to the provider ran out its deadline, the
provider is left alone for :data:`QUERY_RETRY_AFTER_S`, so
that during an outage every search is keyword-only at once instead of
waiting through the provider's retries each time (DESIGN.md §6). A bad
answer (a vector of the wrong size, NaN: :class:`BadEmbeddings`) came back
at once and costs the next search nothing to retry, so it is not held
against the provider: the next search uses a healthy server again.

A remote provider's failure is also written down for the other processes
(a small file per endpoint and model in the app's state folder,
:func:`shared_record`): a sync that ran out its deadline in ``memext
index`` or the tray spares every other agent's search, in any process,
the wait for the same silent server during the back-off.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # numpy and the providers load on first use: keyword-only work never needs them
    import numpy as np

    from ..providers import EmbeddingProvider

from ..errors import BadEmbeddings

#: After a query embedding fails, searches stay keyword-only this long.
QUERY_RETRY_AFTER_S = 30.0


def shared_record(folder: Path, provider: EmbeddingProvider) -> Path | None:
    """Where ``provider``'s last failure is written for other processes:
    one file per provider, endpoint and model; None for a provider on this
    machine (a busy local model in one process says nothing of another's)."""
    if not provider.endpoint_key:
        return None
    import hashlib  # here: a keyword-only search embeds nothing (OpenSSL's load costs a one-shot search)

    digest = hashlib.sha256(f"{provider.id}\0{provider.endpoint_key}\0{provider.model}".encode()).hexdigest()[:16]
    return folder / f"{digest}.json"


class QueryEmbedder:
    """Turns queries into unit vectors and remembers the last failure
    (``shared``: the folder where failures are written for, and read from,
    other processes; None keeps them to this one)."""

    def __init__(self, shared: Path | None = None) -> None:
        self._error: str | None = None
        self._failed_at = 0.0
        self._shared = shared

    def backing_off(self, provider: EmbeddingProvider | None = None) -> str | None:
        """The last failure while searches stay keyword-only, else None;
        with ``provider``, one another process wrote down counts too."""
        if not (self._error and time.monotonic() - self._failed_at < QUERY_RETRY_AFTER_S) and provider is not None:
            self._read_shared(provider)
        if self._error and time.monotonic() - self._failed_at < QUERY_RETRY_AFTER_S:
            return self._error
        return None

    def provider_failed(self, error: str, provider: EmbeddingProvider | None = None) -> None:
        """Back off from the provider as after a failed query: a sync's
        call to it just ran out its deadline."""
        self._error, self._failed_at = error, time.monotonic()
        record = shared_record(self._shared, provider) if self._shared is not None and provider is not None else None
        if record is None:
            return
        try:  # a hint for others: a folder that cannot be written costs them one wait
            record.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            tmp = record.with_name(f"{record.name}.{os.getpid()}.tmp")
            tmp.write_text(json.dumps({"at": time.time(), "error": error}), encoding="utf-8")
            os.replace(tmp, record)
        except OSError:
            pass

    def _read_shared(self, provider: EmbeddingProvider) -> None:
        record = shared_record(self._shared, provider) if self._shared is not None else None
        if record is None:
            return
        try:
            written = json.loads(record.read_text(encoding="utf-8"))
            age = time.time() - float(written["at"])
            error = str(written["error"])
        except (OSError, ValueError, TypeError, KeyError):
            return  # none written (or torn): nothing known
        if 0 <= age < QUERY_RETRY_AFTER_S:
            self._error, self._failed_at = error, time.monotonic() - age

    def vector(self, provider: EmbeddingProvider, query: str, dims: int | None) -> tuple[np.ndarray | None, str | None, str | None]:
        """``(vector, error, notice)`` for a query against an index of
        ``dims`` (the provider is told the size, so a wrong-size answer is
        rejected rather than taken as the model's)."""
        error = self.backing_off(provider)
        if error:
            since = time.monotonic() - self._failed_at
            return None, error, f"the embedding provider failed {since:.0f} s ago ({error}): keyword-only results"
        from ..vector_math import normalize  # here: a keyword-only search embeds nothing

        try:
            provider.expected_dims = dims
            qvec = normalize(provider.embed_query(query))
            if len(qvec) != dims:
                raise BadEmbeddings(f"query vector has {len(qvec)} dims, the index {dims}")
        except Exception as exc:
            error = f"{provider.id}: {exc}"
            if not isinstance(exc, BadEmbeddings):
                self.provider_failed(error, provider)
            return None, error, f"embedding the query failed ({error}): keyword-only results"
        self._error = None
        return qvec, None, None
