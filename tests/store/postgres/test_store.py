"""The PostgreSQL store itself (store.driver = "postgres"), against a real
PostgreSQL 16 with pgvector on 127.0.0.1: ranking parity with FTS5,
agents side by side, the shared embedding cache, shadow rebuilds seen by
readers, HNSW by size, the advisory writer lock, and what users see when
the server is away. (The engine suite runs on this store too: conftest's
``store_backend``.)

Over 500 lines because each test starts from the same live server and its
fixtures; the faces' end-to-end tests live in test_postgres_faces.py."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import numpy as np
import pytest
from conftest import TESTS, HashingProvider, index_counts, make_agent
from pg_server import PASSWORD, PostgresServer

from memext.engine import IndexBuildError, MemextError, MemoryIndex
from memext.engine.config import parse_config
from memext.engine.errors import ConfigError, LockTimeout, StoreUnavailable
from memext.engine.store import CacheKey, NewChunk, open_store
from memext.engine.store.postgres import vectors as pg_vectors
from memext.engine.store.postgres.store import PostgresStore
from memext.engine.store.postgres.url import agent_schema, redact_url
from memext.engine.store.sqlite.store import Store
from memext.engine.text import fts_match_expression, query_terms


def pg_agent(ws: Path, url: str, agent_id: str = "test", db_path: Path | None = None, **settings):
    store = {"driver": "postgres", "url": url, **settings.pop("store", {})}
    return make_agent(ws, agent_id=agent_id, db_path=db_path, store=store, **settings)


def admin_sql(url: str, query: str, params=()) -> list[tuple]:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        cur = conn.execute(query, params)
        return cur.fetchall() if cur.description else []


def kill_memext_connections(url: str) -> int:
    """Drop every memext connection to the test database, as a server
    restart or a network cut would."""
    rows = admin_sql(
        url,
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() "
        "AND application_name LIKE 'memext%%' AND pid <> pg_backend_pid()",
    )
    return len(rows)


def test_keyword_scores_equal_fts5_bm25(example_workspace, tmp_path, pg_url):
    """Both backends see the same terms (FTS5's tokenizer: Porter stems, CJK
    grams) and score them with the same formula, so the same chunks come
    back in the same order with the same bm25."""
    (example_workspace / "memory" / "2026-10-20.md").write_text(
        "# 2026-10-20\n\n- 今天和同事喝咖啡，讨论了项目计划。\n- 東京の友人と京都で会う予定。\n"
        "- Zwischenspeicherung der Embeddings, commit a828e60b.\n- Painted the fences; painting is relaxing.\n",
        encoding="utf-8",
    )
    sqlite_agent = make_agent(example_workspace, db_path=tmp_path / "idx.sqlite", provider="none")
    pg = pg_agent(example_workspace, pg_url, provider="none")
    for agent in (sqlite_agent, pg):
        with MemoryIndex(agent, provider=None) as idx:
            idx.sync()
    lite = Store(tmp_path / "idx.sqlite")
    post = open_store(pg, tmp_path / "unused.sqlite")
    try:
        assert post.chunk_count() == lite.chunk_count() > 10
        queries = [
            "How much food does Biscuit get?",
            "painting fence",
            "咖啡",
            "京都",
            "zwischenspeicherung",
            "a828e60",
            "the vet appointment",
            "what did we decide about the budget",
        ]
        for q in queries:
            terms = query_terms(q)
            assert post.term_doc_counts(terms) == lite.term_doc_counts(terms), q
            match = fts_match_expression(terms)
            want, got = lite.keyword_search(match, 20), post.keyword_search(match, 20)
            assert want, q

            def place(store, hits):
                return [(c.path, c.start_line, c.end_line) for c in map(store.chunks([r for r, _ in hits]).get, [r for r, _ in hits])]

            assert place(post, got) == place(lite, want), q
            assert np.allclose([s for _, s in got], [s for _, s in want], rtol=1e-9, atol=1e-12), q
        # Filters: by source, and by paths (time filters use them).
        match = fts_match_expression(query_terms("Biscuit food"))
        some = {post.chunks([r]).get(r).path for r, _ in post.keyword_search(match, 3)}
        assert {post.chunks([r])[r].path for r, _ in post.keyword_search(match, 20, paths=some)} == some
        assert post.keyword_search(match, 20, ["sessions"]) == [] and post.keyword_search(match, 20, paths=[]) == []
    finally:
        lite.close()
        post.close()


def test_agents_share_a_database_but_not_their_memory(workspace, example_workspace, tmp_path, pg_url):
    (workspace / "memory" / "2026-01-08.md").write_text("- the quokka project starts\n")
    home = pg_agent(example_workspace, pg_url, agent_id="home")
    work = pg_agent(workspace, pg_url, agent_id="work")
    provider = HashingProvider()
    with MemoryIndex(home, provider=provider) as h, MemoryIndex(work, provider=provider) as w:
        h.sync()
        w.sync()
        assert h.search("Biscuit").results and not any("Biscuit" in r.snippet for r in w.search("Biscuit", min_score=0))
        assert w.search("quokka").results and not any("quokka" in r.snippet for r in h.search("quokka", min_score=0))
        assert {r.path for r in w.search("Biscuit dog food vet", min_score=0)} <= {
            "MEMORY.md",
            "memory/2026-01-05.md",
            "memory/2026-01-06.md",
            "memory/2026-01-08.md",
        }
        assert h.status().cache.entries != w.status().cache.entries  # caches are per agent too
        assert w.status().db_path.endswith("(schema memext_work)")
    schemas = {r[0] for r in admin_sql(pg_url, "SELECT nspname FROM pg_namespace WHERE nspname LIKE 'memext%%'")}
    assert schemas == {"memext", "memext_home", "memext_work"}
    assert agent_schema("x" * 64) != agent_schema("x" * 63 + "y") and len(agent_schema("x" * 64)) <= 63


def test_a_second_machine_embeds_nothing_and_needs_no_rebuild(workspace, tmp_path, pg_url):
    """Machine B (its own state folder, its copy of the memory elsewhere)
    shares agent "team" with machine A: A's vectors serve B."""
    copy = tmp_path / "elsewhere" / "notes"
    import shutil

    shutil.copytree(workspace, copy)
    a, b = HashingProvider(), HashingProvider()
    with MemoryIndex(pg_agent(workspace, pg_url, agent_id="team", db_path=tmp_path / "a" / "team.sqlite"), provider=a) as idx:
        assert idx.sync().texts_embedded == 3 + 7  # three chunks, seven entries
    with MemoryIndex(pg_agent(copy, pg_url, agent_id="team", db_path=tmp_path / "b" / "team.sqlite"), provider=b) as idx:
        assert not idx.needs_sync() or not idx.settings_changed()  # the index holds no machine's paths
        report = idx.sync()
        assert not report.rebuilt and b.texts_embedded == 0
        forced = idx.sync(force=True)
        assert forced.rebuilt and forced.cache_hits == 3 + 7 and b.texts_embedded == 0
        assert idx.search("green tea")[0].path == "MEMORY.md"
    # Nothing local but this machine's use log (engine/memory/use_log.py), from B's search.
    assert not (tmp_path / "a").exists() and [p.name for p in (tmp_path / "b").iterdir()] == ["team.sqlite.uses"]


