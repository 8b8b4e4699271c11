"""Consolidation: the daily-note facts that searches keep returning,
proposed for ``MEMORY.md`` (DESIGN.md §17, "Consolidation").

The rule: a line of a daily note (``memory/YYYY-MM-DD.md``) qualifies
when the use log (:mod:`.use_log`) holds at least :data:`MIN_USES` uses of
it on at least :data:`MIN_DAYS` different days, and their decayed sum
(each use counts ``0.5 ** (age_days / HALF_LIFE_DAYS)``) reaches
:data:`MIN_SCORE`. A fact asked for on two days is one an agent keeps
needing; one asked for twice in one conversation may not be. The best
:data:`MAX_FACTS` are proposed, most used first.

What is proposed is an entry (a list item or a paragraph, its lines
joined), not a line cut from one: a use of any of its lines counts for
it, and under a titled heading ("## Gullwing") that its text does not
name, the title leads it, so it keeps its subject.

Left out, with the reason: forgotten or superseded entries, untrusted
ones, entries that read as instructions, the older side of a changed fact
(an entry a later note replaced, :mod:`.changes`, or one saying what a
retired entry said before it was retired), and entries ``MEMORY.md``
already says, exactly or nearly (the duplicate check of capture,
:mod:`.capture`). A use whose line was edited since (its hash no longer
matches that line or any other of the file) no longer counts.

The proposal is the lines to add to ``MEMORY.md`` under its
``## Consolidated`` heading (a new one the first time), each dated with
its source's date and citing it in its metadata comment
(``date=2026-03-01 from=memory/2026-03-01.md:12``), and the unified diff
of the file that adding them makes. Applying writes them through
:func:`~.append.append_entry` (the writer lock, one ``O_APPEND`` write when
the heading is the file's last): the daily notes stay as they are, and the
``from=`` link lets a forget or a supersede of either side mark the other
(engine/memory/forget.py).
"""

from __future__ import annotations

import re
import time
from dataclasses import asdict, dataclass
from datetime import date, datetime
from typing import Iterable

from ..citations import cite_lines
from ..errors import MemextError
from ..note_dates import name_date
from ..settings import AgentConfig
from . import changes
from .append import LONG_TERM_FILE, Entry, plan_entry
from .capture import NEAR_DUPLICATE, content_tokens, known_memory, similarity
from .entries import EntryMeta, FileEntries, LineInfo, parse_entries, split_meta, strip_meta
from .hostile import instruction_like
from .read import resolve_memory_path
from .use_log import Use, line_hash

#: A use counts half after this many days.
HALF_LIFE_DAYS = 30.0
MIN_USES = 2
MIN_DAYS = 2
#: The decayed sum a fact needs: two uses a month old each, or more older ones.
MIN_SCORE = 1.0
MAX_FACTS = 20
HEADING = "Consolidated"
_DAILY = re.compile(r"^memory/\d{4}-\d{2}-\d{2}\.md$")
_HEADING = re.compile(r"^ {0,3}#{1,6}(?:\s|$)")
_MARKER = re.compile(r"^\s*(?:[-*+]|\d{1,9}[.)])\s+(?:\[[ xX]\]\s+)?")


@dataclass(frozen=True)
class ConsolidatedFact:
    """A daily-note line proposed for ``MEMORY.md``: its text, its source
    citation, how often, on how many days and when it was last returned by
    a search, and its score (the decayed sum of its uses)."""

    text: str
    source: str
    uses: int
    days: int
    last_used: str
    score: float
    #: The day the source says the fact was written (its own ``date=``, else its file's).
    date: str | None = None

    @property
    def line(self) -> str:
        """The line appended: ``- TEXT <!-- memext date=DATE from=SOURCE -->``."""
        return f"- {self.text} {EntryMeta(date=self.date, extra=(('from', self.source),)).render()}"

    def to_dict(self) -> dict:
        return {**asdict(self), "score": round(self.score, 3), "line": self.line}


@dataclass(frozen=True)
class LeftOutFact:
    """A line used often enough but not proposed, and why."""

    source: str
    text: str
    reason: str


@dataclass(frozen=True)
class Proposal:
    """What ``memext consolidate`` proposes for one agent: the facts, the
    unified diff of ``file`` appending them makes, and the lines left out.
    ``applied``: the facts were appended, at ``citation``."""

    agent: str
    facts: tuple[ConsolidatedFact, ...]
    diff: str
    left_out: tuple[LeftOutFact, ...] = ()
    file: str = LONG_TERM_FILE
    applied: bool = False
    citation: str | None = None
    #: Said when the entry was written but its indexing failed.
    notice: str | None = None

    def to_dict(self) -> dict:
        return {
            "agent": self.agent,
            "file": self.file,
            "facts": [f.to_dict() for f in self.facts],
            "left_out": [asdict(x) for x in self.left_out],
            "diff": self.diff,
            "applied": self.applied,
            "citation": self.citation,
            "notice": self.notice,
        }


