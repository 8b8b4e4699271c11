"""Writing notes into memory (%%memnote): where they go, what the file looks
like after, and that the citation points at the note."""

from __future__ import annotations

import os
from datetime import datetime

import pytest
from conftest import make_agent

from memext.engine import AccessDenied, MemextError, MemoryIndex
from memext.notes import append_note

NOW = datetime(2026, 3, 4, 9, 15)

#: The metadata comment a notebook note carries (DESIGN.md §17).
MARK = " <!-- memext origin=person via=notebook date=2026-03-04 -->"


def _cited(agent, note) -> str:
    """The note's lines, read back through the engine's get()."""
    with MemoryIndex(agent, provider=None) as idx:
        return idx.get(note.path, note.start_line, note.end_line - note.start_line + 1).text


def test_new_daily_log(workspace):
    agent = make_agent(workspace)
    note = append_note(agent, "\nFirst thought.\nSecond line.\n\n", now=NOW)
    assert note.path == "memory/2026-03-04.md" and note.created
    text = (workspace / "memory" / "2026-03-04.md").read_text(encoding="utf-8")
    assert text == f"# 2026-03-04\n\n## 09:15{MARK}\nFirst thought.\nSecond line.\n"
    assert (note.start_line, note.end_line) == (3, 5)
    assert _cited(agent, note) == f"## 09:15{MARK}\nFirst thought.\nSecond line."


def test_appending_keeps_what_is_there(workspace):
    agent = make_agent(workspace)
    log = workspace / "memory" / "2026-01-05.md"
    before = log.read_text(encoding="utf-8")
    note = append_note(agent, "Later.", file="memory/2026-01-05.md", now=NOW)
    after = log.read_text(encoding="utf-8")
    assert after == before + f"\n## 2026-03-04 09:15{MARK}\nLater.\n" and not note.created
    assert _cited(agent, note) == f"## 2026-03-04 09:15{MARK}\nLater."


@pytest.mark.parametrize("existing", ["no newline at end", "one newline\n", "blank line\n\n", ""])
def test_line_numbers_for_any_ending(workspace, existing):
    agent = make_agent(workspace)
    target = workspace / "memory" / "edge.md"
    target.write_text(existing, encoding="utf-8")
    note = append_note(agent, "The note.", file="memory/edge.md", now=NOW)
    assert _cited(agent, note) == f"## 2026-03-04 09:15{MARK}\nThe note."
    assert target.read_text(encoding="utf-8").startswith(existing)


def test_long_term(workspace):
    agent = make_agent(workspace)
    note = append_note(agent, "- Anna moved to Porto.", long_term=True, now=NOW)
    assert note.path == "MEMORY.md"
    assert (workspace / "MEMORY.md").read_text(encoding="utf-8").endswith(f"\n\n## 2026-03-04 09:15{MARK}\n- Anna moved to Porto.\n")
    with pytest.raises(MemextError, match="either --file or --long-term"):
        append_note(agent, "x", file="memory/a.md", long_term=True)


def test_extra_paths_are_memory_too(workspace, tmp_path):
    notes = tmp_path / "shared-notes"
    notes.mkdir()
    agent = make_agent(workspace, extra_paths=[str(notes)])
    note = append_note(agent, "Shared.", file=str(notes / "team.md"), now=NOW)
    assert (notes / "team.md").read_text(encoding="utf-8") == f"## 2026-03-04 09:15{MARK}\nShared.\n"
    assert note.start_line == 1


@pytest.mark.parametrize(
    "file, message",
    [
        ("../escape.md", "may not leave"),
        ("memory/notes.txt", "only Markdown"),
        ("docs/readme.md", "not part of this agent's memory"),
        ("memory/.hidden.md", "hidden files"),
        ("/etc/motd.md", "not part of this agent's memory"),
    ],
)
def test_refuses_files_outside_memory(workspace, file, message):
    agent = make_agent(workspace)
    before = sorted(p for p in workspace.parent.rglob("*"))
    with pytest.raises(AccessDenied, match=message):
        append_note(agent, "x", file=file, now=NOW)
    assert sorted(p for p in workspace.parent.rglob("*")) == before


def test_refuses_symlinks_out_of_memory(workspace, tmp_path):
    outside = tmp_path / "outside.md"
    outside.write_text("keep\n", encoding="utf-8")
    os.symlink(outside, workspace / "memory" / "link.md")
    with pytest.raises(AccessDenied, match="symlink"):
        append_note(make_agent(workspace), "x", file="memory/link.md", now=NOW)
    assert outside.read_text(encoding="utf-8") == "keep\n"


def test_empty_note_is_refused(workspace):
    with pytest.raises(MemextError, match="the note is empty"):
        append_note(make_agent(workspace), " \n\t\n", now=NOW)
    assert not (workspace / "memory" / "2026-03-04.md").exists()
