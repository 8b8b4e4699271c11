"""Entry metadata kept in the Markdown itself (DESIGN.md §17).

An entry's metadata is an HTML comment at the end of its first line::

    ## 2026-11-27 10:42 <!-- memext origin=agent via=tool category=fact importance=0.6 date=2026-11-27 -->
    - I prefer tea <!-- memext forgotten=2026-11-28 reason="switched to coffee" -->

Rendered Markdown hides it; read as text it is one line of ``key=value``
pairs. Why the end of the first line: marking an entry (forgotten,
superseded) then changes no line count, so every citation into the file
stays true.

The parser tolerates what a person does to a file by hand: keys in any
order and any case, spaces around ``=`` (or ``:``), commas or semicolons
between pairs, single or double quotes, unknown keys (kept when a mark is
added), values it cannot read (ignored) and a deleted comment (the entry is
then plain text: no origin, not marked).

Scope of a mark: on a heading it covers the section up to the next
heading; on another line it covers that line's block (a list item or a
paragraph, up to the next item, blank line or heading).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from datetime import date
from typing import Iterable, NamedTuple, Sequence

#: Where an entry came from: a person (CLI, notebook, Python API), an agent
#: through a tool, or captured from a conversation.
ORIGINS = ("person", "agent", "capture")
CATEGORIES = ("preference", "fact", "decision", "entity", "other")

_COMMENT_RE = re.compile(r"\s*<!--\s*memext\b\s*:?(?P<body>.*?)-->\s*$", re.IGNORECASE)
_PAIR_RE = re.compile(r"""(?P<key>[A-Za-z_][\w-]*)\s*(?:[=:]\s*(?P<value>"(?:[^"\\]|\\.)*"|'[^']*'|[^\s,;"']+))?""")
_HEADING_RE = re.compile(r"^ {0,3}(#{1,6})(?:\s|$)")
_ITEM_RE = re.compile(r"^\s*(?:[-*+]|\d{1,9}[.)])\s")
_FENCE_RE = re.compile(r"^ {0,3}(```|~~~)")
_WORD_IMPORTANCE = {"low": 0.3, "medium": 0.5, "normal": 0.5, "high": 0.8, "critical": 1.0}
#: Written in this order; keys a person added by hand follow.
_KEY_ORDER = ("origin", "via", "category", "importance", "date", "supersedes", "untrusted", "forgotten", "superseded", "by", "reason")


@dataclass(frozen=True)
class EntryMeta:
    """What the comment on an entry's first line says.

    ``forgotten`` / ``superseded``: the date the entry stopped being true
    (None: it still is); ``by`` the citation of the entry that replaced it;
    ``supersedes`` (on the new entry) the citation it replaces.
    ``extra`` keeps keys memext does not know, so a rewrite keeps them.
    """

    origin: str | None = None
    via: str | None = None
    category: str | None = None
    importance: float | None = None
    date: str | None = None
    supersedes: str | None = None
    untrusted: bool = False
    forgotten: str | None = None
    superseded: str | None = None
    by: str | None = None
    reason: str | None = None
    extra: tuple[tuple[str, str], ...] = field(default=())

    @property
    def retired(self) -> bool:
        """True when the entry is forgotten or superseded."""
        return self.forgotten is not None or self.superseded is not None

    @property
    def source(self) -> str | None:
        """The citation of the entry this one was copied from (``from=``,
        written by consolidation), else None."""
        return next((v for k, v in self.extra if k.lower() == "from" and v), None)

    @property
    def status(self) -> str:
        """``live``, ``forgotten`` or ``superseded``."""
        if self.superseded is not None:
            return "superseded"
        return "forgotten" if self.forgotten is not None else "live"

    def is_empty(self) -> bool:
        return self == EntryMeta()

    def render(self) -> str:
        """The comment, ``<!-- memext key=value ... -->`` (empty for no metadata)."""
        values = {k: getattr(self, k) for k in _KEY_ORDER}
        parts: list[str] = []
        for key in _KEY_ORDER:
            value = values[key]
            if value is None or value is False:
                continue
            if value is True:
                parts.append(key)
            elif isinstance(value, float):
                parts.append(f"{key}={value:g}")
            else:
                parts.append(f"{key}={_quote(str(value))}")
        parts += [f"{k}={_quote(v)}" if v else k for k, v in self.extra]
        return f"<!-- memext {' '.join(parts)} -->" if parts else ""


def _quote(value: str) -> str:
    if value and not re.search(r"[\s,;\"'=]", value):
        return value
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", " ") + '"'


def _unquote(raw: str | None) -> str:
    if raw is None:
        return ""
    if len(raw) >= 2 and raw[0] == raw[-1] and raw[0] in "\"'":
        inner = raw[1:-1]
        return re.sub(r"\\(.)", r"\1", inner) if raw[0] == '"' else inner
    return raw


