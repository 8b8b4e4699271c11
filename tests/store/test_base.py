"""The IndexStore interface: the SQLite Store implements it, and search, sync
and status use nothing else."""

from __future__ import annotations

import ast
import inspect
from typing import Any

import pytest
from conftest import ROOT, make_agent

from memext.engine import MemoryIndex
from memext.engine.indexing.sync import Syncer
from memext.engine.search.options import SearchOptions
from memext.engine.search.pipeline import run_search
from memext.engine.store import IndexStore, StoreOptions, open_store
from memext.engine.store.sqlite.store import Store
from memext.engine.vector_math import normalize

ENGINE = ROOT / "engine"
INTERFACE = frozenset(n for n in dir(IndexStore) if not n.startswith("_"))


class InterfaceOnly:
    """Forwards exactly the IndexStore members to a store and records which
    were used; it has no other attributes, so code that reaches past the
    interface fails here. (Not a stand-in: the real SQLite store does the
    work.)"""

    def __init__(self, inner: Store, used: set[str]):
        self.inner = inner
        self.used = used

    def use(self, name: str) -> Any:
        self.used.add(name)
        value = getattr(self.inner, name)
        if name == "open_shadow":
            return lambda: InterfaceOnly(value(), self.used)
        return value


def _forward(name: str) -> Any:
    if isinstance(inspect.getattr_static(IndexStore, name), property):
        return property(lambda self: self.use(name))
    return lambda self, *args, **kwargs: self.use(name)(*args, **kwargs)


for _name in INTERFACE:
    setattr(InterfaceOnly, _name, _forward(_name))


@pytest.mark.sqlite_only
def test_the_sqlite_store_implements_the_interface(tmp_path):
    store = Store(tmp_path / "a.sqlite")
    try:
        assert isinstance(store, IndexStore)
        for name in INTERFACE:
            declared = inspect.getattr_static(IndexStore, name)
            actual = inspect.getattr_static(Store, name)
            assert isinstance(actual, property) == isinstance(declared, property), name
            if callable(declared):
                want = list(inspect.signature(declared).parameters.items())
                got = list(inspect.signature(actual).parameters.items())
                assert [(n, p.kind) for n, p in got] == [(n, p.kind) for n, p in want], name
        assert store.options == StoreOptions() and store.path == tmp_path / "a.sqlite"
    finally:
        store.close()


def test_sync_rebuild_and_search_run_through_the_interface_alone(workspace, tmp_path, hashing_provider):
    agent = make_agent(workspace, db_path=tmp_path / "idx.sqlite")
    used: set[str] = set()
    inner = open_store(agent, tmp_path / "idx.sqlite")
    store = InterfaceOnly(inner, used)
    assert isinstance(store, IndexStore) and not hasattr(store, "conn")
    used.clear()
    try:
        first = Syncer(agent, store, hashing_provider).run()
        assert first.files_indexed == 3 and store.chunk_count() == 3 and store.dims == hashing_provider.dims
        rebuilt = Syncer(agent, store, hashing_provider).run(force=True)  # shadow, copy_into, discard
        # Chunks and entries alike come from the embedding cache.
        assert rebuilt.rebuilt and rebuilt.cache_hits == first.texts_embedded > 3 and rebuilt.texts_embedded == 0
        assert {"open_shadow", "copy_into", "discard"} <= used
        assert sorted(p.name for p in tmp_path.iterdir() if ".rebuild-" in p.name) == []

        qvec = normalize(hashing_provider.embed_query("who leads the billing team"))
        query = "who leads the billing team"
        results, mode = run_search(store, query, qvec, agent.settings.query, SearchOptions(max_results=3, min_score=0.0))
        assert mode == "hybrid" and results[0].path == "MEMORY.md"
        assert {"vector_search", "keyword_search", "chunks", "keyword_search_available"} <= used
    finally:
        inner.close()
    with MemoryIndex(agent, provider=hashing_provider) as idx:  # what that store wrote, read the usual way
        st = idx.status()
        assert st.total_chunks == 3 and st.last_sync.rebuilt and st.mode == "hybrid"


def _attributes_of(tree: ast.AST, is_store) -> set[str]:
    return {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute) and is_store(n.value)}


def _named(*names: str):
    return lambda node: isinstance(node, ast.Name) and node.id in names


