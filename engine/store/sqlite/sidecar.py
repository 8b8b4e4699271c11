"""The vector sidecar: an index's vectors in a memory-mapped file.

Written by the writer at the end of a sync (:func:`write_sidecar`), read by
every process with ``mmap`` (:class:`VectorFile`), so the first search of
any process, a one-shot ``memext search`` included, runs at matrix speed
without loading anything: the kernel pages the file in, shared by all
processes, and the resident size stays close to what the searches touch.

The file holds, in ascending rowid order, each vector as float32 (exact
search, rescoring, the vectors hybrid scoring reads) and as one bit per
dimension (the sign after subtracting the mean vector). Above
:data:`QUANTISED_ABOVE` rows a search ranks every row by Hamming distance
to the query's bits (48 bytes a row at 384 dims), then rescores a candidate
pool exactly from the float32 rows: the order returned is exact cosine
order, and only the pool's rows of the float32 part are read.

Crash safety: each file is named after a random token, written to a
temporary name, flushed to disk and renamed, and only then recorded in the
index's ``meta`` (``vector_sidecar``) in a transaction. A reader uses a
file only if its footer carries the token ``meta`` names and its size is
the one the footer declares, so a file from a crashed sync is never used.

Layout: float32 rows, int64 rowids, uint8 source codes, bit codes (padded
to 8-byte words), float32 mean, a JSON footer and a 16-byte trailer
(footer length, magic). The footer is at the end so rows can be streamed
in without knowing their count.
"""

from __future__ import annotations

import json
import os
import struct
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Iterable, Iterator, NamedTuple, Sequence

from ...paths import PRIVATE_FILE_MODE

if TYPE_CHECKING:
    import numpy as np

MAGIC = b"MEMEXTV1"
_TRAILER = struct.Struct("<Q8s")
#: Rows written per block: bounds the writer's memory (about 6 MB at 384 dims).
BLOCK_ROWS = 4096
#: Above this many rows, searches rank by bit codes and rescore a pool
#: exactly (below it one BLAS product over the float32 rows is faster).
QUANTISED_ABOVE = 250_000
#: The smallest candidate pool rescored exactly (see bench/million.py for
#: the recall it buys).
MIN_POOL = 4000
#: The pool is at least this many times the results asked for.
POOL_PER_RESULT = 20


def sidecar_path(index_path: Path, token: str) -> Path:
    """Where the sidecar with ``token`` of the index at ``index_path`` lives."""
    return index_path.with_name(f"{index_path.name}.vectors-{token}")


def sidecar_files(index_path: Path) -> list[Path]:
    """Every sidecar file (and temporary one) beside an index."""
    return list(index_path.parent.glob(index_path.name + ".vectors-*"))


def new_token() -> str:
    return uuid.uuid4().hex


class SidecarInfo(NamedTuple):
    """What ``meta`` records about the sidecar in force."""

    token: str
    rows: int
    max_rowid: int
    dims: int

    def to_json(self) -> dict:
        return {"token": self.token, "rows": self.rows, "max_rowid": self.max_rowid, "dims": self.dims}

    @classmethod
    def from_json(cls, raw: object) -> "SidecarInfo | None":
        if not isinstance(raw, dict):
            return None
        try:
            return cls(str(raw["token"]), int(raw["rows"]), int(raw["max_rowid"]), int(raw["dims"]))
        except (KeyError, TypeError, ValueError):
            return None


class SidecarError(Exception):
    """The file is missing, truncated or not the one ``meta`` names."""


