"""Exit statuses of the ``memext`` commands, grep's and ripgrep's, so a
script can tell "no memory" from "broken": 0 answered, 1 nothing found,
2 an error (usage, configuration, I/O, provider), said in one line on
stderr. Each command is tried in each outcome it can have. Arguments and
stdin that are not UTF-8 are refused by the command group before any
command reads them, through the real program with bytes in argv; a
workspace out of reach is exit status 2 naming the folder in every
command, never the 1 of "no memory matches" (DESIGN.md §1)."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from servers import OPENAI_KEY

from memext.engine import app_paths
from memext.engine.faces.cli.commands import cli

OK, NOTHING, ERROR = 0, 1, 2


@pytest.fixture
def config(tmp_path, workspace, monkeypatch) -> Path:
    cfg = tmp_path / "config.toml"
    cfg.write_text(f'[memory_search]\nprovider = "none"\n[[agents]]\nid = "w"\nworkspace = "{workspace}"\n')
    monkeypatch.setenv("MEMEXT_CONFIG", str(cfg))
    return cfg


def run(*args: str):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def one_error_line(r) -> str:
    """The one line a failure prints on stderr (no traceback, nothing else)."""
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("memext: error: "), r.stderr
    return lines[0]


@pytest.mark.parametrize(
    "args, status",
    [
        (["search", "Anna"], OK),
        (["search", "Anna", "--json"], OK),
        (["search", "zebra"], NOTHING),
        (["search", "zebra", "--json"], NOTHING),
        (["get", "MEMORY.md:4"], OK),
        (["get", "MEMORY.md:40"], NOTHING),  # past the end of the file
        (["get", "memory/2099-01-01.md"], NOTHING),  # no note that day
        (["get", "memory/2099-01-01.md", "--json"], NOTHING),
        (["index"], OK),
        (["status"], OK),
        (["recall", "what tea does Bob like?"], OK),
        (["recall", "the zebra's vaccination"], NOTHING),
    ],
)
def test_answered_and_nothing_found(config, args, status):
    r = run(*args)
    assert r.exit_code == status, r.output
    assert "error" not in r.stderr


@pytest.mark.parametrize(
    "args",
    [
        ["search", "x", "-n", "0"],  # click's usage errors
        ["search"],
        ["get"],
        ["index", "--bogus"],
        ["status", "extra"],
        ["search", "?!"],  # a query without words
        ["search", "x", "--since", "last week"],
        ["get", "MEMORY.md:abc"],
        ["get", "MEMORY.md:0"],
        ["get", "notes.txt"],
        ["get", "../secret.md"],
    ],
)
def test_usage_errors_exit_2(config, args):
    r = run(*args)
    assert r.exit_code == ERROR and "Traceback" not in r.output, r.output
    assert r.stdout == ""


@pytest.mark.parametrize("command", [["search", "Anna"], ["get", "MEMORY.md:4"], ["index"], ["status"]])
def test_configuration_errors_exit_2(config, command):
    r = run(*command, "-a", "nobody")
    assert r.exit_code == ERROR and "no agent 'nobody'" in one_error_line(r)
    config.write_text('[memory_search.chunking]\ntokens = "lots"\n')
    r = run(*command)
    assert r.exit_code == ERROR and "memory_search.chunking.tokens" in one_error_line(r)


@pytest.mark.parametrize("command", [["search", "Anna"], ["index"], ["status"]])
def test_an_index_that_cannot_be_made_exits_2(tmp_path, workspace, monkeypatch, command):
    (tmp_path / "afile").write_text("not a folder")
    cfg = tmp_path / "io.toml"
    cfg.write_text(
        f'[memory_search]\nprovider = "none"\n[memory_search.store]\npath = "{tmp_path / "afile" / "w.sqlite"}"\n'
        f'[[agents]]\nid = "w"\nworkspace = "{workspace}"\n'
    )
    monkeypatch.setenv("MEMEXT_CONFIG", str(cfg))
    r = run(*command)
    assert r.exit_code == ERROR and "afile/w.sqlite" in r.stderr and "Traceback" not in r.output


def test_a_memory_file_that_cannot_be_read_exits_2(config, workspace):
    (workspace / "memory" / "folder.md").mkdir()  # a name get may read, but no file
    r = run("get", "memory/folder.md")
    assert r.exit_code == ERROR and "memory/folder.md" in one_error_line(r)


def test_an_agent_in_error_fails_status_with_2(config, workspace, tmp_path):
    assert run("index").exit_code == OK
    workspace.rename(tmp_path / "moved")
    r = run("status")
    assert r.exit_code == ERROR and "does not exist" in r.stdout


def test_a_provider_that_fails_fails_index_with_2_and_search_answers(tmp_path, workspace, monkeypatch, api_server):
    """An embedding provider that stops answering: indexing the new file by
    keyword only is not what the config asked for (2); a search still
    answers, by keyword, and says why (0)."""
    cfg = tmp_path / "remote.toml"
    cfg.write_text(f'[memory_search]\nprovider = "openai"\n[[agents]]\nid = "w"\nworkspace = "{workspace}"\n')
    monkeypatch.setenv("MEMEXT_CONFIG", str(cfg))
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)
    monkeypatch.setenv("OPENAI_BASE_URL", api_server.openai_base_url)
    assert run("index").exit_code == OK
    api_server.add_fault("openai.embeddings", 401, "Incorrect API key provided", times=None)
    (workspace / "memory" / "2026-01-09.md").write_text("- lunch with the pelican society\n")
    r = run("index")
    assert r.exit_code == ERROR and "embedding failed" in one_error_line(r)
    r = run("search", "pelican", "--no-sync")
    assert r.exit_code == OK and "memory/2026-01-09.md" in r.stdout


def test_an_empty_folder_without_a_config_is_refused_by_index_and_search_alike(tmp_path, monkeypatch):
    """No config (or an empty one) in a folder with no memory files: index
    and search agree, one line that says where memory is looked for, and
    no index file is left behind for `memext agents prune` to find."""
    empty = tmp_path / "empty"
    empty.mkdir()
    monkeypatch.chdir(empty)
    for config in (None, empty / "config.toml"):
        if config is None:
            monkeypatch.delenv("MEMEXT_CONFIG", raising=False)
        else:
            config.write_text("")
            monkeypatch.setenv("MEMEXT_CONFIG", str(config))
        lines = set()
        for command in (["index"], ["search", "anything"], ["recall", "anything"]):
            r = run(*command)
            assert r.exit_code == ERROR, (config, command, r.output)
            lines.add(one_error_line(r))
        assert len(lines) == 1 and f"no memory files found in {empty}" in lines.pop()
    assert not list(app_paths().index_dir.glob("empty-*.sqlite"))
    (empty / "MEMORY.md").write_text("- Biscuit eats 55 g a day.\n")
    assert run("index").exit_code == OK and run("search", "Biscuit").exit_code == OK


def test_the_console_script_exits_with_the_same_statuses(config):
    """Through a real process, as a shell script sees it."""

    def status(*args: str) -> int:
        env = dict(os.environ)
        return subprocess.run([sys.executable, "-m", "memext", *args], env=env, capture_output=True, timeout=120).returncode

    assert [status("search", "Anna"), status("search", "zebra"), status("search", "x", "-n", "0"), status("get", "nope.txt")] == [
        OK,
        NOTHING,
        ERROR,
        ERROR,
    ]


def test_every_help_says_the_exit_statuses():
    from memext.cli import cli as program

    def helps(group, prefix):
        ctx = __import__("click").Context(group)
        for name in group.list_commands(ctx):
            command = group.get_command(ctx, name)
            yield [*prefix, name]
            if hasattr(command, "list_commands"):
                yield from helps(command, [*prefix, name])

    missing = []
    for path in [[], *helps(program, [])]:
        text = " ".join(CliRunner().invoke(program, [*path, "--help"], terminal_width=80).output.split())
        if "Exit status: 0 " not in text or ", 2 an " not in text:
            missing.append(" ".join(["memext", *path]))
    assert missing == []


def test_a_nothing_found_json_answer_is_still_json(config):
    r = run("search", "zebra", "--json")
    assert r.exit_code == NOTHING and json.loads(r.stdout)["results"] == []


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
