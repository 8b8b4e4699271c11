"""What the magics, the widget and ``memext.search()`` share
(memext/api.py): the plain functions, the provider notice said once a
session, and the "syncing" notice only while a sync really runs."""

from __future__ import annotations

import time

import pytest
from memext_helpers import display_html, ipython_shell, write_config

import memext
from memext import FileLines, SearchResults, Session, StatusTable
from memext.api import run_search
from memext.engine import KeeperState, MemextError
from memext.engine.store.sqlite.lock import WriterLock

SYNCING = "the index is syncing"


@pytest.fixture
def config(tmp_path, example_workspace, workspace, monkeypatch):
    path = write_config(tmp_path / "memext", {"example": example_workspace, "small": workspace}, provider="auto")
    monkeypatch.setenv("MEMEXT_CONFIG", str(path))
    return path


@pytest.fixture(autouse=True)
def close_the_default_session():
    yield
    memext.default_session().close()  # the next test's config gets a new one


def _wait(cond, timeout=30.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if cond():
            return
        time.sleep(0.05)
    raise AssertionError("timed out")


def test_plain_functions_without_the_extension(config, example_workspace):
    r = memext.search("when is the Berlin trip?", max_results=2)
    assert isinstance(r, SearchResults) and r.agent == "example" and len(r) == 2
    assert r[0].best_line == 4 and r[0].path == "memory/2026-10-24.md"
    lines = memext.get(r[0].citation)
    assert isinstance(lines, FileLines) and "Berlin trip booked" in lines
    table = memext.status()
    assert isinstance(table, StatusTable) and [s.agent for s in table] == ["example", "small"]
    assert [s.agent for s in memext.status("small")] == ["small"]
    note = memext.note("The kayak club meets on Sundays.", agent="small")
    assert note.citation.startswith("memory/") and "kayak" in (example_workspace.parent / "ws" / note.path).read_text()
    # The note's sync is waited for by the next search.
    assert memext.search("kayak club", agent="small")[0].path == note.path
    dated = memext.search("Berlin", since="2026-11-01", before="2026-11-30")
    assert dated and all(h.path >= "memory/2026-11-01" for h in dated)
    with pytest.raises(MemextError, match="no searchable words"):
        memext.search("?!")
    assert memext.default_session() is memext.default_session()


def test_plain_functions_share_the_magics_session_and_settings(config):
    with ipython_shell() as shell:
        shell.run_line_magic("load_ext", "memext")
        magics = shell.magics_manager.registry["MemExt"]
        shell.run_line_magic("config", "MemExt.agent = 'small'")
        shell.run_line_magic("config", "MemExt.max_results = 1")
        assert memext.default_session() is magics.session
        r = memext.search("Anna")
        assert r.agent == "small" and len(r) == 1


def test_the_provider_notice_is_shown_once_a_session(config):
    s = Session()
    try:
        first = run_search(s, "vet Biscuit")
        assert first.shown_notices() and "keyword-only" in first.shown_notices()[0]
        again = run_search(s, "Berlin")
        other_agent = run_search(s, "Anna", agent="small")
        for r in (again, other_agent):
            assert r.shown_notices() == [] and r.notices() == first.notices()
            assert "keyword-only" not in display_html_of(r).split("</div>", 1)[1]  # only in the header
            assert "[keyword-only]" in r.to_text().splitlines()[0]
        assert Session().repeated_notices(first.notices()) == frozenset()  # a new session says it again
    finally:
        s.close()


def display_html_of(r: SearchResults) -> str:
    with ipython_shell() as shell:
        return display_html(shell, r)


def test_no_syncing_notice_when_a_resync_finds_nothing_changed(config):
    # A search 30 s after the last sync must not say "the index is syncing"
    # while the keeper only checks for changes.
    s = Session(resync_after_s=0)
    try:
        assert s.keeper("example", warm_up=True).wait_fresh(30)
        for _ in range(5):
            r = run_search(s, "vet Biscuit")
            assert not any(SYNCING in n for n in r.notices())
    finally:
        s.close()


def test_the_syncing_notice_while_a_sync_really_runs(config, example_workspace):
    s = Session(resync_after_s=0)
    try:
        keeper = s.keeper("example", warm_up=True)
        assert keeper.wait_fresh(30)
        (example_workspace / "memory" / "2026-11-30.md").write_text("# 2026-11-30\n\n- Bought a kayak.\n")
        with WriterLock(keeper.agent.db_path(), timeout=5):  # another process's sync holds the index
            run_search(s, "kayak")  # starts the background resync, which waits for the lock
            _wait(lambda: keeper.snapshot().state == KeeperState.SYNCING)
            r = run_search(s, "kayak")
            assert any(SYNCING in n for n in r.shown_notices())
        assert keeper.wait_fresh(30)
        r = run_search(s, "kayak")
        assert r[0].path == "memory/2026-11-30.md" and not any(SYNCING in n for n in r.notices())
    finally:
        s.close()
