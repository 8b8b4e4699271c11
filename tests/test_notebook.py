"""The demo notebook runs top to bottom, headless, in a real kernel (nbclient)."""

from __future__ import annotations

import hashlib

import nbformat
import pytest
from nbclient import NotebookClient

from conftest import EXAMPLE_WORKSPACE, ROOT
from memext_helpers import install_kernelspec

NOTEBOOK = ROOT / "notebooks" / "memext-demo.ipynb"
WIDGET_MIME = "application/vnd.jupyter.widget-view+json"


def _tree_digest(folder) -> str:
    h = hashlib.sha256()
    for p in sorted(folder.rglob("*")):
        if p.is_file():
            h.update(str(p.relative_to(folder)).encode() + p.read_bytes())
    return h.hexdigest()


def _cell(nb, starts: str):
    matches = [c for c in nb.cells if c.cell_type == "code" and c.source.startswith(starts)]
    assert len(matches) == 1, starts
    return matches[0]


def _data(cell, mime: str) -> list:
    return [o["data"][mime] for o in cell.outputs if mime in o.get("data", {})]


def _stream(cell) -> str:
    return "".join(o.get("text", "") for o in cell.outputs if o.output_type == "stream")


@pytest.fixture(scope="module")
def executed(tmp_path_factory):
    """The demo notebook after a full run (one kernel for every check)."""
    tmp = tmp_path_factory.mktemp("nb")
    mp = pytest.MonkeyPatch()
    # The kernel inherits these: a private temp folder (to check clean-up),
    # private Jupyter folders and the isolated user folders of conftest.
    for var in ("TMPDIR", "JUPYTER_DATA_DIR", "JUPYTER_RUNTIME_DIR", "JUPYTER_CONFIG_DIR"):
        (tmp / var).mkdir()
        mp.setenv(var, str(tmp / var))
    for var, sub in (("XDG_CONFIG_HOME", "c"), ("XDG_STATE_HOME", "s"), ("XDG_CACHE_HOME", "k"), ("XDG_DATA_HOME", "d")):
        mp.setenv(var, str(tmp / "home" / sub))
    for var in ("MEMEXT_CONFIG", "MEMEXT_WORKSPACE", "OPENAI_API_KEY", "GEMINI_API_KEY", "OPENAI_BASE_URL"):
        mp.delenv(var, raising=False)
    kernel = install_kernelspec(tmp / "JUPYTER_DATA_DIR")
    before = _tree_digest(EXAMPLE_WORKSPACE)
    nb = nbformat.read(NOTEBOOK, as_version=4)
    try:
        NotebookClient(nb, kernel_name=kernel, timeout=120, resources={"metadata": {"path": str(NOTEBOOK.parent)}}).execute()
    finally:
        mp.undo()
    return {"nb": nb, "tmp": tmp, "example_before": before}


def test_runs_without_errors_except_the_refusal(executed):
    nb = executed["nb"]
    errors = [c.source for c in nb.cells if c.cell_type == "code"
              for o in c.outputs if o.output_type == "error" or (o.output_type == "stream" and "Error" in o.get("text", ""))]
    assert errors == ["%memget ../../etc/passwd.md"]
    refusal = _cell(nb, "%memget ../../etc/passwd.md")
    assert "'..' may not leave the workspace's memory" in str(refusal.outputs)
    assert "Traceback" not in str(refusal.outputs)


def test_search_outputs(executed):
    nb = executed["nb"]
    html = _data(_cell(nb, "%memsearch vet Biscuit"), "text/html")[0]
    assert "memory/2026-10-05.md:1-10" in html and '<mark class="memext-hit">vet</mark>' in html
    assert "keyword-only" in html  # no model in this isolated run, and it says so
    assert "3 results; best: memory/" in _stream(_cell(nb, "r = %memsearch reconciliation"))
    js = _data(_cell(nb, "%memsearch --json"), "application/json")[0]
    assert js["results"][0]["citation"].startswith("MEMORY.md:") and "explain" in js["results"][0]
    quiet = _cell(nb, "quiet = %memsearch")
    assert "memory/2026-11-02.md:1-5" in _data(quiet, "text/plain")[0] and not _data(quiet, "text/html")


def test_get_status_index_note(executed):
    nb = executed["nb"]
    assert " 9  - Booked the vet for Biscuit" in _data(_cell(nb, "%memget memory/2026-10-05.md:8-10"), "text/plain")[0]
    assert "FileLines with 4 lines; first: # MEMORY" in _stream(_cell(nb, "text = %memget"))
    status = _data(_cell(nb, "%memstatus"), "text/html")[0]
    assert "<td" in status and "example" in status and "scratch" in status
    index = _cell(nb, "%memindex --force")
    assert _data(index, WIDGET_MIME), "a notebook shows an ipywidgets progress bar"
    assert "example: rebuilt 15 of 15 files" in _data(index, "text/plain")[-1]  # the result, after the bar
    assert "noted in memory/" in _stream(_cell(nb, "%%memnote"))
    assert "Almeida" in _data(_cell(nb, "%memsearch Almeida clinic"), "text/html")[0]
    assert _data(_cell(nb, "%config MemExt.max_results = 2"), "text/plain") == ["2"]


def test_widgets_render_as_widget_views(executed):
    nb = executed["nb"]
    for start in ("%memsearch --widget", "import memext"):
        view = _data(_cell(nb, start), WIDGET_MIME)
        assert view and view[0]["model_id"]
    state = nb.metadata["widgets"]["application/vnd.jupyter.widget-state+json"]["state"]
    html_values = [m["state"].get("value", "") for m in state.values() if m["model_name"] == "HTMLModel"]
    assert any("memory/2026-10-05.md:1-10" in v for v in html_values)  # the --widget Biscuit search
    assert any("on-call" in v.lower() for v in html_values)


def test_leaves_no_trace(executed):
    assert _tree_digest(EXAMPLE_WORKSPACE) == executed["example_before"]
    assert list((executed["tmp"] / "TMPDIR").glob("memext-demo-*")) == []
    home = executed["tmp"] / "home"
    assert not (home / "c" / "memext").exists() and not (home / "s" / "memext").exists()  # user config and indexes
