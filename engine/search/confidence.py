"""How sure a search is that a hit answers the query (DESIGN.md §7).

A fused score ranks hits but says little on its own whether memory holds
the answer: a query about something memory never mentions still has a
best hit. Each hit gets a ``confidence`` in 0..1 from two kinds of
evidence, and the answer is ``confident`` when its best hit is:

- **keyword evidence**: the hit's keyword score (BM25 against the score an
  average chunk holding every content term would get), at most the share
  of the query's content terms (weighted by rarity) the chunk holds by
  stem; set to 1 when the
  chunk holds an ID-like token of the query (``a828e60``) or every term of a
  quoted phrase;
- **semantic evidence**: the cosine, calibrated per index: ``(cos - null) /
  (1 - null)``, ``null`` being the best cosine that foreign probe queries
  (:data:`PROBES`) reach on this index, measured at sync and kept in the
  index (``calibration`` meta). A model whose cosines crowd near 1 and one
  that spreads them give the same semantic evidence for the same hit.

The evidence is weighted as fusion weighs the two sides, and compared
with :data:`THRESHOLD`; a query that names something (a capitalised word
inside the query, an ID-like token) that no chunk holds needs
:data:`NAMED_ABSENT_THRESHOLD`: memory that never mentions "Caroline"
cannot say what Caroline painted, unless the meaning alone is strong.
Both thresholds were chosen on the LoCoMo dev split
(bench/negatives.py): see bench/LOCOMO_RESULTS.md.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterable, NamedTuple, Sequence

from ..text import STOP_WORDS, fold, is_id_like, words

if TYPE_CHECKING:
    import numpy as np

    from ..providers import EmbeddingProvider
    from ..store import IndexStore

#: Answers whose best evidence reaches this are confident.
THRESHOLD = 0.2
#: The bar when the query names something no chunk holds.
NAMED_ABSENT_THRESHOLD = 0.35
#: Width of the logistic that turns evidence into a 0..1 confidence
#: (0.5 at the threshold).
SOFTNESS = 0.04

#: Queries about things no memory of a person or a project is about: the
#: best cosine they reach on an index is its "nothing" level.
PROBES = (
    "What is the boiling point of mercury in kelvin?",
    "How many moons does Neptune have?",
    "Recipe for a traditional Hungarian goulash",
    "Who won the 1954 football world cup final?",
    "Rules of the card game bridge for beginners",
    "How do volcanoes form under the ocean floor?",
    "Translate good morning into Finnish",
    "The migration routes of arctic terns",
    "Which enzyme breaks down lactose in the gut?",
    "History of the Byzantine empire's coinage",
    "How to tune a violin string by ear",
    "Average rainfall in the Atacama desert",
    "What is the plural of cactus?",
    "Orbital period of Halley's comet",
    "How are glass marbles manufactured?",
    "The chemical formula of table salt",
)

#: Capitalised words that are time words, not names.
_TIME_WORDS = frozenset(
    "january february march april may june july august september october november december "
    "jan feb mar apr jun jul aug sep sept oct nov dec monday tuesday wednesday thursday friday "
    "saturday sunday today yesterday tomorrow".split()
)
_CAPITALISED = re.compile(r"(?<![\w'])[A-Z][\w-]*")
_QUOTED = re.compile(r'"([^"]+)"')


@dataclass(frozen=True)
class Calibration:
    """An index's semantic "nothing" level (see the module docstring)."""

    null: float

    def semantic(self, cosine: float | None) -> float:
        """A cosine as semantic evidence in 0..1."""
        if cosine is None:
            return 0.0
        return min(1.0, max(0.0, (cosine - self.null) / max(1e-6, 1.0 - self.null)))


#: No calibration measured (an index synced before calibration existed):
#: cosines count as they are.
UNCALIBRATED = Calibration(0.0)


def measure_calibration(store: "IndexStore", vectors: Sequence["np.ndarray"]) -> Calibration | None:
    """The calibration of ``store`` from the probes' vectors (normalised):
    the median best cosine they reach. None for an index without vectors."""
    import statistics

    if store.dims is None or not vectors:
        return None
    tops = []
    for v in vectors:
        hits = store.vector_search(v, 1)
        if hits:
            tops.append(hits[0][1])
    return Calibration(round(float(statistics.median(tops)), 6)) if tops else None


def calibrate(store: "IndexStore", provider: "EmbeddingProvider", *, changed: bool) -> None:
    """Measure and keep the index's calibration with the probe queries when
    files ``changed`` or none was measured for this model; the probes'
    vectors come from the embedding cache after the first time. A failure
    keeps the old calibration (or none): search then counts cosines as
    they are, and the sync that called it goes on."""
    import hashlib

    from ..store import CacheKey
    from ..vector_math import normalize

    if store.dims is None:
        return
    kept = store.get_meta_json("calibration") or {}
    if (kept.get("provider"), kept.get("model")) == (provider.id, provider.model) and not changed:
        return
    try:
        key = CacheKey(provider.id, provider.model, provider.endpoint_key)
        hashes = {hashlib.sha256(("probe:" + p).encode()).hexdigest(): p for p in PROBES}
        found = store.cache_get(key, list(hashes))
        missing = [h for h in hashes if h not in found]
        if missing:
            raw = provider.embed_batch([hashes[h] for h in missing])
            fresh = {h: normalize(v) for h, v in zip(missing, raw)}
            store.cache_put(key, fresh)
            found.update(fresh)
        measured = measure_calibration(store, [found[h] for h in hashes])
    except Exception:  # a refinement: never fail a sync over it
        return
    if measured is not None:
        with store.transaction():
            store.set_meta_json("calibration", {"provider": provider.id, "model": provider.model, "null": measured.null})


def stored_calibration(store: "IndexStore", provider: str, model: str) -> Calibration:
    """The calibration kept in the index for this provider and model, else
    :data:`UNCALIBRATED`."""
    raw = store.get_meta_json("calibration") or {}
    if raw.get("provider") == provider and raw.get("model") == model and isinstance(raw.get("null"), (int, float)):
        return Calibration(float(raw["null"]))
    return UNCALIBRATED


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
    null: float


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
        return sum(self.term_weights.get(t, 0.0) for t in set(held)) / total if total else 0.0

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
        of the query's terms it holds (``held``), and its cosine."""
        k = min(keyword or 0.0, self.coverage(held))
        value = self.evidence(cosine, k, text, has_vector)
        return Evidence(round(value, 6), self.threshold, round(self.calibration.semantic(cosine), 6), round(k, 6), self.calibration.null)

    def confidence(self, evidence: float) -> float:
        """Evidence as a 0..1 confidence: 0.5 at the threshold."""
        return round(1.0 / (1.0 + math.exp(-(evidence - self.threshold) / SOFTNESS)), 4)


def make_judge(
    query: str, doc_counts: dict[str, int], total: int, calibration: Calibration, weights: tuple[float, float]
) -> Judge:
    """The judge of one query: its threshold is raised when the query names
    a word that no chunk holds (``doc_counts`` has the index's counts of the
    query's terms, ``total`` its chunks).

    Coverage counts the terms memory has, weighted by rarity, plus the named
    ones it lacks: a plain word no note uses ("plane" for notes that say
    "flights") says nothing either way, and the semantic side judges the
    paraphrase; a name no note holds is evidence against."""
    named = named_terms(query)
    absent = any(doc_counts.get(w, 1) == 0 for w in named)
    counted = {
        t: math.log(1 + max(1, total) / max(1, n)) for t, n in doc_counts.items() if n > 0 or t in named
    }
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