def split_meta(line: str) -> tuple[str, EntryMeta | None]:
    """A line without its metadata comment, and the metadata (None: no comment)."""
    m = _COMMENT_RE.search(line)
    if m is None:
        return line, None
    return line[: m.start()], parse_meta(m.group("body"))


def strip_meta(line: str) -> str:
    """``line`` without a metadata comment: what is indexed, so that the
    words of the comment (origin, forgotten...) never match a query."""
    if "<!--" not in line:
        return line
    m = _COMMENT_RE.search(line)
    return line if m is None else line[: m.start()]


def parse_meta(body: str) -> EntryMeta:
    """The ``key=value`` pairs of a comment's body, read leniently."""
    known: dict[str, object] = {}
    extra: list[tuple[str, str]] = []
    for m in _PAIR_RE.finditer(body):
        key = m.group("key").lower().replace("-", "_")
        raw = m.group("value")
        value = _unquote(raw).strip()
        if key == "untrusted":
            known[key] = value.lower() not in ("false", "no", "0")
        elif key == "importance":
            number = _importance(value)
            if number is not None:
                known[key] = number
        elif key in ("forgotten", "superseded"):
            # A bare flag (forgotten) still marks the entry; its date is unknown.
            known[key] = value or "yes"
        elif key in ("origin", "category"):
            if value:
                known[key] = value.lower()
        elif key in _KEY_ORDER:
            if value:
                known[key] = value
        else:
            extra.append((m.group("key"), value))
    return EntryMeta(**known, extra=tuple(extra))  # type: ignore[arg-type]


def _importance(value: str) -> float | None:
    word = _WORD_IMPORTANCE.get(value.lower())
    if word is not None:
        return word
    try:
        number = float(value)
    except ValueError:
        return None
    return min(max(number, 0.0), 1.0)


def with_meta(line: str, meta: EntryMeta) -> str:
    """``line`` with its comment replaced by ``meta``'s (added when it had none)."""
    bare, _old = split_meta(line)
    comment = meta.render()
    bare = bare.rstrip()
    return f"{bare} {comment}" if comment else bare


# -- the entries of a file ------------------------------------------------------


class Retired(NamedTuple):
    """Why an entry no longer holds: ``status`` forgotten or superseded,
    ``by`` the entry that replaced it (when said), ``reason`` (when given)."""

    status: str
    by: str | None = None
    reason: str | None = None

    @property
    def why(self) -> str:
        """The words search shows for it: ``superseded by PATH:LINE``, ``forgotten``."""
        return f"{self.status} by {self.by}" if self.by else self.status


@dataclass(frozen=True)
class Unit:
    """A span of lines one metadata comment speaks for (1-based, inclusive):
    a heading's section, or a block (list item, paragraph) inside one."""

    start: int
    end: int
    heading: bool
    meta: EntryMeta | None


@dataclass(frozen=True)
class LineInfo:
    """What applies to one line: its origin, whether it is retired, untrusted,
    and the importance and category its entry was stored with (None: not said)."""

    origin: str | None
    status: str
    untrusted: bool
    heading_unit: Unit | None
    block_unit: Unit | None
    importance: float | None = None
    category: str | None = None


