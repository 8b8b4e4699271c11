"""The freshness keeper of one agent: request merging, debounced watching,
wait_fresh, before_search, listeners, the provider problem as an error, and
interval-only syncing when watchdog is missing. Real files, real SQLite,
real watchdog; another process's sync is the real writer lock held here."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from conftest import make_agent
from fault_helpers import OutOfReach
from tray_helpers import make_workspace, wait_for

from memext.engine import FreshnessKeeper, KeeperSnapshot, KeeperState, MemoryIndex, SyncRequest
from memext.engine.store.drivers import writer_lock


def agent_for(tmp_path: Path, ws: Path, **settings):
    settings.setdefault("provider", "none")
    sync = {"watch_debounce_ms": 300, **settings.pop("sync", {})}
    return make_agent(ws, "k", db_path=tmp_path / "index" / "k.sqlite", sync=sync, **settings)


@pytest.fixture
def ws(tmp_path) -> Path:
    return make_workspace(tmp_path, "ws", {"memory/2026-01-01.md": "# Jan 1\n- We planted tomatoes.\n"})


def paths(keeper: FreshnessKeeper, query: str) -> list[str]:
    return [r.path for r in keeper.index.search(query, min_score=0.0)]


def settle(keeper: FreshnessKeeper, syncs: int) -> KeeperSnapshot:
    return wait_for(lambda: (s := keeper.snapshot()).syncs >= syncs and not keeper.busy() and s, what=f"{syncs} sync(s) to finish")


def test_requests_merge_by_priority():
    assert SyncRequest("watch").merge(SyncRequest("manual")) == SyncRequest("manual")
    assert SyncRequest("reconcile", if_changed=True).merge(SyncRequest("interval")) == SyncRequest("interval")
    assert SyncRequest("watch").merge(SyncRequest("watch", force=True)).force
    assert SyncRequest("note").merge(SyncRequest("watch")).reason == "note"
    assert SyncRequest("reconcile", if_changed=True).merge(SyncRequest("resume", if_changed=True)).if_changed


def test_requests_during_a_sync_merge_into_one_follow_up(tmp_path, ws):
    agent = agent_for(tmp_path, ws, sync={"watch": False})
    with FreshnessKeeper(agent) as keeper:
        settle(keeper, 1)
        with writer_lock(agent, agent.db_path(), timeout=5):  # another process is syncing
            keeper.request("manual")
            wait_for(lambda: keeper.snapshot().progress, what="the sync to wait for the lock")
            (ws / "memory" / "2026-01-02.md").write_text("- We bought a ladder.\n")
            for reason in ("watch", "note", "interval", "watch"):
                keeper.request(reason)
        assert keeper.wait_fresh(20)
        assert keeper.snapshot().syncs == 3  # startup, the waiting one, ONE follow-up
        assert paths(keeper, "ladder") == ["memory/2026-01-02.md"]


def test_a_burst_of_saves_is_one_debounced_sync(tmp_path, ws):
    agent = agent_for(tmp_path, ws, sync={"watch_debounce_ms": 500})
    with FreshnessKeeper(agent) as keeper:
        first = settle(keeper, 1)
        assert first.watch_mode == "native"
        note = ws / "memory" / "2026-01-01.md"
        for i in range(10):
            note.write_text(f"# Jan 1\n- We planted tomatoes, save {i}.\n")
            time.sleep(0.02)
        wait_for(lambda: keeper.snapshot().syncs > first.syncs, what="the sync after the burst")
        time.sleep(1.2)  # past the debounce again: no second sync may follow
        assert keeper.snapshot().syncs == first.syncs + 1
        assert paths(keeper, "save 9")


def test_wait_fresh_covers_every_request_made_before_it(tmp_path, ws):
    agent = agent_for(tmp_path, ws, sync={"watch": False})
    keeper = FreshnessKeeper(agent)
    assert keeper.wait_fresh(0.1) is True  # nothing requested, nothing to wait for
    keeper.request("note")
    assert keeper.wait_fresh(0.1) is False  # not started: never hangs
    keeper.start(sync=False)
    try:
        assert keeper.wait_fresh(20) and keeper.snapshot().syncs == 1
        with writer_lock(agent, agent.db_path(), timeout=5):
            (ws / "memory" / "2026-01-03.md").write_text("- We fixed the boiler.\n")
            keeper.request("note")
            t0 = time.monotonic()
            assert keeper.wait_fresh(0.5) is False  # still waiting for the lock
            assert time.monotonic() - t0 < 3
        assert keeper.wait_fresh(20)
        assert paths(keeper, "boiler") == ["memory/2026-01-03.md"]
    finally:
        keeper.stop()


def test_before_search_waits_for_a_first_build_and_for_notes(tmp_path, ws):
    agent = agent_for(tmp_path, ws, sync={"watch": False})
    keeper = FreshnessKeeper(agent, watch=False)
    keeper.start(sync=False)
    try:
        assert keeper.index.never_synced
        assert keeper.before_search(timeout=30)  # never built: it waits
        assert paths(keeper, "tomatoes") == ["memory/2026-01-01.md"]
        (ws / "memory" / "2026-01-04.md").write_text("- We adopted a parrot.\n")
        keeper.request("note")  # as %%memnote does
        assert keeper.before_search(timeout=30)
        assert paths(keeper, "parrot") == ["memory/2026-01-04.md"]
        syncs = keeper.snapshot().syncs
        assert keeper.before_search() and keeper.snapshot().syncs == syncs  # fresh: nothing to do
    finally:
        keeper.stop()


def test_before_search_resyncs_a_stale_index_in_the_background(tmp_path, ws):
    agent = agent_for(tmp_path, ws, sync={"watch": False})
    keeper = FreshnessKeeper(agent, resync_after_s=0.2)
    with keeper:
        settle(keeper, 1)
        time.sleep(0.3)
        with writer_lock(agent, agent.db_path(), timeout=5):
            (ws / "memory" / "2026-01-05.md").write_text("- We sharpened the knives.\n")
            t0 = time.monotonic()
            assert keeper.before_search(timeout=30)
            assert time.monotonic() - t0 < 0.5  # it does not wait for that sync
            assert keeper.busy() and paths(keeper, "knives") == []
        assert keeper.wait_fresh(20) and paths(keeper, "knives") == ["memory/2026-01-05.md"]
    # sync.on_search = false: a stale index is searched as it is.
    off = agent_for(tmp_path, ws, sync={"watch": False, "on_search": False})
    with FreshnessKeeper(off, resync_after_s=0.0) as keeper:
        settle(keeper, 1)
        (ws / "memory" / "2026-01-06.md").write_text("- We waxed the skis.\n")
        assert keeper.before_search() and not keeper.busy()
        assert paths(keeper, "skis") == []


def test_before_search_never_hangs(tmp_path, ws):
    agent = agent_for(tmp_path, ws, sync={"watch": False})
    agent.db_path().parent.mkdir(parents=True, exist_ok=True)
    with writer_lock(agent, agent.db_path(), timeout=5):  # the first build cannot start
        keeper = FreshnessKeeper(agent)
        keeper.start(sync=False)
        t0 = time.monotonic()
        assert keeper.before_search(timeout=0.5) is False
        assert time.monotonic() - t0 < 3
        t0 = time.monotonic()
        keeper.stop()
        assert time.monotonic() - t0 < 5  # stopping does not wait for the lock either


def test_listeners_see_syncing_then_idle_with_counts(tmp_path, ws):
    agent = agent_for(tmp_path, ws, sync={"watch": False})
    seen: list[KeeperSnapshot] = []
    keeper = FreshnessKeeper(agent)
    keeper.add_listener(seen.append)
    keeper.add_listener(lambda s: 1 / 0)  # a failing listener harms nobody
    with keeper:
        settle(keeper, 1)
    states = [s.state for s in seen]
    assert KeeperState.SYNCING in states and states[-1] == KeeperState.IDLE
    assert states.index(KeeperState.SYNCING) < len(states) - 1
    last = seen[-1]
    assert last.syncs == 1 and last.files == 2 and last.chunks >= 2 and last.error is None
    assert last.last_sync_at and last.search_mode.kind == "keyword-only" and last.watch_mode == "off"


def test_a_provider_that_could_not_start_is_an_error(tmp_path, ws):
    """Real: the engine chooses the openai provider, which cannot start
    without OPENAI_API_KEY (conftest removes it); the agent syncs keyword-only."""
    agent = agent_for(tmp_path, ws, provider="openai", sync={"watch": False})
    notes: list[tuple[str, str]] = []
    with FreshnessKeeper(agent, notifier=lambda t, m: notes.append((t, m))) as keeper:
        bad = settle(keeper, 1)
        assert bad.state == KeeperState.ERROR and "OPENAI_API_KEY" in bad.error
        assert bad.search_mode.kind == "keyword-only" and bad.files == 2
        assert paths(keeper, "tomatoes")  # still searchable, by keywords
        keeper.request("manual")
        again = settle(keeper, 2)
        assert again.state == KeeperState.ERROR and again.error == bad.error
    assert notes == [("memext: k", bad.error)]  # once, not at every sync


def test_a_keeper_made_from_an_index_owns_it(tmp_path, ws):
    idx = MemoryIndex(agent_for(tmp_path, ws), provider=None)
    with FreshnessKeeper(idx, watch=False) as keeper:
        assert keeper.index is idx and keeper.wait_fresh(20)
        assert paths(keeper, "tomatoes")
    with pytest.raises(Exception, match="closed"):
        keeper.index


def test_a_disabled_agent_takes_only_manual_requests(tmp_path, ws):
    agent = agent_for(tmp_path, ws, enabled=False)
    with FreshnessKeeper(agent) as keeper:
        assert not keeper.busy() and keeper.watcher is None  # no startup sync, no watching
        keeper.request("watch")
        assert not keeper.busy()
        keeper.request("manual")
        assert keeper.wait_fresh(20) and keeper.snapshot().files == 2


WITHOUT_WATCHDOG = textwrap.dedent(
    """
    import sys, time
    sys.modules["watchdog"] = None  # as if memext[watch] were not installed
    from pathlib import Path
    from memext.engine import Supervisor

    ws = Path(sys.argv[1])
    with Supervisor(sys.argv[2], config_poll_s=0.2) as sup:
        keepers = sup.keepers()
        assert len(keepers) == 2 and all(k.watcher is None for k in keepers)
        assert {k.snapshot().watch_mode for k in keepers} == {"off"}
        assert sup.wait_idle(30)
        (ws / "memory" / "2026-01-07.md").write_text("- We found the spare key.\\n")
        deadline = time.monotonic() + 30
        k = sup.keeper("one")
        while not [r for r in k.index.search("spare key", min_score=0.0)]:
            assert time.monotonic() < deadline, "the interval sync did not come"
            time.sleep(0.1)
        assert "watchdog" not in [m.split(".")[0] for m in sys.modules if sys.modules[m] is not None]
    print("OK")
    """
)


def test_without_watchdog_the_keeper_syncs_on_a_timer_and_says_so_once(tmp_path, ws):
    from tray_helpers import write_config

    other = make_workspace(tmp_path, "other")
    cfg = write_config(
        tmp_path / "config.toml",
        {"one": ws, "two": other},
        index_dir=tmp_path / "index",
        one={"sync": {"interval_minutes": 0.01}},  # every 0.6 s
    )
    proc = subprocess.run([sys.executable, "-c", WITHOUT_WATCHDOG, str(ws), str(cfg)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and proc.stdout.strip() == "OK", proc.stderr
    said = [line for line in proc.stderr.splitlines() if "memext[watch]" in line]
    assert said == ["file watching is off (watchdog is not installed): pip install 'memext[watch]'; syncing on a timer instead"]


@pytest.mark.parametrize("kind", ["moved away", "unmounted drive"])
def test_a_workspace_gone_while_watched_is_an_error_not_deleted_files(tmp_path, kind):
    """The folder goes while the keeper watches it (renamed; the drive it is
    mounted from unmounted, leaving the empty mount point): the agent is in
    error naming the folder, its index keeps every file, and once the
    folder is back the next reconcile clears the error. The supervisor's
    scheduler calls ``tick(reconcile=True)`` now and then; here the test does."""
    away = OutOfReach(kind, tmp_path, lambda ws: make_workspace(ws.parent, ws.name, {"memory/2026-01-01.md": "- We planted tomatoes.\n"}))
    try:
        agent = agent_for(tmp_path, away.ws)
        with FreshnessKeeper(agent) as keeper:
            assert settle(keeper, 1).files == 2
            away.take_away()

            def in_error():
                keeper.tick(reconcile=True)
                snap = keeper.snapshot()
                return snap.state == KeeperState.ERROR and str(away.ws) in (snap.error or "") and snap

            gone = wait_for(in_error, what="the keeper to see the workspace go")
            time.sleep(1.0)  # watcher events of the move, a debounce later: still no deletion
            assert keeper.snapshot().files == gone.files == 2
            with MemoryIndex(agent, provider=None) as other:
                assert other.status().total_files == 2
            away.bring_back()

            def recovered():
                keeper.tick(reconcile=True)
                snap = keeper.snapshot()
                return snap.state == KeeperState.IDLE and snap.error is None and snap

            assert wait_for(recovered, what="the error to clear once the folder is back").files == 2
            assert paths(keeper, "tomatoes") == ["memory/2026-01-01.md"]
    finally:
        away.close()
