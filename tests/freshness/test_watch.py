"""The per-agent file watcher: what counts as a change, debounce, atomic
saves, folders that appear later, polling fallback, silent deaths."""

from __future__ import annotations

import errno
import threading
import time
from pathlib import Path

import pytest
from conftest import make_agent
from tray_helpers import atomic_save, make_workspace, wait_for

from memext.engine.freshness.watch import MemoryWatcher
from memext.engine.memory.roots import MemoryRoots


class Recorder:
    """Collects the watcher's on_change calls."""

    def __init__(self):
        self.calls: list[list[str]] = []
        self._lock = threading.Lock()

    def __call__(self, paths: list[str]) -> None:
        with self._lock:
            self.calls.append(paths)

    def changed(self) -> set[str]:
        with self._lock:
            return {Path(p).name for call in self.calls for p in call}


@pytest.fixture
def ws(tmp_path) -> Path:
    return make_workspace(tmp_path, "ws", {"memory/2026-01-01.md": "# day\n- one\n"})


def start(ws: Path, rec: Recorder, debounce_s: float = 0.2, **kw) -> MemoryWatcher:
    agent = make_agent(ws, "w", **kw.pop("settings", {}))
    w = MemoryWatcher(MemoryRoots.for_agent(agent), rec, debounce_s=debounce_s, name="w", **kw)
    w.start()
    return w


def test_edit_is_reported_once_per_burst(ws):
    rec = Recorder()
    w = start(ws, rec, debounce_s=0.5)
    try:
        assert w.mode == "native"
        note = ws / "memory" / "2026-01-01.md"
        for i in range(10):
            note.write_text(f"# day\n- edit {i}\n")
        wait_for(lambda: rec.calls, what="a change report")
        time.sleep(0.8)  # longer than the debounce: nothing more may come
        assert len(rec.calls) == 1
        assert rec.calls[0] == [str(note.resolve())]
    finally:
        w.stop()


def test_atomic_save_is_seen_as_a_change_of_the_target(ws):
    rec = Recorder()
    w = start(ws, rec)
    try:
        atomic_save(ws / "MEMORY.md", "# Memory\n- saved atomically\n")
        wait_for(lambda: "MEMORY.md" in rec.changed(), what="the atomic save")
        assert all(not n.startswith(".") for n in rec.changed())
    finally:
        w.stop()


def test_ignored_files_and_reads_cause_no_report(ws):
    rec = Recorder()
    w = start(ws, rec, debounce_s=0.1)
    try:
        mem = ws / "memory"
        (mem / "notes.txt").write_text("not markdown")
        (mem / ".hidden.md").write_text("hidden")
        (mem / "draft.md.swp").write_text("swap")
        (mem / "4913").write_text("")
        (mem / "4913").unlink()
        (ws / "README.md").write_text("# not memory\n")
        (mem / "2026-01-01.md").read_text()  # a sync's own reads must not loop
        time.sleep(0.6)
        assert rec.calls == []
        (mem / "2026-01-02.md").write_text("- real\n")
        wait_for(lambda: "2026-01-02.md" in rec.changed(), what="the real change")
        assert rec.changed() == {"2026-01-02.md"}
    finally:
        w.stop()


def test_memory_folder_created_later_is_watched(tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "MEMORY.md").write_text("# m\n")
    rec = Recorder()
    w = start(ws, rec)
    try:
        (ws / "memory").mkdir()
        wait_for(lambda: rec.calls, what="the new folder")
        wait_for(lambda: (ws.resolve() / "memory", True) in w._scheduled, what="a watch on the new folder")
        (ws / "memory" / "2026-02-01.md").write_text("- new day\n")
        wait_for(lambda: "2026-02-01.md" in rec.changed(), what="a file in the new folder")
    finally:
        w.stop()


def test_polling_mode_sees_changes(ws):
    rec = Recorder()
    w = start(ws, rec, polling=True, poll_interval_s=0.2)
    try:
        assert w.mode == "polling"
        atomic_save(ws / "memory" / "2026-01-01.md", "# day\n- polled edit\n")
        wait_for(lambda: "2026-01-01.md" in rec.changed(), what="a polled change")
    finally:
        w.stop()


def test_falls_back_to_polling_when_the_os_refuses_watches(ws):
    class LimitReachedObserver:
        """TEST DOUBLE: an observer whose start fails as inotify does when
        the per-user instance limit is reached (EMFILE). Exhausting the real
        limit would break every other process of this user."""

        def __init__(self):
            from watchdog.observers import Observer

            self._real = Observer()

        def __getattr__(self, name):
            return getattr(self._real, name)

        def __setattr__(self, name, value):
            if name == "_real":
                object.__setattr__(self, name, value)
            else:
                setattr(self._real, name, value)

        def start(self):
            raise OSError(errno.EMFILE, "inotify instance limit reached")

    rec = Recorder()
    w = start(ws, rec, observer_factory=LimitReachedObserver, poll_interval_s=0.2)
    try:
        assert w.mode == "polling"
        assert "instance limit" in (w.fallback_reason or "")
        (ws / "memory" / "2026-03-01.md").write_text("- still watched\n")
        wait_for(lambda: "2026-03-01.md" in rec.changed(), what="a change seen by polling")
    finally:
        w.stop()


