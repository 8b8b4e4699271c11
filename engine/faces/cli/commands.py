"""The engine's commands of ``memext``: index, search, get, status, agents,
config and model (:mod:`memext.cli` adds ``memext tray`` and is the
console script: the engine imports no face).

Every command takes ``-a/--agent`` and ``--json``, after it or before it
(``memext -a work search x``). A command that works on one agent (index,
search, get, note) takes, without ``-a``, the agent whose workspace holds
the current folder, else the first configured one, and then names it when
there are others; without a config, the current folder is the agent.
Failures print one line to stderr and exit with status 1 (2 for an argument or stdin that is not UTF-8, 130 for Ctrl+C). ``search`` syncs a stale index in
the foreground first (a one-shot process cannot leave that to a background
thread), through the agent tools' :class:`~..agents.hosts.SyncWhenNeeded`.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import click

from ... import AgentConfig, Config, MemextError, MemoryIndex
from ...plumbing import MEMORY_DIR, ROOT_FILES, SyncWhenNeeded
from .group import (
    CommandError as CommandError,  # CommandError: memext/cli.py raises it
    MemextGroup,
)
from .options import (
    COLOR_CHOICES,
    PickedAgent,
    agent_option,
    check_group_options,
    color_setting,
    complete_agent_id,
    ctx_config as _config,
    examples,
    group_defaults,
    json_option,
    pick_agent,
    picked_agent_option,
    print_json as _print_json,
    stdin_text,
)
from .output import listed_results, status_lines, terminal_safe

if TYPE_CHECKING:
    from ... import IndexStatus, SearchResponse, SyncReport
    from ...plumbing import TextProgress

#: How long `memext search` waits for another process's sync (the tray's,
#: say) before searching the index as it is.
SEARCH_LOCK_WAIT_S = 2.0


def _index(cfg: Config, agent: AgentConfig) -> MemoryIndex:
    """The agent's index; errors name ``cfg``'s file."""
    return MemoryIndex(agent, config_file=cfg.path, one_shot=True)


def _open(ctx: click.Context, picked: PickedAgent) -> MemoryIndex:
    return _index(_config(ctx), picked.agent)


def _pick(ctx: click.Context, agent: str | None) -> PickedAgent:
    """The agent of a command that works on one (see :func:`pick_agent`)."""
    return pick_agent(_config(ctx), agent)


@click.group(
    cls=MemextGroup,
    context_settings={"help_option_names": ["-h", "--help"]},
    epilog=examples("memext agents add work ~/agents/work", 'memext search -a work "who owns billing"'),
    lazy_commands={
        "agents": "memext.engine.faces.cli.agent_commands:agents_cmd",
        "config": "memext.engine.faces.cli.agent_commands:config_cmd",
        "model": "memext.engine.faces.cli.model_commands:model_group",
        "note": "memext.engine.faces.cli.lifecycle_commands:note_cmd",
        "forget": "memext.engine.faces.cli.lifecycle_commands:forget_cmd",
        "capture": "memext.engine.faces.cli.lifecycle_commands:capture_cmd",
        "consolidate": "memext.engine.faces.cli.lifecycle_commands:consolidate_cmd",
        "recall": "memext.engine.faces.cli.lifecycle_commands:recall_cmd",
    },
)
@click.option(
    "--config", "config_path", type=click.Path(dir_okay=False), help="Config file (default: $MEMEXT_CONFIG or the user config dir)."
)
@click.option(
    "-a",
    "--agent",
    "group_agent",
    metavar="ID",
    help="Agent id for the command that follows (as its own -a).",
    shell_complete=complete_agent_id,
)
@click.option("--json", "group_json", is_flag=True, help="Print JSON, for the command that follows (as its own --json).")
@click.option(
    "--color",
    type=click.Choice(COLOR_CHOICES),
    default="auto",
    show_default=True,
    help="Colour the output: auto colours a terminal unless NO_COLOR is set (FORCE_COLOR colours any output).",
)
@click.version_option(package_name="memext")
@click.pass_context
def cli(ctx: click.Context, config_path: str | None, group_agent: str | None, group_json: bool, color: str) -> None:
    """Search an agent's Markdown memory (MEMORY.md, memory/*.md) with
    hybrid semantic + keyword search and path:line citations."""
    ctx.ensure_object(dict)
    ctx.obj["config_path"] = config_path
    ctx.color = color_setting(color)  # every command's context inherits it, and click.echo obeys it
    given = group_defaults(group_agent, group_json)
    if given and ctx.invoked_subcommand:
        assert isinstance(ctx.command, click.Group)
        check_group_options(given, ctx.command.get_command(ctx, ctx.invoked_subcommand), ctx.invoked_subcommand)
        ctx.default_map = given


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


@cli.command(
    "index",
    short_help="Index (or update the index of) an agent's memory files.",
    epilog=examples("memext index -a work", "memext index --all --force"),
)
@picked_agent_option
@click.option("--all", "all_agents", is_flag=True, help="Index every configured agent.")
@click.option("--force", is_flag=True, help="Rebuild the index from scratch.")
@json_option
@click.pass_context
def index_cmd(ctx: click.Context, agent: str | None, all_agents: bool, force: bool, as_json: bool) -> None:
    """Index (or update the index of) an agent's memory files."""
    cfg = _config(ctx)
    agents = cfg.agents if all_agents else [pick_agent(cfg, agent).agent]
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
                f"in {report.duration_s:.2f} s [{st.search_mode.describe()}]"
            )
            for s in report.skipped:
                click.echo(f"  skipped {s.path}: {s.reason}")
            if report.provider_error:
                click.echo(
                    f"  warning: embedding failed ({report.provider_error}); those files are keyword-only until the next sync", err=True
                )
            if st.provider.keyword_only:
                click.echo(f"  note: {st.provider.reason}", err=True)
    if as_json:
        _print_json(out if all_agents else out[0])
    if failed:
        sys.exit(1)


