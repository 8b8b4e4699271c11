"""The search widget driven through its widget state (no front end needed;
the real browser test is test_widget_browser.py)."""

from __future__ import annotations

import asyncio
import re

import pytest
from memext_helpers import ipython_shell, write_config

import memext
from memext import Session
from memext.widget import SearchWidget


@pytest.fixture
def config(tmp_path, example_workspace, workspace, monkeypatch):
    (example_workspace / "memory" / "2026-11-19.md").write_text(
        '# 2026-11-19\n\n- Biscuit chewed the <img src=x onerror="alert(1)"> cable.\n', encoding="utf-8"
    )
    path = write_config(tmp_path / "memext", {"example": example_workspace, "small": workspace})
    monkeypatch.setenv("MEMEXT_CONFIG", str(path))
    return path


@pytest.fixture
def widget(config):
    w = SearchWidget(Session(), debounce_s=0)
    yield w
    w.close()


def _citations(w: SearchWidget) -> list[str]:
    return [row.hit.citation for row in w.results_box.children]


def test_typing_searches_and_shows_results(widget):
    assert widget.agent_picker.options == ("example", "small") and widget.agent == "example"
    widget.query_box.value = "vet Biscuit"
    assert _citations(widget)[0] == "memory/2026-10-05.md:4-10"
    first = widget.results_box.children[0]
    assert 'class="memext-citation"' in first.summary.value
    assert re.search(r'<mark class="memext-hit"[^>]*>vet</mark>', first.summary.value)
    assert "keyword-only search" in widget.notice.value
    # The count quotes the query, as the result list's header does.
    assert f"{len(widget.results)} results for &#x27;vet Biscuit&#x27;" in widget.notice.value
    status = widget.status_line.value
    assert "agent <b>example</b> · 16 files · 17 chunks · keyword-only · last sync" in status


def test_nothing_in_memory_says_so(widget):
    widget.query_box.value = "deadbeef12"
    assert widget.results_box.children == () and not widget.results.response.confident
    assert "no memory matches &#x27;deadbeef12&#x27;" in widget.notice.value and "⚠ no memory" not in widget.notice.value


def test_expanding_a_result_reads_its_full_lines(widget):
    widget.search("vet Biscuit")
    row = widget.results_box.children[0]
    assert not row.expanded and row.lines.value == ""
    excerpt = row.summary.value.count('class="memext-lineno"')
    row.toggle.click()
    assert row.expanded and row.toggle.description == "hide lines"
    assert 'class="memext-lines"' in row.lines.value
    assert (
        '>10</span><span class="memext-text" style="white-space:pre-wrap;overflow-wrap:anywhere">- Dana wants to read' in row.lines.value
    )  # numbered through get()
    assert re.search(r'<mark class="memext-hit"[^>]*>Biscuit</mark>', row.lines.value)
    # More than the excerpt, in its place: the whole span (4-10) and the lines around it
    # (its headings, 1-3, dimmed), best line marked.
    assert row.lines.value.count('class="memext-lineno"') == 10 > excerpt
    assert 'class="memext-lineno"' not in row.summary.value and "memory/2026-10-05.md:4-10" in row.summary.value
    assert "memory/2026-10-05.md, lines 1-10 of 10 (the result: 4-10)" in row.lines.value
    assert re.search(r'class="memext-line memext-best".*?›9</span><span class="memext-text"[^>]*>- Booked the', row.lines.value)
    row.toggle.click()
    assert not row.expanded and row.lines.layout.display == "none"
    assert row.summary.value.count('class="memext-lineno"') == excerpt


def test_show_lines_adds_context_around_a_short_result(widget, example_workspace):
    (example_workspace / "memory" / "2026-11-20.md").write_text(
        "# 2026-11-20\n\n"
        + "".join(f"- filler {i} " + "padding " * 12 + "\n" for i in range(30))
        + "- The kayak club meets on Sundays.\n"
        + "".join(f"- more filler {i} " + "padding " * 12 + "\n" for i in range(30)),
        encoding="utf-8",
    )
    widget.session.index("example").sync()
    widget.search("kayak club")
    row = widget.results_box.children[0]
    hit = row.hit
    row.set_expanded(True)
    first, last = max(1, hit.start_line - 3), hit.end_line + 3
    assert f"lines {first}-{last} of 63 (the result: {hit.start_line}-{hit.end_line})" in row.lines.value
    assert row.lines.value.count('class="memext-lineno"') == last - first + 1


def test_note_markup_is_escaped_in_snippets_and_lines(widget):
    widget.search("chewed cable")
    row = widget.results_box.children[0]
    excerpt = row.summary.value
    row.set_expanded(True)
    for html in (excerpt, row.lines.value):
        assert "<img" not in html and "&lt;img src=x" in html


