"""The tray daemon without a display: per-agent workers, watchers, errors,
config reload, pause/resume, interval and reconcile syncs, the writer lock."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from tray_helpers import atomic_save, make_workspace, search_paths, wait_for, write_config

from conftest import HashingProvider
from engine.config import AgentConfig
from engine.index import MemoryIndex
from engine.lock import WriterLock
from tray.daemon import AgentState, DaemonOptions, SyncRequest, TrayDaemon


@pytest.fixture
def setup(tmp_path):
    """Two agents' workspaces and a config file naming both."""
    a = make_workspace(tmp_path, "alpha", {"memory/2026-01-01.md": "# Jan 1\n- Alpha planted tomatoes.\n"})
    b = make_workspace(tmp_path, "beta", {"memory/2026-01-02.md": "# Jan 2\n- Beta fixed the boiler.\n"})
    cfg = write_config(tmp_path / "config.toml", {"alpha": a, "beta": b})
    return cfg, a, b


def start_daemon(cfg: Path, **kw) -> TrayDaemon:
    factory = kw.pop("index_factory", None)
    notifier = kw.pop("notifier", None)
    opts = DaemonOptions(config_path=cfg, config_poll_s=0.2, **kw)
    d = TrayDaemon(opts, notifier=notifier, **({"index_factory": factory} if factory else {}))
    d.start()
    return d


def settled(d: TrayDaemon, agent_id: str, *, min_syncs: int = 1):
    """The agent's snapshot once it has finished ``min_syncs`` syncs and is not syncing."""

    def check():
        a = d.snapshot().agent(agent_id)
        return a if a.syncs >= min_syncs and a.state != AgentState.SYNCING and not d._worker(agent_id).busy() else None

    return wait_for(check, what=f"{agent_id} to settle after {min_syncs} sync(s)")


def test_start_indexes_every_agent_and_reports_state(setup):
    cfg, a, b = setup
    with start_daemon(cfg) as d:
        for agent_id in ("alpha", "beta"):
            snap = settled(d, agent_id)
            assert snap.state == AgentState.IDLE
            assert snap.files == 2 and snap.chunks >= 2
            assert snap.last_sync_at and snap.last_sync_at <= time.time()
            assert snap.last_sync_duration_s is not None
            assert snap.watch_mode == "native"
            assert snap.search_mode == "keyword-only"
            assert snap.error is None
        assert d.snapshot().overall == AgentState.IDLE
        assert [x.id for x in d.snapshot().agents] == ["alpha", "beta"]
    assert search_paths(cfg, "alpha", "tomatoes") == ["memory/2026-01-01.md"]
    assert search_paths(cfg, "beta", "boiler") == ["memory/2026-01-02.md"]


def test_an_edit_is_searchable_and_shown(setup):
    cfg, a, _ = setup
    with start_daemon(cfg) as d:
        before = settled(d, "alpha")
        time.sleep(0.01)
        (a / "memory" / "2026-01-03.md").write_text("# Jan 3\n- Alpha repainted the greenhouse.\n")
        wait_for(lambda: search_paths(cfg, "alpha", "greenhouse"), what="the new note to be searchable")
        after = settled(d, "alpha", min_syncs=before.syncs + 1)
        assert after.files == 3
        assert after.last_sync_at > before.last_sync_at


def test_a_burst_of_saves_is_one_sync(setup, tmp_path):
    cfg, a, b = setup
    write_config(cfg, {"alpha": a}, alpha={"sync": {"watch_debounce_ms": 1000}})
    with start_daemon(cfg) as d:
        before = settled(d, "alpha").syncs
        note = a / "memory" / "2026-01-01.md"
        for i in range(12):
            note.write_text(f"# Jan 1\n- Alpha planted tomatoes, save number {i}.\n")
        wait_for(lambda: d.snapshot().agent("alpha").syncs > before, what="the sync after the burst")
        time.sleep(1.5)  # past the debounce again: no second sync may follow
        assert d.snapshot().agent("alpha").syncs == before + 1
    assert search_paths(cfg, "alpha", "number 11")


