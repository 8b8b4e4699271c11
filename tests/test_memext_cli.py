"""The ``memext`` program (memext/cli.py): the engine's commands plus
``memext tray``."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import click
from click.testing import CliRunner
from tray_helpers import make_workspace, search_paths, wait_for, write_config

from memext.cli import cli
from memext.engine.faces.cli.commands import cli as engine_cli

ROOT = Path(__file__).resolve().parent.parent

#: A missing optional install cannot be caused in the test venv (CI installs
#: every extra), so the child process hides the tray's modules: importing one
#: of them then raises ModuleNotFoundError, as without `memext[tray]`.
WITHOUT_TRAY_EXTRA = (
    "import sys\n"
    "for name in ('watchdog', 'pystray', 'PIL'):\n"
    "    sys.modules[name] = None\n"
    "from memext.cli import main\n"
    "sys.argv = ['memext', *sys.argv[1:]]\n"
    "main()\n"
)


def memext(*args: str, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "memext", *args], cwd=ROOT, capture_output=True, text=True, timeout=timeout)


def test_the_program_has_every_engine_command_and_tray():
    names = set(cli.list_commands(click.Context(cli)))
    assert names == set(engine_cli.list_commands(click.Context(engine_cli))) | {"tray"}
    assert {"agents", "config", "model", "search"} <= names
    assert all(cli.get_command(click.Context(cli), name) is not None for name in names)
    assert "tray" not in engine_cli.commands  # importing memext.cli changed nothing there
    r = CliRunner().invoke(cli, ["--help"])
    assert r.exit_code == 0 and "tray" in r.output and "search" in r.output


#: Modules a one-shot `memext search` of an index with nothing to sync does
#: not need (cold start: they are loaded when a command or a sync uses them).
NOT_FOR_A_SEARCH = (
    "memext.engine.faces.cli.agent_commands",
    "memext.engine.search.explain",
    "memext.engine.faces.cli.model_commands",
    "memext.engine.indexing.leftovers",
    "memext.engine.memory.append",
    "memext.engine.indexing.progress",
    "memext.engine.status",
    "memext.engine.indexing.sync",
    "memext.engine.store.postgres",
    "numpy",
    "psycopg",
)


def test_a_one_shot_search_loads_only_what_it_uses(tmp_path):
    ws = make_workspace(tmp_path, "solo", {"memory/2026-01-01.md": "- the solo note about walruses\n"})
    cfg = write_config(tmp_path / "config.toml", {"solo": ws}, solo={"sync": {"on_search": True}})
    assert memext("--config", str(cfg), "index").returncode == 0
    code = (
        "import sys\nfrom memext.cli import cli\n"
        f"cli.main(['--config', {str(cfg)!r}, 'search', 'walruses'], prog_name='memext', standalone_mode=False)\n"
        "print('LOADED', *sorted(sys.modules))\n"
    )
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert "memory/2026-01-01.md:1-1" in r.stdout  # it searched (and checked for changes first)
    loaded = set(r.stdout.split("LOADED", 1)[1].split())
    assert "memext.engine.search.pipeline" in loaded and "memext.engine.indexing.changes" in loaded
    assert sorted(loaded & set(NOT_FOR_A_SEARCH)) == []
    # The lazy commands still run, from the same group.
    listed = memext("--config", str(cfg), "agents", "--json")
    assert listed.returncode == 0 and '"solo"' in listed.stdout, listed.stderr
    assert "install" in memext("model", "--help").stdout
    typo = memext("agent")
    assert typo.returncode == 2 and "'agents'" in typo.stderr  # a lazy command is suggested too


def test_memext_tray_has_the_options_of_memext_tray():
    r = memext("tray", "--help")
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("usage: memext tray")
    for option in ("--headless", "--config", "--polling", "--reconcile-seconds", "--verbose"):
        assert option in r.stdout
    alias = subprocess.run([sys.executable, "-m", "memext.tray", "--help"], capture_output=True, text=True, timeout=60)
    assert alias.stdout.replace("usage: memext-tray", "usage: memext tray") == r.stdout


def test_memext_tray_runs_the_tray_with_the_groups_config(tmp_path):
    ws = make_workspace(tmp_path, "solo", {"memory/2026-01-01.md": "- the solo note about walruses\n"})
    cfg = write_config(tmp_path / "config.toml", {"solo": ws})
    proc = subprocess.Popen(
        [sys.executable, "-m", "memext", "--config", str(cfg), "tray", "--headless"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        wait_for(lambda: search_paths(cfg, "solo", "walruses"), timeout=60, what="the tray's first sync")
    finally:
        proc.send_signal(signal.SIGTERM)
        out, _ = proc.communicate(timeout=60)
    assert proc.returncode == 0, out


def test_without_the_tray_extra_memext_tray_says_what_to_install(tmp_path):
    cfg = write_config(tmp_path / "config.toml", {"solo": make_workspace(tmp_path, "solo")})
    r = subprocess.run(
        [sys.executable, "-c", WITHOUT_TRAY_EXTRA, "--config", str(cfg), "tray"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 1, r.stdout + r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr
    assert "pip install 'memext[tray]'" in r.stderr
    # The rest of the program works without it.
    r = subprocess.run([sys.executable, "-c", WITHOUT_TRAY_EXTRA, "--config", str(cfg), "agents"], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and "solo" in r.stdout
