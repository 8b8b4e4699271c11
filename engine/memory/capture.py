"""Capture: facts, preferences and decisions stated in a conversation,
stored as memory entries by rules, without a model (DESIGN.md §17).

What is taken: sentences (cut by a maintained segmenter, so "Dr." or
"9:15 a.m." do not end one: :mod:`.sentences`) of the user's messages
(the assistant's only on request) that hold a trigger (remember, prefer,
always/never, decided, "my X is", facts about the people in one's life,
contact details, a change of fact: :mod:`.changes`) in English, German,
French, Spanish, Chinese or Japanese; at most :data:`MAX_PER_TURN` per
message, the most important first. A sentence about someone said with a
pronoun is stored with that person named (:mod:`.people`). What is left
out: questions, hypotheticals, text outside the length bounds, text that
is itself recalled memory or markup (code, HTML, tables, JSON), text that
reads as instructions to a model (engine/memory/hostile.py), and exact or
near-duplicates of memory already written (or captured earlier in the
same run).

Each entry carries ``origin=capture``, a category and an importance in its
metadata comment, and goes through the locked append: preferences, people
and durable facts to MEMORY.md, decisions and the rest to today's note.
Calling capture is consent; ``memory_search.capture.enabled`` gates only
automatic capture (engine/agents/capture.py).

Over 500 lines because the trigger rules of six languages are data kept
beside the code that applies them.
"""

from __future__ import annotations

import functools
import json
import re
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Mapping, Sequence

from ..errors import MemextError
from ..text import STOP_WORDS, is_cjk
from . import changes, people
from .entries import EntryMeta, parse_entries, strip_meta
from .hostile import instruction_like
from .sentences import sentences

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
    importance, the message it came from (0-based) and the rule that found
    it. ``said`` is the sentence as written when ``text`` names the person
    it called "she" or "he"; ``unnamed`` the pronoun when no one could be
    named for it (such a sentence is not stored)."""

    text: str
    category: str
    importance: float
    turn: int
    trigger: str
    said: str = ""
    unnamed: str | None = None

    @property
    def sentence(self) -> str:
        """The sentence as it was written."""
        return self.said or self.text

    @property
    def target(self) -> str | None:
        """MEMORY.md for preferences, people and durable facts; None (today's note) else."""
        return _HERE if self.category in ("preference", "entity", "fact") else None

    def meta(self) -> EntryMeta:
        return EntryMeta(origin="capture", via="conversation", category=self.category, importance=self.importance)


@dataclass(frozen=True)
class Captured:
    """A candidate and where it was written (``citation`` None on a dry
    run), and the entry it supersedes (its citation and text) when it
    states a change of fact."""

    candidate: Candidate
    citation: str | None
    supersedes: str | None = None
    superseded_text: str | None = None


@dataclass(frozen=True)
class Problem:
    """A line of a transcript that could not be read as a message."""

    line: int
    reason: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.reason}"


@dataclass(frozen=True)
class Skipped:
    """A candidate left out, and why (``duplicate of PATH:LINE``...)."""

    candidate: Candidate
    reason: str


@dataclass(frozen=True)
class CaptureReport:
    """What a capture wrote and what it left out.

    ``stored``: whether it wrote (False on a dry run, and for automatic
    capture of an agent whose ``memory_search.capture.enabled`` is off:
    ``enabled`` is that key). ``written`` lists what was (or would be)
    stored; ``notice`` says why nothing was written when it was not for
    want of facts."""

    agent: str
    enabled: bool
    written: tuple[Captured, ...]
    skipped: tuple[Skipped, ...]
    stored: bool = True
    notice: str | None = None

    @property
    def superseded(self) -> tuple[str, ...]:
        """The citations of the entries this capture marked superseded."""
        return tuple(c.supersedes for c in self.written if c.supersedes and c.citation)

    def to_dict(self) -> dict:
        out: dict = {
            "agent": self.agent,
            "stored": self.stored,
            "written": [
                {
                    "text": c.candidate.text,
                    **({"said": c.candidate.said} if c.candidate.said else {}),
                    "category": c.candidate.category,
                    "importance": c.candidate.importance,
                    "turn": c.candidate.turn,
                    "citation": c.citation,
                    **({"supersedes": c.supersedes, "superseded_text": c.superseded_text} if c.supersedes else {}),
                }
                for c in self.written
            ],
            "skipped": [
                {"text": s.candidate.text, "category": s.candidate.category, "turn": s.candidate.turn, "reason": s.reason}
                for s in self.skipped
            ],
        }
        if self.notice:
            out["notice"] = self.notice
        return out


