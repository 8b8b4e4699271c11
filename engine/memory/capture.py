"""Capture: facts, preferences and decisions stated in a conversation,
stored as memory entries by rules, without a model (DESIGN.md §17).

What is taken: sentences of the user's messages (the assistant's only on
request) that hold a trigger (remember, prefer, always/never, decided,
"my X is", contact details) in English, German, French, Spanish, Chinese
or Japanese; at most :data:`MAX_PER_TURN` per message, the most important
first. What is left out: questions, text outside the length bounds, text
that is itself recalled memory or markup (code, HTML, tables, JSON),
text that reads as instructions to a model (engine/memory/hostile.py), and
exact or near-duplicates of memory already written (or captured earlier in
the same run).

Each entry carries ``origin=capture``, a category and an importance in its
metadata comment, and goes through the locked append: preferences, people
and durable facts to MEMORY.md, decisions and the rest to today's note.
Capture is off unless ``memory_search.capture.enabled`` is true for the
agent.
"""

from __future__ import annotations

import json
import re
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Mapping, Sequence

from ..errors import MemextError
from ..text import STOP_WORDS, is_cjk
from .entries import EntryMeta, parse_entries, strip_meta
from .hostile import instruction_like

#: The most entries one message may give.
MAX_PER_TURN = 3
#: Length bounds of a captured sentence, in characters (a CJK character
#: counts as two: a short CJK sentence says as much as a longer one).
MIN_CHARS = 10
MAX_CHARS = 500
#: :func:`similarity` at or above which a sentence is a near-duplicate of
#: memory already written. Measured on the labelled pairs of
#: bench/lifecycle.py: restatements scored 0.667 and up, different facts
#: in similar words (more detail that is news, a changed value) 0.5 and
#: below; 0.6 sits in that gap (its threshold table).
NEAR_DUPLICATE = 0.6

_HERE = "MEMORY.md"


@dataclass(frozen=True)
class Message:
    """One message of a conversation."""

    role: str
    content: str


@dataclass(frozen=True)
class Candidate:
    """A sentence capture would store: the text, its category and
    importance, the message it came from (0-based) and the rule that found it."""

    text: str
    category: str
    importance: float
    turn: int
    trigger: str

    @property
    def target(self) -> str | None:
        """MEMORY.md for preferences, people and durable facts; None (today's note) else."""
        return _HERE if self.category in ("preference", "entity", "fact") else None

    def meta(self) -> EntryMeta:
        return EntryMeta(origin="capture", via="conversation", category=self.category, importance=self.importance)


@dataclass(frozen=True)
class Captured:
    """A candidate and where it was written (``citation`` None on a dry
    run), and the line it supersedes when it announced a change."""

    candidate: Candidate
    citation: str | None
    supersedes: str | None = None


@dataclass(frozen=True)
class Skipped:
    """A candidate left out, and why (``duplicate of PATH:LINE``...)."""

    candidate: Candidate
    reason: str


@dataclass(frozen=True)
class CaptureReport:
    """What a capture wrote and what it left out. ``enabled`` is False when
    capture is off for the agent (nothing is written then)."""

    agent: str
    enabled: bool
    written: tuple[Captured, ...]
    skipped: tuple[Skipped, ...]

    def to_dict(self) -> dict:
        return {
            "agent": self.agent,
            "enabled": self.enabled,
            "written": [
                {
                    "text": c.candidate.text,
                    "category": c.candidate.category,
                    "importance": c.candidate.importance,
                    "turn": c.candidate.turn,
                    "citation": c.citation,
                    "supersedes": c.supersedes,
                }
                for c in self.written
            ],
            "skipped": [
                {"text": s.candidate.text, "category": s.candidate.category, "turn": s.candidate.turn, "reason": s.reason}
                for s in self.skipped
            ],
        }


# -- the rules -----------------------------------------------------------------

_EMAIL = r"[\w.+-]+@[\w-]+\.[\w.-]+"
_PHONE = r"(?<![\w.])\+?\d[\d ()./-]{6,}\d(?![\w.])"
_CONTACT_WORDS = (
    r"name|e-?mail|phone|number|address|birthday|wife|husband|partner|son|daughter|mother|father|"
    r"brother|sister|boss|manager|doctor|dentist|colleague|friend|dog|cat"
)

