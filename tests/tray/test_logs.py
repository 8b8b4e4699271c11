"""The tray's log folder and files are private: they may quote
memory text and provider errors."""

from __future__ import annotations

import logging
import os
import stat

import pytest

from memext.tray import logs


def mode(p) -> int:
    return stat.S_IMODE(os.stat(p).st_mode)


@pytest.fixture
def umask_022():
    old = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(old)


@pytest.fixture
def restore_logging():
    yield
    root = logging.getLogger()
    for h in [h for h in root.handlers if getattr(h, "_memext_tray", False)]:
        root.removeHandler(h)
        h.close()


def test_log_folder_and_files_are_private_across_rotation(tmp_path, umask_022, restore_logging, monkeypatch):
    monkeypatch.setattr(logs, "MAX_BYTES", 2000)
    path = logs.setup_logging(tmp_path / "log")
    for i in range(100):
        logging.getLogger("memext").info("line %d %s", i, "x" * 50)
    rotated = sorted(p for p in path.parent.iterdir())
    assert len(rotated) == 1 + logs.BACKUPS
    assert mode(path.parent) == 0o700 and {mode(p) for p in rotated} == {0o600}


def test_existing_loose_log_files_are_tightened(tmp_path, umask_022, restore_logging):
    folder = tmp_path / "log"
    folder.mkdir(mode=0o755)
    (folder / "tray.log").write_text("old\n")
    (folder / "tray.log.1").write_text("older\n")
    os.chmod(folder / "tray.log", 0o644)
    os.chmod(folder / "tray.log.1", 0o644)
    logs.setup_logging(folder)
    assert mode(folder) == 0o700 and mode(folder / "tray.log") == 0o600 and mode(folder / "tray.log.1") == 0o600