@dataclass(frozen=True)
class FileEntries:
    """The units of one file, by line."""

    lines: tuple[str, ...]
    headings: tuple[Unit, ...]
    blocks: tuple[Unit, ...]

    def info(self, number: int) -> LineInfo:
        """What applies to line ``number`` (the block's metadata first, then its section's)."""
        section = _containing(self.headings, number)
        block = _containing(self.blocks, number)
        metas = [u.meta for u in (block, section) if u is not None and u.meta is not None]
        origin = next((m.origin for m in metas if m.origin), None)
        retired = next((m for m in metas if m.retired), None)
        return LineInfo(
            origin=origin,
            status=retired.status if retired else "live",
            untrusted=any(m.untrusted for m in metas),
            heading_unit=section,
            block_unit=block,
            importance=next((m.importance for m in metas if m.importance is not None), None),
            category=next((m.category for m in metas if m.category), None),
        )

    def span_info(self, start: int, end: int) -> LineInfo:
        """What applies to the lines ``start..end`` as one result: retired
        only when every line with text in it is; origin and untrusted from
        the lines with text."""
        infos = [(n, self.info(n)) for n in range(max(start, 1), min(end, len(self.lines)) + 1) if self.lines[n - 1].strip()]
        body = [i for n, i in infos if not _HEADING_RE.match(self.lines[n - 1])] or [i for _, i in infos]
        if not body:
            return LineInfo(None, "live", False, None, None)
        statuses = {i.status for i in body}
        status = statuses.pop() if len(statuses) == 1 else "live"
        return LineInfo(
            origin=next((i.origin for i in body if i.origin), None),
            status=status,
            untrusted=any(i.untrusted for i in body),
            heading_unit=body[0].heading_unit,
            block_unit=body[0].block_unit,
            importance=max((i.importance for i in body if i.importance is not None), default=None),
            category=next((i.category for i in body if i.category), None),
        )

    def retired(self, number: int) -> Retired | None:
        """Why line ``number``'s entry no longer holds, when the line has
        text and it does not; None while it does."""
        if not 0 < number <= len(self.lines) or not self.lines[number - 1].strip():
            return None
        info = self.info(number)
        if info.status == "live":
            return None
        meta = next((u.meta for u in (info.block_unit, info.heading_unit) if u is not None and u.meta is not None and u.meta.retired), None)
        if meta is None:
            return Retired(info.status)
        return Retired(info.status, meta.by if meta.superseded else None, meta.reason)

    def units_in(self, start: int, end: int) -> list[Unit]:
        """The units a mark on lines ``start..end`` goes to: each section
        whose heading is in the range and has text under it, and each block
        in the range outside those sections (the block holding ``start``
        when nothing else is)."""
        chosen: list[Unit] = []
        for u in self.headings:
            if start <= u.start <= end and any(self.lines[n - 1].strip() for n in range(u.start + 1, u.end + 1)):
                chosen.append(u)
        for b in self.blocks:
            inside_chosen = any(h.start <= b.start <= h.end for h in chosen)
            if not inside_chosen and (start <= b.start <= end or b.start <= start <= b.end):
                chosen.append(b)
        if not chosen:
            section = _containing(self.headings, start)
            if section is not None:
                chosen.append(section)
        return sorted(chosen, key=lambda u: u.start)


def _containing(units: Sequence[Unit], number: int) -> Unit | None:
    for u in units:
        if u.start <= number <= u.end:
            return u
    return None


def parse_entries(text: str | Iterable[str]) -> FileEntries:
    """The sections and blocks of a Markdown file, with their metadata.

    Headings inside fenced code blocks are text, not sections."""
    lines = tuple(text.split("\n") if isinstance(text, str) else text)
    heading_starts: list[int] = []
    block_starts: list[tuple[int, int]] = []  # (start, end)
    in_fence = False
    open_block: int | None = None
    for i, line in enumerate(lines, start=1):
        if _FENCE_RE.match(line):
            in_fence = not in_fence
            if open_block is None:
                open_block = i
            continue
        if in_fence:
            continue
        if _HEADING_RE.match(line):
            if open_block is not None:
                block_starts.append((open_block, i - 1))
                open_block = None
            heading_starts.append(i)
        elif not line.strip():
            if open_block is not None:
                block_starts.append((open_block, i - 1))
                open_block = None
        elif _ITEM_RE.match(line) and not line.startswith((" ", "\t")):
            if open_block is not None:
                block_starts.append((open_block, i - 1))
            open_block = i
        elif open_block is None:
            open_block = i
    if open_block is not None:
        block_starts.append((open_block, len(lines)))
    headings = tuple(
        Unit(
            s,
            _trim(lines, s, (heading_starts[k + 1] - 1) if k + 1 < len(heading_starts) else len(lines)),
            True,
            split_meta(lines[s - 1])[1],
        )
        for k, s in enumerate(heading_starts)
    )
    blocks = tuple(Unit(s, _trim(lines, s, e), False, split_meta(lines[s - 1])[1]) for s, e in block_starts)
    return FileEntries(lines, headings, blocks)


def _trim(lines: Sequence[str], start: int, end: int) -> int:
    while end > start and not lines[end - 1].strip():
        end -= 1
    return end


def mark_lines(lines: Sequence[str], units: Sequence[Unit], mark: "Mark") -> list[str]:
    """``lines`` with ``mark`` merged into the comment on each unit's first line."""
    out = list(lines)
    for u in units:
        line = out[u.start - 1]
        ending = "\r" if line.endswith("\r") else ""  # a CRLF file stays CRLF
        bare, old = split_meta(line.removesuffix("\r"))
        out[u.start - 1] = with_meta(bare, mark.apply(old or EntryMeta())) + ending
    return out


@dataclass(frozen=True)
class Mark:
    """Retiring an entry: forgotten (``by`` None) or superseded by ``by``."""

    day: str
    reason: str | None = None
    by: str | None = None

    def apply(self, meta: EntryMeta) -> EntryMeta:
        if self.by is not None:
            return replace(meta, superseded=self.day, by=self.by, reason=self.reason or meta.reason)
        return replace(meta, forgotten=self.day, reason=self.reason or meta.reason)


def today() -> str:
    return date.today().isoformat()