# -- the rules -----------------------------------------------------------------

_EMAIL = r"[\w.+-]+@[\w-]+\.[\w.-]+"
_PHONE = r"(?<![\w.])\+?\d[\d ()./-]{6,}\d(?![\w.])"
_CONTACT_WORDS = (
    r"name|e-?mail|phone|number|address|birthday|wife|husband|partner|son|daughter|mother|father|"
    r"brother|sister|boss|manager|doctor|dentist|colleague|friend|dog|cat"
)

#: Contact words in German, French and Spanish ("meine Nummer ist ...").
_CONTACT_WORDS_ELSEWHERE = r"Name|Nummer|Telefonnummer|Handynummer|Adresse|E-Mail|nom|numéro|adresse|nombre|número|dirección|correo"

#: What one says of someone else that memory keeps: where they live and
#: work, what they are, like and cannot have (English, German, French,
#: Spanish; the verb follows the person).
_THEIR_FACTS = (
    r"(?:(?:is|'s|was) (?:a|an|the|allergic|from|\d)|(?:lives|works|moved|studies|teaches|speaks|starts|goes|likes|loves|hates|prefers|plays|"
    r"has|was born)\b|"
    r"(?:wohnt|lebt|arbeitet|studiert|ist (?:ein|eine|allergisch)|hat|heißt|mag|spielt)\b|"
    r"(?:habite|vit|travaille|étudie|est (?:un|une|allergique)|a \d|aime|déteste|s'appelle)\b|"
    r"(?:vive|trabaja|estudia|es (?:un|una|alérgic)|tiene|se llama|odia)\b)"
)

