"""A trailing ``?`` on a memext magic line is part of the query
(memext/magic_lines.py), through a real IPython shell."""

from __future__ import annotations

import pytest
from memext_helpers import ipython_shell, write_config

from memext import SearchResults
from memext.magic_lines import question_mark_is_query


@pytest.fixture
def ip(tmp_path, example_workspace, monkeypatch):
    monkeypatch.setenv("MEMEXT_CONFIG", str(write_config(tmp_path / "memext", {"example": example_workspace})))
    with ipython_shell() as shell:
        shell.run_line_magic("load_ext", "memext")
        yield shell


def test_the_readme_line_searches_instead_of_asking_for_help(ip, capsys):
    # Not IPython's help: that would print "Object `trip` not found."
    result = ip.run_cell("%memsearch -n 3 when is the Berlin trip?", store_history=True)
    assert result.success, result.error_in_exec
    out = capsys.readouterr().out
    assert "not found" not in out
    assert "for 'when is the Berlin trip?' in example" in out
    assert "memory/2026-10-24.md:" in out and "Berlin trip booked: 13–17 November" in out


def test_assignment_and_the_query_text_keep_the_question_mark(ip):
    assert ip.run_cell("r = %memsearch when is the Berlin trip?", store_history=True).success
    r = ip.user_ns["r"]
    assert isinstance(r, SearchResults) and r.query == "when is the Berlin trip?"
    assert ip.run_cell("r2 = %memsearch -n 1 Berlin??", store_history=True).success
    assert ip.user_ns["r2"].query == "Berlin??"


def test_help_on_the_magic_itself_still_works(ip, capsys):
    ip.run_cell("%memsearch?", store_history=True)
    out = capsys.readouterr().out
    assert "Search the agent's memory" in out and "--max-results" in out


def test_other_lines_are_left_to_ipython(ip):
    assert question_mark_is_query(["print?\n"]) == ["print?\n"]
    assert question_mark_is_query(["%memsearch?\n"]) == ["%memsearch?\n"]
    assert question_mark_is_query(["%%memnote\n", "%memsearch is it?\n"]) == ["%%memnote\n", "%memsearch is it?\n"]
    assert question_mark_is_query(["x = 1 + \\\n", "%memsearch a?\n"])[1] == "%memsearch a?\n"
    assert question_mark_is_query(["%memsearch it's 'quoted'?"]) == ["get_ipython().run_line_magic('memsearch', \"it's 'quoted'?\")"]


def test_the_transformer_leaves_with_the_extension(ip):
    ip.run_line_magic("unload_ext", "memext")
    assert "pinfo" in ip.transform_cell("%memsearch where is it?")
    ip.run_line_magic("load_ext", "memext")
    assert ip.transform_cell("%memsearch where is it?").strip() == "get_ipython().run_line_magic('memsearch', 'where is it?')"


@pytest.mark.parametrize(
    "line, call",
    [
        ("%memsearch when is the Berlin trip?", ("memsearch", "when is the Berlin trip?")),
        ("%memrecall what did the vet say?", ("memrecall", "what did the vet say?")),
        ("%memget MEMORY.md:10?", ("memget", "MEMORY.md:10?")),
        ("%memforget MEMORY.md:9 does she drink coffee now?", ("memforget", "MEMORY.md:9 does she drink coffee now?")),
        ("%memstatus -a example?", ("memstatus", "-a example?")),
        ("%memindex -a example?", ("memindex", "-a example?")),
        ("%memconsolidate -a example?", ("memconsolidate", "-a example?")),
    ],
)
def test_every_line_magic_takes_a_trailing_question_mark_as_text(ip, line, call):
    assert ip.transform_cell(line).strip() == f"get_ipython().run_line_magic({call[0]!r}, {call[1]!r})"
    assert "pinfo" in ip.transform_cell(f"%{call[0]}?")  # the bare magic's help stays IPython's


def test_memrecall_memget_and_memforget_with_a_question_mark_run_the_magic(ip, example_workspace, capsys):
    # Not IPython's help ("Object `say` not found."): the magic runs with the text as written.
    assert ip.run_cell("r = %memrecall what did the vet say about Biscuit?", store_history=True).success
    assert "not found" not in capsys.readouterr().out
    assert ip.user_ns["r"].message == "what did the vet say about Biscuit?"
    ip.run_cell("%memget MEMORY.md:10?", store_history=True)
    assert "'10?' is not a line range" in capsys.readouterr().err
    assert ip.run_cell("%memforget MEMORY.md:9 does she drink coffee now?", store_history=True).success
    assert capsys.readouterr().out == "forgot MEMORY.md:9 (does she drink coffee now?)\n"
    assert "does she drink coffee now?" in (example_workspace / "MEMORY.md").read_text(encoding="utf-8").splitlines()[8]
