"""The live search widget: ``memext.search_widget()`` or ``%memsearch --widget``.

A query box (search on Enter, and while typing after a short pause), an
agent picker, the results (score, citation with a copy button, the lines
around the best-matching line), each expandable to its whole span and a few
lines around it through ``MemoryIndex.get()``, and a status line. It only calls the engine API; it holds no search logic.

Everything a test needs to check is widget state (``HTML.value``,
``children``), so the widget can be driven without a front end:
``w.query_box.value = "deploy"`` searches at once when no event loop runs.
"""

from __future__ import annotations

import asyncio
from typing import Any

import ipywidgets as w

from memext.engine import MemextError, SearchOptions, SearchResult

from .api import run_search
from .render import ERROR_STYLE, MUTED, NOTICE_STYLE, ago, esc, numbered_lines_html
from .results import SearchResults, result_html
from .session import Session

#: Pause after the last keystroke before a search runs.
DEBOUNCE_S = 0.35
#: The "since" picker: label -> the ``after`` a search gets ("" = any time).
SINCE_CHOICES = (("any time", ""), ("today", "today"), ("past 7 days", "7d"), ("past 30 days", "30d"), ("past year", "1y"))
#: Lines shown before and after a result's span by "show lines".
CONTEXT_LINES = 3


class ResultRow(w.VBox):
    """One result: its summary and a button that shows its full lines."""

    def __init__(self, session: Session, agent: str, hit: SearchResult, query: str):
        self.hit = hit
        self.query = query
        self.agent = agent
        self._session = session
        # Rows live in a scrolling box: they must keep their height, not shrink to fit.
        keep = dict(flex="0 0 auto")
        self.summary = w.HTML(value=result_html(hit, query), layout=w.Layout(**keep))
        self.toggle = w.Button(
            description="show lines",
            tooltip=f"Read {hit.citation}",
            icon="chevron-down",
            layout=w.Layout(width="auto", align_self="flex-start", **keep),
        )
        self.toggle.add_class("memext-expand")
        self.lines = w.HTML(value="", layout=w.Layout(display="none", **keep))
        self.lines.add_class("memext-full-lines")
        self.toggle.on_click(lambda _b: self.set_expanded(not self.expanded))
        super().__init__([self.summary, self.lines, self.toggle], layout=w.Layout(**keep))
        self.add_class("memext-result-row")

    @property
    def expanded(self) -> bool:
        return self.lines.layout.display != "none"

    def set_expanded(self, expanded: bool) -> None:
        """Show (reading them with ``get()`` the first time) or hide the
        lines; while shown they take the excerpt's place (they include it)."""
        if expanded and not self.lines.value:
            self.lines.value = self._read()
        self.summary.value = result_html(self.hit, self.query, lines=not expanded)
        self.lines.layout.display = "" if expanded else "none"
        self.toggle.description = "hide lines" if expanded else "show lines"
        self.toggle.icon = "chevron-up" if expanded else "chevron-down"

    def _read(self) -> str:
        """The result's whole span and CONTEXT_LINES around it (more than
        its excerpt), best line marked, the lines around it dimmed."""
        hit = self.hit
        if hit.source != "memory":
            return f'<div style="{MUTED}">session transcripts are not readable here; see {esc(hit.citation)}</div>'
        first = max(1, hit.start_line - CONTEXT_LINES)
        count = hit.end_line + CONTEXT_LINES - first + 1
        try:
            read = self._session.index(self.agent).get(hit.path, first, count)
        except (MemextError, ValueError) as exc:
            return f'<div style="{ERROR_STYLE}">{esc(exc)}</div>'
        if read.missing:
            return f'<div style="{NOTICE_STYLE}">{esc(read.path)} no longer exists</div>'
        if read.to_line < read.from_line:
            return f'<div style="{NOTICE_STYLE}">{esc(read.path)} is shorter now than when it was indexed</div>'
        head = (
            f'<div class="memext-lines-head" style="{MUTED};font-size:85%;margin-top:2px">'
            f"{esc(read.path)}, lines {read.from_line}-{read.to_line} of {read.total_lines} "
            f"(the result: {hit.start_line}-{hit.end_line})</div>"
        )
        lines = numbered_lines_html(read.text, read.from_line, self.query, best=hit.best_line, inside=(hit.start_line, hit.end_line))
        return head + lines


