"""The pre-compaction memory flush helper (engine/agents/flush.py) on a real index
and real workspaces."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from datetime import date

import pytest
from conftest import make_agent

from memext.engine import MemextError, MemoryIndex
from memext.engine.agents.flush import (
    DEFAULT_RESERVE_TOKENS_FLOOR,
    DEFAULT_SOFT_THRESHOLD_TOKENS,
    MemoryFlush,
    flush_prompts,
    flush_threshold,
    is_no_reply,
    workspace_writable,
)


@pytest.fixture
def index(workspace, tmp_path):
    idx = MemoryIndex(make_agent(workspace, db_path=tmp_path / "state" / "agent.sqlite"), provider=None)
    yield idx
    idx.close()


def test_defaults_are_the_references():
    assert (DEFAULT_RESERVE_TOKENS_FLOOR, DEFAULT_SOFT_THRESHOLD_TOKENS) == (20_000, 4_000)
    assert flush_threshold(200_000) == 176_000
    assert flush_threshold(128_000, reserve_tokens_floor=10_000, soft_threshold_tokens=2_000) == 116_000


def test_due_from_the_threshold_on(index):
    flush = MemoryFlush.for_index(index, context_window=200_000)
    assert flush.threshold == 176_000
    below = flush.check(175_999)
    assert (below.due, below.reason, below.threshold, below.total_tokens) == (False, "below threshold", 176_000, 175_999)
    at = flush.check(176_000)
    assert (at.due, at.reason) == (True, "due")
    custom = MemoryFlush.for_index(index, context_window=32_000, reserve_tokens_floor=8_000, soft_threshold_tokens=0)
    assert not custom.check(23_999).due and custom.check(24_000).due


def test_one_flush_per_compaction_cycle_kept_beside_the_index(index, tmp_path):
    flush = MemoryFlush.for_index(index, context_window=100_000)
    assert flush.state_path == tmp_path / "state" / "agent.flush.json"
    assert flush.check(90_000, session="s1", compaction_count=0).due
    flush.mark_flushed(session="s1", compaction_count=0)
    again = flush.check(99_000, session="s1", compaction_count=0)
    assert (again.due, again.reason) == (False, "already flushed this compaction cycle")
    # Another session, and the next cycle of this one, may flush.
    assert flush.check(90_000, session="s2", compaction_count=0).due
    assert flush.check(90_000, session="s1", compaction_count=1).due
    # The state is on disk: a new helper (another process) agrees.
    other = MemoryFlush.for_index(index, context_window=100_000)
    assert other.last_flushed_cycle("s1") == 0 and other.last_flushed_cycle("s2") is None
    assert not other.check(90_000, session="s1", compaction_count=0).due
    saved = json.loads(flush.state_path.read_text(encoding="utf-8"))
    assert saved["sessions"]["s1"]["compaction_count"] == 0
    assert sorted(p.name for p in flush.state_path.parent.iterdir() if "flush" in p.name) == [
        "agent.flush.json",
        "agent.flush.json.lock",
    ]


def test_a_damaged_state_file_costs_at_most_one_extra_flush(index):
    flush = MemoryFlush.for_index(index, context_window=100_000)
    flush.state_path.parent.mkdir(parents=True, exist_ok=True)
    flush.state_path.write_text("{not json", encoding="utf-8")
    assert flush.check(90_000).due
    flush.mark_flushed()
    assert not flush.check(90_000).due
    assert json.loads(flush.state_path.read_text(encoding="utf-8"))["version"] == 1


def test_two_processes_marking_at_once_lose_nothing(tmp_path, workspace):
    state = tmp_path / "s" / "a.flush.json"
    script = textwrap.dedent(
        """
        import sys
        from memext.engine.agents.flush import MemoryFlush
        f = MemoryFlush(sys.argv[1], sys.argv[2], context_window=1000)
        for i in range(40):
            f.mark_flushed(session=f"{sys.argv[3]}-{i}", compaction_count=i)
        """
    )
    procs = [subprocess.Popen([sys.executable, "-c", script, str(state), str(workspace), name]) for name in ("a", "b")]
    assert [p.wait(timeout=120) for p in procs] == [0, 0]
    flush = MemoryFlush(state, workspace, context_window=1000)
    for name in ("a", "b"):
        assert [flush.last_flushed_cycle(f"{name}-{i}") for i in range(40)] == list(range(40))


def test_disabled_and_bad_numbers(index):
    off = MemoryFlush.for_index(index, context_window=100_000, enabled=False)
    assert off.check(99_999).reason == "disabled"
    with pytest.raises(MemextError, match="context_window"):
        MemoryFlush.for_index(index, context_window=0)
    with pytest.raises(MemextError, match="soft_threshold_tokens"):
        MemoryFlush.for_index(index, context_window=1000, soft_threshold_tokens=-1)
    with pytest.raises(MemextError, match="total_tokens"):
        MemoryFlush.for_index(index, context_window=1000).check(-5)


def test_prompts_name_todays_file_and_the_silent_token():
    p = flush_prompts(date(2026, 1, 16))
    for text in (p.system, p.user):
        assert "memory/2026-01-16.md" in text and "NO_REPLY" in text and "YYYY" not in text
    assert p.system != p.user
    custom = flush_prompts(date(2026, 1, 16), system_prompt="Flush now.", prompt="Notes go to memory/{date}.md")
    assert custom.system == "Flush now." and custom.user == "Notes go to memory/2026-01-16.md"


@pytest.mark.parametrize(
    "reply, silent",
    [
        ("NO_REPLY", True),
        ("  NO_REPLY\n", True),
        ("no_reply", True),
        ("NO_REPLY, nothing new today", False),
        ("I stored two notes. NO_REPLY", False),
        ("NO REPLY", False),
        ("", False),
        (None, False),
    ],
)
def test_no_reply_is_the_whole_reply(reply, silent):
    assert is_no_reply(reply) is silent


def test_a_missing_workspace_is_not_writable(tmp_path, index):
    assert workspace_writable(index.agent.workspace)
    assert not workspace_writable(tmp_path / "nowhere")
    flush = MemoryFlush(tmp_path / "f.json", tmp_path / "nowhere", context_window=1000)
    assert flush.check(999).reason == "workspace is read-only"


def test_a_read_only_workspace_is_skipped(workspace, tmp_path):
    """Read-only for real: a read-only mount when running as root (whom file
    modes do not stop), file modes otherwise."""
    script = textwrap.dedent(
        """
        import sys
        from memext.engine.agents.flush import MemoryFlush
        f = MemoryFlush(sys.argv[1], sys.argv[2], context_window=1000)
        print(f.check(999).reason)
        """
    )
    args = [sys.executable, "-c", script, str(tmp_path / "f.json"), str(workspace)]
    if os.geteuid() == 0:
        assert shutil.which("unshare"), "running as root, this test needs unshare (util-linux) for a read-only mount"
        mount = f'mount --bind {workspace} {workspace} && mount -o remount,ro,bind {workspace} && exec "$@"'
        cmd = ["unshare", "-m", "sh", "-c", mount, "sh", *args]
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    else:
        os.chmod(workspace / "memory", 0o555)
        try:
            out = subprocess.run(args, capture_output=True, text=True, timeout=120)
        finally:
            os.chmod(workspace / "memory", 0o755)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "workspace is read-only"
    # The same workspace, writable again, flushes.
    assert subprocess.run(args, capture_output=True, text=True, timeout=120).stdout.strip() == "due"
