"""Appending to memory (engine/memory/append.py): concurrent writers lose nothing
and never interleave, kill -9 leaves whole entries, a full disk leaves
every file as it was, hostile paths write nothing outside the memory files,
and MemoryIndex.append makes the entry searchable at once."""

from __future__ import annotations

import hashlib
import json
import os
import random
import signal
import subprocess
import sys
import textwrap
import time
from datetime import datetime
from pathlib import Path

import pytest
from conftest import make_agent
from fault_helpers import fill, mount_tmpfs, unmount

from memext.engine import AccessDenied, DiskFull, MemoryIndex, MemoryTools, ToolError, append_entry

# A child process that appends COUNT entries (or forever when COUNT is 0)
# through the engine, printing each entry's start line.
WRITER = textwrap.dedent(
    """
    import json, sys
    from pathlib import Path
    from memext.engine.config import parse_config
    from memext.engine import append_entry
    ws, db, tag, count, size = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
    agent = parse_config({"agents": [{"id": "t", "workspace": ws}]}, path=Path(ws).parent / "c.toml").agents[0]
    i = 0
    while count == 0 or i < count:
        body = "\\n".join(f"{tag} {i} line {k} " + "x" * size for k in range(3))
        r = append_entry(agent, Path(db), body, file="memory/shared.md", heading=f"{tag}-{i}")
        print(r.start_line, flush=True)
        i += 1
    """
)


def _writer(ws: Path, db: Path, tag: str, count: int, size: int = 10) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-c", WRITER, str(ws), str(db), tag, str(count), str(size)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _entries(text: str) -> dict[str, list[str]]:
    """heading -> body lines, checking that every entry is whole: its three
    lines, in order, nothing of another entry between them."""
    blocks = ("\n" + text).split("\n## ")
    assert not blocks[0].strip(), blocks[0][:200]
    found: dict[str, list[str]] = {}
    for block in blocks[1:]:
        heading, *body = block.rstrip("\n").split("\n")
        tag, i = heading.split("-")
        assert len(body) == 3, f"entry {heading} is not whole: {body!r}"
        for k, line in enumerate(body):
            assert line.startswith(f"{tag} {i} line {k} x") and set(line.split(" ")[-1]) == {"x"}, f"{heading}: {line!r}"
        assert heading not in found, f"{heading} written twice"
        found[heading] = body
    return found


def test_two_processes_append_1000_entries_each(workspace, tmp_path):
    db = tmp_path / "index" / "t.sqlite"
    procs = {tag: _writer(workspace, db, tag, 1000) for tag in ("a", "b")}
    starts = {}
    for tag, p in procs.items():
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0, err
        starts[tag] = [int(n) for n in out.split()]
    text = (workspace / "memory" / "shared.md").read_text(encoding="utf-8")
    entries = _entries(text)
    assert len(entries) == 2000
    assert set(entries) == {f"{t}-{i}" for t in "ab" for i in range(1000)}
    # Each writer was told the line its entry starts on: the citation holds.
    lines = text.split("\n")
    for tag, numbers in starts.items():
        assert [lines[n - 1] for n in numbers] == [f"## {tag}-{i}" for i in range(1000)]


def test_kill_9_during_appends_leaves_whole_entries(workspace, tmp_path):
    db = tmp_path / "index" / "t.sqlite"
    target = workspace / "memory" / "shared.md"
    for round_ in range(3):
        p = _writer(workspace, db, f"k{round_}", 0, size=1000)  # ~3 KB an entry, written until killed
        deadline = time.monotonic() + 60
        while p.stdout.readline() and time.monotonic() < deadline:
            if target.stat().st_size > (round_ + 1) * 300_000:
                break
        os.kill(p.pid, signal.SIGKILL)
        p.wait(30)
        p.stdout.close(), p.stderr.close()
        entries = _entries(target.read_text(encoding="utf-8"))
        assert sum(h.startswith(f"k{round_}-") for h in entries) > 10
    # The lock died with its holder: the next writer goes ahead at once.
    agent = make_agent(workspace, db_path=db)
    r = append_entry(agent, db, "after the crash", file="memory/shared.md", heading="z-0", lock_timeout=5)
    assert target.read_text(encoding="utf-8").split("\n")[r.start_line - 1] == "## z-0"


