"""Facts and everyday entries written out as one style writes them.

A :class:`Notebook` places a workspace's facts (durable ones in MEMORY.md,
the rest and every change in daily notes, a change after what it changes)
and writes each day as its style does: bullets, diary paragraphs, a work
log, meeting notes or chat turns; the mixed style is bullets with entries
in a second language. Changes made with memext get its supersede marks
(DESIGN.md §17) once every entry has its place.
"""

from __future__ import annotations

from datetime import date, timedelta
from typing import Sequence

import trust.noise as N
import trust.pools as P
from trust.facts import SLOTS
from trust.layout import Entry, FileBuilder
from trust.world import STYLE_WEIGHTS, Fact, Size, World, _text


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
