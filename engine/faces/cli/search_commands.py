"""``memext search`` and ``memext get``: searching an agent's memory (after
syncing what changed, by the agent tools' policy) and reading lines of a
memory file."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import click

from ... import AgentConfig, MemextError, MemoryIndex, SearchOptions
from ...for_faces import SyncWhenNeeded
from .group import NOTHING_FOUND_STATUS
from .options import (
    ctx_config as _config,
    examples,
    json_option,
    one_shot_index as _index,
    picked_agent_option,
    picked_from_ctx,
    picked_index,
    picked_with_memory,
    print_json as _print_json,
    stdin_text,
    sync_progress_bar,
    text_agent_and_count,
)
from .output import listed_results, terminal_safe

if TYPE_CHECKING:
    from ... import SearchResponse

#: How long `memext search` waits for another process's sync (the tray's,
#: say) before searching the index as it is.
SEARCH_LOCK_WAIT_S = 2.0


@click.command(
    "search",
    short_help="Search memory: a citation, score and lines per result.",
    epilog=examples(
        'memext search "deploy checklist"',
        'memext search -a work --since 7d --json "who owns billing"',
        ok="results",
        nothing="no memory matches",
    ),
)
@text_agent_and_count("query", 200, "How many results (default: query.max_results).")
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
    """Search memory; prints a citation (path:START-END, or path:LINE for one
    line), score and the lines around the best match per result (QUERY -
    reads the query from stdin).

    Files changed since the last sync are indexed first (--no-sync, or
    sync.on_search = false in the config, skips it). A file's date, for
    --since and --before: the date its name starts with (memory/2026-03-01.md),
    else a date: field in its front matter, else its modification time.

    No memory matches (exit status 1, as grep's) when none of the matches
    is confident: "no memory matches 'X'"; --weak shows those weak matches,
    marked weak."""
    text = _query_text(query)
    cfg = _config(ctx)
    picked = picked_with_memory(cfg, agent)
    agent_cfg = picked.agent

    options = SearchOptions(
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

    def run(idx: MemoryIndex) -> SearchResponse:
        return idx.search(text, options=options)

    # The index never syncs by itself: a one-shot process syncs a stale index
    # in the foreground first, by the agent tools' policy (DESIGN.md §5).
    host = SyncWhenNeeded(
        lambda _agent: _index(cfg, agent_cfg),
        SEARCH_LOCK_WAIT_S,
        progress=sync_progress_bar if not as_json and sys.stderr.isatty() else None,
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
            ctx.exit(NOTHING_FOUND_STATUS)
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
        ctx.exit(NOTHING_FOUND_STATUS)
    for line in listed_results(resp.results, text, explain=explain):
        click.echo(line)


def _notice_lines(resp: SearchResponse, agent: AgentConfig, cause: str | None) -> list[str]:
    """The search's notices; that search is keyword-only by set-up only the
    first time for the agent's workspace and that reason (see :mod:`.one_time_notices`)."""
    from .one_time_notices import SaidOnce, keyword_only_line

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


@click.command(
    "get",
    short_help="Print lines of a memory file: PATH, PATH:LINE or PATH:FROM-TO.",
    epilog=examples(
        "memext get memory/2026-03-01.md:10-20",
        "memext get MEMORY.md:40- -N",
        ok="lines printed",
        nothing="no such memory file or line",
    ),
)
@click.argument("spec")
@picked_agent_option
@click.option("--from", "from_line", type=click.IntRange(1), help="First line (1-based).")
@click.option("--lines", type=click.IntRange(1), help="How many lines.")
@click.option("-N", "--line-numbers", is_flag=True, help="Prefix each line with its number.")
@click.option("--raw", is_flag=True, help="The lines as the file holds them, metadata comments included.")
@json_option
@click.pass_context
def get_cmd(ctx, spec, agent, from_line, lines, line_numbers, raw, as_json) -> None:
    """Print lines of a memory file: PATH (all of it), PATH:LINE (that one
    line, as a citation means it), PATH:FROM-TO or PATH:FROM- (to the end).

    memext's metadata comments are left out and a line whose entry was
    forgotten or superseded ends in [forgotten] or [superseded by
    PATH:LINE]; --raw prints the file's text as it is (--json: the text as
    it is, and the retired lines).

    A missing file or a first line past the end is nothing found (exit 1),
    said in one line on stderr."""
    from ... import LinesNotFound
    from ...for_faces import parse_get_spec

    path, start, count = parse_get_spec(spec)
    picked = picked_from_ctx(ctx, agent)
    with picked_index(ctx, picked) as idx:
        read = idx.get(path, from_line or start, lines or count)
    try:
        res = read.require_lines()
    except LinesNotFound as exc:
        if as_json:
            _print_json({"agent": picked.agent.id, **read.to_dict()})
        click.echo(f"memext: {terminal_safe(str(exc))}", err=True)
        ctx.exit(NOTHING_FOUND_STATUS)
    if as_json:
        _print_json({"agent": picked.agent.id, **res.to_dict()})
        return
    if picked.name_it:  # on stderr: stdout is the file's own text
        click.echo(click.style(picked.header(), dim=True), err=True)
    # A note's control characters are shown escaped, never sent to the
    # terminal (--json escapes them as JSON does).
    text = res.text if raw else res.shown_text()
    if line_numbers:
        width = len(str(res.to_line))
        for n, line in enumerate(text.split("\n"), start=res.from_line):
            click.echo(f"{n:>{width}}  {terminal_safe(line)}")
    else:
        click.echo(terminal_safe(text))
    if res.truncated:
        click.echo(f"memext: output stopped at line {res.to_line} of {res.total_lines}; use --from {res.to_line + 1}", err=True)
