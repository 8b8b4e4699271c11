"""What every command says and how it exits when the agent's workspace is
out of reach (engine/faces/cli/group.py: exit status 2 naming the folder,
never the 1 of "no memory matches"; DESIGN.md §1)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from memext.engine.faces.cli.commands import cli


@pytest.fixture
def config(tmp_path, workspace, monkeypatch) -> Path:
    cfg = tmp_path / "config.toml"
    cfg.write_text(f'[memory_search]\nprovider = "none"\n[[agents]]\nid = "w"\nworkspace = "{workspace}"\n')
    monkeypatch.setenv("MEMEXT_CONFIG", str(cfg))
    return cfg


def run(*args: str):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def test_a_workspace_moved_away_is_an_error_in_every_command(config, workspace, tmp_path):
    """The folder is renamed (or its drive unmounted): search does not answer
    "no memory matches" (exit 1, which an agent takes for "nothing about
    herons"), every command names the folder and exits 2, nothing is
    written where the workspace was, and the index keeps its files."""
    assert run("index").exit_code == 0
    workspace.rename(tmp_path / "elsewhere")
    named = f"workspace {workspace} of agent w does not exist"
    for args in (["search", "Anna"], ["search", "Anna", "--json"], ["get", "MEMORY.md"], ["note", "A heron at the weir."], ["index"]):
        r = run(*args)
        assert r.exit_code == 2 and named in r.stderr and "no memory matches" not in r.output, (args, r.output)
        assert len(r.stderr.strip().splitlines()) == 1 and r.stdout == "", (args, r.output)
    assert not workspace.exists()
    st = run("status")
    assert st.exit_code == 2 and st.stderr.startswith(f"memext: error: w: {named}") and len(st.stderr.strip().splitlines()) == 1
    assert "files      memory 3" in st.stdout  # the index keeps them
    (tmp_path / "elsewhere").rename(workspace)
    r = run("search", "Anna")
    assert r.exit_code == 0 and "memory/2026-01-06.md" in r.stdout
    assert run("status").exit_code == 0


def test_an_emptied_workspace_asks_for_force(config, workspace):
    """An unmounted drive leaves its empty mount point: that is not "every
    file deleted" until the user says so with --force."""
    assert run("index").exit_code == 0
    for p in sorted(workspace.rglob("*"), reverse=True):
        p.rmdir() if p.is_dir() else p.unlink()
    r = run("search", "Anna")
    assert r.exit_code == 2 and "holds no memory" in r.stderr and "is the drive that holds it mounted?" in r.stderr
    r = run("index")
    assert r.exit_code == 2 and "`memext index --force` empties it" in r.stderr
    assert json.loads(run("status", "--json").stdout)[0]["files"] == {"memory": 3}
    r = run("index", "--force")
    assert r.exit_code == 0 and json.loads(run("status", "--json").stdout)[0]["files"] == {"memory": 0}


@pytest.mark.parametrize("mode", [0o000, 0o311])
def test_an_unreadable_workspace_is_an_error_for_root_too(config, workspace, mode):
    """Run as the user who cannot read it: root without the capabilities
    that let it ignore file modes (chmod alone stops no root process)."""
    from fault_helpers import NO_FILE_MODE_OVERRIDE

    assert run("index").exit_code == 0
    workspace.chmod(mode)
    try:
        done = {
            args[0]: subprocess.run([*NO_FILE_MODE_OVERRIDE, sys.executable, "-m", "memext", *args], capture_output=True, text=True)
            for args in (["search", "Anna"], ["status"], ["index"], ["get", "MEMORY.md"])
        }
    finally:
        workspace.chmod(0o755)
    for name, r in done.items():
        assert r.returncode == 2, (name, r.stdout, r.stderr)
        assert f"workspace {workspace} of agent w cannot be read (Permission denied)" in r.stderr and "Traceback" not in r.stderr
    assert "no memory matches" not in done["search"].stdout
    assert json.loads(run("status", "--json").stdout)[0]["files"] == {"memory": 3}
