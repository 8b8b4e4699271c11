"""The memext command line."""

from __future__ import annotations

import errno
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from memext.engine import MemextError, WorkspaceMissing
from memext.engine.faces.cli.commands import MemextGroup, cli
from memext.engine.store.sqlite.lock import WriterLock


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
    assert hit["citation"] == "memory/2026-01-05.md:3-4" and data["mode"] == "keyword"

    r = run("get", "memory/2026-01-05.md:3", "--json")
    assert json.loads(r.output)["text"] == "- Fixed the cache invalidation bug in commit a828e60."

    r = run("status", "--json")
    st = json.loads(r.output)
    assert st[0]["files"] == {"memory": 3} and st[0]["provider"]["in_force"] == "none"


def test_search_max_lines_is_a_reading_budget(config):
    run("index")
    r = run("search", "green", "tea", "--max-lines", "5", "--json")
    hits = json.loads(r.output)["results"]
    assert [h["citation"] for h in hits] == ["MEMORY.md:4-8"]  # its text: the headings opening the chunk are not cited
    assert json.loads(run("search", "green", "tea", "--max-lines", "4", "--json").output)["results"] == []
    r = run("search", "tea", "--max-lines", "0")
    assert r.exit_code == 2 and "--max-lines" in r.output


def test_text_output(config):
    run("index")
    r = run("search", "green", "tea")
    assert "1. MEMORY.md:4-8" in r.output and "score" in r.output and "Bob prefers green tea" in r.output
    r = run("get", "MEMORY.md", "--from", "4", "--lines", "1", "-N")
    assert r.output.strip() == "4  - Anna is the tech lead of the billing team."
    r = run("status")
    assert "keyword-only" in r.output and "files      memory 3" in r.output


def test_search_since_and_before(config):
    run("index")
    cites = lambda *args: [h["citation"] for h in json.loads(run("search", "Anna", "--json", *args).output)["results"]]  # noqa: E731
    assert len(cites()) == 2  # MEMORY.md and memory/2026-01-06.md
    assert cites("--since", "2026-01-06", "--before", "2026-01-07") == ["memory/2026-01-06.md:3-4"]
    assert cites("--before", "2026-01-06") == []
    assert cites("--since", "1d") == ["MEMORY.md:4-8"]  # no date in its name: its mtime (just now) dates it
    r = run("search", "Anna", "--since", "2026-02-01", "--before", "2026-03-01")
    # Nothing found: said as grep says it, with exit status 1.
    assert r.exit_code == 1 and r.output.strip().endswith("no memory matches 'Anna' dated since 2026-02-01 and before 2026-03-01")
    r = run("search", "Anna", "--since", "last week")
    assert r.exit_code == 2 and r.output.startswith("memext: error: cannot read 'last week' as a date: use an ISO date (2026-03-01)")
    assert len(r.output.strip().splitlines()) == 1
    r = run("search", "Anna", "--since", "2026-03-01", "--before", "2026-02-01")
    assert r.exit_code == 2 and "the start (after, --since) must come before the end" in r.output


def test_failures_exit_2_with_one_line(config, tmp_path):
    r = run("get", "../secret.md")
    assert r.exit_code == 2 and r.output.startswith("memext: error: ../secret.md: '..'")
    r = run("search", "x", "-a", "nobody")
    assert r.exit_code == 2 and "no agent 'nobody'" in r.output
    config.write_text('[memory_search.chunking]\ntokens = "lots"\n')
    r = run("index")
    assert r.exit_code == 2 and "memory_search.chunking.tokens" in r.output and str(config) in r.output
    assert run("status").exit_code == 2  # a health check: every failure is 2


def test_agents_add_and_list(tmp_path, workspace, monkeypatch):
    cfg = tmp_path / "new" / "config.toml"
    monkeypatch.setenv("MEMEXT_CONFIG", str(cfg))
    r = run("agents", "add", "notes", str(workspace), "--extra-path", "docs")
    assert r.exit_code == 0, r.output
    r = run("agents", "--json")
    rows = json.loads(r.output)
    assert rows[0]["id"] == "notes" and rows[0]["workspace"] == str(workspace.resolve())
    assert run("agents", "add", "notes", str(workspace)).exit_code == 2


