"""Cold start of a one-shot ``memext search``, next to its floors.

    python bench/cold_start.py [--out bench/out] [--sizes 1000,10000] [--runs 5]

For each workspace size (files of 130 lines from bench/gen_workspace.py,
about 11 chunks each, indexed keyword-only), measured in the same run and
interleaved call by call so that load on the machine hits all alike
(median of ``--runs``):

- ``python -c pass``: the interpreter's own start, the floor of any command;
- a bare click command answering from the same index (:data:`click_floors.CLICK_FLOOR`):
  the interpreter, click, the SQLite binding, one FTS5 query of the terms a
  search keeps and the six best texts printed, the floor of any click
  command that answers from the index;
- the same command walking the workspace first (:data:`click_floors.CLICK_WALK_FLOOR`:
  a bare ``os.scandir`` + ``stat`` walk, nothing compared), the floor of
  any command that checks the memory files before answering, as a
  default search does;
- the same bare command after importing every module a ``memext search
  --no-sync`` loads, in its order, none of them called (:data:`click_floors.CODE_FLOOR`):
  the floor of any command that runs this code, which a search's own work
  is measured above;
- ``memext search --no-sync``: start, imports, opening the index, search;
- ``memext search``: the same plus the check for changed files that a
  default search makes before searching (nothing changed here);
- a question (``what did we decide to do about the ...``, ``--no-sync``):
  common words, which a search counts before dropping them;
- the default search again, beside both click floors, while a keeper in
  this process watches the agent and vouches for its index (DESIGN.md
  §13): the search then skips its walk;
- in this process: that check (``MemoryIndex.needs_sync()``: a scan of the
  memory folders plus the index's file list), again on an open index (the
  file list kept) and the first on a freshly opened one (as a one-shot
  search makes it), next to a bare ``os.scandir`` + ``stat`` walk of the
  same folders, the floor of any such scan, interleaved.

The repository's example notes (``example/``: real text, with dashes,
accents and arrows) are measured the same way: ``--no-sync`` with the
Unicode tables in the cache folder, and on a machine that has not worked
them out yet (an empty cache folder before every call).

With ``--model PATH`` (a GGUF embedding model), the example notes are
also searched with the local model, next to the floor of any process
that embeds a query with it: ``import llama_cpp``, load the model (the
same context size and threads) and embed one query, bare.

``python -c pass`` runs this interpreter; in an editable (development)
install its startup includes the install's import hook (about 13 ms: it
imports pathlib and importlib.util, which memext imports anyway), so
``--floor-python`` can name the interpreter of a wheel install instead,
whose ``python -c pass`` is what a user's is.

``--base-python`` names the interpreter of another memext install (an
older revision, say): its ``memext search`` runs in the same interleaved
loop on the same index, for a before/after ratio; ``--base-tree`` names
a source tree of another revision instead (``git archive REV | tar -x``,
with ``memext/engine`` and ``memext/tray`` linked to ``../engine`` and
``../tray``), run with this install's interpreter and packages. The commands run with
bytecode caching on (a warm-up run writes it), as an installed package has
it. Keyword-only: with a local model, a search also
loads the model (``bench/local_bench.py`` measures that part).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable

sys.path.insert(0, str(Path(__file__).resolve().parent))
from click_floors import CLICK_FLOOR, CLICK_WALK_FLOOR, CODE_FLOOR, search_modules  # noqa: E402
from engine_bench import kept_terms  # noqa: E402
from gen_workspace import generate, vocabulary, zipf_words  # noqa: E402

from memext.engine import MemoryIndex  # noqa: E402
from memext.engine.config import load_config  # noqa: E402
from memext.engine.text import fts_match_expression  # noqa: E402

try:
    from memext.engine.store.sqlite import db as engine_db
except ImportError:  # a revision from before store/sqlite/db.py (compared with this one)
    from memext.engine import db as engine_db  # type: ignore[attr-defined, no-redef]


def memext_command(python: str = sys.executable) -> list[str]:
    """The console script beside an interpreter, as a user runs it."""
    script = Path(python).with_name("memext")
    return [str(script)] if script.exists() else [python, "-m", "memext"]


def child_env(config: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # an installed package has its bytecode
    env["MEMEXT_CONFIG"] = str(config)
    return env


def tree_env(env: dict[str, str], tree: Path) -> dict[str, str]:
    """``env`` running the memext of the source tree ``tree`` (another
    revision's checkout, with ``memext/engine`` and ``memext/tray`` linked to
    its ``engine/`` and ``tray/`` as a development install has them) with
    this install's interpreter and packages: this checkout's folder on
    ``PYTHONPATH`` is replaced by ``tree``, or ``tree`` goes first."""
    here = str(Path(__file__).resolve().parent.parent)
    parts = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    parts = [str(tree) if os.path.realpath(p) == here else p for p in parts]
    if str(tree) not in parts:
        parts.insert(0, str(tree))
    return dict(env, PYTHONPATH=os.pathsep.join(parts))


def write_agent_config(path: Path, agent_id: str, ws: Path, db: Path, provider: str = "none", model: Path | None = None) -> Path:
    """A config file of one agent, private as memext would make it (no note
    about its mode on every run)."""
    local = f'[agents.memory_search.local]\nmodel_path = "{model}"\n' if model else ""
    path.write_text(
        f'[[agents]]\nid = "{agent_id}"\nworkspace = "{ws}"\n[agents.memory_search]\nprovider = "{provider}"\n'
        f'{local}[agents.memory_search.store]\npath = "{db}"\n'
    )
    path.chmod(0o600)
    return path


def interleaved(
    commands: dict[str, tuple[list[str], dict[str, str]]], runs: int, before: Callable[[], object] = lambda: None
) -> dict[str, float]:
    """Median wall time (s) of each ``(command, env)``: one warm-up call each
    (bytecode written, files in the page cache), then ``runs`` rounds calling
    them in turn so that load on the machine hits all alike; ``before`` runs
    ahead of every timed call."""
    for cmd, env in commands.values():
        wall(cmd, env)
    times: dict[str, list[float]] = {k: [] for k in commands}
    for _ in range(runs):
        for name, (cmd, env) in commands.items():
            before()
            times[name].append(wall(cmd, env))
    return {name: round(statistics.median(t), 3) for name, t in times.items()}


def prepare(out: Path, files: int) -> tuple[Path, Path, Path]:
    """A workspace of ``files`` notes and its keyword-only index; returns (workspace, config, index)."""
    ws = out / f"cold-ws-{files}"
    if not (ws / "memory").is_dir():
        print(f"generating {files} files...", flush=True)
        generate(ws, files, lines=130)
    db = out / f"cold-{files}.sqlite"
    config = write_agent_config(out / f"cold-{files}.toml", f"cold{files}", ws, db)
    with MemoryIndex(load_config(config).agent(None)) as idx:
        t = time.perf_counter()
        r = idx.sync()
        if r.files_indexed:
            print(f"  indexed {r.chunks_written} chunks in {time.perf_counter() - t:.0f} s", flush=True)
    return ws, config, db


def wall(cmd: list[str], env: dict[str, str]) -> float:
    t = time.perf_counter()
    proc = subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    elapsed = time.perf_counter() - t
    # Exit status 1 with no error line is a search that found nothing to
    # answer with ("no memory matches"): it ran to the end all the same.
    if proc.returncode not in (0, 1) or "memext: " in proc.stderr:
        raise SystemExit(f"{' '.join(cmd)} failed: {proc.stderr.strip()}")
    return elapsed


def bare_walk(root: str) -> int:
    """Every entry below ``root``: scandir, and one stat per file."""
    n = 0
    stack = [root]
    while stack:
        with os.scandir(stack.pop()) as it:
            for e in it:
                if e.is_dir(follow_symlinks=False):
                    stack.append(e.path)
                else:
                    e.stat(follow_symlinks=False)
                    n += 1
    return n


def check_figures(agent, ws: str, runs: int) -> tuple[float, float, float]:
    """Median ms of the change check (``needs_sync()``) in a long-lived
    index (the second and later checks: the index's file list is kept until
    the data changes), of the first check of a freshly opened index (what a
    one-shot search pays: the file list read too), and of the bare walk,
    interleaved."""
    again, first, walk = [], [], []
    with MemoryIndex(agent) as idx:
        idx.needs_sync()
        for _ in range(runs):
            with MemoryIndex(agent) as fresh:
                t = time.perf_counter()
                fresh.needs_sync()
                first.append(time.perf_counter() - t)
            t = time.perf_counter()
            idx.needs_sync()
            again.append(time.perf_counter() - t)
            t = time.perf_counter()
            bare_walk(ws)
            walk.append(time.perf_counter() - t)
    return tuple(statistics.median(x) * 1000 for x in (again, first, walk))  # type: ignore[return-value]


def median_ms(fn: Callable[[], object], runs: int) -> float:
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times) * 1000


def kept_match(db: Path, query: str) -> str:
    """The MATCH expression of the terms a search of ``query`` keeps, as the
    engine sends it to FTS5."""
    conn, _ = engine_db.connect(db, load_vec=False)
    try:
        chunks = conn.execute("SELECT count(*) FROM chunks").fetchone()[0]
        match = fts_match_expression(kept_terms(conn, query, chunks))
    finally:
        conn.close()
    if match is None:
        raise SystemExit(f"the query {query!r} keeps no term")
    return match


def bench_size(
    out: Path, files: int, runs: int, base_python: str | None = None, floor_python: str = sys.executable, base_tree: Path | None = None
) -> dict:
    ws, config, db = prepare(out, files)
    env = child_env(config)
    rng = random.Random(7)
    query = " ".join(zipf_words(vocabulary(20_000, random.Random(1)), 3, rng))
    # What people type: a question, common words and all ("the", "to" and
    # "be" are in nearly every chunk: counting them is the costly part).
    question = f"what did we decide to do about the {query}"
    memext = memext_command()
    code_floor = CODE_FLOOR.replace("MODULES", repr(search_modules(["search", "--no-sync", query], env)), 1)
    commands = {
        "python_pass": ([floor_python, "-c", "pass"], env),
        "click_floor": ([floor_python, "-c", CLICK_FLOOR, engine_db.binding().module.__name__, str(db), kept_match(db, query)], env),
        "code_floor": ([floor_python, "-c", code_floor, engine_db.binding().module.__name__, str(db), kept_match(db, query)], env),
        "click_walk_floor": (
            [floor_python, "-c", CLICK_WALK_FLOOR, engine_db.binding().module.__name__, str(db), kept_match(db, query), str(ws)],
            env,
        ),
        "search_no_sync": ([*memext, "search", "--no-sync", query], env),
        "search": ([*memext, "search", query], env),
        "question_no_sync": ([*memext, "search", "--no-sync", question], env),
    }
    if base_python or base_tree:
        base = memext_command(base_python) if base_python else memext
        base_env = tree_env(env, base_tree) if base_tree else env
        commands["base_search_no_sync"] = ([*base, "search", "--no-sync", query], base_env)
        commands["base_search"] = ([*base, "search", query], base_env)
        commands["base_question_no_sync"] = ([*base, "search", "--no-sync", question], base_env)
    figures = interleaved(commands, runs)
    kept = with_keeper(config, {k: commands[k] for k in ("click_floor", "click_walk_floor", "search")}, runs)
    agent = load_config(config).agent(None)
    with MemoryIndex(agent) as idx:
        chunks = idx.status(check_files=False).total_chunks
        assert not idx.needs_sync()
    check_ms, first_ms, walk_ms = check_figures(agent, str(ws), runs)
    if base_python or base_tree:
        figures["search_over_base"] = round(figures["search"] / figures["base_search"], 2)
        figures["no_sync_over_base"] = round(figures["search_no_sync"] / figures["base_search_no_sync"], 2)
        figures["question_over_base"] = round(figures["question_no_sync"] / figures["base_question_no_sync"], 2)
    return {
        "files": files + 1,  # + MEMORY.md
        "chunks": chunks,
        **figures,
        "search_over_pass": round(figures["search"] / figures["python_pass"], 1),
        "no_sync_over_pass": round(figures["search_no_sync"] / figures["python_pass"], 1),
        "question_over_pass": round(figures["question_no_sync"] / figures["python_pass"], 1),
        "search_over_click_floor": round(figures["search"] / figures["click_floor"], 1),
        "no_sync_over_click_floor": round(figures["search_no_sync"] / figures["click_floor"], 1),
        "search_over_click_walk_floor": round(figures["search"] / figures["click_walk_floor"], 2),
        "click_walk_over_click_floor": round(figures["click_walk_floor"] / figures["click_floor"], 2),
        "code_floor_over_click_floor": round(figures["code_floor"] / figures["click_floor"], 2),
        "no_sync_over_code_floor": round(figures["search_no_sync"] / figures["code_floor"], 2),
        "kept_search": kept["search"],
        "kept_click_floor": kept["click_floor"],
        "kept_click_walk_floor": kept["click_walk_floor"],
        "kept_search_over_click_walk_floor": round(kept["search"] / kept["click_walk_floor"], 2),
        "kept_search_over_click_floor": round(kept["search"] / kept["click_floor"], 2),
        "change_check_ms": round(check_ms, 1),
        "first_check_ms": round(first_ms, 1),
        "bare_walk_ms": round(walk_ms, 1),
        "check_over_walk": round(check_ms / walk_ms, 2),
        "first_check_over_walk": round(first_ms / walk_ms, 2),
    }


def with_keeper(config: Path, commands: dict, runs: int) -> dict[str, float]:
    """``commands`` interleaved again while a keeper in this process
    watches the agent (as the tray or ``memext mcp`` would) and vouches for
    its index, so that a one-shot search skips its walk (DESIGN.md §13)."""
    from memext.engine import FreshnessKeeper
    from memext.engine.indexing.freshness_record import vouches

    agent = load_config(config).agent(None)
    keeper = FreshnessKeeper(agent)
    keeper.start()
    try:
        deadline = time.monotonic() + 120
        while not vouches(agent, agent.db_path()):
            if time.monotonic() > deadline:
                raise SystemExit(f"the keeper did not vouch for the index (watching: {keeper.snapshot().watch_mode})")
            time.sleep(0.05)
        return interleaved(commands, runs)
    finally:
        keeper.stop()


def bench_notes(out: Path, runs: int, base_python: str | None = None, floor_python: str = sys.executable) -> dict:
    """A one-shot search of the example notes, whose text is not all ASCII."""
    ws = out / "cold-notes"
    if not ws.is_dir():
        shutil.copytree(Path(__file__).resolve().parent.parent / "example", ws)
    config = write_agent_config(out / "cold-notes.toml", "coldnotes", ws, out / "cold-notes.sqlite")
    with MemoryIndex(load_config(config).agent(None)) as idx:
        idx.sync()
    kept = out / "cold-cache"
    fresh = out / "cold-cache-fresh"
    env = dict(child_env(config), XDG_CACHE_HOME=str(kept))
    fresh_env = dict(env, XDG_CACHE_HOME=str(fresh))
    query = ["search", "--no-sync", "nightly reconciliation job"]
    commands = {
        "python_pass": ([floor_python, "-c", "pass"], env),
        "search_no_sync": ([*memext_command(), *query], env),
        "first_on_machine": ([*memext_command(), *query], fresh_env),
    }
    if base_python:
        commands["base_search_no_sync"] = ([*memext_command(base_python), *query], env)
    # The warm-up writes the kept tables; the fresh folder is emptied before every call.
    figures = interleaved(commands, runs, before=lambda: shutil.rmtree(fresh, ignore_errors=True))
    figures["no_sync_over_pass"] = round(figures["search_no_sync"] / figures["python_pass"], 1)
    figures["first_over_pass"] = round(figures["first_on_machine"] / figures["python_pass"], 1)
    if base_python:
        figures["no_sync_over_base"] = round(figures["search_no_sync"] / figures["base_search_no_sync"], 2)
    return figures


#: The floor of a one-shot local-model search (argv: model, n_ctx, threads, query).
LLAMA_FLOOR = """
import sys, llama_cpp
m = llama_cpp.Llama(model_path=sys.argv[1], embedding=True, n_ctx=int(sys.argv[2]), n_batch=int(sys.argv[2]),
                    n_ubatch=int(sys.argv[2]), n_threads=int(sys.argv[3]), n_threads_batch=int(sys.argv[3]), verbose=False)
