"""Hybrid search behaviour (DESIGN.md §7)."""

from __future__ import annotations

from datetime import date, datetime

import numpy as np
import pytest
from conftest import HashingProvider, make_agent

from memext.engine import MemextError, MemoryIndex
from memext.engine.search import pipeline as search
from memext.engine.search.decay import decay_factor
from memext.engine.search.excerpt import make_snippet
from memext.engine.search.fusion import bm25_to_score
from memext.engine.search.pipeline import pool_size
from memext.engine.text import query_terms


def idx_for(ws, tmp_path, provider, **settings) -> MemoryIndex:
    idx = MemoryIndex(make_agent(ws, db_path=tmp_path / "idx.sqlite", **settings), provider=provider)
    idx.sync()
    return idx


def test_two_character_chinese_word_finds_its_note(workspace, tmp_path, hashing_provider):
    with idx_for(workspace, tmp_path, hashing_provider) as idx:
        hits = idx.search("咖啡")
        assert hits[0].path == "memory/2026-01-06.md"
        assert "咖啡" in hits[0].snippet


def test_japanese_and_german_notes_are_found(workspace, tmp_path):
    (workspace / "memory" / "2026-01-07.md").write_text("- 東京の友人と京都で会う予定。\n- Zwischenspeicherung der Embeddings\n")
    with idx_for(workspace, tmp_path, None) as idx:
        assert idx.search("京都")[0].path == "memory/2026-01-07.md"
        assert idx.search("zwischenspeicherung")[0].path == "memory/2026-01-07.md"


@pytest.mark.parametrize("fusion", ["weighted", "rrf", None])
def test_exact_token_only_keyword_side_matches_is_kept(tmp_path, fusion):
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    # Many notes that are semantically closer to the query than the one with
    # the token, so the vector side ranks the token's note low or not at all.
    for i in range(60):
        (ws / "memory" / f"2026-02-{i:02d}.md").write_text(f"- commit review meeting {i} commit notes\n")
    (ws / "memory" / "2026-03-01.md").write_text("- deployed build a828e60 to staging\n")
    provider = HashingProvider(dims=16, blind_to_digits=True)
    # fusion None: the defaults exactly as a user gets them. "weighted" uses
    # the reference's 0.7/0.3 and 0.35, where a keyword-only hit scores under
    # the threshold.
    hybrid = {"fusion": fusion, **({"vector_weight": 0.7, "text_weight": 0.3} if fusion == "weighted" else {})}
    settings = {"query": {"min_score": 0.35, "hybrid": hybrid}} if fusion else {}
    with idx_for(ws, tmp_path, provider, **settings) as idx:
        # A query of IDs is matched by its strings alone: its embedding means nothing.
        hits = idx.search("a828e60", explain=True)
        assert hits.mode == "keyword" and [h.path for h in hits] == ["memory/2026-03-01.md"]
        assert hits[0].explain["exact_match"] and hits[0].explain["keyword"]["rank"] == 1
        # With a word beside the ID the vector side is asked too.
        hits = idx.search("staging a828e60", explain=True)
        assert hits.mode == "hybrid" and hits[0].path == "memory/2026-03-01.md"
        assert hits[0].explain["exact_match"] and hits[0].explain["keyword"]["rank"] == 1
        # and a query whose words are absent returns nothing over the threshold
        assert all(h.explain["exact_match"] or h.score >= 0.35 for h in idx.search("zzzz unknown", explain=True))
        # Without explain only the rows needed are read: the same results.
        # (A high min_score leaves exact keyword hits to rescue among the rest.)
        for query in ("a828e60", "commit a828e60", "review meeting 7", "commit 7", "zzzz unknown"):
            for limit, floor in ((1, None), (3, 0.6), (6, None), (6, 0.95), (40, 0.6)):
                plain = idx.search(query, max_results=limit, min_score=floor)
                shown = idx.search(query, max_results=limit, min_score=floor, explain=True)
                assert [(h.citation, h.score, h.snippet) for h in plain] == [(h.citation, h.score, h.snippet) for h in shown]


