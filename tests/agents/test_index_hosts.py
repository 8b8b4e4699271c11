"""engine/agents/index_hosts.py: the tools over a real Supervisor (KeptFresh): no
sync per call, a truthful `stale`, appends searchable on return; and
SyncWhenNeeded, the one sync-before-search policy of an agent loop and of
`memext search`."""

from __future__ import annotations

import time

import pytest
from memext_helpers import write_config

from memext.engine import MemextError, MemoryTools, Supervisor, ToolError, load_config
from memext.engine.for_faces import KeptFresh, SyncWhenNeeded


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
    assert first["stale"] is False and first["results"][0]["citation"].startswith("MEMORY.md:")
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
    assert fresh["stale"] is False and fresh["results"][0]["citation"].startswith("memory/2026-01-07.md:")


def test_an_append_is_searchable_on_return(unwatched, workspace):
    sup, tools = unwatched
    _search(tools, "tea")
    wrote = tools.call_tool("memory_append", {"text": "Carol joined the billing team.", "file": "MEMORY.md"})
    assert wrote["indexed"] is True and "notice" not in wrote
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
        assert found["stale"] is False and found["results"][0]["citation"].startswith("memory/2026-01-08.md:")


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


def _cli_search(config, *args: str):
    """``memext search`` in this process (the engine's command group)."""
    from click.testing import CliRunner

    from memext.engine.faces.cli.commands import cli

    return CliRunner().invoke(cli, ["--config", str(config), "search", *args], catch_exceptions=False)


def test_the_cli_and_an_agent_loop_sync_before_a_search_by_one_policy(workspace, tmp_path):
    """`memext search` and SyncWhenNeeded (an agent loop's tools) are one
    policy: a stale index is synced first, --no-sync skips it, a sync that
    cannot take the writer lock answers from the index as it is with the
    same notice."""
    from memext.engine.store.drivers import writer_lock

    config = write_config(tmp_path / "cfg", {"work": workspace})
    with MemoryTools.from_config(load_config(config)) as tools:
        assert isinstance(tools.host, SyncWhenNeeded)
        assert _search(tools, "green tea")["results"][0]["citation"].startswith("MEMORY.md:")  # the first search builds it
        (workspace / "memory" / "2026-01-07.md").write_text("- Bought oolong tea.\n", encoding="utf-8")
        stale = _cli_search(config, "oolong", "--no-sync")
        assert stale.exit_code == 1 and stale.stdout.strip() == "no memory matches 'oolong'"
        assert tools.index().needs_sync()  # --no-sync left it stale
        found = _cli_search(config, "oolong")
        assert found.exit_code == 0 and "memory/2026-01-07.md:1" in found.stdout
        assert not tools.index().needs_sync()  # the one-shot search synced it

        (workspace / "memory" / "2026-01-08.md").write_text("- Rented a kayak.\n", encoding="utf-8")
        index = tools.index()
        with writer_lock(index.agent, index.db_path, timeout=1):  # another process's sync (the tray's, say)
            by_cli = _cli_search(config, "kayak")
            by_tool = _search(tools, "kayak")
    assert by_cli.exit_code == 1 and by_tool["stale"] is True and by_tool["results"] == []
    # Both say the policy's notice first; the tool joins the search's own
    # (keyword-only, nothing matches) to it, which the CLI says elsewhere.
    notes = [line.removeprefix("note: ") for line in by_cli.stderr.splitlines() if line.startswith("note: ")]
    assert notes[0].startswith("another process is syncing this index") and by_tool["notice"].startswith(notes[0])
    assert "no memory matches 'kayak'" in by_cli.stdout and "no memory matches 'kayak'" in by_tool["notice"]


def test_sync_on_search_off_holds_for_the_cli_and_the_tools_alike(workspace, tmp_path):
    config = write_config(tmp_path / "cfg", {"work": workspace}, extra="[memory_search.sync]\non_search = false\n")
    assert "MEMORY.md" in _cli_search(config, "green tea").stdout  # an index never built is built
    (workspace / "memory" / "2026-01-07.md").write_text("- Bought oolong tea.\n", encoding="utf-8")
    assert _cli_search(config, "oolong").stdout.strip() == "no memory matches 'oolong'"
    with MemoryTools.from_config(load_config(config)) as tools:
        assert _search(tools, "oolong")["results"] == [] and tools.index().needs_sync()


def test_a_running_keepers_word_spares_the_one_shot_walk(workspace, tmp_path, monkeypatch, store_backend):
    """While a keeper watches the agent (the tray, `memext mcp`) and says its
    index is fresh, `memext search` does not walk the files; an edit the
    keeper has seen, or a keeper that stopped, sends the search back to
    walking them. A PostgreSQL index is shared by machines whose files no
    keeper here watches: its word is never taken."""
    from memext.engine import index as index_module
    from memext.engine.indexing.freshness_record import vouches

    walks: list[str] = []
    real = index_module.index_changes
    monkeypatch.setattr(index_module, "index_changes", lambda agent, store: walks.append(agent.id) or real(agent, store))
    config = write_config(tmp_path / "cfg", {"work": workspace}, extra="[memory_search.sync]\nwatch_debounce_ms = 100\n")

    def wait_until(condition, what: str) -> None:
        deadline = time.monotonic() + 30
        while not condition():
            assert time.monotonic() < deadline, what
            time.sleep(0.05)

    with Supervisor(config) as sup:
        keeper = sup.keeper("work")
        if store_backend == "postgres":
            assert keeper.wait_fresh(30) and not vouches(keeper.agent, keeper.index.db_path)
            walks.clear()
            assert "MEMORY.md" in _cli_search(config, "green tea").stdout and walks == ["work"]
            return
        if keeper.snapshot().watch_mode != "native":
            pytest.fail("this machine's watchdog has no native file events: the keeper never vouches")
        wait_until(lambda: vouches(keeper.agent, keeper.index.db_path), "the keeper's word that the index is fresh")
        walks.clear()
        assert "MEMORY.md" in _cli_search(config, "green tea").stdout
        assert walks == []  # answered on the keeper's word

        (workspace / "memory" / "2026-01-08.md").write_text("- Rented a kayak.\n", encoding="utf-8")
        wait_until(lambda: not vouches(keeper.agent, keeper.index.db_path) or walks, "the record to turn dirty")
        found = _cli_search(config, "kayak")
        assert "memory/2026-01-08.md:1" in found.stdout  # synced by the search or already by the keeper
    walks.clear()
    assert "MEMORY.md" in _cli_search(config, "green tea").stdout
    assert walks == ["work"]  # a stopped keeper's word is not taken
