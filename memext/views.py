"""What ``%memget``, ``%memstatus`` and ``%memindex`` return and display."""

from __future__ import annotations

import json
from typing import Any

from memext.engine import IndexStatus, ReadResult, SyncReport
from memext.engine.for_faces import json_safe, terminal_safe

from .magic_lines import QuietDisplay
from .render import (
    BORDER,
    ERROR_STYLE,
    FONT,
    MUTED,
    NOTICE_STYLE,
    TEXT,
    ago,
    citation_html,
    duration,
    esc,
    numbered_lines_html,
    numbered_lines_text,
)


class FileLines(QuietDisplay, str):
    """The text ``%memget`` read: a ``str`` (the file's text) that displays with
    line numbers, as ``memext get`` shows it (metadata comments left out,
    retired lines marked).

    ``.path``, ``.from_line``, ``.to_line``, ``.total_lines``,
    ``.truncated`` and ``.missing`` say what part of which file it is.
    """

    read: ReadResult

    def __new__(cls, read: ReadResult) -> "FileLines":
        obj = super().__new__(cls, read.text)
        obj.read = read
        return obj

    def __reduce__(self):
        return (str, (str(self),))  # pickles (and copies) as the plain text

    path = property(lambda self: self.read.path)
    from_line = property(lambda self: self.read.from_line)
    to_line = property(lambda self: self.read.to_line)
    total_lines = property(lambda self: self.read.total_lines)
    truncated = property(lambda self: self.read.truncated)
    missing = property(lambda self: self.read.missing)

    @property
    def citation(self) -> str:
        return self.read.citation

    def _footer(self) -> str | None:
        r = self.read
        if r.missing:
            return f"{r.path} does not exist (yet)"
        if r.truncated:
            return f"stopped at line {r.to_line} of {r.total_lines}; continue with %memget {r.path}:{r.to_line + 1}-"
        return None

    def to_text(self) -> str:
        r = self.read
        if r.missing:
            return terminal_safe(self._footer() or "")
        body = numbered_lines_text(r.shown_text(), r.from_line) if r.to_line >= r.from_line else "(no lines in that range)"
        head = f"{self.citation} (of {r.total_lines} lines)"
        foot = self._footer()
        return terminal_safe("\n".join([head, body] + ([foot] if foot else [])))

    def _repr_pretty_(self, p, cycle: bool) -> None:
        p.text(self.to_text())

    def _repr_html_(self) -> str:
        r = self.read
        if r.missing:
            return f'<div class="memext-missing" style="{NOTICE_STYLE}">{esc(self._footer())}</div>'
        head = f'<div style="{MUTED};font-size:90%">{citation_html(self.citation)} (of {r.total_lines} lines)</div>'
        body = (
            numbered_lines_html(r.shown_text(), r.from_line)
            if r.to_line >= r.from_line
            else f'<div style="{MUTED}">(no lines in that range)</div>'
        )
        foot = self._footer()
        tail = f'<div style="{MUTED};font-size:90%">{esc(foot)}</div>' if foot else ""
        return f'<div class="memext-get" style="{FONT};{TEXT}">{head}{body}{tail}</div>'


def state_words(s: IndexStatus) -> str:
    """The index's state in plain words."""
    if not s.enabled:
        return "search turned off"
    if s.syncing:
        return "syncing"
    if s.last_sync is None:
        return "not indexed yet"
    if s.read_only:
        changed = ", not up to date" if s.dirty or s.settings_changed else ""
        return f"read-only: searched as it is{changed}"
    if s.settings_changed:
        return "settings changed: the next sync rebuilds it"
    if s.dirty:
        return "files changed since the last sync"
    return "up to date"


def index_words(s: IndexStatus) -> str:
    """Where the index is: its file, or the server (never with its password),
    the schema and the versions."""
    if s.storage.backend != "postgres":
        return s.db_path
    pgvector = f", pgvector {s.vector.extension}" if s.vector.extension else ""
    return f"{s.db_path}, {s.storage.version}{pgvector}"


def _status_row(s: IndexStatus) -> dict[str, Any]:
    last = s.last_sync
    return {
        "agent": s.agent,
        "files": s.total_files,
        "chunks": s.total_chunks,
        "search": s.search_mode.describe(),
        "last sync": f"{ago(last.at)} (took {duration(last.duration_s)})" if last else ago(None),
        "state": state_words(s),
        "workspace": s.workspace,
        "index": index_words(s),
    }


class TextView(QuietDisplay):
    """Mixin: the terminal (and ``repr``) shows :meth:`to_text`, its
    control characters made visible (paths and errors can hold them)."""

    def to_text(self) -> str:
        raise NotImplementedError

    def __repr__(self) -> str:
        return terminal_safe(self.to_text())

    def _repr_pretty_(self, p, cycle: bool) -> None:
        p.text(terminal_safe(self.to_text()))


