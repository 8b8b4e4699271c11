"""A workspace's world: its cast, projects and the facts drawn for it.

:class:`Size` says how much a workspace of a size holds and
``STYLE_WEIGHTS`` which kinds of fact each style writes about most;
:func:`pick_facts` draws the facts (a fact type from :mod:`trust.facts`, a
subject, its fields) and :func:`change_of` the later facts that replace
some of them.
"""

from __future__ import annotations

import random
import string
from dataclasses import dataclass
from typing import Iterable

import trust.pools as P
from trust.facts import FACT_TYPES, SLOTS, FactType, Value
from trust.layout import Entry

STYLES = ("bullets", "diary", "worklog", "meetings", "chat", "mixed")
FACT_KINDS = ("person", "self", "role", "event", "project", "id")


class Size:
    """What a workspace of a size holds: its cast, projects, facts (the
    superseded ones included), facts asked about, facts that change, and
    questions of each unanswerable kind."""

    TABLE = {
        5: (3, 1, 4, 3, 1, 2),
        30: (5, 2, 15, 12, 3, 4),
        100: (8, 3, 36, 28, 5, 6),
        300: (12, 4, 70, 45, 7, 8),
        1000: (18, 6, 110, 60, 9, 9),
        3000: (24, 8, 150, 70, 10, 10),
    }

    def __init__(self, size: int):
        self.people, self.projects, self.facts, self.asked, self.changes, self.negatives = self.TABLE[size]


SIZES_ORDER = tuple(Size.TABLE)

#: Per style: weights of the fact kinds (FACT_KINDS order), the share of
#: durable facts kept in MEMORY.md, and entries per daily note.
STYLE_WEIGHTS = {
    "bullets": ((3, 2, 2, 1, 1.5, 0.5), 0.6, 5),
    "diary": ((4.5, 2, 1.5, 1.5, 0.5, 0), 0.35, 3),
    "worklog": ((1, 0.5, 0.5, 0.5, 4.5, 3), 0.5, 8),
    "meetings": ((2, 0, 0.5, 0.5, 5, 2), 0.4, 9),
    "chat": ((5.5, 2, 0.5, 1.5, 0.5, 0), 0.15, 14),
    "mixed": ((3.5, 2, 2, 1, 1, 0.5), 0.55, 5),
}


@dataclass(frozen=True)
class Spec:
    """One workspace of the manifest."""

    id: str
    style: str
    size: int
    lang: str  # "en", or the language of the mixed style's other entries
    half: str  # "tune" or "check"


def _text(value: Value, lang: str) -> str:
    return value.text(lang) if isinstance(value, P.Word) else value


def _field_names(templates: Iterable[str]) -> list[str]:
    names: dict[str, None] = {}
    for t in templates:
        for _, name, _, _ in string.Formatter().parse(t):
            if name:
                names[name] = None
    return list(names)


def _all_templates(ft: FactType) -> tuple[str, ...]:
    return ft.terse + ft.sentence + ft.first + ft.change + ft.de + ft.pt + ft.ask + ft.ask_de + ft.ask_pt + ft.near


@dataclass(eq=False)
class Fact:
    type: FactType
    subject: str  # the person or project it is about ("" for self, role, event, id)
    fields: dict[str, Value]
    lang: str = "en"
    entry: Entry | None = None
    old: "Fact | None" = None  # on a change: the fact it replaces
    new: "Fact | None" = None  # on a replaced fact: its change
    explicit: bool = False  # replaced with memext's supersede marks
    daily: bool = True
    day: int = 0

    def fill(self, template: str, lang: str | None = None) -> str:
        lang = lang or self.lang
        return template.format_map({k: _text(v, lang) for k, v in self.fields.items()})

    @property
    def answer(self) -> str:
        return _text(self.fields[self.type.answer], self.lang)


