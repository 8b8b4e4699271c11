"""bench/negatives.py's questions about a conversation's own people on
topics its memory never mentions: names swapped at once, topics compared by
stem. No model, no data file."""

from __future__ import annotations

import importlib.util
import sys

from conftest import ROOT


def _load():
    name = "bench_negatives_under_test"
    if name not in sys.modules:
        sys.path.insert(0, str(ROOT / "bench"))
        spec = importlib.util.spec_from_file_location(name, ROOT / "bench" / "negatives.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


negatives = _load()


def _sample(sid, a, b, qa=()):
    return {"sample_id": sid, "conversation": {"speaker_a": a, "speaker_b": b}, "qa": list(qa)}


def test_names_are_swapped_at_once():
    # Tim -> John and John -> Maria: the new John is not turned into Maria.
    assert negatives.swap_names("Did Tim meet John's sister?", ("Tim", "John"), ("John", "Maria")) == "Did John meet Maria's sister?"
    assert negatives.swap_names("Where is the party?", ("Tim", "John"), ("John", "Maria")) is None
    assert negatives.swap_names("Did Timothy call?", ("Tim", "John"), ("Ann", "Bo")) is None


def test_kept_only_when_no_content_stem_of_question_or_answer_is_in_memory():
    ours = _sample("c1", "Ann", "Bo")
    other = _sample(
        "c2",
        "Tim",
        "Sue",
        [
            {"question": "What pet does Tim have?", "answer": "a turtle", "category": 1},
            {"question": "What did Sue paint?", "answer": "a sunrise", "category": 4},  # "painting" is in memory
            {"question": "What does Tim collect?", "answer": "old maps", "category": 4},  # "maps" is in memory
            {"question": "What is the capital of Peru?", "answer": "Lima", "category": 3},  # names no one
            {"question": "Which pet did Sue adopt?", "answer": "a parrot", "category": 5},  # adversarial: not asked
        ],
    )
    memory = negatives.content_stems("Ann: I love painting. Bo: my map of Lisbon is framed. 2023-05-08 at 1:56 pm")
    assert negatives.absent_topic_questions(ours, [other], memory) == ["What pet does Ann have?"]
