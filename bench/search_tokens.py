"""What a model reads per ``memory_search``: characters and tokens of the
tool result the real ``memext mcp`` sends, on the example memory.

    python bench/search_tokens.py [--provider none|local] [--model PATH] [--json]

Starts ``memext mcp`` (``sys.executable -m memext``: whichever memext that
interpreter imports, so the same script measures two versions) on a copy
of example/, connects the mcp SDK's client over stdio, and sends each
question once with the default ``max_results``. Per search it counts what
came back: the text content (what most clients hand the model), the
structured content (which some clients hand the model as well), and both.

Tokens are an estimate, as no tokenizer of the big models is at hand
offline: a BPE tokenizer makes about one token of each run of letters or
digits up to four characters long (longer runs: one per four), of each
punctuation mark and of each line break; spaces join the word after them.
It tracks cl100k/o200k counts of JSON and numbered text within about 15 %,
and the comparison before/after uses the same estimate.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import statistics
import sys
from dataclasses import asdict, dataclass
from pathlib import Path

import anyio
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp_bench import DEFAULT_MODEL, QUESTIONS, example_memory

_PIECES = re.compile(r" ?[A-Za-z]+| ?\d+| ?[^\sA-Za-z\d]|\n| +")


def estimate_tokens(text: str) -> int:
    """A BPE-like token count of ``text`` (see the module docstring)."""
    return sum(math.ceil(len(p.strip() or p) / 4) for p in _PIECES.findall(text))


@dataclass(frozen=True)
class Received:
    """What one search sent back."""

    question: str
    results: int
    text_chars: int
    structured_chars: int

    @property
    def chars(self) -> int:
        return self.text_chars + self.structured_chars


async def _searches(config: Path) -> tuple[list[Received], list[str]]:
    """Each question once; what came back, and the text of the last one."""
    env = dict(os.environ) | {"MEMEXT_CONFIG": str(config)}
    params = StdioServerParameters(command=sys.executable, args=["-m", "memext", "mcp"], env=env)
    got: list[Received] = []
    tokens: list[str] = []
    async with Client(params) as client:
        for q in QUESTIONS:
            r = await client.call_tool("memory_search", {"query": q})
            text = "".join(c.text for c in r.content if c.type == "text")
            assert not r.is_error, text
            structured = json.dumps(r.structured_content, ensure_ascii=False) if r.structured_content is not None else ""
            count = len(json.loads(text)["results"])
            got.append(Received(q, count, len(text), len(structured)))
            tokens.append(text + structured)
    return got, tokens


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--provider", choices=["local", "none"], default="none")
    ap.add_argument("--model", type=Path, default=DEFAULT_MODEL)
    ap.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = ap.parse_args()
    with example_memory(args.provider, args.model) as (_, config):
        got, payloads = anyio.run(_searches, config)
    text_tokens = [estimate_tokens(p[: g.text_chars]) for p, g in zip(payloads, got)]
    all_tokens = [estimate_tokens(p) for p in payloads]
    summary = {
        "provider": args.provider,
        "searches": len(got),
        "results_mean": statistics.mean(g.results for g in got),
        "text_chars_mean": round(statistics.mean(g.text_chars for g in got)),
        "text_tokens_mean": round(statistics.mean(text_tokens)),
        "all_chars_mean": round(statistics.mean(g.chars for g in got)),
        "all_tokens_mean": round(statistics.mean(all_tokens)),
    }
    if args.json:
        print(json.dumps({**summary, "per_search": [asdict(g) for g in got]}, indent=1))
        return
    print(f"example memory, provider {args.provider}, {len(got)} searches, {summary['results_mean']:.1f} results each on average")
    for g, t in zip(got, all_tokens):
        print(f"  {g.question[:44]:<44} {g.results} results  text {g.text_chars:>5} chars  text+structured {g.chars:>5} chars  ~{t} tokens")
    print(f"per search, text content      : {summary['text_chars_mean']} chars, ~{summary['text_tokens_mean']} tokens")
    print(f"per search, text + structured : {summary['all_chars_mean']} chars, ~{summary['all_tokens_mean']} tokens")


if __name__ == "__main__":
    main()