class World:
    """A workspace's cast, projects and the names drawn so far."""

    def __init__(self, spec: Spec, rng: random.Random):
        self.spec = spec
        self.rng = rng
        size = Size(spec.size)
        self.cast = rng.sample(P.FIRST_NAMES, size.people)
        self.projects = rng.sample(P.PROJECTS, size.projects)
        self._weights = [1.0 / (i + 1) for i in range(len(self.cast))]
        self.names: dict[str, None] = dict.fromkeys(self.cast)
        self.surnames: dict[str, None] = {}

    def person(self) -> str:
        """Someone of the cast; a few of them come up far more than the rest."""
        return self.rng.choices(self.cast, weights=self._weights)[0]

    def other_person(self, *not_these: str) -> str:
        others = [p for p in self.cast if p not in not_these] or self.cast
        return self.rng.choice(others)

    def new_surname(self) -> str:
        free = [s for s in P.SURNAMES if s not in self.surnames] or list(P.SURNAMES)
        s = self.rng.choice(free)
        self.surnames[s] = None
        return s

    def new_fullname(self) -> str:
        free = [n for n in P.FIRST_NAMES if n not in self.names]
        first = self.rng.choice(free)
        self.names[first] = None
        return f"{first} {self.new_surname()}"

    def draw(self, slot: str) -> Value:
        if slot == "fullname":
            return self.new_fullname()
        if slot == "doctor":
            return f"Dr. {self.new_surname()}"
        if slot == "mrname":
            return f"{self.rng.choice(('Mr.', 'Ms.', 'Mrs.'))} {self.new_surname()}"
        return SLOTS[slot](self.rng)


def _identity(ft: FactType, subject: str, fields: dict[str, Value]) -> tuple[str, ...]:
    """What makes two facts of a type the same question: its subject, and
    for dated plans and IDs the fields their questions name."""
    if ft.kind == "id":
        return (ft.name, _text(fields["v"], "en"))
    if ft.kind == "event":
        keys = [k for k in _field_names(ft.ask) if k not in ("v", "p", "X")]
        return (ft.name, *(_text(fields[k], "en") for k in keys))
    return (ft.name, subject)


def _new_fact(world: World, ft: FactType, subject: str) -> Fact:
    rng = world.rng
    fields: dict[str, Value] = {}
    if ft.kind == "person":
        fields["p"] = subject
    if ft.kind == "project":
        fields["X"] = subject
    fields["v"] = world.draw(ft.value)
    if ft.value == "hash":
        fields["h7"], fields["h8"] = _text(fields["v"], "en")[:7], _text(fields["v"], "en")[:8]
    for name in _field_names(_all_templates(ft)):
        if name in fields or name == "old":
            continue
        fields[name] = rng.choice(world.projects) if name == "X" else world.draw(name)
    lang = world.spec.lang
    has_lang = lang != "en" and bool(getattr(ft, lang))
    return Fact(ft, subject, fields, lang if has_lang and rng.random() < 0.5 else "en")


def pick_facts(world: World, n: int, n_changes: int) -> list[Fact]:
    """``n`` facts of the style's kinds, the first ``n_changes`` of them of
    types that can change (they are the ones a later entry replaces)."""
    rng = world.rng
    weights, _, _ = STYLE_WEIGHTS[world.spec.style]
    facts: list[Fact] = []
    seen: set[tuple[str, ...]] = set()  # membership only: never iterated
    attempts = 0
    while len(facts) < n and attempts < 50 * n:
        attempts += 1
        changing = len(facts) < n_changes
        types_by_kind = {k: [t for t in FACT_TYPES if t.kind == k and (t.change or not changing)] for k, w in zip(FACT_KINDS, weights) if w}
        kinds = [k for k in types_by_kind if types_by_kind[k]]
        kind = rng.choices(kinds, weights=[weights[FACT_KINDS.index(k)] for k in kinds])[0]
        types = types_by_kind[kind]
        lang = world.spec.lang
        ft = rng.choices(types, weights=[3 if lang != "en" and getattr(t, lang) else 1 for t in types])[0]
        subject = world.person() if kind == "person" else rng.choice(world.projects) if kind == "project" else ""
        fact = _new_fact(world, ft, subject)
        key = _identity(ft, subject, fact.fields)
        if key in seen:
            continue
        seen.add(key)
        facts.append(fact)
    return facts


def change_of(world: World, old: Fact, explicit: bool) -> Fact:
    """The later fact that replaces ``old``: a new value, the rest the same."""
    fields = dict(old.fields)
    while _text(fields["v"], "en") == _text(old.fields["v"], "en"):
        fields["v"] = world.draw(old.type.value)
    fields["old"] = old.fields["v"]
    new = Fact(old.type, old.subject, fields, "en", old=old, explicit=explicit)
    old.new = new
    return new
