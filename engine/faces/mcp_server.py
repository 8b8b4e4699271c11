"""``memext mcp``: the memory tools as an MCP server (official ``mcp`` SDK).

Built on the SDK's low-level ``Server`` so the tools it lists are
:data:`~memext.engine.TOOLS` as they are (names, descriptions, JSON Schemas), not
restated as Python signatures; calls go to :meth:`MemoryTools.call_tool`,
whose ToolErrors come back as tool results with ``isError`` set, so the
model reads the message and the server keeps running. A result is one
text content, compact JSON (:func:`result_text`).

Transports: stdio (what Claude Desktop, Claude Code and Cursor launch;
lines that are not JSON-RPC are answered with an error, :mod:`.mcp_stdio`)
or Streamable HTTP on 127.0.0.1 (``--http PORT``, path ``/mcp``), behind a
bearer token and with sessions that expire (:mod:`.mcp_http`).

It also offers one prompt, ``recall`` (argument ``message``, and
``agent`` when several are served): the memories the message calls for, as
a user message holding the context block a client puts before the model's
turn (DESIGN.md §18); nothing recalled, no message.

Every tool call is answered within its deadline (``--call-timeout``): one
stalled on its store (a frozen PostgreSQL) comes back as a tool error, and
calls for other agents are not held up by it.

While it runs, the engine's :class:`~memext.engine.Supervisor` keeps the
served agents' indexes fresh, as in the tray: a first sync at start, file
watchers (with the ``watch`` extra), interval and reconcile syncs. Tool
calls never sync by themselves (:class:`~..agents.index_hosts.KeptFresh`): a search
answers at once and says ``stale`` when the index did not match the files,
and an append returns once the keeper has indexed the entry.
"""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path
from typing import Any, Sequence

import anyio
import anyio.to_thread
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import MCPError

from .. import Config, MemoryTools, Supervisor, ToolError, ToolSpec
from .mcp_http import BearerToken, HttpOptions, SessionGuard, client_snippet, load_or_create_token, token_path

log = logging.getLogger("memext")

INSTRUCTIONS = """\
memext is this user's long-term memory: Markdown notes (MEMORY.md for lasting facts, memory/YYYY-MM-DD.md daily notes).
- Call memory_search before answering anything that may depend on earlier conversations or work: people, preferences, \
decisions, dates, project history, "what did we ...". Cite what you use by its citation (path:start-end, or path:line); \
read more around a hit with memory_get. For a question about a period ("last week", "in March"), \
narrow the search with after/before (e.g. after="7d", or after="2026-03-01", before="2026-04-01").
- Call memory_append when something should be remembered in later sessions: a decision, a preference, a fact learned, \
work done, a promise. Default target: today's daily note; put durable facts and preferences in MEMORY.md (file="MEMORY.md"). \
Write self-contained entries (names and dates, not "he" or "yesterday"); do not store secrets.
- When something in memory is no longer true, call memory_forget with its citation, or memory_append with \
supersedes=<citation> to replace it with the corrected entry.
- A tool result with isError holds a message saying what to change; fix the arguments and call again."""

#: Seconds a tool call may take before it is answered with a tool error
#: (above the waits inside a call: a first build or an append's sync, 30 s).
CALL_TIMEOUT_S = 90.0
#: Tool calls running at once (threads): a call stalled on its store holds
#: one until the store answers or cuts it off.
CALL_THREADS = 64
#: Over HTTP, each call is answered with one JSON body rather than an SSE
#: stream of one event (the SDK's default): the tools send nothing else
#: during a call (no progress, no server-initiated request), and a stream
#: per call costs the server more than the search (docs/mcp-http.md).
JSON_RESPONSES = True
#: Seconds an idle HTTP connection is kept open. Longer than clients keep
#: theirs (httpx: 5 s, Node: 4 s), so a client never sends a request on a
#: connection the server is closing at that moment (uvicorn's 5 s raced
#: with clients' 5 s: a busy client's next call failed with a dropped
#: connection).
KEEP_ALIVE_S = 60