def test_readers_see_the_old_index_until_the_rebuild_commits(workspace, tmp_path, pg_url):
    agent = pg_agent(workspace, pg_url)
    with MemoryIndex(agent, provider=None) as idx:
        idx.sync()
    (workspace / "memory" / "2026-01-09.md").write_text("- the zeppelin hangar plan\n")
    halfway, go_on = threading.Event(), threading.Event()

    def progress(p):
        if p.phase == "write" and not halfway.is_set():
            halfway.set()
            assert go_on.wait(30)

    errors: list[BaseException] = []

    def rebuild():
        try:
            with MemoryIndex(agent, provider=None) as w:
                w.sync(force=True, progress=progress)
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    with MemoryIndex(agent, provider=None) as reader:
        before = [h.citation for h in reader.search("Anna")]
        t = threading.Thread(target=rebuild)
        t.start()
        try:
            assert halfway.wait(30)
            # Mid-rebuild: the old index, whole, and nothing of the new one.
            assert [h.citation for h in reader.search("Anna")] == before
            assert not reader.search("zeppelin", min_score=0).results and reader.status().total_files == 3
            shadows = admin_sql(pg_url, "SELECT nspname FROM pg_namespace WHERE nspname LIKE 'memext\\_rebuild\\_%%'")
            assert len(shadows) == 1
        finally:
            go_on.set()
            t.join(60)
        assert not errors
        assert reader.search("zeppelin")[0].path == "memory/2026-01-09.md" and reader.status().total_files == 4
    assert admin_sql(pg_url, "SELECT nspname FROM pg_namespace WHERE nspname LIKE 'memext\\_rebuild\\_%%'") == []


