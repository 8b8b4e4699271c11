"""bench/trust/: the trust benchmark's workspaces and questions
are deterministic, as large and varied as promised, split into halves that
each hold every kind, and labelled with lines that hold their answers. No
model: the scorer (bench/trust/run.py) is not run here."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections import Counter

import pytest
from conftest import ROOT

sys.path.insert(0, str(ROOT / "bench"))

from trust.generate import build_suite, load_manifest, write_suite  # noqa: E402
from trust.questions import KINDS, UNANSWERABLE  # noqa: E402
from trust.world import SIZES_ORDER, STYLES  # noqa: E402

_DIGESTS = """
import json, sys
sys.path.insert(0, "bench")
from trust.generate import build_suite
print(json.dumps({ws.spec.id: ws.digest() for ws in build_suite()}))
"""


@pytest.fixture(scope="module")
def suite():
    return build_suite()


def _questions(suite, kind=None):
    return [q for ws in suite for q in ws.questions if kind in (None, q.kind)]


def test_same_seed_gives_the_same_bytes_whatever_the_hash_seed(tmp_path, suite):
    """Two processes with different string hashing build identical suites,
    the digests the manifest recorded when the split was made."""
    digests = []
    for hash_seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": hash_seed}
        out = subprocess.run([sys.executable, "-c", _DIGESTS], cwd=ROOT, env=env, capture_output=True, text=True, check=True)
        digests.append(json.loads(out.stdout))
    assert digests[0] == digests[1]
    _, _, recorded = load_manifest()
    assert digests[0] == recorded, "the generator changed: run bench/trust/generate.py --update-digests deliberately"
    # Written twice, the files are byte-identical and the second write changes nothing.
    write_suite(suite[:3], tmp_path / "a")
    write_suite(build_suite([ws.spec for ws in suite[:3]]), tmp_path / "b")
    a = {p.relative_to(tmp_path / "a"): p.read_bytes() for p in sorted((tmp_path / "a").rglob("*")) if p.is_file()}
    b = {p.relative_to(tmp_path / "b"): p.read_bytes() for p in sorted((tmp_path / "b").rglob("*")) if p.is_file()}
    assert a == b and any(str(p).endswith("MEMORY.md") for p in a)


def test_counts(suite):
    kinds = Counter(q.kind for q in _questions(suite))
    assert kinds["answerable"] >= 500
    assert sum(kinds[k] for k in (*UNANSWERABLE, "superseded")) >= 300
    for k in (*UNANSWERABLE, "superseded"):
        assert kinds[k] >= 50, k
    assert len(suite) >= 16
    for ws in suite:
        assert ws.entries == ws.spec.size, ws.spec.id
        assert "MEMORY.md" in ws.files or ws.spec.size <= 30, ws.spec.id
        assert all(p == "MEMORY.md" or re.fullmatch(r"memory/\d{4}-\d{2}-\d{2}\.md", p) for p in ws.files)
    assert {ws.spec.size for ws in suite} == set(SIZES_ORDER)
    assert {ws.spec.style for ws in suite} == set(STYLES)
    assert {ws.spec.lang for ws in suite} >= {"en", "de", "pt"}


def test_halves_are_disjoint_and_each_covers_every_kind_size_and_style(suite):
    halves = {h: [ws for ws in suite if ws.spec.half == h] for h in ("tune", "check")}
    assert {ws.spec.half for ws in suite} == {"tune", "check"}
    assert not {ws.spec.id for ws in halves["tune"]} & {ws.spec.id for ws in halves["check"]}
    for h, group in halves.items():
        assert {q.kind for q in _questions(group)} == set(KINDS), h
        assert {ws.spec.size for ws in group} == set(SIZES_ORDER), h
        assert {ws.spec.style for ws in group} == set(STYLES), h


def test_every_label_points_at_a_line_that_holds_its_answer(suite):
    for ws in suite:
        lines = {p: t.splitlines() for p, t in ws.files.items()}
        for q in ws.questions:
            assert bool(q.answers) == (q.kind in ("answerable", "superseded")), q.id
            assert bool(q.stale) == (q.kind == "superseded"), q.id
            for label in (*q.answers, *q.stale):
                assert label.start <= label.line <= label.end <= len(lines[label.path]), q.id
                assert label.text in lines[label.path][label.line - 1], q.id


def test_unanswerable_questions_name_nothing_the_notes_hold(suite):
    for ws in suite:
        text = "\n".join(ws.files.values())
        words = set(re.findall(r"\w+", text.lower()))
        hashes = re.findall(r"\b[0-9a-f]{7,40}\b", text.lower())
        for q in ws.questions:
            if q.kind == "absent_person":
                names = [w for w in re.findall(r"\b[A-Z][a-z]+\b", q.query)[1:] or re.findall(r"\b[A-Z][a-z]+\b", q.query)]
                assert any(n.lower() not in words for n in names), q.id
            if q.kind == "absent_id":
                ident = next(t for t in q.query.replace("?", "").split() if re.search(r"\d", t))
                assert ident.lower() not in text.lower(), q.id
                assert not any(h.startswith(ident.lower()) or ident.lower().startswith(h) for h in hashes), q.id


def test_supersedes_are_marked_in_memext_s_format_or_only_told(suite):
    """Some changes carry memext's own marks (DESIGN.md §17), the others are
    only a later note saying the fact changed."""
    marked = told = 0
    for ws in suite:
        lines = {p: t.splitlines() for p, t in ws.files.items()}
        for q in _questions([ws], "superseded"):
            new, old = q.answers[0], q.stale[0]
            old_first = lines[old.path][old.start - 1]
            new_first = lines[new.path][new.start - 1]
            if "superseded=" in old_first:
                assert f"by={new.path}:{new.start}-{new.end}" in old_first, q.id
                assert f"supersedes={old.path}:{old.start}-{old.end}" in new_first, q.id
                marked += 1
            else:
                assert "supersedes=" not in new_first, q.id
                told += 1
    assert marked >= 20 and told >= 20


def test_the_scorer_s_calibration_figures():
    """ECE and AUC as bench/trust/run.py defines them, on made-up outcomes."""
    from trust.layout import Label
    from trust.questions import Question
    from trust.run import Outcome, Top, auc, ece, reliability

    label = Label("MEMORY.md", 3, 4, 4, "tea")

    def outcome(kind, confidence, cites):
        q = Question("w/q", "w", "q", kind, "t", "en", (label,) if kind == "answerable" else ())
        top = Top("MEMORY.md", 3 if cites else 9, 3 if cites else 9, 3 if cites else 9, confidence)
        return Outcome(q, "bullets", 5, "tune", top, top)

    right = [outcome("answerable", 0.95, True) for _ in range(19)] + [outcome("answerable", 0.95, False)]
    wrong = [outcome("absent_topic", 0.0, True) for _ in range(20)]
    assert right[0].right_first and right[0].line_marked and not right[-1].right_first and not right[-1].line_marked
    assert ece(right + wrong) == 0.0  # 19 of 20 right at 0.95, none of 20 at 0
    assert auc(right + wrong) == 1.0
    assert auc([outcome("answerable", 0.5, True), outcome("absent_id", 0.5, True)]) == 0.5
    rows = reliability(right + wrong)
    assert rows[9]["count"] == 20 and rows[9]["share_correct"] == 0.95 and rows[0]["count"] == 20
    overconfident = [outcome("absent_person", 0.9, True) for _ in range(10)]
    assert ece(overconfident) == 0.9
