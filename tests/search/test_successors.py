"""The entry that superseded another is found by the old one's questions in
whatever chunk or file it sits (engine/search/successors.py, DESIGN.md
§17), through the real `memext` command."""

from __future__ import annotations

import json

from conftest import run_cli


def test_the_successor_in_another_file_answers_its_predecessors_question(keyword_config, workspace):
    (workspace / "MEMORY.md").write_text(
        "# Memory\n\n## Home\n- The office wifi password is on the fridge.\n- The boiler is serviced in May.\n", encoding="utf-8"
    )
    # Not one word of the question is in the new entry, and it sits in another file.
    run_cli("note", "--file", "memory/2026-03-02.md", "Router credentials now live in the team vault.", "--supersedes", "MEMORY.md:4")
    (hit, *rest) = json.loads(run_cli("search", "wifi password", "--json").stdout)["results"]
    assert hit["citation"] == "memory/2026-03-02.md:2" and hit["confident"]
    # One result asked for: the successor is that one.
    (only,) = json.loads(run_cli("search", "wifi password", "-n", "1", "--json").stdout)["results"]
    assert only["citation"] == "memory/2026-03-02.md:2"
    assert all("fridge" not in r["snippet"] for r in rest)
    recalled = run_cli("recall", "where is the wifi password?").stdout
    assert "Router credentials now live in the team vault." in recalled and "fridge" not in recalled
    # A question the old entry does not answer does not bring the new one.
    boiler = json.loads(run_cli("search", "boiler serviced", "--json").stdout)["results"]
    assert boiler and all("vault" not in r["snippet"] for r in boiler)


def test_a_chain_of_supersedes_ends_at_the_entry_that_holds_now(keyword_config, workspace):
    (workspace / "MEMORY.md").write_text(
        "# Memory\n\n## Home\n- The office wifi password is on the fridge.\n- The boiler is serviced in May.\n", encoding="utf-8"
    )
    run_cli("note", "--file", "memory/2026-03-02.md", "Router credentials now live in the team vault.", "--supersedes", "MEMORY.md:4")
    run_cli("note", "--file", "memory/2026-03-03.md", "The vault moved to 1Password; look there.", "--supersedes", "memory/2026-03-02.md:2")
    (hit, *rest) = json.loads(run_cli("search", "where is the wifi password?", "--json").stdout)["results"]
    assert hit["citation"] == "memory/2026-03-03.md:2" and hit["confident"]
    assert all("fridge" not in r["snippet"] and "team vault" not in r["snippet"] for r in rest)
    recalled = run_cli("recall", "where is the wifi password?").stdout
    assert "1Password" in recalled and "fridge" not in recalled and "team vault" not in recalled
    # The links in the other order of the files: a daily note's entry
    # replaced by one of MEMORY.md, replaced in turn by another daily note's.
    (workspace / "memory" / "2026-01-09.md").write_text("# 2026-01-09\n\n- The spare house key is under the doormat.\n")
    run_cli("note", "--long-term", "The spare key went to the neighbour, Rosa.", "--supersedes", "memory/2026-01-09.md:3")
    at = json.loads(run_cli("search", "Rosa spare key", "--json").stdout)["results"][0]["best_line"]
    run_cli("note", "--file", "memory/2026-01-10.md", "It lives in the key safe by the door now.", "--supersedes", f"MEMORY.md:{at}")
    (hit, *rest) = json.loads(run_cli("search", "where is the spare house key?", "--json").stdout)["results"]
    assert hit["citation"] == "memory/2026-01-10.md:2" and hit["confident"]
    assert all("doormat" not in r["snippet"] and "Rosa" not in r["snippet"] for r in rest)
