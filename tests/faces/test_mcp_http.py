"""`memext mcp --http`: the bearer token that keeps other local users out,
and sessions that clients never close, against the real server process."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import tempfile
import urllib.error
import urllib.request
from pathlib import Path
from typing import Callable

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp_process import INITIALIZE, POST_HEADERS, http_client, http_server, payload
from memext_helpers import write_config

NOBODY = 65534


async def _initialize(http: httpx2.AsyncClient, url: str) -> httpx2.Response:
    return await http.post(url, json=INITIALIZE, headers=POST_HEADERS)


async def _served(url: str, token: str) -> None:
    """A real MCP client with the token opens a session and searches."""
    async with http_client(token) as http:
        async with Client(streamable_http_client(url, http_client=http)) as client:
            found = await client.call_tool("memory_search", {"query": "How much food does Biscuit get per day?"})
            assert not found.is_error and "55 g" in payload(found)["results"][0]["snippet"]


@pytest.fixture
def shared_folder():
    """A config folder other local users may enter (as a home folder often
    is): only the token file's own mode keeps them from reading it."""
    folder = Path(tempfile.mkdtemp(prefix="memext-mcp-"))
    folder.chmod(0o755)
    yield folder / "cfg"
    subprocess.run(["rm", "-rf", str(folder)], check=True)


def test_only_a_client_with_the_token_is_served(example_workspace, shared_folder):
    config = write_config(shared_folder, {"example": example_workspace})
    shared_folder.chmod(0o755)

    async def main(url: str, token: str) -> None:
        async with http_client(None) as http:
            refused = await _initialize(http, url)
            assert refused.status_code == 401 and refused.headers["www-authenticate"].startswith("Bearer")
            assert "mcp-session-id" not in refused.headers
            assert "bearer token" in refused.json()["error"]["message"]
            # Every request is checked, not only the opening one.
            assert (await http.get(url)).status_code == 401
            assert (await http.delete(url, headers={"mcp-session-id": "x"})).status_code == 401
        async with http_client(token[:-1] + ("A" if token[-1] != "A" else "B")) as http:
            assert (await _initialize(http, url)).status_code == 401
        for header in (token, f"Basic {token}", f"Bearer {token[:10]}", f"Bearer {token}x", "Bearer", ""):
            async with httpx2.AsyncClient(headers={"Authorization": header}) as http:
                assert (await _initialize(http, url)).status_code == 401, header
        async with httpx2.AsyncClient(headers={"Authorization": f"bearer {token}"}) as http:
            assert (await _initialize(http, url)).status_code == 200  # the scheme's case does not matter
        async with http_client(token) as http:
            opened = await _initialize(http, url)
            assert opened.status_code == 200 and opened.headers["mcp-session-id"]
            # A session opened with the token is refused without it.
            session = {"mcp-session-id": opened.headers["mcp-session-id"], **POST_HEADERS}
            async with http_client(None) as stranger:
                listing = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
                assert (await stranger.post(url, json=listing, headers=session)).status_code == 401
        await _served(url, token)

    with http_server(config) as server:
        token = server.token
        assert stat.S_IMODE(os.stat(server.token_file).st_mode) == 0o600 and len(token) >= 32
        anyio.run(main, server.url, token)
    # The same token after a restart: configured clients keep working.
    with http_server(config) as server:
        assert server.token == token
        anyio.run(_served, server.url, token)


def _probe(url: str, token_file: Path) -> dict:
    """What another local user gets: can it read the token file, and what
    does the server answer it without the token or with a guessed one."""
    out: dict = {}
    try:
        token_file.read_text()
        out["read_token"] = True
    except PermissionError:
        out["read_token"] = False
    for name, headers in [("none", {}), ("guess", {"Authorization": "Bearer " + "x" * 43})]:
        req = urllib.request.Request(url, data=json.dumps(INITIALIZE).encode(), method="POST", headers={**POST_HEADERS, **headers})
        try:
            with urllib.request.urlopen(req, timeout=30) as r:
                out[name] = [r.status, r.read().decode(errors="replace")]
        except urllib.error.HTTPError as e:
            out[name] = [e.code, e.read().decode(errors="replace")]
    return out


