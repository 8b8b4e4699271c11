"""Index files left behind by ad-hoc agents whose folder is gone.

Without a config file, memext indexes the current folder as an ad-hoc agent
(``<folder>-<hash>.sqlite`` in the index folder). Such files outlive the
folder; :func:`orphaned_indexes` finds those whose workspace no longer
exists (or holds no memory any more, or has become a configured agent's),
reading only the workspace each index was built for (its fingerprint), and
:func:`remove_index` deletes one.
:func:`purge_agent_index` deletes every file of a configured agent's index
(``memext agents remove --purge``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ..config import AgentConfig, Config, adhoc_agent_id
from ..errors import MemextError
from ..memory.roots import MEMORY_DIR, ROOT_FILES
from ..store.drivers import driver_of, store_driver, store_location
from .last_failure import record_path

if TYPE_CHECKING:
    from ..store.drivers import IndexFiles

_ADHOC_NAME = re.compile(r".+-[0-9a-f]{10}\.sqlite$")


@dataclass(frozen=True)
class OrphanedIndex:
    """An ad-hoc agent's index file and the workspace it was built for."""

    agent_id: str
    path: Path
    workspace: str | None  # None when the index never finished a sync
    reason: str
    size: int


def _index_folder_files() -> IndexFiles:
    """The backend of the index files in the index folder: an agent's index
    there is ``<agent id>.sqlite`` (:meth:`AgentConfig.db_path`), a SQLite file."""
    files = store_driver("sqlite").index_files()
    assert files is not None
    return files


def _has_memory(ws: Path) -> bool:
    return any((ws / n).is_file() for n in ROOT_FILES) or (ws / MEMORY_DIR).is_dir()


def orphaned_indexes(cfg: Config, index_dir: Path) -> list[OrphanedIndex]:
    """Ad-hoc indexes in ``index_dir`` that nothing uses any more: no
    configured agent has their name, and their workspace is gone, holds no
    memory files, or is now a configured agent's (which searches its own
    index: the folder was indexed ad hoc before ``memext agents add``)."""
    agents = [a for a in cfg.agents if not a.adhoc]
    configured = {a.id for a in agents}
    out: list[OrphanedIndex] = []
    for path in sorted(index_dir.glob("*.sqlite")) if index_dir.is_dir() else []:
        agent_id = path.name[: -len(".sqlite")]
        if agent_id in configured or not _ADHOC_NAME.fullmatch(path.name):
            continue
        ws = _index_folder_files().built_for(path)
        if ws is None:
            continue  # not memext's, or never built: leave it alone
        if adhoc_agent_id(Path(ws)) != agent_id:
            continue  # a configured agent's name that happens to look ad hoc
        where = Path(ws)
        if not where.is_dir():
            reason = "folder no longer exists"
        elif not _has_memory(where):
            reason = "folder holds no memory files any more"
        elif owner := next((a.id for a in agents if _same_folder(a.workspace, where)), None):
            reason = f"folder is now agent {owner}'s workspace, searched with that agent's index"
        else:
            continue
        out.append(OrphanedIndex(agent_id, path, ws, reason, path.stat().st_size))
    return out


def _same_folder(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve()
    except OSError:
        return False


def remove_index(path: Path) -> list[Path]:
    """Delete an index file, its SQLite companions, its vector sidecars,
    its failure record and its lock file, holding the index's writer lock
    meanwhile (LockTimeout when a process is writing it: then nothing is
    deleted). Returns the files deleted (the lock file aside)."""
    return _index_folder_files().remove(path, also=[record_path(path)])


def purge_agent_index(agent: AgentConfig, cfg: Config) -> list[Path]:
    """Delete every file of ``agent``'s index on this machine (the index,
    its companions and sidecars, and copies set aside when it was damaged);
    returns them. Raises MemextError, deleting nothing, when the index is
    not memext's own file, another configured agent uses the same file, or
    it lives on a database server; LockTimeout while a process writes it."""
    files = driver_of(agent).index_files()
    if files is None:
        raise MemextError(
            f"agent {agent.id}'s index is on a database server ({store_location(agent)}): "
            "--purge deletes only index files on this machine; drop that schema on the server, "
            "or remove the agent without --purge"
        )
    path = agent.db_path()
    sharing = [a.id for a in cfg.agents if a.id != agent.id and driver_of(a).local and a.db_path() == path]
    if sharing:
        raise MemextError(f"{path} is also the index of agent {', '.join(sharing)}: not deleted; remove the agent without --purge")
    problem = files.not_ours(path, own_path=not agent.settings.store.path)
    if problem:
        raise MemextError(f"{path} is not an index memext made ({problem}): not deleted; remove the agent without --purge")
    deleted = files.remove(path, also=[record_path(path)])
    return deleted + files.remove_aside_copies(path)
