"""A memory file cut into its entries, the unit search judges (DESIGN.md §7).

An entry is what a person wrote as one thing: a list item with its
continuation lines, or a paragraph (DESIGN.md §17's block, the span a mark
covers, found by :func:`~.entries.parse_entries`), or one message of a
session transcript. Headings are not entries: they title the entries
under them. The index keeps each entry's lines, its vector and the stems
of its words (:mod:`engine.indexing.sync`), so a search tells which entry
of a chunk answers, however many entries share a name.
"""

from __future__ import annotations

from itertools import groupby
from typing import NamedTuple, Sequence

from ..store.tokenizer import fts_tokenize
from ..text import FTS_TOKENIZER, fts_document
from .entries import parse_entries, strip_meta


class EntryText(NamedTuple):
    """One entry: its 1-based inclusive lines and its text (metadata
    comments left out, as the chunks hold it)."""

    start_line: int
    end_line: int
    text: str


def markdown_entries(text: str) -> list[EntryText]:
    """The entries of a Markdown file, in line order (see the module docstring)."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    parsed = parse_entries(lines)
    out: list[EntryText] = []
    for block in parsed.blocks:
        body = "\n".join(strip_meta(line).rstrip() for line in lines[block.start - 1 : block.end]).strip()
        if body:
            out.append(EntryText(block.start, block.end, body))
    return out


def transcript_entries(lines: Sequence[tuple[int, str]]) -> list[EntryText]:
    """The entries of a rendered transcript: one per message (the lines a
    JSONL record renders to share its line number)."""
    out: list[EntryText] = []
    for number, group in groupby(lines, key=lambda line: line[0]):
        body = "\n".join(text for _, text in group).strip()
        if body:
            out.append(EntryText(number, number, body))
    return out


def entry_stems(texts: Sequence[str]) -> list[str]:
    """Each text's index terms (as the keyword index makes them: Porter
    stems, CJK grams), each once, space-separated and sorted: an entry's
    keyword statistics as the index keeps them."""
    if not texts:
        return []
    return [" ".join(sorted(set(tokens))) for tokens in fts_tokenize(FTS_TOKENIZER, [fts_document(t) for t in texts])]
