"""Index files left behind by ad-hoc agents whose folder is gone.

Without a config file, memext indexes the current folder as an ad-hoc agent
(``<folder>-<hash>.sqlite`` in the index folder). Such files outlive the
folder; :func:`orphaned_indexes` finds those whose workspace no longer
exists (or holds no memory any more), reading only the workspace each index
was built for (its fingerprint), and :func:`remove_index` deletes one.
"""

from __future__ import annotations

import json
import re
import sqlite3
from dataclasses import dataclass
from pathlib import Path

from ..config import Config, adhoc_agent_id
from ..memory.roots import MEMORY_DIR, ROOT_FILES
from ..store.sqlite.lock import WriterLock
from ..store import remove_index_files
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


def remove_index(path: Path) -> None:
    """Delete an index file, its SQLite companions and its lock file,
    holding the index's writer lock meanwhile (LockTimeout when a process
    is writing it: then nothing is deleted)."""
    with WriterLock(path, timeout=0):
        remove_index_files(path)
        try:
            record_path(path).unlink()
        except OSError:
            pass
    try:
        Path(str(path) + ".lock").unlink()
    except OSError:
        pass  # another process took the lock meanwhile: it may keep its file
