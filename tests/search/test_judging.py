"""Entries as the unit of judgement (engine/search/judging.py): the entry
that answers is marked, recalled and decides the confidence, whatever
else its chunk holds and whatever the size of the workspace (DESIGN.md §7)."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import MODEL_PATH, HashingProvider, make_agent

from memext.engine import MemoryIndex
from memext.engine.search import judging

INES = (
    "# Memory\n\n## People\n\n"
    "- Ines works on the Harbor data team.\n"
    "- Lars lives in Bergen and rows on Tuesday evenings.\n"
    "- Ines drinks green tea every afternoon.\n"
)


def local_index(ws: Path, tmp_path: Path) -> MemoryIndex:
    idx = MemoryIndex(make_agent(ws, db_path=tmp_path / "i.sqlite", provider="local", local={"model_path": str(MODEL_PATH)}))
    idx.sync(reason="manual")
    return idx


def marked(result) -> list[str]:
    return [line for line in result.excerpt.to_text().splitlines() if line.startswith(">")]


@pytest.fixture
def ines(tmp_path) -> MemoryIndex:
    """MEMORY.md after a supersede: the tea entry marked, the coffee entry
    appended, as memext writes them."""
    ws = tmp_path / "notes"
    ws.mkdir()
    (ws / "MEMORY.md").write_text(INES, encoding="utf-8")
    with local_index(ws, tmp_path) as idx:
        idx.append("Ines switched: she now prefers black coffee, no tea.", file="MEMORY.md", supersedes="MEMORY.md:7")
        yield idx


def test_the_entry_that_answers_is_marked_not_the_first_holding_the_name(ines):
    resp = ines.search("what does Ines like to drink?")
    assert resp.confident
    assert len(marked(resp[0])) == 1 and "black coffee" in marked(resp[0])[0]
    work = ines.search("where does Ines work?")
    assert work.confident and "Harbor data team" in marked(work[0])[0]


def test_recall_hands_on_the_entry_that_answers(ines):
    got = ines.recall("what does Ines drink these days?")
    assert got and "black coffee" in got.results[0].snippet and "Harbor" not in got.context
    assert "green tea" not in got.context  # superseded: never recalled


def test_a_topic_memory_never_mentions_is_nothing_for_a_person_it_knows(ines):
    assert ines.search("what is Ines's blood type?").results == []


def test_an_id_no_note_holds_is_nothing_and_one_held_is_confident(tmp_path):
    ws = tmp_path / "notes"
    (ws / "memory").mkdir(parents=True)
    (ws / "memory" / "2026-07-03.md").write_text(
        "# 2026-07-03\n\n- INC-4471 on Cobalt: the export stalled; root cause was a lock.\n"
        "- Merged the pagination fix as 9dd50e936d755bbe2544fe54cbe377c93a8c3987.\n- Lunch with Clara.\n"
    )
    with local_index(ws, tmp_path) as idx:
        for q in ("what happened in INC-9999?", "INC-9999", "deadbeef12", "which fix is in 9dd50e9f?"):
            assert idx.search(q).results == [], q
        for q, line in (("what happened in INC-4471?", 3), ("INC-4471", 3), ("which fix is in 9dd50e9?", 4), ("9dd50e936d7", 4)):
            resp = idx.search(q)
            assert resp.confident and resp[0].best_line == line, q


def test_a_word_in_common_is_not_an_answer(tmp_path):
    ws = tmp_path / "notes"
    (ws / "memory").mkdir(parents=True)
    (ws / "MEMORY.md").write_text(
        "# Memory\n\n- Password manager: moved the family vault from LastPass to Bitwarden.\n- Landlord: Mr. Haddad.\n"
    )
    (ws / "memory" / "2026-02-01.md").write_text("# 2026-02-01\n\n- Changed the router's admin login.\n")
    with local_index(ws, tmp_path) as idx:
        assert idx.search("what is the wifi password at the office?").results == []
        assert idx.search("which password manager do we use?").confident


DECISIONS = {
    "MEMORY.md": "# Memory\n\n## memext\n- Memory search for agents; SQLite, sqlite-vec and FTS5.\n"
    "- Decision: weighted fusion (0.5/0.5) by default; RRF stays an option.\n"
    "- Decision: the index is disposable; the Markdown files are the source of truth.\n\n"
    "## Dana\n- Dana prefers short answers, code first.\n- Dana drinks green tea after 2 pm.\n",
    "memory/2026-10-14.md": "# 2026-10-14\n\n- Compared weighted fusion and rank fusion on LoCoMo.\n- Dana reviewed the chunker.\n",
    "memory/2026-10-21.md": "# 2026-10-21\n\n- Design review with Dana: the index is rebuilt from the files.\n",
}


def test_a_word_the_notes_say_in_another_form_is_held_by_that_note(tmp_path):
    # No note says "decide"; the one that answers says "Decision": a
    # question's word in another form does not count against the note.
    ws = tmp_path / "notes"
    for rel, text in DECISIONS.items():
        (ws / rel).parent.mkdir(parents=True, exist_ok=True)
        (ws / rel).write_text(text, encoding="utf-8")
    with local_index(ws, tmp_path) as idx:
        resp = idx.search("what did we decide about fusion?")
        assert resp.confident and resp[0].path == "MEMORY.md"
        assert len(marked(resp[0])) == 1 and "Decision: weighted fusion" in marked(resp[0])[0]
        # Another form of one word of the question is not an answer to the rest.
        assert idx.search("what did we decide about the wedding venue?").results == []


@pytest.mark.parametrize("entries", [5, 30, 100, 300, 1000, 3000])
def test_every_workspace_size_is_judged_entry_by_entry(tmp_path, monkeypatch, entries):
    # One path for every size: the hits' entries are read from the index and
    # the best of them decides the marked line and the confidence.
    ws = tmp_path / "notes"
    (ws / "memory").mkdir(parents=True)
    per_day = 10
    for day in range(max(1, entries // per_day)):
        items = "".join(f"- Note {day}-{i}: errand {i} of the day with Kai.\n" for i in range(min(per_day, entries)))
        (ws / "memory" / f"2025-{1 + day // 28 % 12:02d}-{1 + day % 28:02d}-{day // 336}.md").write_text(f"# Day {day}\n\n{items}")
    (ws / "MEMORY.md").write_text("# Memory\n\n- Kai: works at Brightloop.\n- Kai drinks mint tea.\n")
    read: list[int] = []
    real = judging.judge_hits

    def counted(store, judge, hits, *args, **kwargs):
        out = real(store, judge, hits, *args, **kwargs)
        read.append(sum(len(j.entries) for j in out))
        return out

    monkeypatch.setattr(judging, "judge_hits", counted)
    monkeypatch.setattr("memext.engine.search.pipeline.judge_hits", counted)
    with MemoryIndex(make_agent(ws, db_path=tmp_path / "i.sqlite"), provider=HashingProvider()) as idx:
        idx.sync(reason="manual")
        resp = idx.search("Kai mint tea drinks", include_weak=True, explain=True)
    assert read and read[0] >= 2
    top = resp[0]
    assert top.path == "MEMORY.md" and top.best_line == 4
    assert top.confidence == top.explain["evidence"]["confidence"] == max(e["confidence"] for e in top.explain["entries"])


#: A workspace of a few notes: judged by the same path as any other.
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
    with local_index(ws, tmp_path) as idx:
        yield idx


@pytest.mark.parametrize(
    "query, path, line",
    [
        ("which seat do I like on a plane?", "MEMORY.md", "window seats"),  # "plane": no note says it
        ("what did Dana fix in the refund code?", "memory/2026-10-07.md", "Dana fixed"),
        ("where are the spare keys?", "MEMORY.md", "Spare key"),
    ],
)
def test_a_question_in_a_tiny_workspace_is_answered_at_its_entry(tiny, query, path, line):
    resp = tiny.search(query)
    assert resp.confident and resp[0].path == path
    assert len(marked(resp[0])) == 1 and line in marked(resp[0])[0]


def test_a_paraphrase_with_no_word_in_common_marks_its_entry_even_when_weak(tiny):
    # Meaning alone: the entry is found and marked; how sure the search is
    # of it is the fitted confidence's to say (--weak shows it).
    resp = tiny.search("how fast did I run 5k?", include_weak=True)
    assert resp[0].path == "memory/2026-09-03.md" and "Ran 5 km" in marked(resp[0])[0]


@pytest.mark.parametrize("query", ["what is my passport number?", "what is my blood type?", "when did I visit Tokyo?", "deadbeef12"])
def test_an_absent_fact_in_a_tiny_workspace_is_answered_nothing(tiny, query):
    resp = tiny.search(query)
    assert resp.results == [] and resp.notice.startswith("no memory matches")


def test_results_come_in_the_order_of_their_confidence(tiny):
    resp = tiny.search("what did Dana fix in the refund code?", include_weak=True)
    assert resp[0].path == "memory/2026-10-07.md" and resp[0].confident
    assert [r.confidence for r in resp] == sorted((r.confidence for r in resp), reverse=True)
    kettle = [r for r in resp if r.path == "memory/2026-11-02.md"]
    assert kettle and not kettle[0].confident