@pytest.mark.parametrize("with_vectors", [False, True])
def test_an_exact_hit_ranked_below_failing_ones_is_still_rescued(tmp_path, with_vectors):
    # Search reads the rows of the best candidates first and of the rest
    # only when too few passed: short notes repeating one term outrank the
    # long one holding both, fail min_score and are not exact hits.
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    for i in range(8):
        (ws / "memory" / f"2026-02-{i + 1:02d}.md").write_text(f"- alpha alpha alpha note {i}\n")
    for i in range(30):
        (ws / "memory" / f"2026-04-{i + 1:02d}.md").write_text(f"- filler text about other things {i}\n")
    (ws / "memory" / "2026-03-01.md").write_text("- " + " ".join(f"word{i}" for i in range(150)) + " alpha beta\n")
    with idx_for(ws, tmp_path, HashingProvider(dims=16) if with_vectors else None) as idx:
        # (Weak answers shown: the rescue is the subject here, not the verdict.)
        hits = idx.search("alpha beta", max_results=3, min_score=0.9, include_weak=True)
        assert [h.path for h in hits] == ["memory/2026-03-01.md"] and hits[0].score < 0.9
        shown = idx.search("alpha beta", max_results=3, min_score=0.9, explain=True, include_weak=True)
        assert [(h.citation, h.score) for h in shown] == [(h.citation, h.score) for h in hits]
        assert shown[0].explain["exact_match"]


def test_keyword_only_mode_without_provider(workspace, tmp_path):
    with idx_for(workspace, tmp_path, None) as idx:
        resp = idx.search("Anna roadmap")
        assert resp.mode == "keyword" and resp.provider == "none"
        assert resp.notice and "keyword-only" in resp.notice
        assert resp[0].path == "memory/2026-01-06.md"
        st = idx.status()
        assert st.mode == "keyword-only" and st.vector.dims is None


def test_scores_lie_in_0_1_and_bm25_is_not_constant(workspace, tmp_path, hashing_provider):
    for fusion in ("weighted", "rrf"):
        with idx_for(workspace, tmp_path, hashing_provider, query={"hybrid": {"fusion": fusion}}) as idx:
            hits = idx.search("Anna tech lead billing roadmap", min_score=0, max_results=10)
            assert hits and all(0.0 <= h.score <= 1.0 for h in hits)
            assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    with idx_for(workspace, tmp_path, None) as idx:
        kw = idx.search("Anna billing tech lead", min_score=0, explain=True)
        bm = [h.explain["keyword"]["score"] for h in kw]
        assert len(set(bm)) > 1 and bm[0] == 1.0  # monotone, not every hit 1.0
    assert bm25_to_score(-5.0, -10.0) == 0.5 and bm25_to_score(-10.0, -10.0) == 1.0


def test_explain_shows_both_sides(workspace, tmp_path, hashing_provider):
    with idx_for(workspace, tmp_path, hashing_provider) as idx:
        h = idx.search("green tea", explain=True)[0]
        assert h.path == "MEMORY.md"
        assert set(h.explain) >= {"vector", "keyword", "fusion", "decay", "exact_match"}
        assert h.explain["vector"]["rank"] is not None and h.explain["keyword"]["rank"] == 1


def test_query_time_provider_error_degrades_to_keyword(workspace, tmp_path, hashing_provider):
    with idx_for(workspace, tmp_path, hashing_provider) as idx:
        hashing_provider.fail_queries = True
        resp = idx.search("green tea")
        assert resp.mode == "keyword" and "test provider is down" in resp.error
        assert "keyword-only" in resp.notice and resp[0].path == "MEMORY.md"


def test_snippets_are_at_most_700_chars_and_show_the_terms():
    text = "\n".join(f"filler line {i} " * 5 for i in range(60)) + "\nthe platypus appears here\n" + "tail " * 100
    snip = make_snippet(text, ["platypus"])
    assert len(snip) <= 700 and "platypus" in snip
    assert make_snippet("short", ["x"]) == "short"
    # a hit deep inside one long line is still shown, with some lead-in
    line = " ".join(f"word{i}" for i in range(400)) + " zq75d1a " + " ".join(f"more{i}" for i in range(50))
    snip = make_snippet("title\n" + line, ["zq75d1a"])
    assert len(snip) <= 700 and "zq75d1a" in snip and snip.index("zq75d1a") >= 60


