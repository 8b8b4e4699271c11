"""The agent tool layer: schemas valid under OpenAI strict function calling
and as Anthropic/MCP tool definitions, the OpenAI definitions, and
call_tool's results and every error path (all ToolErrors an agent can act on)."""

from __future__ import annotations

import json
import os
import re
from datetime import datetime

import jsonschema
import mcp_types
import pytest
from conftest import backend_store, make_agent

from memext.engine import TOOLS, MemoryIndex, MemoryTools, ToolError, openai_tools
from memext.engine.memory.entries import strip_meta
from memext.engine.store.drivers import writer_lock
from memext.engine.store.sqlite import db

NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
JSON_TYPES = {"string", "number", "integer", "boolean", "object", "array", "null"}
#: Keywords OpenAI's strict mode (structured outputs) accepts in a schema.
OPENAI_STRICT_KEYWORDS = {
    "type",
    "description",
    "properties",
    "required",
    "additionalProperties",
    "enum",
    "const",
    "anyOf",
    "items",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "pattern",
    "format",
    "minItems",
    "maxItems",
    "$defs",
    "$ref",
    "title",
}


def _check_openai_strict(schema: dict, where: str) -> None:
    assert set(schema) <= OPENAI_STRICT_KEYWORDS, f"{where}: {set(schema) - OPENAI_STRICT_KEYWORDS}"
    types = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
    assert set(types) <= JSON_TYPES, where
    if "object" in types:
        assert schema["additionalProperties"] is False, where
        assert sorted(schema["required"]) == sorted(schema["properties"]), f"{where}: every property must be required"
        for key, prop in schema["properties"].items():
            assert prop.get("description"), f"{where}.{key} has no description"
            _check_openai_strict(prop, f"{where}.{key}")
    if "array" in types:
        _check_openai_strict(schema["items"], f"{where}[]")


@pytest.mark.parametrize("spec", TOOLS, ids=lambda s: s.name)
def test_schemas_follow_openai_strict_rules(spec):
    assert NAME.match(spec.name) and spec.description
    jsonschema.Draft202012Validator.check_schema(spec.parameters)
    assert spec.parameters["type"] == "object"
    _check_openai_strict(spec.parameters, spec.name)


@pytest.mark.parametrize("spec", TOOLS, ids=lambda s: s.name)
def test_schemas_follow_anthropic_and_mcp_rules(spec):
    schema = spec.input_schema
    jsonschema.Draft202012Validator.check_schema(schema)
    assert NAME.match(spec.name) and schema["type"] == "object"
    assert set(schema["required"]) <= set(schema["properties"])
    # Only what a call cannot do without is required; the rest may be left out.
    assert (
        schema["required"]
        == {
            "memory_search": ["query"],
            "memory_get": ["path"],
            "memory_append": ["text"],
            "memory_forget": ["citation"],
            "memory_capture": ["messages"],
        }[spec.name]
    )
    assert schema["properties"] == spec.parameters["properties"]
    # The SDK's own models accept it as an MCP tool definition (the Anthropic
    # API takes the same name/description/input_schema triple).
    tool = mcp_types.Tool(name=spec.name, description=spec.description, input_schema=schema)
    assert tool.input_schema["properties"].keys() == spec.parameters["properties"].keys()
    assert spec.parameters["required"] == list(spec.parameters["properties"])  # input_schema did not change it


def test_annotations():
    by_name = {t.name: t for t in TOOLS}
    assert by_name["memory_search"].read_only and by_name["memory_search"].idempotent
    assert by_name["memory_get"].read_only and by_name["memory_get"].idempotent
    append = by_name["memory_append"]
    assert not append.read_only and not append.destructive and not append.idempotent


def test_openai_definitions():
    chat = openai_tools("chat")
    assert [t["function"]["name"] for t in chat] == ["memory_search", "memory_get", "memory_append", "memory_forget", "memory_capture"]
    assert all(t["type"] == "function" and t["function"]["strict"] is True for t in chat)
    assert chat[0]["function"]["parameters"] == TOOLS[0].parameters
    responses = openai_tools("responses")
    assert [t["name"] for t in responses] == ["memory_search", "memory_get", "memory_append", "memory_forget", "memory_capture"]
    assert all(t["type"] == "function" and t["strict"] is True and "function" not in t for t in responses)
    json.dumps(chat), json.dumps(responses)  # plain JSON
    chat[0]["function"]["parameters"]["properties"].clear()  # a copy: TOOLS is untouched
    assert TOOLS[0].parameters["properties"]
    with pytest.raises(ValueError, match="'chat' or 'responses'"):
        openai_tools("completions")


