"""The floor of ``bench/mcp_http_bench.py``: an MCP server that does nothing.

    python bench/mcp_floor_server.py PORT [--stateless]

The same SDK's low-level ``Server`` over the same Streamable HTTP app,
served by the same code (uvicorn, uvloop where installed) as ``memext mcp
--http``, with one tool of the same name
and schema, ``memory_search``, that answers a fixed text at once. What a
call costs here is what the SDK's session layer, its JSON-RPC and
pydantic models, Starlette, uvicorn and the loopback hop cost; what
``memext mcp`` takes beyond it is memext's (its middleware, the tool
call's thread, the search, the result's JSON).
"""

from __future__ import annotations

import argparse
from typing import Any

import mcp_types as types
from mcp.server.lowlevel import Server

from memext.engine import TOOLS
from memext.engine.faces.mcp_http import HttpOptions
from memext.engine.faces.mcp_server import JSON_RESPONSES, serve_app

#: The answer: about the size of a memory_search result over the example memory.
ANSWER = '{"results":[{"citation":"memory/2026-10-09.md:3-6","score":1.0,"confidence":1.0,"confident":true,"snippet":"' + "x" * 300 + '"}]}'


def build_server() -> Server:
    spec = next(t for t in TOOLS if t.name == "memory_search")

    async def list_tools(ctx, params) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[types.Tool(name=spec.name, description=spec.description, input_schema=spec.input_schema)])

    async def call_tool(ctx, params: types.CallToolRequestParams) -> types.CallToolResult:
        return types.CallToolResult(content=[types.TextContent(text=ANSWER)])

    return Server(
        "floor",
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        get_tool_input_schema=lambda name: spec.input_schema if name == spec.name else None,
    )


def app(stateless: bool, sse: bool) -> Any:
    """The SDK's app as memext's http_app builds it, less memext's own
    middleware (the bearer token, the session guard)."""
    return build_server().streamable_http_app(
        host="127.0.0.1", stateless_http=stateless, json_response=JSON_RESPONSES and not sse, session_idle_timeout=300.0, max_sessions=None
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("port", type=int)
    ap.add_argument("--stateless", action="store_true")
    ap.add_argument(
        "--sse", action="store_true", help="answer each call as an SSE stream (the SDK's default) even where memext answers JSON"
    )
    args = ap.parse_args()
    serve_app(app(args.stateless, args.sse), HttpOptions(args.port))


if __name__ == "__main__":
    main()