def test_an_atomic_save_is_picked_up(setup):
    cfg, a, _ = setup
    with start_daemon(cfg) as d:
        settled(d, "alpha")
        atomic_save(a / "MEMORY.md", "# Memory of alpha\n\n- Alpha switched to decaf.\n")
        wait_for(lambda: search_paths(cfg, "alpha", "decaf"), what="the atomically saved text")
        assert not search_paths(cfg, "alpha", "tidy")  # the old text is gone


class FailingProvider(HashingProvider):
    """TEST DOUBLE: an embedding provider whose every call raises, standing in
    for a provider that is down or a local model that crashes natively (a
    real native crash would take the test process with it)."""

    def __init__(self):
        super().__init__()
        self.fail = True

    def embed_batch(self, texts, progress=None):
        if self.fail:
            raise RuntimeError("model crashed: illegal instruction")
        return super().embed_batch(texts, progress)


def test_a_failing_agent_does_not_stop_the_others(setup):
    cfg, a, b = setup
    failing = FailingProvider()
    notes: list[tuple[str, str]] = []

    def factory(agent: AgentConfig) -> MemoryIndex:
        return MemoryIndex(agent, provider=failing if agent.id == "alpha" else None)

    with start_daemon(cfg, index_factory=factory, notifier=lambda t, m: notes.append((t, m))) as d:
        bad = settled(d, "alpha")
        assert bad.state == AgentState.ERROR
        assert "model crashed" in bad.error
        assert d.snapshot().overall == AgentState.ERROR
        assert notes and notes[0][0] == "memext: alpha" and "model crashed" in notes[0][1]
        # A rebuild needs the provider: it fails and keeps the old index.
        d.rebuild("alpha")
        bad = settled(d, "alpha", min_syncs=bad.syncs + 1)
        assert bad.state == AgentState.ERROR and "previous index is kept" in bad.error
        assert search_paths(cfg, "alpha", "tomatoes")  # keyword side still there
        # The other agent keeps working.
        good = settled(d, "beta")
        assert good.state == AgentState.IDLE and good.error is None
        (b / "memory" / "2026-01-05.md").write_text("- Beta bought a ladder.\n")
        wait_for(lambda: search_paths(cfg, "beta", "ladder"), what="beta to keep syncing")
        # When the provider is back, Sync now clears the error.
        failing.fail = False
        d.sync_now("alpha")
        wait_for(lambda: d.snapshot().agent("alpha").state == AgentState.IDLE, what="alpha to recover")
        assert d.snapshot().agent("alpha").error is None
        wait_for(lambda: d.snapshot().overall == AgentState.IDLE, what="all idle")
        assert len(notes) == 2  # one per distinct error, none for recovering


def test_an_index_that_cannot_open_is_that_agents_error(setup, tmp_path):
    cfg, a, b = setup
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the index folder should be")
    write_config(cfg, {"alpha": a, "beta": b}, alpha={"store": {"path": str(blocker / "alpha.sqlite")}})
    with start_daemon(cfg) as d:
        bad = settled(d, "alpha")
        assert bad.state == AgentState.ERROR and bad.error
        good = settled(d, "beta")
        assert good.state == AgentState.IDLE and good.files == 2


def test_a_missing_workspace_is_reported(setup, tmp_path):
    cfg, a, b = setup
    write_config(cfg, {"alpha": a, "ghost": tmp_path / "nowhere"})
    with start_daemon(cfg) as d:
        ghost = settled(d, "ghost")
        assert ghost.state == AgentState.ERROR and "does not exist" in ghost.error
        assert settled(d, "alpha").state == AgentState.IDLE


