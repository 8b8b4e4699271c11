"""Trust benchmark: right entry first, answer line marked, "nothing", calibration.

    python bench/trust/run.py [--half tune|check|all] [--model PATH] [--out DIR] [--workspace ID] [--json] [--misses]

Generates the workspaces of ``bench/trust/manifest.json`` (bench/trust/
generate.py, deterministic) into ``--out`` (default ``bench/out/trust``),
indexes each with the real engine, the local MiniLM model and default
settings (the index in ``--out`` is reused: a workspace that did not
change costs no embedding), and asks its questions through the public API
(``MemoryIndex.search``) twice: as a user gets it (the defaults: six
results, weak answers left out) and with ``include_weak=True``.

The manifest splits the workspaces into a ``tune`` half and a ``check``
half, fixed before any tuning and covering every size and style. **The
check half is never tuned on**: change the engine looking at the tune
half's figures and misses only (``--misses`` prints the tune half's), and
read the check half once, to see whether a change holds on notes it was
not fitted to.

Figures, on the first result of the default search unless said otherwise.
A result *cites* an entry when it is in the entry's file and its lines
(``start_line``..``end_line``) overlap the entry's lines.

- ``right entry first`` (answerable): the first result cites an entry that
  answers the question.
- ``answer line marked`` (answerable): the first result's ``best_line`` (the
  line the faces mark with ``>``) lies within the lines of an entry that
  answers it, the entry's first line to its last (for an entry memext
  appended under its own heading, the heading included).
- ``nothing`` (each unanswerable kind: absent_person, absent_topic,
  partial_overlap, absent_id): the default search returns no result.
- ``superseded``: ``new first``, the first result cites the new entry and
  its ``best_line`` is not in the old one; ``old as answer``, the first
  result's ``best_line`` is in the old entry, or it cites the old entry and
  not the new one.
- Calibration, on the first result of the search with ``include_weak=True``
  for every question (confidence 0 when there is no result at all): it is
  *correct* when it cites an entry that answers the question (the new one
  for superseded; never, for the four unanswerable kinds). ``ECE`` is the
  expected calibration error over 10 equal bins of confidence (the mean
  over questions of |share correct - mean confidence| of each one's bin),
  printed with its reliability diagram; ``AUC`` is the chance that an
  answerable question (superseded included) gets a higher confidence than
  an unanswerable one (ties count a half).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Iterable, Sequence

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from memext.engine import MemoryIndex, SearchResult, load_config  # noqa: E402
from trust.generate import Workspace, build_suite, load_manifest, write_suite  # noqa: E402
from trust.layout import Label  # noqa: E402
from trust.questions import KINDS, UNANSWERABLE, Question  # noqa: E402
from trust.world import SIZES_ORDER, STYLES  # noqa: E402

#: ``shared/`` sits next to the main checkout; git worktrees live one level deeper.
SHARED = next((p / "shared" for p in ROOT.parents if (p / "shared" / "models").is_dir()), ROOT.parent / "shared")
DEFAULT_MODEL = SHARED / "models" / "all-minilm-l6-v2-f16.gguf"
DEFAULT_OUT = ROOT / "bench" / "out" / "trust"
BINS = 10


@dataclass(frozen=True)
class Top:
    """What a question's first result was."""

    path: str
    start: int
    end: int
    best_line: int
    confidence: float

    @classmethod
    def of(cls, results: Sequence[SearchResult]) -> "Top | None":
        if not results:
            return None
        r = results[0]
        return cls(r.path, r.start_line, r.end_line, r.best_line, r.confidence)

    def cites(self, label: Label) -> bool:
        return self.path == label.path and self.start <= label.end and label.start <= self.end

    def marks(self, label: Label) -> bool:
        return self.path == label.path and label.start <= self.best_line <= label.end


