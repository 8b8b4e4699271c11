"""Throughput and latency of ``memory_search`` over MCP Streamable HTTP
with many concurrent clients.

    python bench/mcp_http_bench.py [--clients 50 200] [--calls 1000] [--seconds 60]
                                   [--provider none|local] [--model PATH] [--stateless]

Starts the real ``memext mcp --http`` on 127.0.0.1 over a copy of the
example memory (example/), waits for its first build, then for each
concurrency level runs that many clients at once: each opens its own
session (initialize, initialized, with the server's bearer token) and
calls ``memory_search`` in a loop with a set of questions until the level
has made ``--calls`` calls or ``--seconds`` have passed. The clients speak
JSON-RPC over HTTP directly (one pooled HTTP client, a connection per
client) so that the load generator stays light beside the server on the
same machine. Prints calls/s, p50/p99 of a call and the CPU time a call
cost the server and the load generator per level; every answer
is checked (no JSON-RPC error, no tool error). With ``--stateless`` the
server keeps no sessions and each call stands alone.

The floor, measured in the same run at each level (before memext, so a
change in the machine's load shows in both): an MCP server that does
nothing (bench/mcp_floor_server.py: the same SDK, transport and uvicorn
settings, a no-op ``memory_search``), driven by the same clients. On a
shared machine compare memext with the floor, not with figures of another
day.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import anyio
import httpx2
from mcp_bench import DEFAULT_MODEL, QUESTIONS, example_memory

#: The MCP protocol version a stateless client announces.
PROTOCOL = "2025-06-18"

HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


@dataclass(frozen=True)
class Level:
    """One concurrency level's outcome."""

    clients: int
    calls: int
    seconds: float
    latencies_ms: list[float]
    #: Sessions whose closing DELETE the server dropped.
    unclosed: int = 0
    #: CPU seconds the server and this load generator spent on the level's
    #: calls (None where the server's cannot be read: no /proc).
    server_cpu: float | None = None
    client_cpu: float = 0.0

    @property
    def rate(self) -> float:
        return self.calls / self.seconds

    def percentile(self, q: float) -> float:
        ms = sorted(self.latencies_ms)
        return ms[min(len(ms) - 1, int(q * len(ms)))]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _message(response: httpx2.Response) -> dict:
    """The JSON-RPC message of a response (JSON or one SSE event)."""
    if response.headers.get("content-type", "").startswith("application/json"):
        return response.json()
    for line in response.text.splitlines():
        if line.startswith("data:") and line[5:].strip():
            return json.loads(line[5:])
    raise RuntimeError(f"no message in the answer (HTTP {response.status_code}): {response.text[:200]}")