def _index_one(cfg: Config, a: AgentConfig, force: bool, *, show_progress: bool) -> tuple[SyncReport, IndexStatus]:
    """Check the index file (a damaged one is set aside and rebuilt), then
    sync one agent; returns (report, status)."""
    from ...plumbing import TextProgress

    with _index(cfg, a) as idx:
        idx.verify()  # what it did is logged (stderr)
        if show_progress:
            with TextProgress(a.id, transient=True, color=_color()) as bar:
                report = idx.sync(force=force, progress=bar)
        else:
            report = idx.sync(force=force)
        return report, idx.status()


# -- search ------------------------------------------------------------------


@cli.command(
    "search",
    short_help="Search memory: path:start-end, score and lines per result.",
    epilog=examples('memext search "deploy checklist"', 'memext search -a work --since 7d --json "who owns billing"'),
)
@click.argument("query", nargs=-1, required=True)
@picked_agent_option
@click.option("-n", "--max-results", type=click.IntRange(1, 200), help="How many results (default: query.max_results).")
@click.option("--min-score", type=click.FloatRange(0, 1), help="Drop results below this score (default: query.min_score).")
@click.option(
    "--max-lines", type=click.IntRange(1), help="Reading budget: as many results as fit in this many lines, overlapping hits merged."
)
@click.option("--source", type=click.Choice(["memory", "sessions"]), help="Search one source only.")
@click.option("--since", metavar="WHEN", help="Only memory dated on or after WHEN: 2026-03-01, 7d, 2w, 3m, 1y, today, yesterday.")
@click.option("--before", metavar="WHEN", help="Only memory dated before WHEN (same forms as --since).")
@click.option("--explain", is_flag=True, help="Show how each score was made.")
@click.option("--weak", is_flag=True, help="Show weak matches when none is confident (marked weak).")
@click.option("--no-sync", is_flag=True, help="Search the index as it is, without syncing changed files first.")
@click.option("--all", "include_forgotten", is_flag=True, help="Also show entries marked forgotten or superseded.")
@json_option
@click.pass_context
def search_cmd(
    ctx, query, agent, max_results, min_score, max_lines, source, since, before, explain, weak, no_sync, include_forgotten, as_json
) -> None:
    """Search memory; prints path:start-end, score and a snippet per result
    (QUERY - reads the query from stdin).

    Files changed since the last sync are indexed first (--no-sync, or
    sync.on_search = false in the config, skips it). A file's date, for
    --since and --before: the date its name starts with (memory/2026-03-01.md),
    else a date: field in its front matter, else its modification time.

    Exit status 1 when no memory matches (as grep's): an answer none of whose
    matches is confident is empty ("no memory matches 'X'"); --weak shows
    those weak matches, marked weak."""
    text = _query_text(query)
    cfg = _config(ctx)
    picked = pick_agent(cfg, agent)
    agent_cfg = picked.agent
    if agent_cfg.adhoc:
        _check_has_memory(agent_cfg)

    def run(idx: MemoryIndex) -> SearchResponse:
        return idx.search(
            text,
            max_results=max_results,
            min_score=min_score,
            sources=[source] if source else None,
            explain=explain,
            max_lines=max_lines,
            after=since,
            before=before,
            include_weak=weak,
            include_forgotten=include_forgotten,
        )

    # The index never syncs by itself: a one-shot process syncs a stale index
    # in the foreground first, by the agent tools' policy (DESIGN.md §5).
    host = SyncWhenNeeded(
        lambda _agent: _index(cfg, agent_cfg), SEARCH_LOCK_WAIT_S, progress=_progress_bar if not as_json and sys.stderr.isatty() else None
    )
    try:
        resp, note = (run(host.index(agent_cfg.id)), None) if no_sync else host.search(agent_cfg.id, run)
        cause = host.index(agent_cfg.id).provider_choice.cause
        if note and host.index(agent_cfg.id).never_synced:
            note = None  # the search's own notice says the index is not built yet (being built, empty...)
    finally:
        host.close()
    if note:
        click.echo(click.style(f"note: {note}", fg="yellow"), err=True)
    if as_json:
        _print_json({"agent": agent_cfg.id, **resp.to_dict()})
        if not resp.results:
            sys.exit(1)
        return
    if picked.name_it:
        click.echo(click.style(picked.header(), dim=True))
    for line in _notice_lines(resp, agent_cfg, cause):
        click.echo(click.style(line, fg="yellow"), err=True)
    if resp.fallback:
        click.echo(
            click.style(f"note: fallback in force ({resp.fallback['from']} failed: {resp.fallback['reason']})", fg="yellow"), err=True
        )
    if not resp.results:
        dated = " and ".join(f"{flag} {value}" for flag, value in (("since", since), ("before", before)) if value)
        said = resp.answer_notice or f"no memory matches {text!r}"
        click.echo(terminal_safe(said) + (f" dated {dated}" if dated else ""))
        sys.exit(1)
    for line in listed_results(resp.results, text, explain=explain):
        click.echo(line)


