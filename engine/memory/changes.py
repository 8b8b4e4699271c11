"""Changes of fact: a sentence that says something is no longer as memory
has it ("actually, Ada lives in Abuja now, not Lagos", "we switched to
Buildkite", "ich bin nach Bonn gezogen", "ya no vivo en Sevilla"), and
whether it replaces a given entry (DESIGN.md §17).

Capture stores such a sentence and supersedes the entry it replaces when
the engine's search finds one and :func:`replaces` agrees; consolidation
leaves out an entry a later note replaced. Rules, no model, in the
languages capture reads.

Why both a cue and shared words: a cue alone ("now") is in every other
sentence, and shared words alone are a restatement or a neighbouring fact.
A change names the thing that changed (its subject: "Ada", "CI", "Auto")
and often the old value ("not Lagos", "from GitHub Actions", "nicht mehr
Köln"); the entry it replaces holds the subject, and the old value when
one is named.
"""

from __future__ import annotations

import re
from typing import Iterable

#: Words that announce a change on their own, per language: "no longer",
#: "switched", "moved", "changed", "instead", "a new ...".
_STRONG = (
    # English
    r"\bno longer\b|\bany ?more\b|\bfrom now on\b|\binstead\b|"
    r"\bswitch(?:ed|ing)?\b|\bchang(?:ed|ing)\b|\bmoved\b|\brelocated\b|\breplaced\b|\bditched\b|\bgave up\b|"
    r"\b(?:a|my|our|his|her|their) new\b|"
    # German
    r"\bnicht mehr\b|\bkeine?n? \w+ mehr\b|\bstatt\b|\bstattdessen\b|"
    r"\bgewechselt\b|\bumgestiegen\b|\bgeändert\b|\bersetzt\b|\bumgezogen\b|\bgezogen\b|\b(?:eine?|mein|meine|unser|unsere) neue[nrs]?\b|"
    # French
    r"\bne \w+ plus\b|\bn'\w+ plus\b|\bplus (?:à|au|en|de|le|la|les)\b|\bau lieu de?\b|"
    r"\bchangé\b|\bremplacé\b|\bdéménagé\b|\bpassés? (?:à|au|sur)\b|\b(?:un|une|mon|ma|notre) nouve(?:au|l|lle)\b|"
    # Spanish
    r"\bya no\b|\ben (?:vez|lugar) de\b|"
    r"\bcambi(?:é|ó|amos|ado)\b|\breemplaz(?:é|ó|amos|ado)\b|\bmud(?:é|ó|amos|ado)\b|\bpas(?:é|ó|amos) a\b|\b(?:un|una|mi|nuestr[oa]) nuev[oa]\b|"
    # Chinese
    r"不再|换成|改成|改为|换了|搬到|搬去|搬家|而不是|新的|"
    # Japanese
    r"じゃなくて|ではなく|代わりに|変え|変更|切り替え|引っ越|新しい"
)
#: Words that announce a change only beside another sign of one (an old
#: value named, another trigger): "actually", "now" are in every other
#: sentence ("I'm tired now").
_WEAK = (
    r"\bactually\b|\bnow\b|\bthese days\b|\beigentlich\b|\bjetzt\b|\binzwischen\b|\bmittlerweile\b|"
    r"\ben fait\b|\bmaintenant\b|\bdésormais\b|\ben realidad\b|\bde hecho\b|\bahora\b|"
    r"其实|现在|如今|実は|今は|今では|もう"
)
STRONG = re.compile(_STRONG, re.IGNORECASE)
CHANGE = re.compile(f"{_STRONG}|{_WEAK}", re.IGNORECASE)


_WORD = r"[^\s,.;:!?()\"“”«»]+"
_NAME = rf"{_WORD}(?: (?:[A-ZÀ-Ý0-9]{_WORD}))*"
#: Phrases naming the old value: "not Lagos", "from GitHub Actions to",
#: "instead of", "nicht mehr Köln", "plus à Lyon", "ya no en Sevilla"...
_OLD = re.compile(
    rf"\bnot (?:in |at |on |with |from |to |the |a |an )*(?P<en>{_NAME})|"
    rf"\bfrom (?:the )?(?P<from>{_NAME}) (?:to|over to)\b|\binstead of (?:the |a |an )?(?P<inst>{_NAME})|"
    rf"\bnicht mehr (?:in |im |bei |mit |der |die |das |den )*(?P<de>{_NAME})|\bstatt (?:in |im |der |die |das |den |dem )*(?P<statt>{_NAME})|"
    rf"\bvon (?P<von>{_NAME}) (?:auf|zu|nach)\b|"
    rf"\bplus (?:à |au |en |de |le |la |les )+(?P<fr>{_NAME})|\bau lieu de?s? (?P<lieu>{_NAME})|"
    rf"\bya no (?:en |con |a |el |la |los |las )*(?P<es>{_NAME})|\ben (?:vez|lugar) de(?:l)? (?P<vez>{_NAME})|"
    r"不(?:是|再|喝|用|在|住)?(?P<zh>[\u4e00-\u9fff\u30a0-\u30ff]{1,8}?)了|"
    r"(?P<ja>[\u4e00-\u9fff\u30a0-\u30ff]{1,8})(?:じゃなくて|ではなく)",
    re.IGNORECASE,
)


