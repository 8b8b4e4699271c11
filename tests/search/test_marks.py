"""Marks and dates follow entries in what a search shows (engine/search/marks.py,
DESIGN.md §17), through the real `memext` command: a superseded or
forgotten entry inside a shown excerpt says so instead of showing its text,
and a result is dated by its own entry, not by the newest heading of its
chunk."""

from __future__ import annotations

import json

from conftest import run_cli


def test_retired_entries_inside_an_excerpt_say_so_and_hide_their_text(keyword_config, workspace):
    (workspace / "MEMORY.md").write_text(
        "# Memory\n\n## People\n- Ines works on the Harbor data team.\n- Ines prefers green tea.\n"
        "- Ines lives in Porto.\n- The office wifi password is on the fridge.\n",
        encoding="utf-8",
    )
    run_cli("note", "--long-term", "Ines switched: she now prefers black coffee, no tea.", "--supersedes", "MEMORY.md:5")
    run_cli("forget", "MEMORY.md:6")
    shown = run_cli("search", "Ines wifi password").stdout
    assert "MEMORY.md:4-" in shown
    assert "5  ⋮ superseded by MEMORY.md:" in shown and "6  ⋮ forgotten" in shown
    assert "green tea" not in shown and "Porto" not in shown
    assert ">  7  - The office wifi password is on the fridge." in shown

    (hit,) = json.loads(run_cli("search", "Ines wifi password", "--json").stdout)["results"]
    assert "green tea" not in hit["snippet"] and "Porto" not in hit["snippet"]
    assert "⋮ forgotten" in hit["snippet"].split("\n")[6 - hit["snippet_line"]]
    lines = {ln["number"]: ln for ln in hit["excerpt"]["lines"]}
    assert lines[6] == {"number": 6, "text": "", "hit": False, "retired": "forgotten"}
    assert "retired" not in lines[7]  # a live line says nothing

    # Asked to show retired entries, their text comes back, marked.
    every = run_cli("search", "Ines Porto", "--all").stdout
    assert "- Ines lives in Porto.  [forgotten]" in every
    assert "- Ines prefers green tea.  [superseded by MEMORY.md:" in every


def test_a_result_is_dated_by_its_own_entry(keyword_config, workspace):
    # A capture heading appended to MEMORY.md dates only what is under it.
    run_cli("note", "--long-term", "Pepper weighs 12 kg now.")
    plain = json.loads(run_cli("search", "Anna tech lead billing", "--json").stdout)["results"][0]
    assert plain["citation"].startswith("MEMORY.md:") and plain["date"] is None
    note = json.loads(run_cli("search", "Pepper weighs", "--json").stdout)["results"][0]
    assert note["date"] is not None

    # Two sections of one daily note: the one dated by its metadata keeps it,
    # the other is dated by its file, not by the newest heading.
    (workspace / "memory" / "2026-02-10.md").write_text(
        "# 2026-02-10\n\n## 09:00 <!-- memext date=2026-02-08 -->\n- The kiln reached 1240 degrees.\n\n"
        "## 2026-02-12 review\n- Glaze test batch looked matte.\n",
        encoding="utf-8",
    )
    kiln = json.loads(run_cli("search", "kiln degrees", "--json").stdout)["results"][0]
    assert kiln["date"] == "2026-02-08"
    glaze = json.loads(run_cli("search", "glaze matte", "--json").stdout)["results"][0]
    assert glaze["date"] == "2026-02-12"
    recalled = run_cli("recall", "what temperature did the kiln reach, in degrees?").stdout
    assert 'date="2026-02-08">- The kiln reached 1240 degrees.' in recalled
