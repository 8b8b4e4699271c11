"""Stem matches of query terms in a hit's text, and SQLite's tokenizer behind them."""

from __future__ import annotations

import threading

from memext.engine.search.stems import find_stems
from memext.engine.store.tokenizer import fts_tokenize
from memext.engine.text import FTS_TOKENIZER


def test_tokenizer_answers_each_call_alone():
    # The in-memory table is kept between calls: nothing of one call may
    # show in the next.
    assert fts_tokenize(FTS_TOKENIZER, ["Caching lookups", "happy"]) == [["cach", "lookup"], ["happi"]]
    assert fts_tokenize(FTS_TOKENIZER, ["ran"]) == [["ran"]]
    assert fts_tokenize(FTS_TOKENIZER, []) == []


def test_tokenizer_in_another_thread():
    got: list[list[list[str]]] = []
    worker = threading.Thread(target=lambda: got.append(fts_tokenize(FTS_TOKENIZER, ["painting", "cached"])))
    worker.start()
    worker.join()
    assert got == [[["paint"], ["cach"]]]
    assert fts_tokenize(FTS_TOKENIZER, ["painting"]) == [["paint"]]


def test_stems_found_by_word_starts_only():
    text = "We cache vessel lookups.\nPrecaching is not caching; cached-data_x and CACHES count."
    found = find_stems(text, ["caching", "lookup"])
    starts = {t: [text[i : i + 7] for i in at] for t, at in found.items()}
    # "Precaching" holds the letters but is another word; "data_x" splits at "_".
    assert starts == {"caching": ["cache v", "caching", "cached-", "CACHES "], "lookup": ["lookups"]}


def test_short_stems_match_whole_words():
    text = "go ahead, goes gone go-kart ago"
    found = find_stems(text, ["go"])
    assert [text[i : i + 3] for i in found["go"]] == ["go ", "go-"]


def test_non_ascii_text_has_no_stem_matches():
    assert find_stems("Le café caching", ["caching"]) == {}