@pytest.fixture
def tools(workspace, tmp_path):
    agent = make_agent(workspace, db_path=tmp_path / "index" / "test.sqlite")
    with MemoryTools(lambda _id: MemoryIndex(agent, provider=None), ["test"]) as t:
        yield t


def test_search_get_append_results(tools, workspace):
    r = tools.call_tool("memory_search", {"query": "green tea"})
    # What a model reads: no key without a value (no fallback here).
    assert set(r) == {"results", "provider", "model", "stale", "notice", "confidence", "confident"}
    top = r["results"][0]
    # A hit is its citation, score, confidence and snippet: nothing the
    # citation says twice, and no provenance or mark that says nothing
    # (written by hand: no metadata; no date in the file's name).
    assert set(top) == {"citation", "score", "confidence", "confident", "snippet"}
    path, lines = top["citation"].rsplit(":", 1)
    start, end = (int(n) for n in lines.split("-"))
    assert path == "MEMORY.md" and "green tea" in top["snippet"]
    # The snippet shows why it matched: the best line, numbered as in the file, marked.
    best = next(line for line in top["snippet"].splitlines() if line.startswith(">"))
    assert start <= int(best.split()[1]) <= end and "green tea" in best
    assert r["provider"] == "none" and r["stale"] is False

    g = tools.call_tool("memory_get", json.dumps({"path": "MEMORY.md", "from": 5, "lines": 1}))  # JSON text, as OpenAI sends it
    assert g == {
        "path": "MEMORY.md",
        "from_line": 5,
        "to_line": 5,
        "text": "- Bob prefers green tea.",
        "truncated": False,
        "total_lines": 8,
    }
    assert "does not exist yet" in tools.call_tool("memory_get", {"path": "memory/later.md"})["notice"]

    a = tools.call_tool("memory_append", {"text": "Carol joined the billing team.", "heading": "Team news", "file": "MEMORY.md"})
    assert a == {"citation": "MEMORY.md:11", "created": False, "indexed": True}  # the fact's own line, not its heading's
    today = datetime.now().date().isoformat()
    assert (
        (workspace / "MEMORY.md")
        .read_text(encoding="utf-8")
        .endswith(f"\n\n## Team news <!-- memext origin=agent via=tool date={today} -->\nCarol joined the billing team.\n")
    )
    assert (workspace / "MEMORY.md").read_text(encoding="utf-8").splitlines()[10] == "Carol joined the billing team."
    hit = tools.call_tool("memory_search", {"query": "Carol billing", "max_results": 1})["results"]
    assert hit[0]["origin"] == "agent" and "memext" not in hit[0]["snippet"]  # the comment is not indexed
    assert hit[0]["citation"].startswith("MEMORY.md:") and "Carol joined" in hit[0]["snippet"]  # searchable at once
    budget = tools.call_tool("memory_search", {"query": "tea Carol billing", "max_lines": 20, "min_score": 0})["results"]
    spans = [[int(n) for n in h["citation"].rsplit(":", 1)[1].split("-")] for h in budget]
    assert budget and sum(b - a + 1 for a, b in spans) <= 20


def test_get_numbers_lines_as_search_snippets_do(tools, workspace):
    got = tools.call_tool("memory_get", {"path": "MEMORY.md", "from": 4, "lines": 7, "numbered": True})
    file_lines = (workspace / "MEMORY.md").read_text(encoding="utf-8").splitlines()
    assert (got["from_line"], got["to_line"]) == (4, 8)  # the file has 8 lines
    # Each line: its number in the file, two spaces, the line as it is
    # (an empty line: the number alone); the gutter of a search snippet.
    for n, line in zip(range(4, 9), got["text"].split("\n"), strict=True):
        assert line == f"  {n}  {file_lines[n - 1]}".rstrip()
    snippet = tools.call_tool("memory_search", {"query": "green tea"})["results"][0]["snippet"]
    tea = next(line for line in snippet.splitlines() if "green tea" in line)
    assert " " + tea[1:] in got["text"].splitlines()  # the same line, less the snippet's `>` mark
    plain = tools.call_tool("memory_get", {"path": "MEMORY.md", "from": 4, "lines": 7, "numbered": "false"})
    assert plain["text"] == "\n".join(file_lines[3:8])