def test_temporal_decay_ages_daily_files_only():
    today = date(2026, 3, 1)
    assert decay_factor("memory/2026-01-30.md", 30, today) == pytest.approx(0.5, rel=1e-6)
    assert decay_factor("MEMORY.md", 30, today) == 1.0
    assert decay_factor("memory/projects.md", 30, today) == 1.0


def test_temporal_decay_reorders_results(workspace, tmp_path):
    (workspace / "memory" / "2020-01-01.md").write_text("- the deploy checklist lives in the wiki\n")
    (workspace / "memory" / "2026-01-09.md").write_text("- the deploy checklist lives in the wiki\n")
    on = {"query": {"hybrid": {"temporal_decay": {"enabled": True, "half_life_days": 30}}}}
    with idx_for(workspace, tmp_path, None, **on) as idx:
        hits = idx.search("deploy checklist wiki", min_score=0)
        order = [h.path for h in hits]
        assert order.index("memory/2026-01-09.md") < order.index("memory/2020-01-01.md")


def test_mmr_prefers_variety(tmp_path):
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    for i in range(3):
        (ws / "memory" / f"2026-01-0{i + 1}.md").write_text("- pasta recipe with garlic and olive oil\n")
    (ws / "memory" / "2026-01-09.md").write_text("- pasta shop opening hours on Sunday\n")
    mmr = {"query": {"hybrid": {"mmr": {"enabled": True, "lambda": 0.3}}}}
    with idx_for(ws, tmp_path, HashingProvider(), **mmr) as idx:
        top2 = [h.path for h in idx.search("pasta recipe garlic", min_score=0, max_results=2)]
    assert "memory/2026-01-09.md" in top2


def test_sources_filter_and_bad_input(workspace, tmp_path):
    with idx_for(workspace, tmp_path, None) as idx:
        with pytest.raises(MemextError, match="not indexed"):
            idx.search("x", sources=["sessions"])
        with pytest.raises(MemextError, match="empty"):
            idx.search("   ")
        assert idx.search("Anna", sources=["memory"])


def test_pool_size_is_capped():
    assert pool_size(6, 4) == 24 and pool_size(100, 4) == 200


def test_stemming_matches_other_forms_of_a_word(tmp_path):
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    (ws / "memory" / "2026-04-01.md").write_text("- Melanie painted a lake sunrise last year\n")
    (ws / "memory" / "2026-04-02.md").write_text("- Die Häuser am Fluss wurden gestrichen\n- 东京的咖啡很好喝\n")
    with idx_for(ws, tmp_path, None) as idx:
        assert idx.search("When did Melanie paint a sunrise?")[0].path == "memory/2026-04-01.md"
        assert idx.search("paintings")[0].path == "memory/2026-04-01.md"
        # words of other languages and CJK grams still match themselves
        assert idx.search("häuser")[0].path == "memory/2026-04-02.md"
        assert idx.search("咖啡")[0].path == "memory/2026-04-02.md"


def _topic_workspace(tmp_path):
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    # over MIN_CHUNKS_FOR_IDF notes, so BM25 is measured against the query
    topics = [
        "billing invoices",
        "kayak trip",
        "garden tomatoes",
        "guitar lessons",
        "tax return",
        "dentist visit",
        "birthday party",
        "server migration",
        "piano recital",
        "marathon training",
        "bread baking",
        "chess club",
        "car repair",
        "yoga class",
        "book club",
        "wine tasting",
        "roof leak",
        "visa renewal",
        "job interview",
        "camping gear",
        "pottery course",
        "cat adoption",
        "solar panels",
        "ski holiday",
    ]
    for i, topic in enumerate(topics):
        (ws / "memory" / f"2026-05-{i + 1:02d}.md").write_text(f"- Notes about the {topic}.\n")
    return ws


def test_bm25_score_is_measured_against_the_whole_query(tmp_path):
    with idx_for(_topic_workspace(tmp_path), tmp_path, None) as idx:
        full = idx.search("kayak trip", min_score=0, explain=True)[0]
        part = idx.search("kayak volcano glacier penguin", min_score=0, explain=True, include_weak=True)[0]
    assert full.path == part.path == "memory/2026-05-02.md"
    # holding every term is a full keyword score; one rare word of four is not,
    # although it is the best hit of its pool
    assert full.explain["keyword"]["score"] == pytest.approx(1.0)
    assert part.explain["keyword"]["score"] < 0.3
    assert bm25_to_score(-5.0, -10.0, reference=20.0) == 0.25
    assert bm25_to_score(-30.0, -30.0, reference=20.0) == 1.0  # the pool's best takes over above the reference
    assert bm25_to_score(-1.0, -10.0, 20.0) < bm25_to_score(-2.0, -10.0, 20.0)  # monotone