@dataclass(frozen=True)
class Outcome:
    """One question, asked as a user asks and with every weak answer."""

    question: Question
    spec_style: str
    spec_size: int
    half: str
    top: Top | None  # default search
    weak_top: Top | None  # include_weak=True

    @property
    def answerable(self) -> bool:
        return self.question.kind in ("answerable", "superseded")

    @property
    def right_first(self) -> bool:
        t, q = self.top, self.question
        if t is None:
            return False
        if q.kind == "superseded":
            return any(t.cites(a) for a in q.answers) and not any(t.marks(s) for s in q.stale)
        return any(t.cites(a) for a in q.answers)

    @property
    def line_marked(self) -> bool:
        return self.top is not None and any(self.top.marks(a) for a in self.question.answers)

    @property
    def old_as_answer(self) -> bool:
        t, q = self.top, self.question
        if t is None:
            return False
        return any(t.marks(s) for s in q.stale) or (any(t.cites(s) for s in q.stale) and not any(t.cites(a) for a in q.answers))

    @property
    def nothing(self) -> bool:
        return self.top is None

    @property
    def confidence(self) -> float:
        return self.weak_top.confidence if self.weak_top is not None else 0.0

    @property
    def correct(self) -> bool:
        """Calibration's: the first weak-included result cites a right entry."""
        t = self.weak_top
        return self.answerable and t is not None and any(t.cites(a) for a in self.question.answers)


# ---------------------------------------------------------------------------
# Figures


def _share(flags: Iterable[bool]) -> float | None:
    flags = list(flags)
    return round(statistics.fmean(flags), 4) if flags else None


def reliability(outcomes: Sequence[Outcome], bins: int = BINS) -> list[dict]:
    rows = []
    for b in range(bins):
        lo, hi = b / bins, (b + 1) / bins
        inside = [o for o in outcomes if lo <= o.confidence < hi or (b == bins - 1 and o.confidence == 1.0)]
        rows.append(
            {
                "bin": f"{lo:.1f}-{hi:.1f}",
                "count": len(inside),
                "mean_confidence": round(statistics.fmean(o.confidence for o in inside), 4) if inside else None,
                "share_correct": _share(o.correct for o in inside),
            }
        )
    return rows


def ece(outcomes: Sequence[Outcome], bins: int = BINS) -> float | None:
    if not outcomes:
        return None
    total = 0.0
    for row in reliability(outcomes, bins):
        if row["count"]:
            total += row["count"] * abs(row["share_correct"] - row["mean_confidence"])
    return round(total / len(outcomes), 4)


def auc(outcomes: Sequence[Outcome]) -> float | None:
    """Mann-Whitney: P(confidence of an answerable > that of an unanswerable)."""
    pos = sorted(o.confidence for o in outcomes if o.answerable)
    neg = sorted(o.confidence for o in outcomes if o.question.kind in UNANSWERABLE)
    if not pos or not neg:
        return None
    wins = 0.0
    for p in pos:
        wins += sum(1.0 if p > n else 0.5 if p == n else 0.0 for n in neg)
    return round(wins / (len(pos) * len(neg)), 4)


def figures(outcomes: Sequence[Outcome]) -> dict:
    by_kind = {k: [o for o in outcomes if o.question.kind == k] for k in KINDS}
    ans, sup = by_kind["answerable"], by_kind["superseded"]
    return {
        "questions": len(outcomes),
        "answerable": len(ans),
        "right_entry_first": _share(o.right_first for o in ans),
        "answer_line_marked": _share(o.line_marked for o in ans),
        "nothing": {k: _share(o.nothing for o in by_kind[k]) for k in UNANSWERABLE},
        "unanswerable": {k: len(by_kind[k]) for k in UNANSWERABLE},
        "superseded": len(sup),
        "superseded_new_first": _share(o.right_first for o in sup),
        "superseded_old_as_answer": _share(o.old_as_answer for o in sup),
        "ece": ece(outcomes),
        "auc": auc(outcomes),
    }


# ---------------------------------------------------------------------------
# Running


def agent_for(ws: Workspace, out: Path, model: Path):
    """The default configuration with the local model, through a config file
    as a user writes one; no search-triggered sync or watcher (the run syncs
    once itself) and no use log (a benchmark's searches are no one's use)."""
    folder = out / ws.spec.id
    cfg = folder / "config.toml"
    text = (
        "[[agents]]\n"
        f'id = "trust-{ws.spec.id}"\n'
        f"workspace = {json.dumps(str(folder / 'workspace'))}\n"
        "[agents.memory_search]\n"
        'provider = "local"\n'
        "use_log = false\n"
        "[agents.memory_search.local]\n"
        f"model_path = {json.dumps(str(model))}\n"
        f"model_cache_dir = {json.dumps(str(out / 'model-cache'))}\n"
        "[agents.memory_search.store]\n"
        f"path = {json.dumps(str(folder / 'index.sqlite'))}\n"
        "[agents.memory_search.sync]\n"
        "on_search = false\n"
        "watch = false\n"
    )
    if not cfg.exists() or cfg.read_text(encoding="utf-8") != text:
        cfg.write_text(text, encoding="utf-8")
    cfg.chmod(0o600)  # as memext wants a config file kept: private
    return load_config(cfg).agents[0]


