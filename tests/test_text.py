"""Tokens for FTS5: Unicode words, CJK grams, exact-hit checks."""

from memext.engine.for_faces import term_spans
from memext.engine.text import (
    FIND_LIMIT,
    contains_all_terms,
    estimate_tokens,
    find_terms,
    found_in_lines,
    fts_document,
    fts_match_expression,
    query_terms,
    term_regex,
    term_starts,
    token_weight,
    words,
)


def test_query_terms_are_unicode_words_and_cjk_bigrams():
    assert query_terms("Café a828e60 snake_case") == ["café", "a828e60", "snake", "case"]
    assert query_terms("咖啡") == ["咖啡"]
    assert query_terms("喝咖啡") == ["喝咖", "咖啡"]
    assert query_terms("猫") == ["猫"]
    assert query_terms("हिन्दी नोट्स") == ["हिन्दी", "नोट्स"]  # combining marks stay in words


def test_fts_document_rewrites_cjk_runs_only():
    assert fts_document("plain English") == "plain English"
    doc = fts_document("我喝咖啡 ok")
    assert "咖啡" in doc.split() and "我" in doc.split() and doc.endswith("ok")


def test_match_expression_quotes_every_term():
    assert fts_match_expression(['a"b', "c"]) == '"a""b" OR "c"'
    assert fts_match_expression([]) is None


def test_exact_hits_need_every_term():
    assert contains_all_terms("Fixed in commit A828E60.", query_terms("a828e60"))
    assert not contains_all_terms("commit a828e6", query_terms("a828e60"))
    assert contains_all_terms("今天喝咖啡", query_terms("咖啡"))
    assert not contains_all_terms("deploy", [])


def test_token_estimate_counts_cjk_as_one():
    assert estimate_tokens("abcd") == 1
    assert estimate_tokens("咖啡") == 2


def test_terms_fold_case_as_the_fts_index_does():
    from memext.engine.text import fold

    # unicode61 keeps ß (casefold would make "ss", a token the index never holds)
    assert query_terms("Hauptstraße") == ["hauptstraße"]
    assert query_terms("STRAẞE Straße") == ["straße"]  # capital sharp s folds to ß
    assert query_terms("STRASSE") == ["strasse"]
    assert query_terms("ΣΟΦΟΣ σοφος") == ["σοφοσ"]  # final sigma folds like unicode61
    assert contains_all_terms("Wir wohnen in der HAUPTSTRAẞE 5.", query_terms("hauptstraße"))
    assert not contains_all_terms("Hauptstrasse 5", query_terms("Hauptstraße"))
    for text in ("İstanbul ıSTANBUL", "Straße STRASSE ǅ Ⓐ 𐐀", "ᏣᎳᎩ ꮳꮃꭹ"):
        assert len(fold(text)) == len(text)  # one character for one: offsets stay valid
        assert fold(fold(text)) == fold(text)


def test_term_spans_find_whole_words_and_cjk_grams():
    assert term_spans("Vet visit; velvet; VET.", "vet") == [(0, 3), (19, 22)]
    assert term_spans("今天喝咖啡", "咖啡") == [(3, 5)]
    assert term_spans("deploys and deploy", "deploy deploys") == [(0, 7), (12, 18)]  # the longer term wins
    assert term_spans("anything", "?!") == []


def test_highlights_skip_stop_words_and_single_letters():
    text = "When is the deploy? It is on Tuesday, a plan B."
    spans = [text[a:b] for a, b in term_spans(text, "when is the deploy on a b plan")]
    assert spans == ["deploy", "plan"]
    assert term_spans("今天喝咖啡", "咖") == [(3, 4)]  # one CJK character is a word


def test_id_like_terms_match_as_prefixes():
    from memext.engine.text import has_searchable_words, is_id_like

    assert is_id_like("9f3c2ab") and is_id_like("a828e60") and not is_id_like("deadbeef") and not is_id_like("9f3c2a")
    assert fts_match_expression(["9f3c2ab", "revert"]) == '"9f3c2ab"* OR "revert"'
    assert contains_all_terms("Reverted 9f3c2ab1e7.", query_terms("9f3c2ab"))
    assert term_spans("Reverted 9f3c2ab1e7.", "9f3c2ab") == [(9, 19)]
    assert not has_searchable_words("?!...;;") and not has_searchable_words("*") and has_searchable_words("咖啡")


def test_ascii_text_takes_a_shortcut_to_the_same_words():
    # ASCII text skips the Unicode word pattern (built on first use): the
    # words must be those the full rule finds, here forced by one accent.
    import random

    rng = random.Random(5)
    alphabet = "abcXYZ019_-.'# \t\n/:"
    for _ in range(2000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 40)))
        assert text.isascii()
        assert words(text + " é") == words(text) + ["é"]
        assert fts_document(text) == text and token_weight(text) == len(text)


def test_term_starts_finds_what_the_term_pattern_finds():
    # Rare terms are found with str.find and checked at each occurrence
    # (no pattern compiled); common ones with the pattern: the same matches.
    import random
    import re

    assert term_starts("foo_bar xfoo foo", "foo") == [0, 13]  # "_" ends a word, "x" does not
    assert term_starts("aaa aa", "aa") == [4]
    assert term_starts("9f3c2ab1e7 9f3c2ab", "9f3c2ab") == [0, 11]  # IDs match as prefixes
    assert term_starts("今天喝咖啡咖啡", "咖啡") == [3, 5]
    common = "ab " * (FIND_LIMIT + 5)
    assert term_starts(common, "ab") == list(range(0, len(common), 3))
    rng = random.Random(3)
    alphabet = list("abab aab_\n-.9f3c2e7ßΣσ咖啡") + ["\u0301", "\u093f", "\u0915"]
    for _ in range(500):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 60)))
        for term in query_terms(text)[:3] + ["a", "ab", "aab", "9f3c2ab", "咖啡", "\u0915\u093f"]:
            assert term_starts(text, term) == [m.start() for m in re.finditer(term_regex(term), text)]


def test_exact_hits_in_ascii_text_are_whole_words():
    # ASCII text is checked term by term, without listing its words.
    assert contains_all_terms("see foo_bar", ["foo", "bar"])
    assert not contains_all_terms("velvet", ["vet"])
    assert contains_all_terms("Reverted 9F3C2AB1E7", query_terms("9f3c2ab deploy")) is False
    assert contains_all_terms("Reverted 9F3C2AB1E7 deploy", query_terms("9f3c2ab deploy"))


def test_terms_found_in_some_lines_are_what_a_search_of_those_lines_finds():
    # A hit's excerpt shows some of its chunk's lines: the chunk's matches
    # moved, never a second search, must be the same.
    import random

    rng = random.Random(5)
    alphabet = list("abab aab_\n\n-.9f3c2e7ßΣσ咖啡咖") + ["\u0301", "\u093f", "\u0915"]
    terms = ["a", "ab", "aab", "9f3c2ab", "咖啡", "\u0915\u093f", "σ"]
    for _ in range(500):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 80)))
        lines = text.split("\n")
        first = rng.randrange(len(lines))
        last = rng.randrange(first, len(lines))
        part = "\n".join(lines[first : last + 1])
        assert found_in_lines(text, find_terms(text, terms), first, part) == find_terms(part, terms)


def test_a_query_of_ids_only_is_told_apart():
    from memext.engine.text import ids_only

    assert ids_only("a828e60") and ids_only("deadbeef12 7F3E91C") and ids_only("the a828e60?")
    assert not ids_only("commit a828e60") and not ids_only("deadbeef") and not ids_only("2026") and not ids_only("the and of")
