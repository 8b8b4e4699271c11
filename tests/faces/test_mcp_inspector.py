"""`memext mcp` driven by the MCP Inspector's own CLI, from npm: a client
nobody here wrote, which sends every argument typed on its command line
(as in its forms) as text, numbers included."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT
from memext_helpers import write_config

from memext.engine import TOOLS

#: The newest Inspector that runs on Node 20.
INSPECTOR = "@modelcontextprotocol/inspector@0.15"


@pytest.fixture(scope="module")
def npx() -> str:
    """npx, with the Inspector installed in npm's cache (once: later runs find it there)."""
    found = shutil.which("npx")
    if found is None:
        pytest.fail("npx (npm) is not installed: this test runs the MCP Inspector's CLI from npm; install Node.js 20 with npm")
    r = subprocess.run([found, "-y", INSPECTOR, "--help"], capture_output=True, text=True, timeout=600)
    if r.returncode != 0:
        pytest.fail(f"could not install {INSPECTOR} from npm (is the npm registry reachable?):\n{r.stderr[-2000:]}")
    return found


def inspect(npx: str, config: Path, *request: str) -> dict:
    """One Inspector CLI request (``--method ...``) to a `memext mcp` it starts."""
    # The server gets what it needs of this environment: the config, and
    # the import path of the memext under test.
    env = {"MEMEXT_CONFIG": str(config), **{k: v for k, v in os.environ.items() if k.startswith("XDG_") or k == "PYTHONPATH"}}
    server_env = [arg for key, value in env.items() for arg in ("-e", f"{key}={value}")]
    cmd = [npx, "-y", INSPECTOR, "--cli", *server_env, sys.executable, "-m", "memext", "mcp", *request]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=180, cwd=ROOT)
    assert r.returncode == 0, r.stdout + r.stderr
    return json.loads(r.stdout)


def call(npx: str, config: Path, tool: str, **arguments: str) -> dict:
    args = [arg for key, value in arguments.items() for arg in ("--tool-arg", f"{key}={value}")]
    return inspect(npx, config, "--method", "tools/call", "--tool-name", tool, *args)


def test_the_inspector_drives_the_server(npx, example_workspace, tmp_path):
    config = write_config(tmp_path / "cfg", {"example": example_workspace})

    listed = inspect(npx, config, "--method", "tools/list")
    assert [t["name"] for t in listed["tools"]] == [t.name for t in TOOLS]

    # max_results arrives as "2": read as the number 2.
    found = call(npx, config, "memory_search", query="Biscuit", max_results="2", min_score="0")
    assert found["isError"] is False, found
    assert "structuredContent" not in found and len(found["content"]) == 1  # the payload, once
    hits = json.loads(found["content"][0]["text"])["results"]
    assert len(hits) == 2 and all(h["citation"].startswith(("memory/", "MEMORY.md:")) for h in hits)

    got = call(npx, config, "memory_get", path="MEMORY.md", **{"from": "3", "lines": "2", "numbered": "true"})
    assert got["isError"] is False, got
    read = json.loads(got["content"][0]["text"])
    file_lines = (example_workspace / "MEMORY.md").read_text(encoding="utf-8").splitlines()
    assert (read["from_line"], read["to_line"]) == (3, 4)
    assert read["text"].splitlines() == [f"  {n}  {file_lines[n - 1]}".rstrip() for n in (3, 4)]

    bad = call(npx, config, "memory_search", query="Biscuit", max_results="a few")
    assert bad["isError"] is True
    assert 'max_results must be a whole number (such as 3), got "a few"' in bad["content"][0]["text"]