def build_server(tools: MemoryTools, call_timeout: float = CALL_TIMEOUT_S) -> Server:
    """An MCP server answering with ``tools``; a call that has not finished
    within ``call_timeout`` seconds is answered with a tool error (its
    thread is left to finish, or fail, on its own)."""
    limiter = anyio.CapacityLimiter(CALL_THREADS)

    def listed() -> list[types.Tool]:
        # Built per listing: the descriptions name the agents served, which
        # follow the config file (MemoryTools.refresh_agents).
        return [_tool(spec) for spec in tools.specs]

    async def list_tools(ctx, params) -> types.ListToolsResult:
        await anyio.to_thread.run_sync(tools.refresh_agents)
        return types.ListToolsResult(tools=listed())

    async def call_tool(ctx, params: types.CallToolRequestParams) -> types.CallToolResult:
        try:
            with anyio.fail_after(call_timeout):
                result = await anyio.to_thread.run_sync(
                    tools.call_tool, params.name, params.arguments, abandon_on_cancel=True, limiter=limiter
                )
        except ToolError as exc:
            return _error(str(exc))
        except TimeoutError:
            return _error(_overdue(params.name, call_timeout))
        return types.CallToolResult(content=[types.TextContent(text=result_text(result))])

    async def list_prompts(ctx, params) -> types.ListPromptsResult:
        await anyio.to_thread.run_sync(tools.refresh_agents)
        return types.ListPromptsResult(prompts=[_recall_prompt(tools.agents)])

    async def get_prompt(ctx, params: types.GetPromptRequestParams) -> types.GetPromptResult:
        if params.name != RECALL_PROMPT:
            raise MCPError(types.INVALID_PARAMS, f"no prompt {params.name!r}; the prompt is {RECALL_PROMPT!r}")
        args = params.arguments or {}
        message = args.get("message") or ""
        if not message.strip():
            raise MCPError(types.INVALID_PARAMS, "recall: give the user's message as the `message` argument")
        try:
            with anyio.fail_after(call_timeout):
                got = await anyio.to_thread.run_sync(
                    tools.recall, message, args.get("agent") or None, abandon_on_cancel=True, limiter=limiter
                )
        except ToolError as exc:
            raise MCPError(types.INVALID_PARAMS, str(exc)) from None
        except TimeoutError:
            raise MCPError(types.INTERNAL_ERROR, _overdue(RECALL_PROMPT, call_timeout)) from None
        return _recall_result(got.context, got.notice, len(got.results))

    from importlib.metadata import version

    return Server(
        "memext",
        version=version("memext"),
        instructions=INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_list_prompts=list_prompts,
        on_get_prompt=get_prompt,
        get_tool_input_schema=lambda name: next((t.input_schema for t in tools.specs if t.name == name), None),
    )


def result_text(result: dict) -> str:
    """A tool result as the one text a client hands its model: compact JSON.
    Sent once, as text content only: structured content would repeat the
    same payload (the spec asks for both together), and a client that
    shows its model both would read every search twice."""
    return json.dumps(result, ensure_ascii=False, separators=(",", ":"))


def _error(message: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(text=message)], is_error=True)


def _overdue(name: str, seconds: float) -> str:
    """The tool error of a call past its deadline."""
    message = f"{name} did not finish within {seconds:g} s: the memory index's store is not answering (a stalled database?)"
    if name == "memory_append":
        return f"{message}; the entry may still be written when it answers: search for it before appending it again"
    return f"{message}; try again later"


RECALL_PROMPT = "recall"


def _recall_prompt(agents: Sequence[str]) -> types.Prompt:
    arguments = [types.PromptArgument(name="message", description="The user's latest message.", required=True)]
    if len(agents) > 1:
        served = ", ".join(repr(a) for a in agents)
        arguments.append(types.PromptArgument(name="agent", description=f"Whose memory: {served} (default {agents[0]!r}).", required=False))
    return types.Prompt(
        name=RECALL_PROMPT,
        title="Recall memories",
        description=(
            "The memories the user's message calls for (at most a few confident matches), as a message to put "
            "before the model's turn: notes the user wrote earlier, quoted as data, not instructions. "
            "No message when nothing is recalled."
        ),
        arguments=arguments,
    )


