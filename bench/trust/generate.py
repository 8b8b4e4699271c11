"""Generate the trust benchmark's workspaces and questions (seeded, deterministic).

    python bench/trust/generate.py [--out bench/out/trust] [--check] [--update-digests]

Each workspace of ``manifest.json`` is one person's memory as memext reads
it: ``MEMORY.md`` for durable facts and ``memory/YYYY-MM-DD.md`` daily
logs, in one style (terse bullets, diary prose, a work log with ticket IDs
and hashes, meeting notes, chat transcripts, or bullets with German or
Portuguese entries beside English ones) and of a size counted in entries
(list items, paragraphs, turns). Facts (:mod:`trust.facts`) sit among
everyday entries (:mod:`trust.noise`) that mention the same people and near
topics; some facts change later, by memext's own supersede marks
(DESIGN.md §17) or by a later note saying so.

Questions, each labelled (:class:`trust.layout.Label`):

- ``answerable``: a fact, asked in other words than the note's;
- ``absent_person``: a fact's question about someone the workspace never names;
- ``absent_topic``: about a person the notes mention, on a topic none of
  their entries holds;
- ``partial_overlap``: shares words with a note, asks what no note holds;
- ``absent_id``: an incident, ticket or commit ID no note holds (a present
  ID, or a 7+ character prefix of a present hash, is ``answerable``);
- ``superseded``: asks a fact that changed; the answer is the new entry,
  the old one (``stale``) is not.

``manifest.json`` fixes which workspaces form the tune half and which the
check half, chosen before any tuning so that each holds every size and
style: tune on the tune half only; the check half is never tuned on.

The same seed gives byte-identical files and questions; ``--check``
compares them with the digests the manifest recorded when the split was
made, ``--update-digests`` records new ones (after a deliberate change to
the generator, which changes the workspaces of both halves).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import re
import string
import sys
from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path
from typing import Iterable, Sequence

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from nltk.stem.porter import PorterStemmer

import trust.noise as N
import trust.pools as P
from trust.facts import FACT_TYPES, SLOTS, FactType, Value
from trust.layout import Entry, FileBuilder, Label

HERE = Path(__file__).resolve().parent
MANIFEST = HERE / "manifest.json"
KINDS = ("answerable", "absent_person", "absent_topic", "partial_overlap", "absent_id", "superseded")
UNANSWERABLE = ("absent_person", "absent_topic", "partial_overlap", "absent_id")
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


@dataclass(frozen=True)
class Question:
    """A question and what answers it (see the module docstring for kinds)."""

    id: str
    workspace: str
    query: str
    kind: str
    topic: str  # the fact type asked about, or the form of an absent ID
    lang: str
    answers: tuple[Label, ...] = ()
    stale: tuple[Label, ...] = ()

    def to_json(self) -> dict:
        d = {k: getattr(self, k) for k in ("id", "workspace", "query", "kind", "topic", "lang")}
        d["answers"] = [a.to_json() for a in self.answers]
        d["stale"] = [s.to_json() for s in self.stale]
        return d

    @classmethod
    def from_json(cls, d: dict) -> "Question":
        return cls(
            d["id"],
            d["workspace"],
            d["query"],
            d["kind"],
            d["topic"],
            d["lang"],
            tuple(Label.from_json(a) for a in d["answers"]),
            tuple(Label.from_json(s) for s in d["stale"]),
        )


@dataclass
class Workspace:
    spec: Spec
    files: dict[str, str]
    questions: list[Question]
    last_day: date
    entries: int  # what a person wrote as one thing each: items, paragraphs, turns

    def digest(self) -> str:
        h = hashlib.sha256()
        for path in sorted(self.files):
            h.update(path.encode() + b"\0" + self.files[path].encode() + b"\0")
        h.update(json.dumps([q.to_json() for q in self.questions], sort_keys=True).encode())
        return h.hexdigest()[:16]


# ---------------------------------------------------------------------------
# Facts


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


# ---------------------------------------------------------------------------
# Writing the notes


class Notebook:
    """Lays a workspace's facts and everyday entries out as its style writes them."""

    def __init__(self, world: World, facts: list[Fact], changes: list[Fact], n_noise: int):
        self.world = world
        self.rng = world.rng
        self.style = world.spec.style
        self.facts = facts
        self.changes = changes
        self.n_noise = n_noise
        _, self.memory_share, self.per_day = STYLE_WEIGHTS[self.style]
        # A writer's habits hold for the whole notebook.
        self.wrap = self.rng.choice((0, 72, 80)) if self.style == "diary" else 0
        self.long_dates = self.style == "diary" and self.rng.random() < 0.5
        self.chat_form = self.rng.choice(("- **{s}**: {t}", "- [{clock}] {s}: {t}"))

    # -- text of one entry --------------------------------------------------

    def noise_fields(self) -> dict[str, str]:
        w, rng = self.world, self.rng
        p = w.person()
        return {
            "p": p,
            "q": w.other_person(p),
            "X": rng.choice(w.projects),
            "c": rng.choice(P.CITIES),
            "show": rng.choice(P.SHOWS),
            "street": rng.choice(P.STREETS),
            "n": str(rng.randrange(3, 90)),
            # Keys no fact's ticket uses: an everyday mention never answers a ticket question.
            "tid": f"{rng.choice(('QA', 'UX', 'SEC'))}-{rng.randrange(100, 999)}",
            "h7": "".join(rng.choice("0123456789abcdef") for _ in range(7)),
            "clock": _text(SLOTS["clock"](rng), "en"),
        }

    def noise_text(self, pool: Sequence[str]) -> str:
        lang = self.world.spec.lang
        if lang != "en" and self.rng.random() < 0.45:
            pool = N.DE if lang == "de" else N.PT
        return self.rng.choice(pool).format_map(self.noise_fields())

    def fact_text(self, fact: Fact, register: str) -> str:
        ft, rng = fact.type, self.rng
        if fact.old is not None:
            return fact.fill(rng.choice(ft.change))
        if fact.lang != "en":
            return fact.fill(rng.choice(getattr(ft, fact.lang)))
        if register == "terse":
            pool = ft.terse if rng.random() < 0.7 else ft.sentence
        else:
            pool = ft.sentence if rng.random() < 0.85 else ft.terse
        return fact.fill(rng.choice(pool))

    # -- placement -----------------------------------------------------------

    def place(self) -> tuple[list[Fact], list[list[object]], list[date]]:
        """Which facts go to MEMORY.md, and the items of each day."""
        rng = self.rng
        memory: list[Fact] = []
        for f in self.facts:
            f.daily = not f.type.durable or rng.random() > self.memory_share
            if not f.daily:
                memory.append(f)
        daily_items = [f for f in self.facts if f.daily] + self.changes + [None] * self.n_noise
        n_days = max(2, round(len(daily_items) / self.per_day))
        for f in self.facts:
            f.day = rng.randrange(n_days - 1) if f.new is not None else rng.randrange(n_days)
        for c in self.changes:
            assert c.old is not None
            first = c.old.day + 1 if c.old.daily else 0
            c.daily = not (c.explicit and not c.old.daily and rng.random() < 0.6)
            c.day = rng.randrange(first, n_days)
        days: list[list[object]] = [[] for _ in range(n_days)]
        for item in daily_items:
            if item is None:
                days[rng.randrange(n_days)].append(None)
            elif item.daily:
                days[item.day].append(item)
        for d in days:
            rng.shuffle(d)
            # memext appends at the end of a file: its entries come last.
            d.sort(key=lambda item: isinstance(item, Fact) and item.explicit and item.old is not None)
        end = date(2025, 5, 1) + timedelta(days=rng.randrange(500))
        dates = [end]
        for _ in range(n_days - 1):
            dates.append(dates[-1] - timedelta(days=rng.choice((1, 1, 1, 2, 3))))
        dates.reverse()
        return memory, days, dates

    # -- files ---------------------------------------------------------------

    def write(self) -> tuple[dict[str, str], date, int]:
        memory, days, dates = self.place()
        files: list[FileBuilder] = []
        mem = FileBuilder("MEMORY.md")
        self.write_memory(mem, memory)
        daily_files = []
        for day, items in zip(dates, days):
            if not items:
                continue
            fb = FileBuilder(f"memory/{day.isoformat()}.md")
            fb.line(f"# {day:%A} {P.day_month(day)} {day.year}" if self.long_dates else f"# {day.isoformat()}")
            getattr(self, f"write_{self.style if self.style != 'mixed' else 'bullets'}")(fb, items)
            daily_files.append((fb, day))
        appended = [c for c in self.changes if not c.daily]
        for c in appended:
            self.append_memext(mem, c, dates[c.day])
        if mem.entries:
            files.append(mem)
        files.extend(fb for fb, _ in daily_files)
        self.mark(dates)
        return {fb.path: fb.text() for fb in files}, dates[-1], sum(len(fb.entries) for fb in files)

    def write_memory(self, fb: FileBuilder, facts: list[Fact]) -> None:
        if not facts:
            return
        fb.line(self.rng.choice(("# Memory", "# MEMORY", "# Things to remember", "# Long-term notes")))
        register = "sentence" if self.style == "diary" else "terse"
        sections = {
            "person": "## People",
            "self": "## About me",
            "role": "## Contacts",
            "event": "## Plans",
            "project": "## Work",
            "id": "## Work",
        }
        by_person = self.style in ("diary", "chat")
        groups: dict[str, list[Fact]] = {}
        for f in facts:
            key = f"## {f.subject}" if by_person and f.type.kind == "person" else sections[f.type.kind]
            if f.type.kind == "project" and Size(self.world.spec.size).projects > 2:
                key = f"## {f.subject}"
            groups.setdefault(key, []).append(f)
        for heading, group in groups.items():
            fb.blank()
            fb.line(heading)
            fb.blank()
            for f in group:
                e = Entry(self.fact_text(f, register), f.answer)
                if self.rng.random() < 0.2:
                    e.comment = f"origin=agent via=tool category={'preference' if f.type.kind == 'person' else 'fact'}"
                f.entry = e
                fb.entry(e)

    def append_memext(self, fb: FileBuilder, c: Fact, day: date) -> None:
        """An entry as memext's append writes it: a heading holding its metadata, then the text."""
        stamp = f"{day.isoformat()} {self.stamp()}" if fb.path == "MEMORY.md" else self.stamp()
        fb.blank()
        e = Entry(self.fact_text(c, "sentence"), c.answer, prefix="", heading=f"## {stamp}")
        c.entry = e
        fb.entry(e)

    def stamp(self) -> str:
        """The time memext's append writes in an entry's heading."""
        minutes = self.rng.randrange(7 * 60, 23 * 60)
        return f"{minutes // 60:02d}:{minutes % 60:02d}"

    def item_entry(self, item: object, register: str, noise: Sequence[str], prefix: str = "- ") -> Entry:
        if item is None:
            e = Entry(self.noise_text(noise), prefix=prefix)
            if self.rng.random() < 0.02:
                e.comment = 'forgotten=2025-01-01 reason="no longer relevant"'
            return e
        assert isinstance(item, Fact)
        if item.explicit and item.old is not None:
            e = Entry(self.fact_text(item, "sentence"), item.answer, prefix="", heading=f"## {self.stamp()}")
        else:
            e = Entry(self.fact_text(item, register), item.answer, prefix=prefix)
        item.entry = e
        return e

    def _place_entry(self, fb: FileBuilder, e: Entry, in_list: bool) -> None:
        if e.heading is not None or not in_list:
            fb.blank()
        fb.entry(e)
        if e.heading is not None or not in_list:
            fb.blank()

    def write_bullets(self, fb: FileBuilder, items: list[object]) -> None:
        rng = self.rng
        lang = self.world.spec.lang
        headings = N.HEADINGS[lang if lang != "en" and rng.random() < 0.5 else "bullets"]
        split = len(items) > 3 and rng.random() < 0.3
        cut = rng.randrange(1, len(items)) if split else len(items)
        fb.blank()
        for i, item in enumerate(items):
            if split and i in (0, cut):
                fb.blank()
                fb.line(headings[0 if i == 0 else 1])
                fb.blank()
            e = self.item_entry(item, "terse", N.TERSE)
            if e.heading is None and len(e.text) > 70 and rng.random() < 0.3:
                e.wrap = rng.randrange(55, 75)
            self._place_entry(fb, e, in_list=True)

    def write_diary(self, fb: FileBuilder, items: list[object]) -> None:
        rng = self.rng
        for item in items:
            e = self.item_entry(item, "sentence", N.PROSE, prefix="")
            if e.heading is None:
                before = [self.noise_text(N.PROSE) for _ in range(rng.choice((0, 0, 1)))]
                after = [self.noise_text(N.PROSE) for _ in range(rng.choice((0, 1, 1, 2)))]
                if item is None:
                    before = []
                main = e.text if e.text[-1:] in ".!?" else e.text + "."
                e.text = " ".join(before + [main] + after)
                e.wrap = self.wrap
            fb.blank()
            fb.entry(e)

    def write_worklog(self, fb: FileBuilder, items: list[object]) -> None:
        rng = self.rng
        minutes = rng.randrange(8 * 60, 10 * 60)
        sections = len(items) > 4 and rng.random() < 0.4
        fb.blank()
        for i, item in enumerate(items):
            if sections and i in (0, len(items) // 2):
                fb.blank()
                fb.line(N.HEADINGS["worklog"][0 if i == 0 else 1])
                fb.blank()
            e = self.item_entry(item, "terse", N.WORK if rng.random() < 0.8 else N.TERSE)
            minutes += rng.randrange(5, 50)
            if e.heading is None and rng.random() < 0.6:
                e.text = f"{minutes // 60 % 24:02d}:{minutes % 60:02d} {e.text}"
            self._place_entry(fb, e, in_list=True)

    def write_meetings(self, fb: FileBuilder, items: list[object]) -> None:
        rng = self.rng
        n_meetings = min(len(items), rng.choice((1, 1, 2, 3)))
        bounds = sorted(rng.sample(range(1, len(items)), n_meetings - 1)) if n_meetings > 1 else []
        for chunk in _split(items, bounds):
            title = rng.choice(N.MEETINGS).format(p=self.world.person(), X=rng.choice(self.world.projects))
            fb.blank()
            fb.line(f"## {title} ({_text(SLOTS['clock'](rng), 'en')})")
            if None in chunk:
                chunk.remove(None)  # one everyday entry becomes the attendee line
                fb.blank()
                people = rng.sample(self.world.cast, min(len(self.world.cast), rng.randrange(2, 5)))
                fb.entry(Entry("Attendees: " + ", ".join(people), prefix=""))
            fb.blank()
            for item in chunk:
                e = self.item_entry(item, "sentence", N.MEETING)
                if isinstance(item, Fact) and e.heading is None and item.type.kind in ("project", "id") and rng.random() < 0.5:
                    e.text = "Decision: " + e.text
                self._place_entry(fb, e, in_list=True)

    def write_chat(self, fb: FileBuilder, items: list[object]) -> None:
        rng = self.rng
        n_chats = min(len(items), max(1, round(len(items) / 10)))
        bounds = sorted(rng.sample(range(1, len(items)), n_chats - 1)) if n_chats > 1 else []
        for chunk in _split(items, bounds):
            about = [f.subject for f in chunk if isinstance(f, Fact) and f.type.kind == "person" and f.subject]
            partner = about[0] if about else self.world.person()
            minutes = rng.randrange(8 * 60, 22 * 60)
            fb.blank()
            fb.line(f"## Chat with {partner} ({minutes // 60:02d}:{minutes % 60:02d})")
            fb.blank()
            speaker = rng.choice(("Me", partner))
            for item in chunk:
                minutes += rng.randrange(0, 4)
                clock = f"{minutes // 60 % 24:02d}:{minutes % 60:02d}"
                if isinstance(item, Fact) and item.entry is None and not (item.explicit and item.old is not None):
                    e = self.chat_fact(item, partner, clock)
                    self._place_entry(fb, e, in_list=True)
                    continue
                e = self.item_entry(item, "sentence", N.CHAT, prefix="")
                if e.heading is None:
                    speaker = partner if speaker == "Me" else "Me"
                    e.text = self.chat_form.format(s=speaker, t=e.text, clock=clock)
                    e.prefix = ""
                self._place_entry(fb, e, in_list=e.heading is None)

    def chat_fact(self, fact: Fact, partner: str, clock: str) -> Entry:
        ft, rng = fact.type, self.rng
        if fact.subject == partner and ft.first and fact.old is None and fact.lang == "en" and rng.random() < 0.7:
            speaker, text = partner, fact.fill(rng.choice(ft.first))
        else:
            speaker = "Me" if ft.kind in ("self", "role", "event") or rng.random() < 0.6 else partner
            if speaker == partner and fact.subject == partner:
                speaker = "Me"
            text = self.fact_text(fact, "sentence")
        e = Entry(self.chat_form.format(s=speaker, t=text, clock=clock), fact.answer, prefix="")
        fact.entry = e
        return e

    def mark(self, dates: list[date]) -> None:
        """Supersede marks, as memext writes them, for the explicit changes."""
        for c in self.changes:
            old = c.old
            assert old is not None and old.entry is not None and c.entry is not None
            if not c.explicit:
                continue
            when = dates[c.day].isoformat()
            old.entry.comment = " ".join(x for x in (old.entry.comment, f"superseded={when} by={c.entry.citation}") if x)
            c.entry.comment = f"origin=person via=cli supersedes={old.entry.citation} date={when}"


def _split(items: list[object], bounds: list[int]) -> list[list[object]]:
    edges = [0, *bounds, len(items)]
    return [list(items[a:b]) for a, b in zip(edges, edges[1:])]


# ---------------------------------------------------------------------------
# Questions

_STEM = PorterStemmer()
_WORD = re.compile(r"\w+")
_STOP = frozenset(
    "a an the of to in on at for and or is are was were be do does did i me my we our us you your he she it they "
    "them their what whats what's which who whos who's when where why how can could should would will with from "
    "by about any anything this that these those there s t ll d m re ve not no get got".split()
)
_HEX = re.compile(r"\b[0-9a-f]{7,40}\b")


def content_stems(text: str, drop: Iterable[str] = ()) -> set[str]:
    dropped = {w.lower() for d in drop for w in _WORD.findall(d)}
    return {_STEM.stem(w) for w in _WORD.findall(text.lower()) if w not in _STOP and w not in dropped}


def _vary(query: str, rng: random.Random) -> str:
    """How people type: a capital or not, a question mark or not."""
    if query[:1].islower() and not any(ch.isdigit() for ch in query.split()[0]) and rng.random() < 0.35:
        query = query[0].upper() + query[1:]
    if query.endswith("?") and rng.random() < 0.2:
        query = query[:-1]
    return query


#: Topics one of which half answers the other: where someone works says
#: something of what they do.
_RELATED = {"job": "employer", "employer": "job"}


class Asker:
    """The questions of one workspace."""

    def __init__(self, world: World, facts: list[Fact], changes: list[Fact], files: dict[str, str]):
        self.world = world
        self.rng = world.rng
        self.facts = facts
        self.changes = changes
        self.text = "\n".join(files.values())
        self.tokens = {w.lower() for w in _WORD.findall(self.text)}
        self.out: list[Question] = []

    def add(self, query: str, kind: str, topic: str, lang: str = "en", answers=(), stale=()) -> None:
        n = sum(1 for q in self.out if q.kind == kind)
        ws = self.world.spec.id
        self.out.append(Question(f"{ws}/{kind}/{n + 1:03d}", ws, query, kind, topic, lang, tuple(answers), tuple(stale)))

    def ask(self, fact: Fact) -> tuple[str, str]:
        ft, rng = fact.type, self.rng
        asks_lang = getattr(ft, f"ask_{fact.lang}", ()) if fact.lang != "en" else ()
        if asks_lang and rng.random() < 0.5:
            return fact.fill(rng.choice(asks_lang)), fact.lang
        return _vary(fact.fill(rng.choice(ft.ask), "en"), rng), "en"

    def answerable(self, n: int) -> None:
        live = [f for f in self.facts if f.new is None]
        for f in self.rng.sample(live, min(n, len(live))):
            assert f.entry is not None
            query, lang = self.ask(f)
            self.add(query, "answerable", f.type.name, lang, [f.entry.label(f.answer)])

    def superseded(self) -> None:
        for c in self.changes:
            assert c.old is not None and c.old.entry is not None and c.entry is not None
            query, _ = self.ask(c.old)
            self.add(query, "superseded", c.type.name, "en", [c.entry.label(c.answer)], [c.old.entry.label(c.old.answer)])

    def _fresh(self, ft: FactType, person: str) -> Fact:
        fields: dict[str, Value] = {"p": person}
        for name in _field_names(ft.ask):
            if name not in fields:
                fields[name] = self.world.draw(name)
        return Fact(ft, person, fields)

    def absent_person(self, n: int) -> None:
        rng = self.rng
        absent = [name for name in P.FIRST_NAMES if name.lower() not in self.tokens]
        types = [t for t in FACT_TYPES if t.kind == "person"]
        for name in rng.sample(absent, n):
            ft = rng.choice(types)
            self.add(_vary(self._fresh(ft, name).fill(rng.choice(ft.ask), "en"), rng), "absent_person", ft.name)

    def absent_topic(self, n: int) -> None:
        rng = self.rng
        mentions = {p: len(re.findall(rf"\b{p}\b", self.text)) for p in self.world.names}
        present = [p for p in self.world.names if mentions[p]]
        known = {(f.type.name, f.subject) for f in self.facts}
        partners = {w for f in self.facts if f.type.name == "partner" for w in (f.subject, _text(f.fields["v"], "en").split()[0])}
        types = [t for t in FACT_TYPES if t.kind == "person"]
        asked: set[tuple[str, str]] = set()
        for _ in range(50 * n):
            if sum(1 for q in self.out if q.kind == "absent_topic") >= n:
                break
            person = rng.choices(present, weights=[mentions[p] for p in present])[0]
            ft = rng.choice(types)
            if (ft.name, person) in known or (ft.name, person) in asked or (_RELATED.get(ft.name, ""), person) in known:
                continue
            # A role holder's or partner's entry says where they work, what
            # they do and whom they are with.
            if ft.name in ("job", "employer", "partner") and (person not in self.world.cast or person in partners):
                continue
            asked.add((ft.name, person))
            lang = self.world.spec.lang
            asks_lang = getattr(ft, f"ask_{lang}", ()) if lang != "en" else ()
            if asks_lang and rng.random() < 0.3:
                self.add(self._fresh(ft, person).fill(rng.choice(asks_lang), "en"), "absent_topic", ft.name, lang)
            else:
                self.add(_vary(self._fresh(ft, person).fill(rng.choice(ft.ask), "en"), rng), "absent_topic", ft.name)

    def partial_overlap(self, n: int) -> None:
        """Near-miss questions that share a word (not a name) with the note
        they are asked beside."""
        rng = self.rng
        options = []
        for f in self.facts:
            if f.new is not None or f.entry is None:
                continue
            names = [_text(f.fields[k], "en") for k in ("p", "X") if k in f.fields]
            note = content_stems("\n".join(f.entry.lines), names)
            for t in f.type.near:
                query = f.fill(t, "en")
                if content_stems(query, names) & note:
                    options.append((query, f.type.name))
        chosen: dict[str, str] = {}
        for query, topic in rng.sample(options, len(options)):
            if len(chosen) >= n:
                break
            chosen.setdefault(query, topic)
        for query, topic in chosen.items():
            self.add(_vary(query, rng), "partial_overlap", topic)

    def absent_id(self, n: int) -> None:
        rng = self.rng
        low = self.text.lower()
        hashes = sorted(set(_HEX.findall(low)))
        incidents = sorted(set(re.findall(r"\bINC-\d+\b", self.text)))
        forms = ("incident", "ticket", "hash", "near_hash")
        made: dict[str, str] = {}
        for i in range(50 * n):
            if len(made) >= n:
                break
            form = forms[i % len(forms)]
            if form == "incident":
                base = int(rng.choice(incidents)[4:]) if incidents and rng.random() < 0.6 else rng.randrange(1000, 9999)
                ident = f"INC-{max(1000, base + rng.choice((-1, 1)) * rng.randrange(1, 60))}"
                query = rng.choice(("{id}", "what caused {id}?", "what happened in {id}?", "who handled {id}?", "{id} root cause"))
            elif form == "ticket":
                ident = _text(SLOTS["tid"](rng), "en")
                query = rng.choice(("{id}", "what is {id} about?", "status of {id}?"))
            else:
                length = rng.randrange(7, 11)
                head = rng.choice(hashes)[: rng.randrange(4, 7)] if form == "near_hash" and hashes else ""
                ident = head + "".join(rng.choice("0123456789abcdef") for _ in range(length - len(head)))
                if not (re.search(r"\d", ident) and re.search(r"[a-f]", ident)):
                    continue
                if any(h.startswith(ident) or ident.startswith(h) for h in hashes):
                    continue
                query = rng.choice(("{id}", "what did {id} change?", "which fix is in {id}?", "commit {id}"))
            if ident.lower() in low or ident in made:
                continue
            made[ident] = form
            self.add(_vary(query.format(id=ident), rng), "absent_id", form)


# ---------------------------------------------------------------------------
# The suite


def load_manifest(path: Path = MANIFEST) -> tuple[int, list[Spec], dict[str, str]]:
    """The suite's seed, its workspaces in order, and their recorded digests."""
    data = json.loads(path.read_text(encoding="utf-8"))
    specs = [Spec(w["id"], w["style"], w["size"], w["lang"], w["half"]) for w in data["workspaces"]]
    return data["seed"], specs, {w["id"]: w.get("digest", "") for w in data["workspaces"]}


def build(spec: Spec, seed: int) -> Workspace:
    """One workspace and its questions, from the suite's seed and its id alone."""
    rng = random.Random(f"{seed}/{spec.id}")
    world = World(spec, rng)
    size = Size(spec.size)
    facts = pick_facts(world, size.facts, size.changes)
    changes = [change_of(world, old, explicit=(i % 2 == 0)) for i, old in enumerate(facts[: size.changes])]
    n_noise = spec.size - len(facts) - len(changes)
    assert n_noise >= 0, spec
    notebook = Notebook(world, facts, changes, n_noise)
    files, last, entries = notebook.write()
    asker = Asker(world, facts, changes, files)
    asker.answerable(size.asked)
    asker.superseded()
    asker.absent_person(size.negatives)
    asker.absent_topic(size.negatives)
    asker.partial_overlap(size.negatives)
    asker.absent_id(size.negatives)
    return Workspace(spec, files, asker.out, last, entries)


def build_suite(specs: Sequence[Spec] | None = None, seed: int | None = None) -> list[Workspace]:
    m_seed, m_specs, _ = load_manifest()
    return [build(s, m_seed if seed is None else seed) for s in (m_specs if specs is None else specs)]


def write_workspace(ws: Workspace, folder: Path) -> bool:
    """Write the files under ``folder`` (MEMORY.md, memory/...), leaving those
    already identical untouched so the index's sync has nothing to do.
    Returns whether anything changed."""
    changed = False
    wanted = {folder / p: text for p, text in ws.files.items()}
    for old in sorted(folder.rglob("*.md")):
        if old not in wanted:
            old.unlink()
            changed = True
    for path, text in wanted.items():
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
            changed = True
    return changed


def write_suite(suite: Sequence[Workspace], out: Path) -> None:
    """``out/<id>/workspace/`` and ``out/<id>/questions.json`` per workspace."""
    for ws in suite:
        write_workspace(ws, out / ws.spec.id / "workspace")
        q = out / ws.spec.id / "questions.json"
        text = json.dumps({"last_day": ws.last_day.isoformat(), "questions": [x.to_json() for x in ws.questions]}, indent=1) + "\n"
        if not q.exists() or q.read_text(encoding="utf-8") != text:
            q.write_text(text, encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=HERE.parents[1] / "bench" / "out" / "trust")
    ap.add_argument("--check", action="store_true", help="fail when a workspace differs from the manifest's digest")
    ap.add_argument("--update-digests", action="store_true", help="record the digests in manifest.json (the split stays)")
    args = ap.parse_args(argv)
    seed, specs, digests = load_manifest()
    suite = build_suite(specs, seed)
    write_suite(suite, args.out)
    bad = 0
    for ws in suite:
        counts = {k: sum(1 for q in ws.questions if q.kind == k) for k in KINDS}
        same = ws.digest() == digests.get(ws.spec.id)
        bad += not same
        print(
            f"{ws.spec.id:14} {ws.spec.half:5} {len(ws.files):4} files {ws.entries:5} entries  "
            + " ".join(f"{k}={v}" for k, v in counts.items())
            + ("" if same else "  (differs from the manifest)")
        )
    if args.update_digests:
        data = json.loads(MANIFEST.read_text(encoding="utf-8"))
        for w, ws in zip(data["workspaces"], suite):
            w["digest"] = ws.digest()
        MANIFEST.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    return 1 if args.check and bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