def _notice_lines(resp: SearchResponse, agent: AgentConfig, cause: str | None) -> list[str]:
    """The search's notices; that search is keyword-only by set-up only the
    first time for the agent's workspace and that reason (see :mod:`.said_once`)."""
    from .said_once import SaidOnce, keyword_only_line

    # Without results, the answer's own notice is said in their place (stdout).
    rest = resp.notice_besides(resp.setup_notice, None if resp.results else resp.answer_notice)
    setup = resp.setup_notice
    first = setup is not None and SaidOnce().first_time("keyword-only", agent.id, str(agent.workspace), setup)
    return [line for line in (rest and f"note: {rest}", keyword_only_line(cause) if first else None) if line]


def _query_text(words: tuple[str, ...]) -> str:
    """The query: the words, or stdin for ``-`` (``memext search - < q.txt``)."""
    if words != ("-",):
        return " ".join(words)
    text = " ".join(stdin_text("the query").split())
    if not text:
        raise MemextError("the query on stdin is empty")
    return text


def _check_has_memory(agent: AgentConfig) -> None:
    """An ad-hoc agent (no config: the current folder) with no memory files
    would silently get an empty index: say where memory is looked for."""
    ws = agent.workspace
    if any((ws / name).is_file() for name in ROOT_FILES) or (ws / MEMORY_DIR).is_dir() or agent.extra_path_list():
        return
    raise MemextError(
        f"no memory files found in {ws} (no MEMORY.md and no {MEMORY_DIR}/ folder): run memext in an agent's "
        "workspace, or add one with `memext agents add ID WORKSPACE`"
    )


def _progress_bar(label: str) -> TextProgress:
    """The bar a sync before a search shows on a terminal (gone when done)."""
    from ...plumbing import TextProgress

    return TextProgress(label, transient=True, color=_color())


def _color() -> bool | None:
    """The invocation's colour setting (``--color``, NO_COLOR, FORCE_COLOR)."""
    ctx = click.get_current_context(silent=True)
    return ctx.color if ctx is not None else None


# -- get -----------------------------------------------------------------------