def test_console_script_exit_code(config):
    exe = shutil.which("memext", path=str(Path(sys.executable).parent))
    assert exe, "memext console script not installed"
    ok = subprocess.run([exe, "search", "Anna"], capture_output=True, text=True)
    assert ok.returncode == 0 and "memory/2026-01-06.md" in ok.stdout
    bad = subprocess.run([exe, "get", "/etc/passwd"], capture_output=True, text=True)
    assert bad.returncode == 2 and "memext: error:" in bad.stderr
    zero = subprocess.run([exe, "get", "MEMORY.md:0-2"], capture_output=True, text=True)
    assert zero.returncode == 2 and "line numbers start at 1" in zero.stderr and "Traceback" not in zero.stderr


def write_config(cfg: Path, agents: dict[str, tuple[Path, str | None]]) -> Path:
    """A config with agents id -> (workspace, store.path or None)."""
    lines = ["[memory_search]", 'provider = "none"']
    for agent_id, (ws, store) in agents.items():
        lines += ["[[agents]]", f'id = "{agent_id}"', f'workspace = "{ws}"']
        if store:
            lines += ["[agents.memory_search.store]", f'path = "{store}"']
    cfg.write_text("\n".join(lines) + "\n")
    return cfg


def test_search_syncs_a_stale_index_first(config, workspace):
    assert run("index").exit_code == 0
    assert json.loads(run("status", "--json", "-a", "w").output)[0]["dirty"] is False
    (workspace / "memory" / "2026-01-09.md").write_text("- lunch with the pelican society\n")
    assert json.loads(run("status", "--json", "-a", "w").output)[0]["dirty"] is True
    r = run("search", "pelican")
    assert r.exit_code == 0 and "memory/2026-01-09.md:1" in r.stdout and "syncing" not in r.stderr
    assert json.loads(run("status", "--json", "-a", "w").output)[0]["dirty"] is False
    (workspace / "memory" / "2026-01-10.md").write_text("- the walrus committee met\n")
    r = run("search", "walrus", "--no-sync")
    assert r.exit_code == 1 and r.stdout.strip() == "no memory matches 'walrus'"
    assert "2026-01-10.md" in run("search", "walrus", "--json").stdout


def test_search_honours_sync_on_search_false(config, workspace):
    config.write_text(config.read_text().replace('provider = "none"\n', 'provider = "none"\n[memory_search.sync]\non_search = false\n'))
    assert "memory/2026-01-06.md" in run("search", "Anna").stdout  # a first search still builds the index
    (workspace / "memory" / "2026-01-10.md").write_text("- the walrus committee met\n")
    assert run("search", "walrus").stdout.strip() == "no memory matches 'walrus'"
    run("index")
    assert "2026-01-10.md" in run("search", "walrus").stdout


def test_search_does_not_wait_for_another_processs_sync(config, workspace, tmp_path):
    run("index")
    (workspace / "memory" / "2026-01-09.md").write_text("- lunch with the pelican society\n")
    db = Path(json.loads(run("status", "--json", "-a", "w").output)[0]["db_path"])
    with WriterLock(db, timeout=1):  # e.g. the tray is syncing
        start = time.monotonic()
        r = run("search", "Anna")
        assert time.monotonic() - start < 10
    assert r.exit_code == 0 and "memory/2026-01-06.md" in r.stdout
    notes = [line for line in r.stderr.splitlines() if "another process is syncing this index" in line]
    assert len(notes) == 1 and notes[0].startswith("note: ")


def test_search_while_another_process_builds_the_first_index_says_so_once(config, workspace):
    db = Path(json.loads(run("status", "--json", "-a", "w").output)[0]["db_path"])
    with WriterLock(db, timeout=1):  # e.g. the tray is building it
        r = run("search", "Anna")
    assert r.exit_code == 1 and r.stdout.strip() == "no memory matches 'Anna'"
    notes = [line for line in r.stderr.splitlines() if line.startswith("note: ") and "keyword-only" not in line]
    assert len(notes) == 1 and notes[0].startswith("note: the index is being built (a sync is filling it)")


