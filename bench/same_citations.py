"""The citations of a fixed query set, to compare two revisions' search results.

    python bench/same_citations.py dump OUT.json [--work DIR]
    python bench/same_citations.py compare BEFORE.json AFTER.json

``dump`` indexes (in ``--work``, made fresh) the repository's example notes
keyword-only and with vectors, and a generated workspace of 300 notes with
vectors, then writes the citations (``path:start-end``, in rank order) and
the rounded scores of 50 queries on each. Vectors come from
``engine_bench.GivenVectors`` (seeded by the text), so two revisions get
the same vectors. Run it with each revision's code on the path (a checkout
of the older one, ``PYTHONPATH`` pointing at it) and ``compare`` the files:
it prints every query whose citations differ and exits 1 if any does.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from engine_bench import GivenVectors, agent_for  # noqa: E402
from gen_workspace import generate, zipf_words  # noqa: E402

from memext.engine import MemoryIndex  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
QUERIES = 50


def example_queries(ws: Path, n: int) -> list[str]:
    """Phrases from the notes themselves (2-4 words of a line) and a few
    words they lack, seeded."""
    rng = random.Random(3)
    lines = [w.split() for p in sorted(ws.rglob("*.md")) for w in p.read_text(encoding="utf-8").splitlines() if len(w.split()) >= 4]
    out = []
    for _ in range(n - 5):
        words = rng.choice(lines)
        start = rng.randrange(0, len(words) - 2)
        out.append(" ".join(words[start : start + rng.randint(2, 4)]))
    return out + ["kubernetes budget", "what did we decide", "who is the tech lead", "nightly job", "zebra quantum"]


def citations(idx: MemoryIndex, queries: list[str]) -> dict[str, list[str]]:
    out = {}
    for q in queries:
        resp = idx.search(q)
        out[q] = [f"{r.citation} {r.score:.4f}" for r in resp.results]
    return out


def dump(path: Path, work: Path) -> None:
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    notes = work / "example"
    shutil.copytree(REPO / "example", notes)
    result: dict[str, dict[str, list[str]]] = {}
    queries = example_queries(notes, QUERIES)
    with MemoryIndex(agent_for(notes, work / "kw.sqlite", provider="none")) as idx:
        idx.sync()
        result["example_keyword"] = citations(idx, queries)
    with MemoryIndex(agent_for(notes, work / "vec.sqlite"), provider=GivenVectors()) as idx:
        idx.sync()
        result["example_hybrid"] = citations(idx, queries)
    gen = work / "generated"
    vocab = generate(gen, 300, lines=130)
    rng = random.Random(7)
    gen_queries = [" ".join(zipf_words(vocab, rng.randint(2, 6), rng)) for _ in range(QUERIES)]
    with MemoryIndex(agent_for(gen, work / "gen.sqlite"), provider=GivenVectors()) as idx:
        idx.sync()
        result["generated_hybrid"] = citations(idx, gen_queries)
    path.write_text(json.dumps(result, indent=1, ensure_ascii=False))
    total = sum(len(v) for v in result.values())
    print(f"{total} queries, {sum(len(c) for v in result.values() for c in v.values())} citations -> {path}")


def compare(before: Path, after: Path) -> int:
    a, b = json.loads(before.read_text()), json.loads(after.read_text())
    differ = 0
    for ws in a:
        for q, cites in a[ws].items():
            other = b.get(ws, {}).get(q)
            if other != cites:
                differ += 1
                print(f"{ws} {q!r}:\n  before {cites}\n  after  {other}")
    total = sum(len(v) for v in a.values())
    print(f"{total - differ} of {total} queries: the same citations and scores")
    return 1 if differ else 0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    d = sub.add_parser("dump")
    d.add_argument("out", type=Path)
    d.add_argument("--work", type=Path, default=Path(__file__).resolve().parent / "out" / "same-citations")
    c = sub.add_parser("compare")
    c.add_argument("before", type=Path)
    c.add_argument("after", type=Path)
    a = ap.parse_args()
    if a.cmd == "dump":
        dump(a.out, a.work)
    else:
        raise SystemExit(compare(a.before, a.after))


if __name__ == "__main__":
    main()
