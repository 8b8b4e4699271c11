"""Incremental sync, deletes, rebuilds and concurrency (DESIGN.md §4-5)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time

import pytest
from conftest import TESTS, HashingProvider, backend_store, index_counts, make_agent
from servers import OPENAI_KEY, EmbeddingAPIServer

from memext.engine import IndexBuildError, MemoryIndex
from memext.engine.errors import WorkspaceMissing
from memext.engine.indexing.changes import files_changed
from memext.engine.indexing.fingerprint import DIMS_PROBE
from memext.engine.indexing.sync import Syncer
from memext.engine.store import open_store


def open_idx(ws, tmp_path, provider, **settings):
    return MemoryIndex(make_agent(ws, db_path=tmp_path / "idx.sqlite", **settings), provider=provider)


def test_incremental_sync_embeds_only_what_changed(workspace, tmp_path, hashing_provider):
    with open_idx(workspace, tmp_path, hashing_provider) as idx:
        first = idx.sync()
        # Three chunks and their seven entries (list items), each embedded once.
        assert first.files_indexed == 3 and first.texts_embedded == 3 + 7
        calls = hashing_provider.batch_calls

        again = idx.sync()
        assert again.files_unchanged == 3 and again.files_indexed == 0
        assert hashing_provider.batch_calls == calls  # nothing re-embedded

        note = workspace / "memory" / "2026-01-05.md"
        os.utime(note, ns=(time.time_ns(), time.time_ns() + 5_000_000_000))  # touched, same text
        touched = idx.sync()
        assert touched.files_indexed == 0 and hashing_provider.batch_calls == calls

        note.write_text(note.read_text() + "- New line about the quarterly budget.\n")
        edited = idx.sync()
        assert edited.files_indexed == 1 and edited.texts_embedded == 2  # the file's chunk and its new entry
        assert hashing_provider.texts_embedded == 12
        assert [r.path for r in idx.search("quarterly budget", min_score=0)][0] == "memory/2026-01-05.md"


def test_unchanged_chunks_of_an_edited_file_come_from_the_cache(workspace, tmp_path, hashing_provider):
    big = workspace / "memory" / "2026-02-01.md"
    big.write_text("\n".join(f"- fact number {i} about the project " * 3 for i in range(120)) + "\n")
    with open_idx(workspace, tmp_path, hashing_provider, chunking={"tokens": 100, "overlap": 0}) as idx:
        idx.sync()
        before = hashing_provider.texts_embedded
        big.write_text(big.read_text() + "- one more fact at the end\n")
        report = idx.sync()
        assert report.texts_embedded == 2  # only the last chunk changed, and one entry is new
        assert hashing_provider.texts_embedded == before + 2
        assert report.cache_hits > 10


def test_an_index_of_a_model_without_a_measured_null_estimates_its_own(tmp_path, hashing_provider):
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    (ws / "MEMORY.md").write_text("# Memory\n\n" + "".join(f"- fact {i}: the {i}th thing about the garden\n" for i in range(40)))
    with open_idx(ws, tmp_path, hashing_provider) as idx:
        idx.sync()
    store = open_store(make_agent(ws, db_path=tmp_path / "idx.sqlite"), tmp_path / "idx.sqlite")
    try:
        stored = store.get_meta_json("entry_null")
    finally:
        store.close()
    assert stored["provider"] == hashing_provider.id and stored["model"] == hashing_provider.model
    assert 0.0 < stored["value"] < 1.0


def test_deleting_a_file_removes_its_chunks(workspace, tmp_path, hashing_provider):
    with open_idx(workspace, tmp_path, hashing_provider) as idx:
        idx.sync()
        assert any(r.path == "memory/2026-01-05.md" for r in idx.search("a828e60", min_score=0))
        (workspace / "memory" / "2026-01-05.md").unlink()
        report = idx.sync()
        assert report.files_deleted == 1
        assert not any(r.path == "memory/2026-01-05.md" for r in idx.search("a828e60", min_score=0))
        agent = idx.agent
    counts = index_counts(agent)
    assert counts["files"] == counts["paths"] == 2 and counts["vectors"] == counts["chunks"] == 2


def test_failed_rebuild_keeps_the_old_index_and_no_temp_files(workspace, tmp_path, hashing_provider):
    db = tmp_path / "idx.sqlite"
    with open_idx(workspace, tmp_path, hashing_provider) as idx:
        idx.sync()
    # A new model means a rebuild; this provider dies half way through it.
    broken = HashingProvider(model="hash-v2")
    broken.fail_after_texts = 1
    (workspace / "memory" / "2026-01-07.md").write_text("# 2026-01-07\n\n- brand new note about kayaks\n")
    with MemoryIndex(make_agent(workspace, db_path=db), provider=broken) as idx:
        with pytest.raises(IndexBuildError, match="previous index is kept"):
            idx.sync()
        assert "previous index is kept" in idx.status().last_error
        # Still searchable, still the old index (the kayak note is not in it).
        hits = idx.search("a828e60", min_score=0)
        assert hits[0].path == "memory/2026-01-05.md"
        assert not idx.search("kayaks", min_score=0).results
    leftovers = sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("idx.sqlite"))
    assert [n for n in leftovers if "rebuild" in n] == []
    store = open_store(make_agent(workspace, db_path=db), db)
    assert json.loads(store.get_meta("fingerprint"))["model"] == "hash-v1"
    store.close()


def test_fingerprint_change_rebuilds_from_the_cache(workspace, tmp_path, hashing_provider):
    with open_idx(workspace, tmp_path, hashing_provider) as idx:
        idx.sync()
        assert not idx.sync().rebuilt
        forced = idx.sync(force=True)
        assert forced.rebuilt and forced.texts_embedded == 0 and forced.cache_hits == 3 + 7  # chunks and entries
    # Changing chunking changes the fingerprint: rebuilt automatically.
    with open_idx(workspace, tmp_path, hashing_provider, chunking={"tokens": 200, "overlap": 20}) as idx:
        report = idx.sync()
        assert report.rebuilt
        assert idx.status().total_chunks == 3


def test_progress_reports_counts_and_eta(workspace, tmp_path, hashing_provider):
    events = []
    with open_idx(workspace, tmp_path, hashing_provider) as idx:
        idx.sync(progress=events.append)
    phases = [e.phase for e in events]
    assert "write" in phases and phases[-1] == "done"
    last_write = [e for e in events if e.phase == "write"][-1]
    assert last_write.files_done == last_write.files_total == 3
    assert last_write.chunks_done == last_write.chunks_total == 3
    assert last_write.eta_s == pytest.approx(0.0, abs=1e-6)
    assert any(e.eta_s is not None for e in events)


def test_provider_failure_in_incremental_sync_degrades_to_keyword(workspace, tmp_path, hashing_provider):
    with open_idx(workspace, tmp_path, hashing_provider) as idx:
        idx.sync()
        hashing_provider.fail_after_texts = hashing_provider.texts_embedded  # down from now on
        (workspace / "memory" / "2026-01-08.md").write_text("- the wifi password is in the vault\n")
        report = idx.sync()
        assert report.provider_error and "failed mid-sync" in report.provider_error
        assert idx.search("wifi vault", min_score=0)[0].path == "memory/2026-01-08.md"  # keyword side
        assert "failed mid-sync" in idx.status().last_error
        hashing_provider.fail_after_texts = None  # back up: the file is retried
        again = idx.sync()
        assert again.files_indexed == 1 and again.texts_embedded == 1


def test_unreadable_and_bad_files_are_reported_not_fatal(workspace, tmp_path, hashing_provider):
    os.symlink(workspace / "memory" / "gone.md", workspace / "memory" / "dangling.md")
    (workspace / "memory" / "latin1.md").write_bytes("caf\xe9 notes".encode("latin-1"))
    with open_idx(workspace, tmp_path, hashing_provider) as idx:
        report = idx.sync()
        reasons = {s.path: s.reason for s in idx.status().skipped}
    assert report.files_indexed == 4
    assert "invalid UTF-8" in reasons["memory/latin1.md"]
    assert "cannot read" in reasons["memory/gone.md"]


def test_sessions_are_indexed_with_jsonl_line_numbers_and_deltas(workspace, tmp_path, hashing_provider):
    sessions = workspace / "sessions"
    sessions.mkdir()
    log = sessions / "s1.jsonl"

    def msg(role, text):
        return json.dumps({"type": "message", "message": {"role": role, "content": text}}) + "\n"

    log.write_text(json.dumps({"type": "session"}) + "\n" + msg("user", "book the dentist") + msg("assistant", "Booked for Friday at 9"))
    settings = {"sources": ["memory", "sessions"], "experimental": {"session_memory": True}}
    with open_idx(workspace, tmp_path, hashing_provider, **settings) as idx:
        idx.sync()
        hit = idx.search("dentist Friday", min_score=0, sources=["sessions"])[0]
        assert (hit.path, hit.source, hit.start_line, hit.end_line) == ("sessions/s1.jsonl", "sessions", 2, 3)
        assert idx.status().files == {"memory": 3, "sessions": 1}
        # A small append stays below the delta thresholds for automatic syncs...
        with log.open("a") as f:
            f.write(msg("user", "also the optician"))
        assert idx.sync(reason="watch").files_deferred == 1
        assert all("optician" not in r.snippet for r in idx.search("optician", min_score=0, sources=["sessions"]))
        # ...and a manual sync indexes it.
        idx.sync()
        hit = idx.search("optician", min_score=0, sources=["sessions"])[0]
        assert hit.end_line == 4 and "optician" in hit.snippet


def test_files_changed_agrees_with_what_a_sync_would_do(workspace, tmp_path):
    sessions = workspace / "sessions"
    sessions.mkdir()
    log = sessions / "s1.jsonl"
    log.write_text(json.dumps({"type": "message", "message": {"role": "user", "content": "hello"}}) + "\n")
    agent = make_agent(
        workspace,
        db_path=tmp_path / "idx.sqlite",
        sources=["memory", "sessions"],
        experimental={"session_memory": True},
        sync={"sessions": {"delta_bytes": 1000}},
    )
    store = open_store(agent, tmp_path / "idx.sqlite")
    Syncer(agent, store, None).run(sessions_all=True)
    assert not files_changed(agent, store)
    with log.open("a") as f:  # below delta_bytes: a sync would defer it
        f.write("x" * 10 + "\n")
    assert not files_changed(agent, store)
    with log.open("a") as f:
        f.write("x" * 1000 + "\n")
    assert files_changed(agent, store)
    Syncer(agent, store, None).run(sessions_all=True)
    (workspace / "MEMORY.md").write_text("rewritten\n")
    assert files_changed(agent, store)
    Syncer(agent, store, None).run()
    (workspace / "memory" / "2026-01-05.md").unlink()
    assert files_changed(agent, store)
    store.close()


def test_sync_of_a_missing_workspace_raises_instead_of_emptying_the_index(workspace, tmp_path):
    agent = make_agent(workspace, db_path=tmp_path / "idx.sqlite")
    store = open_store(agent, tmp_path / "idx.sqlite")
    Syncer(agent, store, None).run()
    workspace.rename(tmp_path / "elsewhere")
    with pytest.raises(WorkspaceMissing, match="does not exist"):
        Syncer(agent, store, None).run()
    (tmp_path / "ws").write_text("a file")
    with pytest.raises(WorkspaceMissing, match="is not a folder"):
        Syncer(agent, store, None).run()
    assert store.file_count() == 3
    store.close()


CONCURRENT_SYNC = textwrap.dedent(
    """
    import sys, json, time
    sys.path.insert(0, {tests!r})
    from conftest import HashingProvider, backend_store, index_counts, make_agent
    from memext.engine import MemoryIndex
    from pathlib import Path
    agent = make_agent(Path({ws!r}), db_path=Path({db!r}), **{extra!r})
    p = HashingProvider()
    with MemoryIndex(agent, provider=p) as idx:
        start = time.time()
        r = idx.sync()
        print(json.dumps({{"indexed": r.files_indexed, "start": start, "end": time.time(), "embedded": p.texts_embedded}}))
    """
)


def test_two_processes_syncing_one_agent_stay_consistent(tmp_path):
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    for i in range(150):
        (ws / "memory" / f"2026-01-{i:03d}.md").write_text(f"# note {i}\n\n" + f"- fact {i} about topic{i % 7}\n" * 30)
    db = tmp_path / "idx.sqlite"
    extra = {"store": backend_store()} if backend_store() else {}
    code = CONCURRENT_SYNC.format(tests=str(TESTS), ws=str(ws), db=str(db), extra=extra)
    procs = [subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(2)]
    outs = []
    for p in procs:
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0, err
        outs.append(json.loads(out.strip().splitlines()[-1]))
    # One did the work, the other waited for the lock and found nothing to do.
    assert sorted(o["indexed"] for o in outs) == [0, 150]
    agent = make_agent(ws, db_path=db)
    counts = index_counts(agent)
    assert counts["files"] == counts["paths"] == 150 and counts["chunks"] == counts["vectors"]
    store = open_store(agent, db)
    assert store.keyword_search('"topic3"', 10) and store.term_doc_counts(["topic3"])["topic3"] > 0
    store.close()


def test_a_file_growing_during_the_sync_is_indexed_whole_or_left_dirty(tmp_path, monkeypatch):
    """The tail written while a sync reads the file is never silently lost:
    the sync reads it again, and a file that never settles is recorded
    unverified (status dirty) so the next sync reads it."""
    from memory.test_discovery import _WrittenWhileRead

    from memext.engine.memory import discovery as sources

    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    log = ws / "memory" / "2026-03-01.md"
    log.write_text("- deploy started\n")
    agent = make_agent(ws, db_path=tmp_path / "idx.sqlite")
    with MemoryIndex(agent, provider=None) as idx:
        monkeypatch.setattr(sources, "open", _WrittenWhileRead(1, b"- deploy failed: disk quota\n").open, raising=False)
        idx.sync()
        assert [r.path for r in idx.search("quota", min_score=0)] == ["memory/2026-03-01.md"]

        with log.open("a") as f:
            f.write("- rollback done\n")
        monkeypatch.setattr(sources, "open", _WrittenWhileRead(50, b"- retry scheduled\n").open, raising=False)
        report = idx.sync()
        assert report.files_unverified == 1 and idx.status().dirty is True
        monkeypatch.undo()
        idx.sync()
        assert idx.status().dirty is False
        assert idx.search("retry scheduled", min_score=0).results


def test_appends_racing_syncs_end_indexed(tmp_path):
    """A real writer thread appending while syncs run: whatever a sync saw,
    the index never claims fresh while it lacks lines, and one sync after
    the writer stops holds them all."""
    import threading

    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    log = ws / "memory" / "log.md"
    log.write_text("# log\n")
    stop = threading.Event()

    def writer():
        n = 0
        while not stop.is_set():
            with open(log, "a") as f:
                f.write(f"- entry{n} zebra{n}\n")
            n += 1
            time.sleep(0.001)

    agent = make_agent(ws, db_path=tmp_path / "idx.sqlite", chunking={"tokens": 2000, "overlap": 0})
    with MemoryIndex(agent, provider=None) as idx:
        t = threading.Thread(target=writer)
        t.start()
        try:
            for _ in range(15):
                idx.sync()
        finally:
            stop.set()
            t.join()
        last = log.read_text().splitlines()[-1].split()[-1]
        assert idx.status().dirty or idx.search(last, min_score=0).results
        idx.sync()
        assert not idx.status().dirty
        assert [r.path for r in idx.search(last, min_score=0)] == ["memory/log.md"]


def test_a_sync_finds_binary_files_by_reading_them(workspace, tmp_path, hashing_provider):
    # A sync skips discovery's binary check (it reads every changed file
    # anyway): the read must skip such a file just the same, uncounted.
    photo = workspace / "memory" / "photo.md"
    photo.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00" + os.urandom(200_000))
    turned = workspace / "memory" / "2026-01-06.md"
    with open_idx(workspace, tmp_path, hashing_provider) as idx:
        report = idx.sync()
        assert (report.files_seen, report.files_indexed) == (3, 3)
        assert ("memory/photo.md", "binary content, not text: not indexed") in [(s.path, s.reason) for s in report.skipped]
        assert not idx.status().dirty  # a binary file is never a pending change
        turned.write_bytes(b"\x00" * 300)  # was text: its chunks must go
        report = idx.sync()
        assert (report.files_seen, report.files_deleted) == (2, 1)
        assert "memory/2026-01-06.md" not in {r.path for r in idx.search("quarterly roadmap", min_score=0)}
        assert index_counts(idx.agent)["paths"] == 2


def test_files_new_to_the_index_are_written_once(workspace, tmp_path, hashing_provider):
    # New files skip the look for old chunks; an edit or a rebuild must
    # still leave exactly the chunks a fresh index of the same files holds.
    with open_idx(workspace, tmp_path, hashing_provider) as idx:
        idx.sync()
        assert index_counts(idx.agent)["chunks"] == 3
        note = workspace / "memory" / "2026-01-05.md"
        note.write_text(note.read_text() + "\n" + "- Another deploy note.\n" * 60)
        (workspace / "memory" / "2026-01-07.md").write_text("# 2026-01-07\n\n- Bob and Anna deploy again.\n")
        idx.sync()
        edited = index_counts(idx.agent)
        idx.sync(force=True)
        rebuilt = index_counts(idx.agent)
    fresh_agent = make_agent(workspace, agent_id="fresh", db_path=tmp_path / "fresh.sqlite")
    with MemoryIndex(fresh_agent, provider=hashing_provider) as fresh:
        fresh.sync()
        expected = index_counts(fresh.agent)
    assert expected["paths"] == 4 and expected["chunks"] == expected["vectors"] > 4
    assert edited == rebuilt == expected


def test_a_model_whose_vectors_change_size_is_rebuilt(workspace, tmp_path):
    """The model behind the same name and endpoint now answers with vectors
    of another size. The old code: `memext index` (nothing changed) called
    the index fine, and every search fell back to keyword, its query vector
    rejected. Now the sync learns the size and rebuilds; cached vectors of
    the old size are not reused."""
    with EmbeddingAPIServer(openai_dims=64) as server:
        agent = make_agent(workspace, db_path=tmp_path / "idx.sqlite", provider="openai", remote={"base_url": server.openai_base_url})
        env = {"OPENAI_API_KEY": OPENAI_KEY}
        with MemoryIndex(agent, env=env) as idx:
            assert not idx.sync().rebuilt
            assert idx.search("Anna billing").mode == "hybrid" and idx.status().vector.dims == 64
        server.openai_dims = 96
        server.reset_log()
        with MemoryIndex(agent, env=env) as idx:  # a new process: its provider has not answered yet
            report = idx.sync()
            assert report.rebuilt and report.provider_error is None
            # None of the 64-size vectors came from the cache (chunks and their 7 entries).
            assert report.texts_embedded == report.chunks_written + 7 > 7
            resp = idx.search("Anna billing")
            assert resp.mode == "hybrid" and resp.notice is None and resp.results[0].path == "MEMORY.md"
            assert idx.status().vector.dims == 96
        assert server.inputs("openai.embeddings").count(DIMS_PROBE) == 1
        server.reset_log()
        with MemoryIndex(agent, env=env) as idx:  # same size again: one small call, no rebuild
            assert not idx.sync().rebuilt
            assert idx.search("Anna billing").mode == "hybrid"
        assert server.inputs("openai.embeddings") == [DIMS_PROBE, "Anna billing"]
