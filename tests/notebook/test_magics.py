"""The magics through a real IPython InteractiveShell: outputs, return
values, %config, bad flags, notes, load/unload/reload."""

from __future__ import annotations

import json
import logging
import re
from datetime import datetime
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import HashingProvider
from IPython.core.error import UsageError
from memext_helpers import display_html, ipython_shell, write_config

import memext
from memext import SearchResults, Session, StatusTable, SyncSummary
from memext.engine import MemextError, MemoryIndex
from memext.engine.faces.cli.commands import cli as cli_group
from memext.magics import MemExt
from memext.views import FileLines
from memext.widget import SearchWidget


@pytest.fixture
def config(tmp_path, example_workspace, workspace, monkeypatch) -> Path:
    """Two agents: ``example`` (the bundled memory) and ``small``."""
    path = write_config(tmp_path / "memext", {"example": example_workspace, "small": workspace})
    monkeypatch.setenv("MEMEXT_CONFIG", str(path))
    return path


@pytest.fixture
def ip(config):
    with ipython_shell() as shell:
        shell.run_line_magic("load_ext", "memext")
        yield shell


def magics(shell) -> MemExt:
    return shell.magics_manager.registry["MemExt"]


# -- loading ----------------------------------------------------------------------


def test_load_ext_registers_magics_and_warms_the_default_agent(ip):
    for name in ("memsearch", "memget", "memstatus", "memindex"):
        assert name in ip.magics_manager.magics["line"]
    assert "memnote" in ip.magics_manager.magics["cell"]
    session = magics(ip).session
    assert session.keeper("example").wait_fresh(30)
    # Indexed by the warm-up alone: no search or %memindex ran.
    status = session.index("example").status()
    assert status.last_sync is not None and status.total_files == 15


def test_load_does_not_block_and_unload_cancels_the_sync(tmp_path, monkeypatch):
    ws = tmp_path / "big"
    (ws / "memory").mkdir(parents=True)
    for i in range(4000):
        (ws / "memory" / f"n{i:04d}.md").write_text(f"# Note {i}\n\nBiscuit ate {i} grams of food today.\n")
    monkeypatch.setenv("MEMEXT_CONFIG", str(write_config(tmp_path / "cfg", {"big": ws})))
    with ipython_shell() as shell:
        shell.run_line_magic("load_ext", "memext")
        m = magics(shell)
        warm = m.session.keeper("big")
        assert warm.busy()  # the cell returned while indexing goes on
        shell.run_line_magic("unload_ext", "memext")
        assert not warm.running
        assert m.session.closed
        assert "memsearch" not in shell.magics_manager.magics["line"]
        assert m not in shell.configurables
    agent = Session().resolve_agent("big")
    with MemoryIndex(agent) as idx:  # cancelled part-way; the index is still sound
        assert idx.status().total_files < 4000
        report = idx.sync()
        assert report.files_seen == 4000 and idx.status().total_files == 4000


def test_reload_ext_closes_the_old_session_and_works_again(ip):
    old = magics(ip)
    ip.run_line_magic("reload_ext", "memext")
    new = magics(ip)
    assert new is not old and old.session.closed and not new.session.closed
    assert ip.run_line_magic("memsearch", "vet Biscuit")[0].path == "memory/2026-10-05.md"


def test_load_with_a_broken_config_explains_and_keeps_the_magics(tmp_path, monkeypatch, capsys):
    bad = tmp_path / "bad.toml"
    bad.write_text('[memory_search]\nprovder = "none"\n', encoding="utf-8")
    monkeypatch.setenv("MEMEXT_CONFIG", str(bad))
    with ipython_shell() as shell:
        shell.run_line_magic("load_ext", "memext")
        err = capsys.readouterr().err
        assert "memext:" in err and "memory_search.provder: unknown key" in err and str(bad) in err
        assert "Traceback" not in err
        with pytest.raises(UsageError, match=r"memory_search\.provder: unknown key"):
            shell.run_line_magic("memsearch", "anything")
        # Fixing the file is enough: the config is re-read when it changes.
        write_config(tmp_path, {"fixed": tmp_path}).rename(bad)
        assert shell.run_line_magic("memstatus", "")[0].agent == "fixed"


