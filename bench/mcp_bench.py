"""Latency of a ``memory_search`` tool call through MCP stdio, next to its floor.

    python bench/mcp_bench.py [--runs 200] [--provider local|none] [--model PATH]

Starts the real ``memext mcp`` process on a copy of the example memory
(example/), connects the mcp SDK's client over stdio, makes the index and
the server warm (first build, first query), then times ``runs`` calls of
``memory_search`` with a set of questions and prints p50/p95. The floor is
the same searches through ``MemoryIndex.search`` in this process (same
index, same provider), interleaved with the MCP calls in blocks of 10 so
both see the same load on a shared machine: the difference is what the
protocol, JSON, the process hop and the server's freshness check (a stat
scan of the memory files) cost. ``local`` uses the real all-MiniLM-L6-v2
GGUF model (query embedding included in both figures); ``none`` is
keyword-only.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import anyio
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from memext.engine import MemoryIndex, load_config

ROOT = Path(__file__).resolve().parent.parent
#: The team's shared data folder, as tests/conftest.py finds it.
SHARED = Path(os.environ.get("MEMEXT_SHARED") or (ROOT.parent / "shared"))
DEFAULT_MODEL = SHARED / "models" / "all-minilm-l6-v2-f16.gguf"
#: Calls timed one way before switching to the other.
BLOCK = 10
QUESTIONS = [
    "How much food does Biscuit get per day?",
    "Which commit fixed the flaky refund test?",
    "Where does Dana's sister live?",
    "What did we decide about the deploy checklist?",
    "Who is Miguel?",
    "vet appointment",
    "caching",
    "What is Dana allergic to?",
]


def example_config(folder: Path, workspace: Path, provider: str, model: Path) -> Path:
    """A config of one agent, ``example``, over ``workspace``, its index in ``folder``."""
    lines = ["[memory_search]", f"provider = {json.dumps(provider)}"]
    if provider == "local":
        lines += ["[memory_search.local]", f"model_path = {json.dumps(str(model))}"]
    lines += [
        "[memory_search.store]",
        f"path = {json.dumps(str(folder / 'index' / '{agent_id}.sqlite'))}",
        "",
        "[[agents]]",
        'id = "example"',
        f"workspace = {json.dumps(str(workspace))}",
    ]
    path = folder / "config.toml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@contextmanager
def example_memory(provider: str, model: Path) -> Iterator[tuple[Path, Path]]:
    """A copy of the repository's example memory in a temporary folder, and
    a config serving it: (folder, config). The MCP benchmarks share it."""
    if provider == "local" and not model.is_file():
        sys.exit(f"no model at {model}; pass --model PATH or --provider none")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        shutil.copytree(ROOT / "example", folder / "workspace")
        yield folder, example_config(folder, folder / "workspace", provider, model)


def _percentiles(seconds: list[float]) -> tuple[float, float]:
    ms = sorted(s * 1000 for s in seconds)
    return statistics.median(ms), ms[min(len(ms) - 1, int(0.95 * len(ms)))]


async def _interleaved(config: Path, runs: int) -> tuple[list[float], list[float]]:
    """(MCP call times, in-process search times), taken in alternating blocks."""
    env = dict(os.environ) | {"MEMEXT_CONFIG": str(config)}
    params = StdioServerParameters(command=sys.executable, args=os.environ.get("BENCH_ARGS", "-m memext mcp").split(), env=env)
    cfg = load_config(config)
    mcp: list[float] = []
    floor: list[float] = []
    with MemoryIndex(cfg.agent("example"), config_file=cfg.path) as idx:
        async with Client(params) as client:
            for q in QUESTIONS * 3:  # warm: index built, model loaded, caches filled (both sides)
                r = await client.call_tool("memory_search", {"query": q})
                assert not r.is_error, r.content[0].text
                idx.search(q)
            # Blocks of BLOCK calls each way: llama.cpp's threads spin for a
            # moment after a query, and call-by-call alternation would make
            # one process's spinning slow the other's next query.
            for start in range(0, runs, BLOCK):
                questions = [QUESTIONS[i % len(QUESTIONS)] for i in range(start, min(runs, start + BLOCK))]
                for q in questions:
                    t0 = time.perf_counter()
                    r = await client.call_tool("memory_search", {"query": q})
                    mcp.append(time.perf_counter() - t0)
                    assert not r.is_error and json.loads(r.content[0].text)["stale"] is False
                for q in questions:
                    t0 = time.perf_counter()
                    idx.search(q)
                    floor.append(time.perf_counter() - t0)
    return mcp, floor


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=200)
    ap.add_argument("--provider", choices=["local", "none"], default="local")
    ap.add_argument("--model", type=Path, default=DEFAULT_MODEL)
    args = ap.parse_args()
    with example_memory(args.provider, args.model) as (_, config):
        mcp, floor = anyio.run(_interleaved, config, args.runs)
    (m50, m95), (f50, f95) = _percentiles(mcp), _percentiles(floor)
    print(f"example memory, provider {args.provider}, {args.runs} warm searches each, interleaved in blocks of {BLOCK}")
    print(f"memory_search via MCP stdio : p50 {m50:.2f} ms  p95 {m95:.2f} ms")
    print(f"MemoryIndex.search (floor)  : p50 {f50:.2f} ms  p95 {f95:.2f} ms")
    print(f"MCP overhead at p50         : {m50 - f50:.2f} ms")


if __name__ == "__main__":
    main()