def test_keyword_candidates_outside_the_vector_pool_get_their_cosine(tmp_path):
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    for i in range(20):
        (ws / "memory" / f"2026-06-{i + 1:02d}.md").write_text("- pasta recipe garlic olive\n")
    (ws / "memory" / "2026-07-01.md").write_text("- a quokka was seen on rottnest island during the long ferry trip\n")
    provider = HashingProvider()
    settings = {"query": {"hybrid": {"candidate_multiplier": 1}}}
    with idx_for(ws, tmp_path, provider, **settings) as idx:
        hits = idx.search("pasta quokka", max_results=2, min_score=0, explain=True)
    quokka = next(h for h in hits if h.path == "memory/2026-07-01.md")
    info = quokka.explain
    assert info["keyword"]["rank"] == 1 and info["vector"]["rank"] is None  # not in the vector pool of 2
    q = np.asarray(provider.embed_query("pasta quokka"))
    d = np.asarray(provider.embed_query("- a quokka was seen on rottnest island during the long ferry trip"))
    p = np.asarray(provider.embed_query("- pasta recipe garlic olive"))
    expected = float(q @ d / np.linalg.norm(q) / np.linalg.norm(d))
    assert 0.1 < expected < float(q @ p / np.linalg.norm(q) / np.linalg.norm(p))  # the pasta notes fill the vector pool
    assert info["vector"]["similarity"] == pytest.approx(expected, abs=1e-5)
    assert info["fusion"]["vector"] == pytest.approx(0.5 * expected, abs=1e-5)


def test_words_with_sharp_s_are_found(tmp_path):
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    (ws / "memory" / "2026-08-01.md").write_text("- Neue Adresse: Hauptstraße 5, Berlin\n", encoding="utf-8")
    (ws / "memory" / "2026-08-02.md").write_text("- Termin in der STRASSE am Markt\n", encoding="utf-8")
    with idx_for(ws, tmp_path, None) as idx:
        for query in ("Hauptstraße", "hauptstraße", "HAUPTSTRAẞE"):
            resp = idx.search(query)
            assert resp.mode == "keyword" and resp[0].path == "memory/2026-08-01.md", query
            assert "Hauptstraße" in resp[0].snippet
        assert idx.search("strasse")[0].path == "memory/2026-08-02.md"
        # ß and ss are different tokens in the index: no crash, whatever is found
        idx.search("Straße")
        idx.search("STRASSE İstanbul ıstanbul")


def test_snippet_window_finds_a_sharp_s_hit_deep_in_a_long_chunk():
    text = "\n".join(f"Zeile {i}: nichts Besonderes hier, nur Fülltext." for i in range(40)) + "\nNeue Adresse: Hauptstraße 5\n"
    snippet = make_snippet(text, query_terms("Hauptstraße"))
    assert len(snippet) <= 700 and "Hauptstraße 5" in snippet


def _budget_workspace(tmp_path):
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    lines = [f"- kiwi harvest note {i}: picked {i} crates of kiwi" if i % 3 else f"- weather on day {i} was mild" for i in range(40)]
    (ws / "memory" / "2026-02-01.md").write_text("# Farm\n\n" + "\n".join(lines) + "\n", encoding="utf-8")
    (ws / "memory" / "2026-02-02.md").write_text("# Market\n\n- sold kiwi at the market\n", encoding="utf-8")
    return ws


