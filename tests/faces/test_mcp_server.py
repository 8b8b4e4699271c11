"""`memext mcp`: the real server process, driven by the mcp SDK's real
client over stdio and over Streamable HTTP."""

from __future__ import annotations

import json
import os
import queue
import random
import subprocess
import sys
import threading
import time
from contextlib import asynccontextmanager
from datetime import datetime
from pathlib import Path
from typing import Any, AsyncIterator

import anyio
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp_process import INITIALIZE, cited_path, http_client, http_server, payload, server_env
from memext_helpers import write_config

from memext.engine import TOOLS, MemoryIndex, load_config
from memext.engine.faces.mcp_server import INSTRUCTIONS
from memext.engine.faces.mcp_stdio import MAX_DEPTH, MAX_LINE_BYTES

TODAY = f"memory/{datetime.now():%Y-%m-%d}.md"


@asynccontextmanager
async def connect(transport: str, config: Path, *args: str) -> AsyncIterator[Client]:
    """A client session with a `memext mcp` process started for it."""
    if transport == "stdio":
        params = StdioServerParameters(command=sys.executable, args=["-m", "memext", "mcp", *args], env=server_env(config))
        async with Client(params) as client:
            yield client
        return
    with http_server(config, *args) as server:
        async with http_client(server.token) as http:
            async with Client(streamable_http_client(server.url, http_client=http)) as client:
                yield client


def _text(result) -> str:
    return result.content[0].text


