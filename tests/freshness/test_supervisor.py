"""The supervisor without a display: a keeper per agent, watchers, errors,
config reload, pause/resume, interval and reconcile syncs, the writer lock.
(Moved from tests/tray/test_daemon.py with the scheduling it tests.)

Over 500 lines because each scheduling path (watchers, intervals,
reconcile, config reload, pause, the writer lock) is one scenario against a
real supervisor over real files; they share this file's fixtures."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from conftest import HashingProvider
from tray_helpers import atomic_save, make_workspace, search_paths, wait_for, write_config

from memext.engine import AgentConfig, KeeperSnapshot, KeeperState, MemoryIndex, Supervisor
from memext.engine.for_faces import ConfigReloader
from memext.engine.store.drivers import writer_lock


@pytest.fixture
def setup(tmp_path):
    """Two agents' workspaces and a config file naming both."""
    a = make_workspace(tmp_path, "alpha", {"memory/2026-01-01.md": "# Jan 1\n- Alpha planted tomatoes.\n"})
    b = make_workspace(tmp_path, "beta", {"memory/2026-01-02.md": "# Jan 2\n- Beta fixed the boiler.\n"})
    cfg = write_config(tmp_path / "config.toml", {"alpha": a, "beta": b})
    return cfg, a, b


def start_supervisor(cfg: Path, **kw) -> Supervisor:
    sup = Supervisor(cfg, config_poll_s=kw.pop("config_poll_s", 0.2), **kw)
    sup.start()
    return sup


def snap(sup: Supervisor, agent_id: str) -> KeeperSnapshot:
    return sup.keeper(agent_id).snapshot()


def ids(sup: Supervisor) -> list[str]:
    return [k.agent.id for k in sup.keepers()]


def overall(sup: Supervisor) -> KeeperState:
    """error > syncing > paused > idle, over every agent and the config."""
    states = {s.state for s in sup.snapshots()}
    if sup.config_error or KeeperState.ERROR in states:
        return KeeperState.ERROR
    for state in (KeeperState.SYNCING, KeeperState.PAUSED):
        if state in states:
            return state
    return KeeperState.IDLE


def settled(d: Supervisor, agent_id: str, *, min_syncs: int = 1) -> KeeperSnapshot:
    """The agent's snapshot once it has finished ``min_syncs`` syncs and is not syncing."""

    def check():
        a = snap(d, agent_id)
        return a if a.syncs >= min_syncs and a.state != KeeperState.SYNCING and not d.keeper(agent_id).busy() else None

    return wait_for(check, what=f"{agent_id} to settle after {min_syncs} sync(s)")


def test_start_indexes_every_agent_and_reports_state(setup):
    cfg, a, b = setup
    with start_supervisor(cfg) as d:
        for agent_id in ("alpha", "beta"):
            snap = settled(d, agent_id)
            assert snap.state == KeeperState.IDLE
            assert snap.files == 2 and snap.chunks >= 2
            assert snap.last_sync_at and snap.last_sync_at <= time.time()
            assert snap.last_sync_duration_s is not None
            assert snap.watch_mode == "native"
            assert snap.search_mode.kind == "keyword-only"
            assert snap.error is None
        assert overall(d) == KeeperState.IDLE
        assert ids(d) == ["alpha", "beta"]
    assert search_paths(cfg, "alpha", "tomatoes") == ["memory/2026-01-01.md"]
    assert search_paths(cfg, "beta", "boiler") == ["memory/2026-01-02.md"]


def test_an_edit_is_searchable_and_shown(setup):
    cfg, a, _ = setup
    with start_supervisor(cfg) as d:
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
    with start_supervisor(cfg) as d:
        before = settled(d, "alpha").syncs
        note = a / "memory" / "2026-01-01.md"
        for i in range(12):
            note.write_text(f"# Jan 1\n- Alpha planted tomatoes, save number {i}.\n")
        wait_for(lambda: snap(d, "alpha").syncs > before, what="the sync after the burst")
        time.sleep(1.5)  # past the debounce again: no second sync may follow
        assert snap(d, "alpha").syncs == before + 1
    assert search_paths(cfg, "alpha", "number 11")


