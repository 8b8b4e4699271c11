"""Negatives benchmark: does memory say "nothing" when it holds nothing?

    python bench/negatives.py [--data PATH] [--model PATH] [--out bench/out/locomo] [--weak]

Built from the LoCoMo dev split (bench/locomo.py writes and indexes one
workspace per conversation, in ``--out``, reused). Each conversation's
memory is asked the other conversations' questions (categories 1-4) that
name a person or thing absent from it: a capitalised word after the
question's first word, not a month or a weekday, that occurs nowhere in
its files. A question "answered nothing" gets no result from the default
search as a user gets it (``MemoryIndex.search`` with its defaults: six
results, the configured ``min_score``, weak answers left out). At the same
settings, the conversation's own questions are scored as bench/locomo.py
scores them: turn_recall@6 and recall@L60 (``max_lines=60``). ``--weak``
measures with ``include_weak=True`` (what the search gave before weak
answers were left out).
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
from datetime import date, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import locomo as L  # noqa: E402

from memext.engine import MemoryIndex  # noqa: E402
from memext.engine.text import STOP_WORDS, words  # noqa: E402

_CAPITALISED = re.compile(r"(?<![\w'])[A-Z][A-Za-z-]+")
_TIME_WORDS = frozenset(
    "january february march april may june july august september october november december "
    "monday tuesday wednesday thursday friday saturday sunday".split()
)


def absent_names(question: str, vocabulary: set[str]) -> list[str]:
    """The capitalised words after the first word of ``question`` (not stop
    or time words) that occur in none of the memory's words."""
    out = []
    for m in _CAPITALISED.finditer(question):
        if m.start() == 0:
            continue
        w = m.group().lower()
        if w in STOP_WORDS or w in _TIME_WORDS:
            continue
        if not all(part in vocabulary for part in words(w)):
            out.append(m.group())
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=L.DEFAULT_DATA)
    ap.add_argument("--model", type=Path, default=L.DEFAULT_MODEL)
    ap.add_argument("--out", type=Path, default=L.DEFAULT_OUT)
    ap.add_argument("--weak", action="store_true", help="include_weak=True (the search as it was before)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    out = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    data = json.loads(args.data.read_text(encoding="utf-8"))
    layouts = {s["sample_id"]: L.build_layout(s["conversation"]) for s in data}
    questions = {s["sample_id"]: L.load_questions(s, layouts[s["sample_id"]]) for s in data}
    figures: dict = {"conversations": {}}
    # Passed only when asked: the script also measures a checkout whose
    # search has no such option (the figures before it).
    weak = {"include_weak": True} if args.weak else {}
    nothing_all: list[bool] = []
    recall6: list[float] = []
    recall60: list[float] = []
    for sample in data:
        sid = sample["sample_id"]
        layout = layouts[sid]
        ws = out / sid
        L.write_workspace(layout, ws)
        vocabulary = {w for lines in layout.files.values() for line in lines for w in words(line)}
        foreign = [q for o in data if o["sample_id"] != sid for q in questions[o["sample_id"]] if absent_names(q.query, vocabulary)]
        agent = L.agent_config(ws, out / f"{sid}.sqlite", args.model, out / "model-cache")
        now = datetime.combine(layout.last_day or date.today(), datetime.max.time())
        with MemoryIndex(agent) as idx:
            idx.sync(reason="manual")
            nothing = [len(idx.search(q.query, now=now, **weak)) == 0 for q in foreign]
            r6 = [L.score(list(idx.search(q.query, now=now, **weak)), q)["turn_recall"] for q in questions[sid]]
            r60 = [
                L.score(L.within_budget(list(idx.search(q.query, now=now, max_lines=L.BUDGET_LINES, **weak))), q)["turn_recall"]
                for q in questions[sid]
            ]
        figures["conversations"][sid] = {
            "foreign_questions": len(foreign),
            "answered_nothing": round(statistics.fmean(nothing), 4) if nothing else None,
            "own_questions": len(r6),
            "turn_recall@6": round(statistics.fmean(r6), 4),
            "recall@L60": round(statistics.fmean(r60), 4),
        }
        print(f"{sid}: {figures['conversations'][sid]}", file=sys.stderr)
        nothing_all += nothing
        recall6 += r6
        recall60 += r60
    figures["foreign_questions"] = len(nothing_all)
    figures["answered_nothing"] = round(statistics.fmean(nothing_all), 4)
    figures["own_questions"] = len(recall6)
    figures["turn_recall@6"] = round(statistics.fmean(recall6), 4)
    figures["recall@L60"] = round(statistics.fmean(recall60), 4)
    figures["include_weak"] = args.weak
    if args.json:
        print(json.dumps(figures, indent=1))
    else:
        print(
            f"negatives ({'weak answers shown' if args.weak else 'default'}): {figures['foreign_questions']} foreign questions, "
            f"answered nothing {figures['answered_nothing']:.3f}; own questions {figures['own_questions']}: "
            f"turn_recall@6 {figures['turn_recall@6']:.3f}, recall@L60 {figures['recall@L60']:.3f}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
