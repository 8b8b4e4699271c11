"""memext's folders and files are private whatever the umask."""

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


def test_an_index_and_everything_beside_it_is_private(workspace, tmp_path, umask_022, isolated_user_dirs):
    """The index holds the full text of the notes: with umask 022 the old
    code left it 0644 in a 0755 folder."""
    from conftest import make_agent

    from memext.engine import MemoryIndex
    from memext.engine.paths import app_paths

    agent = make_agent(workspace)  # the default place: the user state folder
    with MemoryIndex(agent, provider=None) as idx:
        idx.sync()
        path = idx.db_path
        assert path.parent == app_paths().index_dir
        beside = sorted(path.parent.iterdir())
        assert {p.name for p in beside} >= {path.name, path.name + "-wal", path.name + "-shm", path.name + ".lock"}
        assert {p.name: mode(p) for p in beside} == {p.name: 0o600 for p in beside}
    assert mode(path.parent) == 0o700 and mode(app_paths().state_dir) == 0o700


def test_an_index_left_readable_by_an_older_memext_is_tightened_once(workspace, tmp_path, umask_022, caplog):
    from conftest import make_agent

    from memext.engine import MemoryIndex
    from memext.engine.paths import app_paths

    agent = make_agent(workspace)
    with MemoryIndex(agent, provider=None) as idx:
        idx.sync()
        path = idx.db_path
    os.chmod(path.parent, 0o755)
    os.chmod(path, 0o644)
    with caplog.at_level(logging.WARNING, logger="memext"):
        with MemoryIndex(agent, provider=None) as idx:
            assert idx.search("Anna").results
        with MemoryIndex(agent, provider=None) as idx:
            idx.status()
    assert mode(path) == 0o600 and mode(path.parent) == 0o700 and mode(app_paths().index_dir) == 0o700
    said = [r.getMessage() for r in caplog.records if "private" in r.getMessage()]
    assert len(said) == 2 and any(str(path) in m for m in said)  # once for the file, once for the folder


def test_a_damaged_index_set_aside_stays_private(workspace, tmp_path, umask_022):
    from conftest import make_agent

    from memext.engine import MemoryIndex

    path = tmp_path / "chosen" / "idx.sqlite"
    path.parent.mkdir()
    path.write_bytes(b"not an index, but the notes of someone" * 20)
    os.chmod(path, 0o644)
    with MemoryIndex(make_agent(workspace, db_path=path), provider=None) as idx:
        idx.sync()
    aside = [p for p in path.parent.iterdir() if ".corrupt-" in p.name]
    assert aside and all(mode(p) == 0o600 for p in aside)
    assert mode(path) == 0o600
    assert mode(path.parent) == 0o755  # a folder the user chose (store.path) is not taken over