def test_an_atomic_save_is_picked_up(setup):
    cfg, a, _ = setup
    with start_supervisor(cfg) as d:
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

    with start_supervisor(cfg, index_factory=factory, notifier=lambda t, m: notes.append((t, m))) as d:
        bad = settled(d, "alpha")
        assert bad.state == KeeperState.ERROR
        assert "model crashed" in bad.error
        assert overall(d) == KeeperState.ERROR
        assert notes and notes[0][0] == "memext: alpha" and "model crashed" in notes[0][1]
        # A rebuild needs the provider: it fails and keeps the old index.
        d.keeper("alpha").request("manual", force=True)
        bad = settled(d, "alpha", min_syncs=bad.syncs + 1)
        assert bad.state == KeeperState.ERROR and "previous index is kept" in bad.error
        assert search_paths(cfg, "alpha", "tomatoes")  # keyword side still there
        # The other agent keeps working.
        good = settled(d, "beta")
        assert good.state == KeeperState.IDLE and good.error is None
        (b / "memory" / "2026-01-05.md").write_text("- Beta bought a ladder.\n")
        wait_for(lambda: search_paths(cfg, "beta", "ladder"), what="beta to keep syncing")
        # When the provider is back, Sync now clears the error.
        failing.fail = False
        d.keeper("alpha").request("manual")
        wait_for(lambda: snap(d, "alpha").state == KeeperState.IDLE, what="alpha to recover")
        assert snap(d, "alpha").error is None
        wait_for(lambda: overall(d) == KeeperState.IDLE, what="all idle")
        assert len(notes) == 2  # one per distinct error, none for recovering


def test_an_index_that_cannot_open_is_that_agents_error(setup, tmp_path):
    cfg, a, b = setup
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the index folder should be")
    write_config(cfg, {"alpha": a, "beta": b}, alpha={"store": {"path": str(blocker / "alpha.sqlite")}})
    with start_supervisor(cfg) as d:
        bad = settled(d, "alpha")
        assert bad.state == KeeperState.ERROR and bad.error
        good = settled(d, "beta")
        assert good.state == KeeperState.IDLE and good.files == 2


def test_a_missing_workspace_is_reported(setup, tmp_path):
    cfg, a, b = setup
    write_config(cfg, {"alpha": a, "ghost": tmp_path / "nowhere"})
    with start_supervisor(cfg) as d:
        ghost = settled(d, "ghost")
        assert ghost.state == KeeperState.ERROR and "does not exist" in ghost.error
        assert settled(d, "alpha").state == KeeperState.IDLE


def test_config_edits_are_picked_up(setup, tmp_path):
    cfg, a, b = setup
    c = make_workspace(tmp_path, "gamma", {"memory/2026-01-09.md": "- Gamma learns the cello.\n"})
    write_config(cfg, {"alpha": a})
    with start_supervisor(cfg) as d:
        settled(d, "alpha")
        first_worker = d.keeper("alpha")
        # Added and removed.
        write_config(cfg, {"alpha": a, "gamma": c})
        wait_for(lambda: ids(d) == ["alpha", "gamma"], what="gamma to be added")
        assert settled(d, "gamma").files == 2
        assert d.keeper("alpha") is first_worker  # unchanged agents keep running
        write_config(cfg, {"gamma": c})
        wait_for(lambda: ids(d) == ["gamma"], what="alpha to be removed")
        assert not first_worker.watcher.running
        # Changed: the agent restarts with the new settings.
        gamma_worker = d.keeper("gamma")
        write_config(cfg, {"gamma": c}, gamma={"sync": {"watch": False}})
        wait_for(lambda: d.keeper("gamma") is not gamma_worker, what="gamma to restart")
        assert settled(d, "gamma").watch_mode == "off"
        # A broken config keeps the agents and says what is wrong.
        cfg.write_text(cfg.read_text() + "\n[[agents]]\nid = 'bad'\n")
        wait_for(lambda: d.config_error, what="the config error")
        assert "workspace" in d.config_error and str(cfg) in d.config_error
        assert ids(d) == ["gamma"] and overall(d) == KeeperState.ERROR
        write_config(cfg, {"gamma": c, "alpha": a})
        wait_for(lambda: d.config_error is None and len(d.keepers()) == 2, what="the fixed config")