def test_hnsw_above_the_threshold_and_the_choice_in_status(workspace, tmp_path, pg_url, monkeypatch):
    for i in range(40):
        (workspace / "memory" / f"2026-02-{i:02d}.md").write_text(f"- topic{i % 5} meeting {i} about budget{i}\n")
    agent = pg_agent(workspace, pg_url)
    provider = HashingProvider()
    with MemoryIndex(agent, provider=provider) as idx:
        idx.sync()
        assert idx.status().vector.backend == "exact"
        store = open_store(agent, tmp_path / "x")
        q = np.asarray(provider.embed_query("topic3 meeting budget"), dtype=np.float32)
        q /= np.linalg.norm(q)
        exact = store.vector_search(q, 10)
        monkeypatch.setattr(pg_vectors, "HNSW_ABOVE", 20)
        (workspace / "memory" / "2026-03-01.md").write_text("- one more note\n")
        idx.sync()  # the writer builds the index after its writes
        st = idx.status()
        assert st.vector.backend == "hnsw" and st.vector.store == "pgvector"
        store.refresh()
        approx = store.vector_search(q, 10)
        assert [r for r, _ in approx][:5] == [r for r, _ in exact][:5]  # 44 vectors: HNSW is exact here
        assert store.vector_search(q, 5, ["sessions"]) == []  # filtered: falls back to an exact scan
        only = store.chunks([r for r, _ in exact[:2]])
        some = {c.path for c in only.values()}
        assert {store.chunks([r])[r].path for r, _ in store.vector_search(q, 10, paths=some)} == some
        store.close()
        assert idx.search("topic3 budget").mode == "hybrid"
        idx.sync(force=True)  # a rebuild builds the index in the shadow, before the swap
        assert idx.status().vector.backend == "hnsw"
    indexes = admin_sql(pg_url, "SELECT indexdef FROM pg_indexes WHERE schemaname = 'memext_test' AND indexname = 'vectors_hnsw'")
    assert len(indexes) == 1 and "hnsw" in indexes[0][0]


def stats_and_rows(url: str, schema: str = "memext_test") -> tuple[tuple, tuple]:
    """The keyword statistics the store keeps, and the same counted from its rows."""
    kept = admin_sql(url, f'SELECT docs, tokens FROM "{schema}".stats')[0]
    counted = admin_sql(url, f'SELECT count(*), coalesce(sum(length), 0) FROM "{schema}".chunks')[0]
    return tuple(kept), tuple(counted)


