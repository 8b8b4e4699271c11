"""The demo notebook runs top to bottom, headless, in a real kernel
(nbclient): once as a new user without a model (keyword-only, told how to
get one), and its first cells with a local model in the user's config
(hybrid results)."""

from __future__ import annotations

import copy
import hashlib
import json
import re

import nbformat
import pytest
from conftest import EXAMPLE_WORKSPACE, MODEL_PATH, ROOT
from memext_helpers import install_kernelspec
from nbclient import NotebookClient

NOTEBOOK = ROOT / "notebooks" / "memext-demo.ipynb"
WIDGET_MIME = "application/vnd.jupyter.widget-view+json"
HOW_TO_GET_A_MODEL = "memext model install minilm"


def _tree_digest(folder) -> str:
    h = hashlib.sha256()
    for p in sorted(folder.rglob("*")):
        if p.is_file():
            h.update(str(p.relative_to(folder)).encode() + p.read_bytes())
    return h.hexdigest()


def _cell(nb, starts: str, run: int = 0):
    """The code cell starting with ``starts`` (in the ``run``-th run of the notebook)."""
    matches = [c for c in nb.cells if c.cell_type == "code" and c.source.startswith(starts)]
    assert len(matches) == nb.metadata.get("test_runs", 1), starts  # one cell a run: no ambiguous start
    return matches[run]


def _data(cell, mime: str) -> list:
    return [o["data"][mime] for o in cell.outputs if mime in o.get("data", {})]


def _stream(cell) -> str:
    return "".join(o.get("text", "") for o in cell.outputs if o.output_type == "stream")


def _run(tmp, *, user_config: str | None = None, keep=None, times: int = 1) -> dict:
    """Run the demo (or the cells ``keep`` selects) ``times`` times over in
    one kernel whose user folders are private; ``user_config`` is the
    user's own config.toml."""
    mp = pytest.MonkeyPatch()
    # The kernel inherits these: a private temp folder (to check clean-up),
    # private Jupyter folders and isolated user folders.
    for var in ("TMPDIR", "JUPYTER_DATA_DIR", "JUPYTER_RUNTIME_DIR", "JUPYTER_CONFIG_DIR"):
        (tmp / var).mkdir()
        mp.setenv(var, str(tmp / var))
    for var, sub in (("XDG_CONFIG_HOME", "c"), ("XDG_STATE_HOME", "s"), ("XDG_CACHE_HOME", "k"), ("XDG_DATA_HOME", "d")):
        mp.setenv(var, str(tmp / "home" / sub))
    for var in ("MEMEXT_CONFIG", "MEMEXT_WORKSPACE", "OPENAI_API_KEY", "GEMINI_API_KEY", "OPENAI_BASE_URL"):
        mp.delenv(var, raising=False)
    if user_config is not None:
        (tmp / "home" / "c" / "memext").mkdir(parents=True)
        (tmp / "home" / "c" / "memext" / "config.toml").write_text(user_config, encoding="utf-8")
    kernel = install_kernelspec(tmp / "JUPYTER_DATA_DIR")
    before = _tree_digest(EXAMPLE_WORKSPACE)
    home_before = _tree_digest(tmp / "home")
    nb = nbformat.read(NOTEBOOK, as_version=4)
    if keep is not None:
        nb.cells = [c for c in nb.cells if c.cell_type == "code" and keep(c.source)]
    nb.cells = [nbformat.from_dict(copy.deepcopy(c)) for _ in range(times) for c in nb.cells]
    nb.metadata["test_runs"] = times
    try:
        NotebookClient(nb, kernel_name=kernel, timeout=180, resources={"metadata": {"path": str(NOTEBOOK.parent)}}).execute()
    finally:
        mp.undo()
    return {"nb": nb, "tmp": tmp, "example_before": before, "home_before": home_before}


@pytest.fixture(scope="module")
def executed(tmp_path_factory):
    """The whole demo notebook, as a new user without a model runs it."""
    return _run(tmp_path_factory.mktemp("nb"))


