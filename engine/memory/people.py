"""Who a captured sentence is about, when it says "she" (DESIGN.md §17).

People talk about others with pronouns: "My sister Ada is a doctor. She
lives in Abuja." Stored alone, "She lives in Abuja" answers nothing later:
memory must say who. A sentence that opens with a third-person pronoun is
stored with the person it refers to named: the latest person mentioned
before it (in the same message or the few before, any speaker) whose
gender does not contradict the pronoun; "my sister Ada", "Dr. Weber",
"meine Frau heißt Petra", "mi hermano Pablo", "妻の名前はユキ" are
mentions. A subject pronoun is replaced by the name ("Ada lives in
Abuja"); where a plain replacement would not read (a possessive outside
English, a Spanish verb without its pronoun) the name leads the sentence
("Pablo: Se mudó allí"). No person found: the sentence is not stored.

Rules, no model, in the languages capture reads.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable

#: Relations, by gender ("f", "m", None: either), per language.
_RELATIONS: dict[str | None, str] = {
    "f": "sister|mother|mom|mum|wife|daughter|aunt|grandmother|grandma|girlfriend|niece|"
    "Schwester|Mutter|Mama|Frau|Tochter|Tante|Oma|Freundin|Chefin|Kollegin|Nachbarin|Ärztin|Katze|"
    "sœur|soeur|mère|maman|femme|fille|tante|copine|amie|"
    "hermana|madre|mamá|esposa|mujer|hija|tía|novia|amiga|jefa|vecina|"
    "姐姐|妹妹|妈妈|母亲|妻子|老婆|女儿|阿姨|姉|妹|母|妻|娘",
    "m": "brother|father|dad|husband|son|uncle|grandfather|grandpa|boyfriend|nephew|"
    "Bruder|Vater|Papa|Mann|Sohn|Onkel|Opa|Freund|Chef|Kollege|Nachbar|Arzt|Hausarzt|Zahnarzt|Hund|"
    "frère|père|papa|mari|fils|oncle|copain|ami|patron|chef|médecin|"
    "hermano|padre|papá|esposo|marido|hijo|tío|novio|amigo|jefe|vecino|socio|"
    "哥哥|弟弟|爸爸|父亲|丈夫|老公|儿子|叔叔|兄|弟|父|夫|息子",
    None: "partner|boss|manager|colleague|friend|cousin|doctor|dentist|neighbou?r|kid|child|accountant|GP|cat|dog|"
    "landlord|landlady|lawyer|teacher|roommate|flatmate|coach|therapist|"
    "Partner|Partnerin|Kind|Cousin|Cousine|collègue|cousin|cousine|voisin|voisine|enfant|"
    "pareja|primo|prima|colega|médico|médica|dentista|"
    "老板|同事|朋友|医生|上司|同僚|友達|先生",
}
_GENDER_OF = {w.casefold(): g for g, words in _RELATIONS.items() for w in words.split("|")}
_REL = "|".join(sorted((w for words in _RELATIONS.values() for w in words.split("|")), key=len, reverse=True))
_TITLES = {
    "f": r"Mrs\.?|Ms\.?|Miss|Dra\.|Sra\.|Srta\.|Fr\.|Frau|Mme\.?|Mlle\.?",
    "m": r"Mr\.?|Sr\.|Hr\.|Herr|M\.",
    None: r"Dr\.?|Prof\.?",
}
_TITLE_OF = [(re.compile(rf"^(?:{t})$"), g) for g, t in _TITLES.items()]
_TITLE = "|".join(_TITLES.values())
#: The relations and titles as regular-expression alternatives, for rules
#: that speak of someone ("my sister ...", "Dr. ...").
RELATIONS = _REL
TITLES = _TITLE
# Case-sensitive inside the patterns that ignore case: a name is capitalised.
_CAP = r"(?-i:[A-ZÀ-ÝĀ-Ž][\w'’-]*)"
_NAME = rf"(?-i:(?:[A-Z]\. )*){_CAP}"
_MY = r"my|mein|meine|meinen|meinem|meiner|mon|ma|mes|mi|mis"

#: Mentions of a person, most telling first: a name with its relation, a
#: relation alone, a title with a name, a name said to be someone.
_MENTIONS = (
    re.compile(
        rf"\b(?P<my>{_MY}) (?P<rel>{_REL})(?:'s name is| is called| is named| heißt| namens| s'appelle| se llama| es| is| ist| est|,)? "
        rf"(?:(?P<title>{_TITLE}) )?(?P<name>(?!(?:is|ist|est|es)\b){_NAME})",
        re.IGNORECASE,
    ),
    re.compile(rf"(?P<name>{_CAP}) (?:is|ist|est|es) (?:{_MY}) (?P<rel>{_REL})\b", re.IGNORECASE),
    re.compile(rf"(?<![\w.])(?P<title>{_TITLE}) (?P<name>{_NAME})"),
    re.compile(rf"(?P<rel>{_REL})(?:の名前は|の名前が|は|叫)(?P<name>[\u30a0-\u30ff\u4e00-\u9fffA-Za-z]{{1,8}}?)(?:です|だ|。|$)"),
    re.compile(rf"\b(?P<my>{_MY}) (?P<rel>{_REL})\b", re.IGNORECASE),
    re.compile(rf"我的?(?P<rel>{_REL})"),
    re.compile(rf"(?<![.!?] )(?<!^)\b(?P<name>{_CAP})(?= (?:is|lives|works|moved|got|has|was|ist|wohnt|arbeitet|habite|vive)\b)"),
    re.compile(rf"^(?P<name>{_CAP})(?= (?:is|lives|works|moved|got|has|was|ist|wohnt|arbeitet|habite|vive)\b)"),
)
#: Capitalised words that are never a person's name.
_NOT_NAMES = frozenset(
    "i it this that there here he she they we you my the a an er sie es ich wir il elle je nous on vous él ella yo".split()
)

#: Leading words before the subject ("oh and she ..."), then the pronoun.
_LEAD = r"^(?:(?:oh|and|also|btw|but|so|well|und|aber|also|et|mais|puis|y|pero|bueno|pues)\b[,]?\s+)*"
_PRONOUNS = (
    # (pattern, gender, how the name goes in: "subject", "possessive" (English), "prefix")
    (re.compile(_LEAD + r"(?P<p>she)(?=\b|'|’)", re.IGNORECASE), "f", "subject"),
    (re.compile(_LEAD + r"(?P<p>he)(?=\b|'|’)", re.IGNORECASE), "m", "subject"),
    (re.compile(_LEAD + r"(?P<p>her)\b", re.IGNORECASE), "f", "possessive"),
    (re.compile(_LEAD + r"(?P<p>his)\b", re.IGNORECASE), "m", "possessive"),
    (re.compile(_LEAD + r"(?P<p>sie|elle|ella)\b", re.IGNORECASE), "f", "subject"),
    (re.compile(_LEAD + r"(?P<p>er|il|él)\b", re.IGNORECASE), "m", "subject"),
    (re.compile(_LEAD + r"(?P<p>ihre?[nms]?|sa)\b", re.IGNORECASE), "f", "prefix"),
    (re.compile(_LEAD + r"(?P<p>seine?[nms]?)\b", re.IGNORECASE), "m", "prefix"),
    (re.compile(_LEAD + r"(?P<p>son|ses|su|sus|se)\b", re.IGNORECASE), None, "prefix"),
    (re.compile(r"^(?P<p>她)(?!们)"), "f", "subject"),
    (re.compile(r"^(?P<p>他)(?!们)"), "m", "subject"),
    (re.compile(r"^(?P<p>彼女)(?=[はがの])"), "f", "subject"),
    (re.compile(r"^(?P<p>彼)(?=[はがの])"), "m", "subject"),
)


@dataclass(frozen=True)
class Person:
    """Someone a sentence mentions: how to name them ("Ada", "my dad",
    "Dr. Weber") and their gender when the words tell it ("f", "m")."""

    ref: str
    gender: str | None


@dataclass(frozen=True)
class Pronoun:
    """A sentence's opening third-person pronoun, as written, its gender
    (None: either) and how a name replaces it."""

    word: str
    gender: str | None
    kind: str
    start: int
    end: int


def mentions(sentence: str) -> list[Person]:
    """The people ``sentence`` mentions, in the order they appear."""
    found: list[tuple[int, Person]] = []
    taken: list[tuple[int, int]] = []
    for rx in _MENTIONS:
        for m in rx.finditer(sentence):
            if any(a < m.end() and m.start() < b for a, b in taken):
                continue
            person = _person(m)
            if person is not None:
                found.append((m.start(), person))
                taken.append((m.start(), m.end()))
    return [p for _, p in sorted(found, key=lambda f: f[0])]


def _person(m: re.Match[str]) -> Person | None:
    groups = m.groupdict()
    name, rel, title = groups.get("name"), groups.get("rel"), groups.get("title")
    if name and name.casefold() in _NOT_NAMES:
        name = None
    gender = _GENDER_OF.get(rel.casefold()) if rel else None
    if title:
        if not name:
            return None
        return Person(f"{title} {name}", gender or next((g for rx, g in _TITLE_OF if rx.match(title)), None))
    if name:
        return Person(name, gender)
    if rel:
        my = groups.get("my")
        return Person(f"{my} {rel}" if my else m.group(0), gender)
    return None


def pronoun(sentence: str) -> Pronoun | None:
    """The third-person pronoun ``sentence`` opens with, else None."""
    for rx, gender, kind in _PRONOUNS:
        m = rx.match(sentence)
        if m is not None:
            return Pronoun(m.group("p"), gender, kind, m.start("p"), m.end("p"))
    return None


def referent(p: Pronoun, before: Iterable[str]) -> Person | None:
    """The person pronoun ``p`` refers to: the latest mentioned in
    ``before`` (sentences, oldest first) whose gender does not contradict it."""
    for sentence in reversed(list(before)):
        for person in reversed(mentions(sentence)):
            if p.gender is None or person.gender is None or person.gender == p.gender:
                return person
    return None


def with_name(sentence: str, p: Pronoun, person: Person) -> str:
    """``sentence`` with ``person`` named in place of (or before) pronoun ``p``."""
    ref = person.ref
    if p.kind == "prefix":
        return f"{_capital(ref)}: {sentence}"
    if p.kind == "possessive":
        ref = ref + ("'" if ref.endswith("s") else "'s")
    at_start = not sentence[: p.start].strip()
    return sentence[: p.start] + (_capital(ref) if at_start else ref) + sentence[p.end :]


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]
