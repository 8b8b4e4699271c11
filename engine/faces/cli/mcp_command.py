"""``memext mcp``: serving the memory tools over MCP (stdio, or Streamable
HTTP on 127.0.0.1)."""

from __future__ import annotations

import click

from ... import MemextError
from .options import ctx_config as _config, examples


@click.command(
    "mcp",
    short_help="Serve the memory_* tools and the recall prompt over MCP.",
    epilog=examples("memext mcp -a work", "memext mcp --http 8765", ok="the server stopped"),
)
@click.option("-a", "--agent", help="Serve only this agent (default: every configured agent).")
@click.option(
    "--http", "http_port", type=click.IntRange(1, 65535), help="Serve Streamable HTTP on 127.0.0.1:PORT (path /mcp) instead of stdio."
)
@click.option(
    "--session-idle",
    "idle_s",
    type=click.FloatRange(min=1),
    default=300,
    show_default=True,
    help="HTTP: seconds a session may go without a request before it expires.",
)
@click.option(
    "--max-sessions",
    type=click.IntRange(min=1),
    default=1000,
    show_default=True,
    help="HTTP: sessions held at most; past it the one idle the longest is ended.",
)
@click.option("--stateless", is_flag=True, help="HTTP: no sessions, each request served on its own (one-shot clients).")
@click.option(
    "--call-timeout",
    type=click.FloatRange(min=1),
    default=90,
    show_default=True,
    help="Seconds a tool call may take before it is answered with an error (a stalled store).",
)
@click.pass_context
def mcp_cmd(ctx, agent, http_port, idle_s, max_sessions, stateless, call_timeout) -> None:
    """Serve the memory tools over MCP (stdio by default): memory_search,
    memory_get, memory_append, memory_forget and memory_capture, and the
    prompt recall (arguments: message, and agent when several are served).

    One agent with -a, else every configured agent (the tools' `agent` argument).
    Over HTTP, clients must send the bearer token the server prints (kept in
    mcp-token beside the config file)."""
    try:
        from ..mcp_http import HttpOptions
        from ..mcp_server import serve
    except ImportError as exc:
        raise MemextError(f"the MCP server needs the mcp extra: pip install 'memext[mcp]' ({exc})") from None
    cfg = _config(ctx)
    http = HttpOptions(http_port, idle_s=idle_s, max_sessions=max_sessions, stateless=stateless) if http_port else None
    serve(cfg, [cfg.agent(agent).id] if agent else None, http=http, call_timeout=call_timeout)