# -- %memsearch -------------------------------------------------------------------------


def test_memsearch_returns_a_result_list_shown_as_html(ip):
    r = ip.run_line_magic("memsearch", "vet Biscuit")
    assert isinstance(r, SearchResults)
    assert r[0].citation == "memory/2026-10-05.md:4-10"
    assert all(hit.score <= r[0].score for hit in r)
    assert r.mode == "keyword" and r.agent == "example"
    html = display_html(ip, r)
    assert re.search(r'<code class="memext-citation"[^>]*>memory/2026-10-05.md:4-10</code>', html)
    assert 'data-cite="memory/2026-10-05.md:4-10"' in html  # the copy button
    # The lines around the best-matching line (9), numbered, the best one marked.
    best = re.search(r'<div class="memext-line memext-best".*?</div>', html)
    assert (
        best
        and '›9</span><span class="memext-text" style="white-space:pre-wrap;overflow-wrap:anywhere">- Booked the <mark' in best.group(0)
    )
    assert re.search(r'<mark class="memext-hit"[^>]*>vet</mark> for <mark class="memext-hit"[^>]*>Biscuit</mark>', best.group(0))
    assert 'class="memext-score-bar"' in html and "width:100.0%" in html
    assert "keyword-only search" in html  # the notice is visible
    text = repr(r)
    assert "memory/2026-10-05.md:4-10" in text and "[keyword-only]" in text and "note: provider" in text
    assert " >  9  - Booked the vet for Biscuit: Thursday 9 October, 17:30, annual vaccines." in text.splitlines()


def test_memsearch_max_lines_is_a_reading_budget(ip):
    r = ip.run_line_magic("memsearch", "--max-lines 7 vet Biscuit")
    assert r[0].citation == "memory/2026-10-05.md:4-10"
    assert sum(hit.end_line - hit.start_line + 1 for hit in r) <= 7
    # The 7-line best hit (its headings are not cited) does not fit 6 lines: it is left out, smaller hits still come.
    small = ip.run_line_magic("memsearch", "--max-lines 6 vet Biscuit")
    assert small and sum(hit.end_line - hit.start_line + 1 for hit in small) <= 6
    assert "memory/2026-10-05.md:4-10" not in {hit.citation for hit in small}


def test_memsearch_since_and_before(ip):
    def paths(line):
        return {hit.path for hit in ip.run_line_magic("memsearch", line)}

    assert paths("--since 2026-10-06 --before 2026-10-20 Biscuit") == {"memory/2026-10-09.md"}
    assert paths("Biscuit --before 2026-10-06") == {"memory/2026-10-05.md"}  # options may follow the query
    assert "memory/2026-10-05.md" not in paths("--since 2026-11-01 Biscuit")
    with pytest.raises(UsageError, match="cannot read 'someday' as a date") as info:
        ip.run_line_magic("memsearch", "--since someday Biscuit")
    assert "\n" not in str(info.value)
    w = ip.run_line_magic("memsearch", "--widget --since 2026-10-06 Biscuit")
    try:
        assert w.since == "2026-10-06" and "memory/2026-10-05.md" not in {row.hit.path for row in w.results_box.children}
    finally:
        w.close()
    with pytest.raises(UsageError, match="--widget cannot show --before"):
        ip.run_line_magic("memsearch", "--widget --before 2026-10-06 Biscuit")


def test_bare_call_displays_and_trailing_semicolon_hides(ip, capsys):
    ip.run_cell("%memsearch vet Biscuit", store_history=True)
    assert "memory/2026-10-05.md:4-10" in capsys.readouterr().out
    ip.run_cell("%memsearch vet Biscuit;", store_history=True)
    assert capsys.readouterr().out == ""  # not even an empty Out[n]:
    ip.run_cell("r = %memsearch vet Biscuit;", store_history=True)
    assert capsys.readouterr().out == ""
    assert isinstance(ip.user_ns["r"], SearchResults)
    assert ip.user_ns["r"].query == "vet Biscuit"  # the ';' is not part of the query
    ip.run_cell("r", store_history=True)  # quiet only in its own cell
    assert "memory/2026-10-05.md:4-10" in capsys.readouterr().out
    data, _ = ip.display_formatter.format(ip.user_ns["r"])
    assert "text/html" in data


