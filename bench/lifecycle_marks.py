"""The marks and dates of what search shows and recall hands on, cases
bench/lifecycle.py prints: after entries are superseded (by entries in the
same chunk, in another file, and along a chain) and forgotten, and after capture appended
to MEMORY.md and a daily note; keyword-only or with the local model.
DESIGN.md §17.
"""

from __future__ import annotations

import re
import tempfile
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from lifecycle_cases import agent

from memext.engine import MemoryIndex, recall
from memext.engine.agents.capture import capture

# -- marks and dates in what search shows ----------------------------------------------

MARKS_MEMORY = """# Memory

## People
- Ines works on the Harbor data team.
- Ines prefers green tea.
- Ada lives in Lagos.
- The office wifi password is on the fridge.
- Bob's dentist is Dr. Costa.
- Lars plays the cello on Sundays.

## Work
- Gullwing stores raw tide readings in InfluxDB.
- Deploys happen on Tuesdays.
- The staging cluster runs in Frankfurt.
"""
#: (line, the entry that replaces it and where it is written: None for
#: MEMORY.md, else a daily note; None for a line forgotten).
MARKS_CHANGES = (
    (5, "Ines switched: she now prefers black coffee, no tea.", None),
    (6, "Ada moved to Abuja in March.", "memory/2026-03-02.md"),
    (7, "Router credentials now live in the team vault.", "memory/2026-03-03.md"),
    (12, "Decision: Gullwing moves to TimescaleDB.", None),
    (13, None, None),
    (8, None, None),
)
#: The retired entries' words that must not show as if they held.
#: The entry that replaced the wifi one, replaced in turn (a chain of supersedes).
MARKS_CHAIN = ("memory/2026-03-03.md:2", "The vault moved to 1Password; the router login is there.", "memory/2026-03-04.md")
MARKS_RETIRED = ("green tea", "Lagos", "fridge", "InfluxDB", "Tuesdays", "Costa", "team vault")
#: Questions the retired entries answered, and the words of the entry that
#: replaced each (None: forgotten, nothing should answer).
MARKS_ASKED = (
    ("what does Ines like to drink?", "black coffee"),
    ("Ines green tea", "black coffee"),
    ("where does Ada live?", "Abuja"),
    ("Ada Lagos", "Abuja"),
    ("wifi password", "1Password"),
    ("where is the office wifi password?", "1Password"),
    ("which database does Gullwing use for tide readings?", "TimescaleDB"),
    ("InfluxDB tide readings", "TimescaleDB"),
    ("when do deploys happen?", None),
    ("who is Bob's dentist?", None),
)
#: Questions about the live entries beside them: their excerpts hold the
#: retired lines, and their date is their own (MEMORY.md: none).
MARKS_BESIDE = ("Ines Harbor data team", "Lars cello Sundays", "staging cluster Frankfurt", "who works on the Harbor data team?")


@dataclass(frozen=True)
class MarksFigures:
    mode: str  # "keyword" or "local"
    searches: int
    shown_unmarked: int  # results showing a retired entry's text as if it held (target 0)
    recalled: int  # recall blocks holding a retired entry's text (target 0)
    #: Questions of a superseded entry that it answered confidently before
    #: it was replaced (searched in the same run, before the changes) ...
    successors: int
    successors_found: int  # ... whose confident answer is then the entry that replaced it
    #: Questions of a superseded entry that it did not answer before (no
    #: target: the new entry inherits its predecessor's evidence, no more).
    unanswered_before: int
    unanswered_found: int
    forgotten_answered: int  # questions of a forgotten entry answered confidently by anything (target 0)
    dated: int  # results of live entries of MEMORY.md, which no heading dates
    dated_wrong: int  # ... dated by another entry's heading (target 0)

    @property
    def successor_share(self) -> float:
        return self.successors_found / self.successors if self.successors else 0.0


def run_marks(model: Path | None = None) -> MarksFigures:
    """Supersede and forget entries of MEMORY.md (the new entries in
    MEMORY.md, under a dated heading, and in daily notes), then search and
    recall, keyword-only or with ``model``: what is shown, recalled and
    dated, and whether the questions the old entries answered find the new
    ones."""
    with tempfile.TemporaryDirectory(prefix="memext-marks-") as tmp:
        root = Path(tmp)
        ws = root / "ws"
        (ws / "memory").mkdir(parents=True)
        (ws / "MEMORY.md").write_text(MARKS_MEMORY, encoding="utf-8")
        with MemoryIndex(agent(root, ws, model=model)) as idx:
            idx.sync()
            replaced = {line for line, text, _ in MARKS_CHANGES if text is not None}
            answered_before = set()
            for question, new in MARKS_ASKED:
                confident = [r for r in idx.search(question).results if r.confident]
                if new and confident and confident[0].path == "MEMORY.md" and confident[0].best_line in replaced:
                    answered_before.add(question)
            for line, text, file in MARKS_CHANGES:
                if text is None:
                    idx.forget(f"MEMORY.md:{line}", "no longer true")
                else:
                    idx.append(text, file=file or "MEMORY.md", supersedes=f"MEMORY.md:{line}")
            idx.append(MARKS_CHAIN[1], file=MARKS_CHAIN[2], supersedes=MARKS_CHAIN[0])
            searches = unmarked = recalled = answered = dated = wrong = 0
            found = {True: 0, False: 0}
            for question in [q for q, _ in MARKS_ASKED] + list(MARKS_BESIDE):
                resp = idx.search(question, include_weak=True)
                searches += 1
                for r in resp.results:
                    shown = [r.snippet] + ([ln.text for ln in r.excerpt.lines] if r.excerpt else [])
                    unmarked += any(w in t for w in MARKS_RETIRED for t in shown)
                    if r.path == "MEMORY.md" and r.best_line < 15 and r.confident:
                        dated += 1
                        wrong += r.date is not None
                block = recall(question, index=idx).context
                recalled += any(w in block for w in MARKS_RETIRED)
                new = dict(MARKS_ASKED).get(question, "")
                confident = [r for r in resp.results if r.confident]
                if new:
                    top = confident[0] if confident else None
                    found[question in answered_before] += top is not None and new in (top.excerpt.to_text() if top.excerpt else top.snippet)
                elif question in dict(MARKS_ASKED):
                    answered += bool(confident)
    asked = [q for q, new in MARKS_ASKED if new]
    before = len(answered_before)
    return MarksFigures(
        "local" if model else "keyword",
        searches,
        unmarked,
        recalled,
        before,
        found[True],
        len(asked) - before,
        found[False],
        answered,
        dated,
        wrong,
    )


