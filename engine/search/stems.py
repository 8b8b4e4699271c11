"""Where a text holds a query term by stem, as the keyword index sees it.

The index matches Porter stems ("caching" finds "We cache vessel
lookups"), but :func:`~..text.find_terms` finds whole words. A hit's
excerpt and snippet must show the line that made it a hit, so the words of
the shown text are stemmed by SQLite's own tokenizer
(:func:`~..store.tokenizer.fts_tokenize`, the index's ``FTS_TOKENIZER``) and compared
with the stems of the query terms. Only texts whose words line up one to
one with the tokenizer's tokens are stemmed (Latin-script text); CJK grams
are found as substrings already.
"""

from __future__ import annotations

import re
from typing import Sequence

from ..store.tokenizer import fts_tokenize
from ..text import FTS_TOKENIZER, fold, fts_document, is_cjk

#: A word of ASCII text, as :func:`~..text.words` and unicode61 cut it.
_WORD = re.compile(r"[A-Za-z0-9]+")
#: Stems of query terms and of the words of the hits' lines, per process:
#: the same words recur search after search, and asking SQLite's tokenizer
#: costs a throwaway in-memory table (about 0.7 ms a call).
_TERM_STEMS: dict[str, str] = {}
#: Past this many words the cache starts over (a few MB at most).
_MAX_STEMS = 50_000


def term_stems(terms: Sequence[str]) -> dict[str, str]:
    """The Porter stem of each (folded) Latin-script term."""
    new = [t for t in terms if t not in _TERM_STEMS and not is_cjk(t[:1])]
    if new:
        for term, tokens in zip(new, fts_tokenize(FTS_TOKENIZER, new)):
            _TERM_STEMS[term] = tokens[0] if len(tokens) == 1 else term
        if len(_TERM_STEMS) > _MAX_STEMS:
            _TERM_STEMS.clear()
            return term_stems(terms)
    return {t: _TERM_STEMS[t] for t in terms if t in _TERM_STEMS}


def find_stems(text: str, terms: Sequence[str]) -> dict[str, list[int]]:
    """Where each term occurs in ``text`` as a word of the same stem, start
    offsets ascending (whole-word matches included): the terms found, in
    the order of ``terms``. Empty for non-ASCII text (see the module
    docstring)."""
    stems = term_stems(terms)
    if not stems or not text.isascii():
        return {}
    wanted: dict[str, list[str]] = {}
    for term, stem in stems.items():
        wanted.setdefault(stem, []).append(term)
    # Stemming only words that could share a stem with a term keeps the
    # tokenizer's work small: a stem is a prefix of its word, give or take
    # a final "y"/"i" (Porter's "happy" -> "happi").
    maybe = _head_words(fold(text), {s[:3] for s in wanted})
    if not maybe:
        return {}
    # A word the tokenizer does not make one token of maps to itself.
    word_stems = term_stems(list({m.group().lower() for m in maybe}))
    found: dict[str, list[int]] = {}
    for m in maybe:
        for term in wanted.get(word_stems.get(m.group().lower(), ""), ()):
            found.setdefault(term, []).append(m.start())
    return {t: found[t] for t in terms if t in found}


def _head_words(folded: str, heads: set[str]) -> list[re.Match[str]]:
    """The words of ``folded`` (ASCII, lower-case) whose first three letters
    (the whole word, if shorter) are one of ``heads``, in text order. Each
    head is looked for with ``str.find``, so a chunk is not cut into all
    its words first (twenty times the work on a chunk of 240 words)."""
    out: list[re.Match[str]] = []
    for head in heads:
        at = folded.find(head)
        while at != -1:
            if at == 0 or not folded[at - 1].isalnum():  # the start of a word (ASCII: letters and digits)
                word = _WORD.match(folded, at)
                if word is not None and word.group()[:3] == head:
                    out.append(word)
            at = folded.find(head, at + 1)
    out.sort(key=lambda m: m.start())
    return out


def with_stems(text: str, terms: Sequence[str], found: dict[str, list[int]]) -> dict[str, list[int]]:
    """``found`` (:func:`~..text.find_terms` of ``text``) with the stem
    matches of :func:`find_stems` added, offsets ascending."""
    extra = find_stems(text, [t for t in terms if not re.fullmatch(r"\d+", t)])
    if not extra:
        return found
    out: dict[str, list[int]] = {}
    for t in terms:
        at = sorted(set(found.get(t, ())) | set(extra.get(t, ())))
        if at:
            out[t] = at
    return out


#: The index terms of query terms met so far (:func:`index_terms`).
_TERM_TOKENS: dict[str, tuple[str, ...]] = {}


def index_terms(terms: Sequence[str]) -> dict[str, tuple[str, ...]]:
    """The terms the keyword index makes of each (folded) query term: its
    Porter stem, a CJK gram itself; what an entry's stems are compared
    with (:func:`~..memory.index_entries.entry_stems`)."""
    new = [t for t in dict.fromkeys(terms) if t not in _TERM_TOKENS]
    if new:
        if len(_TERM_TOKENS) > _MAX_STEMS:
            _TERM_TOKENS.clear()
        for term, tokens in zip(new, fts_tokenize(FTS_TOKENIZER, [fts_document(t) for t in new])):
            _TERM_TOKENS[term] = tuple(tokens) or (term,)
    return {t: _TERM_TOKENS.get(t, (t,)) for t in terms}
