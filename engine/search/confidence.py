"""How sure a search is that a hit answers the query (DESIGN.md §7).

A fused score ranks hits but says little on its own whether memory holds
the answer: a query about something memory never mentions still has a
best hit. Search judges *entries* (a list item, a paragraph, a turn:
:mod:`engine.memory.index_entries`), each by a few kinds of evidence that
mean the same on any notes and any index size:

- ``semantic``: the entry's cosine against the model's *null*, the cosine
  two entries of one memory reach by sharing its style and topics alone
  (:mod:`..providers.nulls`): ``(cos - null) / (1 - null)``. The map is
  unchanged by ``cos -> a * cos + (1 - a)``, so a model whose cosines
  crowd towards 1 and one that spreads them give the same evidence. The
  null of a model measured on a broad corpus is shipped; any other
  model's is estimated at sync from the index's own entry vectors, and
  with too few entries to estimate it meaning is no evidence (the
  ``words`` fits below);
- ``coverage``: the share of the query's content terms the entry holds
  (by stem, as the keyword index matches them), each weighted by its
  rarity (:func:`rarity`): a term no note holds weighs the most, so a name
  shared by many entries says little about which of them answers, and the
  words of a time the query names ("yesterday") do not count. A term no
  note holds as it is is held by an entry that holds another form of it
  (:func:`variant`: "Decision: ..." for the "decide" of "what did we
  decide about fusion?");
- ``exact``: the entry holds an ID of the query (``INC-4471``, a hash or a
  7+ character prefix of one) or a quoted phrase of it;
- ``missing``: the share (by rarity) of the query's content terms that no
  note holds at all: memory that never says "Marco" or "wedding" holds
  nothing about Marco's wedding.

Two logistic fits turn them into probabilities (``confidence.json``, fitted
by ``python bench/trust/fit.py`` on the tune half of the trust benchmark
and the LoCoMo dev split): a hit's ``confidence``, that it answers the
query (calibrated: of hits at 0.8, about 8 in 10 do), and the answer's,
that one of the hits shown answers it; an answer whose own is below
:data:`NOTHING_BELOW` is "nothing". Each has a ``meaning`` fit and a ``words`` fit, used when there
is no cosine to judge by (keyword-only search, a model without a null).
A query naming an ID that no note holds is answered "nothing" whatever
else it says: an ID names one thing, and memory does not hold it.
"""

from __future__ import annotations

import functools
import json
import math
import re
from bisect import bisect_right
from dataclasses import dataclass
from pathlib import Path
from typing import Collection, Iterable, Mapping, NamedTuple, Sequence

from ..text import fold, is_id_like, words

#: The fitted parameters and the measured nulls (written by bench/trust/fit.py).
PARAMS_FILE = Path(__file__).with_name("confidence.json")
#: What a wrong "nothing" costs against a wrong answer. A wrong "nothing"
#: hides a memory the user wrote (the reader is told memory never said it);
#: a wrong answer shows weak hits, each with its own calibrated confidence
#: a reader can weigh: the first costs twice the second.
MISS_COST = 2.0
#: The answer's confidence below which it is "nothing": the decision point
#: of least expected cost for a calibrated probability, ``1 / (1 +
#: MISS_COST)`` (answer when ``p * MISS_COST > 1 - p``).
NOTHING_BELOW = 1.0 / (1.0 + MISS_COST)
#: The features of an entry, in the order the fits weigh them.
FEATURES = ("semantic", "coverage", "exact", "missing")

#: An issue or ticket key (``INC-4471``, ``GW-212``): letters, a dash or an
#: underscore, digits.
_KEY = re.compile(r"(?<![\w-])([A-Za-z]{2,}[-_]\d{2,})(?![\w-])")
_QUOTED = re.compile(r'"([^"]+)"')


class Fit(NamedTuple):
    """One logistic fit: ``1 / (1 + exp(-(w . x + b)))`` over :data:`FEATURES`
    (a feature a fit does not use has weight 0)."""

    weights: tuple[float, ...]
    intercept: float

    def logit(self, x: Sequence[float]) -> float:
        return self.intercept + sum(w * v for w, v in zip(self.weights, x))

    def probability(self, x: Sequence[float]) -> float:
        return 1.0 / (1.0 + math.exp(-max(-50.0, min(50.0, self.logit(x)))))

    @classmethod
    def of(cls, raw: Mapping) -> "Fit":
        weights = raw["weights"]
        return cls(tuple(float(weights.get(f, 0.0)) for f in FEATURES), float(raw["intercept"]))