def test_the_config_file_is_created_private_and_tightened_when_read(tmp_path, umask_022, isolated_user_dirs, caplog):
    import subprocess
    import sys

    from memext.engine.config import load_config
    from memext.engine.paths import app_paths

    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "MEMORY.md").write_text("- a note\n")
    env = {**os.environ, "XDG_CONFIG_HOME": str(isolated_user_dirs / "config")}
    done = subprocess.run([sys.executable, "-m", "memext", "agents", "add", "work", str(ws)], capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr
    cfg = app_paths().config_file
    assert mode(cfg) == 0o600 and mode(cfg.parent) == 0o700  # the old `agents add` wrote 0644 in 0755
    os.chmod(cfg, 0o644)
    os.chmod(cfg.parent, 0o755)
    with caplog.at_level(logging.WARNING, logger="memext"):
        load_config()
        load_config()
    assert mode(cfg) == 0o600 and mode(cfg.parent) == 0o700
    assert len([r for r in caplog.records if "private" in r.getMessage()]) == 2


def test_a_config_named_by_memext_config_keeps_its_folder(tmp_path, umask_022, monkeypatch):
    from memext.engine.config import load_config

    chosen = tmp_path / "project"
    chosen.mkdir(mode=0o755)
    cfg = chosen / "memext.toml"
    cfg.write_text("[memory_search]\n")
    os.chmod(cfg, 0o644)
    monkeypatch.setenv("MEMEXT_CONFIG", str(cfg))
    load_config()
    assert mode(cfg) == 0o600 and mode(chosen) == 0o755


# ---------------------------------------------------------------------------
# Only what is memext's to change: the config path may name anything.


@pytest.fixture
def odd_paths(tmp_path):
    """A character device node (1,3: the numbers of /dev/null) on a tmpfs of
    the test's own, a FIFO, a symlink to a loose file of the user's, and a
    regular file owned by another user, each readable by others."""
    from fault_helpers import mount_tmpfs, unmount

    disk = tmp_path / "disk"
    if not mount_tmpfs(disk, "1m"):
        pytest.fail(f"cannot mount a tmpfs at {disk}: these tests need root (mknod, chown), as in CI containers")
    try:
        device = disk / "null"
        os.mknod(device, stat.S_IFCHR | 0o666, os.makedev(1, 3))
        fifo = disk / "fifo"
        os.mkfifo(fifo, 0o644)
        target = disk / "dotfiles-config.toml"
        target.write_text("[memory_search]\n")
        os.chmod(target, 0o644)
        link = disk / "config-link.toml"
        link.symlink_to(target)
        theirs = disk / "theirs.toml"
        theirs.write_text("[memory_search]\n")
        os.chmod(theirs, 0o644)
        os.chown(theirs, 65534, 65534)
        yield {"device": device, "fifo": fifo, "link": link, "target": target, "theirs": theirs}
    finally:
        unmount(disk)


def _look(p: Path) -> tuple:
    st = os.lstat(p)
    return (stat.S_IFMT(st.st_mode), stat.S_IMODE(st.st_mode), st.st_uid, st.st_rdev, st.st_ino)


@pytest.mark.parametrize("which", ["device", "fifo", "link", "theirs"])
def test_a_config_path_that_is_not_a_file_of_the_users_is_left_as_it_was(odd_paths, which, monkeypatch, isolated_user_dirs):
    from memext.engine.paths import private_file

    path = odd_paths[which]
    before = {k: _look(p) for k, p in odd_paths.items()}
    private_file(path)
    private_file(path, quiet=True)
    assert {k: _look(p) for k, p in odd_paths.items()} == before


def test_memext_search_with_a_device_node_as_config_leaves_it_as_it_was(odd_paths, tmp_path, isolated_user_dirs):
    import subprocess
    import sys

    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "MEMORY.md").write_text("- herons nest by the lake\n")
    for which in ("device", "theirs", "link"):
        before = {k: _look(p) for k, p in odd_paths.items()}
        env = {**os.environ, "MEMEXT_CONFIG": str(odd_paths[which])}
        done = subprocess.run([sys.executable, "-m", "memext", "search", "herons"], cwd=ws, capture_output=True, text=True, env=env)
        assert done.returncode == 0, (which, done.stderr)
        assert "herons nest" in done.stdout
        assert {k: _look(p) for k, p in odd_paths.items()} == before, which


@pytest.mark.parametrize("which", ["device", "fifo", "theirs"])
def test_writing_a_config_never_replaces_what_is_not_the_users(odd_paths, which, tmp_path):
    from memext.engine.config import add_agent
    from memext.engine.paths import NotOursError

    ws = tmp_path / "ws"
    ws.mkdir()
    before = {k: _look(p) for k, p in odd_paths.items()}
    with pytest.raises(NotOursError, match="will not replace it"):
        write_private_text(odd_paths[which], "[memory_search]\n")
    if which != "fifo":  # reading a FIFO would wait for a writer
        with pytest.raises(NotOursError):
            add_agent(odd_paths[which], "work", ws)
    assert {k: _look(p) for k, p in odd_paths.items()} == before


def test_a_symlinked_config_is_written_through_and_the_link_kept(odd_paths, umask_022):
    link, target = odd_paths["link"], odd_paths["target"]
    write_private_text(link, "[memory_search]\nchunking.tokens = 300\n")
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert "300" in target.read_text() and mode(target) == 0o600