class SearchWidget(w.VBox):
    """Live search over one agent's memory (switchable in the picker)."""

    def __init__(
        self,
        session: Session | None = None,
        *,
        agent: str | None = None,
        query: str = "",
        max_results: int | None = None,
        min_score: float | None = None,
        debounce_s: float = DEBOUNCE_S,
        since: str | None = None,
    ):
        self.session = session or Session()
        self._owns_session = session is None
        self.max_results = max_results
        self.min_score = min_score
        self.debounce_s = debounce_s
        self.results: SearchResults | None = None
        #: How many searches ran (typing is debounced, so fewer than keystrokes).
        self.searches_run = 0
        self._picker_muted = False
        self._pending: asyncio.TimerHandle | None = None

        # The toolbar wraps on a narrow page: the box keeps a usable width
        # and the pickers and the button move to a second line, never cut off.
        self.query_box = w.Text(
            value=query,
            placeholder="Search memory…",
            continuous_update=True,
            layout=w.Layout(flex="1 1 16em", width="auto", min_width="12em"),
        )
        self.query_box.add_class("memext-query")
        self.search_button = w.Button(description="Search", icon="search", layout=w.Layout(width="auto"))
        self.agent_picker = w.Dropdown(
            options=[], layout=w.Layout(width="auto"), description="agent", style={"description_width": "initial"}
        )
        choices = list(SINCE_CHOICES)
        if since and since not in dict(choices).values():
            choices.append((f"since {since}", since))
        self.since_picker = w.Dropdown(
            options=choices,
            value=since or "",
            layout=w.Layout(width="auto"),
            description="dated",
            style={"description_width": "initial"},
            tooltip="Only memory dated since then (a daily note's date, else its front matter's, else when it was saved)",
        )
        self.since_picker.add_class("memext-since")
        self.notice = w.HTML()
        self.notice.add_class("memext-notice-line")
        self.results_box = w.VBox(layout=w.Layout(max_height="520px", overflow="auto"))
        self.results_box.add_class("memext-results-box")
        self.status_line = w.HTML()
        self.status_line.add_class("memext-status-line")
        self.toolbar = w.HBox(
            [self.query_box, self.since_picker, self.agent_picker, self.search_button],
            layout=w.Layout(flex_flow="row wrap", align_items="center", grid_gap="4px 0"),
        )
        self.toolbar.add_class("memext-toolbar")
        super().__init__(
            [
                self.toolbar,
                self.notice,
                self.results_box,
                self.status_line,
            ]
        )
        self.add_class("memext-search-widget")

        self._load_agents(agent)
        self.query_box.observe(self._on_typing, names="value")
        self.query_box.on_msg(self._on_text_msg)
        self.search_button.on_click(lambda _b: self.search())
        self.agent_picker.observe(self._on_agent, names="value")
        self.since_picker.observe(lambda _change: self.search(), names="value")
        self.update_status()
        if query.strip():
            self.search()

    # -- wiring ----------------------------------------------------------------------

    def _load_agents(self, agent: str | None) -> None:
        # The picker lists the agents that exist even when ``agent`` does
        # not, so the user can pick another one.
        if not self.refresh_agents():
            return
        try:
            chosen = self.session.resolve_agent(agent).id
        except MemextError as exc:
            self._show_error(str(exc))
            return
        self.agent_picker.value = chosen

    def refresh_agents(self) -> bool:
        """Re-read the configured agents into the picker, keeping the chosen
        one when it still exists; False (with the error shown) when the
        config cannot be read."""
        try:
            ids = tuple(self.session.agent_ids())
        except MemextError as exc:
            self._show_error(str(exc))
            return False
        if ids != tuple(self.agent_picker.options):
            current = self.agent_picker.value
            # Setting options resets the value; _on_agent must not see that.
            self._picker_muted = True
            try:
                self.agent_picker.options = ids
                self.agent_picker.value = current if current in ids else None
            finally:
                self._picker_muted = False
        return True

    @property
    def agent(self) -> str | None:
        return self.agent_picker.value

    @property
    def since(self) -> str | None:
        """The ``after`` searches get (None: any time)."""
        return self.since_picker.value or None

    def _on_text_msg(self, _widget: Any, content: dict, _buffers: Any) -> None:
        # The front end sends {"event": "submit"} on Enter (Text.on_submit
        # is deprecated in ipywidgets 8, the message is not).
        if content.get("event") == "submit":
            self._cancel_pending()
            self.search()

    def _on_typing(self, _change: dict) -> None:
        self._cancel_pending()
        loop = _running_loop()
        if loop is None or self.debounce_s <= 0:
            self.search()  # no front end event loop (a script or a test): search now
            return
        self._pending = loop.call_later(self.debounce_s, self._fire_pending)

    def _fire_pending(self) -> None:
        self._pending = None
        self.search()

    def _cancel_pending(self) -> None:
        if self._pending is not None:
            self._pending.cancel()
            self._pending = None

    def _on_agent(self, _change: dict) -> None:
        if self._picker_muted:
            return
        self.update_status()
        self.search()

    # -- actions ----------------------------------------------------------------------

    def search(self, query: str | None = None) -> SearchResults | None:
        """Search now (for ``query``, or what the box holds) and show the results."""
        if query is not None and query != self.query_box.value:
            self.query_box.unobserve(self._on_typing, names="value")
            try:
                self.query_box.value = query
            finally:
                self.query_box.observe(self._on_typing, names="value")
        text = self.query_box.value.strip()
        if text:
            # Agents added to (or fixed in) the config show up without reopening.
            if not self.refresh_agents():
                return None
            if self.agent is None:
                self._load_agents(None)
        if not text or self.agent is None:
            self.results = None
            self.results_box.children = ()
            self.notice.value = "" if self.agent is not None else self.notice.value
            return None
        try:
            self.searches_run += 1
            options = SearchOptions(max_results=self.max_results, min_score=self.min_score, after=self.since)
            results = run_search(self.session, text, options, agent=self.agent)
        except MemextError as exc:
            self._show_error(str(exc))
            return None
        except Exception as exc:  # noqa: BLE001 - a debounced search has no cell to show a traceback in
            self._show_error(f"search failed: {type(exc).__name__}: {exc}")
            return None
        self.results = results
        self._show(results)
        self.update_status()
        return results

    def _show(self, results: SearchResults) -> None:
        # The widget's notice line is replaced at each search, so it shows
        # every notice that applies (once on screen, however many searches).
        # An empty answer says so on the count line, not as a warning.
        notes = [
            f'<div class="memext-notice" style="{NOTICE_STYLE}">⚠ {esc(n)}</div>'
            for n in results.notices()
            if not (not len(results) and n.startswith("no memory matches"))
        ]
        if results.response.error:
            notes.append(f'<div class="memext-error" style="{ERROR_STYLE}">provider error: {esc(results.response.error)}</div>')
        dated = f" ({esc(self.since_picker.label)})" if self.since else ""
        counted = (
            f"{len(results)} result{'s' if len(results) != 1 else ''} for {esc(repr(results.query))}"
            if len(results)
            else esc(f"no memory matches {results.query!r}")
        )
        count = f'<div class="memext-count" style="{MUTED};font-size:90%">{counted}{dated}</div>'
        self.notice.value = count + "".join(notes)
        if self._same_hits(results):
            return  # the same search again (Enter after a pause): keep rows as they are, expanded ones too
        self.results_box.children = tuple(ResultRow(self.session, results.agent, hit, results.query) for hit in results)

    def _same_hits(self, results: SearchResults) -> bool:
        rows = self.results_box.children
        return (
            len(rows) == len(results)
            and len(rows) > 0
            and all(
                isinstance(r, ResultRow) and (r.agent, r.query, r.hit) == (results.agent, results.query, hit)
                for r, hit in zip(rows, results)
            )
        )

    def _show_error(self, message: str) -> None:
        self.results_box.children = ()
        self.notice.value = f'<div class="memext-error" style="{ERROR_STYLE}">{esc(message)}</div>'

    def update_status(self) -> None:
        """Refresh the status line: agent, files, chunks, provider, last sync."""
        if self.agent is None:
            self.status_line.value = ""
            return
        try:
            st = self.session.index(self.agent).status(check_files=False)  # runs after every search
        except MemextError as exc:
            self.status_line.value = f'<span style="{MUTED}">{esc(self.agent)}: {esc(exc)}</span>'
            return
        last = ago(st.last_sync.at if st.last_sync else None)
        state = " · syncing" if st.syncing else ""
        self.status_line.value = (
            f'<div style="{MUTED};font-size:85%">agent <b>{esc(st.agent)}</b> · {st.total_files} files · '
            f"{st.total_chunks} chunks · {esc(st.search_mode.describe())} · last sync {esc(last)}{state}</div>"
        )

    def close(self) -> None:
        """Close the widget (and its indexes, when it opened them itself)."""
        if getattr(self, "_pending", None) is not None:
            self._cancel_pending()
        if getattr(self, "_owns_session", False):
            self.session.close()
        super().close()


def _running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None