def entry_meta(via: str, now: datetime) -> EntryMeta:
    """The heading's metadata: who consolidated, and when."""
    return EntryMeta(origin="consolidated", via=via, date=f"{now:%Y-%m-%d}")


def propose(agent: AgentConfig, uses: Iterable[Use], *, via: str = "api", now: datetime | None = None) -> Proposal:
    """The proposal for ``agent`` from its ``uses`` (the use log's lines)."""
    now = now or datetime.now()
    by_file: dict[str, list[Use]] = {}
    for u in uses:
        if _DAILY.match(u.path):
            by_file.setdefault(u.path, []).append(u)
    long_term = _read(agent, LONG_TERM_FILE)
    known = known_memory([(LONG_TERM_FILE, long_term or "")])
    memory = _Memory(agent)
    ranked: list[tuple[ConsolidatedFact, LineInfo]] = []
    for path, file_uses in sorted(by_file.items()):
        text = _read(agent, path)
        if text is None:
            continue
        entries = parse_entries(text)
        for (start, end), times in _uses_by_entry(entries, _uses_by_line(entries, file_uses)).items():
            fact = _qualifies(entries, path, start, end, times, now)
            if fact is not None:
                ranked.append((fact, entries.span_info(start, end)))
    ranked.sort(key=lambda r: (-r[0].score, r[0].source))
    facts: list[ConsolidatedFact] = []
    left_out: list[LeftOutFact] = []
    for fact, info in ranked:
        reason = _why_not(fact, info) or memory.older_side(fact)
        where = None if reason else known.duplicate_of(fact.text)
        if reason or where:
            left_out.append(LeftOutFact(fact.source, fact.text, reason or f"MEMORY.md already says it ({where})"))
            continue
        if len(facts) < MAX_FACTS:
            facts.append(fact)
            known.add(fact.text, fact.source)  # two notes saying one thing: proposed once
    return Proposal(agent.id, tuple(facts), preview(long_term, facts, via, now), tuple(left_out))


def body(facts: Iterable[ConsolidatedFact]) -> str:
    """The entry's text: one line per fact."""
    return "\n".join(f.line for f in facts)


def consolidated_entry(facts: Iterable[ConsolidatedFact], via: str, now: datetime) -> Entry:
    """What applying writes: the facts under the ``## Consolidated`` heading."""
    return Entry(HEADING, body(facts), entry_meta(via, now), explicit=True)


def preview(long_term: str | None, facts: list[ConsolidatedFact], via: str, now: datetime) -> str:
    """The unified diff of ``MEMORY.md`` that appending ``facts`` makes
    ("" with none), as :func:`~.append.append_entry` would write them."""
    if not facts:
        return ""
    import difflib

    before = long_term or ""
    plan = plan_entry(before, consolidated_entry(facts, via, now))
    after = plan.data if plan.rewrite else before + plan.data
    old_name = f"a/{LONG_TERM_FILE}" if long_term is not None else "/dev/null"
    return "".join(
        difflib.unified_diff(before.splitlines(keepends=True), after.splitlines(keepends=True), old_name, f"b/{LONG_TERM_FILE}", n=2)
    )


def _read(agent: AgentConfig, path: str) -> str | None:
    """A memory file's text; None when it is missing or unreadable."""
    try:
        real, _ = resolve_memory_path(path, agent.workspace, agent.extra_path_list())
        return real.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError, MemextError):
        return None


def _uses_by_line(entries: FileEntries, uses: list[Use]) -> dict[int, list[float]]:
    """The times each line of a file was used. A use counts for the line it
    names when that line's hash still matches, else for the first line
    with its hash (lines above it were added or removed); not at all when
    no line has it (the line was edited)."""
    lines = entries.lines
    hashes: dict[str, int] | None = None
    out: dict[int, list[float]] = {}
    for u in uses:
        n: int | None = u.line if 1 <= u.line <= len(lines) else None
        if u.hash and (n is None or line_hash(strip_meta(lines[n - 1])) != u.hash):
            if hashes is None:
                hashes = {}
                for i in range(len(lines), 0, -1):  # the first line with a hash wins
                    hashes[line_hash(strip_meta(lines[i - 1]))] = i
            n = hashes.get(u.hash)
        if n is not None and lines[n - 1].strip():
            out.setdefault(n, []).append(u.at)
    return out


def _uses_by_entry(entries: FileEntries, by_line: dict[int, list[float]]) -> dict[tuple[int, int], list[float]]:
    """The uses of each entry (list item, paragraph: its first and last
    line): a use of any of its lines counts for it. Headings are never facts."""
    out: dict[tuple[int, int], list[float]] = {}
    for number, times in by_line.items():
        if _HEADING.match(entries.lines[number - 1]):
            continue
        unit = next((u for u in entries.blocks if u.start <= number <= u.end), None)
        span = (unit.start, unit.end) if unit is not None else (number, number)
        out.setdefault(span, []).extend(times)
    return out


