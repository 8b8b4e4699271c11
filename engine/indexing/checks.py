"""Checks a MemoryIndex makes about its surroundings: where the index file
may live (whether the workspace is there: :mod:`..memory.workspace`;
whether another process is writing the index:
:func:`memext.engine.store.drivers.writer_lock_held`)."""

from __future__ import annotations

import os
from pathlib import Path

from ..errors import ConfigError
from ..memory.roots import MemoryRoots
from ..paths import AppPaths, private_dir
from ..settings import AgentConfig


def check_store_path(agent: AgentConfig, db_path: Path, config_file: str | Path | None = None) -> None:
    """Refuse an index path among the memory files.

    The index file is rewritten, and moved aside when it is unreadable:
    pointed at MEMORY.md it would take the notes with it.
    """
    real = Path(os.path.realpath(db_path))
    roots = MemoryRoots.of(agent.workspace, agent.extra_path_list())
    if real.suffix.lower() == ".md":
        why = "is a Markdown file"
    elif any(real.is_relative_to(d) for d in roots.recursive_dirs):
        why = "lies inside the agent's memory folders"
    else:
        return
    raise ConfigError(
        f"the index path {db_path} {why}; point it at a .sqlite file outside the memory (or remove it to use the default location)",
        key="memory_search.store.path",
        path=str(config_file) if config_file else None,
    )


def prepare_index_folder(db_path: Path, paths: AppPaths) -> None:
    """Keep memext's own index folder private: created 0700, and tightened
    (with one log line) when an older memext left it readable by others.
    A folder named by ``store.path`` is the user's: created 0700 when
    missing (by the store), left as it is otherwise."""
    try:
        if os.path.realpath(db_path.parent) != os.path.realpath(paths.index_dir):
            return
        private_dir(paths.state_dir)
        private_dir(paths.index_dir)
    except OSError:
        pass  # a read-only or missing place: opening the index says what is wrong