def test_pause_and_resume(setup):
    cfg, a, _ = setup
    with start_supervisor(cfg) as d:
        settled(d, "alpha")
        settled(d, "beta")
        d.set_paused(True)
        assert d.paused and overall(d) == KeeperState.PAUSED
        assert {x.state for x in d.snapshots()} == {KeeperState.PAUSED}
        assert {x.watch_mode for x in d.snapshots()} == {"off"}
        (a / "memory" / "2026-01-07.md").write_text("- Alpha adopted a parrot.\n")
        time.sleep(1.0)  # well past the 300 ms debounce
        assert not search_paths(cfg, "alpha", "parrot")
        # Sync now still works while paused.
        syncs = snap(d, "beta").syncs
        d.keeper("beta").request("manual")
        settled(d, "beta", min_syncs=syncs + 1)
        assert snap(d, "beta").state == KeeperState.PAUSED
        # Resuming catches up with what changed meanwhile.
        d.set_paused(False)
        wait_for(lambda: search_paths(cfg, "alpha", "parrot"), what="the change made while paused")
        assert snap(d, "alpha").watch_mode == "native"
        wait_for(lambda: overall(d) == KeeperState.IDLE, what="all idle after resuming")


def test_interval_sync_without_watching(setup):
    cfg, a, _ = setup
    write_config(cfg, {"alpha": a}, alpha={"sync": {"watch": False, "interval_minutes": 0.01}})
    with start_supervisor(cfg) as d:
        assert settled(d, "alpha").watch_mode == "off"
        (a / "memory" / "2026-01-08.md").write_text("- Alpha sharpened the knives.\n")
        wait_for(lambda: search_paths(cfg, "alpha", "knives"), what="the interval sync")


def test_reconcile_scan_catches_what_watchers_missed(setup):
    cfg, a, _ = setup
    write_config(cfg, {"alpha": a}, alpha={"sync": {"watch": False}})
    with start_supervisor(cfg, reconcile_s=0.3) as d:
        first = settled(d, "alpha").syncs
        time.sleep(1.2)  # several reconcile scans over unchanged files
        assert snap(d, "alpha").syncs == first  # no sync without a change
        (a / "memory" / "2026-01-10.md").write_text("- Alpha found the spare key.\n")
        wait_for(lambda: search_paths(cfg, "alpha", "spare key"), what="the reconcile sync")


def test_a_dead_watcher_is_restarted_by_the_reconcile_scan(setup):
    cfg, a, _ = setup
    with start_supervisor(cfg, reconcile_s=0.3) as d:
        settled(d, "alpha")
        watcher = d.keeper("alpha").watcher
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
    with start_supervisor(cfg) as d:
        settled(d, "sess")
        assert search_paths(cfg, "sess", "kayaks", sources=["sessions"])  # new files are indexed
        syncs = snap(d, "sess").syncs
        say("then about zeppelins")
        settled(d, "sess", min_syncs=syncs + 1)  # the watcher synced, below the delta
        assert not search_paths(cfg, "sess", "zeppelins", sources=["sessions"])
        say("and tea")
        say("and biscuits")  # three new messages: past delta_messages
        wait_for(lambda: search_paths(cfg, "sess", "zeppelins", sources=["sessions"]), what="the transcript past its delta")


def test_syncs_wait_for_another_process_holding_the_writer_lock(setup):
    cfg, a, _ = setup
    write_config(cfg, {"alpha": a})
    with start_supervisor(cfg) as d:
        settled(d, "alpha")
        agent = d.keeper("alpha").agent
        with writer_lock(agent, agent.db_path(), timeout=5):  # as a notebook's sync would
            (a / "memory" / "2026-01-12.md").write_text("- Alpha waxed the skis.\n")
            wait_for(lambda: snap(d, "alpha").state == KeeperState.SYNCING, what="the waiting sync")
            waiting = wait_for(lambda: snap(d, "alpha").progress, what="the wait to show")
            assert waiting.startswith("waiting") and "another process" in waiting
            assert snap(d, "alpha").state == KeeperState.SYNCING
            assert not search_paths(cfg, "alpha", "skis")
        wait_for(lambda: search_paths(cfg, "alpha", "skis"), what="the sync after the lock is released")
        assert settled(d, "alpha").error is None