def test_an_index_path_on_memory_md_is_refused_and_memory_md_kept(tmp_path, workspace, monkeypatch):
    cfg = write_config(tmp_path / "config.toml", {"w": (workspace, str(workspace / "MEMORY.md"))})
    monkeypatch.setenv("MEMEXT_CONFIG", str(cfg))
    text = (workspace / "MEMORY.md").read_text()
    for args in (["status", "-a", "w"], ["status"], ["index"], ["search", "Anna"]):
        r = run(*args)
        assert r.exit_code == 2, args  # status: what is wrong, exit 2
        assert "memext: error:" in r.stderr and "store.path" in r.stderr and str(cfg) in r.stderr
        assert "Traceback" not in r.output
    assert (workspace / "MEMORY.md").read_text() == text
    assert sorted(p.name for p in workspace.iterdir()) == ["MEMORY.md", "memory"]


def test_an_uncreatable_index_folder_is_one_line(tmp_path, workspace, monkeypatch):
    (tmp_path / "afile").write_text("not a folder")
    cfg = write_config(tmp_path / "config.toml", {"w": (workspace, str(tmp_path / "afile" / "idx" / "w.sqlite"))})
    monkeypatch.setenv("MEMEXT_CONFIG", str(cfg))
    r = run("status")
    assert r.exit_code == 2 and r.stderr.startswith("memext: error: ")
    assert "afile/idx/w.sqlite" in r.stderr and len(r.stderr.strip().splitlines()) == 1


def test_status_json_is_a_list_of_agents_with_or_without_a(tmp_path, workspace, monkeypatch):
    (tmp_path / "afile").write_text("not a folder")
    cfg = write_config(tmp_path / "config.toml", {"w": (workspace, None), "broken": (workspace, str(tmp_path / "afile" / "b.sqlite"))})
    monkeypatch.setenv("MEMEXT_CONFIG", str(cfg))
    every = run("status", "--json")
    assert every.exit_code == 2  # an agent failed to open
    rows = json.loads(every.stdout)
    assert [r["agent"] for r in rows] == ["w", "broken"] and rows[0]["provider"]["in_force"] == "none"
    assert set(rows[1]) == {"agent", "error"} and "afile/b.sqlite" in rows[1]["error"]
    one = run("status", "--json", "-a", "w")
    assert one.exit_code == 0 and [set(r) for r in json.loads(one.stdout)] == [set(rows[0])]
    broken = run("status", "--json", "-a", "broken")
    assert broken.exit_code == 2 and json.loads(broken.stdout) == [rows[1]]
    assert broken.stderr.strip() == f"memext: error: broken: {rows[1]['error']}"


def _group_raising(exc: BaseException) -> click.Group:
    """A MemextGroup whose one command raises ``exc`` (the faults below
    cannot be caused on purpose from a real command)."""

    @click.group(cls=MemextGroup)
    def group() -> None:
        pass

    @group.group("sub")
    def sub() -> None:
        pass

    @sub.command("boom")
    def boom() -> None:
        raise exc

    return group


@pytest.mark.parametrize(
    "exc, status, line",
    [
        (PermissionError(13, "Permission denied", "/some/file"), 2, "memext: error: /some/file: Permission denied\n"),
        (KeyboardInterrupt(), 130, "memext: interrupted\n"),
        (MemextError("the config says no"), 2, "memext: error: the config says no\n"),
        (WorkspaceMissing("workspace /w of agent a does not exist"), 2, "memext: error: workspace /w of agent a does not exist\n"),
    ],
)
def test_errors_of_nested_commands_become_one_line(exc, status, line):
    r = CliRunner().invoke(_group_raising(exc), ["sub", "boom"], catch_exceptions=False)
    assert r.exit_code == status and r.stderr == line


