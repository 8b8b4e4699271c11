"""The ``memext`` program (memext/cli.py): the engine's commands plus
``memext tray``."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import click
from click.testing import CliRunner
from conftest import ROOT
from tray_helpers import make_workspace, search_paths, wait_for, write_config

from memext.cli import cli
from memext.engine.faces.cli.commands import cli as engine_cli

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
    "memext.engine.faces.cli.index_commands",
    "memext.engine.faces.cli.lifecycle_commands",
    "memext.engine.faces.cli.mcp_command",
    "memext.engine.search.explain",
    "memext.engine.faces.cli.model_commands",
    "memext.engine.indexing.removal",
    "memext.engine.memory.append",
    "memext.engine.indexing.progress",
    "memext.engine.status",
    "memext.engine.indexing.sync",
    "memext.engine.store.postgres",
    "memext.engine.providers.base",
    "memext.engine.search.mmr",
    "memext.engine.search.decay",
    "memext.engine.search.feedback",
    "memext.engine.memory.transcripts",
    "numpy",
    "threadpoolctl",
    "psycopg",
    "logging",
    "hashlib",
)


#: Ceilings on what that search loads: memext's own modules as counted on
#: Python 3.11, all modules with a little room for other Pythons' standard
#: libraries.
MODULES_FOR_A_SEARCH = 245
MEMEXT_MODULES_FOR_A_SEARCH = 86


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
    assert "memory/2026-01-01.md:1" in r.stdout  # it searched (and checked for changes first)
    loaded = set(r.stdout.split("LOADED", 1)[1].split())
    assert "memext.engine.search.pipeline" in loaded and "memext.engine.indexing.changes" in loaded
    assert sorted(loaded & set(NOT_FOR_A_SEARCH)) == []
    # The import cost of a search, in modules: 240 in all and 86 of memext's
    # when this was written. A new import on this path shows here first.
    assert len(loaded) <= MODULES_FOR_A_SEARCH, f"{len(loaded)} modules"
    assert len({m for m in loaded if m.startswith("memext")}) <= MEMEXT_MODULES_FOR_A_SEARCH
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


def test_memext_tray_refuses_a_config_path_that_is_not_utf8():
    for command in ([b"-m", b"memext.tray"], [b"-m", b"memext", b"tray"]):
        r = subprocess.run(
            [sys.executable.encode(), *command, b"--headless", b"--config", b"/tmp/c\xff.toml"], capture_output=True, timeout=60
        )
        assert r.returncode == 2 and b"Traceback" not in r.stderr, r.stderr
        assert b"not valid UTF-8" in r.stderr and b"c\\xff.toml" in r.stderr, r.stderr


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
    assert r.returncode == 2, r.stdout + r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr
    assert "pip install 'memext[tray]'" in r.stderr
    # The rest of the program works without it.
    r = subprocess.run(
        [sys.executable, "-c", WITHOUT_TRAY_EXTRA, "--config", str(cfg), "agents"], cwd=tmp_path, capture_output=True, text=True, timeout=60
    )
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
    return [line.strip() for line in lines[heading + 1 :]]


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
    assert {("agents", "add"), ("agents", "prune"), ("model", "install"), ("model", "status"), ("mcp",), ("config",), ("tray",)} <= set(
        paths
    )
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


# -- what the memext process does: Ctrl+C, stdin, colour, completion ----------------------


def _solo_config(tmp_path: Path) -> Path:
    ws = make_workspace(tmp_path, "solo", {"memory/2026-01-01.md": "- the solo note about walruses and their tusks\n"})
    return write_config(tmp_path / "config.toml", {"solo": ws})


def _reading_stdin(pid: int) -> bool:
    """True once the process sleeps in a read of a pipe (its stdin: the only
    pipe it reads), as Linux reports it in /proc."""
    return "pipe" in Path(f"/proc/{pid}/wchan").read_text()


def _ctrl_c_as_in_a_terminal() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_ctrl_c_exits_130_with_one_line(tmp_path):
    cfg = _solo_config(tmp_path)
    proc = subprocess.Popen(
        [sys.executable, "-m", "memext", "--config", str(cfg), "search", "-"],
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        # As a shell starts a command in the foreground: a runner started in
        # the background (nohup, `&`) hands its children Ctrl+C ignored,
        # and a program started so rightly keeps ignoring it.
        preexec_fn=_ctrl_c_as_in_a_terminal,
    )
    try:
        wait_for(lambda: _reading_stdin(proc.pid), timeout=60, what="memext waiting for the query on stdin")
        proc.send_signal(signal.SIGINT)  # what Ctrl+C sends
        out, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert (proc.returncode, out, err) == (130, "", "memext: interrupted\n")


def test_search_dash_reads_the_query_from_stdin(tmp_path):
    cfg = _solo_config(tmp_path)
    r = subprocess.run(
        [sys.executable, "-m", "memext", "--config", str(cfg), "search", "-"],
        cwd=ROOT,
        input="walruses\n  tusks\n",
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 0 and r.stdout.startswith("1. memory/2026-01-01.md:1"), r.stderr
    empty = subprocess.run(
        [sys.executable, "-m", "memext", "--config", str(cfg), "search", "-"],
        cwd=ROOT,
        input=" \n",
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert empty.returncode == 2 and empty.stderr == "memext: error: the query on stdin is empty\n"


def _on_a_terminal(args: list[str], env: dict[str, str]) -> str:
    """What ``memext ARGS`` writes to stdout when stdout is a terminal (a pty)."""
    import os
    import pty

    main, child = pty.openpty()
    try:
        proc = subprocess.Popen(
            [sys.executable, "-m", "memext", *args], cwd=ROOT, stdout=child, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL, env=env
        )
        os.close(child)
        out = b""
        while True:
            try:
                chunk = os.read(main, 4096)
            except OSError:  # EIO: the child closed the terminal
                break
            if not chunk:
                break
            out += chunk
        assert proc.wait(timeout=60) == 0
    finally:
        os.close(main)
    return out.decode()


def test_colour_follows_the_terminal_no_color_force_color_and_the_flag(tmp_path):
    import os

    cfg = _solo_config(tmp_path)
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR")}
    search = ["--config", str(cfg), "search", "walruses"]
    esc = "\x1b["
    assert esc in _on_a_terminal(search, env)  # a terminal: coloured
    assert esc not in _on_a_terminal(search, {**env, "NO_COLOR": "1"})
    assert esc not in _on_a_terminal(["--color=never", *search], env)
    assert esc in _on_a_terminal(["--color=always", *search], {**env, "NO_COLOR": "1"})  # the flag wins

    def piped(extra_env, *flags):
        return subprocess.run(
            [sys.executable, "-m", "memext", *flags, *search],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=60,
            env={**env, **extra_env},
        ).stdout

    assert esc not in piped({})  # a pipe: plain
    assert esc in piped({"FORCE_COLOR": "1"}) and esc in piped({}, "--color=always")
    assert esc not in piped({"FORCE_COLOR": "1", "NO_COLOR": "1"})
    assert "walruses" in piped({})


def test_shell_completion_offers_the_commands_as_the_docs_say(tmp_path):
    import os

    docs = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    for shell in ("bash", "zsh", "fish"):
        assert f"_MEMEXT_COMPLETE={shell}_source memext" in docs, shell
    env = {**os.environ, "_MEMEXT_COMPLETE": "bash_complete", "COMP_WORDS": "memext ", "COMP_CWORD": "1"}
    r = subprocess.run([sys.executable, "-m", "memext"], cwd=ROOT, capture_output=True, text=True, timeout=60, env=env)
    assert r.returncode == 0, r.stderr
    offered = [line.split(",", 1)[1] for line in r.stdout.splitlines()]
    assert offered == sorted(cli.list_commands(click.Context(cli)))  # the lazy commands too
    env.update(COMP_WORDS="memext se", COMP_CWORD="1")
    r = subprocess.run([sys.executable, "-m", "memext"], cwd=ROOT, capture_output=True, text=True, timeout=60, env=env)
    assert r.stdout.splitlines() == ["plain,search"]
    env.update(COMP_WORDS="memext search -a ", COMP_CWORD="3", MEMEXT_CONFIG=str(_solo_config(tmp_path)))
    r = subprocess.run([sys.executable, "-m", "memext"], cwd=ROOT, capture_output=True, text=True, timeout=60, env=env)
    assert r.stdout.splitlines() == ["plain,solo"]  # -a completes the configured agents
    source = subprocess.run(
        [sys.executable, "-m", "memext"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "_MEMEXT_COMPLETE": "zsh_source"},
    )
    assert "compdef _memext_completion memext" in source.stdout