def test_keyword_statistics_follow_every_write(workspace, tmp_path, pg_url):
    """Statistics are written once a transaction; they match the rows after
    adds, edits, deletions, a rebuild, and a write that failed."""
    agent = pg_agent(workspace, pg_url)
    with MemoryIndex(agent, provider=HashingProvider()) as idx:
        idx.sync()
        kept, counted = stats_and_rows(pg_url)
        assert kept == counted and counted[0] == 3
        version = admin_sql(pg_url, 'SELECT version FROM "memext_test".stats')[0][0]
        (workspace / "memory" / "2026-01-05.md").write_text("# 2026-01-05\n\n" + "- a much longer note about the deploy\n" * 40)
        (workspace / "memory" / "2026-01-06.md").unlink()
        (workspace / "memory" / "2026-01-07.md").write_text("- a new note\n")
        idx.sync()
        kept, counted = stats_and_rows(pg_url)
        assert kept == counted and counted[0] > 3
        # Readers cache per version: every committed write moves it on.
        assert admin_sql(pg_url, 'SELECT version FROM "memext_test".stats')[0][0] > version
        idx.sync(force=True)
        assert stats_and_rows(pg_url)[0] == stats_and_rows(pg_url)[1] == counted
        assert idx.search("deploy")[0].path == "memory/2026-01-05.md"
    store = PostgresStore(pg_url, agent.id, tmp_path / "local.sqlite")
    try:
        with pytest.raises(ValueError, match="must be rebuilt"):
            with store.transaction():
                store.replace_file("x.md", "memory", "h", 1, 1, [NewChunk("x1", 1, 1, "tx", "words words", None)], "m")
                store.replace_file("y.md", "memory", "h", 1, 1, [NewChunk("y1", 1, 1, "ty", "y", np.ones(3, dtype=np.float32))], "m")
        assert stats_and_rows(pg_url) == (counted, counted)  # both files rolled back, and their counts with them
        store.replace_file("x.md", "memory", "h", 1, 1, [NewChunk("x1", 1, 1, "tx", "words words", None)], "m")
        kept, now = stats_and_rows(pg_url)
        assert kept == now == (counted[0] + 1, counted[1] + 2)
    finally:
        store.close()


def test_a_rebuild_fills_its_shadow_then_builds_the_indexes_and_vacuums(workspace, tmp_path, pg_url, monkeypatch):
    """A shadow is filled without indexes and gets them before the swap; a
    large write is vacuumed, so a term's postings come from the index alone."""
    from memext.engine.store.postgres import store as postgres

    for i in range(30):
        (workspace / "memory" / f"2026-02-{i:02d}.md").write_text(f"- budget meeting {i} with the quokka team\n")
    agent = pg_agent(workspace, pg_url)
    monkeypatch.setattr(postgres, "VACUUM_AFTER_CHUNKS", 20)
    seen: list[list[str]] = []

    def progress(p):
        if p.phase == "write" and not seen:
            seen.append([r[0] for r in admin_sql(pg_url, "SELECT indexname FROM pg_indexes WHERE schemaname LIKE 'memext\\_rebuild\\_%%'")])

    with MemoryIndex(agent, provider=HashingProvider()) as idx:
        idx.sync(force=True, progress=progress)
        deferred = {"chunks_pkey", "chunks_id_key", "chunks_path", "postings_pkey", "postings_rowid", "vectors_pkey"}
        assert len(seen) == 1 and "files_pkey" in seen[0] and not deferred & set(seen[0])  # the shadow, mid-fill
        indexes = {r[0] for r in admin_sql(pg_url, "SELECT indexname FROM pg_indexes WHERE schemaname = 'memext_test'")}
        assert deferred <= indexes
        vacuumed = admin_sql(
            pg_url,
            "SELECT relname FROM pg_stat_user_tables WHERE schemaname = 'memext_test' AND last_vacuum IS NOT NULL "
            "AND last_analyze IS NOT NULL ORDER BY relname",
        )
        assert [r[0] for r in vacuumed] == ["chunks", "entries", "postings", "vectors"]
        import psycopg

        with psycopg.connect(pg_url, autocommit=True) as conn:
            # 30 files: the planner would rather read the whole table
            conn.execute("SET enable_seqscan = off; SET enable_bitmapscan = off")
            plan = "\n".join(
                r[0]
                for r in conn.execute(
                    "EXPLAIN (ANALYZE, COSTS OFF) SELECT rowid, tf, length FROM memext_test.postings WHERE term = 'quokka'"
                )
            )
        assert "Index Only Scan" in plan and "Heap Fetches: 0" in plan, plan
        with pytest.raises(Exception, match="duplicate key"):
            admin_sql(pg_url, "INSERT INTO memext_test.postings SELECT term, rowid, tf, length FROM memext_test.postings LIMIT 1")
        assert idx.search("quokka budget meeting").results