def test_an_entry_is_cited_by_its_own_lines(tools, workspace):
    """A one-line fact is cited as its line (path:N), a longer one as its
    text's lines; never its heading's or the whole chunk's."""
    one = tools.call_tool("memory_append", {"text": "Dana's sister lives in Porto."})
    path, line = one["citation"].rsplit(":", 1)
    assert (workspace / path).read_text(encoding="utf-8").splitlines()[int(line) - 1] == "Dana's sister lives in Porto."
    two = tools.call_tool("memory_append", {"text": "\n- Bought oolong.\n- Bought sencha.\n\n"})
    path, lines = two["citation"].rsplit(":", 1)
    first, last = (int(n) for n in lines.split("-"))
    # In the same minute it joins the first entry's heading, its metadata on its own first line.
    written = (workspace / path).read_text(encoding="utf-8").splitlines()[first - 1 : last]
    assert [strip_meta(line) for line in written] == ["- Bought oolong.", "- Bought sencha."]
    got = tools.call_tool("memory_get", {"path": path, "from": first, "lines": last - first + 1})
    assert strip_meta(got["text"].split("\n")[0]) == "- Bought oolong." and got["text"].endswith("\n- Bought sencha.")


def test_search_after_and_before(tools):
    def cites(**dates):
        return [r["citation"] for r in tools.call_tool("memory_search", {"query": "Anna", **dates})["results"]]

    assert len(cites()) == 2  # MEMORY.md and memory/2026-01-06.md
    assert cites(after="2026-01-06", before="2026-01-07") == ["memory/2026-01-06.md:3-4"]
    # A time of day: files are whole days, so the day it falls on is kept.
    assert sorted(cites(after="2026-01-06T18:00", before=None)) == ["MEMORY.md:4-8", "memory/2026-01-06.md:3-4"]
    assert cites(after="1d") == ["MEMORY.md:4-8"]  # dated by its mtime: just now
    assert cites(before="2026-01-06") == []
    r = tools.call_tool("memory_search", {"query": "Anna", "after": "2030-01-01"})
    assert r["results"] == [] and "no memory is dated from 2030-01-01" in r["notice"] and r["stale"] is False


def test_stale_when_the_index_cannot_be_synced(workspace, tmp_path):
    db = tmp_path / "index" / "test.sqlite"
    agent = make_agent(workspace, db_path=db)
    with MemoryTools(lambda _id: MemoryIndex(agent, provider=None), ["test"], lock_timeout=0.2) as t:
        t.call_tool("memory_search", {"query": "tea"})
        (workspace / "memory" / "2026-01-07.md").write_text("- Bought oolong tea.\n", encoding="utf-8")
        with writer_lock(agent, db, timeout=5):  # another process is writing the index
            r = t.call_tool("memory_search", {"query": "oolong"})
        assert r["stale"] is True and "another process is syncing" in r["notice"] and r["results"] == []
        r = t.call_tool("memory_search", {"query": "oolong"})
        assert r["stale"] is False and r["results"][0]["citation"].startswith("memory/2026-01-07.md:")


