"""Plain functions beside the magics: ``memext.search("Berlin trip")``.

For notebook code that wants a value rather than a magic line::

    import memext
    r = memext.search("when is the Berlin trip?", max_results=3)
    memext.get(r[0].citation)          # the lines, numbered
    memext.status()                    # every agent, as a table
    memext.note("Booked the hotel.")   # appended to today's daily log
    memext.recall("book my flight")    # the memories a message calls for

They return the same objects the magics return (:class:`SearchResults`,
:class:`FileLines`, :class:`StatusTable`), which display themselves, and
raise :class:`memext.engine.MemextError` with a message on bad input.

They share the magics' session (open indexes, settings such as
``MemExt.agent``) when ``%load_ext memext`` ran; otherwise they use one
:class:`Session` for the process, :func:`default_session`, closed at exit.
The ``run_*`` functions are what the magics, the widget and these functions
have in common: the freshness step before a search and the notice shown
once per session.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

from memext.engine import AppendResult, MemextError, SearchOptions
from memext.engine.for_faces import parse_get_spec

from .notes import append_note
from .recalled import RecalledMemories
from .results import SearchResults
from .session import Session
from .views import FileLines, StatusTable

if TYPE_CHECKING:
    from memext.engine import RetireResult

    from .consolidation import ConsolidationView

_own_session: Session | None = None
_own_lock = threading.Lock()


def run_search(
    session: Session, query: str, options: SearchOptions | None = None, *, agent: str | None = None, as_json: bool = False
) -> SearchResults:
    """Search an agent's index as a notebook does: let its keeper make the
    index fresh enough first (see ``FreshnessKeeper.before_search``), then
    search with ``options`` (the defaults when None)."""
    keeper = session.keeper(agent)
    keeper.before_search()
    idx = keeper.index
    response = idx.search(query, options=options or SearchOptions())
    results = SearchResults(response, idx.agent.id, as_json=as_json, syncing=session.syncing(idx.agent.id))
    results.repeated = session.repeated_notices(results.provider_notices())
    return results


def run_recall(
    session: Session, text: str, *, agent: str | None = None, limit: int | None = None, as_json: bool = False
) -> RecalledMemories:
    """The memories an agent's memory holds for the message ``text``
    (``MemoryIndex.recall``), after the freshness step a search takes."""
    keeper = session.keeper(agent)
    keeper.before_search()
    idx = keeper.index
    return RecalledMemories(idx.recall(text, limit=limit), idx.agent.id, text, as_json=as_json)


def run_get(session: Session, spec: str, *, agent: str | None = None, from_line: int | None = None, lines: int | None = None) -> FileLines:
    """Read lines of a memory file: ``PATH``, ``PATH:LINE`` (one line),
    ``PATH:FROM-TO`` or ``PATH:FROM-`` (to the end).

    A missing file or a first line past the end raises the CLI's error."""
    path, start, count = parse_get_spec(spec)
    read = session.index(agent).get(path, from_line or start, lines or count)
    return FileLines(read.require_lines())


def run_status(session: Session, agent: str | None = None) -> StatusTable:
    """One agent's status, or every agent's (one broken agent does not hide the others)."""
    agents = [session.resolve_agent(agent).id] if agent else session.agent_ids()
    statuses, errors = [], {}
    for agent_id in agents:
        try:
            statuses.append(session.index(agent_id).status())
        except MemextError as exc:
            if agent:
                raise
            errors[agent_id] = str(exc)
    return StatusTable(statuses, errors)


def run_note(session: Session, text: str, *, agent: str | None = None, file: str | None = None, long_term: bool = False) -> AppendResult:
    """Append a note to memory; the agent's keeper syncs it in the
    background and the next search waits for that sync."""
    keeper = session.keeper(agent)
    keeper.index.check_workspace()  # an unmounted drive's empty mount point must not get the note
    note = append_note(keeper.agent, text, file=file, long_term=long_term)
    keeper.request("note")
    return note


