"""``memext mcp``: the memory tools as an MCP server (official ``mcp`` SDK).

Built on the SDK's low-level ``Server`` so the tools it lists are
:data:`~.tools.TOOLS` as they are (names, descriptions, JSON Schemas), not
restated as Python signatures; calls go to :meth:`MemoryTools.call_tool`,
whose ToolErrors come back as tool results with ``isError`` set, so the
model reads the message and the server keeps running.

Transports: stdio (what Claude Desktop, Claude Code and Cursor launch) or
Streamable HTTP on 127.0.0.1 (``--http PORT``, path ``/mcp``).

While it runs, the engine's :class:`~.supervisor.Supervisor` keeps the
served agents' indexes fresh, as in the tray: a first sync at start, file
watchers (with the ``watch`` extra), interval and reconcile syncs. Tool
calls never sync by themselves (:class:`~.tool_hosts.KeptFresh`): a search
answers at once and says ``stale`` when the index did not match the files,
and an append returns once the keeper has indexed the entry.
"""

from __future__ import annotations

import json
import logging
import sys
from typing import Sequence

import anyio
import anyio.to_thread
import mcp_types as types
from mcp.server.lowlevel import Server

from ..config import Config
from ..freshness.supervisor import Supervisor
from ..agents.tools import MemoryTools, ToolError, ToolSpec

log = logging.getLogger("memext")

INSTRUCTIONS = """\
memext is this user's long-term memory: Markdown notes (MEMORY.md for lasting facts, memory/YYYY-MM-DD.md daily notes).
- Call memory_search before answering anything that may depend on earlier conversations or work: people, preferences, \
decisions, dates, project history, "what did we ...". Cite what you use by its citation (path:start-end); \
read more around a hit with memory_get. For a question about a period ("last week", "in March"), \
narrow the search with after/before (e.g. after="7d", or after="2026-03-01", before="2026-04-01").
- Call memory_append when something should be remembered in later sessions: a decision, a preference, a fact learned, \
work done, a promise. Default target: today's daily note; put durable facts and preferences in MEMORY.md (file="MEMORY.md"). \
Write self-contained entries (names and dates, not "he" or "yesterday"); do not store secrets.
- When something in memory is no longer true, call memory_forget with its citation, or memory_append with \
supersedes=<citation> to replace it with the corrected entry.
- A tool result with isError holds a message saying what to change; fix the arguments and call again."""

def build_server(tools: MemoryTools) -> Server:
    """An MCP server answering with ``tools``."""

    def listed() -> list[types.Tool]:
        # Built per listing: the descriptions name the agents served, which
        # follow the config file (MemoryTools.refresh_agents).
        return [_tool(spec) for spec in tools.specs]

    async def list_tools(ctx, params) -> types.ListToolsResult:
        await anyio.to_thread.run_sync(tools.refresh_agents)
        return types.ListToolsResult(tools=listed())

    async def call_tool(ctx, params: types.CallToolRequestParams) -> types.CallToolResult:
        try:
            result = await anyio.to_thread.run_sync(tools.call_tool, params.name, params.arguments)
        except ToolError as exc:
            return types.CallToolResult(content=[types.TextContent(text=str(exc))], is_error=True)
        text = json.dumps(result, ensure_ascii=False)
        return types.CallToolResult(content=[types.TextContent(text=text)], structured_content=result)

    from importlib.metadata import version

    return Server(
        "memext",
        version=version("memext"),
        instructions=INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        get_tool_input_schema=lambda name: next((t.input_schema for t in tools.specs if t.name == name), None),
    )


def _tool(spec: ToolSpec) -> types.Tool:
    title = spec.name.replace("_", " ").capitalize()
    return types.Tool(
        name=spec.name,
        title=title,
        description=spec.description,
        input_schema=spec.input_schema,
        annotations=types.ToolAnnotations(
            title=title,
            read_only_hint=spec.read_only,
            destructive_hint=spec.destructive,
            idempotent_hint=spec.idempotent,
            open_world_hint=False,
        ),
    )


async def _serve_stdio(server: Server) -> None:
    from mcp.server.stdio import stdio_server

    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


async def _serve_http(server: Server, port: int, host: str) -> None:
    import uvicorn

    app = server.streamable_http_app(host=host)
    config = uvicorn.Config(app, host=host, port=port, log_level="warning", lifespan="on")
    await uvicorn.Server(config).serve()


def serve(config: Config, agents: Sequence[str] | None = None, *, http_port: int | None = None, host: str = "127.0.0.1") -> None:
    """Run the server until stdin closes (stdio) or it is interrupted (HTTP).

    ``agents``: the ids served, or None for every agent of the config file
    as it is edited (an agent added while the server runs is served from
    the next call, one removed is dropped). Edits to a served agent
    (settings, workspace) are picked up while it runs.
    """
    served = list(agents) if agents else None
    for agent_id in served or []:
        config.agent(agent_id)  # an unknown agent fails before anything starts
    with Supervisor(config.path, agent_ids=served) as supervisor, MemoryTools.kept_fresh(supervisor, served) as tools:
        server = build_server(tools)
        where = f"http://{host}:{http_port}/mcp" if http_port is not None else "stdio"
        which = ", ".join(tools.agents) + ("" if served else " (every configured agent)")
        print(f"memext mcp: serving {which} on {where}", file=sys.stderr, flush=True)
        if http_port is None:
            anyio.run(_serve_stdio, server)
        else:
            anyio.run(_serve_http, server, http_port, host)
