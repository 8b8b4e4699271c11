"""PostgreSQL store vs SQLite on the same data: search latency, sync
throughput, and the network round trip under them.

    python bench/pg_bench.py [--out bench/out] [--sizes 10000,100000] [--url URL]

For each index size (in chunks; the synthetic workspaces of
bench/gen_workspace.py, 384-dim vectors of engine_bench's GivenVectors, so
no model runs), it builds the index in SQLite and in PostgreSQL with the
same provider and prints next to each other:

- first full sync: seconds and chunks per second (for PostgreSQL a
  rebuild: a shadow schema filled and swapped in, its HNSW index built
  when the size calls for one; reruns against ``--url`` time the same work);
- hybrid search p50/p95 over the same 200 queries through MemoryIndex
  (query vector given: the embedder is not timed), with what each backend
  used (vec0/numpy; exact/hnsw);
- the floor under PostgreSQL's figures, measured in the same run: a
  ``SELECT 1`` round trip on the same server, the statements one search
  sends (counted in the client: psycopg's ``Cursor.execute`` calls; the
  server's own count, ``pg_stat_database.xact_commit``, is flushed about
  once a second and lags), and an exact pgvector scan at that size, the
  floor of an exact search and what HNSW replaces.

Without ``--url`` it starts its own server (the ``pgserver`` wheel's
PostgreSQL 16 with pgvector, as the tests do) on 127.0.0.1 with a password,
so the figures include the loopback TCP path a client on the same machine
pays. Workspaces are kept in ``--out`` and reused; both backends index them
with chunking 400/80 (so the sizes stay those of docs/postgres.md).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests"))
from engine_bench import DIMS, GivenVectors, pct  # noqa: E402
from gen_workspace import generate, vocabulary, zipf_words  # noqa: E402

from memext.engine import MemoryIndex  # noqa: E402
from memext.engine.config import parse_config  # noqa: E402
from memext.engine.store.postgres.url import agent_schema  # noqa: E402

QUERIES = 200
#: Pinned, so 1,000 and 10,000 files of 130 lines make about 11k and 110k
#: chunks whatever the default chunking is (the figures of docs/postgres.md).
CHUNKING = {"tokens": 400, "overlap": 80}


def workspace(out: Path, chunks: int) -> tuple[Path, list[str]]:
    """engine_bench's synthetic workspace for about ``chunks`` chunks (kept in --out)."""
    ws = out / f"ws-{chunks}-chunks"
    if not (ws / "memory").is_dir():
        print(f"generating {max(1, chunks // 10)} files for ~{chunks} chunks...", flush=True)
        return ws, generate(ws, max(1, chunks // 10), lines=130)
    return ws, vocabulary(20_000, random.Random(1))


def pg_agent(ws: Path, url: str, agent_id: str):
    raw = {
        "agents": [
            {
                "id": agent_id,
                "workspace": str(ws),
                "memory_search": {"store": {"driver": "postgres", "url": url}, "sync": {"on_search": False}, "chunking": CHUNKING},
            }
        ]
    }
    return parse_config(raw).agents[0]


def sqlite_agent(ws: Path, db: Path):
    settings = {"store": {"path": str(db)}, "sync": {"on_search": False}, "chunking": CHUNKING}
    raw = {"agents": [{"id": "bench", "workspace": str(ws), "memory_search": settings}]}
    return parse_config(raw).agents[0]


def connect(url: str) -> Any:
    import psycopg

    return psycopg.connect(url, autocommit=True)


def round_trip_ms(url: str, n: int = 2000) -> dict:
    """``SELECT 1`` on an open connection: the floor of every statement."""
    with connect(url) as conn:
        for _ in range(50):
            conn.execute("SELECT 1").fetchone()
        times = []
        for _ in range(n):
            t = time.perf_counter()
            conn.execute("SELECT 1").fetchone()
            times.append((time.perf_counter() - t) * 1000)
    return {"p50_ms": round(pct(times, 50), 3), "p95_ms": round(pct(times, 95), 3)}


class StatementCounter:
    """Counts the statements psycopg sends while it is entered (every
    statement goes through ``Cursor.execute``, pipeline mode's too)."""

    def __init__(self) -> None:
        self.count = 0

    def __enter__(self) -> "StatementCounter":
        import psycopg

        self._cursor = psycopg.Cursor
        self._execute = psycopg.Cursor.execute
        counter = self

        def execute(cur: Any, *args: Any, **kwargs: Any) -> Any:
            counter.count += 1
            return counter._execute(cur, *args, **kwargs)

        psycopg.Cursor.execute = execute
        return self

    def __exit__(self, *exc: object) -> None:
        self._cursor.execute = self._execute


def search_times(idx: MemoryIndex, queries: list[str]) -> dict:
    for q in queries[:5]:  # warm-up (the numpy matrix, caches, the server's buffers)
        idx.search(q)
    times = []
    for q in queries:
        t = time.perf_counter()
        resp = idx.search(q)
        times.append((time.perf_counter() - t) * 1000)
        assert resp.mode == "hybrid", resp.notice
    return {"p50_ms": round(pct(times, 50), 2), "p95_ms": round(pct(times, 95), 2)}


def exact_scan_ms(url: str, schema: str, queries: list[np.ndarray]) -> dict:
    """pgvector's exact scan at this size (what HNSW replaces above 20k)."""
    from pgvector.psycopg import register_vector

    with connect(url) as conn:
        register_vector(conn)
        table = f'"{schema}".vectors'
        times = []
        for q in queries:
            with conn.transaction():
                conn.execute("SET LOCAL enable_indexscan = off")
                t = time.perf_counter()
                conn.execute(f"SELECT rowid FROM {table} ORDER BY embedding <=> %s LIMIT 24", (q,)).fetchall()
                times.append((time.perf_counter() - t) * 1000)
    return {"p50_ms": round(pct(times, 50), 2), "p95_ms": round(pct(times, 95), 2)}


def bench_size(out: Path, url: str, chunks: int) -> dict:
    ws, vocab = workspace(out, chunks)
    rng = random.Random(7)
    queries = [" ".join(zipf_words(vocab, rng.randint(2, 6), rng)) for _ in range(QUERIES)]
    result: dict = {}

    # SQLite: a fresh copy of the sync, timed, beside the kept index.
    fresh = out / f"pg-bench-sqlite-{chunks}.sqlite"
    for p in out.glob(fresh.name + "*"):
        p.unlink()
    with MemoryIndex(sqlite_agent(ws, fresh), provider=GivenVectors()) as idx:
        t = time.perf_counter()
        r = idx.sync()
        secs = time.perf_counter() - t
        result["sqlite_sync"] = {"s": round(secs, 1), "chunks_per_s": round(r.chunks_written / secs)}
        result["chunks"] = r.chunks_written
        result["sqlite_search"] = search_times(idx, queries)
        result["sqlite_backend"] = idx.status(check_files=False).vector.backend
    for p in out.glob(fresh.name + "*"):
        p.unlink()

    agent_id = f"bench{chunks}"
    with MemoryIndex(pg_agent(ws, url, agent_id), provider=GivenVectors()) as idx:
        t = time.perf_counter()
        r = idx.sync(force=True)
        secs = time.perf_counter() - t
        assert r.chunks_written == result["chunks"]
        result["pg_sync"] = {"s": round(secs, 1), "chunks_per_s": round(r.chunks_written / secs)}
        with StatementCounter() as sent:
            result["pg_search"] = search_times(idx, queries)
        result["pg_statements_per_search"] = round(sent.count / (len(queries) + 5), 1)
        result["pg_backend"] = idx.status(check_files=False).vector.backend
    with connect(url) as conn:
        row = conn.execute(f'SELECT value FROM "{agent_schema(agent_id)}".meta WHERE key = %s', ("vector_index_build_s",)).fetchone()
    result["pg_hnsw_build_s"] = float(row[0]) if row else None
    provider = GivenVectors()
    vectors = [np.asarray(provider.embed_query(q), dtype=np.float32) for q in queries[:50]]
    result["pg_exact_vector_scan"] = exact_scan_ms(url, agent_schema(agent_id), vectors)
    return result


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, default=HERE / "out")
    ap.add_argument("--sizes", default="10000,100000", help="index sizes in chunks")
    ap.add_argument("--url", help="an existing PostgreSQL database with pgvector (password from PGPASSWORD or ~/.pgpass)")
    a = ap.parse_args()
    a.out.mkdir(parents=True, exist_ok=True)
    figures: dict = {"dims": DIMS}
    with ExitStack() as stack:
        url = a.url
        if url is None:
            from pg_server import PASSWORD, PostgresServer

            server = stack.enter_context(PostgresServer())
            url = server.new_database()
            os.environ["PGPASSWORD"] = PASSWORD
            print(f"started PostgreSQL on 127.0.0.1:{server.port}", flush=True)
        with connect(url) as conn:
            figures["server"] = conn.execute("SHOW server_version").fetchone()[0]
            figures["pgvector"] = conn.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'").fetchone()[0]
        figures["round_trip"] = round_trip_ms(url)
        rt = figures["round_trip"]
        print(
            f"PostgreSQL {figures['server']}, pgvector {figures['pgvector']}; SELECT 1 round trip p50 {rt['p50_ms']} ms, p95 {rt['p95_ms']} ms",
            flush=True,
        )
        for size in [int(s) for s in a.sizes.split(",")]:
            r = bench_size(a.out, url, size)
            figures[f"size_{size}"] = r
            print(
                f"{r['chunks']} chunks x {DIMS} dims\n"
                f"  search p50/p95: sqlite ({r['sqlite_backend']}) {r['sqlite_search']['p50_ms']} / {r['sqlite_search']['p95_ms']} ms; "
                f"postgres ({r['pg_backend']}) {r['pg_search']['p50_ms']} / {r['pg_search']['p95_ms']} ms "
                f"[{r['pg_statements_per_search']} statements x {rt['p50_ms']} ms round trip; exact pgvector scan alone "
                f"{r['pg_exact_vector_scan']['p50_ms']} / {r['pg_exact_vector_scan']['p95_ms']} ms]\n"
                f"  first sync: sqlite {r['sqlite_sync']['s']} s ({r['sqlite_sync']['chunks_per_s']} chunks/s); "
                f"postgres {r['pg_sync']['s']} s ({r['pg_sync']['chunks_per_s']} chunks/s"
                + (f", of which the HNSW build {r['pg_hnsw_build_s']} s)" if r["pg_hnsw_build_s"] else ")"),
                flush=True,
            )
    (a.out / "pg_bench.json").write_text(json.dumps(figures, indent=2))
    print(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
