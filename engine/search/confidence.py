"""How sure a search is that a hit answers the query (DESIGN.md §7).

A fused score ranks hits but says little on its own whether memory holds
the answer: a query about something memory never mentions still has a
best hit. Each hit gets a ``confidence`` in 0..1 from two kinds of
evidence, and the answer is ``confident`` when its best hit is:

- **keyword evidence**: the hit's keyword score (BM25 against the score an
  average chunk holding every content term would get), at most the share
  of the query's content terms (weighted by rarity) the chunk holds by
  stem; set to 1 when the chunk holds an ID-like token of the query
  (``a828e60``, also as the start of a longer ID) or a quoted phrase;
- **semantic evidence**: the cosine, calibrated against the index's own
  score distribution for this query: ``(cos - null) / (1 - null)``, ``null``
  being the cosine of the query's :data:`CALIBRATION_DEPTH`-th nearest
  chunk (what a chunk that merely shares the style and the topics of the
  memory reaches). A model whose cosines crowd near 1 and one that spreads
  them give the same semantic evidence for the same hit: the map is
  unchanged by ``cos -> a * cos + (1 - a)``.

The evidence is weighted as fusion weighs the two sides, and compared
with :data:`THRESHOLD`; a query whose names (capitalised words inside the
query, ID-like tokens, quoted words) no chunk holds, not one of them,
needs :data:`NAMED_ABSENT_THRESHOLD`: memory that never mentions
"Caroline" cannot say what Caroline painted, unless the meaning alone is
strong.
Both thresholds were chosen on the LoCoMo dev split
(bench/negatives.py): see bench/LOCOMO_RESULTS.md.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Collection, Iterable, NamedTuple, Sequence

from ..text import STOP_WORDS, fold, is_id_like, words

#: Answers whose best evidence reaches this are confident.
THRESHOLD = 0.05
#: The bar when the query names something no chunk holds.
NAMED_ABSENT_THRESHOLD = 0.35
#: Width of the logistic that turns evidence into a 0..1 confidence
#: (0.5 at the threshold).
SOFTNESS = 0.04

#: Capitalised words that are time words, not names.
_TIME_WORDS = frozenset(
    "january february march april may june july august september october november december "
    "jan feb mar apr jun jul aug sep sept oct nov dec monday tuesday wednesday thursday friday "
    "saturday sunday today yesterday tomorrow".split()
)
_CAPITALISED = re.compile(r"(?<![\w'])[A-Z][\w-]*")
_QUOTED = re.compile(r'"([^"]+)"')


#: The rank whose cosine is a query's "nothing" level on an index.
CALIBRATION_DEPTH = 24


@dataclass(frozen=True)
class Calibration:
    """A query's semantic "nothing" level on an index (see the module docstring)."""

    null: float | None  # None: too few chunks to calibrate against

    @classmethod
    def of_pool(cls, hits: Sequence[tuple[int, float]]) -> "Calibration":
        """From the vector pool of a query, best first: the cosine at rank
        :data:`CALIBRATION_DEPTH`. An index with fewer chunks has no
        distribution to measure a cosine against: there meaning alone is
        no evidence, and an answer needs some of the query's words."""
        if len(hits) < CALIBRATION_DEPTH:
            return cls(None)
        return cls(float(hits[CALIBRATION_DEPTH - 1][1]))

    def semantic(self, cosine: float | None) -> float:
        """A cosine as semantic evidence in 0..1."""
        if cosine is None or self.null is None:
            return 0.0
        return min(1.0, max(0.0, (cosine - self.null) / max(1e-6, 1.0 - self.null)))


def named_terms(query: str) -> list[str]:
    """The folded words a query names: capitalised words after its first
    word (not time words), ID-like tokens and the words of quoted phrases."""
    named: list[str] = []
    for m in _CAPITALISED.finditer(query):
        if m.start() == 0 or not query[: m.start()].strip():
            continue
        for w in words(m.group()):
            if w not in STOP_WORDS and w not in _TIME_WORDS and len(w) > 1:
                named.append(w)
    named += [w for w in words(query) if is_id_like(w)]
    for phrase in _QUOTED.findall(query):
        named += [w for w in words(phrase) if w not in STOP_WORDS]
    return list(dict.fromkeys(named))


def quoted_phrases(query: str) -> list[str]:
    """The quoted phrases of a query, folded."""
    return [fold(p.strip()) for p in _QUOTED.findall(query) if p.strip()]


class Evidence(NamedTuple):
    """A hit's evidence, as ``explain`` shows it."""

    value: float
    threshold: float
    semantic: float
    keyword: float
    null: float | None


