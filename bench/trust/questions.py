"""The questions asked of a workspace, each labelled with what answers it.

The kinds are listed in :data:`KINDS`; trust/generate.py's docstring says
what each asks. An :class:`Asker` draws them from the facts and the
written files: answerable ones from live facts, superseded ones from the
changes, and the four unanswerable kinds from what the files do not hold.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
from typing import Iterable

from nltk.stem.porter import PorterStemmer

import trust.pools as P
from trust.facts import FACT_TYPES, SLOTS, FactType, Value
from trust.layout import Label
from trust.world import Fact, World, _field_names, _text

KINDS = ("answerable", "absent_person", "absent_topic", "partial_overlap", "absent_id", "superseded")
UNANSWERABLE = ("absent_person", "absent_topic", "partial_overlap", "absent_id")


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
