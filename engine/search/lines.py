"""Single lines judged by meaning (DESIGN.md §7).

A chunk's vector is the average meaning of its lines. Notes are lists of
separate facts ("Ran 5 km in 27 minutes." under a day's heading with two
other errands), so a question about one fact is much closer to its line
than to the chunk, and a hit found by meaning alone still has one line
that carries it. :class:`LineScorer` embeds lines with the search's
provider and gives their cosines to the query; it is made only where that
costs no network call (a local model) and where the model's *line null*
is known: the cosine a line of ordinary memory reaches by style alone,
measured on the LoCoMo dev split by ``bench/line_null.py`` (the median,
over the dev questions, of the cosine of a question's
``CALIBRATION_DEPTH``-th nearest line of its conversation).

Two uses, both bounded: the lines of the results shown that hold no query
term, to mark the line that carries the meaning; and, in an index too
small to calibrate chunk cosines against (fewer than
``CALIBRATION_DEPTH`` chunks), every line, so a paraphrase is ranked and
judged by its closest line. A sync embeds the lines of such an index into
its embedding cache (:func:`cache_line_vectors`), so a one-shot search
reads them (without writing the index); vectors read or embedded are kept
per process, by text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Sequence

from ..store import CacheKey
from .confidence import CALIBRATION_DEPTH

if TYPE_CHECKING:
    import numpy as np

    from ..providers import EmbeddingProvider
    from ..store import IndexStore

#: The line null of each model measured (bench/line_null.py), by the
#: start of the local model's file name (any quantisation).
LINE_NULLS: dict[str, float] = {
    "all-minilm-l6-v2": 0.355,
}

#: Lines kept per process before the cache starts over (a few MB).
_MAX_CACHED = 20_000
_CACHE: dict[tuple[str, str], "np.ndarray"] = {}
#: Entry metadata (DESIGN.md §17) says nothing about a line's meaning.
_COMMENT = re.compile(r"<!--.*?-->")


def line_null(provider: "EmbeddingProvider | None") -> float | None:
    """The line null of ``provider``'s model when it runs locally and was
    measured, else None (lines are then never embedded at search time)."""
    if provider is None or provider.id != "local":
        return None
    name = provider.model.lower()
    return next((v for prefix, v in LINE_NULLS.items() if name.startswith(prefix)), None)


def _key(provider: "EmbeddingProvider") -> CacheKey:
    return CacheKey(provider.id, provider.model, provider.endpoint_key)


def _hash(text: str) -> str:
    from ..memory.chunking import text_hash

    return text_hash(text)


def cache_line_vectors(store: "IndexStore", provider: "EmbeddingProvider | None") -> int:
    """After a sync, with the writer's ``store``: embed the lines of a small
    index (fewer than ``CALIBRATION_DEPTH`` chunks) that its embedding cache
    lacks, and cache them, so a search finds them there. Only for a model
    with a line null (:func:`line_null`); a provider error leaves the
    searches to embed them. Returns the number of lines embedded."""
    if provider is None or line_null(provider) is None or store.dims is None or not 0 < store.chunk_count() < CALIBRATION_DEPTH:
        return 0
    import numpy as np

    from ..errors import MemextError
    from ..vector_math import normalize

    probe = np.zeros(store.dims, dtype=np.float32)
    probe[0] = 1.0  # any direction: every chunk of a small index comes back
    rows = store.chunks(r for r, _ in store.vector_search(probe, CALIBRATION_DEPTH))
    texts = {meaning_text(line) for row in rows.values() for line in row.text.split("\n")} - {""}
    by_hash = {_hash(t): t for t in texts}
    key = _key(provider)
    # Read without marking: a sync that changed nothing writes nothing.
    have = store.cache_get(key, list(by_hash), touch=False)
    missing = [h for h in by_hash if h not in have]
    if not missing:
        return 0
    try:
        vectors = provider.embed_batch([by_hash[h] for h in missing])
    except (MemextError, OSError, RuntimeError, ValueError):
        return 0
    store.cache_put(key, {h: normalize(v) for h, v in zip(missing, vectors)})
    return len(missing)


def meaning_text(line: str) -> str:
    """What of a line is embedded: its words, without entry metadata; empty
    for a blank line or a heading (they carry no fact of their own)."""
    text = _COMMENT.sub("", line).strip()
    return "" if not text or text.startswith("#") else text


@dataclass
class LineScorer:
    """Cosines of single lines to one query (see the module docstring)."""

    provider: "EmbeddingProvider"
    query_vector: "np.ndarray"
    #: The model's line null: the cosine a line reaches by style alone.
    null: float
    #: Where line vectors a sync cached are read (never written) from.
    store: "IndexStore | None" = None

    def cosines(self, lines: Sequence[str]) -> list[float | None]:
        """The cosine of each line to the query; None for a line with nothing
        to embed (:func:`meaning_text`), or for every line when the provider
        fails (a search never fails because of lines)."""
        import numpy as np

        from ..errors import MemextError
        from ..vector_math import normalize

        texts = [meaning_text(line) for line in lines]
        key = f"{self.provider.id}/{self.provider.model}"
        new = list(dict.fromkeys(t for t in texts if t and (key, t) not in _CACHE))
        if new and self.store is not None:
            by_hash = {_hash(t): t for t in new}
            size = len(self.query_vector)
            for h, v in self.store.cache_get(_key(self.provider), list(by_hash), touch=False).items():
                if len(v) == size:
                    _CACHE[(key, by_hash[h])] = v
            new = [t for t in new if (key, t) not in _CACHE]
        if new:
            try:
                vectors = self.provider.embed_batch(new)
            except (MemextError, OSError, RuntimeError, ValueError):
                return [None] * len(lines)
            if len(_CACHE) + len(new) > _MAX_CACHED:
                _CACHE.clear()
            for t, embedded in zip(new, vectors):
                _CACHE[(key, t)] = normalize(embedded)  # as the sync caches them
        q = np.asarray(self.query_vector, dtype=np.float32)
        return [float(np.dot(_CACHE[(key, t)], q)) if t and (key, t) in _CACHE else None for t in texts]

    def semantic(self, cosine: float) -> float:
        """A line's cosine as semantic evidence in 0..1, against the line null."""
        return min(1.0, max(0.0, (cosine - self.null) / max(1e-6, 1.0 - self.null)))

    def best(self, lines: Sequence[str]) -> tuple[int, float] | None:
        """The 0-based index and cosine of the line of ``lines`` closest to the
        query, or None when no line has a cosine."""
        scored = [(c, -i) for i, c in enumerate(self.cosines(lines)) if c is not None]
        if not scored:
            return None
        c, i = max(scored)
        return -i, c