def test_status_fails_with_exit_2_whatever_is_wrong(tmp_path, workspace, monkeypatch):
    """A health check reads the exit status: 2 and one line on stderr for a
    config that cannot be read and for an agent that is not there, as for
    an index that is broken (0 only when nothing is wrong)."""
    cfg = tmp_path / "config.toml"
    cfg.write_text("[memory_search\nbroken", encoding="utf-8")
    monkeypatch.setenv("MEMEXT_CONFIG", str(cfg))
    for args in (["status"], ["status", "--json"]):
        r = run(*args)
        assert r.exit_code == 2 and r.stderr.startswith("memext: error: ") and str(cfg) in r.stderr, r.output
        assert len(r.stderr.strip().splitlines()) == 1 and r.stdout == ""
    write_config(cfg, {"w": (workspace, None)})
    r = run("status", "-a", "nobody")
    assert r.exit_code == 2 and "nobody" in r.stderr and r.stdout == ""
    assert run("status", "-a", "w").exit_code == 0


def test_other_exceptions_are_not_hidden():
    with pytest.raises(ZeroDivisionError):
        CliRunner().invoke(_group_raising(ZeroDivisionError()), ["sub", "boom"], catch_exceptions=False)


def test_a_closed_pipe_exits_quietly():
    # `memext search x | head -c 10`: on this test machine a write to a pipe
    # whose reader closed does not fail, so the error is raised directly.
    # Status 0, as ripgrep's: what was found was printed until the reader left.
    exc = BrokenPipeError(errno.EPIPE, "Broken pipe")
    r = CliRunner().invoke(_group_raising(exc), ["sub", "boom"], catch_exceptions=False)
    assert r.exit_code == 0 and r.stderr == ""


def test_a_missing_workspace_fails_the_index_command(tmp_path, workspace, monkeypatch):
    cfg = write_config(tmp_path / "config.toml", {"gone": (tmp_path / "nope", None), "w": (workspace, None)})
    monkeypatch.setenv("MEMEXT_CONFIG", str(cfg))
    r = run("index", "-a", "gone")
    assert r.exit_code == 2 and f"workspace {tmp_path / 'nope'} of agent gone does not exist" in r.stderr
    assert "indexed" not in r.stdout
    r = run("index", "--all")  # the other agents are still indexed
    assert r.exit_code == 2 and "w: indexed 3 of 3 files" in r.stdout and "gone: workspace" in r.stderr
    st = json.loads(run("status", "--json", "-a", "gone").stdout)
    assert len(st) == 1 and "does not exist" in st[0]["last_error"]


def test_get_past_the_end_says_nothing_about_truncation(config, workspace):
    (workspace / "memory" / "x.md").write_text("".join(f"line {i}\n" for i in range(1, 11)))
    r = run("get", "memory/x.md", "--from", "3", "--lines", "100")
    assert r.exit_code == 0 and r.stderr == "" and r.stdout.splitlines()[-1] == "line 10"
    data = json.loads(run("get", "memory/x.md", "--from", "3", "--lines", "100", "--json").output)
    assert (data["to_line"], data["truncated"]) == (10, False)


# -- note --------------------------------------------------------------------------


def test_note_appends_and_indexes(config, workspace):
    from datetime import datetime

    today = f"memory/{datetime.now():%Y-%m-%d}.md"
    r = run("note", "Anna moved the standup to 9:30.", "--json")
    assert r.exit_code == 0, r.output
    data = json.loads(r.output)
    assert (data["path"], data["start_line"], data["end_line"], data["created"], data["indexed"]) == (today, 3, 4, True, True)
    assert json.loads(run("search", "standup", "--json", "--no-sync").output)["results"][0]["path"] == today  # indexed on return

    r = CliRunner().invoke(cli, ["note", "--long-term", "--heading", "People"], input="- Carol is the new designer.\n")
    assert r.exit_code == 0 and r.output.startswith("noted in MEMORY.md:6")
    # Under the heading the file has, not a second "## People".
    assert (workspace / "MEMORY.md").read_text(encoding="utf-8").split("\n")[2:7] == [
        "## People",
        "- Anna is the tech lead of the billing team.",
        "- Bob prefers green tea.",
        f"- Carol is the new designer. <!-- memext origin=person via=cli date={datetime.now():%Y-%m-%d} -->",
        "",
    ]
    r = CliRunner().invoke(cli, ["note", "-", "--file", "memory/projects/x.md"], input="From stdin.")
    assert r.exit_code == 0 and "noted in memory/projects/x.md:2 (new file)" in r.output  # the text's line, not its heading's


