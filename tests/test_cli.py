"""The memext command line."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from engine import MemextError
from engine.cli import cli, parse_get_spec


@pytest.fixture
def config(tmp_path, workspace, monkeypatch) -> Path:
    cfg = tmp_path / "config.toml"
    cfg.write_text(f'[memory_search]\nprovider = "none"\n[[agents]]\nid = "w"\nworkspace = "{workspace}"\n')
    monkeypatch.setenv("MEMEXT_CONFIG", str(cfg))
    return cfg


def run(*args: str):
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    return result


def test_index_search_get_status_json(config):
    r = run("index", "--json")
    assert r.exit_code == 0, r.output
    report = json.loads(r.output)
    assert report["files_indexed"] == 3 and report["agent"] == "w"

    r = run("search", "a828e60", "--json")
    data = json.loads(r.output)
    hit = data["results"][0]
    assert {"path", "start_line", "end_line", "score", "snippet", "source"} <= set(hit)
    assert hit["citation"] == "memory/2026-01-05.md:1-4" and data["mode"] == "keyword"

    r = run("get", "memory/2026-01-05.md:3-3", "--json")
    assert json.loads(r.output)["text"] == "- Fixed the cache invalidation bug in commit a828e60."

    r = run("status", "--json")
    st = json.loads(r.output)
    assert st[0]["files"] == {"memory": 3} and st[0]["provider"]["in_force"] == "none"


def test_text_output(config):
    run("index")
    r = run("search", "green", "tea")
    assert "1. MEMORY.md:1-8" in r.output and "score" in r.output and "Bob prefers green tea" in r.output
    r = run("get", "MEMORY.md", "--from", "4", "--lines", "1", "-n")
    assert r.output.strip() == "4  - Anna is the tech lead of the billing team."
    r = run("status")
    assert "keyword-only" in r.output and "files      memory 3" in r.output


def test_failures_exit_1_with_one_line(config, tmp_path):
    r = run("get", "../secret.md")
    assert r.exit_code == 1 and r.output.startswith("memext: error: ../secret.md: '..'")
    r = run("search", "x", "-a", "nobody")
    assert r.exit_code == 1 and "no agent 'nobody'" in r.output
    config.write_text("[memory_search.chunking]\ntokens = \"lots\"\n")
    r = run("status")
    assert r.exit_code == 1 and "memory_search.chunking.tokens" in r.output and str(config) in r.output


def test_agents_add_and_list(tmp_path, workspace, monkeypatch):
    cfg = tmp_path / "new" / "config.toml"
    monkeypatch.setenv("MEMEXT_CONFIG", str(cfg))
    r = run("agents", "add", "notes", str(workspace), "--extra-path", "docs")
    assert r.exit_code == 0, r.output
    r = run("agents", "--json")
    rows = json.loads(r.output)
    assert rows[0]["id"] == "notes" and rows[0]["workspace"] == str(workspace.resolve())
    assert run("agents", "add", "notes", str(workspace)).exit_code == 1


def test_parse_get_spec():
    assert parse_get_spec("memory/a.md") == ("memory/a.md", None, None)
    assert parse_get_spec("memory/a.md:5") == ("memory/a.md", 5, None)
    assert parse_get_spec("memory/a.md:5-7") == ("memory/a.md", 5, 3)
    for bad, message in [("a.md:0", "start at 1"), ("a.md:0-2", "start at 1"), ("a.md:7-5", "ends before")]:
        with pytest.raises(MemextError, match=message):
            parse_get_spec(bad)


def test_console_script_exit_code(config):
    exe = shutil.which("memext", path=str(Path(sys.executable).parent))
    assert exe, "memext console script not installed"
    ok = subprocess.run([exe, "search", "Anna"], capture_output=True, text=True)
    assert ok.returncode == 0 and "memory/2026-01-06.md" in ok.stdout
    bad = subprocess.run([exe, "get", "/etc/passwd"], capture_output=True, text=True)
    assert bad.returncode == 1 and "memext: error:" in bad.stderr
    zero = subprocess.run([exe, "get", "MEMORY.md:0-2"], capture_output=True, text=True)
    assert zero.returncode == 1 and "line numbers start at 1" in zero.stderr and "Traceback" not in zero.stderr