@dataclass(frozen=True)
class Judge:
    """Turns a hit's evidence into its confidence, for one query."""

    calibration: Calibration
    vector_weight: float
    text_weight: float
    threshold: float
    id_terms: tuple[str, ...]
    phrases: tuple[str, ...]
    #: Rarity weight of each content term that counts towards coverage.
    term_weights: dict[str, float]

    def coverage(self, held: Iterable[str]) -> float:
        """The share (by rarity) of the query's counted terms a hit holds."""
        total = sum(self.term_weights.values())
        if not total:
            return 0.0
        # Summed in the weights' own order, as the total is: a hit holding
        # every term covers exactly 1.0, whatever the order of ``held``.
        have = set(held)
        return min(1.0, sum(w for t, w in self.term_weights.items() if t in have) / total)

    def evidence(self, cosine: float | None, keyword: float | None, text: str, has_vector: bool) -> float:
        """The weighted evidence (0..1) of one hit."""
        k = keyword or 0.0
        folded = fold(text) if self.id_terms or self.phrases else ""
        if any(re.search(rf"(?<![^\W_]){re.escape(t)}", folded) for t in self.id_terms):
            k = 1.0
        if any(p in folded for p in self.phrases):
            k = 1.0
        if not has_vector:
            return k
        s = self.calibration.semantic(cosine)
        total = self.vector_weight + self.text_weight
        return max(k if k >= 1.0 else 0.0, (self.vector_weight * s + self.text_weight * k) / total)

    def hit(self, cosine: float | None, keyword: float | None, held: Iterable[str], text: str, has_vector: bool) -> Evidence:
        """The evidence of one hit: its keyword score, capped by the share
        of the query's terms it holds (``held``), and its cosine.

        A hit that holds only some of the query's terms is keyword evidence
        only when its meaning agrees: its cosine is above the query's
        nothing level (semantic evidence above 0). "number" of "what is my
        passport number?" in a note about the neighbour at number 12 is a
        word in common, not an answer; "coffee" of "how do I take my
        coffee?" in "Coffee: flat white" is both. Without a calibrated
        cosine (no vectors, or a small index with no line null) the words
        are all there is to judge by."""
        covered = self.coverage(held)
        k = min(keyword or 0.0, covered)
        if covered < 1.0 and has_vector and self.calibration.null is not None and self.calibration.semantic(cosine) <= 0.0:
            k = 0.0
        value = self.evidence(cosine, k, text, has_vector)
        return Evidence(round(value, 6), self.threshold, round(self.calibration.semantic(cosine), 6), round(k, 6), self.calibration.null)

    def confidence(self, evidence: float) -> float:
        """Evidence as a 0..1 confidence: 0.5 at the threshold."""
        return round(1.0 / (1.0 + math.exp(-(evidence - self.threshold) / SOFTNESS)), 4)


def rarity(doc_count: int, total: int) -> float:
    """How much a term says, by how few of ``total`` chunks hold it: BM25's
    IDF kept positive (``log(1 + (N - n + 0.5) / (n + 0.5))``), highest for
    a term no chunk holds. Unlike FTS5's IDF it does not vanish for a term
    in half the chunks of a small index."""
    return math.log(1 + (max(total, doc_count) - doc_count + 0.5) / (doc_count + 0.5))


def make_judge(
    query: str,
    doc_counts: dict[str, int],
    total: int,
    calibration: Calibration,
    weights: tuple[float, float],
    time_words: Collection[str] = (),
) -> Judge:
    """The judge of one query: its threshold is raised when the query names
    a word that no chunk holds (``doc_counts`` has the index's counts of the
    query's terms, ``total`` its chunks).

    Coverage counts every content term of the query, weighted by
    :func:`rarity`: a term no note holds weighs the most, so a hit that
    shares one common word of a longer question ("number" of "what is my
    passport number?") covers little of it, and a paraphrase ("plane" for
    notes that say "flights") is left to the semantic side. The words of a
    time the query names (``time_words``: "yesterday", "last week") are
    not counted: notes are dated by their file or heading, and the time
    boost reads them."""
    named = named_terms(query)
    # Every name unknown: a question about someone memory never met. One
    # known name among them ("Jean and John") may still be answered.
    absent = bool(named) and all(doc_counts.get(w, 1) == 0 for w in named)
    counted = {t: rarity(n, total) for t, n in doc_counts.items() if t not in time_words}
    return Judge(
        calibration,
        weights[0],
        weights[1],
        NAMED_ABSENT_THRESHOLD if absent else THRESHOLD,
        tuple(w for w in named if is_id_like(w)),
        tuple(quoted_phrases(query)),
        counted,
    )


def nothing_notice(query: str, weak: int) -> str:
    """What an answer without a confident hit says."""
    shown = query.strip()
    if len(shown) > 60:
        shown = shown[:59] + "…"
    if weak:
        return f"no memory matches {shown!r}: {weak} weak match{'es' if weak > 1 else ''} left out (include_weak / --weak shows them)"
    return f"no memory matches {shown!r}"