def test_stop_does_not_wait_for_another_process_holding_the_lock(setup):
    cfg, a, _ = setup
    write_config(cfg, {"alpha": a})
    d = start_supervisor(cfg)
    settled(d, "alpha")
    alpha = d.keeper("alpha").agent
    with writer_lock(alpha, alpha.db_path(), timeout=5):
        d.keeper("alpha").request("manual")
        wait_for(lambda: snap(d, "alpha").progress, what="the sync to wait for the lock")
        t0 = time.monotonic()
        d.stop()
        assert time.monotonic() - t0 < 5


def test_stop_is_prompt(setup):
    cfg, a, _ = setup
    d = start_supervisor(cfg)
    settled(d, "alpha")
    t0 = time.monotonic()
    d.stop()
    assert time.monotonic() - t0 < 10
    assert not d.running and all(not k.busy() for k in d.keepers())


@pytest.mark.model
def test_a_provider_that_cannot_start_is_the_agents_error(tmp_path, monkeypatch):
    """TEST DOUBLE: FAULT_ENV makes the local model's probe subprocess kill
    itself with SIGSEGV, standing in for llama.cpp crashing natively on a
    model (which cannot be caused on demand). Everything else is real: the
    config, the engine choosing the provider, the fallback to keyword-only."""
    from conftest import MODEL_PATH

    from memext.engine.paths import app_paths
    from memext.engine.providers.local.probe import FAULT_ENV, forget_probe

    monkeypatch.setenv(FAULT_ENV, "SIGSEGV")
    loc = make_workspace(tmp_path, "loc", {"memory/2026-02-01.md": "- Loc drinks green tea.\n"})
    nokey = make_workspace(tmp_path, "nokey")
    plain = make_workspace(tmp_path, "plain")
    cfg = write_config(
        tmp_path / "config.toml",
        {"loc": loc, "nokey": nokey, "plain": plain},
        loc={"provider": "local", "local": {"model_path": str(MODEL_PATH)}},
        nokey={"provider": "openai"},  # no OPENAI_API_KEY (conftest removes it)
        plain={"provider": "auto"},  # nothing to use: keyword-only by choice, not an error
    )
    notes: list[tuple[str, str]] = []
    with start_supervisor(cfg, notifier=lambda t, m: notes.append((t, m))) as d:
        bad = settled(d, "loc")
        assert bad.state == KeeperState.ERROR and bad.search_mode.kind == "keyword-only"
        assert "SIGSEGV" in bad.error and "keyword-only" in bad.error
        nk = settled(d, "nokey")
        assert nk.state == KeeperState.ERROR and "OPENAI_API_KEY" in nk.error
        ok = settled(d, "plain")
        assert ok.state == KeeperState.IDLE and ok.error is None and ok.search_mode.kind == "keyword-only"
        assert overall(d) == KeeperState.ERROR
        assert search_paths(cfg, "loc", "green tea")  # still searchable, by keywords
        # Notified once per agent, not at every sync: an edit and "Sync now"
        # (which tries the provider again: the crash verdict is remembered).
        (loc / "memory" / "2026-02-02.md").write_text("- Loc bought a kettle.\n")
        wait_for(lambda: search_paths(cfg, "loc", "kettle"), what="the edit, synced keyword-only")
        d.keeper("loc").request("manual")
        again = settled(d, "loc", min_syncs=bad.syncs + 2)
        assert again.state == KeeperState.ERROR and again.error == bad.error
        assert sorted(t for t, _ in notes) == ["memext: loc", "memext: nokey"]
        assert "SIGSEGV" in dict(notes)["memext: loc"]
        # Once the model works, "Sync now" brings semantic search back.
        monkeypatch.delenv(FAULT_ENV)
        forget_probe(MODEL_PATH, app_paths().models_dir)
        d.keeper("loc").request("manual")
        good = wait_for(
            lambda: (a := snap(d, "loc")).state == KeeperState.IDLE and a.syncs > again.syncs and a,
            timeout=120,
            what="the local model to be in force",
        )
        assert good.error is None and good.search_mode.kind == "hybrid"
        assert len(notes) == 2


