"""Damaged index files: telling damage from other errors, and what to do
about it (DESIGN.md §4).

The index is disposable (the Markdown is the truth), so a damaged file is
moved aside (``<name>.corrupt-<time>``: see :mod:`.index_files`) and rebuilt. What
counts as damage: a file SQLite cannot read, a schema version or ``meta``
value memext cannot have written, or a table or column of memext's missing
(:class:`CorruptIndex` from the store, and checked again when a read fails
with "no such table"),
and an SQLite error that damage can cause (malformed pages, a vec0 "blob
read error") which SQLite's ``quick_check`` confirms, or undecodable text
(memext writes only UTF-8). The check also runs when an index is opened
after a writer died holding the lock (kill -9, a crash, a power cut: its
owner note outlived it), and, as the thorough ``integrity_check``, when
asked (``MemoryIndex.verify``, run by ``memext index``).
"""

from __future__ import annotations

from pathlib import Path

from ..base import CorruptIndex
from .connection import schema_damage
from .damage import may_be_damage, quick_check
from .index_files import move_aside

#: Damage quick_check cannot see (it checks structure, not values): memext
#: only ever writes valid UTF-8, so undecodable text is a flipped byte; and
#: it only ever declares virtual tables sqlite-vec accepts, so a vec0 table
#: whose stored declaration no longer parses had a byte flipped in it.
_CONTENT_DAMAGE = ("could not decode to utf-8", "vec0 constructor error")
#: The virtual-table modules memext declares: a declaration naming another
#: ("no such module: vdc0") had a byte flipped in it, where "no such
#: module: vec0" is an extension not loaded, not damage.
_OUR_MODULES = frozenset({"vec0", "fts5", "fts5vocab"})


def _names_a_module_we_never_declare(message: str) -> bool:
    _, found, rest = message.partition("no such module: ")
    words = rest.split()
    return bool(found and words) and words[0] not in _OUR_MODULES


def damage_of(exc: BaseException, db_path: Path) -> str | None:
    """What is wrong with the index file, when ``exc`` (or what caused it:
    a failed rebuild wraps its cause) came from damage to it; None when it
    did not (the file checks out, or the error is another)."""
    for e in _chain(exc):
        if isinstance(e, CorruptIndex):
            return str(e)
    suspect = next((e for e in _chain(exc) if may_be_damage(e)), None)
    if suspect is None:
        return None
    found = quick_check(db_path)
    if found:
        return f"{suspect}; quick_check: {found}"
    missing = schema_damage(db_path)  # a dropped table passes quick_check
    if missing:
        return f"{suspect}; damaged schema: {missing}"
    if any(s in str(suspect).lower() for s in _CONTENT_DAMAGE) or _names_a_module_we_never_declare(str(suspect)):
        return str(suspect)
    return None


def _chain(exc: BaseException) -> list[BaseException]:
    seen: list[BaseException] = []
    e: BaseException | None = exc
    while e is not None and e not in seen:
        seen.append(e)
        e = e.__cause__ or e.__context__
    return seen


def set_aside(db_path: Path, problem: str) -> str:
    """Move a damaged index file aside; returns what to tell the user. The
    caller holds the writer lock and has closed its connections to it."""
    aside = move_aside(db_path)
    what = problem if problem.startswith(str(db_path)) else f"the index {db_path} was damaged ({problem})"
    message = f"{what}; it was moved aside to {aside.name} and is rebuilt from the memory files"
    import logging  # here: a search that finds no damage never logs

    logging.getLogger("memext").warning(message)
    return message


def writer_died(db_path: Path) -> bool:
    """True when a writer's owner note outlived it: the last writer of this
    index did not finish cleanly, so the file is worth a quick_check."""
    return Path(str(db_path) + ".lock.owner").exists()