async def _scenario(client: Client, workspace: Path) -> None:
    assert client.instructions == INSTRUCTIONS
    listed = {t.name: t for t in (await client.list_tools()).tools}
    assert list(listed) == [t.name for t in TOOLS]
    for spec in TOOLS:
        tool = listed[spec.name]
        assert tool.input_schema["properties"].keys() == spec.parameters["properties"].keys()
        assert tool.input_schema["required"] == spec.input_schema["required"]
        assert "'example'" in tool.description
        a = tool.annotations
        assert (a.read_only_hint, a.destructive_hint, a.idempotent_hint) == (spec.read_only, spec.destructive, spec.idempotent)

    found = await client.call_tool("memory_search", {"query": "How much food does Biscuit get per day?"})
    assert not found.is_error, _text(found)
    hits = payload(found)["results"]
    assert hits and cited_path(hits[0]).startswith("memory/") and "55 g" in hits[0]["snippet"]
    assert payload(found)["stale"] is False
    # The answer is confident; a keyword-only hit that lacks two of the
    # question's words ("much", "get") is judged on its words alone, and its
    # own calibrated confidence may stay under a half.
    assert payload(found)["confident"] is True and 0 < hits[0]["confidence"] <= 1

    # Nothing in memory: an empty answer with a notice, which the tool's
    # description explains; include_weak shows what matched weakly.
    assert "empty `results`" in listed["memory_search"].description
    absent = await client.call_tool("memory_search", {"query": "deadbeef12"})
    assert not absent.is_error, _text(absent)
    assert payload(absent)["results"] == []
    assert "no memory matches 'deadbeef12'" in payload(absent)["notice"]
    assert payload(absent)["confident"] is False

    # Time filters: only memory dated in the range, filtered before ranking.
    dated = await client.call_tool("memory_search", {"query": "Biscuit", "after": "2026-10-06", "before": "2026-11-01"})
    assert not dated.is_error, _text(dated)
    assert {cited_path(h) for h in payload(dated)["results"]} == {"memory/2026-10-09.md"}
    late = await client.call_tool("memory_search", {"query": "Biscuit", "after": "2026-11-01", "before": "2026-11-03"})
    assert [cited_path(h) for h in payload(late)["results"]] == ["memory/2026-11-02.md"]

    # Each hit is what a model cites and reads, nothing the citation says again.
    assert set(hits[0]) - {"date", "origin"} == {"citation", "score", "confidence", "confident", "snippet"}
    assert set(payload(found)) - {"notice"} == {"results", "confidence", "confident", "provider", "model", "stale"}  # no fallback

    # Numbers typed into a form (the MCP Inspector) or sent by a model as text.
    three = await client.call_tool("memory_search", {"query": "Biscuit", "max_results": "3", "min_score": "0"})
    assert not three.is_error, _text(three)
    assert len(payload(three)["results"]) == 3

    first = hits[0]
    start = int(first["citation"].rsplit(":", 1)[1].split("-")[0])
    got = await client.call_tool("memory_get", {"path": cited_path(first), "from": str(start), "lines": "3"})
    assert not got.is_error and payload(got)["from_line"] == start and payload(got)["to_line"] == start + 2
    assert payload(got)["text"].splitlines()[0] == (workspace / cited_path(first)).read_text(encoding="utf-8").splitlines()[start - 1]
    numbered = await client.call_tool("memory_get", {"path": cited_path(first), "from": start, "lines": 3, "numbered": True})
    assert [line.split()[0] for line in payload(numbered)["text"].splitlines()] == [str(start + i) for i in range(3)]

    wrote = await client.call_tool("memory_append", {"text": "Biscuit's new vet is Dr. Quillfeather.", "heading": "Vet"})
    assert not wrote.is_error, _text(wrote)
    assert payload(wrote)["indexed"]
    # A one-line fact is cited as its own line: the entry's heading is the line before.
    line = len((workspace / TODAY).read_text(encoding="utf-8").splitlines())
    assert payload(wrote)["citation"] == f"{TODAY}:{line}"
    again = await client.call_tool("memory_search", {"query": "Quillfeather"})
    assert cited_path(payload(again)["results"][0]) == TODAY

    for name, args, message in [
        ("memory_get", {"path": "../outside.md"}, "'..' may not leave"),
        ("memory_get", {"path": "/etc/passwd"}, "only Markdown"),
        ("memory_append", {"text": "x", "file": "/tmp/evil.md"}, "not part of this agent's memory"),
        ("memory_search", {"query": "x", "max_results": "many"}, 'max_results must be a whole number (such as 3), got "many"'),
        ("memory_get", {"path": "MEMORY.md", "lines": "a few"}, 'lines must be a whole number (such as 3), got "a few"'),
        ("memory_append", {"text": "x", "file": "notes.txt"}, "only Markdown (.md) memory files can be written"),
        ("memory_search", {"query": "x", "colour": "red"}, "'colour' was unexpected"),
        ("memory_search", {}, "'query' is a required property"),
        ("memory_search", {"query": "x", "after": "someday"}, "cannot read 'someday' as a date: use an ISO date"),
        ("memory_search", {"query": "x", "after": "2026-11-01", "before": "2026-10-01"}, "must come before the end"),
        ("memory_search", {"query": "x", "agent": "nobody"}, "no agent 'nobody' here"),
        ("memory_delete", {}, "no tool 'memory_delete'"),
    ]:
        bad = await client.call_tool(name, args)
        assert bad.is_error and message in _text(bad), (name, args, _text(bad))
    assert not Path("/tmp/evil.md").exists()
    # The server is still there and still answers.
    assert payload(await client.call_tool("memory_search", {"query": "Biscuit"}))["results"]


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_server_over(transport, example_workspace, tmp_path):
    config = write_config(tmp_path / "cfg", {"example": example_workspace})

    async def main():
        async with connect(transport, config) as client:
            await _scenario(client, example_workspace)

    anyio.run(main)


