"""``memext mcp`` over stdio, answering lines that are not JSON-RPC.

The SDK's stdio transport drops a line it cannot read, so a client that
sent an id with it waits forever. Here each line is checked before the
SDK sees it, and anything the SDK could not read is answered, so the
server keeps serving whatever a client sends:

- a line that is not JSON (cut short, garbage, not UTF-8, which JSON text
  must be) gets a parse error (-32700, id null);
- a line longer than :data:`MAX_LINE_BYTES`, or nested deeper than
  :data:`MAX_DEPTH` arrays and objects, gets an invalid-request error
  (-32600) without being parsed (the standard library's parser recurses,
  and a few kilobytes of ``[`` would exhaust Python's recursion limit);
- JSON that is not a JSON-RPC message gets an invalid-request error.

An invalid-request error carries the line's ``id`` when one can be read
(else null), as JSON-RPC 2.0 asks, so the client waiting for that id is
answered. Blank lines are skipped. Everything else goes to the SDK
unchanged. Over HTTP the SDK itself answers such bodies (400 for JSON it
cannot parse, nested past its parser's limit included; 413 past 4 MiB).

The SDK diverts fd 0 to the null device while it serves (so nothing else
in the process, or a child, reads the protocol's input); as this module
hands it the input stream itself, it does the same for fd 0 here.
"""

from __future__ import annotations

import json
import os
import re
import sys
from contextlib import contextmanager
from itertools import accumulate, islice
from typing import IO, Any, Iterator, cast

import anyio
import anyio.to_thread
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.server.transport_security import DEFAULT_MAX_REQUEST_BODY_SIZE
from mcp.shared.message import SessionMessage

#: The longest line read (bytes, without its newline): the SDK's limit on
#: an HTTP request's body (4 MiB), so both transports take the same messages.
MAX_LINE_BYTES = DEFAULT_MAX_REQUEST_BODY_SIZE
#: The deepest nesting of arrays and objects a line may hold: far more than
#: any MCP message needs, and far below Python's recursion limit (1000),
#: which the standard library's JSON parser would otherwise hit, and the
#: SDK's own parser's (201).
MAX_DEPTH = 100

#: A JSON string, escapes included.
_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_BRACKET = re.compile(r"[\[\]{}]")
_STEP = {"[": 1, "{": 1, "]": -1, "}": -1}
#: A key "id" (or text that looks like one inside a string).
_ID_KEY = re.compile(r'"id"\s*:\s*')
#: A string or integer value, ending there.
_ID_VALUE = re.compile(r'("[^"\\]*(?:\\.[^"\\]*)*"|-?\d{1,30})\s*[,}]', re.DOTALL)
#: How many "id" keys are looked at to find the top-level one.
_ID_TRIES = 8


class TooLong(bytes):
    """The first :data:`MAX_LINE_BYTES` of a line that went on (the rest
    was read and dropped)."""


def refusal(line: str) -> types.JSONRPCError | None:
    """The error answering ``line``, or None when it is a JSON-RPC message."""
    if too_deep(line):
        # Refused unparsed: only depth() and _top_level_id() read it.
        return _error(_top_level_id(line), types.INVALID_REQUEST, f"Invalid Request: nested deeper than {MAX_DEPTH} levels")
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


def decoded(raw: bytes) -> str | types.JSONRPCError:
    """A line as read: its text for :func:`refusal`, or the error answering
    a line too long or not UTF-8."""
    if isinstance(raw, TooLong):
        request_id = _top_level_id(raw.decode("utf-8", "replace"))
        return _error(request_id, types.INVALID_REQUEST, f"Invalid Request: the line is longer than {MAX_LINE_BYTES} bytes")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        bad = raw[exc.start : exc.start + 1]
        return _error(None, types.PARSE_ERROR, f"Parse error: the line is not UTF-8 (byte {exc.start + 1} is {bad!r})")