#: (category, importance, rule name, pattern), tried in this order: the
#: first rule that matches names the category.
_RULES: tuple[tuple[str, float, str, re.Pattern[str]], ...] = tuple(
    (cat, imp, name, re.compile(rx, re.IGNORECASE))
    for cat, imp, name, rx in (
        ("entity", 0.8, "contact", rf"{_EMAIL}|{_PHONE}"),
        ("entity", 0.8, "my-x-is", rf"\bmy (?:\w+ )?(?:{_CONTACT_WORDS})(?:'s name)? (?:is|are|was)\b"),
        (
            "decision",
            0.8,
            "decided",
            r"\b(?:we|i)(?: have|'ve)? (?:decided|agreed|chose|settled on)\b|\blet's go with\b|\bthe decision is\b|"
            r"\bwir haben (?:uns )?(?:entschieden|beschlossen)\b|\bentschieden\b|\bbeschlossen\b|"
            r"\b(?:nous avons|on a) (?:décidé|choisi)\b|\bdécidé\b|"
            r"\b(?:decidimos|hemos decidido|decidí)\b|"
            r"决定|決定|決め(?:た|ました)",
        ),
        (
            "preference",
            0.7,
            "prefer",
            r"\bi (?:really |much |do )?(?:prefer|like|love|hate|dislike|enjoy|can't stand|cannot stand)\b|\bmy favou?rite\b|"
            r"\bich (?:bevorzuge|mag|liebe|hasse)\b|\blieber\b|\bje (?:préfère|prefere|n'aime pas|aime|déteste|adore)\b|"
            r"\b(?:prefiero|me gusta|me encanta|odio)\b|"
            r"我(?:更|比较|很|不)?(?:喜欢|偏好|讨厌|爱)|偏好|(?:が|は)(?:好き|嫌い)|好みは",
        ),
        (
            "preference",
            0.7,
            "always-never",
            r"\b(?:always|never)\b|\b(?:immer|niemals|nie)\b|\b(?:toujours|jamais)\b|\b(?:siempre|nunca)\b|"
            r"总是|永远|从不|从来不|いつも|絶対に",
        ),
        (
            "fact",
            0.6,
            "my-x-is",
            r"\bmy \w+(?: \w+)? (?:is|are)\b|\bmeine? \w+ (?:ist|sind)\b|\b(?:mon|ma|mes) \w+ (?:est|sont)\b|"
            r"\b(?:mi|mis) \w+ (?:es|son)\b|我的.{1,8}是|私の.{1,8}は",
        ),
        (
            "fact",
            0.6,
            "about-me",
            r"\bi(?: am|'m) (?:a|an|the)\b|\bi live in\b|\bi work (?:at|for|as|on)\b|\bi was born\b|"
            r"\bich (?:wohne|arbeite|bin)\b|\bj'habite\b|\bje travaille\b|\b(?:vivo en|trabajo en)\b|"
            r"我住在|我在.{1,10}工作|に住んで",
        ),
        (
            "fact",
            0.6,
            "remember",
            r"\bremember\b|\bdon't forget\b|\bkeep in mind\b|\bnote that\b|\bmerk dir\b|\bvergiss nicht\b|"
            r"\b(?:souviens|rappelle)[- ]toi\b|\bn'oublie pas\b|\brecuerda\b|\bno olvides\b|记住|别忘了|不要忘记|覚えて",
        ),
    )
)
_EXPLICIT = re.compile(r"\bremember\b|\bdon't forget\b|\bkeep in mind\b|\bmerk dir\b|\bsouviens|\brecuerda\b|记住|覚えて", re.IGNORECASE)
#: Triggers that say the opposite of storing something.
_NOT_A_FACT = re.compile(
    r"\b(?:do(?:n't| not)|can't|cannot|couldn't) (?:remember|recall)\b|\bi (?:like|love|hate) (?:that|this|it|them|those)\b|"
    r"\bremember when\b|\bnever mind\b|\bnevermind\b",
    re.IGNORECASE,
)
#: Text that is recalled memory, or markup rather than prose.
_RECALLED = re.compile(r"</?memor(?:y|ies)\b|<!--\s*memext|\b[\w./-]+\.md:\d+(?:-\d+)?\b|^\s*>", re.IGNORECASE | re.MULTILINE)
_MARKUP = re.compile(r"```|~~~|<[a-z][\w-]*(?:\s[^>]*)?>|^\s*[{\[]|^\s*\|.*\|\s*$", re.IGNORECASE | re.MULTILINE)
_FENCED = re.compile(r"(```|~~~).*?(?:\1|\Z)", re.DOTALL)
_SENTENCE = re.compile(r"[^.!?。！？\n]+(?:[.!?。！？]+|$)", re.MULTILINE)