m.embed(sys.argv[4])
"""


def bench_local(out: Path, model: Path, runs: int) -> dict:
    """A one-shot search of the example notes with the local model, next to
    a bare llama-cpp load and embed."""
    ws = out / "cold-notes"  # made by bench_notes
    config = write_agent_config(out / "cold-local.toml", "coldlocal", ws, out / "cold-local.sqlite", "local", model)
    with MemoryIndex(load_config(config).agent(None)) as idx:
        idx.sync()
        provider = idx.provider_choice.provider
        if provider is None or provider.id != "local":
            raise SystemExit(f"the local model is not in force: {idx.provider_choice.reason}")
        n_ctx, threads = provider.max_input_tokens, provider.threads  # type: ignore[attr-defined]
    env = dict(child_env(config), XDG_CACHE_HOME=str(out / "cold-cache"))
    query = "when does the nightly job run"
    commands = {
        "llama_floor": ([sys.executable, "-c", LLAMA_FLOOR, str(model), str(n_ctx), str(threads), query], env),
        "search_no_sync": ([*memext_command(), "search", "--no-sync", query], env),
    }
    figures = interleaved(commands, runs)
    figures["over_floor"] = round(figures["search_no_sync"] / figures["llama_floor"], 2)
    figures["n_ctx"], figures["threads"] = n_ctx, threads
    return figures


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "out")
    ap.add_argument("--sizes", default="1000,10000", help="workspace sizes in files")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--clean", action="store_true", help="regenerate the workspaces and indexes")
    ap.add_argument("--base-python", help="interpreter of another memext install to compare with, interleaved")
    ap.add_argument(
        "--base-tree",
        type=Path,
        help="source tree of another revision, run with this install's interpreter and packages (see tree_env), interleaved",
    )
    ap.add_argument("--model", type=Path, help="a GGUF embedding model: also measure a local-model search")
    ap.add_argument(
        "--floor-python",
        default=sys.executable,
        help="interpreter whose `python -c pass` is the floor (default: this one; a wheel install's has no editable import hook)",
    )
    a = ap.parse_args()
    a.out.mkdir(parents=True, exist_ok=True)
    figures = {}
    notes = bench_notes(a.out, a.runs, a.base_python, a.floor_python)
    figures["example_notes"] = notes
    print(
        f"example notes (not all ASCII): memext search --no-sync {notes['search_no_sync']} s "
        f"({notes['no_sync_over_pass']}x python -c pass {notes['python_pass']} s); the first on a machine "
        f"(Unicode tables worked out) {notes['first_on_machine']} s ({notes['first_over_pass']}x)"
        + (f"; this / base {notes['no_sync_over_base']}" if a.base_python else ""),
        flush=True,
    )
    if a.model:
        local = bench_local(a.out, a.model.resolve(), a.runs)
        figures["example_notes_local_model"] = local
        print(
            f"  with the local model: memext search --no-sync {local['search_no_sync']} s; bare import llama_cpp + "
            f"load + one embed {local['llama_floor']} s ({local['over_floor']}x)",
            flush=True,
        )
    for files in [int(s) for s in a.sizes.split(",")]:
        if a.clean:
            shutil.rmtree(a.out / f"cold-ws-{files}", ignore_errors=True)
            for p in a.out.glob(f"cold-{files}.sqlite*"):
                p.unlink()
        r = bench_size(a.out, files, a.runs, a.base_python, a.floor_python, a.base_tree)
        figures[f"files_{files}"] = r
        print(
            f"{r['files']} files, {r['chunks']} chunks: memext search {r['search']} s "
            f"({r['search_over_pass']}x python -c pass {r['python_pass']} s), --no-sync {r['search_no_sync']} s "
            f"({r['no_sync_over_pass']}x); change check {r['change_check_ms']} ms vs bare scandir+stat "
            f"{r['bare_walk_ms']} ms ({r['check_over_walk']}x; the first of a freshly opened index "
            f"{r['first_check_ms']} ms, {r['first_check_over_walk']}x); a question, --no-sync {r['question_no_sync']} s "
            f"({r['question_over_pass']}x)",
            flush=True,
        )
        print(
            f"  a bare click command answering from the index (interpreter, click, the kept terms' FTS5 query, six texts): "
            f"{r['click_floor']} s; memext search {r['search_over_click_floor']}x it, --no-sync {r['no_sync_over_click_floor']}x",
            flush=True,
        )
        print(
            f"  the same command walking the workspace first (scandir + stat, nothing compared): {r['click_walk_floor']} s "
            f"({r['click_walk_over_click_floor']}x the bare command); memext search {r['search_over_click_walk_floor']}x it",
            flush=True,
        )
        print(
            f"  the bare command after importing every module a search loads, nothing of them called: {r['code_floor']} s "
            f"({r['code_floor_over_click_floor']}x the bare command); memext search --no-sync {r['no_sync_over_code_floor']}x it",
            flush=True,
        )
        print(
            f"  with a keeper watching the agent (the tray, memext mcp): memext search {r['kept_search']} s, "
            f"{r['kept_search_over_click_walk_floor']}x the walking command ({r['kept_click_walk_floor']} s) "
            f"and {r['kept_search_over_click_floor']}x the bare one ({r['kept_click_floor']} s), same loop",
            flush=True,
        )
        if a.base_python or a.base_tree:
            print(
                f"  base: memext search {r['base_search']} s, --no-sync {r['base_search_no_sync']} s, "
                f"the question {r['base_question_no_sync']} s; this / base {r['search_over_base']}, "
                f"{r['no_sync_over_base']} and {r['question_over_base']}",
                flush=True,
            )
    (a.out / "cold_start.json").write_text(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