def run_consolidate(session: Session, agent: str | None = None) -> ConsolidationView:
    """The consolidation proposal of an agent, shown with an "Apply" button
    that appends exactly what is shown (``memext consolidate --yes``)."""
    from memext.engine import apply_proposal, consolidate

    from .consolidation import ConsolidationView  # ipywidgets loads when it is shown

    idx = session.index(agent)
    proposal = consolidate(index=idx, via="notebook")
    return ConsolidationView(proposal, lambda p: apply_proposal(p, index=session.index(p.agent), via="notebook"))


def run_forget(session: Session, citation: str, *, reason: str | None = None, agent: str | None = None) -> RetireResult:
    """Mark the entries at ``citation`` forgotten (``memext forget``): the
    file keeps them, marked; search leaves them out."""
    return session.index(agent).forget(citation, reason)


# -- the plain functions ----------------------------------------------------------------------


def default_session() -> Session:
    """The session the plain functions use: the magics' after ``%load_ext
    memext``, else one for this process (opened on first use, closed at exit)."""
    magics = loaded_magics()
    if magics is not None:
        return magics.session
    global _own_session
    with _own_lock:
        if _own_session is None or _own_session.closed:
            _own_session = Session()  # closed at exit, like every Session
        return _own_session


def loaded_magics() -> Any:
    """The ``MemExt`` magics of the running IPython shell, if loaded."""
    try:
        from IPython import get_ipython
    except ImportError:
        return None
    shell = get_ipython()
    if shell is None:
        return None
    return shell.magics_manager.registry.get("MemExt")


def _setting(name: str) -> Any:
    magics = loaded_magics()
    return getattr(magics, name, None) if magics is not None else None


def search(
    query: str,
    *,
    agent: str | None = None,
    max_results: int | None = None,
    min_score: float | None = None,
    max_lines: int | None = None,
    source: str | None = None,
    explain: bool = False,
    since: str | None = None,
    before: str | None = None,
    include_weak: bool = False,
) -> SearchResults:
    """Search an agent's memory (default: ``MemExt.agent`` or the first
    configured); the same as ``%memsearch``. ``source``: "memory" or
    "sessions" only; ``max_lines``: as many results as fit in that many
    lines; ``since``/``before``: only memory dated in that range
    (``"2026-03-01"``, ``"7d"``, ``"2w"``, ``"today"``...). An answer
    without a confident match is empty ("no memory matches"):
    ``include_weak=True`` shows the weak matches, marked weak."""
    options = SearchOptions(
        max_results=max_results or _setting("max_results"),
        min_score=min_score if min_score is not None else _setting("min_score"),
        max_lines=max_lines,
        sources=[source] if source else None,
        explain=explain,
        after=since,
        before=before,
        include_weak=include_weak,
    )
    return run_search(default_session(), query, options, agent=agent or _setting("agent"))


def get(spec: str, *, agent: str | None = None, from_line: int | None = None, lines: int | None = None) -> FileLines:
    """Read lines of a memory file (``"memory/2026-10-05.md:3-9"``, a
    citation); the same as ``%memget``. Returns the text, a ``str``."""
    return run_get(default_session(), spec, agent=agent or _setting("agent"), from_line=from_line, lines=lines)


def status(agent: str | None = None) -> StatusTable:
    """The status of one agent or of every configured agent; the same as ``%memstatus``."""
    return run_status(default_session(), agent)


def note(text: str, *, agent: str | None = None, file: str | None = None, long_term: bool = False) -> AppendResult:
    """Append ``text`` under a timestamp to today's daily log (``long_term``:
    ``MEMORY.md``; ``file``: another memory file); the same as ``%%memnote``.
    Returns where it went (``.citation``)."""
    return run_note(default_session(), text, agent=agent or _setting("agent"), file=file, long_term=long_term)


def recall(text: str, *, agent: str | None = None, limit: int | None = None) -> RecalledMemories:
    """The few memories the message ``text`` calls for (confident, live and
    trusted, MEMORY.md and important entries first); the same as
    ``%memrecall``. ``.context`` is the block to give a model."""
    return run_recall(default_session(), text, agent=agent or _setting("agent"), limit=limit)
