"""Session-to-memory (engine/agents/session_memory.py) on real workspaces and a
real index."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from datetime import datetime, timedelta, timezone

import pytest
from conftest import make_agent

from memext.engine import MemextError, MemoryIndex
from memext.engine.agents.session_memory import default_slug, make_slug, save_session_memory, session_lines

WHEN = datetime(2026, 1, 16, 14, 30, tzinfo=timezone.utc)


def conversation(n: int) -> list[dict]:
    msgs = [{"role": "system", "content": "You are helpful."}]
    for i in range(n):
        role = "user" if i % 2 == 0 else "assistant"
        msgs.append({"role": role, "content": f"Message {i} about the Lisbon offsite budget"})
    return msgs


def test_saves_the_last_messages_as_a_dated_memory_file(workspace):
    saved = save_session_memory(workspace, conversation(20), messages=5, when=WHEN)
    assert saved.relative_path.startswith("memory/2026-01-16-") and saved.relative_path.endswith(".md")
    assert saved.path == workspace / saved.relative_path
    assert (saved.messages_saved, saved.messages_total) == (5, 20)
    text = saved.path.read_text(encoding="utf-8")
    assert text.startswith("# Session: 2026-01-16 14:30 UTC\n")
    assert "last 5 of 20" in text
    kept = [line for line in text.splitlines() if line.startswith(("User:", "Assistant:"))]
    assert kept == [f"{'User' if i % 2 == 0 else 'Assistant'}: Message {i} about the Lisbon offsite budget" for i in range(15, 20)]
    assert "You are helpful" not in text  # system messages are not conversation
    assert [p.name for p in (workspace / "memory").iterdir() if p.name.startswith(".")] == []


def test_the_jsonl_transcript_format_and_content_blocks(workspace, tmp_path):
    transcript = tmp_path / "chat.jsonl"
    records = [
        {"type": "session", "id": "abc"},
        {"type": "message", "message": {"role": "user", "content": [{"type": "text", "text": "Plan the Q3 migration"}]}},
        {"type": "message", "message": {"role": "tool", "content": "ignored"}},
        {"type": "message", "message": {"role": "assistant", "content": "Step one: freeze the schema."}},
    ]
    transcript.write_text("\n".join(json.dumps(r) for r in records) + "\nnot json\n", encoding="utf-8")
    assert session_lines(transcript) == ["User: Plan the Q3 migration", "Assistant: Step one: freeze the schema."]
    assert session_lines(transcript.read_text(encoding="utf-8")) == session_lines(transcript)
    saved = save_session_memory(workspace, transcript, when=WHEN)
    assert saved.relative_path == "memory/2026-01-16-plan-q3-migration.md"
    assert "Assistant: Step one: freeze the schema." in saved.path.read_text(encoding="utf-8")


def test_slug_from_the_callers_function_cleaned(workspace):
    seen = []

    def namer(messages):
        seen.append(messages)
        return "Deploy Plan: Q3 Rollout & Café Review, part two!"

    saved = save_session_memory(workspace, conversation(4), slug=namer, when=WHEN)
    assert saved.relative_path == "memory/2026-01-16-deploy-plan-q3-rollout-cafe-review.md"
    assert seen[0][0].startswith("User: Message 0")
    # A function that gives nothing usable falls back to the default slug.
    fallback = save_session_memory(workspace, [{"role": "user", "content": "Budget review"}], slug=lambda m: "!!!", when=WHEN)
    assert fallback.relative_path == "memory/2026-01-16-budget-review.md"


def test_default_slug_rules():
    assert make_slug("The quick brown fox jumps over the lazy dog twice") == "quick-brown-fox-jumps-lazy-dog"
    assert make_slug("Résumé für Zoë") == "resume-fur-zoe"
    assert make_slug("今天和同事喝咖啡") == ""
    assert default_slug(["User: 今天和同事喝咖啡", "Assistant: Coffee chat noted"]) == "coffee-chat-noted"
    assert default_slug(["User: 你好"]) == "session"
    assert default_slug(["User: what is it"]) == "what-is-it"  # only common words: keep them
    msgs = ["User: Where did we park the Ledgerline release?", "Assistant: On the release branch."]
    assert default_slug(msgs) == default_slug(list(msgs)) == "park-ledgerline-release"


def test_never_overwrites_an_existing_file(workspace):
    target = workspace / "memory" / "2026-01-16-budget-review.md"
    target.write_text("precious\n", encoding="utf-8")
    one = save_session_memory(workspace, [{"role": "user", "content": "Budget review"}], when=WHEN)
    two = save_session_memory(workspace, [{"role": "user", "content": "Budget review"}], when=WHEN)
    other = save_session_memory(workspace, [{"role": "user", "content": "Budget review, again"}], when=WHEN)
    assert target.read_text(encoding="utf-8") == "precious\n"
    assert one.path.name.startswith("2026-01-16-budget-review-") and len(one.path.stem.split("-")[-1]) == 8
    # The same content again: the hash suffix is taken, so a counter follows.
    assert two.path.name == one.path.stem + "-2.md"
    assert other.path.name.startswith("2026-01-16-budget-review-again")
    assert len({one.path, two.path, other.path, target}) == 4


def test_two_processes_saving_at_once_both_keep_their_file(workspace):
    script = textwrap.dedent(
        """
        import sys
        from datetime import datetime, timezone
        from memext.engine.agents.session_memory import save_session_memory
        for i in range(20):
            save_session_memory(sys.argv[1], [{"role": "user", "content": "Standup notes " + sys.argv[2]}],
                                slug=lambda m: "standup", when=datetime(2026, 1, 16, tzinfo=timezone.utc))
        """
    )
    procs = [subprocess.Popen([sys.executable, "-c", script, str(workspace), tag]) for tag in ("alpha", "beta")]
    assert [p.wait(timeout=120) for p in procs] == [0, 0]
    files = sorted((workspace / "memory").glob("2026-01-16-standup*.md"))
    assert len(files) == 40
    texts = [f.read_text(encoding="utf-8") for f in files]
    assert sum("Standup notes alpha" in t for t in texts) == sum("Standup notes beta" in t for t in texts) == 20
    assert all(t.endswith("\n") and "## Conversation" in t for t in texts)


def test_the_saved_session_is_searchable_after_a_sync(workspace, tmp_path):
    idx = MemoryIndex(make_agent(workspace, db_path=tmp_path / "i.sqlite"), provider=None)
    try:
        idx.sync()
        chat = [
            {"role": "user", "content": "Remember that the staging database password rotates every Friday."},
            {"role": "assistant", "content": "Noted: staging password rotation on Fridays."},
        ]
        saved = save_session_memory(workspace, chat, when=WHEN)
        idx.sync()
        hits = idx.search("staging password rotation", max_results=3)
        assert hits[0].path == saved.relative_path
    finally:
        idx.close()


def test_local_times_are_dated_in_utc(workspace):
    late = datetime(2026, 1, 16, 23, 30, tzinfo=timezone(timedelta(hours=-5)))
    saved = save_session_memory(workspace, [{"role": "user", "content": "Late night idea"}], when=late)
    assert saved.relative_path == "memory/2026-01-17-late-night-idea.md"


def test_bad_input_is_refused_and_writes_nothing(workspace, tmp_path):
    before = sorted(p.name for p in (workspace / "memory").iterdir())
    with pytest.raises(MemextError, match="nothing to save"):
        save_session_memory(workspace, [{"role": "system", "content": "x"}, {"role": "user", "content": "  "}])
    with pytest.raises(MemextError, match="messages must be"):
        save_session_memory(workspace, conversation(2), messages=0)
    with pytest.raises(MemextError, match="does not exist"):
        save_session_memory(tmp_path / "nowhere", conversation(2))
    with pytest.raises(MemextError, match="message 1 is a str"):
        save_session_memory(workspace, [{"role": "user", "content": "hi"}, "oops"])
    with pytest.raises(MemextError, match="cannot read the transcript"):
        save_session_memory(workspace, tmp_path / "missing.jsonl")
    with pytest.raises(MemextError, match="must be given as a pathlib.Path"):
        save_session_memory(workspace, str(tmp_path / "chat.jsonl"))
    assert sorted(p.name for p in (workspace / "memory").iterdir()) == before
