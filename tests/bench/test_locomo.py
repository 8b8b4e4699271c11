"""bench/locomo.py writes the LoCoMo workspace of the protocol (one line per
turn) and records where each turn landed: checked on the dev split, no model."""

from __future__ import annotations

import importlib.util
import json
import sys
from typing import NamedTuple

import pytest
from conftest import LOCOMO_DEV, ROOT

from memext.engine.memory.chunking import split_lines


def _load_bench():
    name = "bench_locomo_under_test"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, ROOT / "bench" / "locomo.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up while the class is built
    spec.loader.exec_module(module)
    return module


locomo = _load_bench()


class Expected(NamedTuple):
    """What the tests below know of one data file: the same anchors (sample
    and turn ids) hold in the real dev split and in the small invented set
    of its format that a checkout without ../shared uses (tests/data/)."""

    joined_d25_3: str  # conv-42 D25:3 as written: line breaks and a photo caption joined
    two_session_query: str  # conv-43: category 2, evidence D4:8 (multi-line) and D22:2
    three_turn_query: str  # conv-42: evidence D25:21, D25:23, D28:31
    kept: int  # questions with evidence (bench/LOCOMO_RESULTS.md gives the dev split's)


EXPECTED = {
    "locomo-dev.json": Expected(
        "- **Nate**: Congrats Joanna! How was it to finally see it on the big screen? "
        "[shares a photo holding a videogame controller] "
        "[shares a photo: a photo of a box with a controller inside of it]",
        "When did John attend the Harry Potter trivia?",
        "What activities does Nate do with his turtles?",
        760,
    ),
    "locomo-mini.json": Expected(
        "- **Nate**: Congrats! How did the screening go? [shares a photo of a ticket] [shares a photo: a photo of a cinema ticket]",
        "When did John go to the board game night?",
        "What does Nate do with his turtles?",
        7,
    ),
}[LOCOMO_DEV.name]


