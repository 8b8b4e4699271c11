"""The ``memext`` command: index, search, get, status and agents.

Every command takes ``-a/--agent`` (default: the first configured agent, or
the current folder when there is no config) and ``--json``. Failures print
one line to stderr and exit with status 1. ``search`` syncs a stale index in
the foreground first: a one-shot process cannot leave that to a background
thread.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import re
import sys
from pathlib import Path
from typing import Any, Callable

import click

from .append import LONG_TERM_FILE
from .config import AgentConfig, Config, add_agent, load_config
from .errors import BadLineRange, IndexBuildError, LockTimeout, MemextError
from .index import MemoryIndex
from .paths import app_paths
from .progress import TextProgress
from .status import IndexStatus
from .sync import SyncReport

_GET_SPEC = re.compile(r"^(?P<path>.+?)(?::(?P<start>\d+)(?:-(?P<end>\d+))?)?$")
#: How long `memext search` waits for another process's sync (the tray's,
#: say) before searching the index as it is.
SEARCH_LOCK_WAIT_S = 2.0


def _fail(message: str) -> None:
    click.echo(f"memext: error: {message}", err=True)
    sys.exit(1)


def handle_errors(fn: Callable) -> Callable:
    """Turn memext errors (and OS errors, e.g. an unwritable folder) into
    one line on stderr and exit status 1."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except MemextError as exc:
            _fail(str(exc))
        except OSError as exc:
            _fail(_os_error_line(exc))
        except KeyboardInterrupt:
            _fail("interrupted")

    return wrapper


def _os_error_line(exc: OSError) -> str:
    where = f"{exc.filename}: " if exc.filename else ""
    return f"{where}{exc.strerror or exc}"


def _config(ctx: click.Context) -> Config:
    return load_config(ctx.obj.get("config_path"))


def _index(cfg: Config, agent: AgentConfig) -> MemoryIndex:
    """The agent's index; errors name ``cfg``'s file."""
    return MemoryIndex(agent, config_file=cfg.path)


def _open(ctx: click.Context, agent: str | None) -> MemoryIndex:
    cfg = _config(ctx)
    return _index(cfg, cfg.agent(agent))


def _print_json(data: Any) -> None:
    click.echo(json.dumps(data, indent=2, ensure_ascii=False, default=str))


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--config", "config_path", type=click.Path(dir_okay=False), help="Config file (default: $MEMEXT_CONFIG or the user config dir).")
@click.version_option(package_name="memext")
@click.pass_context
def cli(ctx: click.Context, config_path: str | None) -> None:
    """Search an agent's Markdown memory (MEMORY.md, memory/*.md) with
    hybrid semantic + keyword search and path:line citations."""
    ctx.ensure_object(dict)
    ctx.obj["config_path"] = config_path


agent_option = click.option("-a", "--agent", help="Agent id (default: the first configured agent).")
json_option = click.option("--json", "as_json", is_flag=True, help="Print JSON.")


# -- index -----------------------------------------------------------------


def _report_dict(agent: str, r: SyncReport) -> dict:
    return {
        "agent": agent,
        "files_seen": r.files_seen,
        "files_indexed": r.files_indexed,
        "files_unchanged": r.files_unchanged,
        "files_deleted": r.files_deleted,
        "files_deferred": r.files_deferred,
        "chunks_written": r.chunks_written,
        "texts_embedded": r.texts_embedded,
        "cache_hits": r.cache_hits,
        "rebuilt": r.rebuilt,
        "duration_s": round(r.duration_s, 3),
        "skipped": [{"path": s.path, "reason": s.reason} for s in r.skipped],
        "provider_error": r.provider_error,
    }