class Params(NamedTuple):
    """What ``confidence.json`` holds: the fits of a hit's and of an
    answer's confidence."""

    hit_meaning: Fit
    hit_words: Fit
    answer_meaning: Fit
    answer_words: Fit

    @classmethod
    def from_json(cls, raw: Mapping) -> "Params":
        return cls(
            Fit.of(raw["hit"]["meaning"]),
            Fit.of(raw["hit"]["words"]),
            Fit.of(raw["answer"]["meaning"]),
            Fit.of(raw["answer"]["words"]),
        )


@functools.lru_cache(maxsize=1)
def params() -> Params:
    """The shipped parameters (read once per process)."""
    return Params.from_json(json.loads(PARAMS_FILE.read_text(encoding="utf-8")))


def semantic(cosine: float | None, null: float | None) -> float | None:
    """A cosine as semantic evidence against ``null``; None without either."""
    if cosine is None or null is None:
        return None
    return max(-1.0, min(1.0, (cosine - null) / max(1e-6, 1.0 - null)))


#: Fewest chunks a term's rarity is counted over (:func:`rarity`).
RARITY_CHUNKS = 100


def rarity(doc_count: int, total: int) -> float:
    """How much a term says, by how few of ``total`` chunks hold it: BM25's
    IDF kept positive (``log(1 + (N - n + 0.5) / (n + 0.5))``), highest for
    a term no chunk holds. A memory of fewer than :data:`RARITY_CHUNKS`
    chunks is counted as that many, the others without the term: in three
    notes a word all three hold is not common, and one none holds ("thanks")
    is not the whole question."""
    n = max(total, RARITY_CHUNKS, doc_count)
    return math.log(1 + (n - doc_count + 0.5) / (doc_count + 0.5))


#: Fewest letters of two stems :func:`variant` compares.
VARIANT_MIN = 5


def variant(stem: str, other: str) -> bool:
    """Whether two index stems are forms of one word that the stemmer
    keeps apart: both of :data:`VARIANT_MIN` letters or more, alike but
    for the last letter of the shorter ("decid" for decide and "decis" for
    decision, "marri" and "marriag", "photo" and "photograph"). A term no
    note holds as it is may be held in another form: a note that says
    "Decision: ..." holds the "decide" of "what did we decide about ...?"."""
    if stem == other:
        return True
    n = min(len(stem), len(other))
    return n >= VARIANT_MIN and stem[: n - 1] == other[: n - 1]


def query_ids(query: str) -> list[str]:
    """The IDs a query names, folded: issue or ticket keys (``INC-4471``) and
    hash-like tokens (7+ hex characters with a digit, :func:`~..text.is_id_like`)."""
    keys = [fold(m.group(1)) for m in _KEY.finditer(query)]
    return list(dict.fromkeys(keys + [w for w in words(query) if is_id_like(w)]))


def quoted_phrases(query: str) -> list[str]:
    """The quoted phrases of a query, folded."""
    return [fold(p.strip()) for p in _QUOTED.findall(query) if p.strip()]


def holds_id(folded: str, id_: str) -> bool:
    """Whether folded text holds ``id_``: a key as a whole word, a hash as
    the start of a word, or a word of 7+ characters that starts it (a short
    hash of the query's full one)."""
    if not is_id_like(id_):
        return re.search(rf"(?<![\w-]){re.escape(id_)}(?![\w-])", folded) is not None
    if re.search(rf"(?<![^\W_]){re.escape(id_)}", folded):
        return True
    return any(len(w) >= 7 and id_.startswith(w) for w in re.findall(rf"(?<![^\W_]){re.escape(id_[:7])}[0-9a-f]*", folded))


class Evidence(NamedTuple):
    """One entry's evidence, as ``explain`` shows it: the features
    (:data:`FEATURES`; ``semantic`` None without a cosine or a null) and
    the hit confidence they give."""

    semantic: float | None
    coverage: float
    exact: float
    missing: float
    confidence: float
    answer: float

    def features(self) -> tuple[float, ...]:
        return (self.semantic or 0.0, self.coverage, self.exact, self.missing)