def run_workspace(ws: Workspace, out: Path, model: Path, log) -> tuple[list[Outcome], dict]:
    agent = agent_for(ws, out, model)
    now = datetime.combine(ws.last_day, datetime.max.time())
    outcomes = []
    with MemoryIndex(agent) as idx:
        t0 = time.perf_counter()
        report = idx.sync(reason="manual")
        sync_s = time.perf_counter() - t0
        st = idx.status()
        if st.provider.in_force != "local":
            raise SystemExit(f"{ws.spec.id}: the local model is not in force ({st.provider.reason})")
        build_file = out / ws.spec.id / "build.json"
        if report.texts_embedded and report.texts_embedded >= st.chunks["memory"]:
            build_file.write_text(json.dumps({"sync_s": round(sync_s, 2), "embedded": report.texts_embedded}) + "\n")
        first = json.loads(build_file.read_text()) if build_file.exists() else None
        t0 = time.perf_counter()
        for q in ws.questions:
            default = idx.search(q.query, now=now)
            weak = idx.search(q.query, now=now, include_weak=True)
            if default.error or default.fallback:
                raise SystemExit(f"{ws.spec.id}: the search degraded: {default.error or default.fallback}")
            outcomes.append(Outcome(q, ws.spec.style, ws.spec.size, ws.spec.half, Top.of(default.results), Top.of(weak.results)))
        search_s = time.perf_counter() - t0
    info = {
        "files": st.files["memory"],
        "chunks": st.chunks["memory"],
        "entries": ws.entries,
        "sync_s": round(sync_s, 2),
        "embedded": report.texts_embedded,
        "first_build": first,
        "search_ms_per_query": round(1000 * search_s / (2 * max(1, len(ws.questions))), 1),
    }
    log(
        f"{ws.spec.id}: {info['files']} files, {info['chunks']} chunks, {ws.entries} entries; sync {sync_s:.1f} s "
        f"({report.texts_embedded} embedded); {len(ws.questions)} questions, {info['search_ms_per_query']} ms a search"
    )
    return outcomes, info


def _fmt(x: float | None) -> str:
    return "  -  " if x is None else f"{x:.3f}"


def table(rows: list[tuple[str, dict]]) -> str:
    head = (
        f"{'':16} {'qs':>4} {'right':>6} {'line':>6} | nothing: {'person':>6} {'topic':>6} {'overlap':>7} {'id':>6} | "
        f"{'new1st':>6} {'old':>6} | {'ECE':>6} {'AUC':>6}"
    )
    lines = [head]
    for name, f in rows:
        n = f["nothing"]
        lines.append(
            f"{name:16} {f['questions']:4} {_fmt(f['right_entry_first']):>6} {_fmt(f['answer_line_marked']):>6} |          "
            f"{_fmt(n['absent_person']):>6} {_fmt(n['absent_topic']):>6} {_fmt(n['partial_overlap']):>7} {_fmt(n['absent_id']):>6} | "
            f"{_fmt(f['superseded_new_first']):>6} {_fmt(f['superseded_old_as_answer']):>6} | {_fmt(f['ece']):>6} {_fmt(f['auc']):>6}"
        )
    return "\n".join(lines)


def diagram(rows: list[dict]) -> str:
    lines = [f"  {'bin':9} {'count':>5} {'mean conf':>9} {'correct':>8}"]
    for r in rows:
        lines.append(f"  {r['bin']:9} {r['count']:5} {_fmt(r['mean_confidence']):>9} {_fmt(r['share_correct']):>8}")
    return "\n".join(lines)


