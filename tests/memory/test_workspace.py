"""A workspace out of reach is an error, never an empty memory
(engine/memory/workspace.py, DESIGN.md §1): searching it raises
WorkspaceMissing naming the folder, syncing it deletes nothing, and the
index keeps its rows until the folder is back. On both store backends.

Every way out of reach is caused for real: the folder renamed, replaced
by a file, reached through a path that now runs through a file, the
tmpfs it is (or its parent is) mounted on unmounted, and a folder of mode
000 read by a process without the capabilities that let root ignore file
modes (tests/fault_helpers.py)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from conftest import HashingProvider, backend_store, index_counts, make_agent
from fault_helpers import NO_FILE_MODE_OVERRIDE, OutOfReach

from memext.engine import MemoryIndex, WorkspaceMissing
from memext.engine.memory.workspace import check_workspace


def write_memory(ws: Path) -> None:
    (ws / "memory").mkdir(parents=True, exist_ok=True)
    (ws / "MEMORY.md").write_text("# Memory\n\n- The grey heron nests by the river.\n", encoding="utf-8")
    (ws / "memory" / "2026-01-05.md").write_text("# 2026-01-05\n\n- Counted seven herons at the weir.\n", encoding="utf-8")


@pytest.fixture(params=OutOfReach.KINDS)
def away(request, tmp_path):
    gone = OutOfReach(request.param, tmp_path, write_memory)
    yield gone
    gone.close()


def test_a_workspace_out_of_reach_is_an_error_and_keeps_its_rows(away, tmp_path):
    agent = make_agent(away.ws, db_path=tmp_path / "index" / "a.sqlite")
    with MemoryIndex(agent, provider=HashingProvider()) as idx:
        idx.sync()
        before = index_counts(agent)
        assert [r.path for r in idx.search("heron")] and before["files"] == 2
        away.take_away()
        for call in (lambda: idx.search("heron"), idx.sync, lambda: idx.get("MEMORY.md"), lambda: idx.append("- A kingfisher.")):
            with pytest.raises(WorkspaceMissing) as raised:
                call()
            assert str(away.ws) in str(raised.value) and raised.value.workspace == str(away.ws)
        # Nothing was written where the workspace was: a note on an unmounted
        # drive's mount point would be out of sight once the drive is back.
        assert not (away.ws / "memory").exists()
        assert index_counts(agent) == before
        status = idx.status()
        assert str(away.ws) in (status.last_error or "") and status.problems
    with MemoryIndex(agent, provider=HashingProvider()) as other:  # another process sees it too
        assert str(away.ws) in (other.status().last_error or "")
        assert not other.needs_sync()  # a sync could change nothing
    away.bring_back()
    with MemoryIndex(agent, provider=HashingProvider()) as idx:
        assert sorted(r.path for r in idx.search("heron")) == ["MEMORY.md", "memory/2026-01-05.md"]
        report = idx.sync()
        assert report.files_deleted == 0 and idx.status().last_error is None
    assert index_counts(agent) == before


def test_an_emptied_workspace_is_emptied_in_the_index_only_when_forced(tmp_path):
    """Removing every memory file on purpose is possible: ``force`` (``memext
    index --force``) takes the workspace as it is."""
    ws = tmp_path / "ws"
    write_memory(ws)
    agent = make_agent(ws, db_path=tmp_path / "a.sqlite")
    with MemoryIndex(agent, provider=HashingProvider()) as idx:
        idx.sync()
        shutil.rmtree(ws / "memory")
        (ws / "MEMORY.md").unlink()
        with pytest.raises(WorkspaceMissing, match="holds no memory .* while its index has 2 of its files"):
            idx.sync()
        assert index_counts(agent)["files"] == 2
        idx.sync(force=True)
        assert idx.status().total_files == 0
        assert idx.search("heron").results == []  # an empty memory now: nothing, and no error


def test_a_machine_without_the_workspace_never_deletes_the_shared_rows(tmp_path):
    """Two machines share one index (PostgreSQL, or a SQLite file on a
    shared disk), each with its own copy of the memory folder. The one
    whose copy is missing, or still empty, deletes nothing the other wrote."""
    here, there = tmp_path / "here" / "ws", tmp_path / "there" / "ws"
    write_memory(here)
    db = tmp_path / "shared.sqlite"
    with MemoryIndex(make_agent(here, db_path=db), provider=HashingProvider()) as idx:
        idx.sync()
    before = index_counts(make_agent(here, db_path=db))
    with MemoryIndex(make_agent(there, db_path=db), provider=HashingProvider()) as other:
        with pytest.raises(WorkspaceMissing, match="does not exist"):
            other.sync()
        there.mkdir(parents=True)  # the folder is there, its files not yet
        with pytest.raises(WorkspaceMissing, match="holds no memory"):
            other.sync()
    assert index_counts(make_agent(here, db_path=db)) == before
    with MemoryIndex(make_agent(here, db_path=db), provider=None) as idx:
        assert len(idx.search("heron").results) == 2


UNREADABLE_CHILD = textwrap.dedent(
    """
    import json, sys
    from pathlib import Path
    from memext.engine import MemoryIndex, WorkspaceMissing
    from memext.engine.config import parse_config

    raw, config_path = json.loads(sys.argv[1]), sys.argv[2]
    agent = parse_config(raw, path=Path(config_path)).agents[0]
    out = {}
    with MemoryIndex(agent, provider=None) as idx:
        for name, call in (("search", lambda: idx.search("heron")), ("sync", idx.sync), ("append", lambda: idx.append("- x"))):
            try:
                call()
                out[name] = "answered"
            except WorkspaceMissing as exc:
                out[name] = str(exc)
        out["status"] = idx.status().last_error
    print(json.dumps(out))
    """
)


@pytest.mark.parametrize("mode", ["workspace 000", "workspace 0311", "memory folder 000"])
def test_an_unreadable_workspace_is_an_error(tmp_path, mode):
    """chmod refuses root nothing; the child runs without the capabilities
    that let it ignore file modes, as any other user would."""
    ws = tmp_path / "ws"
    write_memory(ws)
    agent = make_agent(ws, db_path=tmp_path / "index" / "a.sqlite")
    with MemoryIndex(agent, provider=HashingProvider()) as idx:
        idx.sync()
    before = index_counts(agent)
    target, bits = (ws / "memory", 0o000) if mode.startswith("memory") else (ws, int(mode.split()[1], 8))
    ms = {"provider": "none", "store": {"path": str(tmp_path / "index" / "a.sqlite"), **backend_store()}}
    raw = {"agents": [{"id": agent.id, "workspace": str(ws), "memory_search": ms}]}
    target.chmod(bits)
    try:
        child = subprocess.run(
            [*NO_FILE_MODE_OVERRIDE, sys.executable, "-c", UNREADABLE_CHILD, json.dumps(raw), str(tmp_path / "c.toml")],
            capture_output=True,
            text=True,
            timeout=120,
        )
    finally:
        target.chmod(0o755)
    assert child.returncode == 0, child.stderr
    out = json.loads(child.stdout)
    for name in ("search", "sync", "append", "status"):
        assert f"workspace {ws} of agent {agent.id} cannot be read" in out[name] and "Permission denied" in out[name], (name, out)
    assert index_counts(agent) == before


@pytest.mark.sqlite_only
def test_the_check_reads_no_more_than_it_needs(tmp_path):
    """A healthy workspace passes with the index never asked; a link for
    MEMORY.md that leads nowhere is discovery's to report, not a reason to
    refuse the workspace."""
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    agent = make_agent(ws, db_path=tmp_path / "a.sqlite")
    check_workspace(agent, indexed=lambda: pytest.fail("asked the index about a workspace holding memory"))
    os.symlink(tmp_path / "nowhere", ws / "MEMORY.md")
    (ws / "memory").rmdir()
    check_workspace(agent, indexed=lambda: 0)
    with pytest.raises(WorkspaceMissing, match="holds no memory"):
        check_workspace(agent, indexed=lambda: 3)
