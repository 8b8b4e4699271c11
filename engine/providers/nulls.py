"""A model's "nothing" level, its *null* (DESIGN.md §7): the cosine two
entries of one memory reach by sharing its style and topics alone (most
pairs are about different things). Search judges an entry's cosine against
it, ``(cos - null) / (1 - null)``, which ``cos -> a * cos + (1 - a)`` leaves
unchanged: two models whose cosines differ only in scale give the same
verdicts.

The nulls of models measured on a broad corpus of memories are shipped
(``nulls.json``, by the start of the model's name, lower case: any
quantisation of a local model file), measured by
``python bench/trust/fit.py --null`` as :func:`null_of` of each memory,
their median; a new model gets its null by the same command. Any other
model's is estimated at each sync from the index's own entries by the same
:func:`null_of` (kept in the index's ``meta`` as ``entry_null``).
"""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import TYPE_CHECKING, Mapping, Sequence

if TYPE_CHECKING:
    import numpy as np

#: The measured nulls (written by bench/trust/fit.py --null).
NULLS_FILE = Path(__file__).with_name("nulls.json")
#: Fewest entries a null is estimated from.
MIN_NULL_ENTRIES = 16
#: Entries an estimate samples at most, spread over the memory (every
#: pair of them is compared).
NULL_SAMPLE = 256
#: A null at or above this is none: most of the memory's entries look the
#: same to the model (near-duplicates, or a model that sees no difference).
MAX_NULL = 0.9


@functools.lru_cache(maxsize=1)
def shipped() -> dict[str, float]:
    """The measured nulls, by the start of a model's name (lower case)."""
    return {k.lower(): float(v) for k, v in json.loads(NULLS_FILE.read_text(encoding="utf-8")).items()}


def model_null(model: str | None, table: Mapping[str, float] | None = None) -> float | None:
    """The shipped null of ``model`` (a model name or a local model file's
    name), None when it was not measured."""
    if not model:
        return None
    name = Path(model).name.lower()
    nulls = shipped() if table is None else table
    return next((v for prefix, v in nulls.items() if name.startswith(prefix)), None)


def null_for(provider: str, model: str, stored: Mapping | None) -> float | None:
    """The null a search judges ``provider``'s cosines against: the shipped
    one of its model, else the one the last sync estimated from the index
    (``stored``: meta ``entry_null``, when made with this provider and
    model), else None (meaning is then no evidence)."""
    measured = model_null(model)
    if measured is not None:
        return measured
    if stored and stored.get("provider") == provider and stored.get("model") == model and stored.get("value") is not None:
        return float(stored["value"])
    return None


def null_of(vectors: Sequence[np.ndarray]) -> float | None:
    """The null of one memory's entry vectors: the median cosine over every
    pair of (at most :data:`NULL_SAMPLE` of) them; None for fewer than
    :data:`MIN_NULL_ENTRIES`, or when it reaches :data:`MAX_NULL`."""
    if len(vectors) < MIN_NULL_ENTRIES:
        return None
    import numpy as np

    picked = list(vectors)[:: max(1, len(vectors) // NULL_SAMPLE)][:NULL_SAMPLE]
    m = np.asarray(np.stack(picked), dtype=np.float32)
    m /= np.maximum(np.linalg.norm(m, axis=1, keepdims=True), 1e-12)
    sims = m @ m.T
    median = float(np.median(sims[np.triu_indices(len(m), k=1)]))
    # Entries the model cannot tell apart leave no scale to judge against.
    return round(median, 4) if median < MAX_NULL else None
