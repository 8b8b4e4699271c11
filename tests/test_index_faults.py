"""Fault injection on index files (DESIGN.md §4): random bytes, bit flips at
random offsets, truncation, a foreign schema and bad ``meta`` values, each
on a fresh copy of a real index (vec0 vectors, FTS5, cache). After each
fault the index is used as a user would (status, search, `memext index`:
verify then sync, search again). Nothing may crash (only MemextError), no
foreign file may change, and every damaged index (one SQLite's
integrity_check fails, or one memext finds undecodable) must be set aside
and rebuilt: searchable again and passing integrity_check.

The counts are printed (``pytest -s``) and recorded in the Robustness
section of docs/how-it-works.md; the seed is fixed, so a run is repeatable.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
import traceback
from collections import Counter
from pathlib import Path

import pytest
from conftest import HashingProvider, make_agent
from fault_helpers import flip_bits, integrity, scribble, set_meta, sha

from memext.engine import ForeignDatabase, MemextError, MemoryIndex
from memext.engine.store.sqlite import db

SEED = 13
CASES = {"bit flips": 45, "random bytes": 45, "truncation": 30, "foreign schema": 8, "bad meta": 24}
QUERY = "walrus7 zebra3"


@pytest.fixture(scope="module")
def template(tmp_path_factory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("faults")
    ws = root / "ws"
    (ws / "memory").mkdir(parents=True)
    (ws / "MEMORY.md").write_text("# Memory\n- Anna leads billing.\n" + "".join(f"- fact {i} about zebra{i}\n" for i in range(200)))
    for d in range(5):
        (ws / "memory" / f"2026-01-0{d + 1}.md").write_text("".join(f"- day {d} item {i} walrus{i}\n" for i in range(150)))
    index = root / "template.sqlite"
    with MemoryIndex(make_agent(ws, db_path=index), provider=HashingProvider(dims=32)) as idx:
        idx.sync()
    assert integrity(index) == "ok"
    return ws, index


def foreign_database(path: Path, rnd: random.Random) -> None:
    """Another program's database where the index was (four shapes)."""
    path.unlink()
    conn, _ = db.connect(path, load_vec=False, wal=False)
    try:
        shape = rnd.randrange(4)
        if shape == 1:
            conn.execute("PRAGMA application_id = 1262834003")
        if shape == 2:
            conn.execute("CREATE TABLE meta (name TEXT, val TEXT)")  # a meta table of another shape
        if shape == 3:
            conn.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT)")  # ours in name, not in content
            conn.execute("INSERT INTO meta VALUES ('owner', 'billing-app')")
        conn.execute("CREATE TABLE invoices (id INTEGER PRIMARY KEY, amount REAL)")
        conn.executemany("INSERT INTO invoices VALUES (?, ?)", [(i, i * 1.5) for i in range(50)])
    finally:
        conn.close()


BAD_VALUES = ["one", "", "{", "[1, 2]", '{"at": "yesterday"}', "null", "-3", "1e999", "\x00\x01", "9" * 40, '"text"', "{}"]
META_KEYS = ["schema_version", "dims", "last_sync", "fingerprint", "skipped", "vector_store", "generation"]


def damage(kind: str, path: Path, rnd: random.Random) -> str:
    if kind == "foreign schema":
        foreign_database(path, rnd)
        return "foreign"
    if kind == "bad meta":
        key, value = rnd.choice(META_KEYS), rnd.choice(BAD_VALUES)
        set_meta(path, key, value)
        return f"{key}={value!r}"
    data = bytearray(path.read_bytes())
    if kind == "bit flips":
        flip_bits(data, rnd, rnd.randint(1, 8))
    elif kind == "random bytes":
        scribble(data, rnd)
    else:
        data = data[: rnd.randrange(len(data))]
    path.write_bytes(bytes(data))
    return kind


def use(ws: Path, path: Path) -> tuple[list[str], bool]:
    """Use the index as a user would; returns the MemextErrors met and
    whether it answers a search from the Markdown at the end."""
    errors: list[str] = []
    try:
        with MemoryIndex(make_agent(ws, db_path=path), provider=HashingProvider(dims=32)) as idx:
            for step in (idx.status, lambda: idx.search(QUERY), idx.needs_sync, idx.verify, idx.sync, lambda: idx.search(QUERY)):
                try:
                    step()
                except MemextError as exc:
                    errors.append(f"{type(exc).__name__}: {exc}")
            return errors, bool(idx.search("walrus7").results)
    except ForeignDatabase as exc:
        return [f"ForeignDatabase: {exc}"], False


