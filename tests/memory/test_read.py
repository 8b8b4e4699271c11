"""get(): reading memory files and refusing everything else (DESIGN.md §8)."""

from __future__ import annotations

import os

import pytest

from memext.engine.errors import AccessDenied, BadLineRange, BadPath, MemextError
from memext.engine.memory.read import MAX_CHARS, MAX_LINES, read_lines


def test_reads_a_window_with_1_based_lines(workspace):
    r = read_lines("MEMORY.md", workspace, [], from_line=3, lines=2)
    assert r.text == "## People\n- Anna is the tech lead of the billing team."
    assert (r.from_line, r.to_line, r.total_lines, r.truncated) == (3, 4, 8, False)
    assert read_lines("memory/2026-01-05.md", workspace, []).text.startswith("# 2026-01-05")


def test_absolute_path_inside_memory_is_allowed(workspace):
    r = read_lines(str(workspace / "memory" / "2026-01-06.md"), workspace, [])
    assert r.path == "memory/2026-01-06.md"


def test_missing_memory_file_reads_empty(workspace):
    r = read_lines("memory/2030-01-01.md", workspace, [])
    assert r.text == "" and r.missing


@pytest.mark.parametrize(
    "path,why",
    [
        ("../outside.md", "'..'"),
        ("memory/../../outside.md", "'..'"),
        ("memory/../README.md", "'..'"),
        ("/etc/passwd", ".md"),
        ("MEMORY.txt", ".md"),
        ("memory/.hidden.md", "hidden"),
        ("README.md", "not part of this agent's memory"),
        ("", "no path"),
    ],
)
def test_refusals_say_why(workspace, tmp_path, path, why):
    (tmp_path / "outside.md").write_text("secret")
    (workspace / "README.md").write_text("readme")
    (workspace / "memory" / ".hidden.md").write_text("h")
    with pytest.raises(AccessDenied) as err:
        read_lines(path, workspace, [])
    assert why in str(err.value)


def test_absolute_path_outside_is_refused(workspace, tmp_path):
    other = tmp_path / "elsewhere" / "memory"
    other.mkdir(parents=True)
    (other / "x.md").write_text("not yours")
    with pytest.raises(AccessDenied, match="not part of this agent's memory"):
        read_lines(str(other / "x.md"), workspace, [])


def test_symlinks_are_refused(workspace, tmp_path):
    secret = tmp_path / "secret.md"
    secret.write_text("password")
    os.symlink(secret, workspace / "memory" / "leak.md")
    os.symlink(tmp_path, workspace / "memory" / "dirlink")
    with pytest.raises(AccessDenied, match="symlink"):
        read_lines("memory/leak.md", workspace, [])
    with pytest.raises(AccessDenied, match="symlink"):
        read_lines("memory/dirlink/secret.md", workspace, [])


def test_extra_paths_are_readable_even_outside_the_workspace(workspace, tmp_path):
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "n.md").write_text("extra note")
    r = read_lines("../notes/n.md", workspace, [notes])
    assert r.text == "extra note" and r.path == "../notes/n.md"
    with pytest.raises(AccessDenied):
        read_lines("../notes/n.md", workspace, [])


def test_output_is_bounded(workspace):
    (workspace / "memory" / "long.md").write_text("\n".join(f"l{i}" for i in range(MAX_LINES + 500)))
    r = read_lines("memory/long.md", workspace, [])
    assert r.to_line == MAX_LINES and r.truncated


def test_a_window_past_the_end_is_not_truncated(workspace):
    (workspace / "memory" / "x.md").write_text("".join(f"line {i}\n" for i in range(1, 11)))
    r = read_lines("memory/x.md", workspace, [], from_line=3, lines=100)
    assert (r.from_line, r.to_line, r.total_lines, r.truncated) == (3, 10, 10, False)
    assert r.text.splitlines()[-1] == "line 10"
    r = read_lines("memory/x.md", workspace, [], from_line=3)
    assert (r.to_line, r.truncated) == (10, False)
    r = read_lines("memory/x.md", workspace, [], from_line=20, lines=5)
    assert (r.text, r.to_line, r.truncated) == ("", 10, False)


def test_truncated_only_when_a_limit_stopped_the_read(workspace):
    (workspace / "memory" / "long.md").write_text("\n".join(f"l{i}" for i in range(1, MAX_LINES + 501)))
    r = read_lines("memory/long.md", workspace, [], from_line=10, lines=MAX_LINES + 100)
    assert (r.to_line, r.truncated) == (MAX_LINES + 9, True)
    r = read_lines("memory/long.md", workspace, [], from_line=MAX_LINES, lines=MAX_LINES)
    assert (r.to_line, r.truncated) == (MAX_LINES + 500, False)  # the end of the file came first
    wide = "y" * (MAX_CHARS // 3)
    (workspace / "memory" / "wide.md").write_text("\n".join([wide] * 5))
    r = read_lines("memory/wide.md", workspace, [])
    assert (r.to_line, r.truncated) == (2, True) and len(r.text) <= MAX_CHARS


def test_a_line_longer_than_the_cap_is_cut_not_skipped(workspace):
    (workspace / "memory" / "huge.md").write_text("z" * (MAX_CHARS + 10) + "\nnext\n")
    r = read_lines("memory/huge.md", workspace, [])
    assert (r.from_line, r.to_line, r.truncated) == (1, 1, True) and len(r.text) == MAX_CHARS


@pytest.mark.parametrize(
    "from_line,lines,why", [(0, None, "first line"), (-2, 3, "first line"), (1, 0, "number of lines"), ("3", None, "whole number")]
)
def test_bad_ranges_are_memext_errors(workspace, from_line, lines, why):
    with pytest.raises(BadLineRange, match=why) as err:
        read_lines("MEMORY.md", workspace, [], from_line=from_line, lines=lines)
    assert isinstance(err.value, MemextError) and isinstance(err.value, ValueError)


@pytest.mark.parametrize(
    "raw,why",
    [
        ("memory/a\0b.md", "NUL"),
        ("memory/" + "x" * 300 + ".md", "too long"),
        ("memory/" + "a/" * 3000 + "x.md", "too long"),
        ("memory/\ud800.md", "encoding"),
        (None, "must be text"),
    ],
)
def test_paths_that_cannot_name_a_file_are_bad_paths(workspace, raw, why):
    with pytest.raises(BadPath, match=why):
        read_lines(raw, workspace, [])


def test_a_fifo_named_like_memory_is_refused_without_blocking(workspace):
    os.mkfifo(workspace / "memory" / "pipe.md")
    with pytest.raises(AccessDenied, match="not a file"):
        read_lines("memory/pipe.md", workspace, [])
