"""A frozen PostgreSQL under a running `memext mcp`: the server process
stopped with SIGSTOP (as a stalled network or a paused VM leaves it), so
connections stay open and nothing answers. Every tool call is answered
within its deadline, and calls for an agent on another store go on."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import anyio
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp_process import payload, server_env
from pg_server import PASSWORD

CALL_TIMEOUT_S = 5
#: What a call may take beyond its deadline (process hop, a loaded machine).
SLACK_S = 4


def _config(folder: Path, shared: Path, local: Path, url: str) -> Path:
    """Agent "shared" on PostgreSQL, agent "local" on SQLite."""
    folder.mkdir(parents=True, exist_ok=True)
    lines = [
        "[memory_search]",
        'provider = "none"',
        "[memory_search.store]",
        f"path = {json.dumps(str(folder / 'index' / '{agent_id}.sqlite'))}",
        "",
        "[[agents]]",
        'id = "shared"',
        f"workspace = {json.dumps(str(shared))}",
        "[agents.memory_search.store]",
        'driver = "postgres"',
        f"url = {json.dumps(url)}",
        "",
        "[[agents]]",
        'id = "local"',
        f"workspace = {json.dumps(str(local))}",
    ]
    path = folder / "config.toml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    path.chmod(0o600)
    return path


async def _timed(client: Client, name: str, args: dict) -> tuple[float, object]:
    started = time.monotonic()
    result = await client.call_tool(name, args)
    return time.monotonic() - started, result


def test_a_frozen_postgres_does_not_hang_the_server(example_workspace, workspace, tmp_path, pg_server, pg_url):
    config = _config(tmp_path / "cfg", example_workspace, workspace, pg_url)
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "memext", "mcp", "--call-timeout", str(CALL_TIMEOUT_S)],
        env={**server_env(config), "PGPASSWORD": PASSWORD},
    )

    async def main() -> None:
        async with Client(params) as client:
            shared = await client.call_tool("memory_search", {"query": "How much food does Biscuit get per day?", "agent": "shared"})
            assert not shared.is_error and "55 g" in payload(shared)["results"][0]["snippet"]
            local = await client.call_tool("memory_search", {"query": "Bob", "agent": "local"})
            assert not local.is_error and payload(local)["results"]

            pg_server.freeze()
            try:
                answers: dict[str, tuple[float, object]] = {}
                local_times: list[float] = []

                async def call(key: str, name: str, args: dict) -> None:
                    answers[key] = await _timed(client, name, args)

                async def local_calls() -> None:
                    await anyio.sleep(1)  # while the shared agent's calls are stalled
                    for _ in range(3):
                        took, result = await _timed(client, "memory_search", {"query": "Bob", "agent": "local"})
                        assert not result.is_error and payload(result)["results"], result
                        local_times.append(took)

                with anyio.fail_after(CALL_TIMEOUT_S * 3 + 30):
                    async with anyio.create_task_group() as tg:
                        tg.start_soon(call, "search", "memory_search", {"query": "Biscuit", "agent": "shared"})
                        tg.start_soon(call, "again", "memory_search", {"query": "vet", "agent": "shared"})
                        tg.start_soon(call, "append", "memory_append", {"text": "Biscuit saw the vet.", "agent": "shared"})
                        tg.start_soon(call, "get", "memory_get", {"path": "MEMORY.md", "agent": "shared"})
                        tg.start_soon(local_calls)

                # The other agent was served at once, all along.
                assert len(local_times) == 3 and max(local_times) < 3, local_times
                for key, (took, result) in answers.items():
                    assert took < CALL_TIMEOUT_S + SLACK_S, (key, took)
                # The calls race for the agent's lock: whichever takes it runs
                # out the call deadline, and the others, queued behind it,
                # are told so within the same deadline.
                ran_out = f"did not finish within {CALL_TIMEOUT_S} s"
                queued = f"has not finished within {CALL_TIMEOUT_S:g} s"
                searches = [answers["search"][1], answers["again"][1]]
                assert all(r.is_error and (ran_out in r.content[0].text or queued in r.content[0].text) for r in searches), searches
                assert any(ran_out in r.content[0].text for _, r in answers.values() if r.is_error), answers
                _, append = answers["append"]
                if append.is_error:
                    assert (
                        "search for it before appending it again" in append.content[0].text or "has not finished" in append.content[0].text
                    )
                # Calls go on being answered in time while it stays frozen.
                took, later = await _timed(client, "memory_search", {"query": "Biscuit", "agent": "shared"})
                assert later.is_error and took < CALL_TIMEOUT_S + SLACK_S
            finally:
                pg_server.thaw()
            # Resumed: the shared agent answers again.
            deadline = time.monotonic() + 90
            while True:
                result = await client.call_tool("memory_search", {"query": "How much food does Biscuit get per day?", "agent": "shared"})
                if not result.is_error:
                    break
                assert time.monotonic() < deadline, result.content[0].text
                await anyio.sleep(1)
            assert "55 g" in payload(result)["results"][0]["snippet"]

    try:
        anyio.run(main)
    finally:
        pg_server.thaw()


@pytest.fixture(autouse=True)
def _never_leave_it_frozen(pg_server):
    yield
    pg_server.thaw()


def test_a_read_from_a_frozen_server_is_cut_off(example_workspace, pg_server, pg_url, monkeypatch):
    """Below the MCP server: a read that gets no answer is cut off by the
    client after the read deadline (a stopped server cancels nothing, and
    its kernel keeps acknowledging the socket), and says why."""
    from memext.engine import MemoryIndex
    from memext.engine.config import parse_config
    from memext.engine.errors import StoreUnavailable
    from memext.engine.store.postgres import connection

    monkeypatch.setattr(connection, "READ_DEADLINE_S", 2.0)
    raw = {
        "memory_search": {"provider": "none", "store": {"driver": "postgres", "url": pg_url}},
        "agents": [{"id": "shared", "workspace": str(example_workspace)}],
    }
    agent = parse_config(raw, path=example_workspace.parent / "config.toml").agents[0]
    with MemoryIndex(agent) as idx:
        idx.sync()
        assert idx.search("Biscuit").results
        pg_server.freeze()
        try:
            started = time.monotonic()
            with pytest.raises(StoreUnavailable, match="did not answer within 2 s"):
                idx.search("Biscuit food")
            assert time.monotonic() - started < 2 + 1 + SLACK_S  # the deadline and the watchdog's tick: no retry
        finally:
            pg_server.thaw()
        assert idx.search("Biscuit").results  # reconnected once the server answers