def test_fault_injection_nothing_crashes_nothing_foreign_changes_damage_is_rebuilt(template, tmp_path):
    ws, index = template
    rnd = random.Random(SEED)
    tally: dict[str, Counter[str]] = {kind: Counter() for kind in CASES}
    crashes: list[str] = []
    problems: list[str] = []
    n = 0
    for kind, count in CASES.items():
        t = tally[kind]
        for _ in range(count):
            n += 1
            case = tmp_path / f"case{n}"
            case.mkdir()
            path = case / "idx.sqlite"
            shutil.copy(index, path)
            what = damage(kind, path, rnd)
            before_hash = sha(path) if path.exists() else ""
            damaged = integrity(path) != "ok"
            try:
                errors, answers = use(ws, path)
            except Exception:
                crashes.append(f"case {n} ({what}): {traceback.format_exc()[-800:]}")
                continue
            set_aside = [p for p in case.iterdir() if ".corrupt-" in p.name]
            t["cases"] += 1
            if kind == "foreign schema":
                untouched = sha(path) == before_hash and not set_aside and all(e.startswith("ForeignDatabase") for e in errors)
                t["refused, byte-identical"] += untouched
                if not untouched:
                    problems.append(f"case {n} ({what}): foreign file changed or not refused: {errors}")
                continue
            if errors:
                problems.append(f"case {n} ({what}): {errors}")
            healthy = answers and integrity(path) == "ok"
            if not healthy:
                problems.append(f"case {n} ({what}): not rebuilt (answers={answers}, integrity={integrity(path)})")
            if damaged:
                t["integrity_check failed"] += 1
                t["set aside and rebuilt"] += bool(set_aside) and healthy
                if not set_aside:
                    problems.append(f"case {n} ({what}): damaged but not set aside")
            elif set_aside:
                t["found by memext (bad meta, text, vectors), set aside and rebuilt"] += healthy
            else:
                t["harmless (free space, a changed letter, a value memext ignores)"] += healthy
    print(f"\nfault injection (seed {SEED}): crashes {len(crashes)}")
    for kind, t in tally.items():
        print(f"  {kind}: " + ", ".join(f"{k} {v}" for k, v in t.items()))
    assert not crashes, "\n".join(crashes[:3])
    assert not problems, "\n".join(problems[:5])
    failed = sum(t["integrity_check failed"] for t in tally.values())
    assert failed == sum(t["set aside and rebuilt"] for t in tally.values()) > 20
    assert tally["foreign schema"]["refused, byte-identical"] == CASES["foreign schema"]


def test_the_cli_meets_damage_without_a_traceback(template, tmp_path):
    """A few damaged copies through the real `memext` command: an exit status
    (2 where status reports the damage) with one clear line, never a
    traceback; `memext index` rebuilds."""
    ws, index = template
    rnd = random.Random(SEED + 1)
    for n, kind in enumerate(["bit flips", "random bytes", "truncation", "bad meta"]):
        folder = tmp_path / f"cli{n}"
        folder.mkdir()
        path = folder / "idx.sqlite"
        shutil.copy(index, path)
        damage(kind, path, rnd)
        cfg = folder / "config.toml"
        cfg.write_text(
            f'[memory_search]\nprovider = "none"\n[memory_search.store]\npath = {json.dumps(str(path))}\n'
            f'[[agents]]\nid = "a"\nworkspace = {json.dumps(str(ws))}\n'
        )
        env = {**os.environ, "MEMEXT_CONFIG": str(cfg)}
        for args in (["status"], ["search", "walrus7"], ["index"], ["search", "walrus7"]):
            out = subprocess.run([sys.executable, "-m", "memext", *args], capture_output=True, text=True, env=env, timeout=120)
            assert out.returncode in (0, 1, 2) and "Traceback" not in out.stderr, (kind, args, out.stderr)
        assert out.returncode == 0 and "walrus7" in out.stdout, (kind, out.stderr)
        assert integrity(path) == "ok"