def _self_attr(*names: str):
    def match(node: ast.AST) -> bool:
        return isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self" and node.attr in names

    return match


def test_engine_modules_use_only_interface_members_of_the_store():
    search = ast.parse((ENGINE / "search" / "pipeline.py").read_text())
    sync = ast.parse((ENGINE / "indexing" / "sync.py").read_text())
    index = ast.parse((ENGINE / "index.py").read_text())
    changes = ast.parse((ENGINE / "indexing" / "changes.py").read_text())
    citing = ast.parse((ENGINE / "search" / "citing.py").read_text())
    keywords = ast.parse((ENGINE / "search" / "keywords.py").read_text())
    fusion = ast.parse((ENGINE / "search" / "fusion.py").read_text())
    status = ast.parse((ENGINE / "indexing" / "index_status.py").read_text())
    recovery = ast.parse((ENGINE / "indexing" / "recovery.py").read_text())
    judging = ast.parse((ENGINE / "search" / "judging.py").read_text())
    successors = ast.parse((ENGINE / "search" / "successors.py").read_text())
    used = {
        "search/pipeline.py": _attributes_of(search, _named("store")),
        "indexing/sync.py": _attributes_of(sync, _named("store", "target", "shadow")) | _attributes_of(sync, _self_attr("store")),
        "index.py": _attributes_of(index, _self_attr("_store")),
        "indexing/index_status.py": _attributes_of(status, _named("st", "store")),
        "indexing/recovery.py": _attributes_of(recovery, _self_attr("store")) | _attributes_of(recovery, _named("store")),
        "indexing/changes.py": _attributes_of(changes, _named("store")),
        "search/citing.py": _attributes_of(citing, _named("store")) | _attributes_of(citing, _self_attr("store")),
        "search/keywords.py": _attributes_of(keywords, _named("store")),
        "search/fusion.py": _attributes_of(fusion, _named("store")),
        "search/judging.py": _attributes_of(judging, _named("store")),
        "search/successors.py": _attributes_of(successors, _named("store")),
    }
    assert all(used.values())  # the walk found the store in each
    for module, names in used.items():
        assert names <= INTERFACE, f"{module} uses {sorted(names - INTERFACE)} outside IndexStore"
    # ...and the interface holds nothing they do not use.
    assert set().union(*used.values()) == INTERFACE


def test_chunk_neighbours_are_the_chunks_before_and_after_in_the_file(tmp_path):
    # Through the interface, on the backend in force: the lines a hit owns
    # come from its neighbours' line ranges (engine/search/spans.own_lines).
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    (ws / "memory" / "long.md").write_text("".join(f"- note {i} about the kiwi harvest and crates\n" for i in range(60)))
    (ws / "memory" / "short.md").write_text("- one line\n")
    agent = make_agent(ws, db_path=tmp_path / "idx.sqlite", chunking={"tokens": 60, "overlap": 30})
    store = open_store(agent, tmp_path / "idx.sqlite")
    try:
        Syncer(agent, store, None).run()
        rows = store.chunks(range(1, 10_000))
        by_file: dict[str, list] = {}
        for r in sorted(rows.values(), key=lambda r: (r.path, r.start_line)):
            by_file.setdefault(r.path, []).append(r)
        long = by_file["memory/long.md"]
        assert len(long) > 3 and all(a.end_line >= b.start_line for a, b in zip(long, long[1:]))  # they overlap
        got = store.chunk_neighbours([r.rowid for r in long] + [by_file["memory/short.md"][0].rowid, 999_999])
        for i, r in enumerate(long):
            prev_end = long[i - 1].end_line if i else None
            next_start = long[i + 1].start_line if i + 1 < len(long) else None
            assert got[r.rowid] == (prev_end, next_start)
        assert got[by_file["memory/short.md"][0].rowid] == (None, None) and 999_999 not in got
        # The chunk that holds a line a citation names: the first that does.
        assert store.chunk_at("memory/short.md", 1) == by_file["memory/short.md"][0]
        at = store.chunk_at("memory/long.md", long[2].end_line)
        assert at is not None and at.start_line <= long[2].end_line <= at.end_line and at in long
        assert at == next(r for r in long if r.start_line <= long[2].end_line <= r.end_line)
        assert store.chunk_at("memory/short.md", 2) is None and store.chunk_at("nowhere.md", 1) is None
    finally:
        store.close()


