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
    assert alias.stdout.replace("memext-tray", "memext tray") == r.stdout  # the usage line and the examples


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


def _command_paths(group: click.Group, ctx: click.Context, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """Every command under ``group``, as the words that name it (the lazy ones too)."""
    out = []
    for name in group.list_commands(ctx):
        cmd = group.get_command(ctx, name)
        out.append((*prefix, name))
        if isinstance(cmd, click.Group):
            out += _command_paths(cmd, click.Context(cmd, parent=ctx, info_name=name), (*prefix, name))
    return out


def _examples(help_text: str) -> list[str]:
    """The lines after the help's last ``Examples:`` heading, which must end it."""
    lines = help_text.rstrip("\n").splitlines()
    heading = max(i for i, line in enumerate(lines) if line.strip() == "Examples:")
    return [line.strip() for line in lines[heading + 1:]]


def _parses(example: str) -> None:
    """The example's arguments are accepted by the command it names (parsed,
    not run): no example shows an option that does not exist."""
    import shlex

    words = shlex.split(example.split("|")[-1])
    assert words[0] == "memext", example
    args = words[1:]
    if args[0] == "tray":
        from memext.tray.__main__ import parse_args

        parse_args(args[1:], prog="memext tray")
        return
    cmd: click.Command = cli
    name = "memext"
    while isinstance(cmd, click.Group) and args and args[0] in cmd.list_commands(click.Context(cmd)):
        name, args = args[0], args[1:]
        cmd = cmd.get_command(click.Context(cmd), name)
    cmd.make_context(name, list(args))  # a UsageError for an unknown option or a missing argument


def test_every_help_ends_with_two_examples_that_parse():
    paths = [(), *_command_paths(cli, click.Context(cli, info_name="memext"))]
    assert {("agents", "add"), ("agents", "prune"), ("model", "install"), ("model", "status"), ("mcp",), ("config",), ("tray",)} <= set(paths)
    for path in paths:
        r = CliRunner().invoke(cli, [*path, "--help"], prog_name="memext")
        assert r.exit_code == 0, (path, r.output)
        examples = _examples(r.output)
        assert len(examples) == 2 and all(" ".join(["memext", *path]) in e for e in examples), (path, examples)
        for example in examples:
            _parses(example)


def test_memext_help_lists_every_command_without_cutting_its_description():
    r = CliRunner().invoke(cli, ["--help"], prog_name="memext", terminal_width=80)
    listed = r.output.split("Commands:\n", 1)[1].split("\n\n", 1)[0].splitlines()
    rows: dict[str, str] = {}
    for line in listed:  # a description too long for one line goes on below its name
        name, _, text = line.strip().partition("  ")
        if line.startswith("  ") and not line.startswith("   "):
            rows[name] = text.strip()
        else:
            rows[list(rows)[-1]] += " " + line.strip()
    assert set(rows) == set(cli.list_commands(click.Context(cli)))
    for name, text in rows.items():
        cmd = cli.get_command(click.Context(cli), name)
        assert not text.endswith("...") and text == " ".join((cmd.short_help or cmd.help or "").split()), name
    for group in ("agents", "model"):
        sub = CliRunner().invoke(cli, [group, "--help"], prog_name="memext", terminal_width=80).output
        assert "..." not in sub.split("Commands:", 1)[1], group