def test_max_lines_returns_what_fits_with_overlapping_hits_merged(tmp_path, hashing_provider):
    ws = _budget_workspace(tmp_path)
    with idx_for(ws, tmp_path, hashing_provider, chunking={"tokens": 40, "overlap": 15}, query={"merge_spans": False}) as idx:
        plain = idx.search("kiwi crates", include_weak=True, max_results=30, min_score=0)
        # Without a budget or merge_spans, chunks of one file overlap but each
        # hit cites only its own lines: neighbours touch, no line comes twice.
        spans = [(r.path, r.start_line, r.end_line) for r in plain]
        pairs = [(a, b) for i, a in enumerate(spans) for b in spans[i + 1 :] if a[0] == b[0]]
        assert not any(a[1] <= b[2] and b[1] <= a[2] for a, b in pairs)
        assert any(a[2] + 1 == b[1] or b[2] + 1 == a[1] for a, b in pairs)
        for budget in (5, 12, 30, 60, 400):
            got = idx.search("kiwi crates", include_weak=True, min_score=0, max_lines=budget, explain=True)
            assert sum(r.end_line - r.start_line + 1 for r in got) <= budget
            lines = [(r.path, n) for r in got for n in range(r.start_line, r.end_line + 1)]
            assert len(lines) == len(set(lines))  # no line twice
            for i, a in enumerate(got):  # nor two spans of one file that touch: they would be one
                assert not any(a.path == b.path and a.start_line <= b.end_line + 1 and b.start_line <= a.end_line + 1 for b in got[i + 1 :])
            assert len({r.citation for r in got}) == len(got)
        got = idx.search("kiwi crates", include_weak=True, min_score=0, max_lines=400, explain=True)
        merged = [r for r in got if "merged" in r.explain]
        assert merged and len(merged[0].explain["merged"]) > 1
        r = merged[0]
        assert "kiwi" in r.snippet and r.start_line <= r.best_line <= r.end_line
        assert r.excerpt.lines[0].number >= r.start_line and r.excerpt.lines[-1].number <= r.end_line
        assert {r.path for r in got} == {"memory/2026-02-01.md", "memory/2026-02-02.md"}
        # The budget keeps rank order: the best hit of the plain search leads.
        assert got[0].start_line <= plain[0].start_line <= plain[0].end_line <= got[0].end_line
        assert len(idx.search("kiwi crates", include_weak=True, max_results=1, max_lines=400)) == 1
        with pytest.raises(MemextError, match="max_lines must be at least 1"):
            idx.search("kiwi", max_lines=0)


def _dated_workspace(tmp_path):
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    for day in range(1, 11):
        (ws / "memory" / f"2026-05-{day:02d}.md").write_text(
            f"# 2026-05-{day:02d}\n\n- Walked the dog and planned the garden, entry {day}.\n", encoding="utf-8"
        )
    (ws / "notes.md").write_text("", encoding="utf-8")
    (ws / "MEMORY.md").write_text(
        "# Log\n\n## 2026-04-20\n\n- Walked the dog by the river.\n\n## 2026-04-27\n\n- Planned the garden beds.\n", encoding="utf-8"
    )
    (ws / "memory" / "trip.md").write_text("---\ndate: 2026-03-14\n---\n\n- Walked the dog on the beach trip.\n", encoding="utf-8")
    return ws


NOW = datetime(2026, 5, 11, 9, 0)


@pytest.mark.parametrize("query", ["walked the dog", "garden plans", "dog beach", "what did we decide", "May's garden"])
def test_a_query_without_a_time_cue_ranks_exactly_as_without_the_feature(tmp_path, hashing_provider, query):
    ws = _dated_workspace(tmp_path)
    with idx_for(ws, tmp_path, hashing_provider) as idx:
        on = idx.search(query, max_results=20, min_score=0, now=NOW, explain=True, include_weak=True)
    # The same index file: equal scores rank by rowid, and a second index
    # could number the chunks otherwise (files written just before a sync
    # are indexed after a recheck, in no fixed order).
    with idx_for(ws, tmp_path, hashing_provider, query={"time_boost": 0}) as idx:
        off = idx.search(query, max_results=20, min_score=0, now=NOW, explain=True, include_weak=True)
    assert [r.to_dict() for r in on] == [r.to_dict() for r in off] and len(on) > 1
    assert not any("time_boost" in r.explain for r in on)


