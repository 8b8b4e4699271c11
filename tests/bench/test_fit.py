"""bench/trust/fit.py: the shipped confidence (engine/search/confidence.json)
is the fit of the committed evidence, reproduced here without a search."""

from __future__ import annotations

import json
import sys

import numpy as np
from conftest import ROOT

sys.path.insert(0, str(ROOT / "bench"))

from trust import fit  # noqa: E402

from memext.engine.search import confidence as C  # noqa: E402


def test_the_shipped_fits_are_those_of_the_committed_evidence():
    rows = fit.read_data()
    assert {r.corpus for r in rows} == {"trust", "locomo"}
    got = fit.fit(rows)
    shipped = json.loads(C.PARAMS_FILE.read_text(encoding="utf-8"))
    for part in ("hit", "answer"):
        for kind in ("meaning", "words"):
            assert got[part][kind] == shipped[part][kind], (part, kind)


def test_the_evidence_holds_every_kind_of_question_of_both_corpora():
    rows = fit.read_data()
    kinds = {(r.corpus, r.kind) for r in rows}
    trust = {"answerable", "superseded", "absent_person", "absent_topic", "partial_overlap"}
    assert {("trust", k) for k in trust} <= kinds
    assert {("locomo", k) for k in ("own", "absent_people", "absent_topics")} <= kinds
    # Queries naming an ID no note holds are answered "nothing" by rule, not fitted.
    assert not any(r.kind == "absent_id" for r in rows)


def test_the_fit_recovers_a_known_logistic():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((4000, 2))
    p = 1 / (1 + np.exp(-(1.5 * x[:, 0] - 2.0 * x[:, 1] + 0.5)))
    y = (rng.random(4000) < p).astype(float)
    weights, intercept = fit.logistic(x, y, np.ones(4000), l2=0.0)
    assert np.allclose(weights, [1.5, -2.0], atol=0.15) and abs(intercept - 0.5) < 0.15


def test_each_corpus_weighs_the_same():
    rows = [fit.Row("a", "q", "k", 1, 0.1, 0.1, 0.0, 0.0, 1, 1)] * 3 + [fit.Row("b", "q", "k", 1, 0.1, 0.1, 0.0, 0.0, 0, 0)]
    w = fit.corpus_weights(rows)
    assert w[:3].sum() == w[3:].sum()


def test_a_models_null_is_recorded_under_its_name_without_quantisation():
    assert fit.model_key(ROOT / "all-minilm-l6-v2-f16.gguf") == "all-minilm-l6-v2"
    assert fit.model_key(ROOT / "bge-small-en-v1.5-q8_0.gguf") == "bge-small-en-v1.5"
