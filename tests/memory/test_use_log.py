"""The use log (engine/memory/use_log.py, DESIGN.md §17): confident
results are logged beside the index, never in the workspace; weak answers
are not; the log stays bounded; a log that cannot be written never fails
a search; ``memory_search.use_log = false`` turns it off."""

from __future__ import annotations

from datetime import datetime, timedelta

from conftest import make_agent

from memext.engine import MemoryIndex
from memext.engine.memory import use_log
from memext.engine.memory.entries import strip_meta
from memext.engine.memory.use_log import Used, line_hash, log_path, read_uses, record_uses


def test_a_confident_search_logs_each_result_beside_the_index(workspace, tmp_path):
    db = tmp_path / "idx" / "i.sqlite"
    with MemoryIndex(make_agent(workspace, db_path=db), provider=None) as idx:
        idx.sync()
        at = datetime(2026, 3, 2, 10, 0)
        hits = idx.search("cache invalidation bug", now=at)
        assert hits.confident
        uses = read_uses(db, "test")
        assert [(u.path, u.line, u.at) for u in uses] == [(h.path, h.best_line, at.timestamp()) for h in hits if h.confident]
        line = (workspace / "memory" / "2026-01-05.md").read_text(encoding="utf-8").splitlines()[uses[0].line - 1]
        assert uses[0].hash == line_hash(strip_meta(line))
        assert uses[0].citation == hits[0].citation
        # Nothing was written into the workspace.
        assert not [p for p in workspace.rglob("*") if "use" in p.name]
        assert log_path(db).parent == db.parent

        # A weak answer (nothing confident) records nothing.
        before = log_path(db).read_bytes()
        assert not idx.search("zebra quantum", include_weak=True).confident
        assert log_path(db).read_bytes() == before


def test_the_log_can_be_turned_off(workspace, tmp_path):
    db = tmp_path / "i.sqlite"
    with MemoryIndex(make_agent(workspace, db_path=db, use_log=False), provider=None) as idx:
        idx.sync()
        assert idx.search("green tea").confident
    assert not log_path(db).exists()


def test_a_log_that_cannot_be_written_never_fails_a_search(workspace, tmp_path):
    db = tmp_path / "i.sqlite"
    with MemoryIndex(make_agent(workspace, db_path=db), provider=None) as idx:
        idx.sync()
        log_path(db).mkdir()  # a folder where the file should be: open() fails, as it does on a read-only folder
        response = idx.search("green tea")
        assert response.confident and response[0].path == "MEMORY.md"
        assert list(log_path(db).iterdir()) == []


def test_the_log_keeps_its_newest_half_past_its_limit(tmp_path, monkeypatch):
    db = tmp_path / "i.sqlite"
    monkeypatch.setattr(use_log, "MAX_BYTES", 4000)
    start = datetime(2026, 1, 1)
    for i in range(200):
        record_uses(db, "a", [Used(f"memory/x{i}.md", 1, 2, 1, "text")], now=(start + timedelta(minutes=i)).timestamp())
    size = log_path(db).stat().st_size
    assert size <= 4000
    uses = read_uses(db)
    assert uses[-1].path == "memory/x199.md"
    assert uses[0].path != "memory/x0.md" and len(uses) >= 20
    assert all(u.agent == "a" and u.line == 1 for u in uses)  # whole lines only
    assert read_uses(db, "other") == []


def test_unreadable_lines_are_skipped(tmp_path):
    db = tmp_path / "i.sqlite"
    log_path(db).write_text("garbage\n1\tagent\tMEMORY.md\tx\t2\t3\tab\n5\tagent\tMEMORY.md\t1\t2\t1\t\n", encoding="utf-8")
    assert read_uses(db) == [use_log.Use(5.0, "agent", "MEMORY.md", 1, 2, 1, "")]


def test_a_missing_folder_is_made_private(tmp_path):
    """An index on a server keeps its log in the app data folder, which may not exist yet."""
    db = tmp_path / "state" / "memory" / "i.sqlite"
    record_uses(db, "a", [Used("memory/2026-03-01.md", 3, 4, 3, "- a fact")], now=100)
    assert read_uses(db) == [use_log.Use(100.0, "a", "memory/2026-03-01.md", 3, 4, 3, line_hash("- a fact"))]
    assert db.parent.stat().st_mode & 0o077 == 0
    assert log_path(db).stat().st_mode & 0o777 == 0o600


def test_an_agents_tool_call_counts_too(workspace, tmp_path):
    """The log is written by MemoryIndex.search, so the faces built on it
    (here the memory_search tool behind the MCP server) count as the CLI does."""
    from memext.engine import MemoryTools

    db = tmp_path / "i.sqlite"
    agent = make_agent(workspace, db_path=db)
    with MemoryTools(lambda _id: MemoryIndex(agent, provider=None), ["test"]) as tools:
        found = tools.call_tool("memory_search", {"query": "cache invalidation bug"})
    assert found["results"] and [u.citation for u in read_uses(db, "test")] == [r["citation"] for r in found["results"]]


def test_recall_logs_the_memories_it_hands_on_not_the_pool_it_searched(workspace, tmp_path):
    db = tmp_path / "i.sqlite"
    with MemoryIndex(make_agent(workspace, db_path=db), provider=None) as idx:
        idx.sync()
        pool = idx.search("What does Anna do?", max_results=9, include_forgotten=True, log_use=False)
        assert not log_path(db).exists()  # log_use=False: nothing logged
        got = idx.recall("What does Anna do?", limit=1)
        assert len(got) == 1 and len(pool) > 1
        assert [(u.path, u.start_line, u.end_line) for u in read_uses(db, "test")] == [(r.path, r.start_line, r.end_line) for r in got]
