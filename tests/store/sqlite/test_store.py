"""The SQLite index: vec0 KNN, numpy fallback, cache, swaps seen across processes."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from conftest import TESTS, make_agent

from memext.engine import MemoryIndex
from memext.engine.errors import IndexOpenError, MemextError
from memext.engine.store import CacheKey, NewChunk, StoreOptions
from memext.engine.store.sqlite import db
from memext.engine.store.sqlite.index_files import aside_copies, move_aside
from memext.engine.store.sqlite.ownership import APPLICATION_ID
from memext.engine.store.sqlite.store import Store
from memext.engine.vector_math import normalize

#: The SQLite store's own behaviour (its file, vec0, FTS5); the PostgreSQL
#: store's is in test_store_postgres.py.
pytestmark = pytest.mark.sqlite_only


def unit(seed: int, dims: int = 32) -> np.ndarray:
    return normalize(np.random.default_rng(seed).standard_normal(dims))


def fill(store: Store, n: int = 40, dims: int = 32, source: str = "memory") -> None:
    for i in range(n):
        store.replace_file(
            f"memory/f{i}.md",
            source,
            f"h{i}",
            1,
            1,
            [NewChunk(f"id{i}", 1, 1, f"t{i}", f"text number {i}", unit(i, dims))],
            "m",
        )


def test_binding_loads_sqlite_vec_and_fts5(tmp_path):
    store = Store(tmp_path / "a.sqlite")
    assert store.caps.vec_version and store.caps.fts5
    assert db.binding().can_load_extensions
    assert store.conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    store.close()


def test_vec0_knn_and_numpy_agree(tmp_path):
    store = Store(tmp_path / "a.sqlite", StoreOptions(vector_backend="vec0"))
    fill(store)
    q = unit(7)
    assert store.vector_backend_in_use() == "vec0"
    via_vec0 = store.vector_search(q, 5)
    assert via_vec0[0][0] == 8 and via_vec0[0][1] == pytest.approx(1.0, abs=1e-5)  # rowid 8 holds unit(7)
    store.close()
    numpy_store = Store(tmp_path / "a.sqlite", StoreOptions(vector_backend="numpy"))
    via_numpy = numpy_store.vector_search(q, 5)
    assert [r for r, _ in via_numpy] == [r for r, _ in via_vec0]
    assert np.allclose([s for _, s in via_numpy], [s for _, s in via_vec0], atol=1e-5)
    numpy_store.close()


def test_knn_filters_by_source(tmp_path):
    store = Store(tmp_path / "a.sqlite")
    fill(store, 10)
    store.replace_file("sessions/s.jsonl", "sessions", "hs", 1, 1, [NewChunk("sid", 1, 1, "ts", "session text", unit(3))], "m")
    got = store.vector_search(unit(3), 3, ["sessions"])
    assert [r for r, _ in got] == [11]
    store.close()


def test_numpy_matrix_follows_changes(tmp_path):
    store = Store(tmp_path / "a.sqlite", StoreOptions(vector_backend="numpy"))
    fill(store, 10)
    assert store.vector_search(unit(2), 1)[0][0] == 3
    store.delete_file("memory/f2.md")
    store.replace_file("memory/new.md", "memory", "hn", 1, 1, [NewChunk("new", 1, 1, "tn", "new", unit(99))], "m")
    assert store.vector_search(unit(2), 1)[0][0] != 3
    assert store.vector_search(unit(99), 1)[0][0] == 11
    store.close()


def test_without_the_extension_vectors_use_a_numpy_scan(tmp_path):
    store = Store(tmp_path / "a.sqlite", StoreOptions(vector_enabled=False))
    assert store.caps.vec_version is None and "disabled" in store.caps.vec_error
    fill(store, 10)
    assert store.get_meta("vector_store") == "blob"
    assert store.vector_backend_in_use() == "numpy"
    assert store.vector_search(unit(4), 1)[0][0] == 5
    store.close()


def test_embedding_cache_prunes_least_recently_used(tmp_path):
    store = Store(tmp_path / "a.sqlite")
    key = CacheKey("p", "m", "e")
    store.cache_put(key, {f"h{i}": unit(i) for i in range(5)})
    import time

    time.sleep(0.01)
    store.cache_get(key, ["h0", "h1"])  # used recently
    assert store.cache_prune(2) == 3
    assert set(store.cache_get(key, [f"h{i}" for i in range(5)])) == {"h0", "h1"}
    assert store.cache_get(CacheKey("p", "other-model", "e"), ["h0"]) == {}
    store.close()


def test_garbage_file_is_reported_as_corrupt(tmp_path):
    from memext.engine.store import CorruptIndex

    bad = tmp_path / "bad.sqlite"
    bad.write_bytes(b"this is not a database" * 100)
    with pytest.raises(CorruptIndex):
        Store(bad)


READER = textwrap.dedent(
    """
    import sys, json, time
    sys.path.insert(0, {tests!r})
    from conftest import make_agent
    from memext.engine import MemoryIndex
    from pathlib import Path
    agent = make_agent(Path({ws!r}), db_path=Path({db!r}), sync={{"on_search": False}})
    with MemoryIndex(agent, provider=None) as idx:
        print(json.dumps([r.path for r in idx.search("zebra", min_score=0)]), flush=True)
        sys.stdin.readline()  # the parent rebuilds the index now
        print(json.dumps([r.path for r in idx.search("zebra", min_score=0)]), flush=True)
        print(json.dumps(idx.status().to_dict()["chunks"]), flush=True)
    """
)


def test_reader_in_another_process_sees_the_index_after_a_swap(workspace, tmp_path):
    db_path = tmp_path / "idx.sqlite"
    (workspace / "memory" / "2026-01-09.md").write_text("- the first zebra note\n")
    agent = make_agent(workspace, db_path=db_path)
    with MemoryIndex(agent, provider=None) as idx:
        idx.sync()
    reader = subprocess.Popen(
        [sys.executable, "-c", READER.format(tests=str(TESTS), ws=str(workspace), db=str(db_path))],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    before = json.loads(reader.stdout.readline())
    assert before == ["memory/2026-01-09.md"]
    # Rebuild (a shadow index swapped in) with different content.
    (workspace / "memory" / "2026-01-10.md").write_text("- a second zebra note\n")
    (workspace / "memory" / "2026-01-09.md").unlink()
    with MemoryIndex(agent, provider=None) as idx:
        assert idx.sync(force=True).rebuilt
    out, err = reader.communicate("go\n", timeout=60)
    assert reader.returncode == 0, err
    after, chunks = [json.loads(line) for line in out.strip().splitlines()]
    assert after == ["memory/2026-01-10.md"]
    assert chunks == {"memory": 4}


def test_chunk_vectors_are_the_same_from_matrix_cache_or_vector_table(tmp_path):
    store = Store(tmp_path / "a.sqlite", StoreOptions(vector_backend="vec0"))
    fill(store, 10)  # rowid i + 1 holds unit(i); its text hash is f"t{i}"
    expected = {i + 1: unit(i) for i in range(10)}
    ids = list(expected) + [999]

    def check(got: dict) -> None:
        assert set(got) == set(expected)  # an unknown rowid is left out
        assert all(np.allclose(got[r], v, atol=1e-6) for r, v in expected.items())

    check(store.chunk_vectors(ids))  # vec0 point lookups
    with store.transaction():
        store.set_meta_json("fingerprint", {"provider": "p", "model": "m", "endpoint": "e"})
    store.cache_put(CacheKey("p", "m", "e"), {f"t{i}": unit(i) for i in range(0, 10, 2)})
    check(store.chunk_vectors(ids))  # half from the embedding cache
    store.close()
    matrix_store = Store(tmp_path / "a.sqlite", StoreOptions(vector_backend="numpy"))
    matrix_store.vector_search(unit(0), 1)  # loads the matrix
    assert matrix_store.matrix_loaded
    check(matrix_store.chunk_vectors(ids))
    matrix_store.close()


def test_an_index_that_cannot_be_created_is_a_memext_error(tmp_path):
    (tmp_path / "afile").write_text("a file, not a folder")
    with pytest.raises(IndexOpenError, match="afile/sub/x.sqlite") as err:
        Store(tmp_path / "afile" / "sub" / "x.sqlite")
    assert isinstance(err.value, MemextError) and "store.path" in str(err.value)
    (tmp_path / "dir.sqlite").mkdir()
    with pytest.raises(IndexOpenError, match="cannot open the index"):
        Store(tmp_path / "dir.sqlite")


def test_another_programs_database_is_refused_untouched(tmp_path):
    path = tmp_path / "app.sqlite"
    conn = db.binding().module.connect(str(path))
    conn.execute("CREATE TABLE notes (body TEXT)")
    conn.execute("INSERT INTO notes VALUES ('precious')")
    conn.commit()
    conn.close()
    with pytest.raises(IndexOpenError, match="another program"):
        Store(path)
    conn = db.binding().module.connect(str(path))
    tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master")]
    assert tables == ["notes"] and conn.execute("SELECT body FROM notes").fetchall() == [("precious",)]
    conn.close()


def test_move_aside_keeps_the_files_under_a_new_name(tmp_path):
    path = tmp_path / "x.sqlite"
    path.write_bytes(b"garbage" * 1000)
    Path(f"{path}-wal").write_bytes(b"wal")
    first = move_aside(path)
    path.write_bytes(b"garbage again")
    second = move_aside(path)
    assert first != second and not path.exists()
    assert first.read_bytes() == b"garbage" * 1000 and Path(f"{first}-wal").read_bytes() == b"wal"
    assert second.read_bytes() == b"garbage again" and second.name.startswith("x.sqlite.corrupt-")


def test_copies_set_aside_keep_the_first_and_the_latest(tmp_path):
    # A disk that keeps damaging the index: the copies do not pile up; the
    # first one (which may never have been memext's) and the latest stay,
    # and so does any copy whose header memext did not stamp.
    path = tmp_path / "x.sqlite"

    def damaged_index(i: int) -> bytes:
        return (b"SQLite format 3\x00" + bytes(52) + APPLICATION_ID.to_bytes(4, "big")).ljust(4096, b"\x00") + f"page {i}".encode()

    moved = []
    for i in range(7):
        path.write_bytes(b"not a memext file" if i == 2 else damaged_index(i))
        Path(f"{path}-wal").write_bytes(f"wal {i}".encode())
        moved.append(move_aside(path))
    kept = [moved[0], moved[2], moved[5], moved[6]]
    assert sorted(p for p in tmp_path.iterdir() if not p.name.endswith("-wal")) == sorted(kept)
    assert [p.read_bytes()[-6:] for p in (moved[0], moved[5], moved[6])] == [b"page 0", b"page 5", b"page 6"]
    assert moved[2].read_bytes() == b"not a memext file"
    assert sorted(p for p in tmp_path.iterdir() if p.name.endswith("-wal")) == sorted(Path(f"{p}-wal") for p in kept)
    assert aside_copies(path) == kept


def test_a_rebuild_shadow_starts_with_the_embedding_cache(tmp_path):
    store = Store(tmp_path / "a.sqlite")
    try:
        store.cache_put(CacheKey("p", "m", "e"), {"h1": unit(1), "h2": unit(2)})
        fill(store, 3)
        shadow = store.open_shadow()
        try:
            assert shadow.path != store.path and shadow.path.name.startswith("a.sqlite.rebuild-")
            assert shadow.cache_count() == 2 and shadow.chunk_count() == 0
            assert np.allclose(shadow.cache_get(CacheKey("p", "m", "e"), ["h2"])["h2"], unit(2))
        finally:
            shadow.discard()
        assert not shadow.path.exists() and store.chunk_count() == 3
    finally:
        store.close()


def test_meta_is_read_once_per_data_version(tmp_path):
    # A search asks for several meta keys; one read of the table serves them
    # until this connection writes or refresh() sees another one's write.
    path = tmp_path / "m.sqlite"
    with Store(path) as reader, Store(path) as writer:
        with writer.transaction():
            writer.set_meta("k", "1")
        reader.refresh()
        statements: list[str] = []
        reader.conn.set_trace_callback(statements.append)
        assert [reader.get_meta("k") for _ in range(5)] == ["1"] * 5 and reader.get_meta("dims") is None
        assert sum("FROM meta" in s for s in statements) <= 1
        with writer.transaction():
            writer.set_meta("k", "2")
        assert reader.refresh() is False and reader.get_meta("k") == "2"  # another connection's write
        with reader.transaction():
            reader.set_meta("k", "3")
        assert reader.get_meta("k") == "3"  # its own write, at once
        reader.conn.set_trace_callback(None)


# -- the paths filter (after / before) and file dates ------------------------------------------


@pytest.mark.parametrize(
    "options",
    [StoreOptions(vector_backend="vec0"), StoreOptions(vector_backend="numpy"), StoreOptions(vector_enabled=False)],
    ids=["vec0", "numpy", "blob"],
)
def test_paths_filter_applies_before_the_top_k(tmp_path, options):
    store = Store(tmp_path / "a.sqlite", options)
    fill(store, 40)
    kept = [f"memory/f{i}.md" for i in range(30, 40)]
    q = unit(7)  # closest to f7, which the filter leaves out
    got = store.vector_search(q, 5, paths=kept)
    rowids = {i + 1: f"memory/f{i}.md" for i in range(40)}
    assert len(got) == 5 and {rowids[r] for r, _ in got} <= set(kept)
    brute = sorted(((float(np.dot(unit(i), q)), i + 1) for i in range(30, 40)), reverse=True)[:5]
    assert [r for r, _ in got] == [r for _, r in brute]
    assert np.allclose([s for _, s in got], [s for s, _ in brute], atol=1e-5)
    # The keyword side: every chunk holds "text"; only the kept files answer, k of them.
    hits = store.keyword_search('"text"', 5, paths=kept)
    assert len(hits) == 5 and {rowids[r] for r, _ in hits} <= set(kept)
    assert store.keyword_search('"text"', 50, paths=set(kept[:3])) and len(store.keyword_search('"text"', 50, paths=kept[:3])) == 3
    # Nothing kept: nothing found; sources and paths combine.
    assert store.vector_search(q, 5, paths=[]) == [] and store.keyword_search('"text"', 5, paths=()) == []
    assert store.vector_search(q, 5, ["sessions"], kept) == [] and store.keyword_search('"text"', 5, ["sessions"], kept) == []
    assert len(store.vector_search(q, 5, ["memory"], kept)) == 5
    store.close()


def test_many_paths_fit_in_one_query(tmp_path):
    store = Store(tmp_path / "a.sqlite")
    fill(store, 5)
    kept = [f"memory/other-{i}.md" for i in range(50_000)] + ["memory/f3.md"]  # past SQLite's parameter limits
    assert [r for r, _ in store.keyword_search('"text"', 5, paths=kept)] == [4]
    assert [r for r, _ in store.vector_search(unit(0), 5, paths=kept)] == [4]
    store.close()


def test_file_day_is_stored_and_an_older_index_gets_it(tmp_path):
    path = tmp_path / "a.sqlite"
    store = Store(path)
    chunk = NewChunk("c1", 1, 3, "h", "---\ndate: 2026-02-14\n---", unit(1))
    store.replace_file("notes/x.md", "memory", "hx", 1, 1, [chunk], "m", day="2026-02-14")
    store.replace_file("memory/2026-03-01.md", "memory", "hd", 1, 1, [NewChunk("c2", 1, 1, "h2", "plain", unit(2))], "m", day="2026-03-01")
    store.replace_file("MEMORY.md", "memory", "hm", 1, 1, [NewChunk("c3", 1, 1, "h3", "plain", unit(3))], "m")
    expected = {"notes/x.md": "2026-02-14", "memory/2026-03-01.md": "2026-03-01", "MEMORY.md": None}
    assert {p: r.day for p, r in store.file_rows().items()} == expected
    # An index made before files.day existed: the column is added and filled
    # from the names and the first chunks' front matter.
    store.conn.execute("ALTER TABLE files DROP COLUMN day")
    store.close()
    reopened = Store(path)
    assert {p: r.day for p, r in reopened.file_rows().items()} == expected
    reopened.close()


def test_common_words_are_counted_from_the_vocabulary_as_a_match_counts_them(tmp_path, monkeypatch):
    import memext.engine.store.sqlite.chunks as chunks_module

    store = Store(tmp_path / "a.sqlite", StoreOptions(vector_enabled=False))
    texts = ["this was the plan", "being there was the point", "the end", "having this", "was it", "nothing common"]
    for i, text in enumerate(texts * 3):
        store.replace_file(f"memory/f{i}.md", "memory", f"h{i}", 1, 1, [NewChunk(f"id{i}", 1, 1, f"t{i}", text, None)], "m")
    # Replaced and deleted chunks leave delete markers in the keyword index.
    store.replace_file("memory/f0.md", "memory", "h0b", 2, 1, [NewChunk("id0b", 1, 1, "t0b", "the was", None)], "m")
    store.delete_file("memory/f1.md")
    words = ["this", "was", "the", "being", "having", "it", "there", "nothing"]
    by_match = store.term_doc_counts(words)
    assert by_match["the"] == 8 and by_match["was"] == 8 and by_match["being"] == 2 and by_match["nothing"] == 3

    store.close()
    monkeypatch.setattr(chunks_module, "VOCAB_COUNTS_FROM", 0)
    store = Store(tmp_path / "a.sqlite", StoreOptions(vector_enabled=False))
    changes = store.conn.total_changes
    assert store.term_doc_counts(words) == by_match
    tables = [r[0] for r in store.conn.execute("SELECT name FROM sqlite_temp_master WHERE type = 'table'")]
    assert tables == ["memext_chunks_vocab"]  # the stop words were read from it
    # Nothing was written: the counts stay remembered until the data changes.
    assert store.conn.total_changes == changes
    store.close()


def test_fts_tokens_are_sqlites_stems():
    from memext.engine.store.sqlite.chunks import fts_tokens

    assert fts_tokens(["was", "the", "being", "e-mail", "--"]) == {"was": "wa", "the": "the", "being": "be", "e-mail": None, "--": None}


def _summary_rows(store: Store) -> int:
    return store.conn.execute("SELECT count(*) FROM file_summary").fetchone()[0]


def _table_stats(path: Path) -> dict:
    conn, _ = db.connect(path, load_vec=False)
    try:
        rows = conn.execute("SELECT path, mtime_ns, size, hash IS NOT NULL FROM files").fetchall()
    finally:
        conn.close()
    return {p: (m, s, bool(c)) for p, m, s, c in rows}


def test_the_file_list_summary_is_rewritten_after_writes_and_dropped_by_any_of_them(tmp_path):
    path = tmp_path / "a.sqlite"
    store = Store(path, StoreOptions(vector_enabled=False))
    for i in range(3):
        store.replace_file(f"memory/f{i}.md", "memory", f"h{i}", 10 + i, 100 + i, [NewChunk(f"id{i}", 1, 1, f"t{i}", "text", None)], "m")
    store.replace_file("memory/gap.md", "memory", None, -1, 7, [], "m")  # unverified mtime, vectors missing
    assert _summary_rows(store) == 0  # every write drops it ...
    store.finish_writes()
    assert _summary_rows(store) == 1  # ... and a sync's end writes it again
    expected = _table_stats(path)
    assert expected["memory/gap.md"] == (-1, 7, False)
    assert {p: tuple(s) for p, s in store.file_stats().items()} == expected
    store.close()
    # Another program writing the index (here plain SQLite) drops it too:
    # the triggers are in the index file, not in memext.
    conn, _ = db.connect(path, load_vec=False)
    with conn:
        conn.execute("UPDATE files SET mtime_ns = 99 WHERE path = 'memory/f0.md'")
        conn.execute("DELETE FROM files WHERE path = 'memory/f1.md'")
    conn.close()
    reopened = Store(path, StoreOptions(vector_enabled=False))
    assert _summary_rows(reopened) == 0
    expected = _table_stats(path)
    assert expected["memory/f0.md"][0] == 99 and "memory/f1.md" not in expected
    assert {p: tuple(s) for p, s in reopened.file_stats().items()} == expected  # read from files
    reopened.finish_writes()
    assert _summary_rows(reopened) == 1
    reopened.close()
    again = Store(path, StoreOptions(vector_enabled=False))
    assert {p: tuple(s) for p, s in again.file_stats().items()} == expected  # read from the summary
    again.close()


def test_an_index_made_before_the_file_list_summary_gets_it_at_its_next_open(tmp_path):
    path = tmp_path / "a.sqlite"
    store = Store(path, StoreOptions(vector_enabled=False))
    for i in range(3):
        store.replace_file(f"memory/f{i}.md", "memory", f"h{i}", 10 + i, 100 + i, [NewChunk(f"id{i}", 1, 1, f"t{i}", "text", None)], "m")
    for statement in ("DROP TABLE file_summary", "DROP TRIGGER file_summary_insert", "DROP TRIGGER file_summary_update"):
        store.conn.execute(statement)
    store.close()
    reopened = Store(path, StoreOptions(vector_enabled=False))
    names = {r[0] for r in reopened.conn.execute("SELECT name FROM sqlite_master WHERE name LIKE 'file_summary%'")}
    assert names == {"file_summary", "file_summary_insert", "file_summary_update", "file_summary_delete"}
    assert _summary_rows(reopened) == 1  # written at once: the next search reads it
    assert {p: tuple(s) for p, s in reopened.file_stats().items()} == _table_stats(path)
    reopened.close()


def test_a_damaged_file_list_summary_is_not_believed(tmp_path):
    path = tmp_path / "a.sqlite"
    store = Store(path, StoreOptions(vector_enabled=False))
    store.replace_file("memory/f0.md", "memory", "h0", 10, 100, [NewChunk("id0", 1, 1, "t0", "text", None)], "m")
    store.finish_writes()
    store.conn.execute("UPDATE file_summary SET sizes = x'00'")  # lengths no longer agree
    store.close()
    reopened = Store(path, StoreOptions(vector_enabled=False))
    assert {p: tuple(s) for p, s in reopened.file_stats().items()} == {"memory/f0.md": (10, 100, True)}
    reopened.close()


def test_a_file_list_summary_dropped_under_an_open_index_is_not_missed(tmp_path):
    path = tmp_path / "a.sqlite"
    store = Store(path, StoreOptions(vector_enabled=False))
    store.replace_file("memory/f0.md", "memory", "h0", 10, 100, [NewChunk("id0", 1, 1, "t0", "text", None)], "m")
    store.finish_writes()
    conn, _ = db.connect(path, load_vec=False)
    with conn:
        conn.execute("DROP TABLE file_summary")
    conn.close()
    assert {p: tuple(s) for p, s in store.file_stats().items()} == {"memory/f0.md": (10, 100, True)}
    store.close()