@pytest.fixture(scope="module")
def with_model(tmp_path_factory):
    """The setup and the first searches, with the local model that `memext
    model install minilm` records in the user's config, run twice in one
    kernel (as someone who runs the notebook again does)."""
    user = f"[memory_search.local]\nmodel_path = {json.dumps(str(MODEL_PATH))}\n"
    first = ("import json", "%load_ext", "%memsearch -n 3", "%memsearch --explain", "%unload_ext")
    return _run(tmp_path_factory.mktemp("nbm"), user_config=user, keep=lambda src: src.startswith(first), times=2)


def test_runs_without_errors_except_the_refusal(executed):
    nb = executed["nb"]
    errors = [
        c.source
        for c in nb.cells
        if c.cell_type == "code"
        for o in c.outputs
        if o.output_type == "error" or (o.output_type == "stream" and "Error" in o.get("text", ""))
    ]
    assert errors == ["%memget ../../etc/passwd.md"]
    refusal = _cell(nb, "%memget ../../etc/passwd.md")
    assert "'..' may not leave the workspace's memory" in str(refusal.outputs)
    assert "Traceback" not in str(refusal.outputs)


def test_the_first_magic_cells_write_nothing_to_stderr(executed):
    # The demo's config file is private from the start: memext has no mode
    # to tighten, and so no warning for the notebook to show in red.
    nb = executed["nb"]
    for start in ("import json", "%load_ext", "%memsearch -n 3"):
        stderr = [o.get("text", "") for o in _cell(nb, start).outputs if o.get("name") == "stderr"]
        assert stderr == [], (start, stderr)


def test_without_a_model_it_says_how_to_get_one_and_says_keyword_only_once(executed):
    nb = executed["nb"]
    assert HOW_TO_GET_A_MODEL in _stream(_cell(nb, "import json"))
    searches = [c for c in nb.cells if c.cell_type == "code" and "%memsearch" in c.source and "--widget" not in c.source]
    html = [h for c in searches for h in _data(c, "text/html") if "memext-results" in h]
    notices = sum(h.count('class="memext-notice"') for h in html)
    assert notices == 1, f"the keyword-only notice was shown {notices} times"
    assert "keyword-only" in html[0] and all("[keyword-only]" in h for h in html)  # every header still says so
    index_text = _data(_cell(nb, "%memindex --force"), "text/plain")[-1]
    assert "note:" not in index_text and "[keyword-only]" in index_text


def test_search_outputs(executed):
    nb = executed["nb"]
    berlin = _data(_cell(nb, "%memsearch -n 3 when is the Berlin trip?"), "text/html")[0]
    assert "for &#x27;when is the Berlin trip?&#x27;" in berlin and "Object `trip` not found" not in str(nb.cells)
    best = re.search(r'<div class="memext-line memext-best".*?</div>', berlin).group(0)
    assert "Berlin</mark> <mark" in best and "13–17 November" in best
    # The short reminder of 10 November outranks MEMORY.md's longer chunk
    # (lines 3-18, "reconciliation" twice): BM25 weighs a term by the length of its chunk.
    assert "3 results; best: memory/2026-11-10.md:4-8" in _stream(_cell(nb, "r = %memsearch reconciliation"))
    # The fusion decision is on screen, with the explain table.
    fusion = _data(_cell(nb, "%memsearch --explain"), "text/html")[0]
    assert "memory/2026-10-14.md:" in fusion and "try RRF first" in fusion
    assert '<table class="memext-explain"' in fusion and "bm25" in fusion and "{" not in fusion.split("memext-explain")[1]
    js = _data(_cell(nb, "%memsearch --json"), "application/json")[0]
    assert js["results"][0]["citation"].startswith("MEMORY.md:")
    quiet = _cell(nb, "quiet = %memsearch")
    assert "memory/2026-11-02.md:3-5" in _data(quiet, "text/plain")[0] and not _data(quiet, "text/html")


