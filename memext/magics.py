"""The IPython magics: ``%memsearch``, ``%memrecall``, ``%memget``,
``%memstatus``, ``%memindex``, ``%%memnote``, ``%memforget`` and
``%memconsolidate`` (what they do is in :mod:`memext.api`, shared with
``memext.search()`` and friends).

Settings come from traitlets, so ``%config MemExt.max_results = 10`` (or
``c.MemExt.agent = "work"`` in ``ipython_config.py``) works. Bad flags are
one-line ``UsageError``s; engine errors (unknown agent, bad config, a path
outside memory) are shown as their message, never as a traceback.
"""

from __future__ import annotations

import argparse
import functools
import os
import shlex
import sys
from typing import Any, Callable

from IPython.core.error import UsageError
from IPython.core.magic import Magics, cell_magic, line_magic, magics_class, no_var_expand
from IPython.core.magic_arguments import argument, magic_arguments
from traitlets import Bool, Float, Int, TraitError, Unicode, validate

from memext.engine import MemextError, SearchOptions

from .api import run_consolidate, run_forget, run_get, run_note, run_recall, run_search, run_status
from .magic_lines import split_quiet
from .progress_bar import progress_for
from .session import Session
from .views import SyncSummaries, SyncSummary


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def _unit_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number between 0 and 1, got {text!r}") from None
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"must be between 0 and 1, got {value}")
    return value


def _split(line: str) -> list[str]:
    """Shell-like splitting that keeps a lone apostrophe (``Dana's``) as text.

    On Windows backslashes are path separators, not escapes.
    """
    posix = os.name != "nt"
    try:
        tokens = shlex.split(line, posix=posix)
    except ValueError:
        return line.split()
    if not posix:
        tokens = [t[1:-1] if len(t) > 1 and t[0] == t[-1] and t[0] in "'\"" else t for t in tokens]
    return tokens


def _parse(magic: Any, line: str) -> argparse.Namespace:
    """Parse a magic's flags (options may follow the query); bad ones raise UsageError.

    Words after ``--`` are query text even when they look like flags
    (``%memsearch -- -n``), which ``parse_intermixed_args`` alone refuses.
    """
    tokens = _split(line)
    literal: list[str] = []
    if "--" in tokens:
        cut = tokens.index("--")
        tokens, literal = tokens[:cut], tokens[cut + 1 :]
    args = magic.parser.parse_intermixed_args(tokens)
    if literal:
        if not hasattr(args, "query"):
            raise UsageError(f"unexpected arguments after '--': {' '.join(literal)}")
        args.query = [*args.query, *literal]
    return args