@cli.command("index")
@agent_option
@click.option("--all", "all_agents", is_flag=True, help="Index every configured agent.")
@click.option("--force", is_flag=True, help="Rebuild the index from scratch.")
@json_option
@click.pass_context
@handle_errors
def index_cmd(ctx: click.Context, agent: str | None, all_agents: bool, force: bool, as_json: bool) -> None:
    """Index (or update the index of) an agent's memory files."""
    cfg = _config(ctx)
    agents = cfg.agents if all_agents else [cfg.agent(agent)]
    out: list[dict] = []
    failed: list[str] = []
    for a in agents:
        try:
            report, st = _index_one(cfg, a, force, show_progress=not as_json and sys.stderr.isatty())
        except MemextError as exc:
            if not all_agents:
                raise
            # One broken agent must not keep the others from being indexed.
            failed.append(a.id)
            out.append({"agent": a.id, "error": str(exc)})
            click.echo(f"memext: error: {a.id}: {exc}", err=True)
            continue
        out.append(_report_dict(a.id, report))
        if not as_json:
            what = "rebuilt" if report.rebuilt else "indexed"
            click.echo(
                f"{a.id}: {what} {report.files_indexed} of {report.files_seen} files "
                f"({report.files_unchanged} unchanged, {report.files_deleted} removed), "
                f"{st.total_chunks} chunks, {report.texts_embedded} embedded, {report.cache_hits} from cache, "
                f"in {report.duration_s:.2f} s [{st.mode}: {st.provider['in_force']} {st.provider['model']}]".rstrip()
            )
            for s in report.skipped:
                click.echo(f"  skipped {s.path}: {s.reason}")
            if report.provider_error:
                click.echo(f"  warning: embedding failed ({report.provider_error}); those files are keyword-only until the next sync", err=True)
            if st.provider["in_force"] == "none":
                click.echo(f"  note: {st.provider['reason']}", err=True)
    if as_json:
        _print_json(out if all_agents else out[0])
    if failed:
        sys.exit(1)


def _index_one(cfg: Config, a: AgentConfig, force: bool, *, show_progress: bool) -> tuple[SyncReport, IndexStatus]:
    """Sync one agent; returns (report, status)."""
    with _index(cfg, a) as idx:
        if show_progress:
            with TextProgress(a.id, transient=True) as bar:
                report = idx.sync(force=force, progress=bar)
        else:
            report = idx.sync(force=force)
        return report, idx.status()


# -- search ------------------------------------------------------------------


@cli.command("search")
@click.argument("query", nargs=-1, required=True)
@agent_option
@click.option("-n", "--max-results", type=click.IntRange(1, 200), help="How many results (default: query.max_results).")
@click.option("--min-score", type=click.FloatRange(0, 1), help="Drop results below this score (default: query.min_score).")
@click.option("--source", type=click.Choice(["memory", "sessions"]), help="Search one source only.")
@click.option("--explain", is_flag=True, help="Show how each score was made.")
@click.option("--no-sync", is_flag=True, help="Search the index as it is, without syncing changed files first.")
@json_option
@click.pass_context
@handle_errors
def search_cmd(ctx, query, agent, max_results, min_score, source, explain, no_sync, as_json) -> None:
    """Search memory; prints path:start-end, score and a snippet per result.

    Files changed since the last sync are indexed first (--no-sync, or
    sync.on_search = false in the config, skips it)."""
    text = " ".join(query)
    cfg = _config(ctx)
    agent_cfg = cfg.agent(agent)
    # A one-shot process would only start a background sync to kill it at
    # exit: the engine's sync-on-search is off, and a stale index is synced
    # in the foreground below instead.
    s = agent_cfg.settings
    on_search = s.sync.on_search
    agent_cfg = dataclasses.replace(agent_cfg, settings=dataclasses.replace(s, sync=dataclasses.replace(s.sync, on_search=False)))
    with _index(cfg, agent_cfg) as idx:
        note = None
        # sync.on_search = false: only an index never built is built, so a
        # first search is not empty; edits wait for `memext index` or the tray.
        if not no_sync and (on_search or idx.never_synced):
            note = _sync_before_search(idx, show_progress=not as_json and sys.stderr.isatty())
        resp = idx.search(text, max_results=max_results, min_score=min_score, sources=[source] if source else None, explain=explain)
    if note:
        click.echo(click.style(f"note: {note}", fg="yellow"), err=True)
    if as_json:
        _print_json(resp.to_dict())
        return
    if resp.notice:
        click.echo(click.style(f"note: {resp.notice}", fg="yellow"), err=True)
    if resp.fallback:
        click.echo(click.style(f"note: fallback in force ({resp.fallback['from']} failed: {resp.fallback['reason']})", fg="yellow"), err=True)
    if not resp.results:
        click.echo("no results")
        return
    for i, r in enumerate(resp.results, start=1):
        click.echo(click.style(f"{i}. {r.citation}", bold=True) + f"  score {r.score:.3f}" + (f"  [{r.source}]" if r.source != "memory" else ""))
        for line in r.snippet.splitlines()[:12]:
            click.echo(f"   {line}")
        if explain and r.explain:
            click.echo(click.style("   explain: " + json.dumps(r.explain, default=str), dim=True))
        click.echo()


