"""Confidence (engine/search/confidence.py): an entry's evidence (its
cosine against the model's null, the share of the query it holds by
rarity, an exact ID or quoted phrase, the query's words no note holds)
and the fitted probabilities it gives (DESIGN.md §7)."""

from __future__ import annotations

import pytest

from memext.engine.search import confidence as C
from memext.engine.search.confidence import make_judge, rarity

PASSPORT = "what is my passport number?"
TOKENS = {t: (t,) for t in ("passport", "number", "dana", "fix", "refund", "code", "walked", "dog", "yesterday", "wifi", "password")}


def judge(query: str, counts: dict[str, int], total: int = 40, null: float | None = 0.2, held_ids=(), time_words=()) -> C.Judge:
    return make_judge(query, counts, total, null, TOKENS, held_ids, time_words)


def test_rarity_weighs_a_term_no_chunk_holds_the_most():
    assert rarity(0, 200) > rarity(1, 200) > rarity(50, 200) > rarity(200, 200) > 0
    # A small memory is counted as a larger one: a word all of three notes
    # hold still weighs much, and one none holds not all of the question.
    assert rarity(3, 3) > 0.6 * rarity(0, 3)


def test_a_term_memory_lacks_counts_against_an_entry():
    j = judge(PASSPORT, {"passport": 0, "number": 1}, 7)
    assert j.coverage({"number"}) < 0.5 < j.coverage({"passport", "number"}) == 1.0
    assert j.missing == pytest.approx(rarity(0, 7) / (rarity(0, 7) + rarity(1, 7)))


def test_a_name_many_entries_share_covers_little_of_the_question():
    # "dana" in every chunk, "refund" and "code" in few: an entry holding
    # only the name holds little of what is asked.
    j = judge("what did Dana fix in the refund code?", {"dana": 40, "fix": 3, "refund": 2, "code": 4})
    assert j.coverage({"dana"}) < 0.1 < 0.5 < j.coverage({"refund", "code"})


def test_a_term_no_note_holds_is_held_in_another_form():
    # "decide" is in no note; "Decision: ..." holds it in another form the
    # stemmer keeps apart ("decid", "decis"), and covers the question.
    tokens = {"decide": ("decid",), "fusion": ("fusion",)}
    j = make_judge("what did we decide about fusion?", {"decide": 0, "fusion": 2}, 40, 0.2, tokens)
    assert j.coverage({"decis", "fusion", "weight"}) == 1.0
    assert j.coverage({"fusion", "rank"}) < 0.5 < j.missing  # memory still lacks the word as asked
    assert j.coverages_of(["decis fusion weight", "fusion rank", "design"]) == [
        j.coverage({"decis", "fusion", "weight"}),
        j.coverage({"fusion", "rank"}),
        0.0,
    ]


def test_forms_of_one_word_differ_only_at_the_end():
    assert C.variant("decid", "decis") and C.variant("marri", "marriag") and C.variant("photo", "photograph")
    # Short stems and other words are not forms of one word.
    assert not C.variant("pain", "paint") and not C.variant("plan", "plane") and not C.variant("decid", "design")
    assert not C.variant("passport", "password")


def test_the_words_of_a_time_the_query_names_are_not_terms_to_find():
    counts = {"walked": 9, "dog": 9, "yesterday": 0}
    plain = judge("walked the dog yesterday", counts, 12)
    timed = judge("walked the dog yesterday", counts, 12, time_words={"yesterday"})
    assert plain.coverage({"walked", "dog"}) < 0.5 and timed.coverage({"walked", "dog"}) == 1.0
    assert plain.missing > 0.5 and timed.missing == 0.0


def test_the_ids_a_query_names():
    assert C.query_ids("Who handled INC-4361?") == ["inc-4361"]
    assert C.query_ids("what did 3ace1a47 change, and GW_212?") == ["gw_212", "3ace1a47"]
    assert C.query_ids("deadbeef12") == ["deadbeef12"]
    # Not IDs: a number with its unit, a version, a word.
    assert C.query_ids("how fast did I run 10km in 2026 on v2.3 with COVID?") == []