def test_config_edits_are_picked_up(setup, tmp_path):
    cfg, a, b = setup
    c = make_workspace(tmp_path, "gamma", {"memory/2026-01-09.md": "- Gamma learns the cello.\n"})
    write_config(cfg, {"alpha": a})
    with start_daemon(cfg) as d:
        settled(d, "alpha")
        first_worker = d._worker("alpha")
        # Added and removed.
        write_config(cfg, {"alpha": a, "gamma": c})
        wait_for(lambda: [x.id for x in d.snapshot().agents] == ["alpha", "gamma"], what="gamma to be added")
        assert settled(d, "gamma").files == 2
        assert d._worker("alpha") is first_worker  # unchanged agents keep running
        write_config(cfg, {"gamma": c})
        wait_for(lambda: [x.id for x in d.snapshot().agents] == ["gamma"], what="alpha to be removed")
        assert not first_worker.watcher.running
        # Changed: the agent restarts with the new settings.
        gamma_worker = d._worker("gamma")
        write_config(cfg, {"gamma": c}, gamma={"sync": {"watch": False}})
        wait_for(lambda: d._worker("gamma") is not gamma_worker, what="gamma to restart")
        assert settled(d, "gamma").watch_mode == "off"
        # A broken config keeps the agents and says what is wrong.
        cfg.write_text(cfg.read_text() + "\n[[agents]]\nid = 'bad'\n")
        wait_for(lambda: d.snapshot().config_error, what="the config error")
        snap = d.snapshot()
        assert "workspace" in snap.config_error and str(cfg) in snap.config_error
        assert [x.id for x in snap.agents] == ["gamma"] and snap.overall == AgentState.ERROR
        write_config(cfg, {"gamma": c, "alpha": a})
        wait_for(lambda: d.snapshot().config_error is None and len(d.snapshot().agents) == 2, what="the fixed config")


def test_pause_and_resume(setup):
    cfg, a, _ = setup
    with start_daemon(cfg) as d:
        settled(d, "alpha")
        settled(d, "beta")
        d.set_paused(True)
        snap = d.snapshot()
        assert snap.paused and snap.overall == AgentState.PAUSED
        assert {x.state for x in snap.agents} == {AgentState.PAUSED}
        assert {x.watch_mode for x in snap.agents} == {"off"}
        (a / "memory" / "2026-01-07.md").write_text("- Alpha adopted a parrot.\n")
        time.sleep(1.0)  # well past the 300 ms debounce
        assert not search_paths(cfg, "alpha", "parrot")
        # Sync now still works while paused.
        syncs = d.snapshot().agent("beta").syncs
        d.sync_now("beta")
        settled(d, "beta", min_syncs=syncs + 1)
        assert d.snapshot().agent("beta").state == AgentState.PAUSED
        # Resuming catches up with what changed meanwhile.
        d.set_paused(False)
        wait_for(lambda: search_paths(cfg, "alpha", "parrot"), what="the change made while paused")
        assert d.snapshot().agent("alpha").watch_mode == "native"
        wait_for(lambda: d.snapshot().overall == AgentState.IDLE, what="all idle after resuming")


def test_interval_sync_without_watching(setup):
    cfg, a, _ = setup
    write_config(cfg, {"alpha": a}, alpha={"sync": {"watch": False, "interval_minutes": 0.01}})
    with start_daemon(cfg) as d:
        assert settled(d, "alpha").watch_mode == "off"
        (a / "memory" / "2026-01-08.md").write_text("- Alpha sharpened the knives.\n")
        wait_for(lambda: search_paths(cfg, "alpha", "knives"), what="the interval sync")


def test_reconcile_scan_catches_what_watchers_missed(setup):
    cfg, a, _ = setup
    write_config(cfg, {"alpha": a}, alpha={"sync": {"watch": False}})
    with start_daemon(cfg, reconcile_s=0.3) as d:
        first = settled(d, "alpha").syncs
        time.sleep(1.2)  # several reconcile scans over unchanged files
        assert d.snapshot().agent("alpha").syncs == first  # no sync without a change
        (a / "memory" / "2026-01-10.md").write_text("- Alpha found the spare key.\n")
        wait_for(lambda: search_paths(cfg, "alpha", "spare key"), what="the reconcile sync")


