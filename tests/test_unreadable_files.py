"""A memory file that becomes unreadable (its mode changed, its stat not):
searches stop offering its old text, the next sync takes it out of the
index and says why, and it comes back once it can be read again.

File modes do not bind root (CAP_DAC_OVERRIDE): as root the CLI runs
under ``setpriv`` (util-linux) with the capabilities that bypass them
dropped, so a mode-0 file is as unreadable to it as to any user."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest


@pytest.fixture
def setup(tmp_path):
    """(workspace, env, command prefix that makes file modes bind the CLI)."""
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    (ws / "MEMORY.md").write_text("- Bob prefers green tea.\n", encoding="utf-8")
    (ws / "memory" / "2026-01-05.md").write_text("# 2026-01-05\n\n- The deploy key rotates monthly.\n", encoding="utf-8")
    config = tmp_path / "config.toml"
    config.write_text(f'[memory_search]\nprovider = "none"\n[[agents]]\nid = "w"\nworkspace = "{ws}"\n', encoding="utf-8")
    env = dict(os.environ, MEMEXT_CONFIG=str(config))
    prefix: list[str] = []
    if os.geteuid() == 0:
        setpriv = shutil.which("setpriv")
        assert setpriv, "running as root, the test needs setpriv (util-linux) to make file modes bind"
        prefix = [setpriv, "--bounding-set=-dac_override,-dac_read_search"]
    return ws, env, prefix


def memext(setup, *args: str) -> subprocess.CompletedProcess:
    _, env, prefix = setup
    return subprocess.run([*prefix, sys.executable, "-m", "memext", *args], env=env, capture_output=True, text=True, timeout=120)


def test_an_unreadable_file_leaves_results_and_index_and_comes_back(setup):
    ws = setup[0]
    note = ws / "memory" / "2026-01-05.md"
    assert memext(setup, "index").returncode == 0
    hits = json.loads(memext(setup, "search", "deploy key", "--json").stdout)
    assert [r["path"] for r in hits["results"]] == ["memory/2026-01-05.md"]

    stat_before = note.stat()
    note.chmod(0)
    assert (note.stat().st_mtime_ns, note.stat().st_size) == (stat_before.st_mtime_ns, stat_before.st_size)

    # The index still holds the old text (no sync yet): the search leaves it out and says so.
    r = memext(setup, "search", "deploy key", "--json", "--no-sync")
    assert r.returncode == 1, r.stderr  # nothing left to answer with: exit status 1
    out = json.loads(r.stdout)
    assert out["results"] == []
    assert "memory/2026-01-05.md can no longer be read" in out["notice"]
    get = memext(setup, "get", "memory/2026-01-05.md:3")
    assert get.returncode == 2 and "memory/2026-01-05.md: cannot be read (Permission denied)" in get.stderr

    # The next sync reads it again, fails, takes its chunks out and says why.
    r = memext(setup, "index", "--json")
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout)
    (w,) = report if isinstance(report, list) else [report]
    assert w["files_deleted"] == 1
    assert {"path": "memory/2026-01-05.md", "reason": "cannot read: Permission denied"} in w["skipped"]
    (st,) = json.loads(memext(setup, "status", "--json").stdout)
    assert st["files"] == {"memory": 1}
    assert json.loads(memext(setup, "search", "deploy key", "--json").stdout)["results"] == []
    assert json.loads(memext(setup, "search", "green tea", "--json").stdout)["results"]

    # Readable again: indexed again.
    note.chmod(0o644)
    assert memext(setup, "index").returncode == 0
    hits = json.loads(memext(setup, "search", "deploy key", "--json").stdout)
    assert [r["path"] for r in hits["results"]] == ["memory/2026-01-05.md"]


def test_a_deleted_file_is_left_out_of_a_search_that_does_not_sync(setup):
    ws = setup[0]
    assert memext(setup, "index").returncode == 0
    (ws / "memory" / "2026-01-05.md").unlink()
    out = json.loads(memext(setup, "search", "deploy key", "--json", "--no-sync").stdout)
    assert out["results"] == [] and "memory/2026-01-05.md no longer exists" in out["notice"]