@pytest.fixture(scope="module")
def dev() -> list[dict]:
    return json.loads(LOCOMO_DEV.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def written(dev, tmp_path_factory):
    """sample_id -> (sample, layout, {path: lines of the file as written, as the engine splits them})."""
    root = tmp_path_factory.mktemp("locomo")
    out = {}
    for sample in dev:
        layout = locomo.build_layout(sample["conversation"])
        ws = root / sample["sample_id"]
        locomo.write_workspace(layout, ws)
        files = {}
        for path in layout.files:
            text = (ws / path).read_text(encoding="utf-8")
            assert text.endswith("\n")
            files[path] = split_lines(text[:-1])
        assert sorted(p.relative_to(ws).as_posix() for p in (ws / "memory").glob("*.md")) == sorted(files)
        assert not (ws / "MEMORY.md").exists()
        out[sample["sample_id"]] = (sample, layout, files)
    return out


def _turns(sample: dict):
    conv = sample["conversation"]
    for n in locomo.session_numbers(conv):
        for turn in conv[f"session_{n}"]:
            yield n, turn


def _text_start(raw: str) -> str:
    """The turn's first words, up to its first line break."""
    return raw.strip().split("\n")[0].strip()[:40]


def holds(line: str, turn: dict) -> bool:
    """``line`` is ``turn`` as the protocol writes it: ``- **{speaker}**: {text}``
    (the text may start with white space of its own)."""
    prefix = f"- **{turn['speaker']}**: "
    return line.startswith(prefix) and line[len(prefix) :].lstrip().startswith(_text_start(turn["text"]))


def test_one_line_collapses_line_breaks_only():
    assert locomo.one_line("a\n\n[shares a photo]") == "a [shares a photo]"
    assert locomo.one_line("a \r\n  b\rc") == "a b c"
    assert locomo.one_line("trailing!\n\n") == "trailing!"
    assert locomo.one_line("\nleading") == "leading"
    assert locomo.one_line("keeps  double\tspaces ") == "keeps  double\tspaces "


def test_dev_split_has_multi_line_turns(dev):
    # The case the writer must handle: if the data ever loses these, the
    # other tests here no longer cover it.
    multi = [(s["sample_id"], t["dia_id"]) for s in dev for _, t in _turns(s) if "\n" in t["text"]]
    assert ("conv-41", "D3:4") in multi and ("conv-42", "D25:3") in multi
    assert len(multi) >= 10


def test_every_turn_is_one_line_at_its_recorded_line(written):
    checked = 0
    for sid, (sample, layout, files) in written.items():
        # Exactly the lines the layout holds: no turn spilled onto extra lines.
        for path, lines in layout.files.items():
            assert files[path] == lines, f"{sid} {path}"
        for n, turn in _turns(sample):
            dia = locomo.canonical_dia_id(turn["dia_id"])
            path, line = layout.turns[dia]
            got = files[path][line - 1]
            prefix = f"- **{turn['speaker']}**: "
            assert got.startswith(prefix), f"{sid} {dia} -> {path}:{line} holds {got[:80]!r}"
            assert holds(got, turn), f"{sid} {dia} -> {path}:{line} holds {got[:80]!r}"
            assert "\n" not in got and "\r" not in got
            if turn.get("blip_caption"):
                assert got.endswith(f" [shares a photo: {locomo.one_line(turn['blip_caption'])}]")
            first, last = layout.sessions[n][1:]
            assert layout.sessions[n][0] == path and first < line <= last
            checked += 1
    assert checked == sum(
        len(s["conversation"][f"session_{n}"]) for s, _, _ in written.values() for n in locomo.session_numbers(s["conversation"])
    )


def test_session_spans_run_from_heading_to_last_turn(written):
    for sid, (sample, layout, files) in written.items():
        conv = sample["conversation"]
        for n, (path, first, last) in layout.sessions.items():
            assert files[path][first - 1].startswith(f"## Session {n} ("), f"{sid} session {n}"
            last_turn = conv[f"session_{n}"][-1]
            assert layout.turns[locomo.canonical_dia_id(last_turn["dia_id"])] == (path, last)


def test_multi_line_turn_text_is_joined_with_one_space(written):
    _, layout, files = written["conv-42"]
    path, line = layout.turns["D25:3"]
    assert files[path][line - 1] == EXPECTED.joined_d25_3
    # A later turn of the same file still sits on its recorded line.
    sample = written["conv-42"][0]
    later = sample["conversation"]["session_25"][-1]
    path2, line2 = layout.turns[locomo.canonical_dia_id(later["dia_id"])]
    assert path2 == path and line2 > line
    assert holds(files[path][line2 - 1], later)


def test_evidence_of_a_question_on_a_multi_line_turn(written):
    sample, layout, files = written["conv-43"]
    by_dia = {locomo.canonical_dia_id(t["dia_id"]): t for _, t in _turns(sample)}
    assert "\n" in by_dia["D4:8"]["text"]
    questions = locomo.load_questions(sample, layout)
    q = next(q for q in questions if q.query == EXPECTED.two_session_query)
    assert q.category == 2
    assert q.turns == (layout.turns["D4:8"], layout.turns["D22:2"])
    for (path, line), dia in zip(q.turns, ("D4:8", "D22:2")):
        turn = by_dia[dia]
        assert holds(files[path][line - 1], turn)
    # Each evidence session is the span that holds the turn.
    assert len(q.sessions) == 2
    for (path, line), (spath, first, last) in zip(q.turns, q.sessions):
        assert path == spath and first < line <= last


def test_every_questions_evidence_points_at_its_turns(written):
    kept = 0
    for sid, (sample, layout, files) in written.items():
        by_dia = {locomo.canonical_dia_id(t["dia_id"]): t for _, t in _turns(sample)}
        qas = [qa for qa in sample["qa"] if qa.get("category") in locomo.CATEGORIES]
        questions = iter(locomo.load_questions(sample, layout))
        for qa in qas:
            tokens = [t for item in qa.get("evidence") or [] for t in locomo._EVIDENCE_SPLIT.split(str(item)) if t]
            dias = list(dict.fromkeys(locomo.canonical_dia_id(t) for t in tokens if locomo.canonical_dia_id(t) in by_dia))
            if not dias:
                continue
            q = next(questions)
            assert q.query == qa["question"]
            assert len(q.turns) == len(dias)
            for (path, line), dia in zip(q.turns, dias):
                turn = by_dia[dia]
                assert holds(files[path][line - 1], turn), (sid, dia)
            kept += 1
        assert next(questions, None) is None
    assert kept == EXPECTED.kept


def test_score_counts_a_result_covering_the_multi_line_turn(written):
    sample, layout, _ = written["conv-43"]
    q = next(q for q in locomo.load_questions(sample, layout) if q.query == EXPECTED.two_session_query)
    (path, line), _ = q.turns
    hit = locomo.SearchResult(path=path, start_line=line - 1, end_line=line + 1, score=0.5, snippet="", source="memory")
    s = locomo.score([hit], q)
    assert s["turn_recall"] == 0.5 and s["turn_hit"] == 1.0 and s["mrr"] == 1.0 and s["lines"] == 3.0


def test_evidence_after_a_multi_line_turn_in_the_same_file(written):
    # D25:3 holds "\n\n"; D25:21 and D25:23 come after it in the same file,
    # so a writer that let the text spill onto extra lines recorded them off.
    sample, layout, files = written["conv-42"]
    by_dia = {locomo.canonical_dia_id(t["dia_id"]): t for _, t in _turns(sample)}
    q = next(q for q in locomo.load_questions(sample, layout) if q.query == EXPECTED.three_turn_query)
    assert q.turns == tuple(layout.turns[d] for d in ("D25:21", "D25:23", "D28:31"))
    assert layout.turns["D25:21"][0] == layout.turns["D25:3"][0]
    for (path, line), dia in zip(q.turns, ("D25:21", "D25:23", "D28:31")):
        assert holds(files[path][line - 1], by_dia[dia]), dia
    path, line = q.turns[0]
    exact = locomo.SearchResult(path=path, start_line=line, end_line=line, score=0.5, snippet="", source="memory")
    assert locomo.score([exact], q)["turn_recall"] == pytest.approx(1 / 3)


def _hit(path: str, start: int, end: int) -> "locomo.SearchResult":
    return locomo.SearchResult(path=path, start_line=start, end_line=end, score=0.5, snippet="", source="memory")


def test_within_budget_keeps_rank_order_and_stops_at_the_first_result_past_60_lines():
    results = [_hit("a.md", 1, 30), _hit("a.md", 40, 69), _hit("b.md", 1, 1), _hit("b.md", 5, 5)]
    assert locomo.within_budget(results) == results[:2]  # 30 + 30 = 60 lines: the 1-line third would pass
    assert locomo.within_budget([_hit("a.md", 1, 61), _hit("b.md", 1, 1)]) == []
    assert locomo.within_budget(results, budget=59) == results[:1]


def test_recall_at_l60_is_reported_per_mode_and_category(written):
    sample, layout, _ = written["conv-43"]
    questions = locomo.load_questions(sample, layout)
    q = next(q for q in questions if q.category == 1 and len(q.turns) == 2)
    (path, line), _ = q.turns[0], q.turns[1]
    # Ranked: a 70-line span holding the evidence (past the budget), so
    # at L60 nothing is read although @6 covers the first turn.
    big = _hit(path, max(1, line - 10), max(1, line - 10) + 69)
    mode = locomo.Mode("m", "a mode")
    run = locomo.ConversationRun(
        "conv-43",
        1,
        1,
        1,
        {},
        {
            "m": {
                6: [(1, locomo.score([big], q))],
                10: [(1, locomo.score([big], q))],
                locomo.BUDGET_KEY: [(1, locomo.score(locomo.within_budget([big, _hit(path, line, line)]), q))],
            }
        },
        {"m": [1.0]},
    )
    figures = locomo.aggregate([run], [mode])
    assert figures["m"]["k6"]["overall"]["turn_recall"] == 0.5
    assert figures["m"]["L60"]["overall"]["turn_recall"] == 0.0
    assert figures["m"]["L60"]["multi-hop"]["n"] == 1 and figures["m"]["L60"]["temporal"]["n"] == 0
    meta = {"questions_per_category": {locomo.CATEGORY_NAMES[c]: 0 for c in locomo.CATEGORIES}}
    table = locomo.render_table(figures, meta)
    assert "recall@L60" in table and "multi-hop @L60" in table
