"""How a result's score was made, as rows a person can read.

``SearchResult.explain`` (``search(..., explain=True)``) holds the raw
numbers; :func:`explain_rows` turns them into a small table (vector
rank/similarity, keyword rank/score, fusion, decay) with rounded values,
the same for every face (text in the CLI, HTML in the notebook).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping


@dataclass(frozen=True)
class ExplainRow:
    """One row: which part of the score, its rank in that part's candidate
    list ("-" when the chunk was not in it), its value and a short note."""

    part: str
    rank: str
    value: str
    note: str = ""


def _num(x: Any, digits: int = 3) -> str:
    return "-" if x is None else f"{float(x):.{digits}f}"


def _rank(x: Any) -> str:
    return "-" if x is None else f"#{int(x)}"


def explain_rows(explain: Mapping[str, Any]) -> list[ExplainRow]:
    """The rows of one result's ``explain`` dict (see module docstring)."""
    vec = explain.get("vector") or {}
    kw = explain.get("keyword") or {}
    fusion = dict(explain.get("fusion") or {})
    method = str(fusion.pop("method", "none"))
    rows = [
        ExplainRow("vector", _rank(vec.get("rank")), _num(vec.get("similarity")), "cosine similarity"),
        ExplainRow(
            "keyword",
            _rank(kw.get("rank")),
            _num(kw.get("score")),
            f"bm25 {_num(kw.get('bm25'), 2)}" + (", every term present" if explain.get("exact_match") else ""),
        ),
    ]
    parts = " + ".join(f"{k} {_num(v)}" for k, v in fusion.items())
    total = sum(float(v) for v in fusion.values() if v is not None)
    rows.append(ExplainRow("fusion", "", _num(total), f"{method}: {parts}" if method != "none" else parts))
    decay = float(explain.get("decay", 1.0))
    rows.append(ExplainRow("decay", "", f"x{decay:.2f}", "dated daily note" if decay < 1.0 else "not applied"))
    return rows


def explain_table(explain: Mapping[str, Any]) -> list[str]:
    """:func:`explain_rows` as aligned text lines."""
    rows = explain_rows(explain)
    w_part = max(len(r.part) for r in rows)
    w_rank = max(len(r.rank) for r in rows)
    w_val = max(len(r.value) for r in rows)
    return [f"{r.part:<{w_part}}  {r.rank:>{w_rank}}  {r.value:>{w_val}}  {r.note}".rstrip() for r in rows]
