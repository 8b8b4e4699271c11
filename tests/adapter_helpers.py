"""Shared by the adapter tests: a real index over the example memory,
embedded with the real all-MiniLM-L6-v2 GGUF."""

from __future__ import annotations

import shutil
from pathlib import Path

from conftest import EXAMPLE_WORKSPACE, MODEL_PATH, make_agent

from memext.engine import MemoryIndex


def example_index(workspace: Path, tmp_path: Path) -> MemoryIndex:
    """``workspace`` (a copy of the example memory) indexed with the local model."""
    agent = make_agent(workspace, "ex", db_path=tmp_path / "ex.sqlite", provider="local", local={"model_path": str(MODEL_PATH)})
    idx = MemoryIndex(agent)
    report = idx.sync()
    assert report.files_indexed > 0
    return idx


def shared_example_index(tmp_path_factory) -> tuple[MemoryIndex, Path]:
    """An index over a fresh copy of the example memory, for a module's
    read-only tests (building it is the slow part)."""
    root = tmp_path_factory.mktemp("example-index")
    workspace = root / "workspace"
    shutil.copytree(EXAMPLE_WORKSPACE, workspace)
    return example_index(workspace, root), workspace
