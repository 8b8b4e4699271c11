"""Generate a synthetic memory workspace for benchmarks.

    python bench/gen_workspace.py OUT --files 10000 [--lines 40] [--seed 1]

Daily logs ``memory/YYYY-MM-DD[-N].md`` plus a ``MEMORY.md``, with Markdown
headings and bullet lines drawn from a Zipf-distributed vocabulary, so that
BM25 sees realistic term frequencies (a few very common words, a long tail).
"""

from __future__ import annotations

import argparse
import functools
import itertools
import random
from datetime import date, timedelta
from pathlib import Path

COMMON = "the a to and of in is for on with we it that this at was be by from as".split()


def vocabulary(size: int, rng: random.Random) -> list[str]:
    letters = "abcdefghijklmnopqrstuvwxyz"
    words = set()
    while len(words) < size:
        words.add("".join(rng.choice(letters) for _ in range(rng.randint(3, 10))))
    return COMMON + sorted(words)


@functools.lru_cache(maxsize=4)
def _cum_weights(size: int) -> list[float]:
    # weight 1/rank: a handful of words are everywhere, most are rare
    return list(itertools.accumulate(1.0 / (i + 1) for i in range(size)))


def zipf_words(vocab: list[str], n: int, rng: random.Random) -> list[str]:
    return rng.choices(vocab, cum_weights=_cum_weights(len(vocab)), k=n)


def note_text(day: date, lines: int, vocab: list[str], rng: random.Random) -> str:
    out = [f"# {day.isoformat()}", ""]
    for i in range(lines):
        if i % 12 == 0:
            out += ["", f"## {' '.join(zipf_words(vocab, 3, rng)).title()}", ""]
        out.append("- " + " ".join(zipf_words(vocab, rng.randint(8, 20), rng)))
    return "\n".join(out) + "\n"


def generate(out: Path, files: int, lines: int = 40, seed: int = 1) -> list[str]:
    """Write ``files`` daily notes (and MEMORY.md) under ``out``; returns the vocabulary."""
    rng = random.Random(seed)
    vocab = vocabulary(20_000, rng)
    mem = out / "memory"
    mem.mkdir(parents=True, exist_ok=True)
    start = date(2000, 1, 1)
    for i in range(files):
        day = start + timedelta(days=i // 3)
        name = f"{day.isoformat()}-{i % 3}.md"
        (mem / name).write_text(note_text(day, lines, vocab, rng), encoding="utf-8")
    (out / "MEMORY.md").write_text(note_text(start, lines, vocab, rng), encoding="utf-8")
    return vocab


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out", type=Path)
    ap.add_argument("--files", type=int, default=10_000)
    ap.add_argument("--lines", type=int, default=40)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    generate(a.out, a.files, a.lines, a.seed)
    print(f"wrote {a.files} notes under {a.out}")


if __name__ == "__main__":
    main()
