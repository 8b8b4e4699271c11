"""Whether an agent's workspace is there to be read (DESIGN.md §1).

A workspace that is gone (moved, renamed, on a drive that is not mounted),
is not a folder, cannot be read, or holds none of the memory its index has
(an unmounted drive leaves its empty mount point behind) is an error for
every face: searching it would answer "nothing", and syncing it would read
every file as deleted. The index keeps its rows until the folder is back.
"""

from __future__ import annotations

import errno
import os
import stat
from typing import TYPE_CHECKING, Callable

from ..errors import WorkspaceMissing
from .roots import MEMORY_DIR, ROOT_FILES

if TYPE_CHECKING:
    from ..settings import AgentConfig
    from ..store import IndexStore

#: A root file or memory folder that is not there (or a link to nowhere).
_NOT_THERE = {errno.ENOENT, errno.ELOOP}
#: What to do about a workspace that cannot be read.
_WHAT_TO_DO = "the index keeps what it holds; give the user running memext read access, or fix `workspace` in the config"


def check_workspace(agent: AgentConfig, indexed: Callable[[], int] | None = None) -> None:
    """Raise :class:`WorkspaceMissing` unless the workspace can be synced and
    searched: a folder that can be listed, with root files and a memory
    folder that can be reached (and listed). Syncing one that cannot would
    report "0 files" and empty the index, and searching it would answer
    "nothing", while a drive is unmounted, say.

    ``indexed`` (how many of the index's files live in the workspace's own
    memory: :func:`workspace_files_indexed`) refuses a workspace holding no
    memory at all (no root file, no memory folder) while the index has some
    of it: an unmounted drive leaves its empty mount point behind, and a
    machine sharing an index on PostgreSQL may not have the files yet. A
    forced rebuild (``memext index --force``) passes no ``indexed``: the
    user asks for the index of what is there.
    """
    ws = agent.workspace

    def refuse(why: str) -> WorkspaceMissing:
        return WorkspaceMissing(f"workspace {ws} of agent {agent.id} {why}", workspace=str(ws), agent=agent.id)

    try:
        st = os.stat(ws)
    except (FileNotFoundError, NotADirectoryError):
        raise refuse(
            "does not exist (moved, renamed, or on a drive that is not mounted?); the index keeps what it holds "
            "until the folder is back: restore it, or fix `workspace` in the config"
        ) from None
    except OSError as exc:
        raise refuse(f"cannot be read ({exc.strerror or exc}): {_WHAT_TO_DO}") from None
    if not stat.S_ISDIR(st.st_mode):
        raise refuse("is not a folder (fix `workspace` in the config)")
    found = 0
    for name in (".", *ROOT_FILES, MEMORY_DIR):
        path = ws / name
        try:
            st = os.stat(path)
            if stat.S_ISDIR(st.st_mode):
                with os.scandir(path):  # listing it needs read access, which stat does not ask
                    pass
        except OSError as exc:
            if exc.errno in _NOT_THERE:
                continue  # discovery reports a dangling or looping link
            shown = "" if name == "." else f"{name}: "
            raise refuse(f"cannot be read ({shown}{exc.strerror or exc}): {_WHAT_TO_DO}") from None
        found += name != "."
    if found == 0 and indexed is not None:
        count = indexed()
        if count:
            raise refuse(
                f"holds no memory (no {ROOT_FILES[0]}, no {MEMORY_DIR}/ folder) while its index has {count} of its files: "
                "is the drive that holds it mounted? The index keeps them until they are back; if they were removed "
                "on purpose, `memext index --force` empties it"
            )


def workspace_files_indexed(store: IndexStore) -> int:
    """How many files of the workspace's own memory (root files, the memory
    folder) the index holds: what an empty workspace would take away."""
    folder = MEMORY_DIR + "/"
    return sum(1 for path in store.file_stats() if path in ROOT_FILES or path.startswith(folder))


def workspace_problem(agent: AgentConfig, indexed: Callable[[], int] | None = None) -> str | None:
    """Why the workspace cannot be synced or searched (:func:`check_workspace`), or None."""
    try:
        check_workspace(agent, indexed)
    except WorkspaceMissing as exc:
        return str(exc)
    return None