#: Words that deny what follows: a change said with them ("no longer",
#: "nicht mehr", "ya no") says something new even in the words of the
#: entry it replaces ("I don't drink green tea any more").
_DENIED = re.compile(
    r"\b(?:not|no longer|never|any ?more|nicht|kein\w*|ne|plus|ya no|nunca|jamais)\b|n't\b|n'\w+ plus\b|不|没|ない|じゃなく|ではなく",
    re.IGNORECASE,
)


def denies(text: str) -> bool:
    """True when ``text`` denies something ("not", "no longer", "nicht mehr")."""
    return _DENIED.search(text) is not None


def announces_change(text: str) -> bool:
    """True when ``text`` holds a word that may announce a change (strong
    or weak): such a sentence is compared with memory as an update, not
    as a restatement."""
    return CHANGE.search(text) is not None


def states_change(text: str) -> bool:
    """True when ``text`` says by itself that something changed: a strong
    cue, or a weak one ("now", "actually") with an old value named
    ("now, not Lagos")."""
    if STRONG.search(text):
        return True
    return CHANGE.search(text) is not None and bool(old_values(text))


def old_values(text: str) -> list[str]:
    """The old values ``text`` names ("not Lagos" -> ["Lagos"]), as written."""
    out: list[str] = []
    for m in _OLD.finditer(text):
        value = next((v for v in m.groupdict().values() if v), None)
        if value:
            out.append(value.strip(" '\"’"))
    return out


#: Capitalised words past a sentence's first and acronyms: names
#: ("Ada", "Gullwing", "CI", "InfluxDB").
_NAMES = re.compile(r"(?<!^)(?<![.!?] )\b[A-ZÀ-Ý][\w-]+|\b[A-Z]{2,}\b")


#: A move to a named place ("moved to Abuja", "nach Bonn gezogen",
#: "déménagé à Lyon", "se mudó a Madrid", "搬到", "引っ越した") ...
_MOVE = re.compile(
    r"\b(?:moved|relocated) to (?:the )?[A-ZÀ-Ý]|\b(?:nach|in die|in den) [A-ZÀ-Ý]\w* (?:um)?gezogen\b|\bdéménagé (?:à|au|en) [A-ZÀ-Ý]|"
    r"\bmud(?:é|ó|amos|ado|aron) a [A-ZÀ-Ý]|搬到|搬去|引っ越"
)
#: ... replaces where the same person was said to live.
_LIVES = re.compile(r"\blives?\b|\bliving\b|\bwohn\w*|\bhabit\w*|\bviv(?:e|o|en|imos)\b|住", re.IGNORECASE)


def names(text: str) -> list[str]:
    """The names ``text`` holds (capitalised words that do not open it,
    acronyms), in order."""
    return [m.group(0) for m in _NAMES.finditer(text.strip())]


def replaces(change: str, entry: str, change_tokens: frozenset[str], entry_tokens: frozenset[str]) -> bool:
    """Whether ``change`` (a sentence announcing a change) replaces
    ``entry``, given both texts' content words (engine/memory/capture.py's
    ``content_tokens``): the entry holds the old value the change names
    and a word of its subject besides (or little else); or, no old value
    named, it shares two of the change's names ("Gullwing", "InfluxDB"),
    or two content words that are half of the words of either; or it
    announces a move to a named place and the entry says where the person
    it names lives. A
    restatement (the entry says no more than the change, unless the change
    names the entry's value as the old one) is not replaced."""
    shared = change_tokens & entry_tokens
    if not shared or entry_tokens <= change_tokens and not _named_old(change, entry):
        return False
    if old_values(change):
        return _named_old(change, entry) and (len(shared) >= 2 or len(entry_tokens) <= 3)
    named = {n.casefold() for n in names(change)} & shared
    if _MOVE.search(change) and _LIVES.search(entry) and {n.casefold() for n in names(entry)} & shared:
        return True  # "Ada moved to Abuja" replaces "my sister Ada lives in Lagos": a move changes where one lives
    if len(shared) < 2:
        return False
    return len(named) >= 2 or len(shared) * 2 >= min(len(change_tokens), len(entry_tokens))


def _named_old(change: str, entry: str) -> bool:
    folded = entry.casefold()
    return any(v.casefold() in folded for v in old_values(change))


def later_replacements(entry: str, entry_tokens: frozenset[str], others: Iterable[tuple[str, frozenset[str], str]]) -> str | None:
    """The first of ``others`` (text, content words, citation) that
    announces a change replacing ``entry``; None when none does."""
    for text, tokens, where in others:
        if announces_change(text) and replaces(text, entry, tokens, entry_tokens):
            return where
    return None
