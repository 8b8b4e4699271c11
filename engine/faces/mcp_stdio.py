"""``memext mcp`` over stdio, answering lines that are not JSON-RPC.

The SDK's stdio transport drops a line it cannot read, so a client that
sent an id with it waits forever. Here each line is checked before the
SDK sees it: a line that is not JSON gets a parse error (-32700, id null),
and JSON that is not a JSON-RPC message gets an invalid-request error
(-32600) carrying its id when one can be read (else null), as JSON-RPC 2.0
asks. Blank lines are skipped. Everything else goes to the SDK unchanged.

The SDK diverts fd 0 to the null device while it serves (so nothing else
in the process, or a child, reads the protocol's input); as this module
hands it the input stream itself, it does the same for fd 0 here.
"""

from __future__ import annotations

import io
import json
import os
import sys
from contextlib import contextmanager
from typing import Any, Iterator, cast

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage


def refusal(line: str) -> types.JSONRPCError | None:
    """The error answering ``line``, or None when it is a JSON-RPC message."""
    try:
        message = types.jsonrpc_message_adapter.validate_json(line, by_name=False)
    except ValueError:
        message = None
    if message is not None and not isinstance(message, types.JSONRPCNotification):
        return None
    try:
        value = json.loads(line)
    except ValueError as exc:
        return _error(None, types.PARSE_ERROR, f"Parse error: the line is not JSON ({exc})")
    request_id = value.get("id") if isinstance(value, dict) else None
    if message is not None:
        # The SDK reads a request whose id is not a string or an integer
        # (a list, true) as a notification and never answers it.
        if not isinstance(value, dict) or "id" not in value:
            return None
        return _error(None, types.INVALID_REQUEST, "Invalid Request: an id must be a string or an integer")
    if isinstance(request_id, bool) or not isinstance(request_id, (str, int)):
        request_id = None
    return _error(request_id, types.INVALID_REQUEST, "Invalid Request: not a JSON-RPC 2.0 message (jsonrpc, id, method, params)")


def _error(request_id: str | int | None, code: int, message: str) -> types.JSONRPCError:
    return types.JSONRPCError(jsonrpc="2.0", id=request_id, error=types.ErrorData(code=code, message=message))


class CheckedLines:
    """The input lines the SDK may read: JSON-RPC messages only. Any other
    line is answered on the output stream given to :meth:`answer_on` before
    the next line is read, so answers keep the order of the lines."""

    def __init__(self, lines: Any):
        self._lines = lines.__aiter__()
        self._write: Any = None
        self._ready = anyio.Event()

    def answer_on(self, write: Any) -> None:
        """Where refusals go: the transport's output stream."""
        self._write = write
        self._ready.set()

    def __aiter__(self) -> "CheckedLines":
        return self

    async def __anext__(self) -> str:
        while True:
            line = await self._lines.__anext__()
            if not line.strip():
                continue
            error = refusal(line)
            if error is None:
                return line
            await self._ready.wait()
            await self._write.send(SessionMessage(error))


@contextmanager
def _claimed_stdin() -> Iterator[io.TextIOWrapper]:
    """The protocol's input on a private descriptor, with fd 0 pointed at
    the null device meanwhile (restored on exit)."""
    try:
        wire = os.dup(0)
    except OSError:  # no fd 0 to move: read sys.stdin as it is
        yield io.TextIOWrapper(sys.stdin.buffer, encoding="utf-8", errors="replace")
        return
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    try:
        yield io.TextIOWrapper(os.fdopen(wire, "rb", closefd=False), encoding="utf-8", errors="replace")
    finally:
        # The wire stays open: a reader thread may still block on it, and a
        # closed descriptor could be reused under it.
        os.dup2(wire, 0)


async def serve_stdio(server: Server) -> None:
    """Serve ``server`` on stdin/stdout until stdin closes."""
    with _claimed_stdin() as text:
        lines = CheckedLines(anyio.wrap_file(text))
        # The SDK only iterates its stdin's lines, which CheckedLines yields.
        async with stdio_server(stdin=cast(Any, lines)) as (read, write):
            lines.answer_on(write)
            await server.run(read, write, server.create_initialization_options())