def _load() -> str:
    try:
        return subprocess.run(["uptime"], capture_output=True, text=True, check=False).stdout.strip()
    except OSError:
        return "load: " + " ".join(f"{x:.2f}" for x in os.getloadavg())


def miss_line(o: Outcome) -> str:
    q = o.question
    got = (
        "nothing"
        if o.top is None
        else f"{o.top.path}:{o.top.start}-{o.top.end} (line {o.top.best_line}, confidence {o.top.confidence:.2f})"
    )
    want = ", ".join(f"{a.path}:{a.start}-{a.end} (line {a.line})" for a in q.answers) or "nothing"
    return f"  {q.id}: {q.query!r}: want {want}; got {got}"


def missed(o: Outcome) -> bool:
    if o.question.kind == "answerable":
        return not (o.right_first and o.line_marked)
    if o.question.kind == "superseded":
        return not o.right_first
    return not o.nothing


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--half", choices=("tune", "check", "all"), default="all")
    ap.add_argument("--model", type=Path, default=DEFAULT_MODEL)
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    ap.add_argument("--workspace", action="append", default=[], help="only this workspace (repeatable)")
    ap.add_argument("--json", action="store_true", help="print the figures as JSON")
    ap.add_argument("--misses", action="store_true", help="list the tune half's misses (the check half's are never listed)")
    args = ap.parse_args(argv)
    out = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    log = (lambda s: print(s, file=sys.stderr)) if args.json else print
    seed, specs, digests = load_manifest()
    specs = [s for s in specs if args.half in ("all", s.half) and (not args.workspace or s.id in args.workspace)]
    load_before = _load()
    t_start = time.perf_counter()
    suite = build_suite(specs, seed)
    changed = [ws.spec.id for ws in suite if ws.digest() != digests.get(ws.spec.id)]
    if changed:
        log(f"warning: {', '.join(changed)} differ from the manifest's digests (the generator changed since the split)")
    write_suite(suite, out)
    outcomes: list[Outcome] = []
    per_ws: dict[str, dict] = {}
    for ws in suite:
        got, info = run_workspace(ws, out, args.model, log)
        outcomes += got
        per_ws[ws.spec.id] = {**info, **figures(got), "half": ws.spec.half, "style": ws.spec.style, "size": ws.spec.size}
    halves = [h for h in ("tune", "check") if any(o.half == h for o in outcomes)]
    result = {
        "model": args.model.name,
        "halves": {h: figures([o for o in outcomes if o.half == h]) for h in halves},
        "all": figures(outcomes),
        "by_size": {
            str(s): figures([o for o in outcomes if o.spec_size == s]) for s in SIZES_ORDER if any(o.spec_size == s for o in outcomes)
        },
        "by_style": {s: figures([o for o in outcomes if o.spec_style == s]) for s in STYLES if any(o.spec_style == s for o in outcomes)},
        "reliability": {h: reliability([o for o in outcomes if o.half == h]) for h in halves},
        "workspaces": per_ws,
        "wall_s": round(time.perf_counter() - t_start, 1),
        "load_before": load_before,
        "load_after": _load(),
    }
    result["reliability"]["all"] = reliability(outcomes)
    (out / "results.json").write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    if args.json:
        print(json.dumps(result, indent=1))
        return 0
    print(f"\ntrust benchmark: default settings, local model {args.model.name}; {len(outcomes)} questions, {result['wall_s']} s")
    print(f"load before: {load_before}\nload after:  {result['load_after']}\n")
    rows = [(h, result["halves"][h]) for h in halves] + [("all", result["all"])]
    print(table(rows))
    print("\nper workspace")
    print(table([(f"{w} ({f['half'][0]})", f) for w, f in per_ws.items()]))
    print("\nper size")
    print(table([(s, f) for s, f in result["by_size"].items()]))
    print("\nper style")
    print(table([(s, f) for s, f in result["by_style"].items()]))
    for h in [*halves, "all"]:
        print(f"\nreliability ({h}; first result, weak answers included)")
        print(diagram(result["reliability"][h]))
    if args.misses:
        tune_misses = [o for o in outcomes if o.half == "tune" and missed(o)]
        print(f"\nmisses of the tune half ({len(tune_misses)}; the check half's are not listed)")
        for o in tune_misses:
            print(f" [{o.question.kind}]" + miss_line(o))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
