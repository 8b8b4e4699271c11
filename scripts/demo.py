"""The main job, end to end: index the bundled example memory and search it.

Run by `make demo`. It keeps its config and index under build/demo so it
never touches your own memext config.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEMO = ROOT / "build" / "demo"
QUERIES = [
    "when is the Berlin trip?",
    "a828e60",
    "what did we decide about fusion?",
    "咖啡",
    "how much should the cat eat?",
]


def memext(*args: str) -> None:
    cmd = [sys.executable, "-m", "engine.cli", *args]
    print(f"\n$ memext {' '.join(args)}", flush=True)
    subprocess.run(cmd, check=True)


def main() -> None:
    DEMO.mkdir(parents=True, exist_ok=True)
    config = DEMO / "config.toml"
    if not config.exists():
        config.write_text(
            "[[agents]]\n"
            'id = "example"\n'
            f"workspace = {str(ROOT / 'example')!r}\n"
            "[agents.memory_search.store]\n"
            f"path = {str(DEMO / 'example.sqlite')!r}\n",
            encoding="utf-8",
        )
    os.environ["MEMEXT_CONFIG"] = str(config)
    memext("index")
    for q in QUERIES:
        memext("search", q, "-n", "3")
    memext("status")


if __name__ == "__main__":
    main()
