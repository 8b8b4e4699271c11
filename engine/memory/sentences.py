"""The sentences of a message, cut by a maintained segmenter
(`sentencex <https://pypi.org/project/sentencex/>`_, Wikimedia's rules for
some 300 languages, abbreviation lists included), not at every full stop:
"my dentist is Dr. Almeida", "at 9:15 a.m. every day", "J. K. Harris",
"z. B.", "la Dra. García" and "3.5" stay whole (DESIGN.md §17).

A message's language is not known, and people mix them (a German sentence
naming "Dr. Almeida", an English one saying "7 p.m."). Each language's
rules know its own abbreviations, so a boundary is kept only where the
rules of every language capture reads put one. The two ways to be wrong
are not worth the same: a boundary missed leaves two sentences in one
candidate, the fact still whole; a boundary too many cuts a fact in two
and stores half of it. For the same reason a boundary before a lowercase
letter is dropped: in the scripts that have case, a sentence does not
start with one, and an abbreviation no list holds ("n.º 7, 2.º izq.")
is the likelier reading. Line breaks always end a sentence: a chat
message's lines are separate statements.
"""

from __future__ import annotations

import re

#: The languages whose sentence rules are combined: those capture's
#: triggers are written in (engine/memory/capture.py).
LANGUAGES = ("en", "de", "fr", "es", "zh", "ja")

_LINE = re.compile(r"[^\r\n]+")


def sentences(text: str) -> list[str]:
    """The sentences of ``text``, stripped, in order."""
    out: list[str] = []
    for line in _LINE.findall(text):
        if not line.strip():
            continue
        cuts = sorted(c for c in set.intersection(*(_boundaries(language, line) for language in LANGUAGES)) if not line[c].islower())
        start = 0
        for end in [*cuts, len(line)]:
            piece = line[start:end].strip()
            if piece:
                out.append(piece)
            start = end
    return out


def _boundaries(language: str, line: str) -> set[int]:
    """Where the rules of ``language`` end a sentence inside ``line``
    (offsets of the character after each sentence but the last)."""
    import sentencex

    cuts: set[int] = set()
    at = 0
    for piece in sentencex.segment(language, line):
        found = line.find(piece, at)
        if found < 0:  # the segmenter changed the text: trust no boundary of it
            return set()
        at = found + len(piece)
        while at < len(line) and line[at].isspace():  # languages differ on whose the space is
            at += 1
        cuts.add(at)
    cuts.discard(len(line))
    return cuts
