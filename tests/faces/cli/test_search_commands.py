"""`memext search` and `memext get` (engine/faces/cli/search_commands.py):
a citation printed by a search reads back, through `get`, as the lines it
names (engine/citations.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from memext.engine.faces.cli.commands import cli


@pytest.fixture
def config(tmp_path, workspace, monkeypatch) -> Path:
    cfg = tmp_path / "config.toml"
    cfg.write_text(f'[memory_search]\nprovider = "none"\n[[agents]]\nid = "w"\nworkspace = "{workspace}"\n')
    monkeypatch.setenv("MEMEXT_CONFIG", str(cfg))
    return cfg


def run(*args: str):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def test_get_path_line_is_that_one_line_as_a_citation_means_it(config, workspace):
    # MEMORY.md: 8 lines, line 4 "- Anna ...", line 5 "- Bob ...".
    assert run("get", "MEMORY.md:4").stdout == "- Anna is the tech lead of the billing team.\n"
    assert run("get", "MEMORY.md:4-5").stdout.splitlines() == ["- Anna is the tech lead of the billing team.", "- Bob prefers green tea."]
    to_end = run("get", "MEMORY.md:4-", "-N").stdout.splitlines()
    assert [line.split()[0] for line in to_end] == ["4", "5", "6", "7", "8"]
    data = json.loads(run("get", "MEMORY.md:4", "--json").stdout)
    assert (data["from_line"], data["to_line"]) == (4, 4)
    # What a search prints for a one-line result reads back as that line.
    (workspace / "memory" / "2026-01-09.md").write_text("# 2026-01-09\n\n- Lunch with the pelican society.\n")
    [hit] = json.loads(run("search", "pelican", "-n", "1", "--json").stdout)["results"]
    assert hit["citation"] == "memory/2026-01-09.md:3" and run("get", hit["citation"]).stdout == "- Lunch with the pelican society.\n"
    assert hit["snippet"].startswith("- Lunch") and hit["snippet_line"] == hit["start_line"] == 3


def test_get_shows_a_person_what_no_longer_holds_and_raw_shows_the_file(config, workspace):
    # A heading's mark covers its section, so a line under it is marked
    # though the comment is above the lines read.
    with (workspace / "MEMORY.md").open("a", encoding="utf-8") as f:
        f.write("\n## Old office <!-- memext forgotten=2026-02-01 -->\n- The printer is on floor 2.\n")
    assert run("note", "--long-term", "Bob switched to black coffee.", "--supersedes", "MEMORY.md:5").exit_code == 0
    assert run("forget", "MEMORY.md:8", "--reason", "we ship on Thursdays").exit_code == 0

    shown = run("get", "MEMORY.md", "-N").stdout.splitlines()
    assert shown[4] == " 5  - Bob prefers green tea.  [superseded by MEMORY.md:14]"
    assert shown[7] == " 8  - We ship on Tuesdays.  [forgotten: we ship on Thursdays]"
    assert shown[9:11] == ["10  ## Old office  [forgotten]", "11  - The printer is on floor 2.  [forgotten]"]
    assert shown[13] == "14  Bob switched to black coffee."
    assert not any("<!--" in line for line in shown)
    assert run("get", "MEMORY.md:11").stdout == "- The printer is on floor 2.  [forgotten]\n"

    raw = run("get", "MEMORY.md:5", "--raw").stdout
    assert raw.startswith("- Bob prefers green tea. <!-- memext superseded=") and "by=MEMORY.md:14 -->" in raw
    data = json.loads(run("get", "MEMORY.md:4-11", "--json").stdout)
    assert "<!-- memext superseded=" in data["text"]  # the text is the file's
    assert data["retired"] == [
        {"line": 5, "status": "superseded", "by": "MEMORY.md:14", "reason": None},
        {"line": 8, "status": "forgotten", "by": None, "reason": "we ship on Thursdays"},
        {"line": 10, "status": "forgotten", "by": None, "reason": None},
        {"line": 11, "status": "forgotten", "by": None, "reason": None},
    ]
    # Nothing retired: the text as it is, nothing added.
    assert run("get", "MEMORY.md:4").stdout == "- Anna is the tech lead of the billing team.\n"