@pytest.mark.parametrize(
    "query, expected",
    [
        ("walked the dog yesterday", "memory/2026-05-10.md"),  # the daily log's name
        ("walked the dog on May 3", "memory/2026-05-03.md"),
        ("walked the dog in March", "memory/trip.md"),  # front matter
        ("walked the dog on April 20", "MEMORY.md"),  # a dated heading inside the file
    ],
)
def test_chunks_dated_in_the_time_the_query_names_are_boosted(tmp_path, hashing_provider, query, expected):
    ws = _dated_workspace(tmp_path)
    with idx_for(ws, tmp_path, hashing_provider, chunking={"tokens": 16, "overlap": 0}) as idx:
        hits = idx.search(query, max_results=5, min_score=0, now=NOW, explain=True)
        assert hits[0].path == expected and hits[0].explain["time_boost"] == pytest.approx(1.2)
        # Notes lag what they tell of: a day before to three days after counts.
        boosted = {h.path for h in hits if "time_boost" in h.explain}
        if expected.startswith("memory/2026-05-"):
            day = int(expected[-5:-3])
            assert boosted == {f"memory/2026-05-{d:02d}.md" for d in range(day - 1, day + 4) if d <= 10} & {h.path for h in hits}
        else:
            assert boosted == {expected}
        # Said a week later, "yesterday" is another day.
        if "yesterday" in query:
            later = idx.search(query, max_results=1, min_score=0, now=datetime(2026, 5, 6, 12, 0))
            assert later[0].path in {f"memory/2026-05-{d:02d}.md" for d in range(4, 9)}


def test_merge_spans_setting_merges_hits_without_a_budget(tmp_path, hashing_provider):
    ws = _budget_workspace(tmp_path)
    # merge_spans is on by default.
    with idx_for(ws, tmp_path, hashing_provider, chunking={"tokens": 40, "overlap": 15}) as idx:
        got = idx.search("kiwi crates", include_weak=True, max_results=8, min_score=0, explain=True)
    with idx_for(ws, tmp_path / "off", hashing_provider, chunking={"tokens": 40, "overlap": 15}, query={"merge_spans": False}) as idx:
        off = idx.search("kiwi crates", include_weak=True, max_results=8, min_score=0)
    off_lines = [(r.path, n) for r in off for n in range(r.start_line, r.end_line + 1)]
    # Without it, hits of one file that touch come as separate results.
    assert any(a.path == b.path and a.end_line + 1 == b.start_line for a in off for b in off)
    assert 1 < len(got) <= 8
    lines = [(r.path, n) for r in got for n in range(r.start_line, r.end_line + 1)]
    assert len(lines) == len(set(lines)) and set(off_lines) <= set(lines)
    assert any("merged" in r.explain for r in got)
    assert got[0].start_line <= off[0].start_line <= off[0].end_line <= got[0].end_line


@pytest.mark.parametrize("settings, max_lines", [({}, None), ({}, 60), ({"query": {"merge_spans": False}}, None)])
def test_results_cite_the_text_of_a_chunk_not_the_headings_that_open_it(tmp_path, hashing_provider, settings, max_lines):
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    (ws / "memory" / "2026-02-01.md").write_text(
        "# 2026-02-01\n\n## Session 1 (9:00 am)\n\n- Ordered kiwi crates for the shop.\n- Paid the invoice.\n", encoding="utf-8"
    )
    (ws / "MEMORY.md").write_text("## Fruit\n\nKiwi crates come on Mondays.\n", encoding="utf-8")
    with idx_for(ws, tmp_path, hashing_provider, **settings) as idx:
        got = {r.path: r for r in idx.search("kiwi crates", include_weak=True, max_results=5, min_score=0, max_lines=max_lines)}
        # The heading is still indexed with its chunk: a query naming only it finds the chunk.
        assert idx.search("session", include_weak=True, max_results=1, min_score=0)[0].path == "memory/2026-02-01.md"
    log, memory = got["memory/2026-02-01.md"], got["MEMORY.md"]
    assert (log.start_line, log.end_line) == (5, 6) and (memory.start_line, memory.end_line) == (3, 3)
    assert [line.number for line in log.excerpt.lines] == [5, 6] and log.best_line == 5
    assert memory.citation == "MEMORY.md:3" and [line.text for line in memory.excerpt.lines] == ["Kiwi crates come on Mondays."]
    # The snippet shows the cited lines too, so its first line is the one the citation names.
    assert (memory.snippet, memory.snippet_line) == ("Kiwi crates come on Mondays.", 3)
    assert log.snippet.startswith("- Ordered kiwi crates") and log.snippet_line == 5 and "## Session" not in log.snippet
    assert memory.to_dict()["snippet_line"] == memory.to_dict()["start_line"] == 3


