"""A read-only index (a shared or backed-up copy: the file or its folder is
not writable) is searched as it is, and every face says it cannot be
updated; nothing crashes. Read-only for real: a read-only bind
mount when running as root (whom file modes do not stop), file modes
otherwise."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from conftest import make_agent

from memext.engine import MemoryIndex

CHILD = textwrap.dedent(
    """
    import json, sys
    from pathlib import Path
    sys.path.insert(0, sys.argv[3])
    from conftest import make_agent
    from memext.engine import IndexReadOnly, MemoryIndex
    out = {}
    with MemoryIndex(make_agent(Path(sys.argv[1]), db_path=Path(sys.argv[2])), provider=None) as idx:
        resp = idx.search("Anna billing")
        out["paths"] = [r.path for r in resp.results]
        out["notice"] = resp.notice
        st = idx.status()
        out["read_only"] = st.read_only
        out["dirty"] = st.dirty
        out["needs_sync"] = idx.needs_sync()
        try:
            idx.sync()
            out["sync"] = "synced"
        except IndexReadOnly as exc:
            out["sync"] = str(exc)
    print(json.dumps(out))
    """
)


def read_only_run(place: Path, args: list[str], *, env: dict | None = None, chmod: Path | None = None) -> subprocess.CompletedProcess:
    """Run ``args`` with ``place`` (a folder or a file) read-only."""
    if os.geteuid() == 0:
        assert shutil.which("unshare"), "running as root, this test needs unshare (util-linux) for a read-only mount"
        mount = f'mount --bind "{place}" "{place}" && mount -o remount,ro,bind "{place}" && exec "$@"'
        cmd = ["unshare", "-m", "sh", "-c", mount, "sh", *args]
        return subprocess.run(cmd, capture_output=True, text=True, timeout=120, env=env)
    target = chmod or place
    old = target.stat().st_mode
    os.chmod(target, 0o555 if target.is_dir() else 0o444)
    try:
        return subprocess.run(args, capture_output=True, text=True, timeout=120, env=env)
    finally:
        os.chmod(target, old)


@pytest.fixture
def built(workspace, tmp_path) -> Path:
    folder = tmp_path / "index"
    folder.mkdir()
    path = folder / "idx.sqlite"
    with MemoryIndex(make_agent(workspace, db_path=path), provider=None) as idx:
        idx.sync()
    (workspace / "memory" / "2026-01-07.md").write_text("- a change the read-only index cannot take\n")
    return path


@pytest.mark.parametrize("what", ["folder", "file"])
def test_a_read_only_index_is_searched_and_says_it_cannot_be_updated(workspace, built, what):
    place = built.parent if what == "folder" else built
    tests = str(Path(__file__).parent)
    out = read_only_run(place, [sys.executable, "-c", CHILD, str(workspace), str(built), tests])
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout)
    assert got["paths"][0] == "MEMORY.md"  # the old code could not even open it
    assert "read-only" in got["notice"] and "cannot be updated" in got["notice"]
    assert got["read_only"] and "read-only" in got["read_only"]
    assert got["dirty"] is True and got["needs_sync"] is False  # honest, and no sync that must fail
    assert "cannot be updated" in got["sync"] and str(built) in got["sync"]


def test_a_read_only_index_made_before_the_file_list_summary_reads_its_file_list(workspace, built):
    from memext.engine.store.sqlite import db

    conn, _ = db.connect(built, load_vec=False)
    with conn:
        for statement in ("DROP TABLE file_summary", *(f"DROP TRIGGER file_summary_{e}" for e in ("insert", "update", "delete"))):
            conn.execute(statement)
    conn.close()
    tests = str(Path(__file__).parent)
    out = read_only_run(built.parent, [sys.executable, "-c", CHILD, str(workspace), str(built), tests])
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout)
    assert got["paths"][0] == "MEMORY.md" and got["read_only"]
    assert got["dirty"] is True  # the changed file is seen from the files table


def test_the_cli_on_a_read_only_index(workspace, built, tmp_path):
    cfg = tmp_path / "config.toml"
    cfg.write_text(
        f'[memory_search]\nprovider = "none"\n[memory_search.store]\npath = {json.dumps(str(built))}\n'
        f'[[agents]]\nid = "a"\nworkspace = {json.dumps(str(workspace))}\n'
    )
    env = {**os.environ, "MEMEXT_CONFIG": str(cfg)}
    memext = [sys.executable, "-m", "memext"]
    found = read_only_run(built.parent, [*memext, "search", "Anna"], env=env)
    assert found.returncode == 0 and "MEMORY.md" in found.stdout, found.stderr
    assert "read-only" in found.stderr and "Traceback" not in found.stderr
    status = read_only_run(built.parent, [*memext, "status"], env=env)
    assert "read-only" in status.stdout and "cannot be updated" in status.stdout and "Traceback" not in status.stderr
    index = read_only_run(built.parent, [*memext, "index"], env=env)
    assert index.returncode == 2 and "cannot be updated" in index.stderr and "Traceback" not in index.stderr


TRAY_CHILD = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    sys.path.insert(0, sys.argv[3])
    from conftest import make_agent
    from memext.engine import FreshnessKeeper, MemoryIndex
    from memext.tray.daemon import DaemonSnapshot
    from memext.tray.menu import build_menu, render_text

    class Actions:
        def __getattr__(self, name):
            return lambda *a: None

    keeper = FreshnessKeeper(MemoryIndex(make_agent(Path(sys.argv[1]), db_path=Path(sys.argv[2])), provider=None), watch=False)
    keeper.start()
    try:
        deadline = time.monotonic() + 60
        while keeper.snapshot().syncs == 0 and time.monotonic() < deadline:
            time.sleep(0.05)
        snap = DaemonSnapshot(agents=(keeper.snapshot(),), paused=False, config_file=Path("config.toml"))
        print(render_text(build_menu(snap, Actions(), autostart=False)))
    finally:
        keeper.stop()
    """
)


def test_the_tray_says_read_only_not_error(workspace, built):
    """The tray's menu for a read-only index names the state and what it
    means (searches work, syncing is off) instead of a bare sync error."""
    tests = str(Path(__file__).parent)
    out = read_only_run(built.parent, [sys.executable, "-c", TRAY_CHILD, str(workspace), str(built), tests])
    assert out.returncode == 0, out.stderr
    menu = out.stdout
    assert "memext: 1 of 1 agent read-only" in menu, menu
    assert ": read-only" in menu and "State: read-only" in menu, menu
    assert "Index is read-only: searches work, syncing is off" in menu and "Why: " in menu, menu
    assert "Error:" not in menu, menu
