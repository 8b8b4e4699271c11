"""Which files are memory (DESIGN.md §1) and how transcripts are read (DESIGN.md §9)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from types import SimpleNamespace

import pytest

from memext.engine.memory.discovery import discover_memory_files, read_text
from memext.engine.memory.transcripts import discover_session_files, parse_transcript


def paths(files):
    return [f.path for f in files]


def test_discovers_memory_files_only(workspace, tmp_path):
    (workspace / "memory" / "sub").mkdir()
    (workspace / "memory" / "sub" / "deep.md").write_text("deep")
    (workspace / "memory" / "notes.txt").write_text("not markdown")
    (workspace / "memory" / ".hidden.md").write_text("hidden")
    (workspace / "memory" / ".git").mkdir()
    (workspace / "memory" / ".git" / "x.md").write_text("hidden dir")
    (workspace / "README.md").write_text("not memory: outside memory/")
    files, skipped = discover_memory_files(workspace, [], 10_000_000)
    assert paths(files) == ["MEMORY.md", "memory/2026-01-05.md", "memory/2026-01-06.md", "memory/sub/deep.md"]
    assert skipped == []


def test_extra_paths_folders_and_files(workspace, tmp_path):
    notes = tmp_path / "notes"
    (notes / "a").mkdir(parents=True)
    (notes / "a" / "x.md").write_text("x")
    single = tmp_path / "single.md"
    single.write_text("s")
    inside = workspace / "docs"
    inside.mkdir()
    (inside / "y.md").write_text("y")
    files, skipped = discover_memory_files(workspace, [notes, single, inside, tmp_path / "missing"], 10_000_000)
    got = paths(files)
    assert "../notes/a/x.md" in got and "../single.md" in got and "docs/y.md" in got
    assert [s.reason for s in skipped] == ["extra path does not exist"]


def test_symlinks_leading_outside_are_skipped(workspace, tmp_path):
    secret = tmp_path / "secret.md"
    secret.write_text("password")
    os.symlink(secret, workspace / "memory" / "leak.md")
    outside_dir = tmp_path / "outside"
    outside_dir.mkdir()
    (outside_dir / "o.md").write_text("o")
    os.symlink(outside_dir, workspace / "memory" / "linkdir")
    os.symlink(workspace / "MEMORY.md", workspace / "memory" / "alias.md")  # inside: fine, once
    files, skipped = discover_memory_files(workspace, [], 10_000_000)
    assert "memory/leak.md" not in paths(files) and "memory/linkdir/o.md" not in paths(files)
    assert paths(files).count("MEMORY.md") == 1 and "memory/alias.md" not in paths(files)
    reasons = {s.path: s.reason for s in skipped}
    assert "symlink" in reasons["memory/leak.md"] and "symlink" in reasons["memory/linkdir"]


def test_memory_md_and_lowercase_twin_deduplicate_by_file(workspace):
    os.link(workspace / "MEMORY.md", workspace / "memory.md")  # one file, two names
    files, _ = discover_memory_files(workspace, [], 10_000_000)
    assert paths(files).count("MEMORY.md") + paths(files).count("memory.md") == 1


def test_size_cap_skips_and_reports(workspace):
    (workspace / "memory" / "big.md").write_text("x" * 2000)
    files, skipped = discover_memory_files(workspace, [], 1000)
    assert "memory/big.md" not in paths(files)
    assert skipped[0].path == "memory/big.md" and "limit (2.0 KB; max_file_bytes)" in skipped[0].reason


def test_bad_utf8_is_replaced_not_fatal(tmp_path):
    p = tmp_path / "bad.md"
    p.write_bytes(b"\xef\xbb\xbfok \xff\xfe bytes")
    text, bad = read_text(p)
    assert bad and text.startswith("ok ") and "\ufffd" in text


def test_transcript_lines_point_at_jsonl_lines(tmp_path):
    records = [
        {"type": "session", "id": "s1"},
        {"type": "message", "message": {"role": "user", "content": "Where is the \u2028 VPN profile?"}},
        "not json at all",
        {
            "type": "message",
            "message": {"role": "assistant", "content": [{"type": "text", "text": "lisbon-office.ovpn"}, {"type": "image"}]},
        },
        {"type": "message", "message": {"role": "tool", "content": "ignored"}},
    ]
    text = "\n".join(r if isinstance(r, str) else json.dumps(r, ensure_ascii=False) for r in records) + "\n"
    t = parse_transcript(text)
    assert t.messages == 2
    assert t.lines[0][0] == 2 and t.lines[0][1].startswith("User: Where is")
    assert t.lines[-1] == (4, "Assistant: lisbon-office.ovpn")


def test_session_discovery(tmp_path):
    d = tmp_path / "sessions"
    d.mkdir()
    (d / "a.jsonl").write_text("{}\n")
    (d / ".b.jsonl").write_text("{}\n")
    (d / "c.txt").write_text("x")
    files, _ = discover_session_files(d, 10_000)
    assert [(f.path, f.source) for f in files] == [("sessions/a.jsonl", "sessions")]


def test_two_symlink_loops_end_the_walk(workspace):
    # Each loop alone is fine; two of them made the walk grow without bound
    # (x/y/x/y/...). Run in a child process so a regression fails, not hangs.
    mem = workspace / "memory"
    (mem / "sub").mkdir(exist_ok=True)
    (mem / "sub" / "deep.md").write_text("deep")
    os.symlink(".", mem / "x")
    os.symlink(".", mem / "y")
    os.symlink("..", mem / "sub" / "up")
    code = (
        "import sys; from pathlib import Path; from memext.engine.memory.discovery import discover_memory_files as d; "
        "files, _ = d(Path(sys.argv[1]), [], 10_000_000); print('\\n'.join(f.path for f in files))"
    )
    started = time.monotonic()
    out = subprocess.run([sys.executable, "-c", code, str(workspace)], capture_output=True, text=True, timeout=20)
    assert out.returncode == 0, out.stderr
    assert time.monotonic() - started < 20
    got = out.stdout.split()
    assert got.count("memory/sub/deep.md") == 1 and len(got) == len(set(got))


def test_binary_content_is_not_text(tmp_path):
    from memext.engine.memory.discovery import NotText, looks_binary

    assert looks_binary(b"GIF89a\x00\x01") and looks_binary(bytes(range(128, 256)) * 4)
    assert not looks_binary("# Notes\n- café ☕\n".encode()) and not looks_binary(b"ok \xff\xfe bytes")
    p = tmp_path / "photo.md"
    p.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00")
    with pytest.raises(NotText, match="binary content"):
        read_text(p)


def test_files_indexed_unchanged_skip_the_binary_check(workspace):
    # Discovery reads the head of every file it has not indexed as it is
    # now; a file the index holds with the same stat was text when read.
    p = workspace / "memory" / "2026-01-05.md"
    st = p.stat()
    p.write_bytes(b"\x00" + p.read_bytes()[1:])  # same size: only the stat says "changed"
    os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns))
    row = SimpleNamespace(mtime_ns=st.st_mtime_ns, size=st.st_size)
    files, skipped = discover_memory_files(workspace, [], 10_000_000, indexed={"memory/2026-01-05.md": row})
    assert "memory/2026-01-05.md" in paths(files) and skipped == []
    changed = SimpleNamespace(mtime_ns=st.st_mtime_ns - 1, size=st.st_size)
    files, skipped = discover_memory_files(workspace, [], 10_000_000, indexed={"memory/2026-01-05.md": changed})
    assert "memory/2026-01-05.md" not in paths(files)
    assert [(s.path, s.reason) for s in skipped] == [("memory/2026-01-05.md", "binary content, not text: not indexed")]


def test_walked_files_carry_real_paths_and_workspace_relative_names(workspace, tmp_path):
    # The walk builds names from strings: check them against the Path rules.
    (workspace / "memory" / "a" / "b").mkdir(parents=True)
    (workspace / "memory" / "a" / "b" / "deep.MD").write_text("deep")
    extra = tmp_path / "extra"
    (extra / "sub").mkdir(parents=True)
    (extra / "sub" / "x.md").write_text("x")
    files, _ = discover_memory_files(workspace, [extra], 10_000_000)
    by_path = {f.path: f for f in files}
    assert {"memory/a/b/deep.MD", "../extra/sub/x.md"} <= set(by_path)
    for f in files:
        assert f.abs_path == f.abs_path.resolve() and os.path.relpath(f.abs_path, workspace.resolve()) == f.path


class _WrittenWhileRead:
    """TEST DOUBLE for a writer racing the reader: the one fault that cannot
    be timed from outside. Wraps the file object ``read_file`` opens so that
    the first ``times`` reads are followed, before the reader looks at the
    file again, by an append (as an editor or a log writer would)."""

    def __init__(self, times: int, extra: bytes):
        self.times = times
        self.extra = extra

    def open(self, path, mode="r", *args, **kwargs):
        fh = open(path, mode, *args, **kwargs)
        racer = self

        class Racing:
            def __getattr__(self, name):
                return getattr(fh, name)

            def __enter__(self):
                return self

            def __exit__(self, *exc):
                fh.close()

            def read(self, *a):
                data = fh.read(*a)
                if racer.times > 0:
                    racer.times -= 1
                    with open(path, "ab") as w:
                        w.write(racer.extra)
                return data

        return Racing()


def test_a_file_growing_while_read_is_read_again(tmp_path, monkeypatch):
    from memext.engine.memory import discovery as sources

    p = tmp_path / "log.md"
    p.write_bytes(b"- first line\n")
    racer = _WrittenWhileRead(times=1, extra=b"- tail written during the read\n")
    monkeypatch.setattr(sources, "open", racer.open, raising=False)
    got = sources.read_file(p)
    assert got.settled and got.text.endswith("- tail written during the read\n")
    st = os.stat(p)
    assert (got.mtime_ns, got.size) == (st.st_mtime_ns, st.st_size)


def test_a_file_that_never_settles_comes_back_unsettled_with_what_was_read(tmp_path, monkeypatch):
    from memext.engine.memory import discovery as sources

    p = tmp_path / "log.md"
    p.write_bytes(b"- first line\n")
    racer = _WrittenWhileRead(times=10, extra=b"- more\n")
    monkeypatch.setattr(sources, "open", racer.open, raising=False)
    got = sources.read_file(p, attempts=3)
    assert not got.settled
    assert got.size == len(got.text.encode())  # the stat of what was read, not of the file now
    assert got.size < os.stat(p).st_size
