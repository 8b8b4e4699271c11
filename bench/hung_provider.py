"""How long an embedding server that stops answering holds up memext:
the writer lock of ``memext index``, and searches of the same agent and of
another agent made meanwhile from other processes.

    python bench/hung_provider.py [--behaviour hang|trickle|trickle-headers|all] [--case first|update|all]
                                  [--query-deadline-ms MS]

A real HTTP server on 127.0.0.1 (tests/servers.py, the OpenAI wire format)
answers normally while two agents are indexed, then, per behaviour:
``hang`` accepts each request and never answers, ``trickle`` answers one
byte every 2 s (every read well inside any read timeout),
``trickle-headers`` trickles from the status line on. Then ``memext index
-a alpha`` runs (``first``: alpha's first index, nothing to probe;
``update``: alpha holds vectors and one file changed, so the sync asks the
model its vector size first), and once its writer lock is seen taken,
``memext search`` runs for alpha and for beta (indexed before, with
vectors) from two more processes; once the index command has given up,
beta is searched again, the server still silent. All with the default
deadlines (nothing shortened): the figures are what a user waits.
``--query-deadline-ms`` sets ``remote.query_deadline_ms`` (60000 makes a
search wait as long as a sync's call, as every search did before the
query had a deadline of its own).

Printed per run: how long the index command ran and held the writer lock
(seen by this process trying the lock every 50 ms, as another writer
would), and how long each search took to answer, beside the floor of the
same search against the healthy server measured in the same run (the
median of three); the last line of a run is beta's search (another agent,
the one that must not wait behind alpha's sync) against its floor.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))
from servers import OPENAI_KEY, EmbeddingAPIServer  # noqa: E402

from memext.engine.config import load_config  # noqa: E402
from memext.engine.errors import LockTimeout  # noqa: E402
from memext.engine.store.drivers import writer_lock  # noqa: E402

BEHAVIOURS = {
    "hang": {"status": None, "delay_s": 3600.0, "times": None},
    "trickle": {"status": None, "trickle_s": 2.0, "times": None},
    "trickle-headers": {"status": None, "trickle_s": 2.0, "trickle_headers": True, "times": None},
}


def write_workspace(ws: Path, topic: str) -> None:
    (ws / "memory").mkdir(parents=True, exist_ok=True)
    (ws / "MEMORY.md").write_text(f"# Memory\n\n- The grey heron nests by the {topic} river.\n- Anna leads the billing team.\n")
    for day in range(1, 6):
        (ws / "memory" / f"2026-03-0{day}.md").write_text(
            f"# 2026-03-0{day}\n\n- Walked along the {topic} river and counted {day + 2} herons.\n- Reviewed the deploy checklist.\n"
        )


class Run:
    """One isolated memext set-up: user folders, a config, two agents."""

    def __init__(self, root: Path, base_url: str, query_deadline_ms: int | None = None):
        self.root = root
        self.env = dict(os.environ)
        for var, sub in (("XDG_CONFIG_HOME", "config"), ("XDG_STATE_HOME", "state"), ("XDG_CACHE_HOME", "cache")):
            self.env[var] = str(root / sub)
        self.env["OPENAI_API_KEY"] = OPENAI_KEY
        self.env.pop("MEMEXT_CONFIG", None)
        self.config = root / "config" / "memext" / "config.toml"
        self.config.parent.mkdir(parents=True)
        agents = ""
        for name, topic in (("alpha", "Thames"), ("beta", "Severn")):
            write_workspace(root / name, topic)
            agents += f'\n[[agents]]\nid = "{name}"\nworkspace = "{root / name}"\n'
        query = "" if query_deadline_ms is None else f"query_deadline_ms = {query_deadline_ms}\n"
        self.config.write_text(f'[memory_search]\nprovider = "openai"\n[memory_search.remote]\nbase_url = "{base_url}"\n{query}{agents}')

    def memext(self, *args: str) -> subprocess.Popen:
        return subprocess.Popen(
            [sys.executable, "-m", "memext", *args], env=self.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )

    def run(self, *args: str) -> tuple[float, int, str, str]:
        started = time.monotonic()
        p = self.memext(*args)
        out, err = p.communicate()
        return time.monotonic() - started, p.returncode, out, err

    def lock_of(self, agent_id: str):
        os.environ.update({k: self.env[k] for k in ("XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME")})
        agent = load_config(self.config).agent(agent_id)
        return agent, agent.db_path()


def watch_lock(agent, db: Path, child: subprocess.Popen, seen: threading.Event) -> tuple[float | None, float | None]:
    """(seconds from the start of watching until the lock was first seen
    taken, seconds it stayed taken); Nones when never seen taken."""
    started = time.monotonic()
    taken_at = None
    while True:
        try:
            with writer_lock(agent, db, timeout=0):
                if taken_at is not None:
                    return taken_at - started, time.monotonic() - taken_at
        except LockTimeout:
            if taken_at is None:
                taken_at = time.monotonic()
                seen.set()
        if child.poll() is not None and taken_at is None:
            seen.set()
            return None, None
        time.sleep(0.05)


def one(server: EmbeddingAPIServer, behaviour: str, case: str, query_deadline_ms: int | None) -> None:
    with tempfile.TemporaryDirectory(prefix="memext-hung-") as tmp:
        run = Run(Path(tmp), server.openai_base_url, query_deadline_ms)
        server.clear_faults()
        _, rc, _, err = run.run("index", "--all") if case == "update" else run.run("index", "-a", "beta")
        assert rc == 0, err
        # The floor: the median of three healthy searches (a search's start-up
        # on a machine shared with others varies by seconds).
        searched = ("alpha", "beta") if case == "update" else ("beta",)  # alpha's first index is the index command's
        floors = {a: sorted(run.run("search", "-a", a, "heron river")[0] for _ in range(3)) for a in searched}
        floor = {a: times[1] for a, times in floors.items()}
        if case == "update":
            (run.root / "alpha" / "memory" / "2026-03-09.md").write_text("# 2026-03-09\n\n- A kingfisher by the Thames weir.\n")
        server.add_fault("openai.embeddings", **BEHAVIOURS[behaviour])
        agent, db = run.lock_of("alpha")
        started = time.monotonic()
        child = run.memext("index", "-a", "alpha")
        seen = threading.Event()
        result: dict[str, object] = {}
        watcher = threading.Thread(target=lambda: result.setdefault("lock", watch_lock(agent, db, child, seen)))
        watcher.start()
        seen.wait()
        time.sleep(1.0)  # the searches start while the sync is waiting for the provider
        searches = {}

        def search(agent_id: str) -> None:
            searches[agent_id] = run.run("search", "-a", agent_id, "heron river")

        threads = [threading.Thread(target=search, args=(a,)) for a in ("alpha", "beta")]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        out, err = child.communicate()
        total = time.monotonic() - started
        watcher.join()
        after = run.run("search", "-a", "beta", "heron river")  # the server still silent, the failure written down
        server.clear_faults()
        first_seen, held = result["lock"]  # type: ignore[misc]
        deadline = "default" if query_deadline_ms is None else f"{query_deadline_ms}"
        print(f"\n== server {behaviour}, {case} (memext index -a alpha; remote.query_deadline_ms {deadline})")
        print(f"   index: exit {child.returncode} after {total:.1f} s; writer lock held {held:.1f} s" if held else "   lock never seen")
        for line in (err.strip().splitlines() or [""])[-2:]:
            print(f"      {line[:150]}")
        for agent_id, (secs, rc, sout, serr) in searches.items():
            base = floor.get(agent_id)
            print(f"   search -a {agent_id}: exit {rc} after {secs:.1f} s" + (f" (healthy floor {base:.1f} s)" if base else ""))
            notes = [ln for ln in serr.strip().splitlines() if ln][:2]
            for line in notes:
                print(f"      {line[:150]}")
        print(f"   search -a beta once the index gave up: exit {after[1]} after {after[0]:.1f} s (healthy floor {floor['beta']:.1f} s)")
        waited = searches["beta"][0]
        print(
            f"   => another agent's search while the sync waits: {waited:.1f} s, floor {floor['beta']:.1f} s "
            f"(healthy {floors['beta'][0]:.1f}-{floors['beta'][-1]:.1f} s), {waited - floor['beta']:+.1f} s over it; "
            f"load {os.getloadavg()[0]:.2f}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--behaviour", choices=[*BEHAVIOURS, "all"], default="all")
    parser.add_argument("--case", choices=["first", "update", "all"], default="all")
    parser.add_argument("--query-deadline-ms", type=int, default=None, help="remote.query_deadline_ms (default: memext's)")
    args = parser.parse_args()
    behaviours = list(BEHAVIOURS) if args.behaviour == "all" else [args.behaviour]
    cases = ["first", "update"] if args.case == "all" else [args.case]
    print(f"load: {os.getloadavg()[0]:.2f} (1 min), {os.cpu_count()} CPUs")
    with EmbeddingAPIServer() as server:
        for behaviour in behaviours:
            for case in cases:
                one(server, behaviour, case, args.query_deadline_ms)


if __name__ == "__main__":
    main()
