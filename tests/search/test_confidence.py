"""Confidence (engine/search/confidence.py, engine/search/lines.py): keyword
evidence by the share of the query a hit holds, and a small index judged
by its lines with the real local model (DESIGN.md §7)."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import MODEL_PATH, HashingProvider, make_agent

from memext.engine import MemoryIndex
from memext.engine.search.confidence import Calibration, make_judge, rarity
from memext.engine.search.lines import line_null, meaning_text

REFUND = "what did Dana fix in the refund code?"
#: Chunks holding each content term of REFUND, of 40.
REFUND_COUNTS = {"dana": 1, "fix": 1, "refund": 6, "code": 2}


def test_rarity_weighs_a_term_no_chunk_holds_the_most():
    assert rarity(0, 10) > rarity(1, 10) > rarity(5, 10) > rarity(10, 10) > 0
    # A term in half the chunks of a small index still weighs something.
    assert rarity(2, 4) > 0.3


def test_a_term_memory_lacks_counts_against_a_hit():
    judge = make_judge("what is my passport number?", {"passport": 0, "number": 1}, 7, Calibration(0.3), (0.5, 0.5))
    assert judge.coverage(["number"]) < 0.5 < judge.coverage(["passport", "number"]) == 1.0


def test_one_common_term_of_the_query_is_no_confident_hit_on_its_own():
    judge = make_judge(REFUND, REFUND_COUNTS, 40, Calibration(0.3), (0.5, 0.5))
    assert judge.coverage(["refund"]) < 0.25
    # Its meaning at the nothing level: the word in common is all it has.
    only = judge.hit(0.3, 1.0, ["refund"], "- Train ticket refund delayed.", has_vector=True)
    assert only.keyword == 0.0 and judge.confidence(only.value) < 0.5
    # The same hit whose meaning agrees: the share of the query it holds.
    agreeing = judge.hit(0.5, 1.0, ["refund"], "- Refund code rounding.", has_vector=True)
    assert agreeing.semantic > 0 and agreeing.keyword == pytest.approx(judge.coverage(["refund"]), abs=1e-6)
    # Holding every term, the same weak cosine is a confident hit.
    whole = judge.hit(0.3, 1.0, ["dana", "fix", "refund", "code"], "- Dana fixed the refund code.", has_vector=True)
    assert whole.keyword == 1.0 and judge.confidence(whole.value) > 0.99
    # Without vectors the words are all there is: the share they cover.
    words_only = judge.hit(None, 1.0, ["refund"], "- Train ticket refund delayed.", has_vector=False)
    assert words_only.keyword == pytest.approx(judge.coverage(["refund"]), abs=1e-6)


def test_an_exact_id_stays_confident_whatever_else_the_query_says():
    judge = make_judge("is a828e60 in the release notes", {"a828e60": 1, "release": 3, "notes": 9}, 40, Calibration(0.3), (0.5, 0.5))
    hit = judge.hit(0.1, 0.2, ["a828e60"], "- Release commit for v2.3 is a828e60.", has_vector=True)
    assert hit.value == 1.0


def test_the_words_of_a_time_the_query_names_are_not_terms_to_find():
    counts = {"walked": 9, "dog": 9, "yesterday": 0}
    plain = make_judge("walked the dog yesterday", counts, 12, Calibration(None), (0.5, 0.5))
    timed = make_judge("walked the dog yesterday", counts, 12, Calibration(None), (0.5, 0.5), time_words={"yesterday"})
    assert plain.coverage(["walked", "dog"]) < 0.5 and timed.coverage(["walked", "dog"]) == 1.0


def test_lines_are_embedded_without_headings_or_entry_metadata():
    assert meaning_text("- Ran 5 km. <!-- memext origin=user -->") == "- Ran 5 km."
    assert meaning_text("## Home") == "" and meaning_text("   ") == ""


def test_only_a_local_model_with_a_measured_line_null_embeds_lines():
    assert line_null(HashingProvider()) is None
    assert line_null(None) is None


#: A workspace far below CALIBRATION_DEPTH chunks: no score distribution.
TINY = {
    "MEMORY.md": "# Memory\n\n## Preferences\n- Coffee: flat white, oat milk.\n- Prefers window seats on flights.\n\n"
    "## Home\n- Spare key is with the neighbour at number 12.\n- Bins go out Tuesday night.\n",
    "memory/2026-09-03.md": "# 2026-09-03\n\n- Vendor quote: 2,400 EUR per month.\n- Ran 5 km in 27 minutes.\n- Gym membership cancelled.\n",
    "memory/2026-10-07.md": "# 2026-10-07\n\n- Dana fixed the rounding bug in the refund code.\n",
    "memory/2026-10-21.md": "# 2026-10-21\n\n- Asked the airline about the cancelled flight.\n- Vacation planned: Lisbon, 12-19 November.\n",
    "memory/2026-11-02.md": "# 2026-11-02\n\n- Refunds for the broken kettle arrived.\n- Kettle replaced with a glass one.\n",
}


@pytest.fixture
def tiny(tmp_path) -> MemoryIndex:
    ws = tmp_path / "notes"
    for rel, text in TINY.items():
        (ws / rel).parent.mkdir(parents=True, exist_ok=True)
        (ws / rel).write_text(text, encoding="utf-8")
    agent = make_agent(ws, db_path=tmp_path / "i.sqlite", provider="local", local={"model_path": str(MODEL_PATH)})
    with MemoryIndex(agent) as idx:
        idx.sync(reason="manual")
        yield idx


def marked(result) -> list[str]:
    return [line for line in result.excerpt.to_text().splitlines() if line.startswith(">")]


@pytest.mark.parametrize(
    "query, path, line",
    [
        ("which seat do I like on a plane?", "MEMORY.md", "window seats"),  # "plane": no note says it
        ("how fast did I run 5k?", "memory/2026-09-03.md", "Ran 5 km"),  # no word in common
        ("where are we going on holiday?", "memory/2026-10-21.md", "Vacation planned"),
    ],
)
def test_a_paraphrase_in_a_tiny_workspace_is_answered_at_its_line(tiny, query, path, line):
    resp = tiny.search(query)
    assert resp.confident and resp[0].path == path
    assert line in Path(tiny.agent.workspace, path).read_text().splitlines()[resp[0].best_line - 1]
    assert len(marked(resp[0])) == 1 and line in marked(resp[0])[0]


@pytest.mark.parametrize("query", ["what is my passport number?", "what is my blood type?", "when did I visit Tokyo?", "deadbeef12"])
def test_an_absent_fact_in_a_tiny_workspace_is_answered_nothing(tiny, query):
    resp = tiny.search(query)
    assert resp.results == [] and resp.notice.startswith("no memory matches")


def test_confident_hits_come_before_weak_ones(tiny):
    resp = tiny.search("where are we going on holiday?", include_weak=True)
    flags = [r.confident for r in resp]
    assert flags[0] and flags == sorted(flags, reverse=True)


def test_a_hit_on_one_word_of_the_question_is_weak_next_to_the_answer(tiny):
    resp = tiny.search("what did Dana fix in the refund code?", include_weak=True)
    assert resp[0].path == "memory/2026-10-07.md" and resp[0].confident
    kettle = [r for r in resp if r.path == "memory/2026-11-02.md"]
    assert kettle and not kettle[0].confident


def test_a_hit_found_by_meaning_in_a_larger_index_marks_its_line(tmp_path):
    ws = tmp_path / "notes"
    (ws / "memory").mkdir(parents=True)
    errands = ("Watered the tomatoes.", "Paid the gas bill.", "Piano lesson: scales.", "Fixed the bike tyre.", "Baked a lemon cake.")
    for i in range(30):  # more chunks than CALIBRATION_DEPTH: chunk cosines are calibrated, lines only mark
        (ws / "memory" / f"2025-01-{1 + i:02d}.md").write_text(f"# 2025-01-{1 + i:02d}\n\n- {errands[i % 5]}\n- Meeting notes {i}.\n")
    (ws / "memory" / "2026-10-09.md").write_text(
        "# 2026-10-09\n\n- Groceries for the week.\n- Ran 5 km in 27 minutes.\n- Called the plumber.\n"
    )
    agent = make_agent(ws, db_path=tmp_path / "i.sqlite", provider="local", local={"model_path": str(MODEL_PATH)})
    with MemoryIndex(agent) as idx:
        idx.sync(reason="manual")
        r = idx.search("how fast did I run 5k?")[0]
    assert r.path == "memory/2026-10-09.md" and r.best_line == 4
    assert marked(r) == ["> 4  - Ran 5 km in 27 minutes."]


def test_a_sync_caches_the_lines_of_a_small_index_for_its_searches(tiny, monkeypatch):
    from memext.engine.search import lines

    # A search in a new process reads the lines the sync cached: it embeds
    # the query and nothing else.
    monkeypatch.setattr(lines, "_CACHE", {})
    provider = tiny.provider_choice.provider

    def no_batch(texts, progress=None):
        raise AssertionError(f"a search embedded {len(texts)} lines")

    monkeypatch.setattr(provider, "embed_batch", no_batch)
    resp = tiny.search("which seat do I like on a plane?")
    assert resp.confident and "window seats" in marked(resp[0])[0]