#: (category, importance, rule name, pattern), tried in this order: the
#: first rule that matches names the category.
_RULES: tuple[tuple[str, float, str, re.Pattern[str]], ...] = tuple(
    (cat, imp, name, re.compile(rx, re.IGNORECASE))
    for cat, imp, name, rx in (
        ("entity", 0.8, "contact", rf"{_EMAIL}|{_PHONE}"),
        (
            "entity",
            0.8,
            "my-x-is",
            rf"\bmy (?:\w+ )?(?:{_CONTACT_WORDS})(?:'s name)? (?:is|are|was)\b|"
            rf"\b(?:mein|meine|mon|ma|mes|mi|mis) (?:{people.RELATIONS}|{_CONTACT_WORDS_ELSEWHERE}) (?:ist|heißt|est|s'appelle|es|se llama)\b|"
            rf"(?:私|我)の?(?:{people.RELATIONS})(?:の名前)?(?:は|是|叫)|我的(?:{people.RELATIONS})",
        ),
        (
            "decision",
            0.8,
            "decided",
            r"\b(?:we|i)(?: have|'ve)? (?:decided|agreed|chose|settled on)\b|\blet's go with\b|\bthe decision is\b|\bdecided\b|"
            r"\b(?:we're|we are) going with\b|"
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
            r"\bi(?: am|'m) (?:a|an|the|allergic)\b|\bi live in\b|\bi work (?:at|for|as|on)\b|\bi was born\b|"
            r"\bich (?:wohne|arbeite|bin)\b|\bj'habite\b|\bje travaille\b|\b(?:vivo en|trabajo en)\b|"
            r"我住在|我在.{1,10}工作|に住んで",
        ),
        (
            "entity",
            0.7,
            "about-them",
            rf"\b(?:my|mein|meine|mon|ma|mi) (?:{people.RELATIONS})(?: (?-i:[A-Z]\w+))? {_THEIR_FACTS}|"
            rf"(?:^|\s)(?:{people.TITLES}) (?-i:[A-Z][\w'-]+)(?:'s \w+ (?:is|are)\b| {_THEIR_FACTS})",
        ),
        (
            "fact",
            0.6,
            "every",
            # What recurs is kept: "the standup is at 9:15 every weekday".
            r"\bevery (?:\w+ )?(?:day|morning|evening|night|week|weekday|weekend|month|year|monday|tuesday|wednesday|thursday|friday|"
            r"saturday|sunday)s?\b|\b(?:jeden|jede|jedes) (?:Tag|Morgen|Abend|Woche|Monat|Jahr|Montag|Dienstag|Mittwoch|Donnerstag|"
            r"Freitag|Samstag|Sonntag)\b|\b(?:chaque|tous les|toutes les) (?:jour|matin|soir|semaine|mois|an|année|lundi|mardi|mercredi|"
            r"jeudi|vendredi|samedi|dimanche)s?\b|\b(?:cada|todos los|todas las) (?:día|mañana|noche|semana|mes|año|lunes|martes|"
            r"miércoles|jueves|viernes|sábado|domingo)s?\b|每(?:天|周|星期|月|年|个)|毎(?:日|朝|晩|週|月|年)",
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
#: Triggers that say the opposite of storing something, and sentences
#: that say what might be rather than what is ("if I ever move ...").
_NOT_A_FACT = re.compile(
    r"\b(?:do(?:n't| not)|can't|cannot|couldn't) (?:remember|recall)\b|\bi (?:like|love|hate) (?:that|this|it|them|those)\b|"
    r"\bremember when\b|\bnever mind\b|\bnevermind\b|"
    r"^\W*(?:if|wenn|falls|si|如果|要是|もし)\b",
    re.IGNORECASE,
)
#: Who a change of fact is about: the speaker, the speaker's people and
#: things, or someone named (a change with no one it is about, "now it
#: works", is not a fact to keep).
_SOMEONE = re.compile(
    r"\b(?:i|i'm|i've|me|my|we|we're|we've|our|ich|mein\w*|wir|unser\w*|je|j'\w+|mon|ma|mes|nous|notre|nos|on (?:a|va|est)|"
    r"yo|mi|mis|nosotros|nuestr\w+)\b|(?-i:\b[A-Z][a-zà-ÿ]+\b)|我|私|僕|俺|うち",
    re.IGNORECASE,
)
_WE = re.compile(r"\b(?:we|we've|we're|our|wir|unser\w*|nous|notre|on (?:a|va|est)|nosotros|nuestr\w+)\b|我们|私たち", re.IGNORECASE)
#: Text that is recalled memory, or markup rather than prose.
_RECALLED = re.compile(r"</?memor(?:y|ies)\b|<!--\s*memext|\b[\w./-]+\.md:\d+(?:-\d+)?\b|^\s*>", re.IGNORECASE | re.MULTILINE)
_MARKUP = re.compile(r"```|~~~|<[a-z][\w-]*(?:\s[^>]*)?>|^\s*[{\[]|^\s*\|.*\|\s*$", re.IGNORECASE | re.MULTILINE)
_FENCED = re.compile(r"(```|~~~).*?(?:\1|\Z)", re.DOTALL)


def _cjk_share(text: str) -> float:
    letters = [ch for ch in text if ch.isalnum()]
    return sum(1 for ch in letters if is_cjk(ch)) / len(letters) if letters else 0.0


def _weight(text: str) -> int:
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def classify(sentence: str) -> tuple[str, float, str] | None:
    """(category, importance, rule) for a sentence worth storing, else None."""
    if sentence.rstrip().endswith(("?", "？")) or _NOT_A_FACT.search(sentence):
        return None
    for category, importance, name, rx in _RULES:
        if rx.search(sentence):
            if _EXPLICIT.search(sentence):
                importance = min(1.0, importance + 0.2)
            return category, round(importance, 2), name
    if changes.states_change(sentence) and (_SOMEONE.search(sentence) or _cjk_share(sentence) > 0.5):
        # A correction matters: it is what memory got wrong. Chinese and
        # Japanese leave the subject out: "今はゴルフをしています".
        category = "entity" if people.mentions(sentence) else "decision" if _WE.search(sentence) else "fact"
        return category, 0.8, "change"
    return None


def extract(messages: Sequence[Message], *, roles: Iterable[str] = ("user",), max_per_turn: int = MAX_PER_TURN) -> list[Candidate]:
    """The candidates of ``messages`` by the rules (nothing is written).

    A sentence opening with "she", "er", "ella", "他"... is about someone:
    it is a candidate when it says a fact about them, with the latest
    person mentioned before it named (:mod:`.people`); a candidate whose
    ``unnamed`` is set found no one to name and is not to be stored."""
    wanted = set(roles)
    out: list[Candidate] = []
    said: list[str] = []  # every sentence so far, any speaker: where people are mentioned
    for turn, msg in enumerate(messages):
        # A message that tries to instruct the model is not the user's
        # memory, not even the plain sentences around the attempt.
        text = _FENCED.sub("\n", msg.content)  # code is not a statement
        if msg.role not in wanted or _RECALLED.search(msg.content) or instruction_like(msg.content):
            said += sentences(text)
            continue
        found: list[Candidate] = []
        for sentence in sentences(text):
            before, said = said[-_LOOK_BACK:], said + [sentence]
            if not MIN_CHARS <= _weight(sentence) <= MAX_CHARS or _MARKUP.search(sentence):
                continue
            cand = _candidate(sentence, turn, before)
            if cand is not None:
                found.append(cand)
        found.sort(key=lambda c: -c.importance)  # stable: ties keep the order they were said in
        out += sorted(found[:max_per_turn], key=lambda c: messages[c.turn].content.find(c.sentence))
    return out


#: How many sentences back a pronoun's person is looked for.
_LOOK_BACK = 8


def _candidate(sentence: str, turn: int, before: Sequence[str]) -> Candidate | None:
    pronoun = people.pronoun(sentence)
    if pronoun is None:
        kind = classify(sentence)
        return None if kind is None else Candidate(sentence, kind[0], kind[1], turn, kind[2])
    person = people.referent(pronoun, before)
    if person is None:
        kind = classify(sentence) or _about_them(sentence)
        return None if kind is None else Candidate(sentence, kind[0], kind[1], turn, kind[2], unnamed=pronoun.word)
    named = people.with_name(sentence, pronoun, person)
    kind = classify(named) or _about_them(sentence)
    if kind is None:
        return None
    category = "entity" if kind[0] in ("fact", "preference") else kind[0]
    return Candidate(named, category, kind[1], turn, kind[2], said=sentence)


_ABOUT_THEM = re.compile(rf"^\W*\w+(?:(?:'s|’s) (?:a|an|the|allergic|from|\d+)\b|(?:'s | (?:\w+ ){{0,2}}){_THEIR_FACTS})", re.IGNORECASE)


def _about_them(sentence: str) -> tuple[str, float, str] | None:
    """A fact about the person a sentence's pronoun stands for ("she
    works at ...", "er wohnt in ...")."""
    if sentence.rstrip().endswith(("?", "？")) or _NOT_A_FACT.search(sentence):
        return None
    return ("entity", 0.7, "about-them") if _ABOUT_THEM.search(sentence) or _CJK_THEIR.search(sentence) else None


_CJK_THEIR = re.compile(r"^(?:他|她|彼女?)(?:的|の)?.{0,10}(?:住在|在.{1,10}工作|是|喜欢|过敏|住んで|働いて|好き|アレルギー)")


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
#: Words that announce a change (:mod:`.changes`): such a sentence updates
#: what memory holds ("actually I prefer the afternoons now", "I don't
#: drink tea anymore"), so only an exact repeat of it is a duplicate.
_CHANGE = changes.CHANGE


def content_tokens(text: str) -> frozenset[str]:
    """The words of a text that carry its content: lower case, stop words
    (of the text's language: :func:`_stop_words`) and filler left out, a
    plural ``s`` dropped; each CJK character is a token (CJK text has no
    spaces)."""
    out: set[str] = set()
    words = normalized(text).split()
    stop = _stop_words(words)
    for word in words:
        if any(is_cjk(ch) for ch in word):
            out.update(ch for ch in word if is_cjk(ch) or ch.isalnum())
            continue
        if word in stop or word in _FILLER:
            continue
        out.add(word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word)
    return frozenset(out)


#: The Latin-script languages capture reads, as the ``stopwords`` package names them.
_LANGUAGES = ("english", "german", "french", "spanish")


@functools.lru_cache(maxsize=None)
def _stop_list(language: str) -> frozenset[str]:
    import stopwords

    return frozenset(w for entry in stopwords.get_stopwords(language) for w in normalized(entry).split())


def _stop_words(words: Sequence[str]) -> frozenset[str]:
    """The stop words of the language ``words`` are most likely in (the
    one whose list holds most of them; English on a tie), with English's
    and the CJK lists (engine/text.py). One language's list, not all of
    them: French "son" or German "die" are words in English."""
    best, hits = "english", 0
    for language in _LANGUAGES[1:]:
        found = sum(w in _stop_list(language) for w in words)
        if found > hits:
            best, hits = language, found
    english = sum(w in _stop_list("english") for w in words)
    return STOP_WORDS if best == "english" or english >= hits else STOP_WORDS | _stop_list(best)


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


@dataclass(frozen=True)
class Transcript:
    """The messages of a transcript file, and the lines that could not be
    read as one (with their numbers, 1-based)."""

    messages: list[Message]
    problems: tuple[Problem, ...] = ()


def read_transcript(path: Path) -> Transcript:
    """The messages of a JSONL transcript: one message per line, either
    ``{"role": ..., "content": ...}`` or a session record
    ``{"type": "message", "message": {...}}``. Session records of other
    types and blank lines are passed over; a line that is not JSON, not an
    object, or a message without a role is a :class:`Problem`. Raises
    MemextError when the file cannot be read at all."""
    try:
        text = path.read_bytes().decode("utf-8")
    except FileNotFoundError:
        raise MemextError(f"{path}: no such transcript") from None
    except IsADirectoryError:
        raise MemextError(f"{path}: a folder, not a transcript") from None
    except UnicodeDecodeError as exc:
        raise MemextError(f"cannot read {path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except OSError as exc:
        raise MemextError(f"cannot read {path}: {exc.strerror or exc}") from exc
    records: list[Mapping[str, object]] = []
    problems: list[Problem] = []
    for number, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            record = json.loads(raw)
        except json.JSONDecodeError as exc:
            problems.append(Problem(number, f"not JSON ({exc.msg} at column {exc.colno})"))
            continue
        except ValueError:  # a number too long to convert, say
            problems.append(Problem(number, "not JSON"))
            continue
        if not isinstance(record, dict):
            problems.append(Problem(number, f"a JSON {type(record).__name__}, not an object"))
            continue
        if isinstance(record.get("message"), dict):
            record = record["message"]
        elif "role" not in record and "type" in record:
            continue  # a session record that is not a message
        if not isinstance(record.get("role"), str):
            problems.append(Problem(number, 'not a message (no "role")'))
            continue
        records.append(record)
    return Transcript(as_messages(records), tuple(problems))


def _text(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(p.get("text")) for p in content if isinstance(p, dict) and isinstance(p.get("text"), str))
    return ""
