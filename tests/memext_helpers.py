"""Helpers for the IPython-extension tests: config files and a real shell."""

from __future__ import annotations

import json
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from conftest import backend_store
from IPython.core.interactiveshell import InteractiveShell
from traitlets.config import Config


def write_config(folder: Path, agents: dict[str, Path], provider: str = "none", extra: str = "") -> Path:
    """A config.toml with ``agents`` (id -> workspace) whose indexes live in
    ``folder/index``; ``extra`` is appended TOML (more settings)."""
    folder.mkdir(parents=True, exist_ok=True)
    lines = [
        "[memory_search]",
        f"provider = {json.dumps(provider)}",
        "[memory_search.store]",
        f"path = {json.dumps(str(folder / 'index' / '{agent_id}.sqlite'))}",
        # The store backend of the test (tests/conftest.py store_backend).
        *(f"{key} = {json.dumps(value)}" for key, value in backend_store().items()),
    ]
    for agent_id, ws in agents.items():
        lines += ["", "[[agents]]", f"id = {json.dumps(agent_id)}", f"workspace = {json.dumps(str(ws))}"]
    path = folder / "config.toml"
    path.write_text("\n".join(lines) + "\n" + extra, encoding="utf-8")
    return path


@contextmanager
def ipython_shell() -> Iterator[InteractiveShell]:
    """A real InteractiveShell (no history file), cleared afterwards."""
    c = Config()
    c.HistoryAccessor.enabled = False
    shell = InteractiveShell.instance(config=c)
    try:
        yield shell
    finally:
        if "memext" in shell.extension_manager.loaded:
            shell.run_line_magic("unload_ext", "memext")
        InteractiveShell.clear_instance()


def display_html(shell: InteractiveShell, obj: object) -> str:
    """What a notebook would get as text/html for ``obj``."""
    data, _ = shell.display_formatter.format(obj)
    return data.get("text/html", "")


def install_kernelspec(data_dir: Path, name: str = "memext-test") -> str:
    """A kernelspec under a private Jupyter data dir that runs this
    interpreter (so the kernel imports this checkout's memext)."""
    spec_dir = data_dir / "kernels" / name
    spec_dir.mkdir(parents=True)
    spec = {
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "memext test",
        "language": "python",
    }
    (spec_dir / "kernel.json").write_text(json.dumps(spec), encoding="utf-8")
    return name
