"""Entry-level vector search (engine/store/entry_vectors.py): each entry
tied to the chunk that holds it most centrally, the entries of a chunk read
when a search first meets it and not again."""

from __future__ import annotations

import numpy as np

from memext.engine.store.entry_vectors import EntryVectors

# Two files; in a.md, chunks 1 (lines 1-10) and 2 (lines 8-20) overlap.
CHUNKS = [(1, "a.md", 1, 10), (2, "a.md", 8, 20), (3, "b.md", 1, 5)]


def _blob(*values: float) -> bytes:
    vec = np.zeros(4, dtype=np.float16)
    vec[: len(values)] = values
    return vec.tobytes()


ENTRIES = [
    ("a.md", 2, 2, _blob(1, 0)),  # inside chunk 1 only
    ("a.md", 9, 9, _blob(0.9, 0.1)),  # in both chunks: nearer the middle of chunk 1 (5.5) than of chunk 2 (14)
    ("a.md", 15, 16, _blob(0, 1)),  # inside chunk 2 only
    ("b.md", 3, 3, _blob(0.5, 0.5)),
]


class Loader:
    """What a store answers (the rows of its tables), counting what it was asked."""

    def __init__(self) -> None:
        self.asked: list[list[int]] = []
        self.files_read: list[str] = []

    def __call__(self, chunks: list[int], known):
        self.asked.append(sorted(chunks))
        paths = {p for rowid, p, _, _ in CHUNKS if rowid in chunks}
        spans = [(p, s, e) for rowid, p, s, e in CHUNKS if rowid in chunks]
        # Chunk by chunk, as the stores' query reads them: an entry two chunks share comes twice.
        entries = [row for p, s, e in spans for row in ENTRIES if row[0] == p and row[1] <= e and row[2] >= s]
        self.files_read += sorted(p for p in paths if p not in known)
        return entries, [row for row in CHUNKS if row[1] in paths and row[1] not in known]


def test_entries_are_read_once_per_chunk_and_tied_to_their_most_central_chunk() -> None:
    load = Loader()
    vectors = EntryVectors(load)
    query = np.array([1, 0, 0, 0], dtype=np.float32)
    first = vectors.search(query, 5, [1])
    # The line-9 entry sits in both chunks, nearer chunk 1's middle: chunk 1's.
    assert [(h.chunk, h.start_line) for h in first] == [(1, 2), (1, 9)]
    assert first[0].similarity > first[1].similarity
    both = vectors.search(query, 5, [1, 2, 3])
    assert [(h.chunk, h.start_line) for h in both] == [(1, 2), (1, 9), (3, 3), (2, 15)]
    assert vectors.search(query, 1, [2, 3])[0].chunk == 3
    assert load.asked == [[1], [2, 3]]  # chunk 1 was not read again
    assert load.files_read == ["a.md", "b.md"]  # nor the chunks of its file
    assert len(vectors) == 4  # the line-9 entry, read for chunks 1 and 2, is kept once


def test_a_query_of_another_size_or_no_chunks_finds_nothing() -> None:
    vectors = EntryVectors(Loader())
    assert vectors.search(np.ones(3, dtype=np.float32), 5, [1]) == []
    assert vectors.search(np.ones(4, dtype=np.float32), 5, []) == []
    assert vectors.search(np.zeros(4, dtype=np.float32), 5, [1]) == []


def test_an_entry_read_for_two_chunks_at_once_is_kept_once() -> None:
    vectors = EntryVectors(Loader())
    hits = vectors.search(np.array([1, 0, 0, 0], dtype=np.float32), 9, [1, 2])
    assert [(h.chunk, h.start_line) for h in hits] == [(1, 2), (1, 9), (2, 15)]
    assert len(vectors) == 3


def test_threads_sharing_the_vectors_read_each_chunk_once_and_agree() -> None:
    # An HTTP server's searches share one store: a reading slowed down (so
    # the threads overlap) still happens once per chunk, and every thread
    # gets what one thread alone gets.
    import threading
    import time

    class Slow(Loader):
        def __call__(self, chunks, known):
            time.sleep(0.01)
            return super().__call__(chunks, known)

    load = Slow()
    vectors = EntryVectors(load)
    query = np.array([1, 0, 0, 0], dtype=np.float32)
    alone = EntryVectors(Loader()).search(query, 9, [1, 2, 3])
    got: list[list] = []
    threads = [threading.Thread(target=lambda: got.append(vectors.search(query, 9, [1, 2, 3]))) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()

    # A hit holds its vector (an array, which == cannot compare in a tuple).
    def plain(hits: list) -> list:
        return [(*h[:5], h.vector.tolist()) for h in hits]

    assert [plain(g) for g in got] == [plain(alone)] * 8
    assert load.asked == [[1, 2, 3]] and len(vectors) == 4


def _holder_by_rule(chunks, path: str, start: int, end: int) -> int:
    """The holder by the rule itself, over every chunk of the file: one
    that holds all of the entry's lines if any does, else one that overlaps
    it; of those, the middle nearest the entry's, then the lowest rowid."""
    overlapping = [(rowid, c) for rowid, c in chunks.items() if c.path == path and c.start_line <= end and c.end_line >= start]
    inside = [(rowid, c) for rowid, c in overlapping if c.start_line <= start and c.end_line >= end]
    return min(inside or overlapping, key=lambda rc: (abs(rc[1].start_line + rc[1].end_line - start - end), rc[0]))[0]


def test_an_entry_over_many_chunks_is_held_as_the_rule_says(tmp_path, hashing_provider) -> None:
    # One paragraph of 60 lines, at 16 tokens a chunk cut over some 30
    # chunks, between list items: the chunk nearest its middle holds it,
    # however many chunks start before its last line.
    from conftest import make_agent

    from memext.engine.indexing.sync import Syncer
    from memext.engine.store import open_store
    from memext.engine.vector_math import normalize

    ws = tmp_path / "ws"
    ws.mkdir()
    paragraph = "\n".join(f"Day {i} of the long walk went past farm {i}." for i in range(60))
    items = "\n".join(f"- Item {i}: Lars packed map {i}." for i in range(6))
    (ws / "MEMORY.md").write_text(f"# Memory\n\n{items}\n\n{paragraph}\n\n{items}\n")
    agent = make_agent(ws, db_path=tmp_path / "idx.sqlite", chunking={"tokens": 16, "overlap": 8})
    store = open_store(agent, tmp_path / "idx.sqlite")
    try:
        Syncer(agent, store, hashing_provider).run()
        chunks = store.chunks(range(1, store.chunk_count() + 1))
        assert len(chunks) == store.chunk_count()
        query = normalize(hashing_provider.embed_query("the long walk"))
        hits = store.entry_vector_search(query, 1000, list(chunks))
        long = [h for h in hits if h.end_line - h.start_line == 59]
        assert len(long) == 1 and sum(c.start_line <= long[0].end_line and c.end_line >= long[0].start_line for c in chunks.values()) > 8
        assert len(hits) == 13  # every entry, each once
        assert [(h.start_line, h.chunk) for h in hits] == [
            (h.start_line, _holder_by_rule(chunks, h.path, h.start_line, h.end_line)) for h in hits
        ]
    finally:
        store.close()
