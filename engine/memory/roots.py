"""The places an agent's memory lives: one model for discovery and watching.

Memory is ``MEMORY.md``/``memory.md`` in the workspace, ``memory/`` below
it, the folders and ``.md`` files named in ``extra_paths`` and, when the
agent indexes transcripts, its sessions folder. :class:`MemoryRoots` holds
them as real (resolved) paths; discovery (:mod:`.discovery`), reads
(:mod:`.read`), the index-path check and the file watcher (:mod:`..freshness.watch`)
all ask the same object.
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple, Sequence

if TYPE_CHECKING:
    from ..settings import AgentConfig

ROOT_FILES = ("MEMORY.md", "memory.md")
MEMORY_DIR = "memory"


def is_temporary(name: str) -> bool:
    """Editor scratch and backup names (vim's ``4913`` probe, ``*.swp``,
    emacs ``.#x``/``#x#``, ``x~``, ``x.tmp``/``x.md.tmp.123``)."""
    low = name.lower()
    return (
        name == "4913"
        or low.endswith(("~", ".swp", ".swo", ".swx", ".bak", ".part", ".crdownload"))
        or ".tmp" in low
        or low.startswith((".#", "#", "~$"))
    )


def is_within(path: Path, root: Path) -> bool:
    """``path`` is strictly inside ``root``."""
    return path != root and root in path.parents


@dataclass(frozen=True)
class MemoryRoots:
    """The places an agent's memory may live, as real (resolved) paths.

    An extra path that does not exist (yet) counts as a folder unless it
    is named ``*.md``: watching it covers its creation either way.
    """

    workspace: Path
    extra_dirs: tuple[Path, ...]
    extra_files: tuple[Path, ...]
    #: The transcripts folder, when the agent indexes sessions.
    sessions_dir: Path | None = None

    @classmethod
    def of(cls, workspace: Path, extra_paths: Sequence[Path], sessions_dir: Path | None = None) -> "MemoryRoots":
        ws = Path(os.path.realpath(workspace))
        dirs: list[Path] = []
        files: list[Path] = []
        for p in extra_paths:
            real = Path(os.path.realpath(p))
            if real.is_dir() or (not real.exists() and real.suffix.lower() != ".md"):
                dirs.append(real)
            elif real.suffix.lower() == ".md":
                files.append(real)
        sessions = Path(os.path.realpath(sessions_dir)) if sessions_dir is not None else None
        return cls(ws, tuple(dict.fromkeys(dirs)), tuple(dict.fromkeys(files)), sessions)

    @classmethod
    def for_agent(cls, agent: "AgentConfig") -> "MemoryRoots":
        """The roots of an agent, its sessions folder included when indexed."""
        sessions = agent.sessions_path if "sessions" in agent.settings.sources else None
        return cls.of(agent.workspace, agent.extra_path_list(), sessions)

    @property
    def memory_dir(self) -> Path:
        return self.workspace / MEMORY_DIR

    @property
    def recursive_dirs(self) -> tuple[Path, ...]:
        """``memory/`` and the extra folders: everything below them counts."""
        return (self.memory_dir, *self.extra_dirs)

    @property
    def files(self) -> tuple[Path, ...]:
        """Single memory files: the root files and the extra ``.md`` files."""
        return (*(self.workspace / name for name in ROOT_FILES), *self.extra_files)

    # -- discovery and reads --------------------------------------------------
    #
    # On strings, not Path objects: discovery asks these for each folder or
    # file, and a Path costs microseconds to build and compare (DESIGN.md §1).
    # The paths are resolved and normalised, so prefix tests are exact.

    @functools.cached_property
    def _text(self) -> _RootText:
        return _RootText(
            workspace=str(self.workspace),
            memory_dir=str(self.memory_dir),
            extra_dirs=tuple(str(d) for d in self.extra_dirs),
            extra_files=frozenset(str(f) for f in self.extra_files),
        )

    def allows(self, real: Path | str) -> bool:
        """True when a resolved path is a memory file of this agent."""
        path = os.fspath(real)
        name = os.path.basename(path)
        if len(name) <= 3 or name[-3:].lower() != ".md":  # Path.suffix: ".md" alone has none
            return False
        t = self._text
        if _has_hidden_part(path, self._base_for(path)):
            return False
        if name in ROOT_FILES and os.path.dirname(path) == t.workspace:
            return True
        if _inside(path, t.memory_dir) or path in t.extra_files:
            return True
        return any(_inside(path, d) for d in t.extra_dirs)

    def allows_all_in(self, folder: str) -> bool | None:
        """:meth:`allows` for every non-hidden ``.md`` name directly in a
        resolved ``folder`` at once, or None when it depends on the name (the
        workspace itself, a folder holding an extra file). The answer turns on
        the folder alone otherwise: the base folder, the hidden parts above the
        name and the roots containing the file are those of the folder."""
        t = self._text
        if folder == t.workspace or any(os.path.dirname(f) == folder for f in t.extra_files):
            return None
        return self.allows(os.path.join(folder, "x.md"))

    def _base_for(self, path: str) -> str:
        t = self._text
        for d in t.extra_dirs:
            if _inside(path, d):
                return d
        return t.workspace

    def display_path(self, real: Path | str) -> str:
        """Workspace-relative with '/', e.g. ``memory/2026-01-02.md`` or
        ``../notes/x.md`` for an extra path outside the workspace."""
        path = os.fspath(real)
        ws = self._text.workspace
        if _inside(path, ws):
            rel = path[len(ws) + (0 if ws.endswith(os.sep) else 1) :]
        else:
            rel = os.path.relpath(path, ws)
        return rel.replace(os.sep, "/")

    # -- watching -------------------------------------------------------------

    def schedules(self) -> list[tuple[Path, bool]]:
        """``(folder, recursive)`` pairs to watch now.

        The workspace itself is watched without recursion (root files, and
        a ``memory/`` that appears later). A folder that does not exist yet
        is covered by watching its nearest existing parent without
        recursion, so its creation is seen.
        """
        out: dict[Path, bool] = {}

        def add(folder: Path, recursive: bool) -> None:
            if folder.is_dir():
                out[folder] = out.get(folder, False) or recursive
                return
            parent = folder.parent
            while parent != parent.parent and not parent.is_dir():
                parent = parent.parent
            if parent.is_dir():
                out.setdefault(parent, False)

        add(self.workspace, False)
        for d in self.recursive_dirs:
            add(d, True)
        for f in self.files:
            add(f.parent, False)
        if self.sessions_dir is not None:
            add(self.sessions_dir, False)
        # A folder already inside a recursive watch needs no watch of its own.
        rec = [p for p, r in out.items() if r]
        return [(p, r) for p, r in out.items() if not any(q != p and is_within(p, q) for q in rec)]

    def is_relevant(self, path: str, is_directory: bool) -> bool:
        """True when a change at ``path`` can change the agent's index."""
        p = Path(path)
        if is_temporary(p.name):
            return False
        if p in self.files:
            return True
        for d in self.recursive_dirs:
            if p == d or is_within(d, p):  # the folder itself appears, goes or moves
                return is_directory
            if is_within(p, d):
                if any(part.startswith(".") for part in p.relative_to(d).parts):
                    return False
                return is_directory or p.suffix.lower() == ".md"
        if self.sessions_dir is not None:
            if p == self.sessions_dir or is_within(self.sessions_dir, p):
                return is_directory
            if p.parent == self.sessions_dir:
                return not is_directory and not p.name.startswith(".") and p.suffix == ".jsonl"
        return False


class _RootText(NamedTuple):
    """The roots as strings, for the per-file checks of discovery."""

    workspace: str
    memory_dir: str
    extra_dirs: tuple[str, ...]
    extra_files: frozenset[str]


def _inside(path: str, root: str) -> bool:
    """``path`` is strictly inside ``root`` (both resolved, as strings):
    :func:`is_within` without building Path objects."""
    prefix = root if root.endswith(os.sep) else root + os.sep
    return len(path) > len(prefix) and path.startswith(prefix)


def _has_hidden_part(path: str, base: str) -> bool:
    """A part of ``path`` below ``base`` starts with a dot (only the file
    name is checked when ``path`` is not below ``base``)."""
    if _inside(path, base):
        rel = path[len(base) + (0 if base.endswith(os.sep) else 1) :]
        return any(p.startswith(".") for p in rel.split(os.sep))
    return path != base and os.path.basename(path).startswith(".")