def test_no_scheduler_spin_for_a_missing_workspace_a_disabled_agent_or_a_long_sync(setup, tmp_path):
    cfg, a, b = setup
    interval = {"sync": {"interval_minutes": 0.02, "watch": False}}  # every 1.2 s
    write_config(
        cfg,
        {"ghost": tmp_path / "nowhere", "off": a, "slow": b},
        ghost=interval,
        off={**interval, "enabled": False},
        slow=interval,
    )
    from memext.engine.config import load_config

    slow = load_config(cfg).agent("slow")
    slow_db = slow.db_path()
    slow_db.parent.mkdir(parents=True, exist_ok=True)
    d = Supervisor(cfg, config_poll_s=1.0)
    # "slow": another process's sync holds the index the whole time, so this
    # agent's sync runs far past its interval.
    with writer_lock(slow, slow_db, timeout=5):
        with d:
            wait_for(lambda: d.keeper("slow").busy(), what="slow's sync to wait for the lock")
            first = settled(d, "ghost")
            assert first.state == KeeperState.ERROR and "does not exist" in first.error
            ticks_before = d.ticks
            time.sleep(3.0)
            ghost = snap(d, "ghost")
            off = snap(d, "off")
            n_ticks = d.ticks - ticks_before
        # 3 s: about 3 config polls and 2-3 interval syncs of the ghost (at
        # 10 Hz it would be 30 ticks and as many syncs).
        assert ghost.syncs - first.syncs <= 3, ghost.syncs - first.syncs
        assert n_ticks <= 10, n_ticks
        assert off.syncs == 0 and off.state == KeeperState.IDLE  # disabled: never synced by a timer


def test_a_dead_watcher_is_restarted_within_seconds_then_polls_if_it_dies_again(setup):
    cfg, a, _ = setup
    with start_supervisor(cfg) as d:  # reconcile scan only every 300 s
        settled(d, "alpha")
        watcher = d.keeper("alpha").watcher
        dead = watcher._observer
        dead.stop()  # the observer thread dies without telling anyone
        dead.join(5)
        wait_for(lambda: watcher._observer is not dead and watcher.healthy(), timeout=5, what="the watcher to be restarted")
        assert snap(d, "alpha").watch_mode == "native"
        (a / "memory" / "2026-01-11.md").write_text("- Alpha oiled the hinges.\n")
        wait_for(lambda: search_paths(cfg, "alpha", "hinges"), what="a change after the restart")
        # Dying again soon after: native watching is unreliable here; poll.
        dead = watcher._observer
        dead.stop()
        dead.join(5)
        wait_for(lambda: snap(d, "alpha").watch_mode == "polling", timeout=5, what="polling")
        assert "again" in (watcher.fallback_reason or "")
        (a / "memory" / "2026-01-12.md").write_text("- Alpha swept the porch.\n")
        wait_for(lambda: search_paths(cfg, "alpha", "porch"), what="a change seen by polling")
        assert snap(d, "alpha").error is None


