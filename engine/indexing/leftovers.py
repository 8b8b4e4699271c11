"""Index files left behind by ad-hoc agents whose folder is gone.

Without a config file, memext indexes the current folder as an ad-hoc agent
(``<folder>-<hash>.sqlite`` in the index folder). Such files outlive the
folder; :func:`orphaned_indexes` finds those whose workspace no longer
exists (or holds no memory any more), reading only the workspace each index
was built for (its fingerprint), and :func:`remove_index` deletes one.
:func:`purge_agent_index` deletes every file of a configured agent's index
(``memext agents remove --purge``).
"""

from __future__ import annotations

import json
import re
import sqlite3
from dataclasses import dataclass
from pathlib import Path

from ..config import AgentConfig, Config, adhoc_agent_id
from ..errors import MemextError
from ..memory.roots import MEMORY_DIR, ROOT_FILES
from ..store.sqlite.lock import WriterLock
from .last_failure import record_path

_ADHOC_NAME = re.compile(r".+-[0-9a-f]{10}\.sqlite$")


@dataclass(frozen=True)
class OrphanedIndex:
    """An ad-hoc agent's index file and the workspace it was built for."""

    agent_id: str
    path: Path
    workspace: str | None  # None when the index never finished a sync
    reason: str
    size: int


def _built_for(path: Path) -> str | None:
    """The workspace recorded in an index's fingerprint (read-only)."""
    try:
        conn = sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True)
        try:
            row = conn.execute("SELECT value FROM meta WHERE key = 'fingerprint'").fetchone()
        finally:
            conn.close()
        return str(json.loads(row[0]).get("workspace")) if row else None
    except (sqlite3.Error, ValueError, AttributeError):
        return None


def _has_memory(ws: Path) -> bool:
    return any((ws / n).is_file() for n in ROOT_FILES) or (ws / MEMORY_DIR).is_dir()


def orphaned_indexes(cfg: Config, index_dir: Path) -> list[OrphanedIndex]:
    """Ad-hoc indexes in ``index_dir`` that no configured agent uses and
    whose workspace is gone or holds no memory files."""
    configured = {a.id for a in cfg.agents if not a.adhoc}
    out: list[OrphanedIndex] = []
    for path in sorted(index_dir.glob("*.sqlite")) if index_dir.is_dir() else []:
        agent_id = path.name[: -len(".sqlite")]
        if agent_id in configured or not _ADHOC_NAME.fullmatch(path.name):
            continue
        ws = _built_for(path)
        if ws is None:
            continue  # not memext's, or never built: leave it alone
        if adhoc_agent_id(Path(ws)) != agent_id:
            continue  # a configured agent's name that happens to look ad hoc
        where = Path(ws)
        if not where.is_dir():
            reason = "folder no longer exists"
        elif not _has_memory(where):
            reason = "folder holds no memory files any more"
        else:
            continue
        out.append(OrphanedIndex(agent_id, path, ws, reason, path.stat().st_size))
    return out


def remove_index(path: Path) -> list[Path]:
    """Delete an index file, its SQLite companions, its vector sidecars,
    its failure record and its lock file, holding the index's writer lock
    meanwhile (LockTimeout when a process is writing it: then nothing is
    deleted). Returns the files deleted (the lock file aside)."""
    from ..store.sqlite.sidecar import sidecar_files

    with WriterLock(path, timeout=0):
        deleted = _delete(_companions(path), strict=True)
        # Best effort: a sidecar another process still maps may refuse (Windows).
        deleted += _delete([*sidecar_files(path), record_path(path)], strict=False)
    try:
        Path(str(path) + ".lock").unlink()
    except OSError:
        pass  # another process took the lock meanwhile: it may keep its file
    return deleted


def purge_agent_index(agent: AgentConfig, cfg: Config) -> list[Path]:
    """Delete every file of ``agent``'s index on this machine (the index,
    its companions and sidecars, and copies set aside when it was damaged);
    returns them. Raises MemextError, deleting nothing, when the index is
    not memext's own file, another configured agent uses the same file, or
    it lives on a database server; LockTimeout while a process writes it."""
    from ..store.drivers import driver_of, store_location
    from ..store.sqlite.index_files import aside_copies
    from ..store.sqlite.ownership import Kind, inspect

    if not driver_of(agent).local:
        raise MemextError(
            f"agent {agent.id}'s index is on a database server ({store_location(agent)}): "
            "--purge deletes only index files on this machine; drop that schema on the server, "
            "or remove the agent without --purge"
        )
    path = agent.db_path()
    sharing = [a.id for a in cfg.agents if a.id != agent.id and driver_of(a).local and a.db_path() == path]
    if sharing:
        raise MemextError(f"{path} is also the index of agent {', '.join(sharing)}: not deleted; remove the agent without --purge")
    found = inspect(path, own_path=not agent.settings.store.path)
    if found.kind not in (Kind.NEW, Kind.UNFINISHED, Kind.MEMEXT, Kind.UNSTAMPED, Kind.DAMAGED):
        raise MemextError(f"{path} is not an index memext made ({found.detail}): not deleted; remove the agent without --purge")
    deleted = remove_index(path)
    for copy in aside_copies(path):
        deleted += _delete(_companions(copy), strict=False)
    return deleted


def _companions(path: Path) -> list[Path]:
    """An SQLite file and its journal/WAL companions."""
    from ..store.sqlite.index_files import INDEX_COMPANIONS

    return [Path(str(path) + suffix) for suffix in INDEX_COMPANIONS]


def _delete(files: list[Path], *, strict: bool) -> list[Path]:
    """Delete the files that exist; returns those deleted. ``strict``: an
    error other than a missing file is raised, else the file is left."""
    deleted = []
    for f in files:
        try:
            f.unlink()
        except FileNotFoundError:
            continue
        except OSError:
            if strict:
                raise
            continue
        deleted.append(f)
    return deleted