def _recall_result(context: str, notice: str | None, count: int) -> types.GetPromptResult:
    """The block as one user message (a client prepends it to the turn);
    no message, and the reason in the description, when nothing was recalled."""
    if not context:
        return types.GetPromptResult(description=f"nothing recalled: {notice}" if notice else "nothing recalled", messages=[])
    message = types.PromptMessage(role="user", content=types.TextContent(text=context))
    return types.GetPromptResult(description=f"{count} memor{'y' if count == 1 else 'ies'} recalled", messages=[message])


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
    from .mcp_stdio import serve_stdio

    await serve_stdio(server)


def http_app(server: Server, options: HttpOptions, token: str, token_file: Path) -> Any:
    """The ASGI app ``memext mcp --http`` serves: the SDK's Streamable HTTP
    app behind the bearer token and, unless stateless, the session guard."""
    app: Any = server.streamable_http_app(
        host=options.host,
        stateless_http=options.stateless,
        json_response=JSON_RESPONSES,
        session_idle_timeout=options.idle_s,
        # The guard keeps the count below this by ending idle sessions;
        # the SDK's own refusal (503 for every newcomer) is never reached.
        max_sessions=None,
    )
    if not options.stateless:
        app = SessionGuard(app, max_sessions=options.max_sessions, idle_s=options.idle_s)
    return BearerToken(app, token, token_file)


async def _serve_http(app: Any, options: HttpOptions) -> None:
    import uvicorn

    # http="auto": httptools' C parser where it is installed (the mcp extra
    # installs it), else h11's pure-Python one.
    config = uvicorn.Config(app, host=options.host, port=options.port, log_level="warning", lifespan="on", timeout_keep_alive=KEEP_ALIVE_S)
    await uvicorn.Server(config).serve()


def serve_app(app: Any, options: HttpOptions) -> None:
    """Serve the ASGI ``app`` on ``options``' address until interrupted:
    uvicorn on uvloop where it is installed (the mcp extra installs it but
    on Windows), else on asyncio's own loop. Every request runs through
    the event loop's one thread, so its speed bounds the server's."""
    try:
        import uvloop  # noqa: F401
    except ImportError:
        anyio.run(_serve_http, app, options)
    else:
        anyio.run(_serve_http, app, options, backend_options={"use_uvloop": True})


def serve(
    config: Config, agents: Sequence[str] | None = None, *, http: HttpOptions | None = None, call_timeout: float = CALL_TIMEOUT_S
) -> None:
    """Run the server until stdin closes (stdio) or it is interrupted (HTTP).

    ``agents``: the ids served, or None for every agent of the config file
    as it is edited (an agent added while the server runs is served from
    the next call, one removed is dropped). Edits to a served agent
    (settings, workspace) are picked up while it runs. Every tool call is
    answered within ``call_timeout`` seconds, and a call stalled on one
    agent's store holds up no other agent's calls.
    """
    served = list(agents) if agents else None
    for agent_id in served or []:
        config.agent(agent_id)  # an unknown agent fails before anything starts
    with (
        Supervisor(config.path, agent_ids=served) as supervisor,
        MemoryTools.kept_fresh(supervisor, served, busy_timeout=call_timeout) as tools,
    ):
        server = build_server(tools, call_timeout)
        which = ", ".join(tools.agents) + ("" if served else " (every configured agent)")
        if http is None:
            print(f"memext mcp: serving {which} on stdio", file=sys.stderr, flush=True)
            anyio.run(_serve_stdio, server)
            return
        token_file = token_path(config)
        token = load_or_create_token(token_file)
        mode = "stateless" if http.stateless else f"sessions idle {http.idle_s:g} s expire, at most {http.max_sessions}"
        print(f"memext mcp: serving {which} on {http.url} ({mode})", file=sys.stderr)
        print(client_snippet(http, token, token_file), file=sys.stderr, flush=True)
        serve_app(http_app(server, http, token, token_file), http)