@pytest.mark.parametrize(
    "args, message",
    [
        (["note", "x", "--file", "../out.md"], "may not leave"),
        (["note", "x", "--file", "memory/a.txt"], "only Markdown"),
        (["note", "x", "--file", "memory/a.md", "--long-term"], "either --file or --long-term"),
        (["note", "   "], "the note is empty"),
        (["note", "x", "-a", "nobody"], "no agent 'nobody'"),
    ],
)
def test_note_refusals_are_one_line(config, workspace, args, message):
    before = sorted((p, p.stat().st_size) for p in workspace.parent.rglob("*") if "index" not in p.parts)
    r = CliRunner().invoke(cli, args)
    assert r.exit_code == 2 and message in r.output and len(r.output.strip().splitlines()) == 1
    assert sorted((p, p.stat().st_size) for p in workspace.parent.rglob("*") if "index" not in p.parts) == before


# -- get: clear refusals --------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("MEMORY.md:abc", "'abc' is not a line range; use MEMORY.md:LINE, MEMORY.md:FROM-TO or MEMORY.md:FROM- (to the end)"),
        ("MEMORY.md:3-x", "'3-x' is not a line range"),
        ("MEMORY.md:5-4", "the range ends before it starts"),
        ("MEMORY.md:0", "line numbers start at 1"),
        ("notes.txt", "only Markdown (.md) memory files can be read"),
    ],
)
def test_get_refusals_exit_2_with_a_clear_line(config, spec, message):
    for extra in ([], ["--json"]):
        r = run("get", spec, *extra)
        assert r.exit_code == 2 and r.stderr.startswith(f"memext: error: {spec}: {message}") and r.stdout == "", (spec, extra, r.output)
        assert len(r.stderr.splitlines()) == 1


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("MEMORY.md:100-120", "MEMORY.md has 8 line(s); line 100 is past the end"),
        ("memory/2099-01-01.md", "memory/2099-01-01.md does not exist"),
    ],
)
def test_get_of_nothing_there_exits_1_as_nothing_found(config, spec, message):
    r = run("get", spec)
    assert r.exit_code == 1 and r.stderr == f"memext: {message}\n" and r.stdout == ""
    r = run("get", spec, "--json")  # the read, as a search --json prints its empty answer
    assert r.exit_code == 1 and r.stderr == f"memext: {message}\n" and json.loads(r.stdout)["text"] == ""


def test_n_is_a_count_only_and_get_numbers_lines_with_capital_n(config):
    assert run("get", "MEMORY.md:4", "-n").exit_code == 2  # no such option any more
    assert run("get", "MEMORY.md:4", "--line-numbers").stdout.strip() == "4  - Anna is the tech lead of the billing team."
    assert len(json.loads(run("search", "Anna", "-n", "1", "--json").stdout)["results"]) == 1