def test_memrecall_takes_a_trailing_question_mark_in_a_real_kernel(executed):
    cell = _cell(executed["nb"], "%memrecall what did the vet say about Biscuit?")
    shown = _data(cell, "text/plain")[0]
    assert shown.startswith("3 memories recalled for 'what did the vet say about Biscuit?' in example")
    assert "memory/2026-10-05.md:9" in shown and "Booked the vet for Biscuit" in shown
    assert "not found" not in _stream(cell) and not [o for o in cell.outputs if o.output_type == "error"]


def test_get_status_index_note_and_plain_functions(executed):
    nb = executed["nb"]
    assert " 9  - Booked the vet for Biscuit" in _data(_cell(nb, "%memget memory/2026-10-05.md:8-10"), "text/plain")[0]
    assert "FileLines with 4 lines; first: # MEMORY" in _stream(_cell(nb, "text = %memget"))
    status = _data(_cell(nb, "%memstatus"), "text/html")[0]
    assert "memext-status-agent" in status and "example" in status and "scratch" in status and "dirty" not in status
    assert status.count(HOW_TO_GET_A_MODEL) == 1  # one line for both agents
    index = _cell(nb, "%memindex --force")
    assert _data(index, WIDGET_MIME), "a notebook shows an ipywidgets progress bar"
    assert "example: rebuilt 15 of 15 files" in _data(index, "text/plain")[-1]  # the result, after the bar
    assert "noted in memory/" in _stream(_cell(nb, "%%memnote"))
    assert "Almeida" in _data(_cell(nb, "%memsearch Almeida clinic"), "text/html")[0]
    assert _data(_cell(nb, "%config MemExt.max_results = 2"), "text/plain") == ["2"]
    plain = _cell(nb, "import memext\n\nhits")
    assert "memory/2026-10-09.md:" in _stream(plain) and "vaccines" in _data(plain, "text/plain")[0]


def test_widgets_render_as_widget_views(executed):
    nb = executed["nb"]
    for start in ("%memsearch --widget", "import memext\n\nw ="):
        view = _data(_cell(nb, start), WIDGET_MIME)
        assert view and view[0]["model_id"]
    state = nb.metadata["widgets"]["application/vnd.jupyter.widget-state+json"]["state"]
    html_values = [m["state"].get("value", "") for m in state.values() if m["model_name"] == "HTMLModel"]
    assert any("memory/2026-10-05.md:4-10" in v for v in html_values)  # the --widget Biscuit search
    assert any("every fourth week, handover on Mondays" in v for v in html_values)  # the matching line, not line 1


@pytest.mark.parametrize("run", [0, 1])
def test_with_a_model_in_the_user_config_search_is_hybrid(with_model, run):
    # The second run in the same kernel reads the user's config again (the
    # first left MEMEXT_CONFIG as it found it), so it stays hybrid.
    nb = with_model["nb"]
    setup = _stream(_cell(nb, "import json", run))
    assert f"semantic search with your local model: {MODEL_PATH}" in setup and HOW_TO_GET_A_MODEL not in setup
    for start in ("%memsearch -n 3", "%memsearch --explain"):
        html = _data(_cell(nb, start, run), "text/html")[0]
        assert "hybrid · local all-minilm-l6-v2-f16.gguf" in html and 'class="memext-notice"' not in html
    explain = _data(_cell(nb, "%memsearch --explain"), "text/html")[0]
    assert re.search(r"<td[^>]*>vector</td><td[^>]*>(#\d+|-)</td><td[^>]*>-?\d\.\d{3}</td>", explain)  # a real cosine


@pytest.mark.parametrize("which", ["executed", "with_model"])
def test_leaves_no_trace(which, request):
    run = request.getfixturevalue(which)
    assert _tree_digest(EXAMPLE_WORKSPACE) == run["example_before"]
    assert list((run["tmp"] / "TMPDIR").glob("memext-demo-*")) == []
    home = run["tmp"] / "home"
    # The user's config is read, never written; no index lands in the user's folders.
    assert _tree_digest(home) == run["home_before"] or not (home / "s" / "memext" / "memory").exists()
    assert not (home / "s" / "memext" / "memory").exists()
    if which == "executed":
        assert not (home / "c" / "memext").exists()
    else:
        assert (home / "c" / "memext" / "config.toml").read_text().startswith("[memory_search.local]")