@pytest.mark.parametrize(
    "name, arguments, message",
    [
        ("memory_delete", {}, "no tool 'memory_delete'; the tools are memory_search, memory_get, memory_append"),
        ("memory_search", {}, "'query' is a required property"),
        ("memory_search", None, "'query' is a required property"),
        ("memory_search", "{not json", "not valid JSON"),
        ("memory_search", "[1, 2]", "must be a JSON object, not list"),
        ("memory_search", ["query"], "must be a JSON object, not list"),
        ("memory_search", {"query": 3}, "query must be string, got 3"),
        ("memory_search", {"query": "tea", "limit": 3}, "'limit' was unexpected); the arguments are query, max_results"),
        ("memory_search", {"query": "tea", "max_results": "three"}, 'max_results must be a whole number (such as 3), got "three"'),
        ("memory_search", {"query": "tea", "max_results": "2.5"}, 'max_results must be a whole number (such as 3), got "2.5"'),
        ("memory_search", {"query": "tea", "max_results": "0"}, "max_results: 0 is less than the minimum of 1"),
        ("memory_search", {"query": "tea", "min_score": "high"}, 'min_score must be a number (such as 3), got "high"'),
        ("memory_search", {"query": "tea", "min_score": "nan"}, 'min_score must be a number (such as 3), got "nan"'),
        ("memory_search", {"query": "tea", "max_results": 0}, "max_results: 0 is less than the minimum of 1"),
        ("memory_search", {"query": "tea", "max_results": 51}, "greater than the maximum of 50"),
        ("memory_search", {"query": "tea", "min_score": 1.5}, "min_score: 1.5 is greater than the maximum of 1"),
        ("memory_search", {"query": "tea", "max_lines": 0}, "max_lines: 0 is less than the minimum of 1"),
        ("memory_search", {"query": "   "}, "the query is empty"),
        ("memory_search", {"query": "tea", "after": "last week"}, "cannot read 'last week' as a date: use an ISO date (2026-03-01)"),
        ("memory_search", {"query": "tea", "before": "2026-02-30"}, "cannot read '2026-02-30' as a date"),
        (
            "memory_search",
            {"query": "tea", "after": "2026-03-01", "before": "2026-02-01"},
            "the start (after, --since) must come before the end",
        ),
        ("memory_search", {"query": "tea", "after": 7}, "after must be string or null, got 7"),
        ("memory_search", {"query": "tea", "agent": "home"}, "no agent 'home' here; this memory serves 'test'"),
        ("memory_get", {"path": "../secrets.md"}, "'..' may not leave"),
        ("memory_get", {"path": "/etc/passwd"}, "only Markdown"),
        ("memory_get", {"path": "memory/.hidden.md"}, "hidden files are not memory"),
        ("memory_get", {"path": "notes/other.md"}, "not part of this agent's memory"),
        ("memory_get", {"path": "MEMORY.md\x00.md"}, "NUL"),
        ("memory_get", {"path": "MEMORY.md", "from": 0}, "from: 0 is less than the minimum of 1"),
        ("memory_get", {"path": "MEMORY.md", "lines": True}, "lines must be integer or null, got true"),
        ("memory_get", {"path": "MEMORY.md", "from": "line 3"}, 'from must be a whole number (such as 3), got "line 3"'),
        ("memory_get", {"path": ""}, "no path given"),
        ("memory_append", {"text": ""}, "the note is empty"),
        ("memory_append", {"text": "x" * 100_001}, "the limit is 100,000"),
        ("memory_append", {"text": "x", "heading": " ## "}, "the heading is empty"),
        ("memory_append", {"text": "x", "file": "memory/notes.txt"}, "memory/notes.txt: only Markdown (.md) memory files can be written"),
        ("memory_append", {"text": "x", "file": "notes.txt"}, "notes.txt: only Markdown (.md) memory files can be written"),
        ("memory_get", {"path": "notes.txt"}, "notes.txt: only Markdown (.md) memory files can be read"),
        ("memory_append", {"text": "x", "file": "memory"}, "only Markdown"),
        ("memory_append", {"text": "x", "file": "x" * 300 + ".md"}, "is too long"),
        ("memory_append", {"text": "x", "file": "memory/" + "x" * 300 + ".md"}, "is too long"),
    ],
)
def test_errors_are_tool_errors_an_agent_can_act_on(tools, workspace, name, arguments, message):
    before = sorted((p, p.stat().st_size) for p in workspace.rglob("*"))
    with pytest.raises(ToolError) as err:
        tools.call_tool(name, arguments)
    assert message in str(err.value)
    assert "Traceback" not in str(err.value)
    assert sorted((p, p.stat().st_size) for p in workspace.rglob("*")) == before  # nothing written


