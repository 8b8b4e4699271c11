"""One model of an agent's memory roots, shared by discovery and the
watcher: what counts as a change, what is watched, editor scratch files."""

from __future__ import annotations

import pytest
from conftest import make_agent
from tray_helpers import make_workspace

from memext.engine.memory.roots import MemoryRoots, is_temporary


@pytest.mark.parametrize(
    "name,temp",
    [
        ("notes.md", False),
        ("2026-01-01.md", False),
        ("4913", True),
        ("notes.md~", True),
        (".notes.md.swp", True),
        (".#notes.md", True),
        ("#notes.md#", True),
        ("notes.md.tmp.1234", True),
        ("notes.tmp", True),
    ],
)
def test_temporary_names(name, temp):
    assert is_temporary(name) is temp


def test_relevance_rules(tmp_path):
    ws = make_workspace(tmp_path, "ws")
    extra = tmp_path / "extra"
    extra.mkdir()
    single = tmp_path / "other" / "single.md"
    agent = make_agent(
        ws,
        "r",
        extra_paths=[str(extra), str(single)],
        sources=["memory", "sessions"],
        experimental={"session_memory": True},
    )
    roots = MemoryRoots.for_agent(agent)
    ws = roots.workspace
    yes = [
        (ws / "MEMORY.md", False),
        (ws / "memory.md", False),
        (ws / "memory" / "2026-01-01.md", False),
        (ws / "memory" / "deep" / "x.MD", False),
        (ws / "memory" / "deep", True),
        (ws / "memory", True),  # the folder appears
        (extra.resolve() / "a" / "b.md", False),
        (single.resolve(), False),
        (ws / "sessions" / "s1.jsonl", False),
    ]
    no = [
        (ws / "README.md", False),  # not memory
        (ws / "memory" / "notes.txt", False),
        (ws / "memory" / ".hidden.md", False),
        (ws / "memory" / ".git" / "x.md", False),
        (ws / "memory" / "x.md.swp", False),
        (ws / "memory" / "x.md~", False),
        (ws / "memory" / "4913", False),
        (ws / "sessions" / "s1.json", False),
        (ws / "sessions" / "sub" / "s1.jsonl", False),
        (ws / "src", True),
        (single.resolve().with_name("another.md"), False),
    ]
    for p, is_dir in yes:
        assert roots.is_relevant(str(p), is_dir), p
    for p, is_dir in no:
        assert not roots.is_relevant(str(p), is_dir), p


def test_schedules_cover_missing_folders(tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "MEMORY.md").write_text("# m\n")
    roots = MemoryRoots.for_agent(make_agent(ws, "s"))
    real = roots.workspace
    assert roots.schedules() == [(real, False)]  # memory/ missing: its parent is watched
    (ws / "memory" / "sub").mkdir(parents=True)
    assert roots.schedules() == [(real, False), (real / "memory", True)]


def test_discovery_and_watching_share_the_roots(tmp_path):
    """A memory file the watcher reacts to is one discovery indexes, and
    an extra folder that does not exist yet is a root for both."""
    from memext.engine.memory.discovery import discover_memory_files

    ws = make_workspace(tmp_path, "ws", {"memory/a.md": "- a\n"})
    later = tmp_path / "later"
    agent = make_agent(ws, "r", extra_paths=[str(later)])
    roots = MemoryRoots.for_agent(agent)
    assert roots.extra_dirs == (later.resolve(),)
    assert roots.is_relevant(str(later.resolve() / "x.md"), False)
    later.mkdir()
    (later / "x.md").write_text("- x\n")
    files, _ = discover_memory_files(ws, agent.extra_path_list(), 1_000_000)
    assert {f.path for f in files} == {"MEMORY.md", "memory/a.md", "../later/x.md"}
    assert all(roots.allows(f.abs_path) and roots.is_relevant(str(f.abs_path), False) for f in files)


def test_a_folder_answer_is_the_answer_for_each_file_in_it(tmp_path):
    """Discovery asks allows_all_in() once per folder instead of allows()
    per file: both must agree for every non-hidden .md name, or the folder
    must say it depends on the name (None)."""
    ws = make_workspace(tmp_path, "ws", {"memory/a.md": "- a\n"})
    extra = tmp_path / "extra"
    (extra / ".hidden" / "inner").mkdir(parents=True)
    (ws / "memory" / "sub" / ".dot").mkdir(parents=True)
    (tmp_path / "single").mkdir()
    extras = [extra, extra / ".hidden" / "inner", ws / "memory" / "sub", tmp_path / "single" / "one.md", ws]
    roots = MemoryRoots.for_agent(make_agent(ws, "f", extra_paths=[str(p) for p in extras]))
    real = roots.workspace
    folders = [
        real,
        real / "memory",
        real / "memory" / "sub",
        real / "memory" / "sub" / ".dot",
        real / "docs",
        extra.resolve(),
        extra.resolve() / ".hidden",
        extra.resolve() / ".hidden" / "inner",
        (tmp_path / "single").resolve(),
        tmp_path.resolve(),
        tmp_path.resolve() / "elsewhere",
    ]
    answers = set()
    for folder in folders:
        at_once = roots.allows_all_in(str(folder))
        each = {name: roots.allows(folder / name) for name in ("x.md", "one.md", "MEMORY.md", "memory.md", "Y.MD")}
        answers.add(at_once)
        if at_once is not None:
            assert set(each.values()) == {at_once}, (folder, each)
    assert answers == {True, False, None}  # every kind of answer was checked