@pytest.mark.parametrize("cell", ["%memstatus;", "%memindex;", "%memget MEMORY.md:1-2;", "x = 1\n%memstatus ;"])
def test_every_magic_takes_a_trailing_semicolon(ip, capsys, cell):
    result = ip.run_cell(cell, store_history=True)
    assert result.success, result.error_in_exec
    assert capsys.readouterr().out == ""


def test_semicolon_transformers_leave_with_the_extension(ip):
    ip.run_line_magic("unload_ext", "memext")
    assert "run_line_magic('memstatus;'" in ip.transform_cell("%memstatus;")
    ip.run_line_magic("load_ext", "memext")
    assert ip.transform_cell("%memstatus;").strip() == "get_ipython().run_line_magic('memstatus', ';');"


def test_query_is_not_variable_expanded(ip):
    ip.user_ns["tea"] = "EXPANDED"
    ip.run_cell("r = %memsearch green $tea {tea}")
    assert ip.user_ns["r"].query == "green $tea {tea}"


def test_options_max_results_agent_and_quoting(ip):
    assert len(ip.run_line_magic("memsearch", "-n 1 Biscuit")) == 1
    assert len(ip.run_line_magic("memsearch", "Biscuit --max-results 2")) == 2  # flags after the query too
    r = ip.run_line_magic("memsearch", "-a small Anna")
    assert r.agent == "small" and r[0].path == "MEMORY.md"
    r = ip.run_line_magic("memsearch", "Dana's cat")  # a lone apostrophe is text
    assert r.query == "Dana's cat"
    assert ip.run_line_magic("memsearch", '"green tea"').query == "green tea"
    assert ip.run_line_magic("memsearch", "-n 2 -- -n --explain").query == "-n --explain"  # after --: text
    with pytest.raises(UsageError, match="after '--'"):
        ip.run_line_magic("memget", "MEMORY.md -- extra")


def test_min_score_filters(ip):
    loose = ip.run_line_magic("memsearch", "--min-score 0 Biscuit vet passport")
    strict = ip.run_line_magic("memsearch", "--min-score 0.9 Biscuit vet passport")
    assert len(strict) < len(loose)
    assert all(h.score >= 0.9 for h in strict)


def test_json_and_explain(ip):
    r = ip.run_line_magic("memsearch", "--json --explain -n 2 staging database")
    data, _ = ip.display_formatter.format(r)
    assert "application/json" in data and "text/html" not in data
    parsed = json.loads(repr(r))
    assert parsed == json.loads(r.to_json())
    assert parsed["agent"] == "example" and parsed["mode"] == "keyword"
    # The chunk of the memext and "Accounts and infrastructure" sections, under the first heading.
    assert parsed["results"][0]["citation"] == "MEMORY.md:21-33"
    assert "explain" in parsed["results"][0]


def test_to_dataframe(ip):
    df = ip.run_line_magic("memsearch", "Biscuit").to_dataframe()
    assert list(df.columns) == ["citation", "path", "start_line", "end_line", "score", "source", "snippet"]
    assert df.iloc[0]["citation"].startswith("memory/") or df.iloc[0]["citation"].startswith("MEMORY.md")
    assert df["score"].is_monotonic_decreasing


@pytest.mark.parametrize(
    "line, message",
    [
        ("-n zero Biscuit", "expected a whole number"),
        ("-n 0 Biscuit", "must be at least 1"),
        ("--min-score 2 Biscuit", "between 0 and 1"),
        ("--source nope Biscuit", "invalid choice"),
        ("--bogus Biscuit", "unrecognized arguments: --bogus"),
        ("", "needs a query"),
        ("--source sessions Biscuit", "source 'sessions' is not indexed"),
        ("-a nope Biscuit", "no agent 'nope'"),
    ],
)
def test_bad_input_is_a_one_line_usage_error(ip, line, message):
    with pytest.raises(UsageError, match=message) as info:
        ip.run_line_magic("memsearch", line)
    assert "\n" not in str(info.value)