def _snapshot(root: Path) -> dict[str, tuple]:
    """Every entry below ``root`` (links not followed): kind and content hash."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            p = Path(dirpath) / name
            rel = str(p.relative_to(root))
            if p.is_symlink():
                out[rel] = ("link", os.readlink(p))
            elif p.is_dir():
                out[rel] = ("dir",)
            else:
                out[rel] = ("file", hashlib.sha256(p.read_bytes()).hexdigest())
    return out


HOSTILE_PARTS = [
    "..",
    ".",
    "",
    "memory",
    "MEMORY.md",
    "memory.md",
    ".hidden",
    ".git",
    "link.md",
    "linkdir",
    "outside",
    "x.md",
    "x.MD",
    "x.txt",
    "x.md.txt",
    "x" * 300 + ".md",
    "a" * 5000,
    "\x00",
    "~",
    "$HOME",
    "%2e%2e",
    "..\\..\\x.md",
    "C:\\x.md",
    "x.md\x00.txt",
    " ",
    "x\n.md",
    "*.md",
    "ümlaut.md",
    "con.md",
    "-rf.md",
]


def _hostile_paths(rng: random.Random, outside: Path, n: int) -> list[str]:
    paths = [str(outside / "x.md"), str(outside / "link.md"), "/etc/passwd", "/etc/x.md", "~/x.md", "/", "memory/"]
    while len(paths) < n:
        parts = [rng.choice(HOSTILE_PARTS) for _ in range(rng.randint(1, 5))]
        path = "/".join(parts)
        if rng.random() < 0.3:
            path = "/" + path
        if rng.random() < 0.5 and not path.endswith(".md"):
            path += ".md"
        paths.append(path)
    return paths


def test_path_fuzz_writes_nothing_outside_memory(workspace, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "x.md").write_text("outside\n", encoding="utf-8")
    os.symlink(outside / "x.md", workspace / "memory" / "link.md")
    os.symlink(outside, workspace / "memory" / "linkdir")
    os.symlink(outside, workspace / "linkdir")
    (workspace / "notes.md").write_text("not memory\n", encoding="utf-8")
    db = tmp_path.parent / f"{tmp_path.name}-index" / "t.sqlite"  # outside the snapshot
    agent = make_agent(workspace, db_path=db)
    before = _snapshot(tmp_path)
    rng = random.Random(20261123)
    written: set[str] = set()
    refused = 0
    with MemoryTools(lambda _id: MemoryIndex(agent, provider=None), ["t"]) as tools:
        for path in _hostile_paths(rng, outside, 400):
            try:
                r = tools.call_tool("memory_append", {"text": "fuzz", "file": path})
            except ToolError as exc:
                assert str(exc) and "Traceback" not in str(exc)
                refused += 1
                continue
            written.add(r["citation"].rsplit(":", 1)[0])
    after = _snapshot(tmp_path)
    changed = {k for k in set(before) | set(after) if before.get(k) != after.get(k)}
    ws = workspace.relative_to(tmp_path)

    def is_memory(rel: str) -> bool:
        p = Path(rel)
        if p.parent == ws and p.name in ("MEMORY.md", "memory.md"):
            return True
        inside = p.parts[: len(ws.parts) + 1] == (*ws.parts, "memory")
        below = p.parts[len(ws.parts) + 1 :]
        return inside and not any(s.startswith(".") for s in below) and (after[rel][0] == "dir" or p.suffix.lower() == ".md")

    assert all(is_memory(rel) for rel in changed), sorted(c for c in changed if not is_memory(c))
    assert all(after[rel][0] != "link" for rel in changed)
    assert before[f"{ws}/memory/link.md"] == after[f"{ws}/memory/link.md"]
    assert (outside / "x.md").read_text(encoding="utf-8") == "outside\n"
    assert refused > 300 and written  # the fuzz hit both sides
    assert all(not Path(p).is_absolute() and ".." not in Path(p).parts for p in written)


def test_index_append_is_searchable_on_return(workspace, tmp_path):
    agent = make_agent(workspace, db_path=tmp_path / "i.sqlite")
    with MemoryIndex(agent, provider=None) as idx:
        idx.sync()
        r = idx.append("The staging database moved to Frankfurt.", heading="Infra")
        today = f"memory/{datetime.now():%Y-%m-%d}.md"
        assert (r.path, r.start_line, r.end_line, r.created, r.indexed) == (today, 3, 4, True, True)
        assert (workspace / today).read_text(encoding="utf-8") == (
            f"# {datetime.now():%Y-%m-%d}\n\n## Infra <!-- memext origin=person via=api date={datetime.now():%Y-%m-%d} -->\n"
            "The staging database moved to Frankfurt.\n"
        )
        hits = idx.search("staging Frankfurt")  # no sync in between
        assert hits[0].path == today
        assert idx.get(r.path, r.start_line, 2).text.endswith("-->\nThe staging database moved to Frankfurt.")


def test_append_never_rewrites_what_is_there(workspace, tmp_path):
    log = workspace / "memory" / "2026-01-05.md"
    log.write_bytes(b"# raw\r\nno newline at end")
    agent = make_agent(workspace, db_path=tmp_path / "i.sqlite")
    r = append_entry(agent, tmp_path / "i.sqlite", "Entry.", file="memory/2026-01-05.md", now=datetime(2026, 1, 5, 8, 0))
    assert log.read_bytes() == b"# raw\r\nno newline at end\n\n## 08:00\nEntry.\n"  # its own day: time only
    assert (r.start_line, r.end_line, r.created) == (4, 5, False)
    with pytest.raises(AccessDenied):
        append_entry(agent, tmp_path / "i.sqlite", "x", file="../x.md")


def test_append_waits_for_a_sync_of_another_process(workspace, tmp_path):
    db = tmp_path / "i.sqlite"
    agent = make_agent(workspace, db_path=db)
    # Another process holds the agent's writer lock (as a sync does) for a
    # moment: the append waits for it instead of failing, then writes and indexes.
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import time; from pathlib import Path; from memext.engine.config import parse_config\n"
            "from memext.engine.store.drivers import writer_lock\n"
            f"agent = parse_config({{'agents': [{{'id': 'test', 'workspace': {str(workspace)!r}, 'memory_search': {{'store': {agent.settings.store.url and {'driver': 'postgres', 'url': agent.settings.store.url} or {}!r}}}}}]}}).agents[0]\n"
            f"l = writer_lock(agent, Path({str(db)!r}), timeout=5).acquire(); print('held', flush=True); time.sleep(1.5)",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert holder.stdout.readline().strip() == "held"
    with MemoryIndex(agent, provider=None) as idx:
        t0 = time.monotonic()
        r = idx.append("Written while another process synced.")
        assert time.monotonic() - t0 > 0.5
        assert r.indexed and idx.search("another process synced")[0].path == r.path
    holder.wait(10)
    holder.stdout.close()
    assert (workspace / r.path).read_text(encoding="utf-8").endswith("Written while another process synced.\n")
    assert json.loads(json.dumps(r.to_dict()))["citation"] == r.citation


@pytest.fixture
def small_disk(tmp_path):
    """A 64 KiB tmpfs (memext's tests run as root, as in CI containers)."""
    disk = tmp_path / "disk"
    if not mount_tmpfs(disk, "64k"):
        pytest.fail(f"cannot mount a tmpfs at {disk}: the full-disk append test needs root (mount -t tmpfs)")
    try:
        yield disk
    finally:
        unmount(disk)


def test_a_full_disk_leaves_every_memory_file_as_it_was(small_disk, tmp_path):
    """The disk takes part of an entry, then refuses the rest: the part is
    cut off again, a file created for the entry is removed, and the error
    says the disk is full. Entries are bigger than a page, so the write
    does fill the last page of a file before it fails."""
    ws = small_disk / "ws"
    (ws / "memory").mkdir(parents=True)
    (ws / "MEMORY.md").write_text("# Memory\n- Anna leads billing.\n", encoding="utf-8")
    (ws / "memory" / "2026-03-01.md").write_text("# 2026-03-01\n\n" + "- a line of the day's log\n" * 40, encoding="utf-8")
    db = tmp_path / "idx.sqlite"  # the writer lock lives beside the index, on a disk with room
    agent = make_agent(ws, db_path=db)
    before = {p: p.read_bytes() for p in ws.rglob("*") if p.is_file()}
    fill(small_disk)
    entry = "A long entry that no longer fits. " * 200  # 6,800 bytes: more than a page
    cases = [
        ("memory/2026-03-01.md", datetime(2026, 3, 1, 9, 0)),  # an existing daily note
        ("MEMORY.md", datetime(2026, 3, 1, 9, 1)),
        (None, datetime(2026, 3, 2, 9, 2)),  # a new daily note
        ("memory/projects/plan.md", datetime(2026, 3, 2, 9, 3)),  # a new file in a new folder
    ]
    for file, now in cases:
        with pytest.raises(DiskFull) as err:
            append_entry(agent, db, entry, file=file, now=now)
        assert "disk is full" in str(err.value) and "nothing was written" in str(err.value)
    after = {p: p.read_bytes() for p in ws.rglob("*") if p.is_file()}
    assert {p: len(b) for p, b in after.items()} == {p: len(b) for p, b in before.items()}
    assert after == before
    assert not (ws / "memory" / "2026-03-02.md").exists() and not (ws / "memory" / "projects").exists()

    # `memext note` says so in one line, and writes nothing either.
    cfg = tmp_path / "config.toml"
    cfg.write_text(
        f'[memory_search]\nprovider = "none"\n[memory_search.store]\npath = {json.dumps(str(db))}\n'
        f'[[agents]]\nid = "a"\nworkspace = {json.dumps(str(ws))}\n'
    )
    env = {**os.environ, "MEMEXT_CONFIG": str(cfg)}
    out = subprocess.run(
        [sys.executable, "-m", "memext", "note", "--long-term", entry], capture_output=True, text=True, env=env, timeout=120
    )
    assert out.returncode == 2 and "disk is full" in out.stderr and "Traceback" not in out.stderr, out.stderr
    assert {p: p.read_bytes() for p in ws.rglob("*") if p.is_file()} == before

    # With room again, the same entry lands whole where it belongs.
    (small_disk / "filler").unlink()
    r = append_entry(agent, db, entry, file="MEMORY.md", now=datetime(2026, 3, 1, 9, 4))
    text = (ws / "MEMORY.md").read_text(encoding="utf-8")
    assert text.startswith(before[ws / "MEMORY.md"].decode()) and text.endswith(entry.rstrip() + "\n")
    assert r.start_line == 4


def test_an_existing_heading_takes_the_entry_and_citations_below_move(tmp_path):
    from memext.engine.memory.supersede import append_superseding

    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "MEMORY.md").write_text(
        "# Memory\n\n## Work\n- Gullwing stores readings in InfluxDB.\n\n## Home\n- Boiler service in May.\n"
        "- Old note. <!-- memext superseded=2026-01-01 by=MEMORY.md:8 -->\n- New note.\n",
        encoding="utf-8",
    )
    agent = make_agent(ws, db_path=tmp_path / "i.sqlite")
    db = tmp_path / "i.sqlite"
    r = append_superseding(agent, db, "- Gullwing moves to TimescaleDB.", file="MEMORY.md", heading="work", supersedes="MEMORY.md:4")
    lines = (ws / "MEMORY.md").read_text(encoding="utf-8").split("\n")
    assert [line.split(" <!--")[0] for line in lines[2:6]] == [
        "## Work",
        "- Gullwing stores readings in InfluxDB.",
        "- Gullwing moves to TimescaleDB.",
        "",
    ]
    assert r.citation == "MEMORY.md:5" and r.superseded == ("MEMORY.md:4",)
    assert "supersedes=MEMORY.md:4" in lines[4] and "superseded=" in lines[3] and "by=MEMORY.md:5" in lines[3]
    # The lines below moved down one, and the citation into them with them.
    assert lines[8].startswith("- Old note.") and "by=MEMORY.md:9" in lines[8] and lines[9] == "- New note."
    # A heading that is the file's last: a plain append under it.
    again = append_entry(agent, db, "- Boiler pressure is 1.5 bar.", file="MEMORY.md", heading="Home")
    text = (ws / "MEMORY.md").read_text(encoding="utf-8")
    assert text.count("## Home") == 1 and text.endswith("- New note.\n- Boiler pressure is 1.5 bar.\n") and again.citation == "MEMORY.md:11"
    # Without a heading, two entries in one minute share one timestamp heading.
    at = datetime(2026, 11, 28, 22, 28)
    append_entry(agent, db, "First.", file="memory/notes.md", now=at)
    append_entry(agent, db, "Second.", file="memory/notes.md", now=at)
    assert (ws / "memory" / "notes.md").read_text(encoding="utf-8") == "## 2026-11-28 22:28\nFirst.\n\nSecond.\n"
