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