def test_unknown_agent_names_the_known_ones(ip):
    with pytest.raises(UsageError) as info:
        ip.run_line_magic("memsearch", "-a nope Biscuit")
    assert "known: example, small" in str(info.value)


def test_usage_error_shows_no_traceback(ip, capsys):
    ip.run_cell("%memsearch -a nope Biscuit")
    err = capsys.readouterr().err
    assert "UsageError: memext: no agent 'nope'" in err and "Traceback" not in err


def test_help_lists_the_options(ip):
    # What %memsearch? shows: the docstring plus the generated usage.
    doc = ip.magics_manager.magics["line"]["memsearch"].__doc__
    assert "--max-results" in doc and "--min-score" in doc and "no $variable expansion" in doc


def test_provider_outage_degrades_to_keyword_with_a_notice(tmp_path, example_workspace, monkeypatch):
    """The HashingProvider (a test double) fails its query embeddings here:
    an outage at query time that no real provider can be made to have on cue."""
    monkeypatch.setenv("MEMEXT_CONFIG", str(write_config(tmp_path, {"example": example_workspace}, provider="auto")))
    provider = HashingProvider()
    session = Session(index_factory=lambda agent: MemoryIndex(agent, provider=provider))
    with ipython_shell() as shell:
        m = MemExt(shell=shell, session=session)
        shell.register_magics(m)
        try:
            shell.run_line_magic("memindex", "")
            healthy = shell.run_line_magic("memsearch", "vet Biscuit")
            assert healthy.mode == "hybrid" and healthy.notices() == []
            provider.fail_queries = True
            r = shell.run_line_magic("memsearch", "vet Biscuit")
            assert r.mode == "keyword" and r[0].path == "memory/2026-10-05.md"
            assert any("embedding the query failed" in n for n in r.notices())
            html = display_html(shell, r)
            assert "test provider is down" in html and 'class="memext-error"' in html
        finally:
            m.close()


# -- %memget ---------------------------------------------------------------------------------


def test_memget_range_returns_the_text_with_line_numbers(ip, example_workspace):
    text = ip.run_line_magic("memget", "memory/2026-10-05.md:8-10")
    lines = (example_workspace / "memory" / "2026-10-05.md").read_text().splitlines()
    assert isinstance(text, str) and isinstance(text, FileLines)
    assert text == "\n".join(lines[7:10])
    assert (text.from_line, text.to_line, text.total_lines) == (8, 10, 10)
    shown = text.to_text()
    assert " 9  - Booked the vet for Biscuit" in shown and shown.startswith("memory/2026-10-05.md:8-10")
    html = display_html(ip, text)
    assert 'class="memext-lines"' in html and "Booked the vet" in html


def test_memget_forms(ip):
    assert ip.run_line_magic("memget", "MEMORY.md --from 2 --lines 3").from_line == 2
    assert len(ip.run_line_magic("memget", "MEMORY.md --from 2 --lines 3").splitlines()) == 3
    one = ip.run_line_magic("memget", "memory/2026-10-05.md:8")  # a line, as a citation means it
    assert (one.from_line, one.to_line) == (8, 8) and one.to_text().startswith("memory/2026-10-05.md:8 (of 10 lines)\n")
    to_end = ip.run_line_magic("memget", "memory/2026-10-05.md:8-")
    assert (to_end.from_line, to_end.to_line) == (8, 10) and to_end.splitlines()[-1].startswith("- Dana wants")
    whole = ip.run_line_magic("memget", "MEMORY.md")
    assert whole.from_line == 1 and whole.to_line == whole.total_lines
    assert ip.run_line_magic("memget", "-a small MEMORY.md:1").startswith("# Memory")


