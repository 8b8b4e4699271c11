"""Trustworthy answers: calibrated confidence, honest empty answers, stop
words, stem-matched excerpt lines, knowledge updates (DESIGN.md §7)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Sequence

import numpy as np
from click.testing import CliRunner
from conftest import HashingProvider, make_agent

from memext.engine import MemoryIndex, MemoryTools
from memext.engine.faces.cli.commands import cli

NOTES = {
    "MEMORY.md": "# Memory\n\n## Projects\n- Vessel tracker: Python service, deploys to fly.io.\n"
    "- Alerts go to the ops channel when queue lag passes 30 s.\n"
    "- We cache vessel lookups for 10 minutes to stay under the API quota.\n"
    "- Release commit for v2.3 is a828e60.\n",
    "memory/2026-09-03.md": "# 2026-09-03\n\n- Vessel data vendor quote: 2,400 EUR per month.\n- Ran 5 km.\n",
    "memory/2026-10-07.md": "# 2026-10-07\n\n- Vessel data contract negotiated down to 2,150 EUR per month; contract signed.\n"
    "- Vacation planned: Lisbon, 12-19 November.\n",
}


#: Enough other notes that an index estimates its model's null from its
#: own entries (confidence.MIN_NULL_ENTRIES and more).
FILLER_WORDS = (
    "garden tomatoes basil compost",
    "train ticket refund delayed",
    "piano lesson scales practice",
    "bike tyre puncture repair",
    "tax return receipts folder",
    "birthday cake lemon sponge",
    "roof gutter leaves ladder",
    "printer toner cartridge order",
    "swimming pool lanes morning",
    "library books overdue fine",
    "car insurance renewal quote",
    "dentist cleaning reminder card",
)


def write_notes(ws: Path, filler: int = 0) -> Path:
    notes = dict(NOTES)
    for i in range(filler):
        words = FILLER_WORDS[i % len(FILLER_WORDS)]
        notes[f"memory/2025-{1 + i // 28:02d}-{1 + i % 28:02d}.md"] = f"# Day {i}\n\n- {words} number {i}.\n"
    for rel, text in notes.items():
        (ws / rel).parent.mkdir(parents=True, exist_ok=True)
        (ws / rel).write_text(text, encoding="utf-8")
    return ws


class CompressedProvider(HashingProvider):
    """Another provider's score scale: the same directions plus a shared
    constant one, so every cosine becomes ``(a * cos + b) / (a + b)``
    (crowded towards 1, as some models' cosines are)."""

    def __init__(self):
        super().__init__(dims=64, model="hash-compressed")

    @property
    def dims(self) -> int:
        return 65

    def _vec(self, text: str) -> list[float]:
        v = np.asarray(super()._vec(text), dtype=np.float32)
        v = v / max(1e-9, float(np.linalg.norm(v)))
        return [*v.tolist(), 1.5]


def index_for(ws: Path, tmp_path: Path, provider, name: str) -> MemoryIndex:
    idx = MemoryIndex(make_agent(ws, db_path=tmp_path / f"{name}.sqlite"), provider=provider)
    idx.sync(reason="manual")
    return idx


QUERIES: Sequence[str] = (
    "vessel lookups cache",
    "a828e60",
    "deadbeef12",
    "zzqqxxyy",
    "vacation Lisbon",
    "contract EUR",
    "alerts queue lag",
    "the and of",
    "what did Marco say about the budget?",
)


def test_two_score_scales_give_the_same_verdicts(tmp_path):
    ws = write_notes(tmp_path / "notes", filler=36)
    with (
        index_for(ws, tmp_path, HashingProvider(), "plain") as plain,
        index_for(ws, tmp_path, CompressedProvider(), "squeezed") as squeezed,
    ):
        answers = [[idx.search(q, include_weak=True) for q in QUERIES] for idx in (plain, squeezed)]
        # The same answers are confident, and a hit both return is judged alike
        # (the fused ranking still uses raw cosines, so the lists may differ).
        assert [a.confident for a in answers[0]] == [a.confident for a in answers[1]]
        for a, b in zip(*answers):
            mine = {r.citation: r.confidence for r in a}
            assert all(abs(mine[r.citation] - r.confidence) < 0.02 for r in b if r.citation in mine)
        verdicts = [[a.confident for a in answers[0]]]
        # The two scales really differ: the raw cosines of one hit are not alike.
        a = plain.search("vessel lookups cache", explain=True)[0].explain["vector"]["similarity"]
        b = squeezed.search("vessel lookups cache", explain=True)[0].explain["vector"]["similarity"]
        assert b > a + 0.2
        # Both kinds of verdict are on the fixture.
        assert set(verdicts[0]) == {True, False}


def test_an_exact_rare_token_is_confident_with_a_weak_vector(tmp_path):
    ws = write_notes(tmp_path / "notes")
    # A model that sees nothing in hashes: only the keyword side knows a828e60.
    with index_for(ws, tmp_path, HashingProvider(dims=16, blind_to_digits=True), "blind") as idx:
        resp = idx.search("a828e60")
        assert resp.confident and resp[0].path == "MEMORY.md" and resp[0].best_line == 7
        assert any(line.startswith(">") and "a828e60" in line for line in resp[0].excerpt.to_text().splitlines())


def test_an_id_prefix_and_a_quoted_phrase_are_confident(tmp_path):
    ws = write_notes(tmp_path / "notes", filler=30)
    (ws / "memory" / "2026-10-07.md").write_text(NOTES["memory/2026-10-07.md"] + "- Hotfix 9f3c2ab1e7 deployed.\n")
    with index_for(ws, tmp_path, HashingProvider(dims=16, blind_to_digits=True), "blind") as idx:
        prefix = idx.search("9f3c2ab", explain=True)
        assert prefix.confident and prefix[0].path == "memory/2026-10-07.md"
        assert prefix[0].explain["evidence"]["exact"] == 1.0  # exact evidence, whatever the vector says
        quoted = idx.search('"we cache vessel lookups" for how long', include_weak=True, explain=True)
        held = [r for r in quoted if r.path == "MEMORY.md"]
        assert held and held[0].confident and held[0].explain["evidence"]["exact"] == 1.0 and held[0].best_line == 6


def test_nothing_in_memory_is_an_empty_answer_with_a_notice(tmp_path):
    ws = write_notes(tmp_path / "notes")
    with index_for(ws, tmp_path, HashingProvider(), "h") as idx:
        for q in ("deadbeef12", "zzqqxxyy", "what did Marco say about the budget?", "what did Marco say about the vessel?"):
            resp = idx.search(q)
            assert resp.results == [] and not resp.confident
            assert resp.notice and resp.notice.startswith(f"no memory matches {q!r}")
        weak = idx.search("what did Marco say about the vessel?", include_weak=True)
        assert weak.results and not any(r.confident for r in weak)


def test_stop_words_never_carry_a_match(tmp_path):
    ws = write_notes(tmp_path / "notes")
    with index_for(ws, tmp_path, None, "kw") as idx:
        # Keyword-only: a query of stop words has nothing to search for.
        resp = idx.search("the and of")
        assert resp.results == [] and "no memory matches" in resp.notice
        # "when" (in the alerts line) does not outrank the vacation line.
        assert idx.search("when is my vacation?")[0].best_line == 4
    with index_for(ws, tmp_path, HashingProvider(), "h") as idx:
        assert idx.search("the and of").mode == "hybrid"  # searched by meaning alone


def test_the_excerpt_marks_the_line_matched_by_stem(tmp_path):
    ws = write_notes(tmp_path / "notes")
    with index_for(ws, tmp_path, None, "kw") as idx:
        r = idx.search("caching")[0]
        assert r.path == "MEMORY.md" and r.best_line == 6
        shown = r.excerpt.to_text().splitlines()
        assert any(line.startswith(">") and "We cache vessel lookups" in line for line in shown)


def test_the_newer_of_two_conflicting_dated_notes_comes_first(tmp_path):
    ws = write_notes(tmp_path / "notes")
    with index_for(ws, tmp_path, None, "kw") as idx:
        resp = idx.search("vessel data EUR per month")
        paths = [r.path for r in resp]
        assert paths.index("memory/2026-10-07.md") < paths.index("memory/2026-09-03.md")
        assert resp[0].date == "2026-10-07"
        # An old note that is the only match stays.
        assert idx.search("vendor quote")[0].path == "memory/2026-09-03.md"


def test_cli_says_no_memory_matches_and_exits_1(tmp_path, monkeypatch):
    ws = write_notes(tmp_path / "notes")
    cfg = tmp_path / "config.toml"
    cfg.write_text(f'[memory_search]\nprovider = "none"\n[[agents]]\nid = "w"\nworkspace = "{ws}"\n')
    monkeypatch.setenv("MEMEXT_CONFIG", str(cfg))
    r = CliRunner().invoke(cli, ["search", "deadbeef12"], catch_exceptions=False)
    assert r.exit_code == 1 and "no memory matches 'deadbeef12'" in r.output
    r = CliRunner().invoke(cli, ["search", "deadbeef12", "--json"], catch_exceptions=False)
    assert r.exit_code == 1 and json.loads(r.output)["results"] == []
    r = CliRunner().invoke(cli, ["search", "a828e60"], catch_exceptions=False)
    assert r.exit_code == 0 and "MEMORY.md:" in r.output and "confidence" in r.output


def test_a_newer_note_moved_above_a_higher_score_says_newer(tmp_path, monkeypatch):
    ws = write_notes(tmp_path / "notes")
    with index_for(ws, tmp_path, None, "kw") as idx:
        resp = idx.search("vessel data EUR per month")
        paths = [r.path for r in resp]
        new, old = resp[paths.index("memory/2026-10-07.md")], resp[paths.index("memory/2026-09-03.md")]
        assert new.score < old.score  # the rule, not the score, put it first
        assert new.reordered == "newer" and old.reordered is None
        assert [r.path for r in resp if r.reordered == "newer"] == ["memory/2026-10-07.md"]
        assert idx.search("vendor quote")[0].reordered is None  # in its score's place
        # Every result above a higher score says why; the rest say nothing.
        for query in ("vessel data EUR per month", "vessel", "contract EUR", "Lisbon vacation", "queue lag alerts"):
            got = idx.search(query, max_results=8, min_score=0, include_weak=True)
            for k, r in enumerate(got):
                assert (r.reordered is not None) == any(o.score > r.score for o in got[k + 1 :]), (query, k)
                assert r.reordered in (None, "newer", "more confident")
    cfg = tmp_path / "config.toml"
    cfg.write_text(f'[memory_search]\nprovider = "none"\n[[agents]]\nid = "w"\nworkspace = "{ws}"\n')
    monkeypatch.setenv("MEMEXT_CONFIG", str(cfg))
    r = CliRunner().invoke(cli, ["search", "vessel data EUR per month"], catch_exceptions=False)
    heads = [line for line in r.output.splitlines() if line[:1].isdigit()]
    assert "memory/2026-10-07.md" in heads[paths.index("memory/2026-10-07.md")] and "[newer]" in heads[paths.index("memory/2026-10-07.md")]
    assert sum("[newer]" in h for h in heads) == 1
    r = CliRunner().invoke(cli, ["search", "vessel data EUR per month", "--json"], catch_exceptions=False)
    assert [h["reordered"] for h in json.loads(r.output)["results"] if h["path"] == "memory/2026-10-07.md"] == ["newer"]


def test_the_newer_tag_reaches_the_tool_result_and_the_notebook(tmp_path):
    from memext.results import result_html

    ws = write_notes(tmp_path / "notes")
    agent = make_agent(ws, db_path=tmp_path / "t.sqlite")
    with MemoryTools(lambda _id: MemoryIndex(agent, provider=None), ["test"]) as tools:
        hits = tools.call_tool("memory_search", {"query": "vessel data EUR per month"})["results"]
    tagged = [h for h in hits if h.get("reordered") == "newer"]  # the key only where it says something
    assert [(h["citation"].split(":")[0], h["reordered"]) for h in tagged] == [("memory/2026-10-07.md", "newer")]
    with index_for(ws, tmp_path, None, "nb") as idx:
        [new] = [r for r in idx.search("vessel data EUR per month") if r.reordered]
    html = result_html(new, "vessel data EUR per month")
    assert "[newer]</span>" in html and 'title="a newer note on the same subject' in html
