"""A real `memext mcp --http` process for the MCP server tests."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import httpx2

#: An initialize request, as a client opening a session sends it.
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "0"}},
}
#: The headers a Streamable HTTP POST needs (besides the token).
POST_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def server_env(config: Path) -> dict[str, str]:
    """What the server needs of this test's environment (the SDK starts
    stdio servers with a minimal one)."""
    keep = {k: v for k, v in os.environ.items() if k.startswith("XDG_")}
    return {**keep, "MEMEXT_CONFIG": str(config)}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass(frozen=True)
class HttpServer:
    """A running `memext mcp --http`: where it is and its token."""

    url: str
    token_file: Path
    process: subprocess.Popen

    @property
    def token(self) -> str:
        return self.token_file.read_text(encoding="ascii").strip()


@contextmanager
def http_server(config: Path, *args: str) -> Iterator[HttpServer]:
    """`memext mcp --http PORT *args` for ``config``, stopped on exit."""
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "memext", "mcp", "--http", str(port), *args],
        env={**os.environ, **server_env(config)},
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert proc.poll() is None, proc.stderr.read()
                assert time.monotonic() < deadline, "the HTTP server did not start"
                time.sleep(0.1)
        yield HttpServer(f"http://127.0.0.1:{port}/mcp", config.parent / "mcp-token", proc)
    finally:
        proc.terminate()
        proc.wait(30)
        proc.stderr.close()


def http_client(token: str | None) -> httpx2.AsyncClient:
    """An HTTP client sending the server's bearer token (None: no token)."""
    headers = {"Authorization": f"Bearer {token}"} if token is not None else {}
    return httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30, read=300))


def payload(result) -> dict:
    """A tool result's JSON, sent once: as its text content, with no
    structured content repeating it."""
    assert result.structured_content is None, "the payload is sent twice"
    assert len(result.content) == 1, result.content
    return json.loads(result.content[0].text)


def cited_path(hit: dict) -> str:
    """The file a search hit cites (its citation is ``path:start-end``)."""
    return hit["citation"].rsplit(":", 1)[0]