class StatusTable(TextView):
    """The status of one or more agents; ``.statuses`` holds the
    :class:`engine.IndexStatus` objects, ``.to_dict()`` their dicts."""

    COLUMNS = ("agent", "files", "chunks", "search", "last sync", "state", "workspace")
    #: Shown when an agent's index is on a server: which one matters then.
    SERVER_COLUMNS = (*COLUMNS, "index")

    def __init__(self, statuses: list[IndexStatus], errors: dict[str, str] | None = None):
        self.statuses = statuses
        #: Agents whose index could not be opened, and why.
        self.errors = errors or {}

    def __len__(self) -> int:
        return len(self.statuses)

    def __getitem__(self, i: int) -> IndexStatus:
        return self.statuses[i]

    def rows(self) -> list[dict[str, Any]]:
        return [_status_row(s) for s in self.statuses]

    def columns(self) -> tuple[str, ...]:
        """The table's columns: the index's place only when one is on a server."""
        on_server = any(s.storage.backend != "sqlite" for s in self.statuses)
        return self.SERVER_COLUMNS if on_server else self.COLUMNS

    def to_dict(self) -> list[dict[str, Any]]:
        return [s.to_dict() for s in self.statuses]

    def to_json(self, indent: int | None = 2) -> str:
        return json_safe(json.dumps(self.to_dict(), indent=indent, ensure_ascii=False, default=str))

    def _problems(self) -> list[tuple[str, str]]:
        """(agents, message) pairs; a message that several agents share
        (the same keyword-only reason) is listed once, naming them all."""
        found: dict[str, list[str]] = {}
        for s in self.statuses:
            messages = []
            reason = s.provider.reason
            if s.provider.keyword_only and reason:
                messages.append(reason)
            if s.keyword_only_reason:
                messages.append(f"keyword-only because {s.keyword_only_reason}")
            messages += [f"skipped {item.path}: {item.reason}" for item in s.skipped]
            too_big = s.long_term.warning() if s.long_term else None
            if too_big:
                messages.append(too_big)
            if s.last_error:
                messages.append(f"error: {s.last_error}")
            for msg in messages:
                found.setdefault(msg, []).append(s.agent)
        for agent, why in self.errors.items():
            found.setdefault(f"error: {why}", []).append(agent)
        return [(", ".join(agents), msg) for msg, agents in found.items()]

    def to_text(self) -> str:
        rows, columns = self.rows(), self.columns()
        widths = {c: max([len(c)] + [len(str(r[c])) for r in rows]) for c in columns}
        lines = ["  ".join(c.ljust(widths[c]) for c in columns).rstrip()]
        lines += ["  ".join(str(r[c]).ljust(widths[c]) for c in columns).rstrip() for r in rows]
        lines += [f"{agent}: {msg}" for agent, msg in self._problems()]
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        # One block per agent rather than a table: seven columns do not fit
        # a narrow notebook, and Lab lays tables out fixed and centred. The
        # short facts flow on one line and wrap between items; the folder
        # wraps anywhere (it has no spaces).
        label = f"{MUTED};margin-right:0.5ch"
        blocks = []
        for r in self.rows():
            facts = "".join(
                # A fact that does not fit moves to the next line whole
                # (flex: none); only one wider than the cell wraps inside.
                f'<span class="memext-fact{" memext-wraps" if c == "search" else ""}" '
                f'style="{"overflow-wrap:anywhere" if c == "search" else "white-space:nowrap"};'
                'flex:none;max-width:100%;margin-right:1.5em">'
                f'<span style="{label}">{esc(c)}</span>{esc(r[c])}</span>'
                for c in ("files", "chunks", "search", "last sync")
            )
            places = "".join(
                f'<div class="memext-fact" style="overflow-wrap:anywhere"><span style="{label}">{esc(c)}</span>{esc(r[c])}</div>'
                for c in self.columns()
                if c in ("workspace", "index")
            )
            blocks.append(
                f'<div class="memext-status-agent" style="margin:0 0 6px 0;padding:2px 0 2px 8px;border-left:2px solid {BORDER}">'
                f'<div><span class="memext-agent" style="font-weight:600">{esc(r["agent"])}</span>'
                f'<span style="{MUTED}"> · </span><span class="memext-state">{esc(r["state"])}</span></div>'
                f'<div style="display:flex;flex-wrap:wrap">{facts}</div>{places}</div>'
            )
        notes = "".join(
            f'<div class="memext-problem" style="{ERROR_STYLE if msg.startswith("error") else NOTICE_STYLE}">{esc(agent)}: {esc(msg)}</div>'
            for agent, msg in self._problems()
        )
        return f'<div class="memext-status" style="{FONT};{TEXT};max-width:100%">{"".join(blocks)}{notes}</div>'


class SyncSummary(TextView):
    """What ``%memindex`` did: the engine's :class:`SyncReport` and the status after."""

    def __init__(self, agent: str, report: SyncReport, status: IndexStatus):
        self.agent = agent
        self.report = report
        self.status = status
        #: Notices shown earlier in the session, left out of the display.
        self.repeated: frozenset[str] = frozenset()

    def provider_notices(self) -> list[str]:
        """Why search is keyword-only, when it is (said once a session)."""
        prov = self.status.provider
        return [prov.reason] if prov.keyword_only and prov.reason else []

    def to_text(self) -> str:
        r, st = self.report, self.status
        what = "rebuilt" if r.rebuilt else "indexed"
        lines = [
            f"{self.agent}: {what} {r.files_indexed} of {r.files_seen} files ({r.files_unchanged} unchanged, "
            f"{r.files_deleted} removed), {st.total_chunks} chunks, {r.texts_embedded} embedded, "
            f"{r.cache_hits} from cache, in {r.duration_s:.2f} s [{st.search_mode.describe()}]"
        ]
        lines += [f"skipped {s.path}: {s.reason}" for s in r.skipped]
        if r.provider_error:
            lines.append(f"embedding failed ({r.provider_error}); those files are keyword-only until the next sync")
        lines += [f"note: {n}" for n in self.provider_notices() if n not in self.repeated]
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        first, *rest = self.to_text().split("\n")
        notes = "".join(f'<div style="{NOTICE_STYLE}">{esc(line)}</div>' for line in rest)
        return f'<div class="memext-sync" style="{FONT};{TEXT}"><div>{esc(first)}</div>{notes}</div>'


class SyncSummaries(TextView, list):
    """What ``%memindex --all`` did: one :class:`SyncSummary` per agent."""

    def to_text(self) -> str:
        return "\n".join(s.to_text() for s in self)

    def _repr_html_(self) -> str:
        return "".join(s._repr_html_() for s in self)