def test_one_writer_across_machines_and_who_holds_the_lock(workspace, tmp_path, pg_url):
    agent = pg_agent(workspace, pg_url)
    code = textwrap.dedent(
        f"""
        import sys, time
        sys.path.insert(0, {str(TESTS)!r})
        from conftest import make_agent
        from pathlib import Path
        from memext.engine.store.drivers import writer_lock
        agent = make_agent(Path({str(workspace)!r}), store={{"driver": "postgres", "url": {pg_url!r}}})
        with writer_lock(agent, Path("unused"), timeout=5):
            print("held", flush=True)
            sys.stdin.readline()
        """
    )
    holder = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        with MemoryIndex(agent, provider=None) as idx:
            assert idx.sync_running() and idx.status().syncing
            with pytest.raises(LockTimeout) as caught:
                idx.sync(lock_timeout=0.3)
        message = str(caught.value)
        assert f"pid {holder.pid} on " in message and redact_url(pg_url) in message and "gave up after 0.3 s" in message
    finally:
        holder.stdin.close()
        holder.wait(30)
    with MemoryIndex(agent, provider=None) as idx:  # the holder ended: its lock went with its connection
        assert not idx.sync_running() and idx.sync().files_indexed == 3


def test_the_password_is_never_shown(workspace, tmp_path, pg_server, pg_url, monkeypatch, capsys):
    monkeypatch.delenv("PGPASSWORD")
    inline = pg_url.replace("postgres@", f"postgres:{PASSWORD}@")
    agent = pg_agent(workspace, inline)
    with MemoryIndex(agent, provider=None) as idx:
        idx.sync()
        shown = repr(idx.status().to_dict()) + idx.status().db_path
        assert PASSWORD not in shown and "postgres@127.0.0.1" in shown
    # A wrong password in the URL: the error says so, without the password.
    wrong = pg_url.replace("postgres@", "postgres:Wr0ngPassw0rd@")
    with pytest.raises(StoreUnavailable) as caught:
        MemoryIndex(pg_agent(workspace, wrong), provider=None)
    assert "Wr0ngPassw0rd" not in str(caught.value) and redact_url(wrong) in str(caught.value)
    assert "password authentication failed" in str(caught.value)
    # ~/.pgpass (here through PGPASSFILE) supplies it as libpq does.
    pgpass = tmp_path / "pgpass"
    pgpass.write_text(f"127.0.0.1:{pg_server.port}:*:postgres:{PASSWORD}\n")
    pgpass.chmod(0o600)
    monkeypatch.setenv("PGPASSFILE", str(pgpass))
    with MemoryIndex(pg_agent(workspace, pg_url), provider=None) as idx:
        assert idx.search("Anna").results
    assert redact_url("postgresql://u:p%40ss@h:5/db?sslmode=require&password=x") == "postgresql://u@h:5/db?sslmode=require"


def test_config_checks_the_driver_and_url(tmp_path):
    def load(store: dict):
        return parse_config({"agents": [{"id": "a", "workspace": str(tmp_path), "memory_search": {"store": store}}]})

    with pytest.raises(ConfigError, match=r"store.driver = \"postgres\" needs store.url"):
        load({"driver": "postgres"})
    with pytest.raises(ConfigError, match="must be a postgresql:// URL") as caught:
        load({"driver": "postgres", "url": "mysql://u:hunter22@h/db"})
    assert "hunter22" not in str(caught.value)
    with pytest.raises(ConfigError, match='must be one of "sqlite", "postgres"'):
        load({"driver": "mongo"})
    with pytest.raises(ConfigError, match="vectors are searched by pgvector"):
        load({"driver": "postgres", "url": "postgresql://h/db", "vector": {"backend": "numpy"}})
    agent = load({"driver": "postgres", "url": "postgres://memext@db.example.org:6543/team"}).agents[0]
    assert agent.settings.store.url.endswith("/team") and agent.settings.store.driver == "postgres"


