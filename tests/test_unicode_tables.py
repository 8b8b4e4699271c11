"""The unicode61 tables (engine/unicode_tables.py): worked out once, kept in
the user cache folder, and never wrong because of what that folder holds."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memext.engine import unicode_tables as ut
from memext.engine.text import fold, words


def tables_now() -> ut.UnicodeTables:
    """The tables as a fresh process gets them (the cache folder, not this
    process's memo)."""
    return ut.unicode_tables.__wrapped__()


def cache_files(home: Path) -> list[Path]:
    return sorted((home / "cache").rglob("*.json"))


def test_tables_are_kept_in_the_cache_folder_and_read_back(isolated_user_dirs, monkeypatch):
    first = tables_now()
    [kept] = cache_files(isolated_user_dirs)
    assert kept.parent.name == "unicode" and ut.compute_tables() == first
    assert first.from_sqlite and first.fold[ord("Ä")] == ord("ä") and ord("ß") not in first.fold

    def no_work():
        raise AssertionError("worked out again although the cache file was there")

    monkeypatch.setattr(ut, "compute_tables", no_work)
    assert tables_now() == first


@pytest.mark.parametrize(
    "text",
    [
        "not json",
        '{"format": 1, "fold": [65, 97, 66], "marks": []}',
        '{"format": 1, "fold": [65, "a"], "marks": []}',
        '{"format": 1, "fold": [65, 97], "marks": [768, 9999999]}',
        '{"format": 0, "fold": [], "marks": []}',
        '{"fold": []}',
        "[1, 2]",
    ],
)
def test_a_damaged_cache_file_is_worked_out_again(isolated_user_dirs, text):
    right = tables_now()
    [kept] = cache_files(isolated_user_dirs)
    kept.write_text(text)
    assert tables_now() == right
    assert json.loads(kept.read_text())["format"] == ut.TABLES_FORMAT  # written again, whole


def test_a_cache_folder_that_cannot_be_written_costs_only_time(isolated_user_dirs):
    blocker = isolated_user_dirs / "cache" / "memext" / "unicode"
    blocker.parent.mkdir(parents=True)
    blocker.write_text("a file where the folder would go")
    assert tables_now() == ut.compute_tables()
    assert blocker.read_text() == "a file where the folder would go"


def test_the_tables_fold_and_split_as_the_index_does():
    # Case folding as unicode61 does it: one character to one, ß kept.
    assert fold("STRAẞE Straße ÆØÅ ΣΑΣ") == "straße straße æøå σασ"
    # Combining marks stay inside a word (Devanagari vowel signs).
    assert words("नमस्ते दुनिया") == ["नमस्ते", "दुनिया"]
