"""The door of ``memext mcp --http``: a bearer token, and sessions that
cannot pile up.

Binding 127.0.0.1 keeps other machines out, not other accounts of this
one: every request must carry ``Authorization: Bearer <token>``, the token
kept in a 0600 file beside the config file (generated on first use, the
same across restarts so configured clients keep working). A request
without it gets 401 before it reaches the MCP SDK.

Streamable HTTP sessions live in the server until the client ends them.
Clients that never do (a script that exits without closing, a crash) must
not exhaust it: an idle session expires after ``idle_s`` seconds (the
SDK's idle timeout), and at ``max_sessions`` the session idle the longest
is ended to admit a new one (:class:`SessionGuard`, through the protocol's
own ``DELETE``), so a new client is served while any session is idle. Over
loopback TCP every client presents the same token, so no finer "client"
can be told apart for a per-client cap: the least recently used session
goes first instead. ``stateless`` serves each request on its own, with no
session at all (one-shot clients).
"""

from __future__ import annotations

import hmac
import json
import os
import secrets
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Awaitable, Callable, MutableMapping, Sequence

from .. import Config, app_paths
from ..for_faces import private_dir, private_file

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

#: The token file's name, in the config file's folder.
TOKEN_FILE_NAME = "mcp-token"
#: Seconds a session may go without a request before it expires.
DEFAULT_IDLE_S = 300.0
#: Sessions held at most; past it the one idle the longest is ended.
DEFAULT_MAX_SESSIONS = 1000

_SESSION_HEADER = b"mcp-session-id"


@dataclass(frozen=True)
class HttpOptions:
    """How ``memext mcp --http`` serves."""

    port: int
    host: str = "127.0.0.1"
    idle_s: float = DEFAULT_IDLE_S
    max_sessions: int = DEFAULT_MAX_SESSIONS
    stateless: bool = False

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}/mcp"


def token_path(config: Config) -> Path:
    """Where the server's bearer token is kept: beside the config file."""
    return (config.path or app_paths().config_file).parent / TOKEN_FILE_NAME


def load_or_create_token(path: Path) -> str:
    """The token in ``path``, or a new one written there (mode 0600).

    Written whole to a temporary file and linked into place, which fails
    when the file exists: two servers starting at once end up with the same
    token, and a reader never sees half of one.
    """
    path = Path(path)
    private_dir(path.parent, tighten=False)
    if not path.exists():
        tmp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            with open(fd, "w", encoding="ascii") as f:
                f.write(secrets.token_urlsafe(32) + "\n")
            try:
                os.link(tmp, path)
            except FileExistsError:
                pass  # another server made it first: use that one
        finally:
            tmp.unlink()
    private_file(path)
    token = path.read_text(encoding="ascii").strip()
    if len(token) < 16:
        from .. import MemextError

        raise MemextError(f"the MCP token file {path} holds no usable token: delete it and start the server again")
    return token


def client_snippet(options: HttpOptions, token: str, path: Path) -> str:
    """What to tell a client: the URL, the header, ready-made config."""
    header = f"Authorization: Bearer {token}"
    entry = {"mcpServers": {"memext": {"type": "http", "url": options.url, "headers": {"Authorization": f"Bearer {token}"}}}}
    return (
        f"memext mcp: clients must send the header '{header}' (the token is kept in {path})\n"
        f"  Claude Code: claude mcp add --transport http memext {options.url} --header '{header}'\n"
        f"  mcp.json:    {json.dumps(entry)}"
    )


def _header(scope: Scope, name: bytes) -> bytes | None:
    for key, value in scope.get("headers", ()):
        if key == name:
            return value
    return None


async def _reply(send: Send, status: int, message: str, extra: Sequence[tuple[bytes, bytes]] = ()) -> None:
    """A JSON-RPC error body (no request id) with HTTP ``status``."""
    body = json.dumps({"jsonrpc": "2.0", "id": None, "error": {"code": -32001, "message": message}}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()), *extra]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def _drain(receive: Receive) -> None:
    """Read a refused request's body, so the connection can be reused."""
    while True:
        message = await receive()
        if message["type"] != "http.request" or not message.get("more_body"):
            return


