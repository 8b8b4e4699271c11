"""A keeper's freshness record (engine/indexing/freshness_record.py):
believed only while the keeper that wrote it runs and watches natively,
for the roots it watches; made "dirty" by a file event before that event's
debounce, and by files a sync could not verify. Real watchdog, real file
locks, a real second process for the crash."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from conftest import ROOT
from tray_helpers import make_workspace, wait_for

from memext.engine import FreshnessKeeper
from memext.engine.config import parse_config
from memext.engine.indexing.freshness_record import SUFFIX, vouches


def sqlite_agent(tmp_path: Path, ws: Path, **settings):
    """An agent whose index is a file here (the record is kept only for one)."""
    ms = {"provider": "none", "store": {"path": str(tmp_path / "index" / "k.sqlite")}, **settings}
    ms["sync"] = {"watch_debounce_ms": 300, **ms.get("sync", {})}
    return parse_config({"agents": [{"id": "k", "workspace": str(ws), "memory_search": ms}]}, path=tmp_path / "config.toml").agents[0]


@pytest.fixture
def ws(tmp_path) -> Path:
    return make_workspace(tmp_path, "ws", {"memory/2026-01-01.md": "# Jan 1\n- We planted tomatoes.\n"})


def test_a_watching_keeper_vouches_and_once_stopped_does_not(tmp_path, ws):
    agent = sqlite_agent(tmp_path, ws)
    db = agent.db_path()
    keeper = FreshnessKeeper(agent)
    keeper.start()
    try:
        wait_for(lambda: vouches(agent, db), what="the keeper's record to say fresh")
        assert keeper.snapshot().watch_mode == "native"
    finally:
        keeper.stop()
    assert not vouches(agent, db)
    assert not Path(str(db) + SUFFIX).exists()


def test_a_crashed_keeper_is_not_believed(tmp_path, ws):
    agent = sqlite_agent(tmp_path, ws)
    db = agent.db_path()
    code = textwrap.dedent(
        f"""
        import time
        from memext.engine import FreshnessKeeper
        from memext.engine.config import parse_config
        raw = {{"agents": [{{"id": "k", "workspace": {str(ws)!r}, "memory_search": {{"provider": "none",
               "store": {{"path": {str(db)!r}}}, "sync": {{"watch_debounce_ms": 300}}}}}}]}}
        FreshnessKeeper(parse_config(raw).agents[0]).start()
        time.sleep(600)
        """
    )
    proc = subprocess.Popen([sys.executable, "-c", code], cwd=ROOT)
    try:
        wait_for(lambda: vouches(agent, db), timeout=60, what="the other process's keeper to say fresh")
    finally:
        proc.kill()  # no clean-up runs: its record stays behind
        proc.wait(timeout=30)
    record = json.loads(Path(str(db) + SUFFIX).read_text())
    assert record["fresh"] is True and record["pid"] == proc.pid
    assert not vouches(agent, db)  # the OS dropped its lock when it died


def test_a_file_event_takes_the_word_back_before_its_debounce(tmp_path, ws):
    agent = sqlite_agent(tmp_path, ws, sync={"watch_debounce_ms": 30_000})
    with FreshnessKeeper(agent) as keeper:
        wait_for(lambda: vouches(agent, agent.db_path()), what="fresh")
        syncs = keeper.snapshot().syncs
        (ws / "memory" / "2026-01-01.md").write_text("# Jan 1\n- We planted tomatoes and leeks.\n")
        wait_for(lambda: not vouches(agent, agent.db_path()), timeout=5, what="the record to say dirty")
        assert keeper.snapshot().syncs == syncs  # 30 s of debounce: no sync has run yet


def test_files_a_sync_could_not_verify_keep_the_record_dirty_until_read_again(tmp_path, ws):
    # A whole-second mtime (a clock a little ahead, so that a slow start
    # cannot outlast the window): a same-size edit in the same second would
    # keep it, so the sync records the file unverified (§5).
    note = ws / "memory" / "2026-01-01.md"
    second = int(time.time()) + 3
    os.utime(note, ns=(second * 10**9, second * 10**9))
    agent = sqlite_agent(tmp_path, ws)
    with FreshnessKeeper(agent) as keeper:
        wait_for(lambda: keeper.snapshot().syncs >= 1, what="the startup sync")
        assert not vouches(agent, agent.db_path())
        # The keeper reads it again once its 2 s window has closed.
        wait_for(lambda: vouches(agent, agent.db_path()), timeout=20, what="fresh after the recheck")
        assert time.time() >= second + 2


def test_the_word_covers_only_the_roots_the_keeper_watches(tmp_path, ws):
    agent = sqlite_agent(tmp_path, ws)
    (tmp_path / "more").mkdir()
    wider = sqlite_agent(tmp_path, ws, extra_paths=[str(tmp_path / "more")])
    with FreshnessKeeper(agent):
        wait_for(lambda: vouches(agent, agent.db_path()), what="fresh")
        assert not vouches(wider, wider.db_path())  # a config edited since names another folder


@pytest.mark.parametrize("how", ["polling", "paused", "unwatched"])
def test_a_keeper_that_does_not_see_every_change_as_it_happens_does_not_vouch(tmp_path, ws, how):
    agent = sqlite_agent(tmp_path, ws, sync={"watch": how != "unwatched"})
    keeper = FreshnessKeeper(agent, polling=how == "polling")
    with keeper:
        wait_for(lambda: keeper.snapshot().syncs >= 1 and not keeper.busy(), what="the startup sync")
        if how == "paused":
            wait_for(lambda: vouches(agent, agent.db_path()), what="fresh")
            keeper.set_paused(True)
        keeper.request("manual")
        assert keeper.wait_fresh(20)
        assert not vouches(agent, agent.db_path())
