"""Arguments and stdin that are not UTF-8, refused by the command group
before any command reads them (engine/faces/cli/group.py), through the real
program with bytes in argv."""

from __future__ import annotations

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