def test_a_keyword_only_search_imports_only_what_it_runs(config):
    """A one-shot search of a keyword-only index loads no vector code
    (numpy, sqlite-vec's package), no lock library (it writes nothing) and
    none of the long-lived halves of the API (DESIGN.md §12)."""
    run("index")
    unwanted = (
        "numpy",
        "filelock",
        "sqlite_vec",
        "memext.engine.freshness.keeper",
        "memext.engine.agents.tools",
        "memext.session",
        "IPython",
    )
    code = (
        "import runpy, sys\n"
        "sys.argv = ['memext', 'search', 'green', 'tea']\n"
        "try:\n    runpy.run_module('memext', run_name='__main__')\nexcept SystemExit:\n    pass\n"
        f"print('loaded:', sorted(m for m in {unwanted!r} if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert "Bob prefers green tea" in out.stdout, out.stderr
    assert out.stdout.strip().splitlines()[-1] == "loaded: []"


# -- which agent answers ---------------------------------------------------------------


@pytest.fixture
def two_agents(tmp_path, workspace, monkeypatch) -> Path:
    """Agents "other" (first in the config) and "w" (the ``workspace``)."""
    other = tmp_path / "other"
    (other / "memory").mkdir(parents=True)
    (other / "MEMORY.md").write_text("# Memory\n\n- Anna runs the Berlin office of the other team.\n")
    cfg = write_config(tmp_path / "config.toml", {"other": (other, None), "w": (workspace, None)})
    monkeypatch.setenv("MEMEXT_CONFIG", str(cfg))
    return other


def test_the_current_folder_picks_the_agent_whose_workspace_holds_it(two_agents, workspace, monkeypatch):
    monkeypatch.chdir(workspace / "memory")
    r = run("search", "Anna")
    assert r.exit_code == 0 and r.stdout.startswith("1. ") and "billing" in r.stdout and "Berlin" not in r.stdout
    data = json.loads(run("search", "Anna", "--json").stdout)
    assert data["agent"] == "w" and {h["path"] for h in data["results"]} == {"MEMORY.md", "memory/2026-01-06.md"}
    assert run("get", "MEMORY.md:4").stdout.strip() == "- Anna is the tech lead of the billing team."
    assert json.loads(run("note", "Carol joined.", "--json").stdout)["agent"] == "w"
    monkeypatch.chdir(two_agents)
    assert json.loads(run("search", "Anna", "--json").stdout)["agent"] == "other"
    assert json.loads(run("search", "Anna", "--json", "-a", "w").stdout)["agent"] == "w"  # -a wins over the folder


def test_outside_every_workspace_the_first_agent_answers_and_is_named(two_agents, workspace, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    r = run("search", "Anna")
    lines = r.stdout.splitlines()
    assert r.exit_code == 0 and lines[0] == "agent other (first of 2 configured; -a ID or cd into a workspace to choose)"
    assert lines[1].startswith("1. MEMORY.md:3") and "Berlin" in r.stdout
    data = json.loads(run("search", "Anna", "--json").stdout)  # JSON names it in a field, not a header
    assert data["agent"] == "other" and data["results"][0]["snippet"].endswith("Berlin office of the other team.")
    r = run("get", "MEMORY.md:3")
    assert r.stdout == "- Anna runs the Berlin office of the other team.\n"  # the file's text only: the name goes to stderr
    assert r.stderr.startswith("agent other (first of 2")
    assert (
        run("note", "Dan joined.").stdout.startswith("noted in memory/")
        and "(agent other, new file)" in run("note", "Eve joined.", "--file", "memory/e.md").stdout
    )
    assert not run("search", "Anna", "-a", "w").stdout.startswith("agent ")  # chosen by -a: no header
    index = run("index")
    assert index.exit_code == 0 and index.stdout.startswith("other: indexed")


def test_one_configured_agent_is_not_named(config, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert run("search", "Anna").stdout.startswith("1. ")


def test_nested_workspaces_pick_the_innermost(tmp_path):
    from memext.engine.config import AgentConfig, Config

    outer, inner = tmp_path / "notes", tmp_path / "notes" / "work"
    inner.mkdir(parents=True)
    cfg = Config(path=tmp_path / "c.toml", agents=[AgentConfig("inner", inner), AgentConfig("outer", outer)])
    assert cfg.agent_at(inner / "sub").id == "inner" and cfg.agent_at(outer).id == "outer"
    assert cfg.agent_at(tmp_path) is None and cfg.agent_at(tmp_path / "notesx") is None


# -- -a and --json before the command ----------------------------------------------------


def test_a_and_json_before_the_command_as_after_it(two_agents, workspace, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    before = run("-a", "w", "--json", "search", "Anna")
    assert before.exit_code == 0 and json.loads(before.stdout)["agent"] == "w"
    assert json.loads(before.stdout)["results"] == json.loads(run("search", "Anna", "-a", "w", "--json").stdout)["results"]
    assert json.loads(run("-a", "w", "search", "Anna", "-a", "other", "--json").stdout)["agent"] == "other"  # the command's own wins
    assert [row["id"] for row in json.loads(run("--json", "agents").stdout)] == ["other", "w"]  # a group's command too
    assert json.loads(run("--json", "config").stdout)["config_exists"] is True
    r = run("--json", "mcp")
    assert r.exit_code == 2 and "--json does not apply to `memext mcp`" in r.output
    assert run("-a", "nobody", "search", "Anna").exit_code == 2
