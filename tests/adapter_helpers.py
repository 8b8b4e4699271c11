"""Shared by the adapter tests: a real index over the example memory,
embedded with the real all-MiniLM-L6-v2 GGUF."""

from __future__ import annotations

from pathlib import Path

from conftest import MODEL_PATH, make_agent

from memext.engine import MemoryIndex


def example_index(workspace: Path, tmp_path: Path) -> MemoryIndex:
    """The example workspace indexed with the local model (synced)."""
    agent = make_agent(
        workspace, "ex", db_path=tmp_path / "ex.sqlite", provider="local", local={"model_path": str(MODEL_PATH)}
    )
    idx = MemoryIndex(agent)
    report = idx.sync()
    assert report.files_indexed > 0
    return idx
