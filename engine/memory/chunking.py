"""Splitting Markdown (and transcript lines) into overlapping chunks.

Budgets are in estimated tokens (chars/4, a CJK character counting as one
token, see :mod:`engine.text`). The cap holds for a chunk's whole text,
overlap included; a line is only split when it alone is over budget, and a
split line's pieces never overlap, so long lines yield no duplicate chunks.
When a Markdown heading falls in the second half of a full chunk, the chunk
ends before the heading, so sections start chunks of their own.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Iterable, Sequence

from ..text import is_cjk, safe_cut, token_weight
from .entries import strip_meta

#: A heading past this share of the budget ends the chunk before it.
HEADING_ZONE = 0.5
_HEADING = re.compile(r"^ {0,3}#{1,6}(?:[ \t]|$)")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_LINE_BREAK = re.compile(r"\r\n|\r|\n")


@dataclass(frozen=True)
class Chunk:
    """A piece of a file: 1-based inclusive line range and its text."""

    start_line: int
    end_line: int
    text: str

    @functools.cached_property
    def hash(self) -> str:
        # Remembered: a sync asks for it three times per chunk (cache key,
        # chunk id, row).
        return text_hash(self.text)


@dataclass(frozen=True)
class _Segment:
    line: int
    text: str
    weight: int  # quarter tokens, including the line break that joins it
    heading: bool
    continues: bool  # a later piece of a split line: joins without a break


def text_hash(text: str) -> str:
    """sha256 of the UTF-8 text (the embedding cache key)."""
    import hashlib  # here: OpenSSL's start costs a one-shot search that hashes nothing

    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def split_lines(text: str) -> list[str]:
    """Lines as editors number them (LF, CRLF or CR); no trailing empty line."""
    lines = _LINE_BREAK.split(text)
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def chunk_markdown(text: str, tokens: int = 400, overlap: int = 80) -> list[Chunk]:
    """Chunk a Markdown document; line numbers are 1-based. Entry metadata
    comments are not indexed (DESIGN.md §17)."""
    lines = [strip_meta(line) for line in split_lines(text)]
    return chunk_lines(list(enumerate(lines, start=1)), tokens, overlap, headings=_heading_flags(lines))


def chunk_lines(
    lines: Sequence[tuple[int, str]],
    tokens: int = 400,
    overlap: int = 80,
    headings: Sequence[bool] | None = None,
) -> list[Chunk]:
    """Chunk numbered lines (several lines may share a number, as in
    transcripts where one JSONL record renders to many lines)."""
    if tokens <= 0 or not 0 <= overlap < tokens:
        raise ValueError(f"need 0 <= overlap < tokens, got tokens={tokens} overlap={overlap}")
    budget = tokens * 4
    overlap_budget = overlap * 4
    segments = list(_segments(lines, headings or [False] * len(lines), budget))
    chunks: list[Chunk] = []
    cur: list[_Segment] = []
    cur_weight = 0
    i = 0
    while i < len(segments):
        seg = segments[i]
        if cur and cur_weight + seg.weight > budget:
            cut = _heading_cut(cur, budget)
            _emit(cur[:cut], chunks)
            if cut < len(cur):
                # A new section starts here: it needs no overlap.
                cur = cur[cut:]
            else:
                cur = _tail(cur, overlap_budget)
                while cur and sum(s.weight for s in cur) + seg.weight > budget:
                    cur.pop(0)
            cur_weight = sum(s.weight for s in cur)
            continue
        cur.append(seg)
        cur_weight += seg.weight
        i += 1
    _emit(cur, chunks)
    return chunks


def _heading_flags(lines: Sequence[str]) -> list[bool]:
    """Which lines are ATX headings (not inside fenced code blocks)."""
    flags = []
    fence: str | None = None
    for line in lines:
        m = _FENCE.match(line)
        if m:
            marker = m.group(1)
            if fence is None:
                fence = marker[0] * 3
            elif marker.startswith(fence):
                fence = None
            flags.append(False)
            continue
        flags.append(fence is None and bool(_HEADING.match(line)))
    return flags


def _segments(lines: Iterable[tuple[int, str]], headings: Sequence[bool], budget: int) -> Iterable[_Segment]:
    for (number, text), heading in zip(lines, headings):
        weight = token_weight(text) + 1  # +1 for the line break
        if weight <= budget:
            yield _Segment(number, text, weight, heading, False)
            continue
        for k, piece in enumerate(_split_long_line(text, budget - 1)):
            yield _Segment(number, piece, token_weight(piece) + (1 if k == 0 else 0), heading and k == 0, k > 0)


def _split_long_line(text: str, budget: int) -> list[str]:
    """Split one over-long line into pieces of at most ``budget`` quarter
    tokens, preferring to break after white space near the end of a piece."""
    pieces = []
    pos, n = 0, len(text)
    uniform = token_weight(text) == n  # no CJK: one character, one unit
    while pos < n:
        # The longest piece from pos within budget (CJK characters weigh 4).
        if uniform:
            end = min(n, pos + budget)
        else:
            end, weight = pos, 0
            while end < n:
                w = 4 if is_cjk(text[end]) else 1
                if weight + w > budget:
                    break
                weight += w
                end += 1
        if end >= n:
            pieces.append(text[pos:])
            break
        piece = safe_cut(text[pos:end], end - pos) or text[pos : pos + 1]
        space = max(piece.rfind(" "), piece.rfind("\t"))
        if space >= len(piece) * 0.8:
            piece = piece[: space + 1]
        pieces.append(piece)
        pos += len(piece)
    return pieces


def _heading_cut(cur: list[_Segment], budget: int) -> int:
    """Index of a heading to end the chunk before, or len(cur).

    A heading in the zone wins; a heading that would be the chunk's last
    content is always moved to the next chunk, to stay with its section.
    """
    weight_before = 0
    best = len(cur)
    for j, seg in enumerate(cur):
        if j > 0 and seg.heading and weight_before >= budget * HEADING_ZONE:
            best = j
        weight_before += seg.weight
    last = len(cur) - 1
    while last > 0 and not cur[last].text.strip():
        last -= 1
    if last > 0 and cur[last].heading and any(s.text.strip() for s in cur[:last]):
        best = min(best, last)
    return best


def _tail(segs: list[_Segment], overlap_budget: int) -> list[_Segment]:
    """The trailing segments that fit in the overlap budget."""
    out: list[_Segment] = []
    weight = 0
    for seg in reversed(segs):
        if weight + seg.weight > overlap_budget:
            break
        out.insert(0, seg)
        weight += seg.weight
    # An overlap that starts mid-line would repeat a fragment: drop it.
    while out and out[0].continues:
        out.pop(0)
    return out


def _emit(segs: list[_Segment], chunks: list[Chunk]) -> None:
    """Append the chunk made of ``segs`` unless it is blank or a repeat
    (identical pieces of one long line would otherwise share a chunk id)."""
    # Trim blank lines at both ends so citations point at content.
    start, end = 0, len(segs)
    while start < end and not segs[start].text.strip():
        start += 1
    while end > start and not segs[end - 1].text.strip():
        end -= 1
    segs = segs[start:end]
    if not segs:
        return
    parts = []
    for k, seg in enumerate(segs):
        if k and not seg.continues:
            parts.append("\n")
        parts.append(seg.text)
    chunk = Chunk(segs[0].line, segs[-1].line, "".join(parts))
    if chunk.start_line == chunk.end_line and chunk in chunks[-64:]:
        return
    chunks.append(chunk)