@pytest.mark.parametrize(
    "spec, message",
    [
        ("memory/nope.md", "memory/nope.md does not exist"),
        ("MEMORY.md:99-120", "MEMORY.md has 33 line(s); line 99 is past the end"),
    ],
)
def test_memget_gives_the_cli_error_for_a_missing_file_or_lines_past_the_end(ip, spec, message):
    cli = CliRunner().invoke(cli_group, ["get", "-a", "example", spec])
    assert cli.exit_code == 1 and cli.output.strip().endswith(message)
    # An error (red, no result to keep), with the CLI's words.
    with pytest.raises(UsageError) as refused:
        ip.run_line_magic("memget", spec)
    assert str(refused.value) == f"memext: {message}"
    with pytest.raises(MemextError, match=re.escape(message)):
        memext.get(spec)


@pytest.mark.parametrize(
    "spec, message",
    [
        ("../../etc/passwd.md", "'..' may not leave"),
        ("/etc/hosts", "only Markdown"),
        ("notes/other.md", "not part of this agent's memory"),
        ("MEMORY.md:9-3", "ends before it starts"),
        ("MEMORY.md --from 0", "must be at least 1"),
        ("MEMORY.md:0-3", "start at 1"),
        ("MEMORY.md:0", "start at 1"),
    ],
)
def test_memget_refuses_with_the_engine_message(ip, spec, message):
    with pytest.raises(UsageError, match=message):
        ip.run_line_magic("memget", spec)


# -- %memstatus and %memindex -------------------------------------------------------------------


def test_memstatus_tables_every_agent(ip):
    assert magics(ip).session.keeper("example").wait_fresh(30)
    table = ip.run_line_magic("memstatus", "")
    assert isinstance(table, StatusTable)
    assert [s.agent for s in table] == ["example", "small"]
    rows = {r["agent"]: r for r in table.rows()}
    assert rows["example"]["files"] == 15 and rows["example"]["search"] == "keyword-only"
    assert rows["example"]["state"] == "up to date"
    text = repr(table)
    assert text.splitlines()[0].split()[:3] == ["agent", "files", "chunks"]
    assert "example" in text and "small" in text
    html = display_html(ip, table)
    assert html.count('class="memext-status-agent"') == 2 and "<table" not in html
    one = ip.run_line_magic("memstatus", "-a small")
    assert [s.agent for s in one] == ["small"]
    with pytest.raises(UsageError, match="no agent 'zzz'"):
        ip.run_line_magic("memstatus", "-a zzz")


def test_memindex_syncs_with_a_text_bar_in_a_terminal(ip, capsys):
    summary = ip.run_line_magic("memindex", "-a small")
    assert isinstance(summary, SyncSummary)
    assert summary.report.files_seen == 3 and summary.status.total_files == 3
    err = capsys.readouterr().err
    assert "small: done (3/3 files)" in err and "chunks" in err
    forced = ip.run_line_magic("memindex", "-a small --force")
    assert forced.report.rebuilt and "rebuilt 3 of 3 files" in repr(forced)
    both = ip.run_line_magic("memindex", "--all")
    assert [s.agent for s in both] == ["example", "small"]


# -- %%memnote ------------------------------------------------------------------------------------


def test_memnote_appends_to_todays_log_and_search_finds_it(ip, example_workspace, capsys):
    today = datetime.now()
    ip.run_cell_magic("memnote", "", "Biscuit now eats Orijen kibble.\nVet approved it.\n")
    log = example_workspace / "memory" / f"{today:%Y-%m-%d}.md"
    lines = log.read_text(encoding="utf-8").splitlines()
    assert lines[0] == f"# {today:%Y-%m-%d}" and lines[2].startswith("## ")
    assert lines[3:] == ["Biscuit now eats Orijen kibble.", "Vet approved it."]
    assert f"noted in memory/{today:%Y-%m-%d}.md:4-5 (new file)" in capsys.readouterr().out
    # The index picks the note up in the background; the next search sees it.
    r = ip.run_line_magic("memsearch", "Orijen kibble")
    assert r[0].path == f"memory/{today:%Y-%m-%d}.md"
    ip.run_cell_magic("memnote", "", "Second note about Orijen.")
    lines = log.read_text(encoding="utf-8").splitlines()
    out = capsys.readouterr().out
    assert lines[5] == ""
    if lines[6].startswith("## "):  # the minute turned: a heading of its own
        assert lines[7] == "Second note about Orijen." and f"noted in memory/{today:%Y-%m-%d}.md:8\n" in out
    else:  # same minute: under the first note's heading, its provenance on the line
        assert lines[6].startswith("Second note about Orijen. <!-- memext origin=person via=notebook")
        assert f"noted in memory/{today:%Y-%m-%d}.md:7\n" in out