@dataclass(frozen=True, eq=False)
class Judge:
    """The evidence of entries for one query (see the module docstring)."""

    #: Rarity of each counted content term, and the index terms it is
    #: matched by (its stem; a CJK gram is its own).
    term_weights: dict[str, float]
    term_tokens: dict[str, tuple[str, ...]]
    ids: tuple[str, ...]
    phrases: tuple[str, ...]
    #: The query names an ID no note holds: nothing answers it.
    absent_id: bool
    missing: float
    null: float | None
    params: Params
    #: The counted terms no note holds as they are (an entry may hold
    #: another form of one: :func:`variant`).
    unheld: frozenset[str] = frozenset()

    def coverage(self, stems: Collection[str] | None, held: Collection[str] = ()) -> float:
        """The share (by rarity) of the counted terms an entry holds: one
        whose index terms are ``stems``, or (``stems`` None) the terms
        ``held`` found in its text."""
        total = sum(self.term_weights.values())
        if not total:
            return 0.0
        if stems is None:
            have = sum(w for t, w in self.term_weights.items() if t in held)
        else:
            have = sum(w for t, w in self.term_weights.items() if self._holds(stems, t))
        return min(1.0, have / total)

    def _holds(self, stems: Collection[str], term: str) -> bool:
        tokens = self.term_tokens.get(term, (term,))
        if is_id_like(term):
            return any(s.startswith(term) or (len(s) >= 7 and term.startswith(s)) for s in stems)
        if term in self.unheld and len(tokens) == 1:
            return any(variant(tokens[0], s) for s in stems)
        return bool(tokens) and all(t in stems for t in tokens)

    def exact(self, text: str) -> float:
        """1 when ``text`` holds an ID or a quoted phrase of the query."""
        if not self.ids and not self.phrases:
            return 0.0
        folded = fold(text)
        return 1.0 if any(holds_id(folded, i) for i in self.ids) or any(p in folded for p in self.phrases) else 0.0

    def semantic(self, cosine: float | None) -> float | None:
        """A cosine as semantic evidence against this query's model null."""
        return semantic(cosine, self.null)

    def coverages_of(self, stems: Sequence[str]) -> list[float]:
        """:meth:`coverage` of entries whose index terms are ``stems``, as
        the index keeps them (space-separated), all at once: a search
        judges dozens of entries, most holding none of the query's terms,
        so each term is looked for once in their joined terms (no set is
        built per entry)."""
        total, looks = self._looks
        if not total or not stems:
            return [0.0] * len(stems)
        padded = [f" {s} " for s in stems]
        # Entries joined by a newline: a term's padded form (" term ")
        # never runs from one entry into the next.
        joined = "\n".join(padded)
        starts, at = [], 0
        for p in padded:
            starts.append(at)
            at += len(p) + 1
        have = [0.0] * len(stems)
        for w, needles, id_, stem in looks:
            if stem is not None:  # a term no note holds as it is: another form of it
                if needles[0] not in joined:
                    continue
                for i, p in enumerate(padded):
                    if needles[0] in p and any(variant(stem, s) for s in p.split() if s[:4] == stem[:4]):
                        have[i] += w
                continue
            if id_ is not None:
                if needles[0] not in joined and id_[:1] not in joined:
                    continue
                for i, p in enumerate(padded):
                    if needles[0] in p or any(len(s) >= 7 and id_.startswith(s) for s in p.split() if s[:1] == id_[:1]):
                        have[i] += w
                continue
            holding: set[int] | None = None
            for n in needles:
                found = set()
                pos = joined.find(n)
                while pos != -1:
                    found.add(bisect_right(starts, pos) - 1)
                    pos = joined.find(n, pos + 1)
                holding = found if holding is None else holding & found
                if not holding:
                    break
            for i in holding or ():
                have[i] += w
        return [min(1.0, h / total) for h in have]

    @functools.cached_property
    def _looks(self) -> tuple[float, list[tuple[float, tuple[str, ...], str | None, str | None]]]:
        """What :meth:`coverages_of` looks for: the total weight, and each
        term's weight, the padded index terms it is found as, the term
        itself when it is an ID (also found as a prefix), and its stem when
        no note holds it as it is (found as a :func:`variant`, by the
        stem's first letters)."""
        looks: list[tuple[float, tuple[str, ...], str | None, str | None]] = []
        for t, w in self.term_weights.items():
            tokens = self.term_tokens.get(t, (t,))
            if is_id_like(t):
                looks.append((w, (f" {t}",), t, None))
            elif t in self.unheld and len(tokens) == 1 and len(tokens[0]) >= VARIANT_MIN:
                looks.append((w, (f" {tokens[0][:4]}",), None, tokens[0]))
            elif t in self.unheld:
                continue  # held by no note, and too short to have another form
            else:
                looks.append((w, tuple(f" {tok} " for tok in tokens), None, None))
        return float(sum(self.term_weights.values())), looks

    def probabilities(self, rows: Sequence[Sequence[float]], meaning: Sequence[bool], fit: str = "hit") -> list[float]:
        """The ``fit`` ("hit" or "answer") confidence of each row of
        features (:data:`FEATURES`), by the ``meaning`` fit where
        ``meaning`` is true, else the ``words`` fit, rounded to 4 places;
        0 when the query names an ID no note holds."""
        if self.absent_id:
            return [0.0] * len(rows)
        p = self.params
        fits = {True: p.hit_meaning, False: p.hit_words} if fit == "hit" else {True: p.answer_meaning, False: p.answer_words}
        out = []
        for (a, b, c, d), m in zip(rows, meaning):
            f = fits[bool(m)]
            w = f.weights
            logit = f.intercept + w[0] * a + w[1] * b + w[2] * c + w[3] * d
            if not -50.0 < logit < 50.0:
                logit = math.copysign(50.0, logit)
            out.append(round(1.0 / (1.0 + math.exp(-logit)), 4))
        return out

    def confidences(
        self, semantics: Sequence[float | None], coverages: Sequence[float], exacts: Sequence[float] | None = None, fit: str = "hit"
    ) -> list[float]:
        """The ``fit`` ("hit" or "answer") confidence of entries by their
        evidence: each one's ``semantic`` (None without a cosine or a null:
        judged by the ``words`` fit), ``coverage`` and ``exact`` (none
        given: 0), with the query's ``missing`` (:meth:`probabilities`)."""
        exact = [0.0] * len(semantics) if exacts is None else exacts
        rows = [(s or 0.0, c, x, self.missing) for s, c, x in zip(semantics, coverages, exact)]
        return self.probabilities(rows, [s is not None for s in semantics], fit)

    def judge(self, cosine: float | None, stems: Collection[str] | None, text: str, held: Collection[str] = ()) -> Evidence:
        """The evidence of one entry: its cosine to the query (None without
        vectors), its index terms (or, None, the query terms ``held`` in
        its text) and its text."""
        s = semantic(cosine, self.null)
        x = Evidence(s, round(self.coverage(stems, held), 6), self.exact(text), round(self.missing, 6), 0.0, 0.0)
        if self.absent_id:
            return x
        p = self.params
        hit, answer = (p.hit_meaning, p.answer_meaning) if s is not None else (p.hit_words, p.answer_words)
        f = x.features()
        return x._replace(
            semantic=None if s is None else round(s, 6), confidence=round(hit.probability(f), 4), answer=round(answer.probability(f), 4)
        )