def test_a_missing_extra_is_one_line_naming_it(workspace, tmp_path):
    # TEST DOUBLE for the fault: psycopg is installed here, so the import
    # is made to fail (sys.modules[...] = None) to see what a user without
    # the extra gets.
    code = textwrap.dedent(
        f"""
        import sys
        sys.modules["psycopg"] = None
        sys.path.insert(0, {str(TESTS)!r})
        from conftest import make_agent
        from pathlib import Path
        from memext.engine import MemoryIndex, MemextError
        agent = make_agent(Path({str(workspace)!r}), store={{"driver": "postgres", "url": "postgresql://u@127.0.0.1:1/x"}})
        try:
            MemoryIndex(agent, provider=None)
        except MemextError as exc:
            print(exc)
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == 'the postgres store needs psycopg: pip install "memext[postgres]"', out.stderr


def test_a_server_that_is_down_is_a_clear_error_never_an_empty_result(workspace, tmp_path, monkeypatch):
    """Its own server, stopped and started under the index."""
    with PostgresServer() as pg:
        monkeypatch.setenv("PGPASSWORD", PASSWORD)
        url = pg.new_database()
        agent = pg_agent(workspace, url)
        with MemoryIndex(agent, provider=None) as idx:
            idx.sync()
            assert idx.search("Anna").results
            pg.stop_server()
            for call in (lambda: idx.search("Anna"), idx.status, idx.sync):
                with pytest.raises(MemextError) as caught:
                    call()
                assert f"127.0.0.1:{pg.port}" in str(caught.value) and "PostgreSQL server" in str(caught.value)
            with pytest.raises(StoreUnavailable, match="cannot connect to the PostgreSQL server at postgresql://postgres@127.0.0.1"):
                MemoryIndex(agent, provider=None)
            pg.start_server()
            # Back: the same index object reconnects by itself.
            assert idx.search("Anna").results and idx.status().total_files == 3
    port = pg.port
    with pytest.raises(StoreUnavailable, match=f"127.0.0.1:{port}/"):
        MemoryIndex(agent, provider=None)


def test_a_dropped_connection_mid_sync_leaves_the_index_as_it_was(workspace, tmp_path, pg_url):
    agent = pg_agent(workspace, pg_url)
    provider = HashingProvider()
    with MemoryIndex(agent, provider=provider) as idx:
        idx.sync()
        before = [(h.citation, h.score) for h in idx.search("Anna tea deploy")]
        rows_before = index_counts(agent)
    for i in range(5):
        (workspace / "memory" / f"2026-01-2{i}.md").write_text(f"- new note {i} about the lighthouse\n")
    provider.batch_group_size = 2  # a sync writes groups of two chunks, one transaction each

    def cut_after_a_group():
        """Drop every memext connection once a group is written (as a server
        restart or a network cut would), before the next one is."""
        fired: list[bool] = []

        def progress(p):
            if p.phase == "embed" and p.files_done >= 1 and not fired:
                fired.append(True)
                assert kill_memext_connections(pg_url) >= 1

        return progress

    # A rebuild cut short: the old index, whole; its shadow goes at the next rebuild.
    with MemoryIndex(agent, provider=provider) as idx:
        with pytest.raises(IndexBuildError, match="previous index is kept") as caught:
            idx.sync(force=True, progress=cut_after_a_group())
        assert "PostgreSQL server" in str(caught.value)
        assert [(h.citation, h.score) for h in idx.search("Anna tea deploy")] == before
        assert index_counts(agent) == rows_before
        assert not any("lighthouse" in r.snippet for r in idx.search("lighthouse", min_score=0))
    # An update cut short: the groups written before the cut stay, the one in
    # flight is rolled back whole, and the next sync finishes the job.
    with MemoryIndex(agent, provider=provider) as idx:
        with pytest.raises(MemextError, match="PostgreSQL server"):
            idx.sync(progress=cut_after_a_group())
        counts = index_counts(agent)
        assert counts["files"] == counts["paths"] == 5 and counts["chunks"] == counts["vectors"] == 5
        report = idx.sync()
        assert report.files_indexed == 3 and index_counts(agent)["files"] == 8
        assert len(idx.search("lighthouse", max_results=10).results) == 5
        idx.sync(force=True)
    assert admin_sql(pg_url, "SELECT nspname FROM pg_namespace WHERE nspname LIKE 'memext\\_rebuild\\_%%'") == []


def test_rowids_continue_across_a_rebuild(workspace, tmp_path, pg_url):
    """A rowid read just before a swap never names another chunk after it."""
    agent = pg_agent(workspace, pg_url)
    with MemoryIndex(agent, provider=None) as idx:
        idx.sync()
        store = open_store(agent, tmp_path / "x")
        old = set(store.chunks(range(1, 1000)))
        idx.sync(force=True)
        store.refresh()
        new = set(store.chunks(range(1, 1000)))
        assert old and new and not old & new and min(new) > max(old)
        store.close()


def test_the_store_interface_directly(tmp_path, pg_url):
    agent = pg_agent(tmp_path, pg_url)
    store = PostgresStore(pg_url, agent.id, tmp_path / "local.sqlite")
    try:
        unit = lambda i: np.eye(8, dtype=np.float32)[i % 8]  # noqa: E731
        store.replace_file("a.md", "memory", "h", 1, 10, [NewChunk("c1", 1, 2, "t1", "alpha beta", unit(1))], "m")
        store.replace_file("s.jsonl", "sessions", "h", 1, 10, [NewChunk("c2", 1, 1, "t2", "alpha gamma", unit(2))], "m")
        assert store.vector_search(unit(2), 5, ["sessions"])[0][1] == pytest.approx(1.0)
        assert [store.chunks([r])[r].path for r, _ in store.vector_search(unit(1), 5, ["memory"])] == ["a.md"]
        assert store.chunk_count() == 2 and store.chunk_count("sessions") == 1 and store.file_count("memory") == 1
        store.touch_file("a.md", 5, 11)
        assert store.file_rows()["a.md"].mtime_ns == 5
        store.delete_file("a.md")
        assert store.chunk_count() == 1 and store.keyword_search('"beta"', 5) == []
        key = CacheKey("p", "m", "e")
        store.cache_put(key, {f"h{i}": unit(i) for i in range(5)})
        store.cache_get(key, ["h0", "h1"])
        assert store.cache_prune(2) == 3 and set(store.cache_get(key, [f"h{i}" for i in range(5)])) == {"h0", "h1"}
        with pytest.raises(ValueError, match="must be rebuilt"):
            store.replace_file("b.md", "memory", "h", 1, 1, [NewChunk("c3", 1, 1, "t3", "x", np.ones(4, dtype=np.float32))], "m")
        assert store.file_count() == 1  # the failed write left nothing behind
        assert store.vector_store == "pgvector" and store.dims == 8 and store.fts_status().available
    finally:
        store.close()
    assert not os.path.exists(tmp_path / "local.sqlite")


def test_a_killed_test_run_leaves_no_server_behind(tmp_path):
    """The test server dies with the process that started it, however that
    process ends (a run killed by a timeout), and its folder goes at the next start."""
    import signal
    import socket
    import time

    from pg_server import remove_orphans

    code = textwrap.dedent(
        f"""
        import sys, time
        sys.path.insert(0, {str(TESTS)!r})
        from pg_server import PostgresServer
        pg = PostgresServer().start()
        print(pg.root, pg.port, flush=True)
        time.sleep(600)
        """
    )
    starter = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        root, port = starter.stdout.readline().split()
        socket.create_connection(("127.0.0.1", int(port)), timeout=5).close()  # it runs
    finally:
        starter.send_signal(signal.SIGKILL)
        starter.wait(30)
    deadline = time.monotonic() + 30
    while True:
        try:
            socket.create_connection(("127.0.0.1", int(port)), timeout=1).close()
        except OSError:
            break  # the server is gone
        assert time.monotonic() < deadline, "the server outlived the process that started it"
        time.sleep(0.1)
    assert Path(root).is_dir()
    remove_orphans()  # what the next PostgresServer() does first
    assert not Path(root).exists()