def test_memnote_long_term_and_other_files(ip, example_workspace):
    before = (example_workspace / "MEMORY.md").read_text(encoding="utf-8")
    ip.run_cell_magic("memnote", "--long-term", "- Dana switched to oat milk.")
    after = (example_workspace / "MEMORY.md").read_text(encoding="utf-8")
    assert after.startswith(before)
    added = after[len(before) :].strip("\n").splitlines()
    assert added[0].startswith(f"## {datetime.now():%Y-%m-%d} ") and added[1] == "- Dana switched to oat milk."
    ip.run_cell_magic("memnote", "--file memory/projects/garden.md", "Tomatoes planted.")
    assert (example_workspace / "memory" / "projects" / "garden.md").read_text().endswith("Tomatoes planted.\n")
    assert ip.run_line_magic("memsearch", "Tomatoes planted")[0].path == "memory/projects/garden.md"


@pytest.mark.parametrize(
    "line, body, message",
    [
        ("--file ../outside.md", "x", "may not leave"),
        ("--file notes.txt", "x", "only Markdown"),
        ("--file other/place.md", "x", "not part of this agent's memory"),
        ("", "   \n", "the note is empty"),
        ("--long-term --file memory/a.md", "x", "either --file or --long-term"),
        ("-a nope", "x", "no agent 'nope'"),
    ],
)
def test_memnote_refuses_without_writing(ip, example_workspace, workspace, line, body, message):
    def memory_files():  # both workspaces and their parent (the index folder is elsewhere)
        return sorted((p, p.stat().st_size) for p in example_workspace.parent.rglob("*") if p.is_file() and "memext" not in p.parts)

    before = memory_files()
    with pytest.raises(UsageError, match=message):
        ip.run_cell_magic("memnote", line, body)
    assert memory_files() == before


# -- %config ------------------------------------------------------------------------------------


def test_config_settings_apply(ip):
    ip.run_line_magic("config", "MemExt.max_results = 1")
    assert len(ip.run_line_magic("memsearch", "Biscuit")) == 1
    ip.run_line_magic("config", "MemExt.agent = 'small'")
    assert ip.run_line_magic("memsearch", "Anna").agent == "small"
    ip.run_line_magic("config", "MemExt.min_score = 0.99")
    assert magics(ip).min_score == 0.99
    ip.run_line_magic("config", "MemExt.widget = True")
    w = ip.run_line_magic("memsearch", "Anna")
    assert isinstance(w, SearchWidget) and w.agent == "small" and w.max_results == 1
    w.close()
    assert isinstance(ip.run_line_magic("memsearch", "--json Anna"), SearchResults)
    assert isinstance(ip.run_line_magic("memsearch", "--explain Anna"), SearchResults)
    with pytest.raises(UsageError, match="--widget cannot show --source"):
        ip.run_line_magic("memsearch", "--widget --source memory Anna")


@pytest.mark.parametrize(
    "line, message",
    [
        ("MemExt.max_results = 0", "between 1 and 200"),
        ("MemExt.min_score = 1.5", "between 0 and 1"),
        ("MemExt.agent = 'nope'", "no agent 'nope'"),
    ],
)
def test_bad_config_values_are_refused_with_a_message(ip, caplog, line, message):
    with caplog.at_level(logging.ERROR):
        ip.run_line_magic("config", line)
    assert message in caplog.text
    m = magics(ip)
    assert (m.max_results, m.min_score, m.agent) == (None, None, None)


def test_settings_from_ipython_config_are_used(config):
    from traitlets.config import Config as TConfig

    with ipython_shell() as shell:
        cfg = TConfig()
        cfg.MemExt.agent = "small"
        cfg.MemExt.max_results = 1
        shell.update_config(cfg)
        shell.run_line_magic("load_ext", "memext")
        r = shell.run_line_magic("memsearch", "Anna tea")
        assert r.agent == "small" and len(r) == 1