def test_a_watcher_that_cannot_start_is_tried_again(setup, monkeypatch):
    """TEST DOUBLES: observers whose start() fails, native as inotify does
    past its watch limit (ENOSPC) and polling as when the process is out of
    file descriptors (EMFILE). Exhausting the real limits would break every
    other process of this user (and the tests run as root, so an unreadable
    folder cannot make polling fail)."""
    import errno

    from watchdog.observers import Observer
    from watchdog.observers.polling import PollingObserver

    import memext.engine.freshness.watch as _watch_mod
    import memext.engine.freshness.watch_guard as _guard_mod

    broken = {"native": True, "polling": True}

    class LimitedObserver(Observer):
        def start(self):
            if broken["native"]:
                raise OSError(errno.ENOSPC, "inotify watch limit reached")
            super().start()

    class FailingPollingObserver(PollingObserver):
        def start(self):
            if broken["polling"]:
                raise OSError(errno.EMFILE, "Too many open files")
            super().start()

    monkeypatch.setattr(_watch_mod, "Observer", LimitedObserver)
    monkeypatch.setattr(_watch_mod, "PollingObserver", FailingPollingObserver)
    monkeypatch.setattr(_guard_mod, "WATCH_RETRY_S", 0.5)
    cfg, a, _ = setup
    write_config(cfg, {"alpha": a})
    with start_supervisor(cfg) as d:  # reconcile scan only every 300 s
        bad = settled(d, "alpha")
        assert bad.state == KeeperState.ERROR and bad.watch_mode == "off"
        assert "cannot watch" in bad.error and "Too many open files" in bad.error
        # Polling works again (the native limit is still reached): picked up
        # at the next retry, and the error goes.
        broken["polling"] = False
        wait_for(lambda: snap(d, "alpha").watch_mode == "polling", timeout=10, what="the retry")
        good = wait_for(lambda: (s := snap(d, "alpha")).state == KeeperState.IDLE and s, what="no error")
        assert good.error is None
        assert "watch limit" in (d.keeper("alpha").watcher.fallback_reason or "")
        (a / "memory" / "2026-01-13.md").write_text("- Alpha tuned the radio.\n")
        wait_for(lambda: search_paths(cfg, "alpha", "radio"), what="a change seen after the retry")


def test_a_watcher_that_cannot_start_is_tried_again_at_the_reconcile_scan(setup, monkeypatch):
    """TEST DOUBLE: a polling observer whose start() fails (EMFILE), as in
    the test above; native watching is off (--polling)."""
    import errno

    from watchdog.observers.polling import PollingObserver

    import memext.engine.freshness.watch as _watch_mod

    broken = {"polling": True}

    class FailingPollingObserver(PollingObserver):
        def start(self):
            if broken["polling"]:
                raise OSError(errno.EMFILE, "Too many open files")
            super().start()

    monkeypatch.setattr(_watch_mod, "PollingObserver", FailingPollingObserver)
    cfg, a, _ = setup
    write_config(cfg, {"alpha": a})
    with start_supervisor(cfg, polling=True, reconcile_s=0.5) as d:
        assert "cannot watch" in settled(d, "alpha").error
        broken["polling"] = False
        wait_for(lambda: snap(d, "alpha").watch_mode == "polling", timeout=10, what="the reconcile retry")
        wait_for(lambda: snap(d, "alpha").error is None, what="the error to clear")


def test_a_subset_of_agents_and_one_config_reloader(setup, tmp_path):
    cfg, a, b = setup
    with start_supervisor(cfg, agent_ids=["beta"]) as d:
        assert ids(d) == ["beta"] and settled(d, "beta").files == 2
        with pytest.raises(Exception, match="no agent 'alpha'.*known: beta"):
            d.keeper("alpha")
    r = ConfigReloader(cfg)
    assert r.changed() and [x.id for x in r.current().agents] == ["alpha", "beta"]
    first = r.current()
    assert not r.changed() and r.current() is first  # one stat, no reload
    write_config(cfg, {"beta": b})
    assert r.changed() and [x.id for x in r.current().agents] == ["beta"]
    cfg.write_text(cfg.read_text() + "\n[[agents]]\nid = 'bad'\n")
    for _ in range(2):  # a broken file raises until it is fixed
        with pytest.raises(Exception, match="workspace"):
            r.current()
    assert r.error and "workspace" in r.error
    write_config(cfg, {"alpha": a})
    assert [x.id for x in r.current().agents] == ["alpha"] and r.error is None


def test_listeners_hear_every_state_change(setup):
    cfg, a, _ = setup
    heard: list[float] = []
    d = Supervisor(cfg, agent_ids=["alpha"], config_poll_s=0.2)
    d.add_listener(lambda: heard.append(time.monotonic()))
    with d:
        settled(d, "alpha")
        assert heard  # the config load, syncing, idle
        before = len(heard)
        d.set_paused(True)
        assert len(heard) > before
