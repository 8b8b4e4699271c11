"""Searching the vector sidecar as of the current data, and keeping it up to date.

A :class:`MappedVectors` is the sidecar file in force (memory-mapped, see
:mod:`.sidecar`) plus what changed since it was written: the *delta*, rows
above its last rowid (chunk rowids only grow), read from SQLite, and the
rowids deleted since, listed in ``vectors_gone`` and masked. The sidecar,
its ``meta`` record, ``vectors_gone`` and the delta are read in one read
transaction, so they always describe the same moment.

:func:`compact_sidecar` (the writer, after a sync) writes a new sidecar
when there is none, or when the delta and the deleted rows exceed
``COMPACT_SLACK`` rows plus ``COMPACT_FRACTION`` of the sidecar: small
syncs cost no rewrite, and readers patch at most that many rows.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterator, Sequence

if TYPE_CHECKING:
    import numpy as np

    from .connection import Connection

from .sidecar import (
    MIN_POOL,
    POOL_PER_RESULT,
    QUANTISED_ABOVE,
    SidecarError,
    SidecarInfo,
    VectorFile,
    iter_blocks,
    new_token,
    sidecar_files,
    sidecar_path,
    write_sidecar,
)

COMPACT_SLACK = 2000
COMPACT_FRACTION = 0.05
#: Rows fetched from SQLite at a time while streaming the delta.
FETCH_ROWS = 4096

GONE_SCHEMA = "CREATE TABLE IF NOT EXISTS vectors_gone (rowid INTEGER PRIMARY KEY)"


class MappedVectors:
    """The sidecar plus the delta and deletions since it: exact cosine KNN."""

    def __init__(self, token: str, base: VectorFile, dims: int):
        import numpy as np

        self.token = token
        self.base = base
        self.dims = dims
        self.delta_ids = np.zeros(0, dtype=np.int64)
        self.delta_vecs = np.zeros((0, dims), dtype=np.float32)
        self.delta_sources: list[str] = []
        self.gone = np.zeros(0, dtype=np.int64)
        self._keep_base: np.ndarray | None = None
        self._keep_delta: np.ndarray | None = None
        self._masks: dict[tuple[str, ...], tuple[Any, Any]] = {}

    @property
    def method(self) -> str:
        """ "mmap+bits" when searches rank by bit codes and rescore, else "mmap"."""
        return "mmap+bits" if self.base.rows > QUANTISED_ABOVE else "mmap"

    @property
    def dense_rows(self) -> int:
        """How many rows a search multiplies by the query in one product:
        all of them, or above :data:`QUANTISED_ABOVE` a pool rescored."""
        pool = MIN_POOL if self.base.rows > QUANTISED_ABOVE else self.base.rows
        return pool + len(self.delta_ids)

    @property
    def max_rowid(self) -> int:
        return int(self.delta_ids[-1]) if len(self.delta_ids) else self.base.max_rowid

    def update(self, rows: list[tuple[int, bytes, str]], gone: Sequence[int]) -> None:
        """Add delta rows (ascending rowids) and set the deleted rowids."""
        import numpy as np

        rows = [r for r in rows if len(r[1]) == self.dims * 4]
        if rows:
            ids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
            vecs = np.frombuffer(b"".join(r[1] for r in rows), dtype="<f4").reshape(len(rows), self.dims)
            self.delta_ids = np.concatenate([self.delta_ids, ids])
            self.delta_vecs = np.concatenate([self.delta_vecs, vecs]) if len(self.delta_vecs) else vecs.copy()
            self.delta_sources = self.delta_sources + [r[2] for r in rows]
        self.gone = np.unique(np.asarray(list(gone), dtype=np.int64))
        self._keep_base = _keep(self.base.rowids, self.gone)
        self._keep_delta = _keep(self.delta_ids, self.gone)
        self._masks = {}

    def close(self) -> None:
        self.base.close()

    def _filters(self, sources: Sequence[str] | None) -> tuple[Any, Any]:
        """Row masks (None: every row) for the base and the delta."""
        import numpy as np

        if sources is None:
            return self._keep_base, self._keep_delta
        key = tuple(sorted(sources))
        hit = self._masks.get(key)
        if hit is not None:
            return hit
        base = self.base.source_mask(sources)
        if self._keep_base is not None:
            base = base & self._keep_base
        delta = np.isin(np.array(self.delta_sources, dtype=object), list(sources)) if self.delta_sources else None
        if delta is not None and self._keep_delta is not None:
            delta = delta & self._keep_delta
        self._masks[key] = (base, delta)
        return base, delta

    def search(self, query: "np.ndarray", k: int, sources: Sequence[str] | None = None) -> list[tuple[int, float]]:
        """Top ``k`` ``(rowid, cosine similarity)``, best first, in exact order."""
        import numpy as np

        q = np.asarray(query, dtype=np.float32)
        keep_base, keep_delta = self._filters(sources)
        ids_parts, sim_parts = [], []
        if self.base.rows:
            if self.base.rows > QUANTISED_ABOVE:
                pos = self.base.candidates(q, max(MIN_POOL, POOL_PER_RESULT * k), keep_base)
                sims = self.base.matrix[pos] @ q
                ids_parts.append(self.base.rowids[pos])
            else:
                sims = self.base.exact_scores(q)
                if keep_base is None:
                    ids_parts.append(self.base.rowids)
                else:
                    pos = np.flatnonzero(keep_base)
                    sims = sims[pos]
                    ids_parts.append(self.base.rowids[pos])
            sim_parts.append(sims)
        if len(self.delta_ids):
            sims = self.delta_vecs @ q
            ids = self.delta_ids
            if keep_delta is not None:
                ids, sims = ids[keep_delta], sims[keep_delta]
            ids_parts.append(ids)
            sim_parts.append(sims)
        if not ids_parts:
            return []
        ids = np.concatenate(ids_parts) if len(ids_parts) > 1 else ids_parts[0]
        sims = np.concatenate(sim_parts) if len(sim_parts) > 1 else sim_parts[0]
        if not len(sims):
            return []
        top = _top_k(ids, sims, k)
        return list(zip(ids[top].tolist(), sims[top].tolist()))

    def vectors(self, rowids: Sequence[int]) -> dict[int, "np.ndarray"]:
        """Copies of the stored vectors of these rowids (those held)."""
        held = self.base.positions(rowids)
        # One gather (a copy) rather than a copy per row.
        block = self.base.matrix[list(held.values())] if held else None
        out = {r: block[i] for i, r in enumerate(held)} if block is not None else {}
        if len(self.delta_ids):
            import numpy as np

            want = np.asarray([r for r in rowids if r not in out], dtype=np.int64)
            if len(want):
                pos = np.minimum(np.searchsorted(self.delta_ids, want), len(self.delta_ids) - 1)
                for r, p in zip(want, pos):
                    if self.delta_ids[p] == r:
                        out[int(r)] = self.delta_vecs[p].copy()
        return out


def _top_k(ids: "np.ndarray", sims: "np.ndarray", k: int) -> "np.ndarray":
    """Positions of the ``k`` best, best first; ties go to the newer chunk
    (the higher rowid), as with vec0, also at the cut-off."""
    import numpy as np

    if k < len(sims):
        kth = np.partition(sims, len(sims) - k)[len(sims) - k]
        above = np.flatnonzero(sims > kth)
        tied = np.flatnonzero(sims == kth)
        tied = tied[np.argsort(-ids[tied], kind="stable")[: k - len(above)]]
        top = np.concatenate([above, tied])
    else:
        top = np.arange(len(sims))
    return top[np.lexsort((-ids[top], -sims[top]))]


def _keep(rowids: "np.ndarray", gone: "np.ndarray") -> "np.ndarray | None":
    import numpy as np

    if not len(gone) or not len(rowids):
        return None
    pos = np.minimum(np.searchsorted(rowids, gone), len(rowids) - 1)
    hit = rowids[pos] == gone
    if not hit.any():
        return None
    keep = np.ones(len(rowids), dtype=bool)
    keep[pos[hit]] = False
    return keep


# -- reading ------------------------------------------------------------------------------


def read_mapped(db: "Connection", previous: MappedVectors | None, dims: int) -> MappedVectors | None:
    """The sidecar in force with its delta, reusing ``previous`` when it is
    the same file; None when there is no usable sidecar (then vec0 or the
    in-memory matrix serve)."""
    conn = db.conn
    own = not conn.in_transaction
    if own:
        conn.execute("BEGIN")
    try:
        row = conn.execute("SELECT value FROM meta WHERE key = 'vector_sidecar'").fetchone()
        info = SidecarInfo.from_json(json.loads(row[0])) if row else None
        if info is None or info.dims != dims:
            _close(previous)
            return None
        mapped = previous if previous is not None and previous.token == info.token else None
        if mapped is None:
            _close(previous)
            try:
                base = VectorFile(sidecar_path(db.path, info.token), info.token)
            except SidecarError:
                return None  # e.g. moved away by hand: vec0 serves until the next sync rewrites it
            if base.rows != info.rows or base.max_rowid != info.max_rowid or base.dims != dims:
                base.close()
                return None
            mapped = MappedVectors(info.token, base, dims)
        gone = [r for (r,) in conn.execute("SELECT rowid FROM vectors_gone")]
        fresh = [r for block in delta_rows(db, mapped.max_rowid, dims) for r in block]
        mapped.update(fresh, gone)
        return mapped
    finally:
        if own:
            conn.execute("COMMIT")


def _close(mapped: MappedVectors | None) -> None:
    if mapped is not None:
        mapped.close()


def delta_rows(db: "Connection", after: int, dims: int) -> Iterator[list[tuple[int, bytes, str]]]:
    """``(rowid, float32 blob, source)`` of chunks above ``after`` that have
    a vector, in ascending rowid order, a block at a time.

    From the embedding cache by text hash (plain tables: about 15 µs a
    row), else from ``chunks_vec`` by rowid (a vec0 point lookup is slower,
    and a vec0 range scan reads the whole table).
    """
    conn = db.conn
    fp = db.get_meta_json("fingerprint") or {}
    cur = conn.execute(
        "SELECT c.rowid, c.source, e.embedding FROM chunks c LEFT JOIN embedding_cache e ON e.provider = ? "
        "AND e.model = ? AND e.endpoint_key = ? AND e.hash = c.hash WHERE c.rowid > ? ORDER BY c.rowid",
        (fp.get("provider", ""), fp.get("model", ""), fp.get("endpoint", ""), after),
    )
    while True:
        block = cur.fetchmany(FETCH_ROWS)
        if not block:
            return
        missing = [r for r, _, blob in block if blob is None or len(blob) != dims * 4]
        stored: dict[int, bytes] = {}
        for start in range(0, len(missing), 500):
            part = missing[start : start + 500]
            marks = ",".join("?" * len(part))
            stored.update(conn.execute(f"SELECT rowid, embedding FROM chunks_vec WHERE rowid IN ({marks})", part).fetchall())
        out = []
        for rowid, source, blob in block:
            if blob is None or len(blob) != dims * 4:
                blob = stored.get(rowid)
            if blob is not None:
                out.append((rowid, blob, source))
        yield out


# -- writing --------------------------------------------------------------------------------


def compact_sidecar(db: "Connection", dims: int) -> None:
    """Write a new sidecar when needed (see the module docstring). The
    caller holds the writer lock and :attr:`Connection.lock`."""
    conn = db.conn
    info = SidecarInfo.from_json(db.get_meta_json("vector_sidecar"))
    base: VectorFile | None = None
    if info is not None and info.dims == dims:
        try:
            base = VectorFile(sidecar_path(db.path, info.token), info.token)
        except SidecarError:
            base = None
    try:
        after = base.max_rowid if base is not None else 0
        delta = conn.execute("SELECT count(*) FROM chunks WHERE rowid > ?", (after,)).fetchone()[0]
        gone: list[int] = []
        if base is not None:
            gone = [r for (r,) in conn.execute("SELECT rowid FROM vectors_gone")]
            if delta + len(gone) <= COMPACT_SLACK + COMPACT_FRACTION * base.rows:
                remove_sidecars(db.path, keep=info.token if info is not None else None)
                return
        token = new_token()
        new = write_sidecar(sidecar_path(db.path, token), token, dims, _all_rows(db, base, gone, dims))
    finally:
        if base is not None:
            base.close()
    with db.transaction():
        conn.execute(GONE_SCHEMA)
        conn.execute("DELETE FROM vectors_gone")
        db.set_meta_json("vector_sidecar", new.to_json())
    remove_sidecars(db.path, keep=token)


def _all_rows(db: "Connection", base: VectorFile | None, gone: list[int], dims: int) -> Iterator[tuple[Any, Any, list[str]]]:
    """Blocks of every live row: the old sidecar's (less the deleted), then the delta."""
    import numpy as np

    after = 0
    if base is not None and base.rows:
        keep = _keep(base.rowids, np.asarray(sorted(gone), dtype=np.int64))
        step = 65_536
        for start in range(0, base.rows, step):
            sl = slice(start, start + step)
            ids, vecs, codes = base.rowids[sl], base.matrix[sl], base.source_codes[sl]
            if keep is not None:
                ids, vecs, codes = ids[keep[sl]], vecs[keep[sl]], codes[keep[sl]]
            yield np.array(ids), np.array(vecs), [base.sources[c] for c in codes]
        after = base.max_rowid
    for block in delta_rows(db, after, dims):
        yield from iter_blocks(iter(block), dims)


def remove_sidecars(index_path: Path, keep: str | None) -> None:
    """Delete the sidecar files beside an index other than ``keep``'s
    (old ones, and temporary ones of a crashed sync). Best effort: a file
    another process still maps may refuse (Windows); a later sync retries."""
    keep_name = sidecar_path(index_path, keep).name if keep else None
    for p in sidecar_files(index_path):
        if p.name != keep_name:
            try:
                os.remove(p)
            except OSError:
                pass