def _user_errors(fn: Callable) -> Callable:
    """Show engine errors as one line (a UsageError), not a traceback."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except (MemextError, OSError) as exc:  # OSError: a note that cannot be written
            raise UsageError(f"memext: {exc}") from None

    return wrapper


@magics_class
class MemExt(Magics):
    """Memory search magics; the class name is the ``%config`` section."""

    agent = Unicode(None, allow_none=True, help="Agent used when -a is not given (default: the first configured).").tag(config=True)
    max_results = Int(None, allow_none=True, help="Results per %memsearch (default: the agent's query.max_results).").tag(config=True)
    min_score = Float(None, allow_none=True, help="Drop results scoring below this (default: the agent's query.min_score).").tag(
        config=True
    )
    widget = Bool(False, help="Show %memsearch as the live search widget by default.").tag(config=True)

    def __init__(self, shell: Any = None, session: Session | None = None, **kwargs: Any):
        # Set before super().__init__: loading the shell's config runs the validators.
        self.session = session or Session()
        self._loading = True
        try:
            super().__init__(shell=shell, **kwargs)
        finally:
            self._loading = False

    def _reject(self, message: str, fallback: Any = None) -> Any:
        """A bad setting: refused by ``%config``; ignored, with a warning,
        when it comes from a config file, so the extension still loads."""
        if self._loading:
            print(f"memext: ignoring {message}", file=sys.stderr)
            return fallback
        raise TraitError(message)

    @validate("max_results")
    def _check_max_results(self, proposal):
        value = proposal["value"]
        if value is not None and not 1 <= value <= 200:
            return self._reject(f"MemExt.max_results must be between 1 and 200, got {value}")
        return value

    @validate("min_score")
    def _check_min_score(self, proposal):
        value = proposal["value"]
        if value is not None and not 0.0 <= value <= 1.0:
            return self._reject(f"MemExt.min_score must be between 0 and 1, got {value}")
        return value

    @validate("agent")
    def _check_agent(self, proposal):
        value = proposal["value"] or None
        if value is not None:
            try:
                self.session.resolve_agent(value)
            except MemextError as exc:
                return self._reject(f"MemExt.agent: {exc}")
        return value

    def close(self) -> None:
        """Stop background syncs and close the indexes."""
        self.session.close()

    def _shown(self, result: Any, quiet: bool) -> Any:
        """``result``, hidden for this cell when the line ended in ``;``."""
        if quiet:
            result.hide_display_in_this_cell(self.shell)
        return result

    # -- %memsearch ---------------------------------------------------------------

    @line_magic
    @no_var_expand
    @magic_arguments()
    @argument("-a", "--agent", help="Agent id (default: MemExt.agent or the first configured).")
    @argument("-n", "--max-results", type=_positive_int, help="How many results (default: MemExt.max_results or the agent's setting).")
    @argument("--min-score", type=_unit_float, help="Drop results below this score, 0..1.")
    @argument("--max-lines", type=_positive_int, help="Reading budget: as many results as fit in this many lines, overlapping hits merged.")
    @argument("--source", choices=["memory", "sessions"], help="Search one source only.")
    @argument("--since", metavar="WHEN", help="Only memory dated on or after WHEN: 2026-03-01, 7d, 2w, 3m, 1y, today, yesterday.")
    @argument("--before", metavar="WHEN", help="Only memory dated before WHEN (same forms as --since).")
    @argument("--explain", action="store_true", help="Show how each score was made.")
    @argument("--weak", action="store_true", help="Show weak matches when none is confident (marked weak).")
    @argument("--all", dest="include_forgotten", action="store_true", help="Show forgotten and superseded entries too (labelled).")
    @argument("--json", action="store_true", help="Show the results as JSON.")
    @argument("--widget", action="store_true", help="Open the live search widget instead.")
    @argument("query", nargs="*", help="What to look for (no $variable expansion).")
    @_user_errors
    def memsearch(self, line: str = ""):
        """Search the agent's memory; returns a list-like SearchResults.

        ``r = %memsearch deploy checklist`` keeps the results; ``r.to_json()``
        and ``r.to_dataframe()`` convert them. A trailing ``;`` hides them.
        """
        line, quiet = split_quiet(line)
        args = _parse(self.memsearch, line)
        query = " ".join(args.query).strip()
        agent = args.agent or self.agent
        max_results = args.max_results or self.max_results
        min_score = args.min_score if args.min_score is not None else self.min_score
        listing_only = [
            flag
            for flag, on in (
                ("--json", args.json),
                ("--explain", args.explain),
                ("--source", args.source),
                ("--max-lines", args.max_lines),
                ("--before", args.before),
                ("--weak", args.weak),
                ("--all", args.include_forgotten),
            )
            if on
        ]
        if args.widget and listing_only:
            raise UsageError(f"--widget cannot show {', '.join(listing_only)}; leave out --widget for a result list")
        # MemExt.widget is only a default: flags the widget cannot show get the list.
        if args.widget or (self.widget and not listing_only):
            from .widget import SearchWidget

            return SearchWidget(self.session, agent=agent, query=query, max_results=max_results, min_score=min_score, since=args.since)
        if not query:
            raise UsageError("%memsearch needs a query, e.g. %memsearch deploy checklist")
        options = SearchOptions(
            max_results=max_results,
            min_score=min_score,
            sources=[args.source] if args.source else None,
            explain=args.explain,
            max_lines=args.max_lines,
            after=args.since,
            before=args.before,
            include_weak=args.weak,
            include_forgotten=args.include_forgotten,
        )
        results = run_search(self.session, query, options, agent=agent, as_json=args.json)
        return self._shown(results, quiet)

    # -- %memrecall ---------------------------------------------------------------------

    @line_magic
    @no_var_expand
    @magic_arguments()
    @argument("-a", "--agent", help="Agent id (default: MemExt.agent or the first configured).")
    @argument("-n", "--max-results", type=_positive_int, help="How many memories at most (default: the agent's recall.max_results).")
    @argument("--json", action="store_true", help="Show the recall as JSON.")
    @argument("message", nargs="*", help="The message to recall memories for (no $variable expansion).")
    @_user_errors
    def memrecall(self, line: str = ""):
        """The few memories a message calls for, as a model would get them
        before its turn (confident, live and trusted only); returns a
        list-like RecalledMemories whose ``.context`` is that block.
        Shows "nothing recalled" and why when none is."""
        line, quiet = split_quiet(line)
        args = _parse(self.memrecall, line)
        message = " ".join(args.message).strip()
        if not message:
            raise UsageError("%memrecall needs a message, e.g. %memrecall book my flight to Lisbon")
        got = run_recall(self.session, message, agent=args.agent or self.agent, limit=args.max_results, as_json=args.json)
        return self._shown(got, quiet)

    # -- %memget ------------------------------------------------------------------------

    @line_magic
    @no_var_expand
    @magic_arguments()
    @argument("spec", help="PATH, PATH:LINE, PATH:FROM-TO or PATH:FROM- (to the end); workspace-relative or absolute.")
    @argument("-a", "--agent", help="Agent id.")
    @argument("--from", dest="from_line", type=_positive_int, help="First line (1-based).")
    @argument("--lines", type=_positive_int, help="How many lines.")
    @_user_errors
    def memget(self, line: str = ""):
        """Read lines of a memory file; returns the text (a str).

        ``%memget memory/2026-10-05.md:3-9`` or ``%memget MEMORY.md --from 3
        --lines 7``. Only memory files can be read.
        """
        line, quiet = split_quiet(line)
        args = _parse(self.memget, line)
        lines = run_get(self.session, args.spec, agent=args.agent or self.agent, from_line=args.from_line, lines=args.lines)
        return self._shown(lines, quiet)

    # -- %memstatus ------------------------------------------------------------------------

    @line_magic
    @magic_arguments()
    @argument("-a", "--agent", help="One agent (default: every configured agent).")
    @_user_errors
    def memstatus(self, line: str = ""):
        """Status of one or every agent's index, as a table (StatusTable)."""
        line, quiet = split_quiet(line)
        args = _parse(self.memstatus, line)
        return self._shown(run_status(self.session, args.agent), quiet)

    # -- %memindex ------------------------------------------------------------------------

    @line_magic
    @magic_arguments()
    @argument("-a", "--agent", help="Agent id.")
    @argument("--all", dest="all_agents", action="store_true", help="Index every configured agent.")
    @argument("--force", action="store_true", help="Rebuild the index from scratch.")
    @_user_errors
    def memindex(self, line: str = ""):
        """Bring an agent's index up to date, with a progress bar."""
        line, quiet = split_quiet(line)
        args = _parse(self.memindex, line)
        agents = self.session.agent_ids() if args.all_agents else [self.session.resolve_agent(args.agent or self.agent).id]
        summaries = []
        for agent in agents:
            idx = self.session.index(agent)
            with progress_for(self.shell, agent, stream=sys.stderr) as bar:
                report = idx.sync(force=args.force, progress=bar)
            summary = SyncSummary(agent, report, idx.status())
            summary.repeated = self.session.repeated_notices(summary.provider_notices())
            summaries.append(summary)
        return self._shown(summaries[0] if len(summaries) == 1 else SyncSummaries(summaries), quiet)

    # -- %%memnote --------------------------------------------------------------------------

    @cell_magic
    @magic_arguments()
    @argument("-a", "--agent", help="Agent id.")
    @argument("--file", help="A memory file, e.g. memory/2026-10-14.md (default: today's daily log).")
    @argument("--long-term", action="store_true", help="Append to MEMORY.md instead.")
    @_user_errors
    def memnote(self, line: str, cell: str):
        """Append the cell body to today's daily log (or MEMORY.md) under a
        timestamp; the index picks it up in the background."""
        args = _parse(self.memnote, line)
        if args.file and args.long_term:
            raise UsageError("use either --file or --long-term, not both")
        note = run_note(self.session, cell, agent=args.agent or self.agent, file=args.file, long_term=args.long_term)
        print(f"noted in {note.citation}" + (" (new file)" if note.created else ""))
        return None

    # -- %memforget ---------------------------------------------------------------------------

    @line_magic
    @no_var_expand
    @magic_arguments()
    @argument("citation", help="The entry: PATH:LINE or PATH:FROM-TO (a search result's citation).")
    @argument("reason", nargs="*", help="Why it is no longer true (kept in the file with the mark).")
    @argument("-a", "--agent", help="Agent id.")
    @_user_errors
    def memforget(self, line: str = ""):
        """Mark the entry at a citation forgotten: the file keeps it, marked
        with today's date and the reason; search leaves it out (``%memsearch --all``
        and ``include_forgotten`` still show it, labelled)."""
        line, _quiet = split_quiet(line)
        args = _parse(self.memforget, line)
        reason = " ".join(args.reason).strip() or None
        marked = run_forget(self.session, args.citation, reason=reason, agent=args.agent or self.agent)
        for c in marked.marked:
            print(f"forgot {c}" + (f" ({marked.reason})" if marked.reason else ""))
        for c in marked.already:
            print(f"{c} was already marked; left as it is")
        return None

    # -- %memconsolidate -----------------------------------------------------------------------

    @line_magic
    @magic_arguments()
    @argument("-a", "--agent", help="Agent id.")
    @_user_errors
    def memconsolidate(self, line: str = ""):
        """Propose the daily-note facts searches keep returning for
        MEMORY.md, as a diff with an "Apply" button that appends them
        (nothing in MEMORY.md is changed; the daily notes stay)."""
        line, _quiet = split_quiet(line)
        args = _parse(self.memconsolidate, line)
        return run_consolidate(self.session, args.agent or self.agent)