def _weight(text: str) -> int:
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def sentences(text: str) -> list[str]:
    """The sentences of a message, stripped (an e-mail address or a decimal
    keeps its dots)."""
    protected = re.sub(r"(?<=\w)\.(?=\w)", "\u2024", text)  # one-dot leader: not a sentence end
    return [s.strip().replace("\u2024", ".") for s in _SENTENCE.findall(protected) if s.strip()]


def classify(sentence: str) -> tuple[str, float, str] | None:
    """(category, importance, rule) for a sentence worth storing, else None."""
    if sentence.rstrip().endswith(("?", "？")) or _NOT_A_FACT.search(sentence):
        return None
    for category, importance, name, rx in _RULES:
        if rx.search(sentence):
            if _EXPLICIT.search(sentence):
                importance = min(1.0, importance + 0.2)
            return category, round(importance, 2), name
    return None


def extract(messages: Sequence[Message], *, roles: Iterable[str] = ("user",), max_per_turn: int = MAX_PER_TURN) -> list[Candidate]:
    """The candidates of ``messages`` by the rules (nothing is written)."""
    wanted = set(roles)
    out: list[Candidate] = []
    for turn, msg in enumerate(messages):
        # A message that tries to instruct the model is not the user's
        # memory, not even the plain sentences around the attempt.
        if msg.role not in wanted or _RECALLED.search(msg.content) or instruction_like(msg.content):
            continue
        found: list[Candidate] = []
        for sentence in sentences(_FENCED.sub("\n", msg.content)):  # code is not a statement
            if not MIN_CHARS <= _weight(sentence) <= MAX_CHARS or _MARKUP.search(sentence):
                continue
            kind = classify(sentence)
            if kind is not None:
                found.append(Candidate(sentence, kind[0], kind[1], turn, kind[2]))
        found.sort(key=lambda c: -c.importance)  # stable: ties keep the order they were said in
        out += sorted(found[:max_per_turn], key=lambda c: messages[c.turn].content.find(c.text))
    return out


# -- duplicates ----------------------------------------------------------------


def normalized(text: str) -> str:
    """Lower case, letters and digits only, single spaces."""
    text = unicodedata.normalize("NFKC", strip_meta(text)).lower()
    text = re.sub(r"^\s*(?:[-*+]|\d+[.)])\s+", "", text)
    return " ".join(re.sub(r"[^\w\s]", " ", text).split())


#: Words that say nothing about the fact itself: a restatement may add or
#: drop them ("as I said", "really") and still say the same.
_FILLER = frozenset(
    """said say says saying told tell again already really just still also please
remember note yes ok okay well so like mentioned don t forget way btw
actually now anymore instead""".split()
)  # the last line: words that announce a change (_CHANGE), not content
#: Words that announce a change: such a sentence updates what memory holds
#: ("actually I prefer the afternoons now"), so only an exact repeat of it
#: is a duplicate.
_CHANGE = re.compile(
    r"\b(?:actually|now|anymore|any more|no longer|changed|switched|instead|these days|from now on)\b|"
    r"\b(?:jetzt|nicht mehr|inzwischen|maintenant|désormais|ahora|ya no)\b|现在|不再|今は|もう",
    re.IGNORECASE,
)


def content_tokens(text: str) -> frozenset[str]:
    """The words of a text that carry its content: lower case, stop words
    and filler left out, a plural ``s`` dropped; each CJK character is a
    token (CJK text has no spaces)."""
    out: set[str] = set()
    for word in normalized(text).split():
        if any(is_cjk(ch) for ch in word):
            out.update(ch for ch in word if is_cjk(ch) or ch.isalnum())
            continue
        if word in STOP_WORDS or word in _FILLER:
            continue
        out.add(word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word)
    return frozenset(out)