def write_sidecar(path: Path, token: str, dims: int, blocks: Iterable[tuple["np.ndarray", "np.ndarray", Sequence[str]]]) -> SidecarInfo:
    """Write a sidecar from blocks of ``(rowids, float32 rows, sources)``
    in ascending rowid order; returns what to record in ``meta``.

    Memory stays bounded by one block (plus 9 bytes a row for rowids and
    source codes). The file is complete and on disk before it gets its
    final name, so a crash leaves at most a temporary file behind.
    """
    import numpy as np

    tmp = path.with_name(path.name + ".tmp")
    rowid_parts: list[np.ndarray] = []
    code_parts: list[np.ndarray] = []
    source_names: dict[str, int] = {}
    total = np.zeros(dims, dtype=np.float64)
    rows = written = 0
    try:
        # 0600 whatever the umask, like the index: it holds the notes' vectors.
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, PRIVATE_FILE_MODE)
        with open(fd, "wb") as f:
            os.fchmod(f.fileno(), PRIVATE_FILE_MODE)  # a temp file left by a crash may be looser
            for ids, vecs, sources in blocks:
                if not len(ids):
                    continue
                vecs = np.ascontiguousarray(vecs, dtype="<f4").reshape(len(ids), dims)
                f.write(vecs.tobytes())
                written += vecs.nbytes
                total += vecs.sum(axis=0, dtype=np.float64)
                rowid_parts.append(np.asarray(ids, dtype="<i8"))
                code_parts.append(np.array([source_names.setdefault(s, len(source_names)) for s in sources], dtype=np.uint8))
                rows += len(ids)
            if len(source_names) > 255:
                raise ValueError("more than 255 sources")
            rowids = np.concatenate(rowid_parts) if rowid_parts else np.zeros(0, dtype="<i8")
            if len(rowids) > 1 and not bool(np.all(rowids[1:] > rowids[:-1])):
                raise ValueError("sidecar rows must come in ascending rowid order")
            mean = (total / max(rows, 1)).astype("<f4")
            f.write(bytes(_pad(written) - written))
            f.write(rowids.tobytes())
            source_codes = np.concatenate(code_parts) if code_parts else np.zeros(0, np.uint8)
            f.write(source_codes.tobytes() + bytes(_pad(rows) - rows))
            f.flush()
            # Bit codes from the float rows just written, block by block.
            words = _code_words(dims)
            floats = np.memmap(tmp, dtype="<f4", mode="r", shape=(rows, dims)) if rows else np.zeros((0, dims), "<f4")
            for start in range(0, rows, BLOCK_ROWS):
                f.write(bit_codes(floats[start : start + BLOCK_ROWS], mean, words).tobytes())
            del floats
            f.write(mean.tobytes())
            footer = json.dumps(
                {"token": token, "rows": rows, "dims": dims, "sources": sorted(source_names, key=source_names.__getitem__)}
            ).encode()
            f.write(footer)
            f.write(_TRAILER.pack(len(footer), MAGIC))
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.remove(tmp)
        except OSError:
            pass
        raise
    return SidecarInfo(token, rows, int(rowids[-1]) if rows else 0, dims)


def _pad(n: int) -> int:
    """``n`` rounded up to 8 bytes: every part of the file starts 8-aligned."""
    return (n + 7) // 8 * 8


def _code_words(dims: int) -> int:
    return (dims + 63) // 64


def bit_codes(vectors: "np.ndarray", mean: "np.ndarray", words: int) -> "np.ndarray":
    """One bit per dimension (above the mean or not), packed into ``words``
    uint64 words per row."""
    import numpy as np

    v = np.atleast_2d(vectors)
    bits = np.packbits(v > mean, axis=1)
    out = np.zeros((len(v), words * 8), dtype=np.uint8)
    out[:, : bits.shape[1]] = bits
    return out.view("<u8")


