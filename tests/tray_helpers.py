"""Helpers for the tray tests: config files, memory files, waiting with a deadline."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any, Callable, TypeVar

from memext.engine.config import load_config
from memext.engine.index import MemoryIndex

T = TypeVar("T")

#: Settings every tray test agent gets: keyword-only (no provider), no
#: sync from the tests' own searches (the daemon is the one syncing),
#: and a short debounce so tests run quickly.
BASE_SETTINGS: dict[str, Any] = {
    "provider": "none",
    "sync": {"on_search": False, "watch_debounce_ms": 300},
}


def toml_value(value: Any) -> str:
    """A TOML value; tables become inline tables (JSON strings, arrays and
    booleans are valid TOML)."""
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k} = {toml_value(v)}" for k, v in value.items()) + "}"
    return json.dumps(value, ensure_ascii=False)


def merge(base: dict, over: dict) -> dict:
    out = dict(base)
    for k, v in over.items():
        out[k] = merge(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
    return out


def write_config(path: Path, agents: dict[str, Path], *, index_dir: Path | None = None, **per_agent: dict) -> Path:
    """Write config.toml with ``agents`` (id -> workspace), atomically.

    Each agent gets BASE_SETTINGS, merged with ``per_agent[id]`` (settings
    under ``memory_search``). Indexes live in ``index_dir`` when given.
    """
    lines = []
    if index_dir is not None:
        lines += ["[memory_search.store]", f"path = {json.dumps(str(index_dir / '{agent_id}.sqlite'))}", ""]
    for agent_id, ws in agents.items():
        settings = merge(BASE_SETTINGS, per_agent.get(agent_id, {}))
        lines += [
            "[[agents]]",
            f"id = {json.dumps(agent_id)}",
            f"workspace = {json.dumps(str(ws))}",
            "[agents.memory_search]",
            *(f"{k} = {toml_value(v)}" for k, v in settings.items()),
            "",
        ]
    tmp = path.with_name(path.name + ".writing")
    tmp.write_text("\n".join(lines), encoding="utf-8")
    os.replace(tmp, path)
    return path


def make_workspace(root: Path, name: str, notes: dict[str, str] | None = None) -> Path:
    """A workspace with MEMORY.md and ``memory/`` files (relative path -> text)."""
    ws = root / name
    (ws / "memory").mkdir(parents=True, exist_ok=True)
    (ws / "MEMORY.md").write_text(f"# Memory of {name}\n\n- {name} likes tidy notes.\n", encoding="utf-8")
    for rel, text in (notes or {}).items():
        p = ws / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
    return ws


def wait_for(predicate: Callable[[], T], timeout: float = 20, interval: float = 0.05, what: str = "condition") -> T:
    """Poll ``predicate`` until it returns something truthy; fail after ``timeout`` s."""
    deadline = time.monotonic() + timeout
    last: Any = None
    while time.monotonic() < deadline:
        last = predicate()
        if last:
            return last
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout} s waiting for {what} (last value: {last!r})")


def search_paths(config_path: Path, agent_id: str, query: str, **kwargs) -> list[str]:
    """Paths of the hits for ``query`` in an agent's index, read as another
    process (the notebook, the CLI) would."""
    agent = load_config(config_path).agent(agent_id)
    with MemoryIndex(agent, provider=None) as idx:
        return [r.path for r in idx.search(query, min_score=0.0, **kwargs)]


def atomic_save(path: Path, text: str) -> None:
    """Save like an editor does: write a temp file beside it, rename over it."""
    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)
