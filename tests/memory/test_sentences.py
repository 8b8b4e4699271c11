"""Where capture ends a sentence (engine/memory/sentences.py): a boundary
every language's rules agree on, never before a lowercase letter."""

from __future__ import annotations

import pytest

from memext.engine.memory.sentences import sentences


@pytest.mark.parametrize(
    "text",
    [
        "Mi tía vive en la C/ Mayor n.º 7, 2.º izq.",  # ordinal indicators no list holds
        "The meeting is at the usual place, i.e. the café, at 10 a.m. sharp.",
        "ok. then we left.",  # a missed boundary keeps both halves whole
    ],
)
def test_no_boundary_before_a_lowercase_letter(text: str) -> None:
    assert sentences(text) == [text]


def test_sentences_that_start_as_sentences_do_are_still_cut() -> None:
    assert sentences("My dentist is Dr. Almeida at Clinica Foz. He is nice.") == [
        "My dentist is Dr. Almeida at Clinica Foz.",
        "He is nice.",
    ]
    assert sentences("Wir treffen uns um 5. Danach essen wir.") == ["Wir treffen uns um 5.", "Danach essen wir."]
    assert sentences("Ada moved. She called.\nSecond line") == ["Ada moved.", "She called.", "Second line"]