def _sync_before_search(idx: MemoryIndex, *, show_progress: bool) -> str | None:
    """Sync a stale index in the foreground (SPEC §5: search syncs a dirty
    index); returns a note for stderr when the search must use it as it is."""
    if not idx.needs_sync():
        return None
    label = f"{idx.agent.id}: {'first index' if idx.never_synced else 'syncing'}"
    try:
        if show_progress:
            with TextProgress(label, transient=True) as bar:
                idx.sync(progress=bar, reason="search", lock_timeout=SEARCH_LOCK_WAIT_S)
        else:
            idx.sync(reason="search", lock_timeout=SEARCH_LOCK_WAIT_S)
    except LockTimeout:
        return "another process is syncing this index; searched it as it is (results may miss the latest edits)"
    except IndexBuildError as exc:
        return f"{exc}; searched the index as it is"
    return None


# -- get -----------------------------------------------------------------------


def parse_get_spec(spec: str) -> tuple[str, int | None, int | None]:
    """``path``, ``path:FROM`` or ``path:FROM-TO`` -> (path, from, lines)."""
    m = _GET_SPEC.match(spec)
    if not m:
        return spec, None, None
    start = int(m.group("start")) if m.group("start") else None
    end = int(m.group("end")) if m.group("end") else None
    if start == 0 or end == 0:
        raise BadLineRange(f"{spec}: line numbers start at 1")
    if start is not None and end is not None:
        if end < start:
            raise BadLineRange(f"{spec}: the range ends before it starts")
        return m.group("path"), start, end - start + 1
    return m.group("path"), start, None


@cli.command("get")
@click.argument("spec")
@agent_option
@click.option("--from", "from_line", type=click.IntRange(1), help="First line (1-based).")
@click.option("--lines", type=click.IntRange(1), help="How many lines.")
@click.option("-n", "--line-numbers", is_flag=True, help="Prefix each line with its number.")
@json_option
@click.pass_context
@handle_errors
def get_cmd(ctx, spec, agent, from_line, lines, line_numbers, as_json) -> None:
    """Print lines of a memory file: PATH, PATH:FROM or PATH:FROM-TO."""
    path, start, count = parse_get_spec(spec)
    with _open(ctx, agent) as idx:
        res = idx.get(path, from_line or start, lines or count)
    if as_json:
        _print_json(res.to_dict())
        return
    if res.missing:
        click.echo(f"memext: {res.path} does not exist (yet)", err=True)
        return
    if line_numbers:
        width = len(str(res.to_line))
        for n, line in enumerate(res.text.split("\n"), start=res.from_line):
            click.echo(f"{n:>{width}}  {line}")
    else:
        click.echo(res.text)
    if res.truncated:
        click.echo(f"memext: output stopped at line {res.to_line} of {res.total_lines}; use --from {res.to_line + 1}", err=True)


# -- status ----------------------------------------------------------------------