def too_deep(text: str) -> bool:
    """True when ``text`` nests arrays and objects deeper than
    :data:`MAX_DEPTH`, found without a recursive parser (scans in C, no
    Python loop per character); malformed text is read as far as it goes."""
    brackets = _BRACKET.findall(_STRING.sub("", text))
    return len(brackets) > MAX_DEPTH and max(accumulate(map(_STEP.__getitem__, brackets))) > MAX_DEPTH


def _top_level_id(text: str) -> str | int | None:
    """The value of the top-level ``id`` key when it is a string or an
    integer that can be read without parsing the rest of ``text``."""
    for m in islice(_ID_KEY.finditer(text), _ID_TRIES):
        before = _STRING.sub("", text[: m.start()])
        if '"' in before:
            continue  # inside a string
        if sum(_STEP[b] for b in _BRACKET.findall(before)) != 1:
            continue  # a key of a nested object
        value = _ID_VALUE.match(text, m.end())
        if value is None:
            return None
        try:
            found = json.loads(value.group(1))
        except ValueError:
            return None
        return found if isinstance(found, (str, int)) and not isinstance(found, bool) else None
    return None


def _error(request_id: str | int | None, code: int, message: str) -> types.JSONRPCError:
    return types.JSONRPCError(jsonrpc="2.0", id=request_id, error=types.ErrorData(code=code, message=message))


def read_line(stream: IO[bytes]) -> bytes | None:
    """The next line of ``stream`` without its newline (None at the end):
    at most :data:`MAX_LINE_BYTES`, else a :class:`TooLong` holding its
    start, the rest read and dropped, so no line can fill the memory."""
    line = stream.readline(MAX_LINE_BYTES + 1)
    if not line:
        return None
    if line.endswith(b"\n"):
        return line[:-1]
    if len(line) <= MAX_LINE_BYTES:
        return line  # the last line, with no newline
    rest = line
    while rest and not rest.endswith(b"\n"):
        rest = stream.readline(1 << 16)
    return TooLong(line[:MAX_LINE_BYTES])


def next_line(stream: IO[bytes]) -> str | types.JSONRPCError | None:
    """The next line that is not blank, checked: its text when it is a
    JSON-RPC message, else the error answering it; None at the end."""
    while True:
        raw = read_line(stream)
        if raw is None:
            return None
        if not raw.strip():
            continue
        line = decoded(raw)
        if not isinstance(line, str):
            return line
        return refusal(line) or line


class CheckedLines:
    """The input lines the SDK may read: JSON-RPC messages only. Any other
    line is answered on the output stream given to :meth:`answer_on` before
    the next line is read, so answers keep the order of the lines."""

    def __init__(self, stream: IO[bytes]):
        self._stream = stream
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
            # Read and checked in a worker thread: a long line takes a
            # moment to check, and calls in flight are answered meanwhile.
            checked = await anyio.to_thread.run_sync(next_line, self._stream)
            if checked is None:
                raise StopAsyncIteration
            if isinstance(checked, str):
                return checked
            await self._ready.wait()
            await self._write.send(SessionMessage(checked))


@contextmanager
def _claimed_stdin() -> Iterator[IO[bytes]]:
    """The protocol's input on a private descriptor, with fd 0 pointed at
    the null device meanwhile (restored on exit)."""
    try:
        wire = os.dup(0)
    except OSError:  # no fd 0 to move: read sys.stdin as it is
        yield sys.stdin.buffer
        return
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    try:
        yield os.fdopen(wire, "rb", closefd=False)
    finally:
        # The wire stays open: a reader thread may still block on it, and a
        # closed descriptor could be reused under it.
        os.dup2(wire, 0)


async def serve_stdio(server: Server) -> None:
    """Serve ``server`` on stdin/stdout until stdin closes."""
    with _claimed_stdin() as wire:
        lines = CheckedLines(wire)
        # The SDK only iterates its stdin's lines, which CheckedLines yields.
        async with stdio_server(stdin=cast(Any, lines)) as (read, write):
            lines.answer_on(write)
            await server.run(read, write, server.create_initialization_options())