# -- dates after capture -----------------------------------------------------------------

#: MEMORY.md before capture: undated entries, and one under a dated heading.
DATES_MEMORY = """# Memory

## Pets
- Dog: Pepper, a beagle, weighs 11 kg.
- The cat, Miso, eats wet food twice a day.

## 2025-06-01
- The standup moved to 9:45 on weekdays.

## Places
- The Lisbon office opens at 8:30.
"""
#: A daily note of its own day, one entry under a time heading.
DATES_NOTES = {
    "memory/2025-03-14.md": "# 2025-03-14\n\n## 09:10\n- The VPN password rotates every month.\n- The tide importer runs at 02:00.\n",
}
#: Captured on CAPTURED_ON: two facts for MEMORY.md, one decision for the day's note.
DATES_TALK = (
    "Please remember that my dentist is Dr. Almeida at Clinica Foz.",
    "My sister Ada lives in Abuja.",
    "We decided to move the release review to Thursdays.",
)
CAPTURED_ON = datetime(2026, 11, 28, 22, 28)
#: (question, words of the entry that answers it, the date it must carry: None for none)
DATES_ASKED = (
    ("Pepper beagle weight", "Pepper", None),
    ("what does Miso the cat eat?", "Miso", None),
    ("when is the standup?", "standup", "2025-06-01"),
    ("Lisbon office opening hours", "Lisbon", None),
    ("VPN password rotation", "VPN", "2025-03-14"),
    ("when does the tide importer run?", "tide importer", "2025-03-14"),
    ("who is my dentist?", "Almeida", "2026-11-28"),
    ("where does Ada live?", "Abuja", "2026-11-28"),
    ("release review day", "release review", "2026-11-28"),
)


@dataclass(frozen=True)
class DatesFigures:
    mode: str
    asked: int
    answered: int  # questions whose confident top result is the expected entry
    dated_right: int  # ... carrying that entry's own date (none for an undated one)
    recalled: int  # questions whose recall block holds the expected entry
    recalled_dated_right: int  # ... with that entry's own date
    notes: tuple[str, ...]

    @property
    def share(self) -> float:
        return (self.dated_right + self.recalled_dated_right) / (self.answered + self.recalled) if self.answered + self.recalled else 0.0


def run_dates(model: Path | None = None) -> DatesFigures:
    """Capture a conversation into a workspace holding undated and dated
    entries (MEMORY.md, a daily note), then search and recall: is each
    result and recall block dated by its own entry?"""
    answered = right = recalled = recalled_right = 0
    notes: list[str] = []
    with tempfile.TemporaryDirectory(prefix="memext-dates-") as tmp:
        root = Path(tmp)
        ws = root / "ws"
        (ws / "memory").mkdir(parents=True)
        (ws / "MEMORY.md").write_text(DATES_MEMORY, encoding="utf-8")
        for path, text in DATES_NOTES.items():
            (ws / path).write_text(text, encoding="utf-8")
        with MemoryIndex(agent(root, ws, model=model)) as idx:
            idx.sync()
            capture([{"role": "user", "content": text} for text in DATES_TALK], index=idx, now=CAPTURED_ON)
            for question, words, day in DATES_ASKED:
                confident = [r for r in idx.search(question).results if r.confident]
                top = confident[0] if confident else None
                if top is not None and words in _best_text(top):
                    answered += 1
                    right += top.date == day
                    if top.date != day:
                        notes.append(f"{question!r}: {top.citation} dated {top.date}, its entry {day}")
                else:
                    notes.append(f"{question!r}: not answered by the entry holding {words!r}")
                block = recall(question, index=idx).context
                mine = next((m for m in re.findall(r"<memory [^>]*>[^<]*</memory>", block) if words in m), None)
                if mine is not None:
                    recalled += 1
                    got = re.search(r'date="([^"]+)"', mine)
                    recalled_right += (got.group(1) if got else None) == day
    return DatesFigures("local" if model else "keyword", len(DATES_ASKED), answered, right, recalled, recalled_right, tuple(notes))


def _best_text(r) -> str:
    """The text of a result's best-matching line (its snippet without an excerpt)."""
    if r.excerpt is None:
        return r.snippet
    return next((ln.text for ln in r.excerpt.lines if ln.number == r.best_line), "")
