"""Negatives benchmark: does memory say "nothing" when it holds nothing?

    python bench/negatives.py [--data PATH] [--model PATH] [--out bench/out/locomo] [--json]

Built from the LoCoMo dev split (bench/locomo.py writes and indexes one
workspace per conversation, in ``--out``, reused). Each conversation's
memory is asked two kinds of questions it holds nothing on:

- **absent people**: the other conversations' questions (categories 1-4)
  that name a person or thing absent from it: a capitalised word after the
  question's first word, not a month or a weekday, that occurs nowhere in
  its files;
- **present people on absent topics**: another conversation's question
  with that conversation's speakers' names replaced by this one's (its
  first speaker by this one's first, its second by the second), kept only
  when it names one of them and when none of its other content words and
  none of its answer's content words occur in this memory (compared by
  Porter stem, so "paint" is not absent beside "painting"; stop words and
  numbers left out: the numbers of dates and times are in every memory).

A question is "answered nothing" when the default search as a user gets it
(``MemoryIndex.search`` with its defaults: six results, the configured
``min_score``, weak answers left out) returns no result. At the same
settings, the conversation's own questions are scored as bench/locomo.py
scores them, turn_recall@6 and recall@L60 (``max_lines=60``), once as a
user gets them and once with every answer returned (``include_weak=True``,
the search as it was before weak answers were left out): leaving weak
answers out should cost the own questions next to nothing. ``AUC``: the
chance that an own question's first result (weak answers included) has a
higher confidence than a negative's (ties count a half).

Each question is searched once, with every answer returned: what a user
gets is that answer, or "nothing" when its confidence is below the
engine's decision point (``NOTHING_BELOW``, engine/search/confidence.py),
the only difference between the two searches. So the run also prints the
trade-off over the decision point: at each, the share of each kind of
negative answered "nothing" and the own questions' figures.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
from datetime import date, datetime
from pathlib import Path

import stopwords
from nltk.stem.porter import PorterStemmer

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import locomo as L  # noqa: E402

from memext.engine import MemoryIndex  # noqa: E402
from memext.engine.search.confidence import NOTHING_BELOW  # noqa: E402

#: The decision points the trade-off is printed at.
DECISION_POINTS = (0.1, 0.15, 0.2, 0.25, 0.3, 1 / 3, 0.35, 0.4, 0.45, 0.5, 0.6)

# The benchmark's own idea of a word (Unicode letters and digits, lower
# case) and of a stop word (the maintained English list): the questions it
# keeps must not move when the engine's tokenizer does.
_WORD = re.compile(r"[^\W_]+")
STOP_WORDS = frozenset(stopwords.get_stopwords("english"))
_STEM = PorterStemmer()
_CAPITALISED = re.compile(r"(?<![\w'])[A-Z][A-Za-z-]+")
_TIME_WORDS = frozenset(
    "january february march april may june july august september october november december "
    "monday tuesday wednesday thursday friday saturday sunday".split()
)


def words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


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


def content_stems(text: str, leave_out: frozenset[str] = frozenset()) -> set[str]:
    """The Porter stems of ``text``'s words that are not stop words, numbers, nor in ``leave_out``."""
    return {_STEM.stem(w) for w in words(text) if w not in STOP_WORDS and w not in leave_out and not w.isdigit()}


def speakers(sample: dict) -> tuple[str, str]:
    conv = sample["conversation"]
    return str(conv["speaker_a"]), str(conv["speaker_b"])


def swap_names(question: str, theirs: tuple[str, str], ours: tuple[str, str]) -> str | None:
    """``question`` with ``theirs`` names replaced by ``ours`` at once (a name
    both conversations have is not replaced twice); None when it names neither."""
    mapping = dict(zip(theirs, ours))
    pattern = re.compile(r"\b(" + "|".join(re.escape(n) for n in theirs) + r")\b")
    if not pattern.search(question):
        return None
    return pattern.sub(lambda m: mapping[m.group(1)], question)


def absent_topic_questions(sample: dict, others: list[dict], memory_stems: set[str]) -> list[str]:
    """Other conversations' questions about this conversation's speakers whose
    topic (every other content word, and the answer's) this memory never mentions."""
    ours = speakers(sample)
    names = frozenset(n.lower() for n in ours)
    kept: dict[str, None] = {}
    for other in others:
        for qa in other["qa"]:
            if qa.get("category") not in L.CATEGORIES:
                continue
            query = swap_names(str(qa["question"]), speakers(other), ours)
            if query is None:
                continue
            topic = content_stems(query, names)
            answer = content_stems(str(qa.get("answer", "")), names)
            if topic and not (topic | answer) & memory_stems:
                kept[query] = None
    return list(kept)


def _auc(pos: list[float], neg: list[float]) -> float | None:
    if not pos or not neg:
        return None
    wins = sum(1.0 if p > n else 0.5 if p == n else 0.0 for p in pos for n in neg)
    return round(wins / (len(pos) * len(neg)), 4)


