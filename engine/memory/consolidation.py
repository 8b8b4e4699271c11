"""Consolidation: the daily-note facts that searches keep returning,
proposed for ``MEMORY.md`` (DESIGN.md §17, "Consolidation").

The rule: a line of a daily note (``memory/YYYY-MM-DD.md``) qualifies
when the use log (:mod:`.use_log`) holds at least :data:`MIN_USES` uses of
it on at least :data:`MIN_DAYS` different days, and their decayed sum
(each use counts ``0.5 ** (age_days / HALF_LIFE_DAYS)``) reaches
:data:`MIN_SCORE`. A fact asked for on two days is one an agent keeps
needing; one asked for twice in one conversation may not be. The best
:data:`MAX_FACTS` are proposed, most used first.

Left out, with the reason: forgotten or superseded entries, untrusted
ones, lines that read as instructions, and lines ``MEMORY.md`` already
says, exactly or nearly (the duplicate check of capture, :mod:`.capture`).
A use whose line was edited since (its hash no longer matches that line
or any other of the file) no longer counts.

The proposal is the lines to append to ``MEMORY.md`` under a
``## Consolidated`` heading, each citing its source in its metadata
comment (``from=memory/2026-03-01.md:12``), and the unified diff of the
file that appending them makes. Applying appends them through
:func:`~.append.append_entry` (the writer lock, one ``O_APPEND`` write,
undone on a full disk): nothing in ``MEMORY.md`` is changed and the daily
notes stay as they are.
"""

from __future__ import annotations

import re
import time
from dataclasses import asdict, dataclass
from datetime import date, datetime
from typing import Iterable

from ..config import AgentConfig
from ..errors import MemextError
from .append import LONG_TERM_FILE, format_entry, separator
from .capture import known_memory
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

    @property
    def line(self) -> str:
        """The line appended: ``- TEXT <!-- memext from=SOURCE -->``."""
        return f"- {self.text} {EntryMeta(extra=(('from', self.source),)).render()}"

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
    ranked: list[tuple[ConsolidatedFact, FileEntries, int]] = []
    for path, file_uses in sorted(by_file.items()):
        text = _read(agent, path)
        if text is None:
            continue
        entries = parse_entries(text)
        for number, times in _uses_by_line(entries, file_uses).items():
            fact = _qualifies(entries, path, number, times, now)
            if fact is not None:
                ranked.append((fact, entries, number))
    ranked.sort(key=lambda r: (-r[0].score, r[0].source))
    facts: list[ConsolidatedFact] = []
    left_out: list[LeftOutFact] = []
    for fact, entries, number in ranked:
        reason = _why_not(fact, entries.info(number))
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


def preview(long_term: str | None, facts: list[ConsolidatedFact], via: str, now: datetime) -> str:
    """The unified diff of ``MEMORY.md`` that appending ``facts`` makes
    ("" with none), as :func:`~.append.append_entry` would write them."""
    if not facts:
        return ""
    import difflib

    before = long_term or ""
    entry = format_entry(body(facts), now, heading=HEADING, meta=entry_meta(via, now))
    after = before + separator(before.encode("utf-8")) + entry
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


def _qualifies(entries: FileEntries, path: str, number: int, times: list[float], now: datetime) -> ConsolidatedFact | None:
    """The fact on line ``number`` when its uses meet the rule, else None."""
    days = {date.fromtimestamp(t) for t in times}
    if len(times) < MIN_USES or len(days) < MIN_DAYS:
        return None
    at = now.timestamp()
    score = sum(0.5 ** (max(0.0, at - t) / 86400 / HALF_LIFE_DAYS) for t in times)
    line = entries.lines[number - 1]
    if score < MIN_SCORE or _HEADING.match(line):
        return None
    text = " ".join(_MARKER.sub("", split_meta(line)[0]).split())
    if not text:
        return None
    last = time.strftime("%Y-%m-%d", time.localtime(max(times)))
    return ConsolidatedFact(text, f"{path}:{number}", len(times), len(days), last, score)


def _why_not(fact: ConsolidatedFact, info: LineInfo) -> str | None:
    """Why a qualifying fact is not proposed (None: it is)."""
    if info.status != "live":
        return f"{info.status} (no longer true)"
    if info.untrusted:
        return "marked untrusted"
    if instruction_like(fact.text):
        return "reads as instructions to a model"
    return None
