"""Explain rows (engine/search/explain.py)."""

from memext.engine.search.explain import explain_rows, explain_table


def test_rows_round_and_name_every_part():
    info = {
        "mode": "hybrid",
        "vector": {"rank": 2, "similarity": 0.6123456789012345},
        "keyword": {"rank": 1, "bm25": -3.2109876543210, "score": 0.8734567890123456},
        "fusion": {"method": "weighted", "vector": 0.30617283945, "text": 0.43672839450},
        "decay": 0.5,
        "exact_match": True,
    }
    rows = explain_rows(info)
    assert [(r.part, r.rank, r.value) for r in rows] == [
        ("vector", "#2", "0.612"),
        ("keyword", "#1", "0.873"),
        ("fusion", "", "0.743"),
        ("decay", "", "x0.50"),
    ]
    assert rows[1].note == "bm25 -3.21, every term present" and rows[2].note == "weighted: vector 0.306 + text 0.437"
    lines = explain_table(info)
    assert len(lines) == 4 and all("456" not in line for line in lines)


def test_a_keyword_only_result_has_dashes_not_none():
    rows = explain_rows(
        {
            "vector": {"rank": None, "similarity": None},
            "keyword": {"rank": 3, "bm25": -1.0, "score": 0.5},
            "fusion": {"method": "none", "text": 0.5},
            "decay": 1.0,
            "exact_match": False,
        }
    )
    assert (rows[0].rank, rows[0].value) == ("-", "-") and "None" not in " ".join(
        explain_table({"vector": {}, "keyword": {}, "fusion": {}})
    )
