"""The change check's scan: do the memory files on disk match the index?

:func:`memory_files_match` walks the memory folders with the rules of
discovery (:class:`~.discovery.Scan`) but builds no list: it counts the
files whose stat the index holds, and stops at the first that differs.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Iterable, Iterator, Mapping

from .discovery import IndexedStat, Scan, starts_binary
from .roots import MemoryRoots

#: ``.md`` in any case, for ``str.endswith`` (no lowered copy of each name).
_MD_SUFFIXES = (".md", ".MD", ".Md", ".mD")


def memory_files_match(workspace: Path, extra_paths: list[Path], max_bytes: int, indexed: Mapping[str, IndexedStat]) -> int | None:
    """How many memory files on disk have the stat ``indexed`` holds for
    them, or None when one does not (added or changed): the change check's
    scan, with the rules of :func:`~.discovery.discover_memory_files` (files it would
    skip, binary ones included, count as neither) but no list built.

    A caller compares the count with the number of indexed memory files to
    see removals.

    The scan first takes folder entries in the order the file system gives
    them: the order decides only which of two names of one file (hard links,
    ``MEMORY.md`` and ``memory.md`` on a case-insensitive file system) a
    sync indexes, so only when a file turns up under two names is the scan
    made again in a sync's sorted order."""
    roots = MemoryRoots.of(workspace, extra_paths)
    for ordered in (False, True):
        scan = _MatchScan(roots, max_bytes, indexed, ordered)
        try:
            scan.run(workspace, extra_paths)
        except _Differs:
            return None
        except _OrderMatters:
            continue
        return scan.matched
    raise AssertionError("a scan in sorted order does not depend on order")


class _Differs(Exception):
    """A file differs from the index: the rest of the scan cannot change the answer."""


class _OrderMatters(Exception):
    """A file turned up under two names: which one a sync keeps depends on the order of the scan."""


class _MatchScan(Scan):
    """A :class:`~.discovery.Scan` that counts the files matching the index instead of
    listing them (a ``SourceFile`` per file and a sort of them made the
    scan 1.3x slower at 10k files).

    Unordered (``ordered=False``) it raises :class:`_OrderMatters` as soon
    as the verdict could depend on the order of the scan: a file met under
    a second name. A name the index lacks is then only a change once the
    whole scan has not met its file under another name."""

    def __init__(self, roots: MemoryRoots, max_bytes: int, indexed: Mapping[str, IndexedStat], ordered: bool = True):
        super().__init__(roots, max_bytes, indexed)
        self.ordered = ordered
        self.names: set[str] = set()  # the names counted
        self.seen: dict[tuple[int, int], str] = {}  # file identity -> its name counted (files that may have others)
        self.unknown: set[tuple[int, int]] = set()  # files met under a name the index lacks (unordered)
        self.matched = 0

    def run(self, workspace: Path, extra_paths: list[Path]) -> None:
        super().run(workspace, extra_paths)
        if self.unknown:
            raise _Differs  # a file met under no other name: a sync adds it

    def _take_plain(self, entries: Iterable[os.DirEntry], shown_dir: str) -> list[os.DirEntry]:
        # Filter and match in one pass as the entries are listed (no list
        # of the Markdown files, whose second pass cost 0.1x the bare walk
        # at 10k files): Markdown files go on to _plain_files as they come;
        # folders, symlinks and the rest go back to the walk.
        rest: list[os.DirEntry] = []

        def markdown() -> Iterator[os.DirEntry]:
            for entry in entries:
                try:
                    regular = entry.is_file(follow_symlinks=False)
                except OSError:
                    continue
                if not regular:
                    rest.append(entry)
                elif entry.name.endswith(_MD_SUFFIXES) and not entry.name.startswith("."):
                    yield entry

        self._plain_files(markdown(), shown_dir)
        return rest

    def _plain_files(self, entries: Iterable[os.DirEntry], shown_dir: str) -> None:
        # The common case inline: an indexed, unchanged file of one hard link
        # (met under another name only through a symlink, whose real path is
        # this name). Anything else takes _add, which tracks file identities.
        indexed, names, max_bytes = self.indexed, self.names, self.max_bytes
        matched = 0
        for entry in entries:
            shown = shown_dir + entry.name
            try:
                st = entry.stat(follow_symlinks=False)
            except OSError:
                continue  # a sync skips it too
            known = indexed.get(shown)
            if (
                known is not None
                and known.mtime_ns == st.st_mtime_ns
                and known.size == st.st_size
                and st.st_nlink == 1
                and st.st_size <= max_bytes
                and shown not in names
            ):
                names.add(shown)
                matched += 1
            else:
                self._add(entry.path, shown, st)
        self.matched += matched

    def _add(self, real: str, shown: str, st: os.stat_result) -> None:
        if st.st_size > self.max_bytes or shown in self.names:
            return  # a file a sync skips under any name, or a name counted (a symlink to it)
        key = (st.st_dev, st.st_ino)
        if key in self.seen or key in self.unknown:
            if self.ordered:
                return  # a second name of a file: the sync keeps the first
            raise _OrderMatters
        if not self._unchanged(shown, st):
            if starts_binary(real):
                return  # skipped by every sync
            if self.ordered or shown in self.indexed:
                raise _Differs  # changed, or new with no name met before it
            self.unknown.add(key)
            return
        self.seen[key] = shown
        self.names.add(shown)
        self.matched += 1
