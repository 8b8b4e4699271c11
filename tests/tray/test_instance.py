"""One tray per user; the headless daemon as a process; its log file."""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys

from conftest import ROOT
from tray_helpers import make_workspace, search_paths, wait_for, write_config

from memext.engine.paths import app_paths
from memext.tray.instance import SingleInstance, instance_lock_path
from memext.tray.logs import BACKUPS, setup_logging


def tray_process(*args: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "memext.tray", *args],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def test_second_instance_in_process_is_refused(tmp_path):
    first = SingleInstance(tmp_path / "tray.lock")
    second = SingleInstance(tmp_path / "tray.lock")
    assert first.acquire()
    assert not second.acquire()
    assert second.holder_pid() == os.getpid()
    first.release()
    assert second.acquire()
    second.release()
    assert not (tmp_path / "tray.lock.pid").exists()


def test_lock_lives_in_the_state_folder():
    assert instance_lock_path() == app_paths().state_dir / "tray.lock"


def test_a_second_start_says_so_and_exits_0(tmp_path):
    ws = make_workspace(tmp_path, "solo", {"memory/2026-01-01.md": "- the solo note about walruses\n"})
    cfg = write_config(tmp_path / "config.toml", {"solo": ws})
    log_file = app_paths().log_dir / "tray.log"
    first = tray_process("--headless", "--config", str(cfg))
    try:
        wait_for(lambda: log_file.exists() and "solo: synced (startup)" in log_file.read_text(), what="the first tray's sync")
        assert search_paths(cfg, "solo", "walruses")
        second = tray_process("--headless", "--config", str(cfg))
        out, _ = second.communicate(timeout=60)
        assert second.returncode == 0
        assert f"memext-tray is already running (pid {first.pid}); not starting another." in out
        assert first.poll() is None  # the first one is untouched
    finally:
        first.send_signal(signal.SIGTERM)
        out, _ = first.communicate(timeout=60)
    assert first.returncode == 0, out
    text = log_file.read_text()
    assert "stopping" in text and "memext-tray exiting" in text


def test_a_killed_tray_frees_the_lock(tmp_path):
    ws = make_workspace(tmp_path, "solo")
    cfg = write_config(tmp_path / "config.toml", {"solo": ws})
    lock = SingleInstance(instance_lock_path())
    first = tray_process("--headless", "--config", str(cfg))
    try:
        wait_for(lambda: lock.holder_pid() == first.pid, what="the tray to take the lock")
        assert not lock.acquire()
        first.send_signal(signal.SIGKILL)
        first.communicate(timeout=60)
        assert lock.acquire()  # the OS dropped the dead tray's lock
    finally:
        if first.poll() is None:
            first.kill()
        lock.release()


def test_log_file_rotates(tmp_path):
    root = logging.getLogger()
    levels = root.level, logging.getLogger("memext").level
    path = setup_logging(tmp_path / "logs", verbose=True)
    try:
        assert path == tmp_path / "logs" / "tray.log"
        log = logging.getLogger("memext.tray")
        line = "x" * 1000
        for _ in range(1500):  # about 1.5 MB: past the 1 MB cap
            log.debug(line)
        names = sorted(p.name for p in path.parent.iterdir())
        assert names[:2] == ["tray.log", "tray.log.1"] and len(names) <= BACKUPS + 1
        assert path.stat().st_size < 1_100_000
        logging.getLogger("other.library").info("not shown")
        logging.getLogger("other.library").warning("shown")
        text = path.read_text()
        assert "shown" in text and "not shown" not in text
    finally:
        for h in [h for h in root.handlers if getattr(h, "_memext_tray", False)]:
            root.removeHandler(h)
            h.close()
        root.setLevel(levels[0])
        logging.getLogger("memext").setLevel(levels[1])