def _qualifies(entries: FileEntries, path: str, start: int, end: int, times: list[float], now: datetime) -> ConsolidatedFact | None:
    """The entry on lines ``start..end`` when its uses meet the rule, else None."""
    days = {date.fromtimestamp(t) for t in times}
    if len(times) < MIN_USES or len(days) < MIN_DAYS:
        return None
    at = now.timestamp()
    score = sum(0.5 ** (max(0.0, at - t) / 86400 / HALF_LIFE_DAYS) for t in times)
    if score < MIN_SCORE:
        return None
    lines = [" ".join(_MARKER.sub("", split_meta(entries.lines[n - 1])[0]).split()) for n in range(start, end + 1)]
    text = " ".join(line for line in lines if line)
    if not text:
        return None
    text = _with_subject(entries, start, text)
    last = time.strftime("%Y-%m-%d", time.localtime(max(times)))
    return ConsolidatedFact(text, cite_lines(path, start, end), len(times), len(days), last, score, _day_of(entries, path, start))


_TIMESTAMP = re.compile(r"^(?:\d{4}-\d{2}-\d{2})?[ T]?(?:\d{1,2}:\d{2}(?::\d{2})?)?$")


def _with_subject(entries: FileEntries, at: int, text: str) -> str:
    """``text`` led by the title of the heading it sits under ("Gullwing:
    store readings in InfluxDB"), unless the title is a time or a date or
    the text already names it: an entry under a titled heading is about it."""
    section = next((u for u in entries.headings if u.start <= at <= u.end), None)
    if section is None:
        return text
    title = " ".join(split_meta(entries.lines[section.start - 1])[0].strip().lstrip("#").split())
    if not title or _TIMESTAMP.match(title) or title.casefold() == HEADING.casefold():
        return text
    words = content_tokens(title)
    if not words or words <= content_tokens(text):
        return text
    return f"{title}: {text}"


def _day_of(entries: FileEntries, path: str, at: int) -> str | None:
    """The day an entry was written: its own ``date=`` (or its section's), else its file's name."""
    for unit in (
        next((u for u in entries.blocks if u.start <= at <= u.end), None),
        next((u for u in entries.headings if u.start <= at <= u.end), None),
    ):
        if unit is not None and unit.meta is not None and unit.meta.date:
            return unit.meta.date
    day = name_date(path)
    return day.isoformat() if day else None


class _Memory:
    """The agent's memory files, read once, for what a fact is checked
    against: the later notes that may replace it, the entries retired."""

    def __init__(self, agent: AgentConfig):
        self.agent = agent
        self._read: list[tuple[str, str | None, FileEntries]] | None = None

    def files(self) -> list[tuple[str, str | None, FileEntries]]:
        if self._read is None:
            from .discovery import discover_memory_files

            found, _ = discover_memory_files(self.agent.workspace, self.agent.extra_path_list(), self.agent.settings.max_file_bytes)
            self._read = []
            for f in found:
                text = _read(self.agent, f.path)
                if text is not None:
                    day = name_date(f.path)
                    self._read.append((f.path, day.isoformat() if day else None, parse_entries(text)))
        return self._read

    def older_side(self, fact: ConsolidatedFact) -> str | None:
        """Why ``fact`` is the older side of a changed fact, else None: a
        live entry written after it announces the change, or a retired
        entry said the same and was retired on or after the fact's day."""
        mine = content_tokens(fact.text)
        for path, day, entries in self.files():
            for unit in entries.blocks:
                info = entries.span_info(unit.start, unit.end)
                text = " ".join(strip_meta(entries.lines[n - 1]) for n in range(unit.start, unit.end + 1))
                where = cite_lines(path, unit.start, unit.end)
                if where == fact.source:
                    continue
                written = (unit.meta.date if unit.meta and unit.meta.date else None) or day
                if info.status == "live":
                    if written and fact.date and written > fact.date and changes.announces_change(text):
                        if changes.replaces(text, fact.text, content_tokens(text), mine):
                            return f"replaced by a later note ({where})"
                    continue
                retired_on = unit.meta.superseded or unit.meta.forgotten if unit.meta else None
                if retired_on and (fact.date is None or fact.date <= retired_on) and similarity(fact.text, text) >= NEAR_DUPLICATE:
                    return f"{where} said it and is {info.status} (no longer true)"
        return None


def _why_not(fact: ConsolidatedFact, info: LineInfo) -> str | None:
    """Why a qualifying fact is not proposed (None: it is)."""
    if info.status != "live":
        return f"{info.status} (no longer true)"
    if info.untrusted:
        return "marked untrusted"
    if instruction_like(fact.text):
        return "reads as instructions to a model"
    return None