def test_numbers_sent_as_text_are_read_as_numbers(tools):
    """Form-based clients (the MCP Inspector) and models send "3" for 3."""
    assert tools.call_tool("memory_search", {"query": "tea", "max_results": 1}) == tools.call_tool(
        "memory_search", {"query": "tea", "max_results": " 1 ", "min_score": "0", "max_lines": "", "after": None}
    )
    assert len(tools.call_tool("memory_search", {"query": "Anna tea", "max_results": "1.0", "min_score": "0.0"})["results"]) == 1
    got = tools.call_tool("memory_get", {"path": "MEMORY.md", "from": "5", "lines": "1"})
    assert got == tools.call_tool("memory_get", {"path": "MEMORY.md", "from": 5, "lines": 1})
    assert got["text"] == "- Bob prefers green tea."
    # Text stays text where text is asked for: a query "3" is a query.
    assert tools.call_tool("memory_search", {"query": "3"})["results"] == []


def test_symlinks_and_folders_are_refused(tools, workspace, tmp_path):
    outside = tmp_path / "outside.md"
    outside.write_text("keep\n", encoding="utf-8")
    os.symlink(outside, workspace / "memory" / "link.md")
    (workspace / "memory" / "dir.md").mkdir()
    with pytest.raises(ToolError, match="symlink; memory files are written only where they are"):
        tools.call_tool("memory_append", {"text": "x", "file": "memory/link.md"})
    with pytest.raises(ToolError, match="not a file"):
        tools.call_tool("memory_append", {"text": "x", "file": "memory/dir.md"})
    assert outside.read_text(encoding="utf-8") == "keep\n"


def test_search_disabled_is_a_tool_error(workspace, tmp_path):
    agent = make_agent(workspace, db_path=tmp_path / "i.sqlite", enabled=False)
    with MemoryTools(lambda _id: MemoryIndex(agent, provider=None), ["test"]) as t:
        with pytest.raises(ToolError, match="memory search is turned off"):
            t.call_tool("memory_search", {"query": "tea"})


def test_unexpected_failures_become_tool_errors(workspace):
    def broken(_id):  # a fault no real index produces on demand: opening it raises
        raise RuntimeError("disk on fire")

    with (
        MemoryTools(broken, ["test"]) as t,
        pytest.raises(ToolError, match="memory_search failed unexpectedly: RuntimeError: disk on fire"),
    ):
        t.call_tool("memory_search", {"query": "tea"})


def test_agents_are_listed_and_picked(workspace, example_workspace, tmp_path):
    agents = {
        "work": make_agent(workspace, "work", db_path=tmp_path / "work.sqlite"),
        "home": make_agent(example_workspace, "home", db_path=tmp_path / "home.sqlite"),
    }
    with MemoryTools(lambda a: MemoryIndex(agents[a], provider=None), ["work", "home"]) as t:
        search = next(s for s in t.specs if s.name == "memory_search")
        assert "'work', 'home'" in search.description and "'work', 'home'" in search.parameters["properties"]["agent"]["description"]
        assert t.openai_tools("chat")[0]["function"]["description"] == search.description
        assert t.call_tool("memory_search", {"query": "Biscuit", "agent": "home"})["results"]
        assert t.call_tool("memory_search", {"query": "Biscuit"})["results"] == []  # default: work
        with pytest.raises(ToolError, match="this memory serves 'work', 'home'"):
            t.call_tool("memory_get", {"path": "MEMORY.md", "agent": "play"})
    with pytest.raises(Exception, match="no agents to serve"):
        MemoryTools(lambda a: None, [])


def test_importing_the_engine_does_not_import_jsonschema():
    # `import jsonschema` costs about 2 s (grammar compilation in its format
    # checker); the CLI, notebook and tray must not pay it for the tools.
    import subprocess
    import sys

    code = "import sys, memext.engine; print('jsonschema' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60).stdout.strip() == "False"