def test_all_agents_or_one(example_workspace, workspace, tmp_path):
    config = write_config(tmp_path / "cfg", {"home": example_workspace, "work": workspace})

    async def main():
        async with connect("stdio", config) as client:
            tool = (await client.list_tools()).tools[0]
            assert "'home', 'work'" in tool.description
            work = await client.call_tool("memory_search", {"query": "Bob", "agent": "work"})
            assert cited_path(payload(work)["results"][0]) == "MEMORY.md"
            home = await client.call_tool("memory_search", {"query": "Bob"})  # the first agent
            assert payload(home)["results"] == []
            wrote = await client.call_tool("memory_append", {"text": "Dana likes rooibos.", "agent": "work", "file": "MEMORY.md"})
            assert not wrote.is_error
        assert (workspace / "MEMORY.md").read_text(encoding="utf-8").endswith("Dana likes rooibos.\n")
        async with connect("stdio", config, "-a", "work") as client:
            refused = await client.call_tool("memory_search", {"query": "Biscuit", "agent": "home"})
            assert refused.is_error and "this memory serves 'work'" in _text(refused)
            assert payload(await client.call_tool("memory_search", {"query": "rooibos"}))["results"]

    anyio.run(main)


def test_agents_added_or_removed_while_it_runs(example_workspace, workspace, tmp_path):
    """Serving every agent follows the config file: an agent added while the
    server runs is served (and kept fresh) from the next call, one removed
    is refused, and a broken config keeps the agents served as they were."""
    config = write_config(tmp_path / "cfg", {"home": example_workspace})

    async def main():
        async with connect("stdio", config) as client:
            assert "only 'home' is served" in (await client.list_tools()).tools[0].input_schema["properties"]["agent"]["description"]
            refused = await client.call_tool("memory_search", {"query": "Bob", "agent": "work"})
            assert refused.is_error and "no agent 'work' here" in _text(refused)

            write_config(tmp_path / "cfg", {"home": example_workspace, "work": workspace})
            work = await client.call_tool("memory_search", {"query": "Bob", "agent": "work"})
            assert not work.is_error, _text(work)
            assert cited_path(payload(work)["results"][0]) == "MEMORY.md"
            assert "'home', 'work'" in (await client.list_tools()).tools[0].description
            # The new agent is kept fresh like the others: a note is searchable.
            wrote = await client.call_tool("memory_append", {"text": "Dana likes rooibos.", "agent": "work"})
            assert not wrote.is_error and payload(wrote)["indexed"], _text(wrote)
            assert payload(await client.call_tool("memory_search", {"query": "rooibos", "agent": "work"}))["results"]

            config.write_text("[memory_search\nbroken", encoding="utf-8")  # not TOML
            still = await client.call_tool("memory_search", {"query": "Bob", "agent": "work"})
            assert not still.is_error, _text(still)

            write_config(tmp_path / "cfg", {"work": workspace})
            gone = await client.call_tool("memory_search", {"query": "Biscuit", "agent": "home"})
            assert gone.is_error and "this memory serves 'work'" in _text(gone)
            assert "'home'" not in (await client.list_tools()).tools[0].description

    anyio.run(main)


