"""memext's folders and files are private whatever the umask (issue 13)."""

from __future__ import annotations

import logging
import os
import stat
from pathlib import Path

import pytest

from memext.engine.config_edit import set_memory_search_value
from memext.engine.paths import private_dir, private_file, write_private_text


def mode(p: Path) -> int:
    return stat.S_IMODE(os.stat(p).st_mode)


@pytest.fixture
def umask_022():
    old = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(old)


def test_private_dir_creates_missing_folders_0700(tmp_path, umask_022):
    d = private_dir(tmp_path / "state" / "memext" / "memory")
    assert [mode(p) for p in (d, d.parent, d.parent.parent)] == [0o700] * 3


def test_existing_loose_paths_are_tightened_once_with_one_log_line(tmp_path, umask_022, caplog):
    folder = tmp_path / "cfg"
    folder.mkdir(mode=0o755)
    f = folder / "config.toml"
    f.write_text("[memory_search]\n")
    os.chmod(f, 0o644)
    with caplog.at_level(logging.WARNING, logger="memext"):
        private_dir(folder)
        private_file(f)
        private_dir(folder)
        private_file(f)
    assert mode(folder) == 0o700 and mode(f) == 0o600
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 2 and all("private" in m for m in lines)


def test_private_file_create_and_write_private_text(tmp_path, umask_022):
    assert mode(private_file(tmp_path / "a.log", create=True)) == 0o600
    target = tmp_path / "b.json"
    target.write_text("old")
    os.chmod(target, 0o644)
    write_private_text(target, "new")
    assert target.read_text() == "new" and mode(target) == 0o600
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.log", "b.json"]


def test_config_edit_writes_a_private_config(tmp_path, umask_022):
    cfg = tmp_path / "fresh" / "config.toml"
    set_memory_search_value(cfg, ["remote", "api_key"], "sk-secret")
    assert mode(cfg) == 0o600 and mode(cfg.parent) == 0o700
    chosen = tmp_path / "projects"
    chosen.mkdir(mode=0o755)
    loose = chosen / "loose.toml"
    loose.write_text("[memory_search]\n")
    os.chmod(loose, 0o644)
    set_memory_search_value(loose, ["remote", "api_key"], "sk-secret")
    assert mode(loose) == 0o600
    assert mode(chosen) == 0o755  # a folder the user chose is not taken over
