"""Editing the config file (one ``memory_search`` key, removing an agent),
keeping the user's text.

The file is edited with ``tomlkit`` (comments, order and formatting stay),
validated with the real config parser before anything is written, and
replaced atomically, so a mistake never leaves a config that no longer
loads. ``engine.config.add_agent`` follows the same rule for new agents.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, Sequence

from .config import parse_config
from .errors import ConfigError, UnknownAgentError
from .paths import own_config_dir, private_dir, write_private_text

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib


def set_memory_search_value(config_path: Path, keys: Sequence[str], value: Any, *, agent_id: str | None = None) -> str:
    """Set ``memory_search.<keys>`` to ``value``; returns the dotted key written.

    Without ``agent_id`` the top-level ``[memory_search]`` defaults change
    (every agent inherits them unless it overrides the key); with one, that
    agent's ``[agents.memory_search]`` table. The file is created if needed.
    """
    try:
        import tomlkit
    except ImportError as exc:  # pragma: no cover - tomlkit comes with memext[local]
        raise ConfigError(f"editing the config needs tomlkit ({exc}); pip install 'memext[local]'") from exc

    config_path = Path(config_path)
    text = config_path.read_text(encoding="utf-8") if config_path.exists() else ""
    try:
        doc = tomlkit.parse(text)
    except Exception as exc:
        raise ConfigError(f"not valid TOML, not changed: {exc}", path=str(config_path)) from exc
    # Refuse to edit a file that does not load now: the user should see that error first.
    parse_config(tomllib.loads(text), path=config_path)

    table: Any = doc
    where = "memory_search"
    if agent_id is not None:
        table = _agent_table(doc, agent_id, config_path)
        where = f"agents[{agent_id}].memory_search"
    for key in ["memory_search", *keys[:-1]]:
        if key not in table:
            # A "super table" prints only its sub-tables' headers ([memory_search.local]).
            table[key] = tomlkit.table(True)
        table = table[key]
        if not hasattr(table, "__setitem__"):
            raise ConfigError(f"expected a table at {key!r}, not changed", key=where, path=str(config_path))
    table[keys[-1]] = value

    new_text = tomlkit.dumps(doc)
    parse_config(tomllib.loads(new_text), path=config_path)  # refuse to write something that won't load
    # config.toml may hold API keys: 0600, in a 0700 folder when that is
    # memext's own (a folder the user chose elsewhere is only created so).
    folder = config_path.parent
    private_dir(folder, tighten=folder.resolve() == own_config_dir().resolve())
    write_private_text(config_path, new_text)
    return ".".join([where, *keys])


def change_memory_search_list(
    config_path: Path, keys: Sequence[str], *, add: str | None = None, remove: str | None = None, agent_id: str | None = None
) -> tuple[str, list[str]]:
    """Add ``add`` to (or take ``remove`` from) the list ``memory_search.<keys>``
    as the file's table writes it (the defaults, or one agent's); returns the
    dotted key written and the new list."""
    config_path = Path(config_path)
    table: Any = tomllib.loads(config_path.read_text(encoding="utf-8")) if config_path.exists() else {}
    if agent_id is not None:
        table = next((a for a in table.get("agents", []) if a.get("id") == agent_id), {})
    for key in ["memory_search", *keys]:
        table = table.get(key, []) if isinstance(table, dict) else []
    current = [str(v) for v in table] if isinstance(table, list) else []
    new = [v for v in current if v != remove]
    if add is not None and add not in new:
        new.append(add)
    return set_memory_search_value(config_path, keys, new, agent_id=agent_id), new


def remove_agent(config_path: Path, agent_id: str) -> None:
    """Remove the ``[[agents]]`` entry ``agent_id`` from the config file,
    keeping the rest of its text; the agent's index is left alone."""
    try:
        import tomlkit
    except ImportError as exc:  # pragma: no cover - tomlkit comes with memext[local]
        raise ConfigError(f"editing the config needs tomlkit ({exc}); pip install 'memext[local]'") from exc

    config_path = Path(config_path)
    if not config_path.exists():
        raise UnknownAgentError(f"no config file {config_path}, so no agent {agent_id!r} to remove")
    text = config_path.read_text(encoding="utf-8")
    try:
        doc = tomlkit.parse(text)
    except Exception as exc:
        raise ConfigError(f"not valid TOML, not changed: {exc}", path=str(config_path)) from exc
    parse_config(tomllib.loads(text), path=config_path)
    agents = doc.get("agents")
    keep = [i for i, entry in enumerate(agents or []) if entry.get("id") != agent_id]
    if agents is None or len(keep) == len(agents):
        raise UnknownAgentError(f"no agent {agent_id!r} in {config_path}")
    if keep:
        for i in reversed(range(len(agents))):
            if i not in keep:
                del agents[i]
    else:
        del doc["agents"]
    new_text = tomlkit.dumps(doc)
    parse_config(tomllib.loads(new_text), path=config_path)  # refuse to write something that won't load
    write_private_text(config_path, new_text)


def _agent_table(doc: Any, agent_id: str, config_path: Path) -> Any:
    for entry in doc.get("agents", []):
        if entry.get("id") == agent_id:
            return entry
    raise UnknownAgentError(f"no agent {agent_id!r} in {config_path}; add it with `memext agents add`")