def test_command_line_errors(tmp_path, example_workspace):
    config = write_config(tmp_path / "cfg", {"example": example_workspace})
    env = {**os.environ, **server_env(config)}
    r = subprocess.run([sys.executable, "-m", "memext", "mcp", "-a", "nobody"], env=env, capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "no agent 'nobody'" in r.stderr and r.stdout == ""
    # Without the extra installed: one line that names it (the import is
    # blocked here, as an install without it would fail it).
    block = "import sys; sys.modules['mcp'] = None; from memext.cli import main; sys.argv = ['memext', 'mcp']; main()"
    r = subprocess.run([sys.executable, "-c", block], env=env, capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "pip install 'memext[mcp]'" in r.stderr and len(r.stderr.strip().splitlines()) == 1


def _index(config: Path) -> MemoryIndex:
    """The served agent's index, opened in this process only to look at it
    (reading never syncs)."""
    cfg = load_config(config)
    return MemoryIndex(cfg.agent("example"), config_file=cfg.path)


def _last_sync(idx: MemoryIndex) -> float | None:
    last = idx.status(check_files=False).last_sync
    return last.at if last else None


async def _search(client: Client, query: str) -> dict:
    r = await client.call_tool("memory_search", {"query": query})
    assert not r.is_error, _text(r)
    return payload(r)


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_an_edit_is_indexed_by_the_watcher_not_by_calls(transport, example_workspace, tmp_path):
    config = write_config(tmp_path / "cfg", {"example": example_workspace}, extra="[memory_search.sync]\nwatch_debounce_ms = 100\n")

    async def main():
        async with connect(transport, config) as client:
            assert (await _search(client, "Biscuit"))["stale"] is False  # the first build
            with _index(config) as idx:
                synced_at = _last_sync(idx)
                for _ in range(10):  # unchanged files: calls never sync
                    assert (await _search(client, "Biscuit"))["stale"] is False
                assert _last_sync(idx) == synced_at
                # Edit a note while the server runs, and make no call: its
                # watcher indexes it (seen here by reading the index).
                (example_workspace / "memory" / "2026-11-20.md").write_text("# 2026-11-20\n- Dana bought a sea kayak.\n", encoding="utf-8")
                deadline = time.monotonic() + 30
                while not idx.search("kayak").results:
                    assert time.monotonic() < deadline, "the server did not index the edit"
                    await anyio.sleep(0.05)
                assert _last_sync(idx) != synced_at
            found = await _search(client, "kayak")
            assert found["stale"] is False and cited_path(found["results"][0]) == "memory/2026-11-20.md"

    anyio.run(main)


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_stale_says_when_the_index_did_not_match_the_files(transport, example_workspace, tmp_path):
    # No watcher: an edit stays unindexed until something asks for a sync.
    config = write_config(tmp_path / "cfg", {"example": example_workspace}, extra="[memory_search.sync]\nwatch = false\n")

    async def main():
        async with connect(transport, config) as client:
            assert (await _search(client, "Biscuit"))["stale"] is False
            (example_workspace / "memory" / "2026-11-20.md").write_text("# 2026-11-20\n- Dana bought a sea kayak.\n", encoding="utf-8")
            stale = await _search(client, "kayak")
            assert stale["stale"] is True and stale["results"] == []
            assert "memory files changed since the index was last synced" in stale["notice"]
            # That search asked the server's keeper to catch up, in the background.
            deadline = time.monotonic() + 30
            # The edit may be searchable before the keeper has verified the file
            # (DESIGN.md §5): until then the answer says stale.
            while not ((found := await _search(client, "kayak"))["results"] and found["stale"] is False):
                assert time.monotonic() < deadline, "the stale index was never synced"
                await anyio.sleep(0.1)
            assert "changed" not in (found.get("notice") or "")

    anyio.run(main)


def test_without_a_config_the_current_folder_is_served(example_workspace):
    # As `memext search` does: no config file, so the folder it runs in is the agent.
    # PYTHONPATH kept: run elsewhere than the checkout, the server still imports the memext under test.
    env = {k: v for k, v in os.environ.items() if k.startswith("XDG_") or k == "PYTHONPATH"}
    params = StdioServerParameters(command=sys.executable, args=["-m", "memext", "mcp"], env=env, cwd=str(example_workspace))

    async def main():
        async with Client(params) as client:
            found = await _search(client, "How much food does Biscuit get per day?")
            assert cited_path(found["results"][0]) == "memory/2026-10-09.md" and found["stale"] is False
            wrote = await client.call_tool("memory_append", {"text": "Biscuit likes the new food."})
            assert not wrote.is_error and payload(wrote)["indexed"]
        assert (example_workspace / TODAY).read_text(encoding="utf-8").endswith("Biscuit likes the new food.\n")

    anyio.run(main)


class _StdioWire:
    """The raw stdio pipe of a `memext mcp` process: lines in, lines out
    (read by a thread, so a wait for an answer can time out)."""

    def __init__(self, proc: subprocess.Popen):
        self.proc = proc
        self.lines: queue.Queue[bytes] = queue.Queue()
        threading.Thread(target=lambda: [self.lines.put(line) for line in proc.stdout], daemon=True).start()

    @classmethod
    def start(cls, config: Path, stderr: Any = subprocess.DEVNULL) -> _StdioWire:
        """`memext mcp` serving ``config``, initialized as a client does."""
        proc = subprocess.Popen(
            [sys.executable, "-m", "memext", "mcp"],
            env={**os.environ, **server_env(config)},
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=stderr,
        )
        wire = cls(proc)
        wire.send(json.dumps(INITIALIZE).encode())
        assert wire.receive()["id"] == 1
        wire.send(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}')
        return wire

    def send(self, raw: bytes) -> None:
        self.proc.stdin.write(raw + b"\n")
        self.proc.stdin.flush()

    def receive(self, timeout: float = 30) -> dict:
        try:
            return json.loads(self.lines.get(timeout=timeout))
        except queue.Empty:
            raise AssertionError("the server did not answer") from None

    def assert_still_answers(self) -> None:
        """The server is still there, in order, and answers a search of the example memory."""
        call = {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "memory_search", "arguments": {"query": "Biscuit food"}},
        }
        self.send(json.dumps(call).encode())
        answer = self.receive()
        assert answer["id"] == 2 and "55 g" in json.dumps(answer["result"])

    def close(self) -> None:
        """The client goes (stdin closed): the server exits 0."""
        self.proc.stdin.close()
        assert self.proc.wait(30) == 0
        self.proc.stdout.close()


def test_a_line_that_is_not_json_rpc_gets_an_error_reply(example_workspace, tmp_path):
    """A client that sent a malformed line with an id would wait forever
    for an answer the SDK never sends: the server answers it."""
    wire = _StdioWire.start(write_config(tmp_path / "cfg", {"example": example_workspace}))
    try:
        for raw, code, answer_id in [
            (b"not json at all", -32700, None),
            (b'{"jsonrpc": "2.0", "id": 9, "method": "tools/li', -32700, None),  # cut short
            (b"\xff\xfe{garbage", -32700, None),  # not even UTF-8
            (b'{"jsonrpc": "2.0", "id": 7, "method": 5}', -32600, 7),
            (b'{"id": "abc", "params": {}}', -32600, "abc"),
            (b'{"jsonrpc": "2.0", "id": [1], "method": "tools/list"}', -32600, None),
            (b'{"jsonrpc": "2.0", "id": true, "method": "tools/list"}', -32600, None),
            (b"[1, 2]", -32600, None),
            (b'"a string"', -32600, None),
        ]:
            wire.send(raw)
            answer = wire.receive()
            assert answer["jsonrpc"] == "2.0" and answer["id"] == answer_id and answer["error"]["code"] == code, (raw, answer)
        wire.send(b"   ")  # a blank line is no message: nothing to answer
        wire.send(b'{"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 99}}')  # nor a notification
        wire.assert_still_answers()
    finally:
        wire.close()


def _nested(kind: str, depth: int) -> str:
    """A JSON value nesting ``depth`` arrays or objects."""
    return "[" * depth + "]" * depth if kind == "arrays" else '{"a":' * depth + "1" + "}" * depth


def _fuzz_line(rnd: random.Random) -> bytes:
    """A random line, no newline in it, never blank: JSON-ish pieces, deep
    brackets, quotes and bytes that are not UTF-8."""
    pieces = [b"{", b"}", b"[", b"]", b'"', b":", b",", b'"id"', b"\\", b"1", b"null", b'"jsonrpc":"2.0"', b"[" * 300, b'{"a":' * 200]
    out = bytearray(b"{")
    for _ in range(rnd.randint(1, 40)):
        out += rnd.choice(pieces) if rnd.random() < 0.7 else bytes([rnd.choice([b for b in range(256) if b != 10])])
    return bytes(out)


def test_deep_long_and_undecodable_lines_are_answered_and_the_server_goes_on(example_workspace, tmp_path):
    """No line can stop the stdio server: JSON nested thousands deep (the
    standard library's parser would exhaust the recursion limit), a line
    past the size limit, bytes that are not UTF-8 and random garbage each
    get a JSON-RPC error (with the request's id when it can be read), and
    a later call of the same client is still answered."""
    with open(tmp_path / "stderr.txt", "wb") as err:
        wire = _StdioWire.start(write_config(tmp_path / "cfg", {"example": example_workspace}), stderr=err)
    try:
        for n, (kind, depth) in enumerate([(k, d) for d in (10, 1_500, 100_000) for k in ("arrays", "objects")], start=10):
            query = _nested(kind, depth)
            wire.send(
                f'{{"jsonrpc":"2.0","id":{n},"method":"tools/call","params":{{"name":"memory_search","arguments":{{"query":{query}}}}}}}'.encode()
            )
            answer = wire.receive()
            assert answer["id"] == n, (kind, depth, answer)
            if depth == 10:  # read, and answered by the tool: not a string
                assert answer["result"]["isError"] and "query" in answer["result"]["content"][0]["text"]
            else:
                assert answer["error"]["code"] == -32600 and f"deeper than {MAX_DEPTH} levels" in answer["error"]["message"]
        # The id may come after the deep part.
        wire.send(b'{"jsonrpc":"2.0","method":"tools/list","params":{"x":' + b"[" * 5_000 + b"]" * 5_000 + b'},"id":"late"}')
        assert wire.receive()["id"] == "late"
        # Past the size limit: refused unread, the rest of the line dropped.
        huge = json.dumps(
            {
                "jsonrpc": "2.0",
                "id": "huge",
                "method": "tools/call",
                "params": {"name": "memory_append", "arguments": {"text": "x" * MAX_LINE_BYTES}},
            }
        )
        wire.send(huge.encode())
        answer = wire.receive()
        assert (
            answer["id"] == "huge"
            and answer["error"]["code"] == -32600
            and f"longer than {MAX_LINE_BYTES} bytes" in answer["error"]["message"]
        )
        # JSON text must be UTF-8: an invalid byte is a parse error, never
        # a replacement character written into memory.
        wire.send(b'{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"memory_append","arguments":{"text":"caf\xe9 note"}}}')
        answer = wire.receive()
        assert answer["id"] is None and answer["error"]["code"] == -32700 and "not UTF-8" in answer["error"]["message"]
        rnd = random.Random(41)
        for _ in range(300):
            line = _fuzz_line(rnd)
            wire.send(line)
            assert "error" in wire.receive(), line
        wire.assert_still_answers()
    finally:
        wire.close()
    assert not (example_workspace / TODAY).exists()  # nothing was appended
    logged = (tmp_path / "stderr.txt").read_text(errors="replace")
    assert "Traceback" not in logged and "RecursionError" not in logged, logged[-3000:]


def test_the_depth_limit_stays_far_below_the_recursion_limit():
    assert MAX_DEPTH * 5 <= sys.getrecursionlimit()


def test_a_workspace_moved_away_is_a_tool_error_not_an_empty_answer(workspace, tmp_path):
    """The served folder is renamed (or its drive unmounted) while the
    server runs: search, get and append are tool errors naming the folder,
    never an empty `results` a model would take for "nothing about this";
    nothing is written where the folder was, and with the folder back the
    same session answers again."""
    config = write_config(tmp_path / "cfg", {"work": workspace})
    named = f"workspace {workspace} of agent work does not exist"

    async def main():
        async with connect("stdio", config) as client:
            before = await client.call_tool("memory_search", {"query": "Bob"})
            assert payload(before)["results"], _text(before)
            workspace.rename(tmp_path / "elsewhere")
            for name, args in [
                ("memory_search", {"query": "Bob"}),
                ("memory_get", {"path": "MEMORY.md"}),
                ("memory_append", {"text": "Dana likes rooibos."}),
            ]:
                refused = await client.call_tool(name, args)
                assert refused.is_error and named in _text(refused), (name, _text(refused))
            assert not workspace.exists()
            (tmp_path / "elsewhere").rename(workspace)
            back = await client.call_tool("memory_search", {"query": "Bob"})
            assert not back.is_error and payload(back)["results"], _text(back)

    anyio.run(main)
