"""How SQLite's ``unicode61`` tokenizer treats characters beyond ASCII, as
two tables :mod:`.text` uses to agree with the index: the lower-case form
it gives each character, and the runs of combining marks it keeps inside
words.

Working them out scans every code point (about 80 ms: 56 for the case
table, which asks SQLite itself, 25 for the marks), and any process that
meets one non-ASCII character in a note (a dash, an accent, an emoji)
needs the case table: a one-shot ``memext search`` paid that on its first
result. So they are worked out once per SQLite and Unicode version and kept
in the user cache folder, where reading them costs well under a
millisecond. A cache file that cannot be read, is damaged or cannot be
written costs only the time to work the tables out again; it never changes
an answer.
"""

from __future__ import annotations

import functools
import json
import re
import unicodedata
from pathlib import Path
from typing import NamedTuple

#: Bumped whenever the way the tables are worked out changes: an older
#: cache file is then ignored.
TABLES_FORMAT = 1

#: What unicode61 counts as word characters besides letters and numbers
#: (the index's ``categories 'L* N* Co M*'``): combining marks.
_MARKS_FROM = 0x300
_MARKS_TO = 0x20000


class UnicodeTables(NamedTuple):
    """The tables of one SQLite and Unicode version."""

    #: Code point -> the code point unicode61 folds it to, for every
    #: non-ASCII character whose folded form differs (and A-Z).
    fold: dict[int, int]
    #: Runs of combining marks (first, last code point), which Python's
    #: ``\\w`` lacks but unicode61 keeps inside words (Indic scripts).
    marks: list[tuple[int, int]]
    #: False when this SQLite has no FTS5 to ask: Python's own one-to-one
    #: lower-case mappings stand in (there is no index to agree with).
    from_sqlite: bool


@functools.lru_cache(maxsize=1)
def unicode_tables() -> UnicodeTables:
    """The tables for the SQLite binding and Python in use: from the cache
    folder when worked out before, else worked out now (and kept)."""
    path = _cache_file()
    if path is not None:
        cached = _read(path)
        if cached is not None:
            return cached
    tables = compute_tables()
    if path is not None and tables.from_sqlite:
        _write(path, tables)
    return tables


def compute_tables() -> UnicodeTables:
    """Work the tables out (no cache)."""
    fold, from_sqlite = _fold_table()
    return UnicodeTables(fold, _mark_runs(), from_sqlite)


def _fold_table() -> tuple[dict[int, int], bool]:
    """Character -> lower-case character, exactly as the FTS tokenizer folds.

    Query terms are sent to FTS5 as words, and FTS5 tokenizes them again,
    so a term must fold to what the index holds: ``str.casefold`` turns
    "Straße" into "strasse" (a different token from unicode61's "straße")
    and ``str.lower`` knows letters that SQLite's older Unicode tables do
    not (Cherokee, Georgian Mtavruli, ...), so that lower-casing an
    upper-case Cherokee query would miss the text that holds it. We
    therefore ask unicode61 itself (without diacritic removal: accents stay
    significant for exact-hit checks) how it folds every character that has
    a case mapping. One character always maps to one, so folded text keeps
    its length and offsets.
    """
    candidates = [
        ch for ch in map(chr, range(0x80, 0x32000)) if not 0xD800 <= ord(ch) <= 0xDFFF and (ch.lower() != ch or ch.casefold() != ch)
    ]
    table = {cp: cp + 32 for cp in range(ord("A"), ord("Z") + 1)}
    from_sqlite = True
    try:
        from .store.tokenizer import fts_tokenize

        folded = fts_tokenize("unicode61 remove_diacritics 0 categories 'L* N* Co M*'", candidates)
    except Exception:  # no FTS5 in this SQLite
        folded = [[ch.lower()] for ch in candidates]
        from_sqlite = False
    for ch, terms in zip(candidates, folded):
        for term in terms:
            if len(term) == 1 and term != ch:
                table[ord(ch)] = ord(term)
    return table, from_sqlite


def _mark_runs() -> list[tuple[int, int]]:
    # Categories are two characters with a lower-case second one, so in
    # their concatenation "M" starts a category only at even offsets: a
    # regular expression finds the runs of marks far faster than a Python
    # loop over 130k characters.
    cats = "".join(map(unicodedata.category, map(chr, range(_MARKS_FROM, _MARKS_TO))))
    return [(_MARKS_FROM + m.start() // 2, _MARKS_FROM + m.end() // 2 - 1) for m in re.finditer("(?:M[nce])+", cats)]


# -- the cache file ---------------------------------------------------------------


def _cache_file() -> Path | None:
    """Where the tables of this SQLite and Python are kept, or None when
    the folder cannot be known."""
    try:
        from .paths import app_paths
        from .store.tokenizer import tokenizer_version

        key = f"{tokenizer_version()}-unicode{unicodedata.unidata_version}-v{TABLES_FORMAT}"
        return app_paths().cache_dir / "unicode" / f"{re.sub(r'[^A-Za-z0-9.-]', '_', key)}.json"
    except Exception:  # no home folder, say: work the tables out each time
        return None


def _read(path: Path) -> UnicodeTables | None:
    """The tables in ``path``, or None when it is missing or not a table
    file this version wrote (it is then written again)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        fold, marks = data["fold"], data["marks"]
        if data.get("format") != TABLES_FORMAT or len(fold) % 2 or len(marks) % 2:
            return None
        numbers = [*fold, *marks]
        if not all(type(n) is int and 0 <= n <= 0x10FFFF for n in numbers):
            return None
    except (OSError, ValueError, KeyError, TypeError):
        return None
    pairs = iter(fold)
    runs = iter(marks)
    return UnicodeTables(dict(zip(pairs, pairs)), list(zip(runs, runs)), True)


def _write(path: Path, tables: UnicodeTables) -> None:
    from .paths import private_dir, write_private_text

    flat_fold = [n for pair in tables.fold.items() for n in pair]
    flat_marks = [n for run in tables.marks for n in run]
    try:
        private_dir(path.parent)
        write_private_text(path, json.dumps({"format": TABLES_FORMAT, "fold": flat_fold, "marks": flat_marks}))
    except OSError:
        pass  # a read-only cache folder: worked out again next time