def test_a_dead_watcher_is_noticed_and_restarted(ws):
    rec = Recorder()
    w = start(ws, rec)
    try:
        assert w.healthy()
        w._observer.stop()  # the observer thread dies without telling anyone
        w._observer.join(5)
        assert not w.healthy()
        w.restart()
        assert w.healthy()
        (ws / "memory" / "2026-04-01.md").write_text("- after restart\n")
        wait_for(lambda: "2026-04-01.md" in rec.changed(), what="a change after the restart")
    finally:
        w.stop()
    assert w.mode == "off" and not w.running


def test_session_transcripts_are_watched(tmp_path):
    ws = make_workspace(tmp_path, "ws")
    (ws / "sessions").mkdir()
    rec = Recorder()
    w = start(ws, rec, settings={"sources": ["memory", "sessions"], "experimental": {"session_memory": True}})
    try:
        with open(ws / "sessions" / "s1.jsonl", "a") as f:
            f.write('{"type": "message", "message": {"role": "user", "content": "hi"}}\n')
        wait_for(lambda: "s1.jsonl" in rec.changed(), what="a transcript change")
    finally:
        w.stop()


def test_a_start_that_fails_entirely_leaves_nothing_running(ws, monkeypatch):
    """TEST DOUBLES: native watching fails as inotify does past its watch
    limit (ENOSPC) and polling as when the process is out of file
    descriptors (EMFILE); neither can be caused for real without breaking
    other processes (and as root, unreadable folders do not fail)."""
    from watchdog.observers import Observer
    from watchdog.observers.polling import PollingObserver

    import memext.engine.freshness.watch as _watch_mod

    broken = {"polling": True}

    class LimitedObserver(Observer):
        def start(self):
            raise OSError(errno.ENOSPC, "inotify watch limit reached")

    class FailingPollingObserver(PollingObserver):
        def start(self):
            if broken["polling"]:
                raise OSError(errno.EMFILE, "Too many open files")
            super().start()

    monkeypatch.setattr(_watch_mod, "PollingObserver", FailingPollingObserver)
    before = {t.name for t in threading.enumerate()}
    rec = Recorder()
    agent = make_agent(ws, "w")
    w = MemoryWatcher(MemoryRoots.for_agent(agent), rec, debounce_s=0.2, name="w", observer_factory=LimitedObserver, poll_interval_s=0.2)
    with pytest.raises(OSError, match="Too many open files"):
        w.start()
    assert not w.running and w.mode == "off" and w._debouncer is None
    wait_for(lambda: not ({t.name for t in threading.enumerate()} - before), what="no thread left behind")
    # A later start begins afresh, and falls back to polling.
    broken["polling"] = False
    w.start()
    try:
        assert w.mode == "polling" and w.healthy() and "watch limit" in (w.fallback_reason or "")
        (ws / "memory" / "2026-05-01.md").write_text("- after the retry\n")
        wait_for(lambda: "2026-05-01.md" in rec.changed(), what="a change after the retry")
    finally:
        w.stop()


def test_use_polling_applies_from_the_next_start(ws):
    rec = Recorder()
    w = start(ws, rec, poll_interval_s=0.2)
    try:
        assert w.mode == "native"
        w.stop()
        w.use_polling("native watching stopped again soon after starting")
        w.start()
        assert w.mode == "polling" and "again" in w.fallback_reason
        atomic_save(ws / "memory" / "2026-01-01.md", "# day\n- polled after the switch\n")
        wait_for(lambda: "2026-01-01.md" in rec.changed(), what="a polled change")
    finally:
        w.stop()


WATCH_LOOPS_CHILD = """
import os, sys, threading, time
from pathlib import Path
from memext.engine.memory.roots import MemoryRoots
from memext.engine.freshness.watch import MemoryWatcher
ws = Path(sys.argv[1])
seen = threading.Event()
w = MemoryWatcher(MemoryRoots.of(ws, []), lambda paths: seen.set(), debounce_s=0.2, polling=sys.argv[2] == "polling",
                  poll_interval_s=0.2, name="loops")
w.start()
time.sleep(0.5)
(ws / "memory" / "2026-01-02.md").write_text("- after the loops\\n")
ok = seen.wait(10)
cpu = time.process_time()
mode = w.mode
w.stop()
print(mode if ok else "no-event", round(cpu, 1))
"""


@pytest.mark.parametrize("mode", ["native", "polling"])
def test_symlink_loops_do_not_trap_the_watcher(ws, mode):
    """Two directory symlink loops (``x -> .``, ``y -> .``) in memory/: the
    watcher starts, reports an edit and stops (the polling snapshot of
    watchdog follows symlinks: 2^40 paths; ours does not). In a child, so a
    trapped observer thread cannot spin in this process."""
    import subprocess
    import sys

    os_symlink = __import__("os").symlink
    os_symlink(".", ws / "memory" / "x")
    os_symlink(".", ws / "memory" / "y")
    out = subprocess.run([sys.executable, "-c", WATCH_LOOPS_CHILD, str(ws), mode], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    shown_mode, cpu_s = out.stdout.split()
    assert shown_mode == mode
    assert float(cpu_s) < 5  # the loops were not walked


def test_discovery_terminates_on_two_symlink_loops_through_the_cli(ws, tmp_path):
    """`memext index` on a workspace with ``x -> .`` and ``y -> .`` ends
    (rather than run until killed)."""
    import os
    import subprocess
    import sys

    os.symlink(".", ws / "memory" / "x")
    os.symlink(".", ws / "memory" / "y")
    env = {**os.environ, "MEMEXT_WORKSPACE": str(ws)}
    out = subprocess.run([sys.executable, "-m", "memext", "index"], capture_output=True, text=True, env=env, timeout=60, cwd=ws)
    assert out.returncode == 0, out.stderr
