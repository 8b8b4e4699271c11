"""What the command group (engine/faces/cli/group.py) makes of trouble:
arguments and stdin that are not UTF-8, refused before any command reads
them, through the real program with bytes in argv; and a workspace out of
reach, exit status 2 naming the folder in every command, never the 1 of
"no memory matches" (DESIGN.md §1)."""

from __future__ import annotations

import json
import random
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


def _memext(args: list[bytes], stdin: bytes | None = None) -> subprocess.CompletedProcess:
    """`memext ARGS` as a shell passes them: bytes, which Python decodes to
    lone surrogates where they are not UTF-8."""
    return subprocess.run([sys.executable.encode(), b"-m", b"memext", *args], input=stdin or b"", capture_output=True, timeout=120)


def _files(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.mark.parametrize(
    "args, named",
    [
        ([b"search", b"deploy \xed\xa0\x80 cache"], b"QUERY"),  # a UTF-16 surrogate written as UTF-8
        ([b"search", b"--since", b"7d\xff", b"Anna"], b"the value of --since"),
        ([b"search", b"--before=2026\xc0", b"Anna"], b"the value of --before"),
        ([b"-a", b"w\xff", b"search", b"Anna"], b"the value of -a"),
        ([b"--config", b"/tmp/c\xfe.toml", b"status"], b"the value of --config"),
        ([b"get", b"MEMORY\xed.md"], b"SPEC"),
        ([b"forget", b"MEMORY.md:4\xff"], b"CITATION"),
        ([b"note", b"caf\xe9 au lait"], b"TEXT"),
        ([b"note", b"--file", b"memory/\xff.md", b"hello"], b"the value of --file"),
        ([b"recall", b"book", b"\x80", b"flight"], b"TEXT"),
        ([b"capture", b"chat\xff.jsonl"], b"TRANSCRIPT"),
        ([b"agents", b"add", b"w2", b"/tmp/w\xff"], b"WORKSPACE"),
        ([b"mcp", b"-a", b"\xff"], b"the value of -a"),
        ([b"index", b"--json", b"\xff"], b"argument 3"),
    ],
)
def test_an_argument_that_is_not_utf8_is_named_exit_2(config, workspace, args, named):
    before = _files(workspace)
    r = _memext(args)
    assert r.returncode == 2, r
    assert r.stdout == b"" and b"Traceback" not in r.stderr
    line = r.stderr.decode("ascii")  # the bad bytes shown as \xNN
    assert line.count("\n") == 1 and line.startswith(f"memext: error: {named.decode()} is not valid UTF-8: '"), line
    assert _files(workspace) == before  # nothing written


@pytest.mark.parametrize("args, what", [([b"search", b"-"], "the query"), ([b"note"], "the note"), ([b"recall", b"-"], "the message")])
def test_stdin_that_is_not_utf8_is_an_error_exit_2(config, workspace, args, what):
    before = _files(workspace)
    r = _memext(args, stdin=b"deploy caf\xe9 cache")
    assert r.returncode == 2 and b"Traceback" not in r.stderr
    assert r.stderr.decode() == f"memext: error: {what} on stdin is not valid UTF-8 (byte 11 is b'\\xe9')\n"
    assert _files(workspace) == before


def test_random_byte_queries_get_an_answer_or_one_line(config):
    """Queries of random bytes through the real program: each is answered
    (0), finds nothing (1) or is refused in one line (2); never a traceback.
    """
    assert run("index").exit_code == 0
    rnd = random.Random(41)
    for _ in range(40):
        query = bytes(rnd.choice([*range(1, 256)]) for _ in range(rnd.randint(1, 24)))
        r = _memext([b"search", b"--", b"Anna " + query])
        assert r.returncode in (0, 1, 2) and b"Traceback" not in r.stderr, (query, r.stderr[-500:])
        if r.returncode == 2:
            assert r.stderr.startswith(b"memext: error: QUERY is not valid UTF-8"), (query, r.stderr)
        else:
            query.decode("utf-8")  # only UTF-8 is searched


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
