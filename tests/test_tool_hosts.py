"""engine/agents/hosts.py: the tools over a real Supervisor (KeptFresh): no
sync per call, a truthful `stale`, appends searchable on return."""

from __future__ import annotations

import time

import pytest
from memext_helpers import write_config

from memext.engine import MemextError, MemoryTools, Supervisor, ToolError
from memext.engine.plumbing import KeptFresh


def _search(tools: MemoryTools, query: str) -> dict:
    return tools.call_tool("memory_search", {"query": query})


def _last_sync(tools: MemoryTools) -> float | None:
    last = tools.index().status(check_files=False).last_sync
    return last.at if last else None


@pytest.fixture
def unwatched(workspace, tmp_path):
    """Tools over a supervisor that does not watch files (and has no
    interval): only a search that finds the index stale starts a sync."""
    config = write_config(tmp_path / "cfg", {"work": workspace}, extra="[memory_search.sync]\nwatch = false\n")
    with Supervisor(config) as sup, MemoryTools.kept_fresh(sup) as tools:
        yield sup, tools


def test_searches_do_not_sync_and_stale_is_truthful(unwatched, workspace):
    sup, tools = unwatched
    first = _search(tools, "green tea")  # waits for the first build
    assert first["stale"] is False and first["results"][0]["path"] == "MEMORY.md"
    synced_at = _last_sync(tools)
    for _ in range(5):
        assert _search(tools, "tea")["stale"] is False
    assert _last_sync(tools) == synced_at  # unchanged files: no sync at all

    (workspace / "memory" / "2026-01-07.md").write_text("- Bought oolong tea.\n", encoding="utf-8")
    stale = _search(tools, "oolong")
    # Answered at once from the index as it was, and it says so.
    assert stale["stale"] is True and stale["results"] == []
    assert "memory files changed since the index was last synced" in stale["notice"]
    # The search asked the keeper to catch up in the background.
    assert sup.keeper("work").wait_fresh(30)
    fresh = _search(tools, "oolong")
    assert fresh["stale"] is False and fresh["results"][0]["path"] == "memory/2026-01-07.md"


def test_an_append_is_searchable_on_return(unwatched, workspace):
    sup, tools = unwatched
    _search(tools, "tea")
    wrote = tools.call_tool("memory_append", {"text": "Carol joined the billing team.", "file": "MEMORY.md"})
    assert wrote["indexed"] is True and wrote["notice"] is None
    found = _search(tools, "Carol billing")
    assert found["stale"] is False and "Carol joined" in found["results"][0]["snippet"]


def test_a_watched_edit_is_found_without_a_search_syncing(workspace, tmp_path):
    config = write_config(tmp_path / "cfg", {"work": workspace}, extra="[memory_search.sync]\nwatch_debounce_ms = 100\n")
    with Supervisor(config) as sup, MemoryTools.kept_fresh(sup) as tools:
        assert _search(tools, "tea")["stale"] is False
        assert sup.keeper("work").snapshot().watch_mode in ("native", "polling")
        (workspace / "memory" / "2026-01-08.md").write_text("- Rented a kayak.\n", encoding="utf-8")
        deadline = time.monotonic() + 30
        while not sup.keeper("work").index.search("kayak").results:  # the index itself, not through the tools
            assert time.monotonic() < deadline, "the watcher did not sync the edit"
            time.sleep(0.05)
        found = _search(tools, "kayak")
        assert found["stale"] is False and found["results"][0]["path"] == "memory/2026-01-08.md"


def test_served_agents_and_closing(workspace, example_workspace, tmp_path):
    config = write_config(tmp_path / "cfg", {"work": workspace, "home": example_workspace})
    with Supervisor(config) as sup:
        with pytest.raises(MemextError, match="no agent 'play' is kept fresh here"):
            MemoryTools.kept_fresh(sup, ["play"])
        with MemoryTools.kept_fresh(sup, ["home"]) as tools:
            assert tools.agents == ("home",) and isinstance(tools.host, KeptFresh)
            assert _search(tools, "Biscuit")["results"]
            with pytest.raises(ToolError, match="this memory serves 'home'"):
                tools.call_tool("memory_search", {"query": "tea", "agent": "work"})
        # Closing the tools leaves the supervisor's indexes open and fresh.
        assert sup.keeper("home").index.search("Biscuit").results
        with MemoryTools.kept_fresh(sup) as both:
            assert both.agents == ("work", "home")