def test_a_dead_watcher_is_restarted_by_the_reconcile_scan(setup):
    cfg, a, _ = setup
    with start_daemon(cfg, reconcile_s=0.3) as d:
        settled(d, "alpha")
        watcher = d._worker("alpha").watcher
        watcher._observer.stop()
        watcher._observer.join(5)
        wait_for(watcher.healthy, what="the watcher to be restarted")
        (a / "memory" / "2026-01-11.md").write_text("- Alpha oiled the hinges.\n")
        wait_for(lambda: search_paths(cfg, "alpha", "hinges"), what="a change after the restart")


def test_session_transcripts_sync_past_their_delta(tmp_path):
    ws = make_workspace(tmp_path, "sess")
    (ws / "sessions").mkdir()
    cfg = write_config(
        tmp_path / "config.toml",
        {"sess": ws},
        sess={
            "sources": ["memory", "sessions"],
            "experimental": {"session_memory": True},
            "sync": {"sessions": {"delta_bytes": 1_000_000, "delta_messages": 3}},
        },
    )
    log = ws / "sessions" / "chat.jsonl"

    def say(text: str) -> None:
        with open(log, "a", encoding="utf-8") as f:
            f.write(json.dumps({"type": "message", "message": {"role": "user", "content": text}}) + "\n")

    say("first we talked about kayaks")
    with start_daemon(cfg) as d:
        settled(d, "sess")
        assert search_paths(cfg, "sess", "kayaks", sources=["sessions"])  # new files are indexed
        syncs = d.snapshot().agent("sess").syncs
        say("then about zeppelins")
        settled(d, "sess", min_syncs=syncs + 1)  # the watcher synced, below the delta
        assert not search_paths(cfg, "sess", "zeppelins", sources=["sessions"])
        say("and tea")
        say("and biscuits")  # three new messages: past delta_messages
        wait_for(lambda: search_paths(cfg, "sess", "zeppelins", sources=["sessions"]), what="the transcript past its delta")


def test_syncs_wait_for_another_process_holding_the_writer_lock(setup):
    cfg, a, _ = setup
    write_config(cfg, {"alpha": a})
    with start_daemon(cfg) as d:
        settled(d, "alpha")
        agent = d._worker("alpha").agent
        with WriterLock(agent.db_path(), timeout=5):  # as a notebook's sync would
            (a / "memory" / "2026-01-12.md").write_text("- Alpha waxed the skis.\n")
            wait_for(lambda: d.snapshot().agent("alpha").state == AgentState.SYNCING, what="the waiting sync")
            waiting = wait_for(lambda: d.snapshot().agent("alpha").progress, what="the wait to show")
            assert waiting.startswith("waiting") and "another process" in waiting
            assert d.snapshot().agent("alpha").state == AgentState.SYNCING
            assert not search_paths(cfg, "alpha", "skis")
        wait_for(lambda: search_paths(cfg, "alpha", "skis"), what="the sync after the lock is released")
        assert settled(d, "alpha").error is None


def test_stop_does_not_wait_for_another_process_holding_the_lock(setup):
    cfg, a, _ = setup
    write_config(cfg, {"alpha": a})
    d = start_daemon(cfg)
    settled(d, "alpha")
    with WriterLock(d._worker("alpha").agent.db_path(), timeout=5):
        d.sync_now("alpha")
        wait_for(lambda: d.snapshot().agent("alpha").progress, what="the sync to wait for the lock")
        t0 = time.monotonic()
        d.stop()
        assert time.monotonic() - t0 < 5


def test_requests_merge_and_stop_is_prompt(setup):
    assert SyncRequest("watch").merge(SyncRequest("manual")) == SyncRequest("manual")
    assert SyncRequest("reconcile", if_changed=True).merge(SyncRequest("interval")) == SyncRequest("interval")
    assert SyncRequest("watch").merge(SyncRequest("watch", force=True)).force
    cfg, a, _ = setup
    d = start_daemon(cfg)
    settled(d, "alpha")
    t0 = time.monotonic()
    d.stop()
    assert time.monotonic() - t0 < 10
    assert all(not w.is_alive() for w in [d._scheduler])