def test_a_snippet_cut_to_a_later_window_names_the_line_it_starts_at(tmp_path, hashing_provider):
    ws = tmp_path / "ws"
    ws.mkdir()
    filler = [f"- Note {n}: the quarterly report lists routine figures for the office." for n in range(12)]
    (ws / "MEMORY.md").write_text("\n".join([*filler, "- The zeppelin hangar opens at dawn."]) + "\n", encoding="utf-8")
    with idx_for(ws, tmp_path, hashing_provider) as idx:
        [hit] = idx.search("zeppelin hangar", max_results=1, min_score=0)
    lines = (ws / "MEMORY.md").read_text(encoding="utf-8").splitlines()
    assert hit.start_line == 1 and hit.snippet_line > hit.start_line and "zeppelin" in hit.snippet
    assert hit.snippet.splitlines()[0] == lines[hit.snippet_line - 1]


def test_stop_words_do_not_outweigh_content_words_in_a_small_index(tmp_path):
    # Under MIN_CHUNKS_FOR_IDF chunks FTS5's IDF cannot tell "about" from
    # "fusion": stop words never reach the keyword side.
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    (ws / "MEMORY.md").write_text("# About Dana\n\n- All about Dana: what we know about her.\n", encoding="utf-8")
    (ws / "memory" / "2026-10-14.md").write_text("- Compared weighted fusion and rank fusion.\n", encoding="utf-8")
    with idx_for(ws, tmp_path, None) as idx:
        assert idx.status().chunks["memory"] < search.MIN_CHUNKS_FOR_IDF
        hits = idx.search("what did we decide about fusion?", min_score=0)
        assert hits[0].path == "memory/2026-10-14.md"
        # A query of stop words alone has nothing to search for by keyword.
        nothing = idx.search("what about", min_score=0)
        assert nothing.results == [] and "no memory matches 'what about'" in nothing.notice
    assert search.keyword_terms(["fusion", "rank"], {}, 5) == ["fusion", "rank"]


class SynonymProvider(HashingProvider):
    """TEST DOUBLE: the hashing embedder with a few words read as others
    ("beverage" as "coffee"), standing in for a model that matches meaning
    without a shared word, which a bag of words cannot."""

    SAME = {"favourite": "drinks", "hot": "black", "beverage": "coffee"}

    def _vec(self, text: str) -> list[float]:
        return super()._vec(" ".join(self.SAME.get(w, w) for w in text.lower().split()))


def test_an_entry_found_by_its_own_vector_keeps_a_place_without_a_shared_word(tmp_path):
    # The entry that answers sits in a long note whose chunk vector averages
    # it away, below a short note that shares one of its words; the question
    # shares no word with any note, so the keyword side has nothing.
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    other = [
        f"- The {w} team met about the {w} budget and the {w} roadmap for next quarter."
        for w in ("harbor", "garden", "billing", "travel", "hiring")
    ]
    (ws / "MEMORY.md").write_text("# Ines\n\n" + "\n".join([*other, "- Ines drinks black coffee.", *other]) + "\n")
    (ws / "memory" / "2026-06-01.md").write_text("- The coffee machine on floor 5 was descaled.\n")
    provider = SynonymProvider()
    query = "favourite hot beverage"

    def scores(**settings) -> dict[str, tuple[float, dict]]:
        with idx_for(ws, tmp_path / str(len(settings)), provider, **settings) as idx:
            return {h.path: (h.score, h) for h in idx.search(query, min_score=0, explain=True, include_weak=True)}

    chunks_only = scores(query={"hybrid": {"entry_share": 0}})
    assert chunks_only["MEMORY.md"][0] < chunks_only["memory/2026-06-01.md"][0]
    found = scores()
    best = max(found.values(), key=lambda x: x[0])[1]
    assert best.path == "MEMORY.md" and best.start_line <= 8 <= best.end_line
    assert best.explain["keyword"]["rank"] is None
    entry = best.explain["vector"]["entry"]
    # The query reads as three of its four words; its entries come best first.
    assert entry["similarity"] == pytest.approx(3 / 12**0.5, abs=2e-3) and entry["lines"][0] == "8-8"