@cli.command("status")
@agent_option
@json_option
@click.pass_context
@handle_errors
def status_cmd(ctx, agent, as_json) -> None:
    """Show files, chunks, provider and health of one or every agent."""
    cfg = _config(ctx)
    agents = [cfg.agent(agent)] if agent else cfg.agents
    statuses: list[IndexStatus] = []
    errors: list[dict] = []
    for a in agents:
        try:
            with _index(cfg, a) as idx:
                statuses.append(idx.status())
        except MemextError as exc:
            if agent:
                raise
            errors.append({"agent": a.id, "error": str(exc)})  # one broken agent must not hide the others
    if as_json:
        data = [s.to_dict() for s in statuses] + errors
        _print_json(data[0] if agent else data)
    else:
        for s in statuses:
            _print_status(s)
    for e in errors:
        click.echo(f"memext: error: {e['agent']}: {e['error']}", err=True)
    if errors:
        sys.exit(1)


def _print_status(s: IndexStatus) -> None:
    """The text form of one agent's status."""
    last = s.last_sync or {}
    click.echo(click.style(s.agent, bold=True) + f"  ({s.mode})")
    click.echo(f"  workspace  {s.workspace}")
    click.echo(f"  index      {s.db_path}")
    click.echo(f"  files      {', '.join(f'{k} {v}' for k, v in s.files.items())}")
    click.echo(f"  chunks     {', '.join(f'{k} {v}' for k, v in s.chunks.items())}")
    prov = s.provider
    click.echo(f"  provider   {prov['in_force']} {prov['model']} (requested {prov['requested']})".rstrip())
    if prov.get("reason"):
        click.echo(f"             {prov['reason']}")
    if s.keyword_only_reason:
        click.echo(f"             keyword-only: {s.keyword_only_reason}")
    if s.fallback:
        click.echo(f"  fallback   from {s.fallback['from']}: {s.fallback['reason']}")
    vec = s.vector
    vec_line = f"sqlite-vec {vec['extension']}" if vec["available"] else f"unavailable ({vec['error']})"
    click.echo(f"  vectors    {vec_line}; search {vec['backend']}, dims {vec['dims']}")
    click.echo(f"  keyword    {'FTS5' if s.fts['available'] else 'unavailable: ' + str(s.fts['error'])}")
    click.echo(f"  sqlite     {s.sqlite['binding']} {s.sqlite['version']}")
    click.echo(f"  cache      {s.cache['entries']} embeddings")
    if s.batch.get("enabled"):
        b = s.batch
        extra = f", {len(b.get('pending') or [])} pending job(s)" if b.get("pending") else ""
        reason = f" ({b['disabled_reason']})" if b.get("disabled_reason") else ""
        click.echo(f"  batch      {b.get('mode', '?')}, {b.get('failures', 0)} failure(s){extra}{reason}")
    if last:
        click.echo(f"  last sync  {_ago(last.get('at'))}, {last.get('duration_s')} s")
    else:
        click.echo("  last sync  never (run `memext index`)")
    if s.dirty:
        click.echo("  changes    memory files changed since the last sync (`memext index` or a search syncs them)")
    for item in s.skipped:
        click.echo(f"  skipped    {item['path']}: {item['reason']}")
    if s.last_error:
        click.echo(click.style(f"  error      {s.last_error}", fg="red"))


def _ago(ts: float | None) -> str:
    if not ts:
        return "never"
    import time

    secs = max(0, time.time() - ts)
    for unit, size in (("d", 86400), ("h", 3600), ("min", 60)):
        if secs >= size:
            return f"{secs / size:.0f} {unit} ago"
    return f"{secs:.0f} s ago"


# -- agents and config ---------------------------------------------------------------


@cli.group("agents", invoke_without_command=True)
@json_option
@click.pass_context
@handle_errors
def agents_cmd(ctx, as_json) -> None:
    """List agents (or add one: memext agents add ID WORKSPACE)."""
    if ctx.invoked_subcommand is not None:
        return
    cfg = _config(ctx)
    rows = [
        {"id": a.id, "workspace": str(a.workspace), "index": str(a.db_path()), "adhoc": a.adhoc, "provider": a.settings.provider}
        for a in cfg.agents
    ]
    if as_json:
        _print_json(rows)
        return
    if cfg.path is None:
        click.echo(f"no config file ({app_paths().config_file}); using the current folder as an ad-hoc agent:")
    for r in rows:
        click.echo(f"{r['id']}  {r['workspace']}")