def test_an_id_is_held_as_a_key_a_hash_or_a_prefix_of_either():
    text = "- inc-4471 on cobalt: fixed in 6bceaf5 and 3ace1a47910ceb9b212b211fc36f635150701ac2."
    assert C.holds_id(text, "inc-4471") and not C.holds_id(text, "inc-447") and not C.holds_id(text, "inc-9999")
    assert C.holds_id(text, "3ace1a47")  # a 7+ character prefix of a hash
    assert C.holds_id(text, "6bceaf5e3d1")  # the note's short hash starts the query's long one
    assert not C.holds_id(text, "6bceaf6") and not C.holds_id(text, "deadbeef12")


def test_an_id_no_note_holds_answers_nothing_and_one_held_is_exact():
    absent = judge("who handled INC-9999?", {"handled": 1, "inc": 5, "9999": 0}, held_ids=[])
    got = absent.judge(0.9, {"inc", "handled"}, "- INC-4471 handled by Ivo.")
    assert absent.absent_id and got.confidence == 0.0 and got.answer == 0.0
    held = judge("who handled INC-4471?", {"handled": 1, "inc": 5, "4471": 1}, held_ids=["inc-4471"])
    got = held.judge(0.1, {"inc", "4471", "handl"}, "- INC-4471 handled by Ivo.")
    assert not held.absent_id and got.exact == 1.0 and got.confidence > 0.5


def test_a_quoted_phrase_is_exact_evidence():
    j = judge('notes on "quokka protocol"', {"notes": 3, "quokka": 1, "protocol": 1})
    assert j.exact("- The Quokka Protocol: ship on Tuesdays.") == 1.0 and j.exact("- quokka and the protocol") == 0.0


def test_semantic_evidence_is_the_null_level_mapped_to_zero():
    assert C.semantic(0.2, 0.2) == 0.0 and C.semantic(1.0, 0.2) == 1.0 and C.semantic(0.6, 0.2) == pytest.approx(0.5)
    assert C.semantic(None, 0.2) is None and C.semantic(0.5, None) is None


def test_the_shipped_fits_raise_confidence_with_evidence():
    p = C.params()
    base = [0.3, 0.5, 0.0, 0.2]
    for fit in (p.hit_meaning, p.answer_meaning):
        assert fit.probability([0.5, 0.5, 0.0, 0.2]) > fit.probability(base)  # closer in meaning
        assert fit.probability([0.3, 0.9, 0.0, 0.2]) > fit.probability(base)  # more of the question held
        assert fit.probability([0.3, 0.5, 1.0, 0.2]) > fit.probability(base)  # an exact ID or phrase
    # Words no note holds tell whether memory holds an answer, not which hit it is.
    assert p.hit_meaning.weights[3] == p.hit_words.weights[3] == 0.0
    assert p.answer_meaning.probability([0.3, 0.5, 0.0, 0.8]) < p.answer_meaning.probability(base)
    for fit in (p.hit_words, p.answer_words):
        assert fit.weights[0] == 0.0  # no cosine to judge by
        assert fit.probability([0.0, 1.0, 0.0, 0.0]) > fit.probability([0.0, 0.3, 0.0, 0.0])


def test_entries_judged_together_score_as_each_judged_alone():
    # What judging and feedback ask of many entries at once is one entry's
    # evidence each: by the meaning fits where there is a cosine, by the
    # words fits where there is none, with the query's missing words.
    j = judge(PASSPORT, {"passport": 0, "number": 1}, 7)
    alone = [j.judge(0.7, {"passport", "number"}, ""), j.judge(None, {"number"}, ""), j.judge(0.1, set(), "")]
    sem, cov = [j.semantic(0.7), None, j.semantic(0.1)], [j.coverage({"passport", "number"}), j.coverage({"number"}), 0.0]
    assert j.confidences(sem, cov) == pytest.approx([e.confidence for e in alone], abs=1e-4)
    assert j.confidences(sem, cov, fit="answer") == pytest.approx([e.answer for e in alone], abs=1e-4)
    assert j.confidences(sem, cov, [1.0, 0.0, 0.0])[0] > j.confidences(sem, cov)[0]  # an exact ID or phrase
    assert judge("who handled INC-9999?", {"inc": 5, "9999": 0}, held_ids=[]).confidences(sem, cov) == [0.0] * 3