def make_judge(
    query: str,
    doc_counts: Mapping[str, int],
    total: int,
    null: float | None,
    term_tokens: Mapping[str, tuple[str, ...]],
    held_ids: Iterable[str] = (),
    time_words: Collection[str] = (),
    table: Params | None = None,
) -> Judge:
    """The judge of one query. ``doc_counts``: the index's chunk counts of
    the query's content terms (``total`` chunks); ``null``: the model's null
    (None: meaning is no evidence); ``term_tokens``: each term's index terms;
    ``held_ids``: the IDs of the query some note holds; ``time_words``: the
    words of a time the query names, not counted."""
    counted = {t: rarity(n, total) for t, n in doc_counts.items() if t not in time_words}
    whole = sum(counted.values())
    missing = sum(w for t, w in counted.items() if doc_counts[t] == 0) / whole if whole else 0.0
    ids = query_ids(query)
    held = set(held_ids)
    return Judge(
        counted,
        dict(term_tokens),
        tuple(ids),
        tuple(quoted_phrases(query)),
        any(i not in held for i in ids),
        missing,
        null,
        table or params(),
        frozenset(t for t, n in doc_counts.items() if n == 0 and t in counted),
    )


def nothing_notice(query: str, weak: int) -> str:
    """What an answer without a confident hit says."""
    shown = query.strip()
    if len(shown) > 60:
        shown = shown[:59] + "…"
    if weak:
        return f"no memory matches {shown!r}: {weak} weak match{'es' if weak > 1 else ''} left out (include_weak / --weak shows them)"
    return f"no memory matches {shown!r}"