class BenchClient:
    """One MCP client: a session (unless stateless) and its calls."""

    def __init__(self, http: httpx2.AsyncClient, url: str, stateless: bool):
        self.http, self.url, self.stateless = http, url, stateless
        self.headers = dict(HEADERS)
        self.next_id = 0

    async def _post(self, body: dict) -> httpx2.Response:
        response = await self.http.post(self.url, json=body, headers=self.headers)
        if response.status_code >= 400:
            raise RuntimeError(f"HTTP {response.status_code}: {response.text[:200]}")
        return response

    async def open(self) -> None:
        if self.stateless:
            self.headers["mcp-protocol-version"] = PROTOCOL
            return
        init = {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {"protocolVersion": PROTOCOL, "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}},
        }
        response = await self._post(init)
        self.headers["mcp-session-id"] = response.headers["mcp-session-id"]
        self.headers["mcp-protocol-version"] = PROTOCOL
        await self._post({"jsonrpc": "2.0", "method": "notifications/initialized"})

    async def search(self, query: str) -> None:
        self.next_id += 1
        call = {
            "jsonrpc": "2.0",
            "id": self.next_id,
            "method": "tools/call",
            "params": {"name": "memory_search", "arguments": {"query": query}},
        }
        answer = _message(await self._post(call))
        if "error" in answer or answer["result"].get("isError"):
            raise RuntimeError(f"the call failed: {json.dumps(answer)[:300]}")

    async def close(self) -> bool:
        """End the session; False when the server dropped the connection
        instead (counted, not timed: the level's calls are all made)."""
        if "mcp-session-id" in self.headers:
            try:
                await self.http.delete(self.url, headers=self.headers)
            except httpx2.TransportError:
                return False
        return True


def _cpu_seconds(pid: int | None) -> float | None:
    """CPU seconds (user + system) process ``pid`` has used, or this
    process's own when ``pid`` is None; None where it cannot be read."""
    if pid is None:
        t = os.times()
        return t.user + t.system
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def _level(url: str, token: str, clients: int, calls: int, seconds: float, stateless: bool, pid: int | None = None) -> Level:
    # Idle connections are dropped before the server's keep-alive (uvicorn's
    # 5 s) can close them under a request: a race that fails the call.
    limits = httpx2.Limits(max_connections=clients, max_keepalive_connections=clients, keepalive_expiry=2)
    headers = {"Authorization": f"Bearer {token}"}
    latencies: list[float] = []
    made = 0
    async with httpx2.AsyncClient(headers=headers, limits=limits, timeout=httpx2.Timeout(120)) as http:
        bench_clients = [BenchClient(http, url, stateless) for _ in range(clients)]
        async with anyio.create_task_group() as tg:
            for c in bench_clients:
                tg.start_soon(c.open)
        start = time.perf_counter()
        stop_at = start + seconds
        server_cpu, client_cpu = _cpu_seconds(pid) if pid else None, _cpu_seconds(None) or 0.0

        async def run(client: BenchClient, offset: int) -> None:
            nonlocal made
            i = offset
            while made < calls and time.perf_counter() < stop_at:
                made += 1
                t0 = time.perf_counter()
                await client.search(QUESTIONS[i % len(QUESTIONS)])
                latencies.append((time.perf_counter() - t0) * 1000)
                i += 1

        async with anyio.create_task_group() as tg:
            for n, c in enumerate(bench_clients):
                tg.start_soon(run, c, n)
        elapsed = time.perf_counter() - start
        server_after = _cpu_seconds(pid) if pid else None
        server_used = server_after - server_cpu if server_after is not None and server_cpu is not None else None
        client_used = (_cpu_seconds(None) or 0.0) - client_cpu
        closed: list[bool] = []

        async def close(client: BenchClient) -> None:
            closed.append(await client.close())

        async with anyio.create_task_group() as tg:
            for c in bench_clients:
                tg.start_soon(close, c)
    return Level(clients, len(latencies), elapsed, latencies, closed.count(False), server_used, client_used)


def _start_server(args: list[str], port: int, env: dict[str, str]) -> subprocess.Popen:
    proc = subprocess.Popen([sys.executable, *args], env={**os.environ, **env}, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return proc
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()
                sys.exit("the server did not start")
            time.sleep(0.1)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--clients", type=int, nargs="+", default=[50, 200])
    ap.add_argument("--calls", type=int, default=1000, help="calls per level at most")
    ap.add_argument("--seconds", type=float, default=60, help="seconds per level at most")
    ap.add_argument("--provider", choices=["local", "none"], default="none")
    ap.add_argument("--model", type=Path, default=DEFAULT_MODEL)
    ap.add_argument("--stateless", action="store_true")
    args = ap.parse_args()
    stateless = ["--stateless"] if args.stateless else []
    with example_memory(args.provider, args.model) as (folder, config):
        port, floor_port = _free_port(), _free_port()
        proc = _start_server(["-m", "memext", "mcp", "--http", str(port), *stateless], port, {"MEMEXT_CONFIG": str(config)})
        floor = _start_server([str(Path(__file__).with_name("mcp_floor_server.py")), str(floor_port), *stateless], floor_port, {})
        try:
            url, floor_url = f"http://127.0.0.1:{port}/mcp", f"http://127.0.0.1:{floor_port}/mcp"
            token = (folder / "mcp-token").read_text(encoding="ascii").strip()
            for where in (url, floor_url):  # warm: first build, caches
                anyio.run(_level, where, token, 1, 20, 120.0, args.stateless)
            levels = []
            for n in args.clients:
                below = anyio.run(_level, floor_url, token, n, args.calls, args.seconds, args.stateless, floor.pid)
                levels.append((anyio.run(_level, url, token, n, args.calls, args.seconds, args.stateless, proc.pid), below))
        finally:
            for p in (proc, floor):
                p.terminate()
                p.wait(30)
    mode = "stateless" if args.stateless else "a session per client"
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"memory_search over MCP Streamable HTTP, example memory, provider {args.provider}, {mode}, {os.cpu_count()} CPUs, load {load}")
    for lv, below in levels:
        print(f"{lv.clients:4d} clients: memext {_figures(lv)}")
        print(f"{'':12} floor  {_figures(below)}  (an MCP server that does nothing)")
        print(f"{'':12} memext/floor: calls/s {lv.rate / below.rate:.2f}x, p99 {lv.percentile(0.99) / below.percentile(0.99):.2f}x")


def _figures(lv: Level) -> str:
    p50 = statistics.median(lv.latencies_ms)
    unclosed = f", {lv.unclosed} session closes dropped" if lv.unclosed else ""
    server = f"server {1000 * lv.server_cpu / lv.calls:.1f}, " if lv.server_cpu is not None else ""
    cpu = f"; CPU ms a call: {server}load generator {1000 * lv.client_cpu / lv.calls:.1f}"
    return f"{lv.calls:5d} calls in {lv.seconds:5.1f} s = {lv.rate:6.1f} calls/s, p50 {p50:7.1f} ms, p99 {lv.percentile(0.99):7.1f} ms{unclosed}{cpu}"


if __name__ == "__main__":
    main()