def test_a_files_entries_are_stored_read_back_and_replaced_with_it(tmp_path, hashing_provider):
    # Through the interface, on the backend in force: each entry's lines,
    # stems and vector; read for many spans in one call, each entry once.
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    (ws / "MEMORY.md").write_text(
        "# Memory\n\n## People\n\n- Ines works on the Harbor data team.\n- Ines drinks black coffee,\n  no tea.\n\nLars lives in Bergen.\n"
    )
    agent = make_agent(ws, db_path=tmp_path / "idx.sqlite")
    store = open_store(agent, tmp_path / "idx.sqlite")
    try:
        Syncer(agent, store, hashing_provider).run()
        got = store.entries_within([("MEMORY.md", 5, 6), ("MEMORY.md", 6, 9), ("nowhere.md", 1, 9)])
        assert [(e.start_line, e.end_line) for e in got] == [(5, 5), (6, 7), (9, 9)]
        assert {"drink", "black", "coffe", "tea"} <= set(got[1].stems.split()) and "lar" not in got[
            1
        ].stems.split()  # Porter stems, as the index holds them
        want = normalize(hashing_provider.embed_query("- Ines drinks black coffee,\n  no tea."))
        assert got[1].vector is not None and abs(float(got[1].vector.astype("float32") @ want) - 1.0) < 2e-3
        assert len(store.entry_vector_sample(2)) == 2 and len(store.entry_vector_sample(10)) == 3
        (ws / "MEMORY.md").write_text("# Memory\n\n- Lars moved to Oslo.\n")
        Syncer(agent, store, hashing_provider).run()
        assert [(e.start_line, set(e.stems.split()) >= {"lar", "oslo"}) for e in store.entries_within([("MEMORY.md", 1, 99)])] == [
            (3, True)
        ]
        store.delete_file("MEMORY.md")
        assert store.entries_within([("MEMORY.md", 1, 99)]) == []
    finally:
        store.close()


def test_entries_are_found_by_their_own_vectors_each_with_its_chunk(tmp_path, hashing_provider):
    # Through the interface, on the backend in force: the entries of some
    # chunks nearest a query vector, best first, each with the chunk that
    # holds it; a rewritten file's entries are searched anew.
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    (ws / "MEMORY.md").write_text(
        "# Memory\n\n- Ines works on the Harbor data team.\n- Ines drinks black coffee.\n\nLars lives in Bergen.\n"
    )
    (ws / "memory" / "2024-05-01.md").write_text("# 2024-05-01\n\n- Bought a red kayak for the fjord.\n")
    agent = make_agent(ws, db_path=tmp_path / "idx.sqlite")
    store = open_store(agent, tmp_path / "idx.sqlite")
    try:
        Syncer(agent, store, hashing_provider).run()
        chunks = {row.path: rowid for rowid, row in store.chunks(range(1, 100)).items()}
        query = normalize(hashing_provider.embed_query("- Ines drinks black coffee."))
        hits = store.entry_vector_search(query, 3, chunks.values())
        assert [(h.path, h.start_line, h.end_line, h.chunk) for h in hits][0] == ("MEMORY.md", 4, 4, chunks["MEMORY.md"])
        assert hits[0].similarity == pytest.approx(1.0, abs=2e-3) and len(hits) == 3
        assert [h.similarity for h in hits] == sorted((h.similarity for h in hits), reverse=True)
        # Only the entries of the chunks asked about.
        assert [h.path for h in store.entry_vector_search(query, 5, [chunks["memory/2024-05-01.md"]])] == ["memory/2024-05-01.md"]
        assert store.entry_vector_search(query, 5, []) == []
        (ws / "MEMORY.md").write_text("# Memory\n\n- Lars moved to Oslo.\n")
        Syncer(agent, store, hashing_provider).run()
        chunks = {row.path: rowid for rowid, row in store.chunks(range(1, 100)).items()}
        after = store.entry_vector_search(normalize(hashing_provider.embed_query("- Lars moved to Oslo.")), 9, chunks.values())
        assert [(h.path, h.start_line) for h in after] == [("MEMORY.md", 3), ("memory/2024-05-01.md", 3)]
        assert after[0].similarity == pytest.approx(1.0, abs=2e-3)
    finally:
        store.close()
