"""Tray daemon benchmark: idle CPU, memory, and save-to-searchable latency.

    python bench/tray_bench.py [--out bench/out/tray] [--agents 5] [--files 1000]
                               [--idle-seconds 30] [--saves 10]

Runs the real headless daemon (``python -m memext.tray --headless``) in its own
process, watching ``--agents`` workspaces of ``--files`` Markdown files each,
keyword-only (no local model, no provider), with the default debounce
(1.5 s). Prints:

- the first sync of all agents (from start to every agent indexed);
- idle CPU of the daemon process over ``--idle-seconds`` (target under 1 %);
- its resident memory (target under 80 MB);
- the time from a file save to its text being found by a keyword search
  from another process (target under 3 s), median and worst.

Workspaces are generated once into ``--out`` and reused; the indexes, logs
and lock live there too (private XDG folders), never in the user's own.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gen_workspace import generate  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from memext.engine.config import load_config  # noqa: E402
from memext.engine.index import MemoryIndex  # noqa: E402

CLK_TCK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process, all threads."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK  # utime, stime


def memory_kb(pid: int) -> dict[str, int]:
    out = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM", "Threads"):
            out[key] = int(value.split()[0])
    return out


def write_config(out: Path, workspaces: list[Path]) -> Path:
    lines = [
        "[memory_search]",
        'provider = "none"',
        "[memory_search.store]",
        f"path = {json.dumps(str(out / 'index' / '{agent_id}.sqlite'))}",
        # The benchmark's own searches must not sync: the daemon does.
        "[memory_search.sync]",
        "on_search = false",
    ]
    for i, ws in enumerate(workspaces):
        lines += ["", "[[agents]]", f'id = "bench{i}"', f"workspace = {json.dumps(str(ws))}"]
    path = out / "config.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


def wait_for_log(log: Path, needle: str, count: int, timeout: float) -> float:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if log.exists() and log.read_text(errors="replace").count(needle) >= count:
            return time.monotonic()
        time.sleep(0.1)
    raise SystemExit(f"timed out waiting for {count} x {needle!r} in {log}")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", type=Path, default=ROOT / "bench" / "out" / "tray")
    p.add_argument("--agents", type=int, default=5)
    p.add_argument("--files", type=int, default=1000)
    p.add_argument("--idle-seconds", type=float, default=30.0)
    p.add_argument("--saves", type=int, default=10)
    args = p.parse_args()
    out: Path = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)

    workspaces = []
    for i in range(args.agents):
        ws = out / f"ws{i}-{args.files}"
        if not (ws / "memory").is_dir() or sum(1 for _ in (ws / "memory").iterdir()) < args.files - 1:
            generate(ws, args.files, lines=20, seed=i + 1)
        workspaces.append(ws)
    cfg = write_config(out, workspaces)
    for f in (out / "index").glob("*"):  # start from empty indexes every run
        f.unlink()
    env = {**os.environ}
    for var, sub in (("XDG_STATE_HOME", "state"), ("XDG_CONFIG_HOME", "config"), ("XDG_CACHE_HOME", "cache")):
        env[var] = str(out / sub)
    log = out / "state" / "memext" / "log" / "tray.log"
    if log.exists():
        log.unlink()

    print(f"tray daemon: {args.agents} agents x {args.files} files, keyword-only, debounce 1.5 s")
    started = time.monotonic()
    proc = subprocess.Popen([sys.executable, "-m", "memext.tray", "--headless", "--config", str(cfg)], cwd=ROOT, env=env)
    try:
        done = wait_for_log(log, "synced (startup)", args.agents, timeout=600)
        print(f"  first sync of all agents:      {done - started:6.1f} s ({args.agents * args.files} files)")
        time.sleep(3)  # let the start-up settle
        mem = memory_kb(proc.pid)

        c0, t0 = cpu_seconds(proc.pid), time.monotonic()
        time.sleep(args.idle_seconds)
        c1, t1 = cpu_seconds(proc.pid), time.monotonic()
        idle = (c1 - c0) / (t1 - t0) * 100
        print(f"  idle CPU over {t1 - t0:4.0f} s:           {idle:6.2f} %   (target < 1 %)")
        print(
            f"  resident memory (RSS):         {mem['VmRSS'] / 1024:6.1f} MB  (target < 80 MB; peak {mem['VmHWM'] / 1024:.1f} MB, {mem['Threads']} threads)"
        )

        config = load_config(cfg)
        indexes = [MemoryIndex(a, provider=None) for a in config.agents]
        latencies = []
        for n in range(args.saves):
            idx = indexes[n % len(indexes)]
            token = "zq" + uuid.uuid4().hex[:12]
            target = sorted((idx.agent.workspace / "memory").iterdir())[(n * 37) % args.files]
            with open(target, "a", encoding="utf-8") as f:
                f.write(f"\n- benchmark note {token}\n")
            saved = time.monotonic()
            rel = target.relative_to(idx.agent.workspace).as_posix()
            deadline = saved + 30
            while time.monotonic() < deadline:
                # The snippet may stop before the appended line: match the file.
                if any(r.path == rel for r in idx.search(token, min_score=0.0)):
                    latencies.append(time.monotonic() - saved)
                    break
                time.sleep(0.02)
            else:
                raise SystemExit(f"save {n}: {token} not searchable after 30 s")
            time.sleep(0.5)
        for idx in indexes:
            idx.close()
        mem = memory_kb(proc.pid)
        print(
            f"  save -> searchable (keyword):  {statistics.median(latencies):6.2f} s median, "
            f"{max(latencies):.2f} s worst over {len(latencies)} saves (target < 3 s)"
        )
        print(f"  RSS after the saves:           {mem['VmRSS'] / 1024:6.1f} MB")
    finally:
        proc.terminate()
        try:
            rc = proc.wait(60)
        except subprocess.TimeoutExpired:
            proc.kill()
            rc = proc.wait()
    print(f"  daemon exit code after SIGTERM: {rc}")


if __name__ == "__main__":
    main()