@agents_cmd.command("add")
@click.argument("agent_id")
@click.argument("workspace", type=click.Path(file_okay=False))
@click.option("--extra-path", multiple=True, help="More folders or .md files to index (repeatable).")
@click.pass_context
@handle_errors
def agents_add(ctx, agent_id, workspace, extra_path) -> None:
    """Add an agent to the config file (created if missing)."""
    path = Path(ctx.obj.get("config_path") or app_paths().config_file)
    ws = Path(workspace).expanduser().resolve()
    if not ws.is_dir():
        raise MemextError(f"workspace {ws} is not a folder")
    add_agent(path, agent_id, ws, list(extra_path))
    click.echo(f"added agent {agent_id} ({ws}) to {path}")


@cli.command("config")
@click.pass_context
@handle_errors
def config_cmd(ctx) -> None:
    """Show where the config file is and check that it loads."""
    p = app_paths()
    path = ctx.obj.get("config_path") or p.config_file
    cfg = load_config(ctx.obj.get("config_path"))
    click.echo(f"config   {path}{'' if cfg.path else ' (not present: ad-hoc agent)'}")
    click.echo(f"indexes  {p.index_dir}")
    click.echo(f"cache    {p.cache_dir}")
    click.echo(f"logs     {p.log_dir}")
    click.echo(f"agents   {', '.join(a.id for a in cfg.agents)}")


# -- note and mcp -----------------------------------------------------------------------


@cli.command("note")
@click.argument("text", required=False)
@agent_option
@click.option("--file", help="A memory file, e.g. memory/projects/x.md (default: today's daily log).")
@click.option("--heading", help="The entry's heading (default: the current time).")
@click.option("--long-term", is_flag=True, help="Append to MEMORY.md instead.")
@json_option
@click.pass_context
@handle_errors
def note_cmd(ctx, text, agent, file, heading, long_term, as_json) -> None:
    """Append TEXT (or stdin, when TEXT is missing or -) to memory, then index it.

    Append-only: nothing already in the file is changed."""
    if file and long_term:
        raise MemextError("use either --file or --long-term, not both")
    if text is None or text == "-":
        if sys.stdin.isatty() and text is None:
            raise MemextError('give the note as an argument (memext note "...") or on stdin')
        text = sys.stdin.read()
    with _open(ctx, agent) as idx:
        written = idx.append(text, file=LONG_TERM_FILE if long_term else file, heading=heading)
    if as_json:
        _print_json(written.to_dict())
        return
    click.echo(f"noted in {written.citation}" + (" (new file)" if written.created else ""))
    if written.notice:
        click.echo(f"memext: {written.notice}", err=True)


@cli.command("mcp")
@agent_option
@click.option("--http", "http_port", type=click.IntRange(1, 65535), help="Serve Streamable HTTP on 127.0.0.1:PORT (path /mcp) instead of stdio.")
@click.pass_context
@handle_errors
def mcp_cmd(ctx, agent, http_port) -> None:
    """Serve memory_search, memory_get and memory_append over MCP (stdio by default).

    One agent with -a, else every configured agent (the tools' `agent` argument)."""
    try:
        from .mcp_server import serve
    except ImportError as exc:
        raise MemextError(f"the MCP server needs the mcp extra: pip install 'memext[mcp]' ({exc})") from None
    cfg = _config(ctx)
    serve(cfg, [cfg.agent(agent).id] if agent else None, http_port=http_port)


from .model_cli import model_group  # noqa: E402  (kept beside its registration)

cli.add_command(model_group)


def main() -> None:
    """Entry point of the ``memext`` console script."""
    cli(prog_name="memext")


if __name__ == "__main__":
    main()