def test_enter_searches_at_once(config):
    w = SearchWidget(Session(), debounce_s=30)

    async def type_then_enter():
        w.query_box.value = "Biscuit"  # a search is scheduled for after the pause
        assert w.searches_run == 0
        w.query_box._handle_custom_msg({"event": "submit"}, [])  # what the front end sends on Enter
        assert w.searches_run == 1 and len(w.results) > 0
        assert w._pending is None  # the scheduled one was dropped

    try:
        asyncio.run(type_then_enter())
    finally:
        w.close()


def test_typing_is_debounced_on_an_event_loop(config):
    w = SearchWidget(Session(), debounce_s=0.2)

    async def type_then_pause():
        for text in ("B", "Bi", "Bis", "Biscuit"):
            w.query_box.value = text
            await asyncio.sleep(0.02)
        assert w.searches_run == 0  # still typing
        await asyncio.sleep(0.5)

    try:
        asyncio.run(type_then_pause())
        assert w.searches_run == 1 and w.results.query == "Biscuit"
    finally:
        w.close()


def test_agent_picker_switches_agent(widget):
    widget.search("Anna")
    assert widget.results is not None and widget.results.agent == "example"
    widget.agent_picker.value = "small"
    assert widget.results.agent == "small" and _citations(widget)[0].startswith("MEMORY.md:")
    assert "agent <b>small</b> · 3 files" in widget.status_line.value


def test_empty_query_clears(widget):
    widget.search("Biscuit")
    assert widget.results_box.children
    widget.query_box.value = "   "
    assert widget.results_box.children == () and widget.results is None


def test_errors_show_in_the_widget(config, tmp_path):
    w = SearchWidget(Session(), agent="nope", debounce_s=0)
    try:
        assert "no agent &#x27;nope&#x27;" in w.notice.value and w.agent is None
        assert w.agent_picker.options == ("example", "small")  # the user can pick a real one
        w.agent_picker.value = "small"
        w.search("Anna")
        assert w.results is not None and w.results.agent == "small"
    finally:
        w.close()
    w = SearchWidget(Session(), debounce_s=0)
    try:
        config.write_text('[memory_search]\nprovider = "psychic"\n', encoding="utf-8")
        w.search("Biscuit")
        assert 'class="memext-error"' in w.notice.value and "memory_search.provider" in w.notice.value
        assert w.results_box.children == ()
    finally:
        w.close()


def test_the_picker_follows_the_config(config, tmp_path):
    w = SearchWidget(Session(), debounce_s=0)
    try:
        saved = config.read_text(encoding="utf-8")
        config.write_text("this is [not toml", encoding="utf-8")
        w2 = SearchWidget(Session(), debounce_s=0)  # opened while the config is broken
        try:
            assert w2.agent is None and 'class="memext-error"' in w2.notice.value
            config.write_text(saved, encoding="utf-8")
            w2.search("Biscuit")  # fixed: the widget recovers without being reopened
            assert w2.agent == "example" and w2.results is not None and len(w2.results) > 0
        finally:
            w2.close()
        third = tmp_path / "third"
        (third / "memory").mkdir(parents=True)
        (third / "MEMORY.md").write_text("# Third\n\nThe heron nests by the weir.\n", encoding="utf-8")
        config.write_text(saved + f'\n[[agents]]\nid = "third"\nworkspace = "{third.as_posix()}"\n', encoding="utf-8")
        w.search("Biscuit")  # a search re-reads the agents
        assert w.agent_picker.options == ("example", "small", "third")
        assert w.agent == "example" and _citations(w)  # still the chosen one
        w.agent_picker.value = "third"
        assert w.results is None or w.results.agent == "third"
        w.search("heron")
        assert _citations(w)[0].startswith("MEMORY.md:")
    finally:
        w.close()


def test_unexpected_errors_show_in_the_widget(widget, monkeypatch):
    """A stand-in fault (a bug deep in search) raised on the debounced path,
    where no cell could show a traceback: the widget must show it."""

    def broken(*_a, **_k):
        raise RuntimeError("boom")

    idx = widget.session.index(widget.agent)
    monkeypatch.setattr(idx, "search", broken)
    assert widget.search("Biscuit") is None
    assert "search failed: RuntimeError: boom" in widget.notice.value


def test_initial_query_and_limits(config):
    w = SearchWidget(Session(), query="Biscuit", max_results=2, debounce_s=0)
    try:
        assert len(w.results_box.children) == 2 and w.searches_run == 1
    finally:
        w.close()