class BearerToken:
    """ASGI middleware: HTTP requests without the bearer token get 401."""

    def __init__(self, app: ASGIApp, token: str, token_file: Path):
        self.app = app
        self._expected = token.encode()
        self._token_file = token_file

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        scheme, _, given = (_header(scope, b"authorization") or b"").strip().partition(b" ")
        # Constant time: how much of a guess matched must not show in timing.
        # (The scheme's case does not matter, RFC 9110 §11.1.)
        if scheme.lower() != b"bearer" or not hmac.compare_digest(given.strip(), self._expected):
            await _drain(receive)
            await _reply(
                send,
                401,
                f"missing or wrong bearer token: send 'Authorization: Bearer <token>' with the token in {self._token_file}",
                [(b"www-authenticate", b'Bearer realm="memext"')],
            )
            return
        await self.app(scope, receive, send)


@dataclass
class _Session:
    last_used: float
    in_flight: int = 0


@dataclass
class SessionGuard:
    """ASGI middleware over the SDK's stateful app: keeps at most
    ``max_sessions`` sessions by ending the one idle the longest (a
    ``DELETE`` sent through the app, as a client closing it would) before a
    new one opens. Sessions the SDK expired after ``idle_s`` are forgotten
    here too. Only when every session has a request in flight is a new
    client refused (503)."""

    app: ASGIApp
    max_sessions: int
    idle_s: float
    clock: Callable[[], float] = time.monotonic
    _sessions: dict[bytes, _Session] = field(default_factory=dict)
    _opening: int = 0

    @property
    def open_sessions(self) -> int:
        """Sessions held now (those expired and not yet forgotten included)."""
        return len(self._sessions)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        session_id = _header(scope, _SESSION_HEADER)
        if session_id is None:
            await self._open(scope, receive, send)
            return
        session = self._sessions.get(session_id)
        if session is not None:
            session.in_flight += 1
        try:
            await self.app(scope, receive, send)
        finally:
            if session is not None:
                session.in_flight -= 1
                session.last_used = self.clock()
        if scope["method"] == "DELETE":
            self._sessions.pop(session_id, None)

    async def _open(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["method"] == "POST" and not await self._make_room(scope):
            await _drain(receive)
            await _reply(send, 503, f"all {self.max_sessions} sessions are in use: retry shortly")
            return
        opened: list[bytes] = []

        async def watch(message: MutableMapping[str, Any]) -> None:
            if message["type"] == "http.response.start" and message["status"] < 400:
                new_id = _header(message, _SESSION_HEADER)
                if new_id is not None:
                    opened.append(new_id)
            await send(message)

        self._opening += 1
        try:
            await self.app(scope, receive, watch)
        finally:
            self._opening -= 1
            for new_id in opened:
                self._sessions[new_id] = _Session(self.clock())

    async def _make_room(self, scope: Scope) -> bool:
        """True when a new session may open, after ending idle ones."""
        now = self.clock()
        for sid, s in list(self._sessions.items()):
            if s.in_flight == 0 and now - s.last_used > self.idle_s:
                del self._sessions[sid]  # the SDK has expired it already
        while len(self._sessions) + self._opening >= self.max_sessions:
            idle = [(s.last_used, sid) for sid, s in self._sessions.items() if s.in_flight == 0]
            if not idle:
                return False
            _, oldest = min(idle)
            del self._sessions[oldest]
            await self._end(scope, oldest)
        return True

    async def _end(self, scope: Scope, session_id: bytes) -> None:
        """End a session as its client would: DELETE with its id."""
        headers = [(b"host", _header(scope, b"host") or b"127.0.0.1"), (_SESSION_HEADER, session_id)]
        delete = {**scope, "method": "DELETE", "headers": headers, "query_string": b""}

        async def receive() -> MutableMapping[str, Any]:
            return {"type": "http.request", "body": b"", "more_body": False}

        async def discard(message: MutableMapping[str, Any]) -> None:
            return None

        await self.app(delete, receive, discard)