class VectorFile:
    """A sidecar opened read-only with ``mmap``: nothing is read up front."""

    def __init__(self, path: Path, token: str):
        import mmap

        import numpy as np

        try:
            with open(path, "rb") as f:
                size = os.fstat(f.fileno()).st_size
                if size < _TRAILER.size:
                    raise SidecarError(f"{path} is truncated")
                self._mmap = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        except OSError as exc:
            raise SidecarError(f"cannot open {path}: {exc}") from exc
        buf = self._mmap
        footer_len, magic = _TRAILER.unpack_from(buf, size - _TRAILER.size)
        if magic != MAGIC or footer_len > size - _TRAILER.size:
            raise SidecarError(f"{path} is not a vector sidecar")
        try:
            footer = json.loads(bytes(buf[size - _TRAILER.size - footer_len : size - _TRAILER.size]))
            rows, dims, self.sources = int(footer["rows"]), int(footer["dims"]), list(footer["sources"])
            found = str(footer["token"])
        except (ValueError, KeyError, TypeError) as exc:
            raise SidecarError(f"{path} has an unreadable footer") from exc
        if found != token:
            raise SidecarError(f"{path} is not the sidecar the index names")
        words = _code_words(dims)
        offsets = [_pad(rows * dims * 4), rows * 8, _pad(rows), rows * words * 8, dims * 4]
        if sum(offsets) + footer_len + _TRAILER.size != size:
            raise SidecarError(f"{path} has the wrong size")
        self.path, self.rows, self.dims, self.words = path, rows, dims, words
        if rows > QUANTISED_ABOVE and hasattr(mmap, "MADV_RANDOM"):
            # Searches read a pool of scattered float rows: without this the
            # kernel maps 64 KB around each, and the resident size grows to
            # the whole file over a few hundred searches.
            try:
                buf.madvise(mmap.MADV_RANDOM, 0, _pad(rows * dims * 4) // mmap.PAGESIZE * mmap.PAGESIZE)
            except (OSError, ValueError):
                pass
        pos = 0
        self.matrix = np.frombuffer(buf, dtype="<f4", count=rows * dims, offset=pos).reshape(rows, dims)
        pos += offsets[0]
        self.rowids = np.frombuffer(buf, dtype="<i8", count=rows, offset=pos)
        pos += offsets[1]
        self.source_codes = np.frombuffer(buf, dtype=np.uint8, count=rows, offset=pos)
        pos += offsets[2]
        self.codes = np.frombuffer(buf, dtype="<u8", count=rows * words, offset=pos).reshape(rows, words)
        pos += offsets[3]
        self.mean = np.frombuffer(buf, dtype="<f4", count=dims, offset=pos)

    @property
    def max_rowid(self) -> int:
        return int(self.rowids[-1]) if self.rows else 0

    def positions(self, rowids: Sequence[int]) -> dict[int, int]:
        """Row positions of the given rowids that the file holds."""
        import numpy as np

        if not self.rows:
            return {}
        want = np.asarray(list(rowids), dtype=np.int64)
        pos = np.minimum(np.searchsorted(self.rowids, want), self.rows - 1)
        found = self.rowids[pos] == want
        return dict(zip(want[found].tolist(), pos[found].tolist()))

    def source_mask(self, sources: Sequence[str] | None) -> "np.ndarray | None":
        """Rows of the given sources (None: every row)."""
        import numpy as np

        if sources is None:
            return None
        codes = [i for i, name in enumerate(self.sources) if name in set(sources)]
        return np.isin(self.source_codes, np.array(codes, dtype=np.uint8))

    def exact_scores(self, query: "np.ndarray") -> "np.ndarray":
        """Cosine similarity of every row (one BLAS product)."""
        return self.matrix @ query

    def candidates(self, query: "np.ndarray", pool: int, keep: "np.ndarray | None") -> "np.ndarray":
        """Positions of about ``pool`` rows nearest the query by Hamming
        distance of bit codes (every row tied at the cut-off distance is
        included), among the rows ``keep`` allows."""
        import numpy as np

        q = bit_codes(query, self.mean, self.words)[0]
        dist = np.empty(self.rows, dtype=np.uint16)
        block = 65_536
        xor = np.empty((block, self.words), dtype="<u8")
        counts = np.empty((block, self.words), dtype=np.uint8)
        for start in range(0, self.rows, block):
            part = self.codes[start : start + block]
            n = len(part)
            np.bitwise_xor(part, q, out=xor[:n])
            np.bitwise_count(xor[:n], out=counts[:n])
            np.add.reduce(counts[:n], axis=1, dtype=np.uint16, out=dist[start : start + n])
        if keep is not None:
            dist[~keep] = np.iinfo(np.uint16).max
        limit = self.dims + 1
        hist = np.bincount(np.minimum(dist, limit), minlength=limit + 1)
        cutoff = int(np.searchsorted(np.cumsum(hist), pool))
        chosen = np.flatnonzero(dist <= min(cutoff, self.dims))
        return chosen

    def close(self) -> None:
        for name in ("matrix", "rowids", "source_codes", "codes", "mean"):
            self.__dict__.pop(name, None)
        try:
            self._mmap.close()
        except (BufferError, ValueError):
            pass  # arrays handed out still view it; the OS unmaps it when they go


def iter_blocks(
    rows: Iterator[tuple[int, bytes, str]], dims: int, block: int = BLOCK_ROWS
) -> Iterator[tuple["np.ndarray", "np.ndarray", list[str]]]:
    """Group ``(rowid, float32 blob, source)`` rows into blocks for :func:`write_sidecar`."""
    import numpy as np

    ids: list[int] = []
    blobs: list[bytes] = []
    sources: list[str] = []
    for rowid, blob, source in rows:
        if len(blob) != dims * 4:
            continue
        ids.append(rowid)
        blobs.append(blob)
        sources.append(source)
        if len(ids) >= block:
            yield np.array(ids, dtype=np.int64), np.frombuffer(b"".join(blobs), dtype="<f4").reshape(len(ids), dims), sources
            ids, blobs, sources = [], [], []
    if ids:
        yield np.array(ids, dtype=np.int64), np.frombuffer(b"".join(blobs), dtype="<f4").reshape(len(ids), dims), sources