def test_search_snippets_show_the_matching_line_of_a_long_result(workspace, tmp_path):
    """The snippet is the window around the best line, not the
    chunk's first lines (the key on line 16 of 17 used to be cut off)."""
    lines = [f"- Note {i}: routine entry about the weekly plan." for i in range(1, 16)]
    lines.append("- The PAYMENTS_API_KEY lives in the vault under payments/prod.")
    lines.append("- Last line.")
    (workspace / "MEMORY.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    agent = make_agent(workspace, db_path=tmp_path / "index" / "test.sqlite")
    with MemoryTools(lambda _id: MemoryIndex(agent, provider=None), ["test"]) as tools:
        top = tools.call_tool("memory_search", {"query": "PAYMENTS_API_KEY"})["results"][0]
    path, lines = top["citation"].rsplit(":", 1)
    assert path == "MEMORY.md"
    shown = top["snippet"].splitlines()
    assert any(line.startswith(">") and " 16 " in line and "PAYMENTS_API_KEY" in line for line in shown)
    if int(lines.split("-")[0]) < 16 - 3:
        assert shown[0].strip() == "⋮"  # lines before the window are marked as left out
    assert "Note 1:" not in top["snippet"]


def tools_config(tmp_path, workspace, store_path):
    from memext.engine import load_config

    cfg = tmp_path / "config.toml"
    cfg.write_text(
        f'[memory_search]\nprovider = "none"\n[memory_search.store]\npath = {json.dumps(str(store_path))}\n'
        f'[[agents]]\nid = "test"\nworkspace = {json.dumps(str(workspace))}\n'
    )
    return load_config(cfg)


def test_a_model_reads_no_index_path_in_notices(workspace, tmp_path):
    """A damaged index is moved aside and the search says so: the model
    reads that, not where the index lives on this machine (status keeps it)."""
    path = tmp_path / "private-folder" / "idx.sqlite"
    with MemoryTools.from_config(tools_config(tmp_path, workspace, path)) as t:
        assert t.call_tool("memory_search", {"query": "green tea"})["results"]
        conn, _ = db.connect(path)
        conn.execute("DROP TABLE chunks")  # damage (engine/store/sqlite/schema_check.py)
        conn.close()
        r = t.call_tool("memory_search", {"query": "green tea"})
        assert r["notice"] and "moved aside" in r["notice"], r
        assert str(tmp_path) not in json.dumps(r) and "private-folder" not in r["notice"], r["notice"]
        assert "the index" in r["notice"]
        assert str(path) in (t.index().status().last_error or "")  # status keeps the path


def test_a_model_reads_no_index_path_in_errors(workspace, tmp_path):
    """The index cannot open (another program's database at store.path):
    the tool error says so without the absolute path."""
    other = tmp_path / "private-folder" / "app.sqlite"
    other.parent.mkdir()
    conn = db.binding().module.connect(str(other))
    conn.execute("CREATE TABLE invoices (id INTEGER PRIMARY KEY)")
    conn.commit()
    conn.close()
    with MemoryTools.from_config(tools_config(tmp_path, workspace, other)) as t:
        with pytest.raises(ToolError) as err:
            t.call_tool("memory_search", {"query": "green tea"})
    message = str(err.value)
    assert "another program" in message and "the index file" in message, message
    assert str(tmp_path) not in message and "private-folder" not in message, message


def test_a_model_reads_no_pid_or_host_of_a_lock_holder(workspace, tmp_path):
    """The writer lock names its holder (pid, host) for the person at the
    terminal; what a model reads says "another process"."""
    import socket
    import subprocess
    import sys

    from memext.engine import LockTimeout
    from memext.engine.agents.model_text import for_model

    db_path = tmp_path / "private-folder" / "idx.sqlite"
    agent = make_agent(workspace, db_path=db_path)
    child = (
        "import sys; from pathlib import Path; from memext.engine.config import parse_config\n"
        "from memext.engine.store.drivers import writer_lock\n"
        f"agent = parse_config({{'agents': [{{'id': 'test', 'workspace': {str(workspace)!r}, "
        f"'memory_search': {{'store': {backend_store()!r}}}}}]}}).agents[0]\n"
        f"held = writer_lock(agent, Path({str(db_path)!r}), timeout=5).acquire()\n"
        "print('held', flush=True); sys.stdin.read()"
    )
    holder = subprocess.Popen([sys.executable, "-c", child], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(LockTimeout) as err:
            writer_lock(agent, db_path, timeout=0).acquire()
    finally:
        holder.stdin.close()
        holder.wait(10)
        holder.stdout.close()
    raw = str(err.value)
    assert f"by pid {holder.pid} on {socket.gethostname()}" in raw  # the terminal's message names the holder
    shown = for_model(raw, [db_path])
    assert f"pid {holder.pid}" not in shown and f" on {socket.gethostname()}" not in shown and str(tmp_path) not in shown, shown
    assert "is being written by another process; gave up" in shown, shown