def _as_user(uid: int, probe: Callable[[], dict]) -> dict:
    """``probe()`` in a forked child that has become user ``uid`` (it reads
    nothing of this checkout: what it uses is imported before the fork)."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns into pytest
        code = 1
        try:
            os.close(read_end)
            os.setgroups([])
            os.setgid(uid)
            os.setuid(uid)
            with os.fdopen(write_end, "w") as out:
                out.write(json.dumps(probe()))
            code = 0
        finally:
            os._exit(code)
    os.close(write_end)
    with os.fdopen(read_end) as got:
        text = got.read()
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0 and text, "the probe as another user failed"
    return json.loads(text)


@pytest.mark.skipif(os.geteuid() != 0, reason="switching to another local user needs root")
def test_another_local_user_is_refused(example_workspace, shared_folder):
    config = write_config(shared_folder, {"example": example_workspace})
    shared_folder.chmod(0o755)
    (example_workspace / "MEMORY.md").write_text("The vault code is 4471.\n", encoding="utf-8")
    with http_server(config) as server:
        token = server.token
        seen = _as_user(NOBODY, lambda: _probe(server.url, server.token_file))
        assert seen["read_token"] is False
        for attempt in ("none", "guess"):
            status, body = seen[attempt]
            assert status == 401 and "4471" not in body and "Biscuit" not in body
        # This user, with the token, is still served.
        anyio.run(_served, server.url, token)


def _rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")


def test_unclosed_sessions_do_not_lock_out_a_new_client(example_workspace, tmp_path):
    """10,000 sessions opened and never closed: at the cap the one idle the
    longest is ended for a newcomer, idle ones expire, memory stays flat,
    and a new client is served."""
    config = write_config(tmp_path / "cfg", {"example": example_workspace})
    abandoned, at_once = 10_000, 25  # and one more first

    async def main(server) -> None:
        url, token = server.url, server.token
        ids: list[str] = []
        async with http_client(token) as http:

            async def open_many(n: int) -> None:
                for _ in range(n):
                    opened = await _initialize(http, url)
                    assert opened.status_code == 200, opened.text
                    ids.append(opened.headers["mcp-session-id"])

            await open_many(1)
            before = _rss_mb(server.process.pid)
            async with anyio.create_task_group() as tg:
                for _ in range(at_once):
                    tg.start_soon(open_many, abandoned // at_once)
            grown = _rss_mb(server.process.pid) - before
            assert grown < 60, f"the server grew by {grown:.0f} MB"
            # At the cap of 100, the oldest were ended for the newer ones.
            listing = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
            oldest = await http.post(url, json=listing, headers={"mcp-session-id": ids[0], **POST_HEADERS})
            assert oldest.status_code == 404
            await _served(url, token)
            # And an idle session expires by itself (after 2 s here).
            recent = {"mcp-session-id": ids[-1], **POST_HEADERS}
            await anyio.sleep(3.5)
            assert (await http.post(url, json=listing, headers=recent)).status_code == 404
        await _served(url, token)

    with http_server(config, "--session-idle", "2", "--max-sessions", "100") as server:
        anyio.run(main, server)


def test_stateless_serves_one_shot_clients(example_workspace, tmp_path):
    config = write_config(tmp_path / "cfg", {"example": example_workspace})

    async def main(url: str, token: str) -> None:
        async with http_client(token) as http:
            for _ in range(20):
                opened = await _initialize(http, url)
                assert opened.status_code == 200 and "mcp-session-id" not in opened.headers
            call = {
                "jsonrpc": "2.0",
                "id": 3,
                "method": "tools/call",
                "params": {"name": "memory_search", "arguments": {"query": "Biscuit food"}},
            }
            answered = await http.post(url, json=call, headers={"mcp-protocol-version": "2025-06-18", **POST_HEADERS})
            assert answered.status_code == 200 and "55 g" in answered.text
        async with http_client(None) as http:
            assert (await _initialize(http, url)).status_code == 401

    with http_server(config, "--stateless") as server:
        anyio.run(main, server.url, server.token)


def test_deep_huge_and_undecodable_bodies_are_refused_and_the_session_goes_on(example_workspace, tmp_path):
    """What kills a parser that recurses (JSON nested thousands deep), a body
    past the size limit and bytes that are not UTF-8 each get an HTTP error
    from the SDK's own checks, and the same session's next call is answered."""
    config = write_config(tmp_path / "cfg", {"example": example_workspace})

    def call(query: str) -> bytes:
        return (
            f'{{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{{"name":"memory_search","arguments":{{"query":{query}}}}}}}'.encode()
        )

    async def main(url: str, token: str) -> None:
        async with http_client(token) as http:
            opened = await _initialize(http, url)
            session = {**POST_HEADERS, "mcp-session-id": opened.headers["mcp-session-id"], "mcp-protocol-version": "2025-06-18"}
            await http.post(url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=session)
            shallow = await http.post(url, content=call("[" * 10 + "]" * 10), headers=session)
            assert shallow.status_code == 200 and "query must be string" in shallow.text
            for depth in (1_500, 100_000):
                for nested in ("[" * depth + "]" * depth, '{"a":' * depth + "1" + "}" * depth):
                    deep = await http.post(url, content=call(nested), headers=session)
                    assert deep.status_code == 400 and deep.json()["error"]["code"] == -32700, deep.text[:300]
            huge = await http.post(url, content=call(json.dumps("x" * (5 << 20))), headers=session)
            assert huge.status_code == 413
            latin1 = await http.post(url, content=call('"cafe"').replace(b"cafe", b"caf\xe9"), headers=session)
            assert latin1.status_code == 400 and latin1.json()["error"]["code"] == -32700
            later = await http.post(url, content=call('"Biscuit food"'), headers=session)
            assert later.status_code == 200 and "55 g" in later.text

    with http_server(config) as server:
        anyio.run(main, server.url, server.token)
        assert server.process.poll() is None
