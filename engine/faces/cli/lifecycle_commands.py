"""``memext note``, ``memext forget``, ``memext capture``, ``memext
consolidate`` and ``memext recall``: writing an entry, marking entries no
longer true, storing what a conversation stated, moving the facts searches
keep returning into MEMORY.md (DESIGN.md §17), and the memories a message
calls for (§18). Each works on one agent: without ``-a``, the agent whose
workspace holds the current folder (see ``pick_agent``)."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Sequence

import click

from ... import MemextError
from .group import ERROR_STATUS, NOTHING_FOUND_STATUS
from .options import (
    check_has_memory,
    ctx_config,
    examples,
    json_option,
    pick_agent,
    picked_agent_option,
    picked_from_ctx as _picked,
    picked_index as _open,
    print_json,
    stdin_text,
    text_agent_and_count,
)
from .output import listed_results, terminal_safe

#: How long `memext recall` waits for another process's sync before
#: recalling from the index as it is (as `memext search` does).
RECALL_LOCK_WAIT_S = 2.0

if TYPE_CHECKING:
    from ... import CaptureReport, Proposal
    from ...memory.capture import Problem


@click.command(
    "note",
    short_help="Append a note (TEXT or stdin) to memory, then index it.",
    epilog=examples(
        'memext note "Anna leads the billing team now."', 'echo "Deploys moved to Tuesdays." | memext note --long-term', ok="noted"
    ),
)
@click.argument("text", required=False)
@picked_agent_option
@click.option("--file", help="A memory file, e.g. memory/projects/x.md (default: today's daily log).")
@click.option("--heading", help="The entry's heading (default: the current time).")
@click.option("--long-term", is_flag=True, help="Append to MEMORY.md instead.")
@click.option("--supersedes", metavar="CITATION", help="An entry this note replaces (PATH:LINE or PATH:FROM-TO): it is marked superseded.")
@click.option(
    "--untrusted", is_flag=True, help="Store text that reads as instructions to a model, marked untrusted, instead of refusing it."
)
@json_option
@click.pass_context
def note_cmd(ctx, text, agent, file, heading, long_term, supersedes, untrusted, as_json) -> None:
    """Append TEXT (or stdin, when TEXT is missing or -) to memory, then index it.

    Append-only: nothing already in the file is changed, except that
    --supersedes marks the entry it replaces (DESIGN.md §17)."""
    from ... import LONG_TERM_FILE, EntryMeta

    if file and long_term:
        raise MemextError("use either --file or --long-term, not both")
    if text is None or text == "-":
        if sys.stdin.isatty() and text is None:
            raise MemextError('give the note as an argument (memext note "...") or on stdin')
        text = stdin_text("the note")
    picked = pick_agent(ctx_config(ctx), agent)
    with _open(ctx, picked) as idx:
        written = idx.append(
            text,
            file=LONG_TERM_FILE if long_term else file,
            heading=heading,
            meta=EntryMeta(origin="person", via="cli", untrusted=untrusted),
            supersedes=supersedes,
        )
    if as_json:
        print_json({"agent": picked.agent.id, **written.to_dict()})
        return
    about = [f"agent {picked.agent.id}"] * picked.name_it + ["new file"] * written.created
    click.echo(f"noted in {written.citation}" + (f" ({', '.join(about)})" if about else ""))
    for old in written.superseded:
        click.echo(f"marked {old} superseded")
    if written.notice:
        click.echo(f"memext: {written.notice}", err=True)


@click.command(
    "forget",
    short_help="Mark an entry (PATH:LINE or PATH:FROM-TO) as no longer true.",
    epilog=examples(
        'memext forget MEMORY.md:12 --reason "moved to Berlin"', "memext forget memory/2026-03-01.md:5-8", ok="marked (or marked already)"
    ),
)
@click.argument("citation")
@picked_agent_option
@click.option("--reason", help="Why it is no longer true (kept in the file with the mark).")
@json_option
@click.pass_context
def forget_cmd(ctx, citation, agent, reason, as_json) -> None:
    """Mark the entry at CITATION (PATH:LINE or PATH:FROM-TO) forgotten.

    The file keeps the entry, marked with today's date and the reason, so
    `memext get` still shows it; search leaves it out (--all shows it).
    A heading marks its whole section, another line its list item or
    paragraph. To replace an entry, use `memext note --supersedes`."""
    with _open(ctx, _picked(ctx, agent)) as idx:
        marked = idx.forget(citation, reason)
    if as_json:
        print_json(marked.to_dict())
        return
    for c in marked.marked:
        click.echo(f"forgot {c}" + (f" ({marked.reason})" if marked.reason else ""))
    for c in marked.already:
        click.echo(f"{c} was already marked; left as it is")
    for c in marked.linked:  # a consolidated copy of it, or the source it was copied from
        click.echo(f"forgot {c} too (linked by from=)")


@click.command(
    "capture",
    short_help="Store the facts, preferences and decisions of a transcript (JSONL).",
    epilog=examples(
        "memext capture chat.jsonl --dry-run",
        "memext capture -a work sessions/today.jsonl --json",
        ok="stored (or nothing to store)",
        error="an error (usage, configuration, I/O; a transcript or a line of it unreadable: the lines read were stored)",
    ),
)
@click.argument("transcript", type=click.Path(dir_okay=False, path_type=Path))
@picked_agent_option
@click.option("--dry-run", is_flag=True, help="Show what would be stored; write nothing.")
@click.option("--include-assistant", is_flag=True, help="Read the assistant's messages too (default: the user's only).")
@json_option
@click.pass_context
def capture_cmd(ctx, transcript, agent, dry_run, include_assistant, as_json) -> None:
    """Read TRANSCRIPT (JSONL: one {"role", "content"} message a line, or
    session records) and store what it states, by rules, without a model.

    Running it is consent: it stores what it finds (--dry-run shows it
    instead); memory_search.capture.enabled gates only automatic capture.
    Duplicates of memory already written, questions, markup and text that
    reads as instructions are left out; a change of fact ("actually ...
    now, not ...") supersedes the entry it replaces."""
    from ... import capture
    from ...for_faces import read_transcript

    try:
        read = read_transcript(transcript)
        with _open(ctx, _picked(ctx, agent)) as idx:
            report = capture(read.messages, index=idx, dry_run=dry_run, include_assistant=include_assistant)
    except MemextError as exc:
        click.echo(f"memext: error: {exc}", err=True)
        ctx.exit(ERROR_STATUS)
    if as_json:
        print_json({**report.to_dict(), "problems": [{"line": p.line, "reason": p.reason} for p in read.problems]})
    else:
        _show_capture(report, transcript, read.problems)
    if read.problems:
        ctx.exit(ERROR_STATUS)


def _show_capture(report: CaptureReport, transcript: Path, problems: Sequence[Problem]) -> None:
    for c in report.written:
        where = c.citation if report.stored else "would store"
        click.echo(terminal_safe(f"{where}  [{c.candidate.category} {c.candidate.importance:g}]  {c.candidate.text}"))
        if c.supersedes:
            verb = "superseded" if report.stored else "would supersede"
            click.echo(terminal_safe(f"  {verb} {c.supersedes}: {c.superseded_text}"))
    for s in report.skipped:
        click.echo(click.style(terminal_safe(f"skipped  {s.candidate.text}  ({s.reason})"), dim=True))
    if not report.written:
        click.echo("nothing to store")
    for p in problems:
        click.echo(terminal_safe(f"memext: {transcript}:{p.line}: {p.reason}: skipped"), err=True)
    if problems:
        lines = "line" if len(problems) == 1 else "lines"
        click.echo(f"memext: {len(problems)} {lines} of {transcript} could not be read", err=True)


@click.command(
    "consolidate",
    short_help="Propose the daily-note facts searches keep returning for MEMORY.md (--yes appends them).",
    epilog=examples(
        "memext consolidate --yes", "memext consolidate -a work --json", ok="proposed or appended", nothing="nothing to propose"
    ),
)
@picked_agent_option
@click.option("--yes", "apply", is_flag=True, help="Append the proposed lines to MEMORY.md (default: show the diff only).")
@json_option
@click.pass_context
def consolidate_cmd(ctx, agent, apply, as_json) -> None:
    """Show, as a unified diff of MEMORY.md, the facts of the daily notes
    that searches returned on at least two days (most used and most recent
    first), each citing its source; --yes appends them under a
    "## Consolidated" heading.

    Nothing already in MEMORY.md is changed and the daily notes stay as
    they are. Forgotten, superseded and untrusted entries, and lines
    MEMORY.md already says, are left out."""
    from ... import consolidate

    with _open(ctx, _picked(ctx, agent)) as idx:
        proposal = consolidate(index=idx, apply=apply, via="cli")
    if as_json:
        print_json(proposal.to_dict())
    else:
        _show_proposal(proposal)
    if not proposal.facts:
        ctx.exit(NOTHING_FOUND_STATUS)


def _show_proposal(proposal: Proposal) -> None:
    for x in proposal.left_out:
        click.echo(click.style(f"left out  {x.source}  {x.text}  ({x.reason})", dim=True))
    if not proposal.facts:
        click.echo("nothing to consolidate: no daily-note fact was returned by searches on two days or more")
        return
    for line in proposal.diff.splitlines():
        color = "green" if line.startswith("+") and not line.startswith("+++") else None
        click.echo(click.style(line, fg=color) if color else line)
    if proposal.applied:
        click.echo(f"appended {len(proposal.facts)} line(s) to {proposal.citation}")
        if proposal.notice:
            click.echo(f"memext: {proposal.notice}", err=True)
    else:
        click.echo(f"{len(proposal.facts)} line(s) proposed; run again with --yes to append them to {proposal.file}")


@click.command(
    "recall",
    short_help="The memories a message calls for, as a context block for a model.",
    epilog=examples(
        'memext recall "Can you book my flight to Lisbon?"',
        "memext recall -a work --json - < message.txt",
        ok="memories recalled",
        nothing="nothing recalled",
    ),
)
@text_agent_and_count("text", 20, "How many memories at most (default: recall.max_results, 3).")
@click.option("--deadline", type=click.IntRange(1), metavar="MS", help="Milliseconds recall may take (default: recall.deadline_ms).")
@click.option("--list", "as_list", is_flag=True, help="List the memories as search does, instead of the context block.")
@click.option("--no-sync", is_flag=True, help="Recall from the index as it is, without syncing changed files first.")
@json_option
@click.pass_context
def recall_cmd(ctx, text, agent, max_results, deadline, as_list, no_sync, as_json) -> None:
    """Print the context block of the memories the message TEXT (- reads
    it from stdin) calls for: at most 3 confident matches, never forgotten,
    superseded or untrusted entries, MEMORY.md and important entries first,
    quoted as notes the user wrote earlier, not instructions (DESIGN.md §18).

    Files changed since the last sync are indexed first (--no-sync skips
    it); the deadline covers the recall itself: past it, nothing is
    recalled and a note says why."""
    from ...for_faces import SyncWhenNeeded

    message = _message(text)
    picked = _picked(ctx, agent)
    check_has_memory(picked.agent)
    host = SyncWhenNeeded(lambda _agent: _open(ctx, picked), RECALL_LOCK_WAIT_S)
    got = None
    try:
        idx = host.index(picked.agent.id)
        note = None if no_sync else host.sync_before_search(idx)
        got = idx.recall(message, limit=max_results, deadline=None if deadline is None else deadline / 1000.0)
    finally:
        if got is None or not got.timed_out:
            host.close()
    if note:
        click.echo(click.style(f"note: {note}", fg="yellow"), err=True)
    if as_json:
        print_json({"agent": picked.agent.id, **got.to_dict()})
    elif got and as_list:
        for line in listed_results(got.results, message, scored=False):
            click.echo(line)
    elif got:
        click.echo(terminal_safe(got.context))
    if not got:
        if not as_json:
            click.echo(terminal_safe(f"nothing recalled: {got.notice}" if got.notice else "nothing recalled"), err=True)
        if got.timed_out:
            # The search left running still uses the index (and maybe a
            # local model): exit without tearing down what it holds.
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(NOTHING_FOUND_STATUS)
        ctx.exit(NOTHING_FOUND_STATUS)


def _message(words: tuple[str, ...]) -> str:
    """The message: the words, or stdin as it is for ``-`` (its lines kept,
    so a quoted recalled block is seen as one)."""
    if words != ("-",):
        return " ".join(words)
    text = stdin_text("the message")
    if not text.strip():
        raise MemextError("the message on stdin is empty")
    return text
