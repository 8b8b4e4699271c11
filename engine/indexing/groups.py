"""Writing a sync's files a group at a time (DESIGN.md §5).

A sync prepares files (read, hash, chunk) one by one; :class:`Groups`
collects them and hands a group to the writer once it holds enough chunks,
so memory holds one group and each group is one transaction.
"""

from __future__ import annotations

from typing import Any, Callable, Generic, Protocol, TypeVar

from ..memory.discovery import SourceFile
from .changes import stat_matches

#: Chunks written per transaction when no provider sets a group size
#: (keyword-only): few enough commits to cost little, a group small enough
#: to bound memory.
COMMIT_CHUNKS = 2048


class HasChunks(Protocol):
    @property
    def chunks(self) -> list[Any]: ...


P = TypeVar("P", bound=HasChunks)


def unchanged(row: Any, f: SourceFile) -> bool:
    """The index holds this file as it is on disk (by size and mtime)."""
    return row is not None and row.hash is not None and stat_matches(row, f)


class Groups(Generic[P]):
    """Collects prepared files into groups and hands each to ``write`` when
    it holds ``size`` chunks (None: one group for everything)."""

    def __init__(self, write: Callable[[list[P], list[SourceFile], "Groups[P]"], None], size: int | None, files_total: int):
        self.write, self.size = write, size
        self.files_total = files_total
        self.files_done = self.chunks_done = 0
        self.items: list[P] = []
        self.touched: list[SourceFile] = []
        self.chunks = 0
        self.seen_files = self.seen_chunks = 0

    def add(self, item: P) -> None:
        self.items.append(item)
        self.chunks += len(item.chunks)
        self.seen_files += 1
        self.seen_chunks += len(item.chunks)
        if self.size is not None and self.chunks >= self.size:
            self.flush()

    def touch(self, f: SourceFile) -> None:
        self.touched.append(f)
        if len(self.touched) >= COMMIT_CHUNKS:
            self.flush()

    def flush(self) -> None:
        if self.items or self.touched:
            self.write(self.items, self.touched, self)
        self.items, self.touched, self.chunks = [], [], 0

    def chunks_estimate(self) -> int:
        """Chunks of the whole sync: exact once every file is prepared,
        else extrapolated from the files prepared so far."""
        if not self.seen_files:
            return 0
        return max(self.seen_chunks, round(self.seen_chunks / self.seen_files * self.files_total))
