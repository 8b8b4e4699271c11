"""bench/lifecycle.py runs and meets its targets: capture precision and
recall on the labelled conversations, no duplicates, no injection stored,
and NEAR_DUPLICATE inside the measured gap."""

from __future__ import annotations

import importlib.util
import json
import sys

from conftest import MODEL_PATH, ROOT

from memext.engine.memory.capture import NEAR_DUPLICATE


def _bench():
    spec = importlib.util.spec_from_file_location("bench_lifecycle", ROOT / "bench" / "lifecycle.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_capture_benchmark_meets_its_targets(capsys):
    bench = _bench()
    assert sum(len(s) for s in bench.SESSIONS) >= 40
    assert bench.main(["--json"]) == 0
    figures = json.loads(capsys.readouterr().out)
    assert figures["precision"] >= 0.9 and figures["recall"] >= 0.8
    assert figures["duplicates"] == 0 and figures["injections_stored"] == 0
    assert figures["changes_superseded"] == figures["changes"] >= 2 and figures["wrong_supersedes"] == 0
    rows, middle = bench.threshold_table()
    assert middle is not None and abs(NEAR_DUPLICATE - middle) < 0.05
    at = next(r for r in rows if abs(r[0] - NEAR_DUPLICATE) < 1e-9)
    assert at[1] == at[2] and at[3] == at[4]  # every restatement caught, every different fact kept


def test_recall_never_brings_back_an_old_preference_or_an_injection(capsys):
    """Keyword-only and with the local model: after a preference changed,
    the old one is never recalled, nor is injection text stored untrusted,
    although a search showing everything reaches both; most probe
    questions whose answer memory holds get it recalled."""
    bench = _bench()
    assert MODEL_PATH.is_file()
    assert bench.main(["--json", "--model", str(MODEL_PATH)]) == 0
    runs = {r["mode"]: r for r in json.loads(capsys.readouterr().out)["auto_recall"]}
    assert set(runs) == {"keyword", "local"}
    for r in runs.values():
        assert r["old_preference"] == 0 and r["injection"] == 0
        assert r["old_preference_searched"] > 0 and r["injection_searched"] > 0
        assert r["calls"] >= 70 and r["deadline_passed"] == 0
        assert r["probes"] >= 20 and r["probe_share"] >= 0.8
        assert 0 < r["p50_ms"] <= r["p90_ms"]


def test_marks_and_dates_follow_entries_in_what_search_shows():
    """After supersedes (in the same chunk, in another file) and forgets,
    keyword-only and with the local model: no retired text shown as if it
    held or recalled, every question a superseded entry answered before
    answered by the entry that replaced it, and no live entry dated by
    another entry's heading; after capture, every result and recall block
    dated by its own entry."""
    _bench()  # loads bench/lifecycle_marks.py beside it
    cases = sys.modules["lifecycle_marks"]
    assert MODEL_PATH.is_file()
    for model in (None, MODEL_PATH):
        marks = cases.run_marks(model)
        assert marks.searches >= 10 and marks.shown_unmarked == 0 and marks.recalled == 0
        assert marks.forgotten_answered == 0
        assert marks.successors >= 6 and marks.successor_share == 1.0
        assert marks.dated >= 3 and marks.dated_wrong == 0
        dates = cases.run_dates(model)
        assert dates.answered >= 8 and dates.recalled >= 8
        assert (dates.dated_right, dates.recalled_dated_right) == (dates.answered, dates.recalled), dates.notes
