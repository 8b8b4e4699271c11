"""What an embedding provider may hand back: checked before anything is
stored or cached.

A server answering NaN or inf, a vector of the wrong size or the zero
vector (which cannot be normalised) would otherwise end up in the index and
the embedding cache, break later searches and survive a forced rebuild.
"""

from __future__ import annotations

from typing import Sequence


class BadVectors(ValueError):
    """The answer holds a vector that must not be used; the message says which and why."""


def check_vectors(vectors: Sequence[Sequence[float]], count: int, dims: int | None) -> list[list[float]]:
    """``vectors`` as float lists, or :class:`BadVectors`.

    Each must be finite (also as float32, as the index stores it), not all
    zero, and of one size: ``dims`` when given, else the size of the first.
    ``count`` is how many texts were sent.
    """
    import numpy as np  # here, not at the top: keyword-only work never loads numpy

    if vectors is None or isinstance(vectors, (str, bytes)) or not hasattr(vectors, "__len__"):
        raise BadVectors(f"no list of vectors (got {type(vectors).__name__})")
    if len(vectors) != count:
        raise BadVectors(f"{len(vectors)} vectors for {count} texts")
    out: list[list[float]] = []
    size = dims
    # One errstate for the whole answer (entering one costs more than
    # checking a vector): out-of-range values become inf, reported below.
    with np.errstate(over="ignore", invalid="ignore"):
        for i, v in enumerate(vectors, 1):
            where = f"text {i} of {count}" if count > 1 else "the text"
            try:
                a = np.asarray(v, dtype=np.float64)
                a32 = a.astype(np.float32)
            except (TypeError, ValueError) as exc:
                raise BadVectors(f"a malformed vector for {where} ({exc})") from None
            if a.ndim != 1 or a.size == 0:
                raise BadVectors(f"an empty or malformed vector for {where}")
            if size is None:
                size = a.size
            elif a.size != size:
                expected = f"expected {dims}" if dims is not None else f"the others have {size}"
                raise BadVectors(f"a vector of {a.size} dimensions for {where} ({expected})")
            if not np.isfinite(a32).all():
                kinds = sorted({"NaN" if np.isnan(x) else "infinite" for x in a32[~np.isfinite(a32)]})
                raise BadVectors(f"a vector with {' and '.join(kinds)} values for {where}")
            if not a32.any():  # finite float32 values: a zero norm means all zero
                raise BadVectors(f"an all-zero vector for {where}")
            out.append(a.tolist())
    return out