def _mean(xs: list) -> float | None:
    return round(statistics.fmean(xs), 4) if xs else None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=L.DEFAULT_DATA)
    ap.add_argument("--model", type=Path, default=L.DEFAULT_MODEL)
    ap.add_argument("--out", type=Path, default=L.DEFAULT_OUT)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    out = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    data = json.loads(args.data.read_text(encoding="utf-8"))
    layouts = {s["sample_id"]: L.build_layout(s["conversation"]) for s in data}
    questions = {s["sample_id"]: L.load_questions(s, layouts[s["sample_id"]]) for s in data}
    keys = ("absent_people", "absent_topics")
    # Per question, the answer's confidence with every answer returned and
    # (own questions) the recall of that answer and of the budgeted one.
    neg: dict[str, list[float]] = {k: [] for k in keys}
    conf: dict[str, list[float]] = {k: [] for k in (*keys, "own")}
    own: list[tuple[float, float, float, float]] = []  # (confidence, recall@6, budget confidence, recall@L60)
    figures: dict = {"conversations": {}}
    for sample in data:
        sid = sample["sample_id"]
        layout = layouts[sid]
        ws = out / sid
        L.write_workspace(layout, ws)
        text = "\n".join(line for lines in layout.files.values() for line in lines)
        vocabulary = set(words(text))
        others = [o for o in data if o["sample_id"] != sid]
        asked = {
            "absent_people": [q.query for o in others for q in questions[o["sample_id"]] if absent_names(q.query, vocabulary)],
            "absent_topics": absent_topic_questions(sample, others, content_stems(text)),
        }
        agent = L.agent_config(ws, out / f"{sid}.sqlite", args.model, out / "model-cache")
        now = datetime.combine(layout.last_day or date.today(), datetime.max.time())
        row: dict = {}
        mine: list[tuple[float, float, float, float]] = []
        with MemoryIndex(agent) as idx:
            idx.sync(reason="manual")
            for k in keys:
                weak = [idx.search(q, now=now, include_weak=True, log_use=False) for q in asked[k]]
                neg[k] += [r.confidence for r in weak]
                conf[k] += [r.results[0].confidence if r.results else 0.0 for r in weak]
                row[k] = {"questions": len(weak), "answered_nothing": _mean([r.confidence < NOTHING_BELOW for r in weak])}
            for q in questions[sid]:
                res = idx.search(q.query, now=now, include_weak=True, log_use=False)
                budget = idx.search(q.query, now=now, max_lines=L.BUDGET_LINES, include_weak=True, log_use=False)
                mine.append(
                    (
                        res.confidence,
                        L.score(list(res), q)["turn_recall"],
                        budget.confidence,
                        L.score(L.within_budget(list(budget)), q)["turn_recall"],
                    )
                )
                conf["own"].append(res.results[0].confidence if res.results else 0.0)
        own += mine
        row["own_questions"] = len(mine)
        row.update(_own_figures(mine, NOTHING_BELOW))
        figures["conversations"][sid] = row
        print(f"{sid}: {row}", file=sys.stderr)
    for k in keys:
        figures[k] = {
            "questions": len(neg[k]),
            "answered_nothing": _mean([c < NOTHING_BELOW for c in neg[k]]),
            "auc_vs_own": _auc(conf["own"], conf[k]),
        }
    figures["own_questions"] = len(own)
    figures.update(_own_figures(own, NOTHING_BELOW))
    figures["decision_point"] = round(NOTHING_BELOW, 4)
    figures["trade_off"] = [
        {
            "decision_point": round(t, 4),
            **{f"{k} nothing": _mean([c < t for c in neg[k]]) for k in keys},
            **{k: v for k, v in _own_figures(own, t).items() if not k.endswith("weak")},
            "own answered": _mean([c >= t for c, _, _, _ in own]),
        }
        for t in sorted({*DECISION_POINTS, NOTHING_BELOW})
    ]
    (out / "negatives.json").write_text(json.dumps(figures, indent=1) + "\n", encoding="utf-8")
    if args.json:
        print(json.dumps(figures, indent=1))
        return 0
    people, topics = figures["absent_people"], figures["absent_topics"]
    print(
        f"negatives (default search, decision point {NOTHING_BELOW:.3f}): absent people {people['answered_nothing']:.3f} "
        f"answered nothing ({people['questions']} questions, confidence AUC vs own {people['auc_vs_own']:.3f}); "
        f"present people on absent topics {topics['answered_nothing']:.3f} "
        f"({topics['questions']} questions, AUC {topics['auc_vs_own']:.3f})\n"
        f"own questions {figures['own_questions']}: turn_recall@6 {figures['turn_recall@6']:.3f} "
        f"(every answer returned: {figures['turn_recall@6 weak']:.3f}), recall@L60 {figures['recall@L60']:.3f} "
        f"(every answer returned: {figures['recall@L60 weak']:.3f})"
    )
    print("trade-off over the decision point (answer confidence below it: nothing):")
    print(f"  {'point':>6} {'people':>7} {'topics':>7} | {'own answered':>12} {'recall@6':>9} {'recall@L60':>10}")
    for t in figures["trade_off"]:
        mark = "  <- engine" if abs(t["decision_point"] - round(NOTHING_BELOW, 4)) < 1e-9 else ""
        print(
            f"  {t['decision_point']:>6.3f} {t['absent_people nothing']:>7.3f} {t['absent_topics nothing']:>7.3f} | "
            f"{t['own answered']:>12.3f} {t['turn_recall@6']:>9.3f} {t['recall@L60']:>10.3f}{mark}"
        )
    return 0


def _own_figures(own: list[tuple[float, float, float, float]], point: float) -> dict[str, float | None]:
    """The own questions' recall as a user gets it at decision point
    ``point`` (an answer below it is "nothing": no turn recalled) and with
    every answer returned."""
    return {
        "turn_recall@6": _mean([r if c >= point else 0.0 for c, r, _, _ in own]),
        "turn_recall@6 weak": _mean([r for _, r, _, _ in own]),
        "recall@L60": _mean([r if c >= point else 0.0 for _, _, c, r in own]),
        "recall@L60 weak": _mean([r for _, _, _, r in own]),
    }


if __name__ == "__main__":
    raise SystemExit(main())
