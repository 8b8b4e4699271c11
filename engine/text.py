"""Language-aware text helpers: token estimates, word tokens, CJK bigrams.

SQLite's ``unicode61`` tokenizer splits on spaces and punctuation, which
leaves Chinese and Japanese sentences (written without spaces) as one huge
token that no query can match. We therefore rewrite runs of CJK, kana and
hangul characters as overlapping bigrams plus single characters before they
reach FTS5, on both the document and the query side, so that a
two-character word such as 咖啡 is a token of its own.

FTS5's ``porter`` stemmer wraps ``unicode61`` so that "painted" finds
"painting" (+3 points of turn_recall@6 for BM25 on the LoCoMo dev split,
bench/LOCOMO_RESULTS.md). It only strips English (ASCII) suffixes after
unicode61 has folded case and diacritics: CJK grams and words of other
languages pass through unchanged or lose an ASCII ending on both the
document and the query side alike, so they still match themselves.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from bisect import bisect_right
from typing import Sequence

from .unicode_tables import unicode_tables

# Ideographs, kana and hangul: each counts as one token in estimates and is
# indexed as bigrams.
_CJK_RANGES = (
    (0x1100, 0x11FF),  # Hangul Jamo
    (0x2E80, 0x2FDF),  # CJK radicals
    (0x3040, 0x309F),  # Hiragana
    (0x30A0, 0x30FF),  # Katakana
    (0x3100, 0x312F),  # Bopomofo
    (0x3130, 0x318F),  # Hangul compatibility Jamo
    (0x31F0, 0x31FF),  # Katakana phonetic extensions
    (0x3400, 0x4DBF),  # CJK extension A
    (0x4E00, 0x9FFF),  # CJK unified ideographs
    (0xA960, 0xA97F),  # Hangul Jamo extended A
    (0xAC00, 0xD7AF),  # Hangul syllables
    (0xF900, 0xFAFF),  # CJK compatibility ideographs
    (0xFF66, 0xFF9F),  # halfwidth katakana
    (0x20000, 0x3134F),  # CJK extensions B-G
)
_CJK_CLASS = "".join(f"{chr(a)}-{chr(b)}" for a, b in _CJK_RANGES)


# Compiled on first use (1.5 ms per process): ASCII text, what most
# queries and notes are, never needs it. One pattern serves every CJK test
# (a class of single characters took another 3.3 ms to compile).
@functools.lru_cache(maxsize=1)
def _cjk_run() -> re.Pattern:
    return re.compile(f"[{_CJK_CLASS}]+")


#: Bumped whenever the FTS text transformation changes: it is part of the
#: index fingerprint, so a change triggers a rebuild.
FTS_TOKENIZER = "porter unicode61 remove_diacritics 2 categories 'L* N* Co M*'"
FTS_VERSION = "v2-porter-cjk-bigram"


_CJK_STARTS = tuple(a for a, _ in _CJK_RANGES)


def is_cjk(ch: str) -> bool:
    """True for an ideograph, kana or hangul character (the first of ``ch``)."""
    # Looked up in the ranges, not matched with _cjk_run(): the stop words
    # ask this at import, and the pattern costs 1.5 ms to compile.
    if not ch or ch.isascii():
        return False
    code = ord(ch[0])
    at = bisect_right(_CJK_STARTS, code) - 1
    return at >= 0 and code <= _CJK_RANGES[at][1]


def token_weight(text: str) -> int:
    """Estimated tokens times four: 1 per ordinary character, 4 per CJK one.

    Working in quarter tokens keeps the chars/4 estimate exact in integers.
    """
    if text.isascii():
        return len(text)
    return len(text) + 3 * sum(map(len, _cjk_run().findall(text)))


def estimate_tokens(text: str) -> float:
    """chars/4, with a CJK/kana/hangul character counted as one token."""
    return token_weight(text) / 4


#: Words of ASCII text: letters and digits (the marks below are all non-ASCII).
_ASCII_WORD = re.compile(r"[A-Za-z0-9]+")


@functools.lru_cache(maxsize=1)
def _word_re() -> re.Pattern:
    # Word characters as unicode61 is configured (letters, numbers, private
    # use and combining marks). Python's \w lacks the marks that Indic and
    # other scripts need inside words, so add them.
    marks = unicode_tables().marks
    cls = "".join(f"{re.escape(chr(a))}-{re.escape(chr(b))}" for a, b in marks)
    return re.compile(f"(?:[^\\W_]|[{cls}])+")


def normalize(text: str) -> str:
    """NFC, so composed and decomposed accents index alike."""
    return unicodedata.normalize("NFC", text)


def fold(text: str) -> str:
    """Lower-case ``text`` the way the FTS tokenizer does (see
    :mod:`.unicode_tables`); the result has the same length as ``text``.

    Use it on both sides of every comparison of query terms with text
    ("ß" stays "ß", unlike ``str.casefold``)."""
    if text.isascii():
        return text.lower()
    return text.translate(unicode_tables().fold)


def words(text: str) -> list[str]:
    """Unicode word tokens, lower-cased as the FTS index holds them (see
    :func:`fold`; CJK runs stay whole here)."""
    if text.isascii():
        return _ASCII_WORD.findall(text.lower())
    return _word_re().findall(fold(normalize(text)))


def cjk_grams(run: str) -> list[str]:
    """Overlapping bigrams of a CJK run, then its single characters."""
    if len(run) == 1:
        return [run]
    return [run[i : i + 2] for i in range(len(run) - 1)] + list(run)


def fts_document(text: str) -> str:
    """The text handed to FTS5 for a chunk: CJK runs rewritten as grams."""
    if text.isascii():
        return text
    text = normalize(text)
    if not _cjk_run().search(text):
        return text
    return _cjk_run().sub(lambda m: " " + " ".join(cjk_grams(m.group())) + " ", text)


def query_terms(query: str, limit: int = 32) -> list[str]:
    """The distinct search terms of a query, in order.

    Latin-script words stay whole; CJK runs become their bigrams (or the
    single character), matching what :func:`fts_document` indexed.
    """
    terms: list[str] = []
    for word in words(query):
        for part in _split_cjk(word):
            if is_cjk(part[:1]):
                terms.extend([part] if len(part) == 1 else [part[i : i + 2] for i in range(len(part) - 1)])
            else:
                terms.append(part)
    return list(dict.fromkeys(terms))[:limit]


def _split_cjk(word: str) -> list[str]:
    """Split a word token into alternating CJK and non-CJK parts."""
    if word.isascii():
        return [word]
    parts = []
    pos = 0
    for m in _cjk_run().finditer(word):
        if m.start() > pos:
            parts.append(word[pos : m.start()])
        parts.append(m.group())
        pos = m.end()
    if pos < len(word):
        parts.append(word[pos:])
    return parts


#: A hex-ish token of 7+ characters with a digit in it (a commit or
#: content hash): people quote such IDs shortened, so they match as prefixes.
_ID_LIKE = re.compile(r"(?=[0-9a-f]*[0-9])[0-9a-f]{7,}")

#: The languages whose stop words leave the keyword side of a query: English
#: (what the porter stemmer serves) and those whose scripts are segmented
#: into grams (Chinese, Japanese, Korean), whose words cannot collide with
#: a Latin-script word. Other languages' lists are left out on purpose: a
#: union of all would drop real words of one language that are stop words
#: of another (German "die", French "son").
STOP_WORD_LANGUAGES = ("english", "chinese", "japanese", "korean")


def _load_stop_words() -> frozenset[str]:
    """The stop words of :data:`STOP_WORD_LANGUAGES` from the ``stopwords``
    package (a maintained list per language), folded as the index folds
    them and cut into words as queries are ("aren't" gives "aren" and "t")."""
    import stopwords

    out: set[str] = set()
    for language in STOP_WORD_LANGUAGES:
        for entry in stopwords.get_stopwords(language):
            out.update(words(entry) if not is_cjk(entry[:1]) else [entry])
    return frozenset(out)


#: Words too common to say why a chunk matched: never highlighted, never
#: sent to the keyword side of a search (DESIGN.md §7).
STOP_WORDS = _load_stop_words()


def content_terms(terms: Sequence[str]) -> list[str]:
    """The terms of a query that can carry a keyword match: no stop words.
    Empty for a query made only of stop words ("the and of")."""
    return [t for t in terms if t not in STOP_WORDS]


def is_id_like(term: str) -> bool:
    """True for a folded term that looks like a (possibly shortened) hash ID."""
    return _ID_LIKE.fullmatch(term) is not None


def ids_only(query: str) -> bool:
    """True when every content term of ``query`` looks like a hash ID
    (``a828e60``, ``deadbeef12 7f3e91c``): what such a query means is the
    string itself, and its embedding carries no meaning to match by."""
    terms = content_terms(query_terms(query))
    return bool(terms) and all(is_id_like(t) for t in terms)


def term_regex(term: str) -> str:
    r"""The regular expression that finds a folded query term in folded
    text: CJK grams as substrings, ID-like terms as word prefixes, other
    terms as whole words.

    The term comes first and the check that no word character precedes it
    is a lookbehind after it (``(?<![^\W_]term)``, the same test): a
    pattern that starts with a literal lets ``re`` jump between occurrences
    of it, about 20 times faster than trying a leading lookbehind at every
    position of a chunk."""
    if is_cjk(term[0]):
        return re.escape(term)
    lit = re.escape(term)
    if is_id_like(term):
        return rf"{lit}(?<![^\W_]{lit})[^\W_]*"
    return rf"{lit}(?<![^\W_]{lit})(?![^\W_])"


@functools.lru_cache(maxsize=1024)
def term_pattern(term: str) -> re.Pattern:
    """:func:`term_regex` compiled (remembered: snippets and excerpts ask
    for the same few terms many times per search)."""
    return re.compile(term_regex(term))


#: Occurrences of a term's letters that :func:`term_starts` checks one by
#: one; a commoner term is found by its compiled pattern instead.
FIND_LIMIT = 12


@functools.lru_cache(maxsize=4096)
def _term_kind(term: str) -> int:
    """0: a word, 1: an ID-like prefix, 2: a CJK gram (see :func:`term_regex`)."""
    return 2 if is_cjk(term[0]) else 1 if is_id_like(term) else 0


def term_starts(folded: str, term: str) -> list[int]:
    """Where :func:`term_regex` finds ``term`` in ``folded`` text: the start
    of each match, leftmost first, matches not overlapping.

    Compiling a pattern costs about 25 µs, and most query terms are new to
    a process (a one-shot search sees each once) and rare in a chunk, so
    ``str.find`` looks for the term and each occurrence is checked (a word
    character other than ``_``, what the pattern tests for, is exactly
    ``str.isalnum``); a term with more than FIND_LIMIT occurrences, mostly
    a short stop word that recurs across queries, is left to the compiled
    pattern."""
    if not term:
        return []
    kind = _term_kind(term)
    n, size = len(term), len(folded)
    out: list[int] = []
    tried = 0
    i = folded.find(term)
    while i >= 0:
        tried += 1
        if tried > FIND_LIMIT:
            return [m.start() for m in term_pattern(term).finditer(folded)]
        end = i + n
        if kind == 2:  # a substring anywhere
            out.append(i)
            i = folded.find(term, end)
            continue
        if i and folded[i - 1].isalnum():
            i = folded.find(term, i + 1)
            continue
        if kind == 1:
            while end < size and folded[end].isalnum():
                end += 1
        elif end < size and folded[end].isalnum():
            i = folded.find(term, i + 1)
            continue
        out.append(i)
        i = folded.find(term, end)
    return out


def find_terms(text: str, terms: Sequence[str]) -> dict[str, list[int]]:
    """Where each term occurs in ``text`` (folded as the index folds it,
    offsets valid in ``text``), as :func:`term_starts` finds it: the terms
    found, in the order of ``terms``. One search serves a hit's snippet and
    its excerpt."""
    folded = fold(text)
    found: dict[str, list[int]] = {}
    for t in terms:
        if t not in found:
            at = term_starts(folded, t)
            if at:
                found[t] = at
    return found


def found_in_lines(text: str, found: dict[str, list[int]], first: int, part: str) -> dict[str, list[int]]:
    """:func:`find_terms` of ``part``, the lines of ``text`` from its line
    ``first`` (0-based) on, from ``found`` (:func:`find_terms` of ``text``)
    instead of a second search: no term spans a line break, so the matches
    inside those lines are the same, with offsets moved to ``part``."""
    if part == text:
        return found
    at = 0
    for _ in range(first):
        at = text.index("\n", at) + 1
    end = at + len(part)
    inside = {t: [i - at for i in ats if at <= i < end] for t, ats in found.items()}
    return {t: ats for t, ats in inside.items() if ats}


def fts_match_expression(terms: list[str]) -> str | None:
    """An FTS5 MATCH string that ORs the terms (each quoted, so any
    character in them is literal); ID-like terms are prefix queries."""
    if not terms:
        return None
    return " OR ".join('"' + t.replace('"', '""') + '"' + ("*" if is_id_like(t) else "") for t in terms)


def has_searchable_words(query: str) -> bool:
    """False for a query of punctuation or symbols only (``'?!...'``, ``'*'``):
    nothing in it can match a word, so a search would return noise."""
    return bool(query_terms(query))


def contains_all_terms(text: str, terms: list[str]) -> bool:
    """True when every query term occurs in ``text`` as a word (or, for CJK
    grams, as a substring): an exact keyword hit."""
    if not terms:
        return False
    if text.isascii():  # words are runs of letters and digits: find each term as one
        folded = text.lower()
        return all(term_starts(folded, t) for t in terms)
    folded = fold(normalize(text))
    doc_words = None
    for term in terms:
        if is_cjk(term[:1]):
            if term not in folded:
                return False
        else:
            if doc_words is None:
                doc_words = set(words(folded))
            if term not in doc_words and not (is_id_like(term) and any(w.startswith(term) for w in doc_words)):
                return False
    return True


def safe_cut(text: str, limit: int) -> str:
    """Cut ``text`` to at most ``limit`` characters without splitting a
    surrogate pair (possible in strings decoded with surrogatepass)."""
    if len(text) <= limit:
        return text
    cut = text[:limit]
    if cut and 0xD800 <= ord(cut[-1]) <= 0xDBFF:
        cut = cut[:-1]
    return cut


@functools.lru_cache(maxsize=64)
def _term_pattern(query: str) -> re.Pattern | None:
    terms = highlight_terms(query_terms(query))
    if not terms:
        return None
    # Longest first so "deploys" wins over "deploy" where both are terms.
    terms = sorted(terms, key=len, reverse=True)
    return re.compile("|".join(term_regex(t) for t in terms), re.IGNORECASE)


def highlight_terms(terms: list[str]) -> list[str]:
    """The terms that can say why a chunk matched: no stop words and no
    single letters or digits (a single CJK character stays: it is a word)."""
    return [t for t in terms if t not in STOP_WORDS and (len(t) > 1 or is_cjk(t))]


def term_spans(text: str, query: str) -> list[tuple[int, int]]:
    """Where the query's meaningful terms (see :func:`highlight_terms`)
    occur in ``text`` as whole words (CJK grams as substrings, ID-like
    terms as word prefixes), as (start, end) pairs: what a face highlights."""
    pattern = _term_pattern(query)
    if pattern is None:
        return []
    return [m.span() for m in pattern.finditer(text)]
