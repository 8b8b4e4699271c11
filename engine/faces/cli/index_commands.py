"""``memext index`` and ``memext status``: bringing agents' indexes up to
date, and what each index holds and how it is doing."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import click

from ... import AgentConfig, Config, MemextError
from .group import ERROR_STATUS, Trouble, os_error_line
from .options import (
    agent_option,
    check_has_memory,
    ctx_config as _config,
    examples,
    json_option,
    one_shot_index as _index,
    picked_agent_option,
    picked_with_memory,
    print_json as _print_json,
    sync_progress_bar,
)
from .output import status_lines, terminal_safe

if TYPE_CHECKING:
    from ... import IndexStatus, SyncReport


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


@click.command(
    "index",
    short_help="Index (or update the index of) an agent's memory files.",
    epilog=examples(
        "memext index -a work",
        "memext index --all --force",
        ok="indexed",
        error="an error (usage, configuration, I/O; a provider that failed, leaving files keyword-only)",
    ),
)
@picked_agent_option
@click.option("--all", "all_agents", is_flag=True, help="Index every configured agent.")
@click.option("--force", is_flag=True, help="Rebuild the index from scratch.")
@json_option
@click.pass_context
def index_cmd(ctx: click.Context, agent: str | None, all_agents: bool, force: bool, as_json: bool) -> None:
    """Index (or update the index of) an agent's memory files."""
    cfg = _config(ctx)
    # As `memext search` does: an empty ad-hoc folder gets no index.
    if all_agents:
        agents = cfg.agents
        for a in agents:
            check_has_memory(a)
    else:
        agents = [picked_with_memory(cfg, agent).agent]
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
            if st.provider.keyword_only:
                click.echo(f"  note: {st.provider.reason}", err=True)
        if report.provider_error:
            # Indexed, but not as configured: a script must see it (exit status 2).
            failed.append(a.id)
            click.echo(
                f"memext: error: {a.id}: embedding failed ({report.provider_error}); those files are keyword-only until the next sync",
                err=True,
            )
    if as_json:
        _print_json(out if all_agents else out[0])
    if failed:
        ctx.exit(ERROR_STATUS)


def _index_one(cfg: Config, a: AgentConfig, force: bool, *, show_progress: bool) -> tuple[SyncReport, IndexStatus]:
    """Check the index file (a damaged one is set aside and rebuilt), then
    sync one agent; returns (report, status)."""
    with _index(cfg, a) as idx:
        idx.verify()  # what it did is logged (stderr)
        if show_progress:
            with sync_progress_bar(a.id) as bar:
                report = idx.sync(force=force, progress=bar)
        else:
            report = idx.sync(force=force)
        return report, idx.status()


@click.command(
    "status",
    short_help="Show files, chunks, provider and health of one or every agent.",
    epilog=examples(
        "memext status",
        "memext status -a work --json",
        ok="every agent healthy",
        error="an error (an agent in error; usage, configuration, I/O)",
    ),
)
@agent_option
@json_option
@click.pass_context
def status_cmd(ctx, agent, as_json) -> None:
    """Show files, chunks, provider and health of one or every agent."""
    from ... import IndexStatus

    # Every failure is exit 2 with its line on stderr (a config that cannot
    # be read included): a health check tells "broken" from a status.
    try:
        cfg = _config(ctx)
        agents = [cfg.agent(agent)] if agent else cfg.agents
    except MemextError as exc:
        raise Trouble(str(exc)) from exc
    rows: list[IndexStatus | dict[str, str]] = []  # in config order; a dict is an agent that failed to open
    for a in agents:
        try:
            with _index(cfg, a) as idx:
                rows.append(idx.status())
        except (MemextError, OSError) as exc:  # one broken agent must not hide the others
            rows.append({"agent": a.id, "error": str(exc) if isinstance(exc, MemextError) else os_error_line(exc)})
    if as_json:
        # Always a list, with -a too: one shape for scripts to read.
        _print_json([r.to_dict() if isinstance(r, IndexStatus) else r for r in rows])
    else:
        for r in rows:
            if isinstance(r, IndexStatus):
                for line in status_lines(r):
                    click.echo(line)
    # What is wrong goes to stderr, one line each, and fails the command
    # (exit 2): a script or a health check sees it without parsing the table.
    problems = [(r.agent, p) for r in rows if isinstance(r, IndexStatus) for p in r.problems]
    problems += [(r["agent"], r["error"]) for r in rows if not isinstance(r, IndexStatus)]
    for agent_id, problem in problems:
        click.echo(f"memext: error: {agent_id}: {terminal_safe(problem)}", err=True)
    if problems:
        sys.exit(ERROR_STATUS)