def similarity(a: str, b: str) -> float:
    """How nearly two texts say the same (0..1): the Jaccard similarity of
    their content tokens, and 0 unless one's tokens all appear in the
    other. A changed value ("tea" -> "coffee") leaves a token on each side,
    so it is never a duplicate however much else is shared; a restatement
    only adds or drops words."""
    return _similarity(content_tokens(a), content_tokens(b))


def duplicate_score(candidate: str, known: str) -> float:
    """:func:`similarity`, except that a candidate announcing a change
    scores 0 (it updates ``known`` rather than repeating it)."""
    return 0.0 if _CHANGE.search(candidate) else similarity(candidate, known)


def _similarity(ta: frozenset[str], tb: frozenset[str]) -> float:
    if not ta or not tb or not (ta <= tb or tb <= ta):
        return 0.0
    return len(ta & tb) / len(ta | tb)


@dataclass(frozen=True)
class _Known:
    text: str
    tokens: frozenset[str]
    where: str


class KnownMemory:
    """The lines already in memory, to test candidates against."""

    def __init__(self, known: Iterable[tuple[str, str]] = ()):
        self._items: list[_Known] = []
        self._exact: dict[str, str] = {}
        for text, where in known:
            self.add(text, where)

    def add(self, text: str, where: str) -> None:
        norm = normalized(text)
        if not norm:
            return
        self._exact.setdefault(norm, where)
        self._items.append(_Known(norm, content_tokens(norm), where))

    def duplicate_of(self, text: str, threshold: float = NEAR_DUPLICATE) -> str | None:
        """Where ``text`` is already said (exactly or nearly), else None."""
        norm = normalized(text)
        if norm in self._exact:
            return self._exact[norm]
        if _CHANGE.search(text):
            return None
        tokens = content_tokens(norm)
        for item in self._items:
            if _similarity(tokens, item.tokens) >= threshold:
                return item.where
        return None

    def replaced_by(self, text: str) -> str | None:
        """The line ``text`` updates, when it announces a change ("actually
        I prefer the afternoons now") and shares at least two content words,
        and at least half of its own, with a line written before (the one
        sharing most); else None."""
        if not _CHANGE.search(text):
            return None
        tokens = content_tokens(text)
        best, best_shared = None, 1
        for item in self._items:
            shared = len(tokens & item.tokens)
            if shared > best_shared and shared * 2 >= len(tokens) and ".md:" in item.where:
                best, best_shared = item.where, shared
        return best


def known_memory(files: Iterable[tuple[str, str]]) -> KnownMemory:
    """The live text lines (not headings, not blank, not forgotten or
    superseded: what is no longer true may be said again) of memory files
    given as (display path, text), each with its citation."""
    known = KnownMemory()
    for shown, text in files:
        entries = parse_entries(text)
        for number, line in enumerate(entries.lines, start=1):
            if line.strip() and not line.lstrip().startswith("#") and entries.info(number).status == "live":
                known.add(line, f"{shown}:{number}")
    return known


# -- messages in ----------------------------------------------------------------


def as_messages(items: Iterable[Message | Mapping[str, object]]) -> list[Message]:
    """Messages from :class:`Message` objects or OpenAI-style dicts
    (``role``, ``content`` as text or a list of text parts)."""
    out: list[Message] = []
    for item in items:
        if isinstance(item, Message):
            out.append(item)
            continue
        role, content = item.get("role"), _text(item.get("content"))
        if isinstance(role, str) and content.strip():
            out.append(Message(role, content))
    return out


def read_transcript(path: Path) -> list[Message]:
    """The messages of a JSONL transcript: one message per line, either
    ``{"role": ..., "content": ...}`` or a session record
    ``{"type": "message", "message": {...}}``; other lines are skipped."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise MemextError(f"{path}: no such transcript") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise MemextError(f"cannot read {path}: {exc}") from exc
    records: list[Mapping[str, object]] = []
    for raw in text.split("\n"):
        try:
            record = json.loads(raw) if raw.strip() else None
        except ValueError:
            continue
        if isinstance(record, dict) and isinstance(record.get("message"), dict):
            record = record["message"]
        if isinstance(record, dict):
            records.append(record)
    return as_messages(records)


def _text(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(p.get("text")) for p in content if isinstance(p, dict) and isinstance(p.get("text"), str))
    return ""