def test_close_closes_its_own_session_only(config):
    shared = Session()
    w = SearchWidget(shared, debounce_s=0)
    w.close()
    assert not shared.closed
    own = SearchWidget(debounce_s=0)
    own.search("Biscuit")
    own.close()
    assert own.session.closed
    shared.close()


def test_search_widget_shares_the_loaded_extension(config):
    with ipython_shell() as shell:
        shell.run_line_magic("load_ext", "memext")
        shell.run_line_magic("config", "MemExt.max_results = 1")
        w = memext.search_widget(debounce_s=0)
        magics = shell.magics_manager.registry["MemExt"]
        assert w.session is magics.session
        w.search("Biscuit")
        assert len(w.results) == 1
        w2 = shell.run_line_magic("memsearch", "--widget -a small Anna")
        assert isinstance(w2, SearchWidget) and w2.agent == "small" and _citations(w2)[0].startswith("MEMORY.md:")


def test_repeating_a_search_keeps_expanded_rows(widget):
    widget.search("vet Biscuit")
    row = widget.results_box.children[0]
    row.set_expanded(True)
    widget.search("vet Biscuit")  # e.g. Enter after the debounced search already ran
    assert widget.results_box.children[0] is row and row.expanded
    widget.search("Biscuit vet")
    assert widget.results_box.children[0] is not row


def test_a_widget_outlived_by_its_extension_says_so(config):
    with ipython_shell() as shell:
        shell.run_line_magic("load_ext", "memext")
        w = memext.search_widget(debounce_s=0)
        shell.run_line_magic("unload_ext", "memext")
        w.search("Biscuit")
        assert "run %load_ext memext again" in w.notice.value and w.results_box.children == ()


def test_the_since_picker_filters_by_date(config, example_workspace):
    from datetime import date

    (example_workspace / "memory" / f"{date.today():%Y-%m-%d}.md").write_text("# today\n- Walked the ferret.\n", encoding="utf-8")
    (example_workspace / "memory" / "2020-01-01.md").write_text("# long ago\n- Bought the ferret.\n", encoding="utf-8")
    w = SearchWidget(Session(), query="ferret", debounce_s=0)
    try:
        assert [label for label, _ in w.since_picker.options][:3] == ["any time", "today", "past 7 days"]
        assert w.since is None and len(w.results_box.children) == 2
        w.since_picker.value = "7d"  # choosing searches again
        assert [row.hit.path for row in w.results_box.children] == [f"memory/{date.today():%Y-%m-%d}.md"]
        assert "1 result for &#x27;ferret&#x27; (past 7 days)" in w.notice.value
        w.since_picker.value = ""
        assert len(w.results_box.children) == 2
    finally:
        w.close()


def test_a_given_since_is_a_choice_and_a_bad_one_is_shown(config):
    w = SearchWidget(Session(), query="Biscuit", since="2026-10-06", debounce_s=0)
    try:
        assert ("since 2026-10-06", "2026-10-06") in w.since_picker.options and w.since == "2026-10-06"
        assert "memory/2026-10-05.md" not in {row.hit.path for row in w.results_box.children}
    finally:
        w.close()
    bad = SearchWidget(Session(), query="Biscuit", since="someday", debounce_s=0)
    try:
        assert "cannot read &#x27;someday&#x27; as a date" in bad.notice.value
        assert bad.results_box.children == ()
    finally:
        bad.close()


def test_the_toolbar_wraps_rather_than_cutting_off_the_pickers(widget):
    # On a narrow page the pickers and the button move to a second line; the
    # box keeps a usable width (test_notebook_browser.py measures it at 760 px).
    bar = widget.toolbar
    assert bar.layout.flex_flow == "row wrap" and "memext-toolbar" in bar._dom_classes
    assert list(bar.children) == [widget.query_box, widget.since_picker, widget.agent_picker, widget.search_button]
    assert widget.query_box.layout.min_width and widget.children[0] is bar


def test_long_lines_wrap_under_their_text_not_under_the_numbers(widget):
    widget.query_box.value = "vet Biscuit"
    row = widget.results_box.children[0]
    row.set_expanded(True)
    line = re.search(
        r'<div class="memext-line[^"]*" style="([^"]*)"><span class="memext-lineno"[^>]*>[^<]*</span>'
        r'<span class="memext-text" style="([^"]*)">',
        row.lines.value,
    )
    assert line, row.lines.value[:400]
    # Number and text are two grid columns: a wrapped line continues in the text's column.
    assert "display:grid" in line.group(1) and "grid-template-columns" in line.group(1)
    assert "white-space:pre-wrap" in line.group(2)