@cli.command(
    "get",
    short_help="Print lines of a memory file: PATH, PATH:FROM or PATH:FROM-TO.",
    epilog=examples("memext get memory/2026-03-01.md:10-20", "memext get MEMORY.md --from 40 --lines 10 -N"),
)
@click.argument("spec")
@picked_agent_option
@click.option("--from", "from_line", type=click.IntRange(1), help="First line (1-based).")
@click.option("--lines", type=click.IntRange(1), help="How many lines.")
@click.option("-N", "--line-numbers", is_flag=True, help="Prefix each line with its number.")
@json_option
@click.pass_context
def get_cmd(ctx, spec, agent, from_line, lines, line_numbers, as_json) -> None:
    """Print lines of a memory file: PATH, PATH:FROM or PATH:FROM-TO.

    A missing file or a first line past the end is an error (exit 1)."""
    from ...plumbing import parse_get_spec

    path, start, count = parse_get_spec(spec)
    picked = _pick(ctx, agent)
    with _open(ctx, picked) as idx:
        res = idx.get(path, from_line or start, lines or count).require_lines()
    if as_json:
        _print_json({"agent": picked.agent.id, **res.to_dict()})
        return
    if picked.name_it:  # on stderr: stdout is the file's own text
        click.echo(click.style(picked.header(), dim=True), err=True)
    # A note's control characters are shown escaped, never sent to the
    # terminal (--json escapes them as JSON does).
    if line_numbers:
        width = len(str(res.to_line))
        for n, line in enumerate(res.text.split("\n"), start=res.from_line):
            click.echo(f"{n:>{width}}  {terminal_safe(line)}")
    else:
        click.echo(terminal_safe(res.text))
    if res.truncated:
        click.echo(f"memext: output stopped at line {res.to_line} of {res.total_lines}; use --from {res.to_line + 1}", err=True)


# -- status ----------------------------------------------------------------------


@cli.command(
    "status",
    short_help="Show files, chunks, provider and health of one or every agent.",
    epilog=examples("memext status", "memext status -a work --json"),
)
@agent_option
@json_option
@click.pass_context
def status_cmd(ctx, agent, as_json) -> None:
    """Show files, chunks, provider and health of one or every agent."""
    from ... import IndexStatus

    cfg = _config(ctx)
    agents = [cfg.agent(agent)] if agent else cfg.agents
    rows: list[IndexStatus | dict[str, str]] = []  # in config order; a dict is an agent that failed to open
    for a in agents:
        try:
            with _index(cfg, a) as idx:
                rows.append(idx.status())
        except MemextError as exc:
            rows.append({"agent": a.id, "error": str(exc)})  # one broken agent must not hide the others
    if as_json:
        # Always a list, with -a too: one shape for scripts to read.
        _print_json([r.to_dict() if isinstance(r, IndexStatus) else r for r in rows])
    else:
        for r in rows:
            if isinstance(r, IndexStatus):
                for line in status_lines(r):
                    click.echo(line)
    errors = [r for r in rows if not isinstance(r, IndexStatus)]
    for e in errors:
        click.echo(f"memext: error: {e['agent']}: {e['error']}", err=True)
    # An agent whose index reports an error fails the command too, so a
    # script (or a health check) sees it without parsing the text.
    if errors or any(isinstance(r, IndexStatus) and r.last_error for r in rows):
        sys.exit(1)


# -- note and mcp -----------------------------------------------------------------------


@cli.command(
    "mcp",
    short_help="Serve the memory tools (search, get, append) over MCP.",
    epilog=examples("memext mcp -a work", "memext mcp --http 8765"),
)
@click.option("-a", "--agent", help="Serve only this agent (default: every configured agent).")
@click.option(
    "--http", "http_port", type=click.IntRange(1, 65535), help="Serve Streamable HTTP on 127.0.0.1:PORT (path /mcp) instead of stdio."
)
@click.option(
    "--session-idle",
    "idle_s",
    type=click.FloatRange(min=1),
    default=300,
    show_default=True,
    help="HTTP: seconds a session may go without a request before it expires.",
)
@click.option(
    "--max-sessions",
    type=click.IntRange(min=1),
    default=1000,
    show_default=True,
    help="HTTP: sessions held at most; past it the one idle the longest is ended.",
)
@click.option("--stateless", is_flag=True, help="HTTP: no sessions, each request served on its own (one-shot clients).")
@click.option(
    "--call-timeout",
    type=click.FloatRange(min=1),
    default=90,
    show_default=True,
    help="Seconds a tool call may take before it is answered with an error (a stalled store).",
)
@click.pass_context
def mcp_cmd(ctx, agent, http_port, idle_s, max_sessions, stateless, call_timeout) -> None:
    """Serve memory_search, memory_get and memory_append over MCP (stdio by default).

    One agent with -a, else every configured agent (the tools' `agent` argument).
    Over HTTP, clients must send the bearer token the server prints (kept in
    mcp-token beside the config file)."""
    try:
        from ..mcp_http import HttpOptions
        from ..mcp_server import serve
    except ImportError as exc:
        raise MemextError(f"the MCP server needs the mcp extra: pip install 'memext[mcp]' ({exc})") from None
    cfg = _config(ctx)
    http = HttpOptions(http_port, idle_s=idle_s, max_sessions=max_sessions, stateless=stateless) if http_port else None
    serve(cfg, [cfg.agent(agent).id] if agent else None, http=http, call_timeout=call_timeout)
