"""``MemoryIndex``: the one object the CLI, the notebook and the tray use.

    from memext import engine
    with engine.open_index() as idx:          # the default agent
        idx.sync(progress=print)
        for hit in idx.search("what did we decide about caching?"):
            print(hit.citation, hit.score, hit.snippet)
        print(idx.get("MEMORY.md", from_line=1, lines=20).text)
        print(idx.status().to_dict())

Searches never raise because of the provider: without one they are
keyword-only, and a provider error at query time degrades that search to
keyword-only and says so in the response.

Over 500 lines because it is the one facade every face calls (open, sync,
search, get, append, status); the work itself lives in the modules it calls.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence, TypeVar

from .config import AgentConfig, Config, load_config
from .errors import DiskFull, IndexBuildError, IndexReadOnly, LockTimeout, MemextError, SearchDisabled, WorkspaceMissing, is_disk_full
from .indexing.changes import RETRY_EMBEDDINGS_AFTER_S, files_changed, index_changes
from .indexing.checks import check_store_path, prepare_index_folder
from .indexing.fingerprint import fingerprint
from .indexing.recovery import RecoveringStore
from .memory.dates import DayRange, When, day_range
from .memory.workspace import check_workspace, workspace_files_indexed, workspace_problem
from .paths import AppPaths, app_paths
from .providers.choice import ProviderChoice, ProviderInForce, keyword_only
from .search.confidence import NOTHING_BELOW, nothing_notice
from .search.options import SearchOptions
from .search.pipeline import run_search
from .search.query_embedding import QueryEmbedder
from .search.results import SearchResponse, SearchResult
from .store import CorruptIndex, IndexStore, StoreOptions
from .store.drivers import driver_of, writer_lock, writer_lock_held
from .text import has_searchable_words, ids_only

if TYPE_CHECKING:
    from .indexing.reports import ProgressCallback, SyncReport
    from .indexing.sync import Cancel
    from .memory.append import AppendResult
    from .memory.entries import EntryMeta
    from .memory.forget import RetireResult
    from .memory.read import ReadResult
    from .providers import EmbeddingProvider
    from .search.recall import Recall
    from .status import IndexStatus


T = TypeVar("T")

#: How long an append's sync waits for another writer (a long rebuild elsewhere picks the entry up itself).
APPEND_SYNC_LOCK_WAIT_S = 10.0
_FROM_CONFIG: Any = object()


class MemoryIndex:
    """One agent's memory index: search, read, sync and status.

    ``provider`` overrides the configured embedding provider (None: keyword
    only). ``config_file`` only makes error messages name it. ``one_shot``
    is for a process that searches once and exits (the ``memext`` command):
    it starts no background work whose result it would never use (the
    vector matrix of a large index; vec0 answers instead).
    """

    def __init__(
        self,
        agent: AgentConfig,
        *,
        paths: AppPaths | None = None,
        provider: EmbeddingProvider | None = _FROM_CONFIG,
        env: Mapping[str, str] | None = None,
        config_file: str | Path | None = None,
        one_shot: bool = False,
    ):
        self.agent = agent
        self._one_shot = one_shot
        self.paths = paths or app_paths()
        self.db_path: Path = agent.db_path(self.paths)
        check_store_path(agent, self.db_path, config_file)
        if self._local:
            prepare_index_folder(self.db_path, self.paths)
        self._config_file = config_file
        given = None
        if provider is not _FROM_CONFIG:
            requested = agent.settings.provider
            given = ProviderChoice(requested, provider) if provider else keyword_only(requested, "no provider given")
        self._provider = ProviderInForce(agent, self.paths, env, given, self._record_fallback)
        self._sync_lock = threading.Lock()
        self._cancel = threading.Event()
        self._syncing = False
        self._last_error: str | None = None
        self._queries = QueryEmbedder(self.paths.state_dir / "provider-failures")  # shared with other processes
        self._recovery = RecoveringStore(agent, self.db_path, self._store_options, self._repaired_now)

    # -- lifecycle ----------------------------------------------------------

    def _store_options(self) -> StoreOptions:
        options = StoreOptions.from_settings(self.agent.settings.store.vector)
        return options._replace(background_matrix=not self._one_shot, own_path=not self.agent.settings.store.path)

    @property
    def _local(self) -> bool:
        """The index is a file on this machine (its driver's ``local``; not
        on a server): file damage, crashed writers' notes and integrity
        checks concern it."""
        return driver_of(self.agent).local

    @property
    def _store(self) -> IndexStore:
        """The store searches and status read (replaced when its file turns
        out damaged: indexing/recovery.py)."""
        return self._recovery.store

    def _repaired_now(self, message: str) -> None:
        self._last_error = message

    def _guarded(self, op: Callable[[], T]) -> T:
        """``op()`` reading the index, run once more on an empty index when
        the file turned out damaged (:meth:`RecoveringStore.guarded`)."""
        return self._recovery.guarded(op)

    def verify(self) -> str | None:
        """Run SQLite's integrity_check on the index; a damaged index is moved
        aside and replaced by an empty one (the next sync rebuilds it).
        Returns what was done, or None when the index checked out (always,
        for an index on a PostgreSQL server, which checks its own data)."""
        return self._last_error if self._recovery.check(thorough=True) else None

    def close(self) -> None:
        """Close the index (idempotent). A sync running in another thread is
        cancelled at its next check and waited for (up to a minute)."""
        self._cancel.set()
        waited = self._sync_lock.acquire(timeout=60)
        try:
            self._store.close()
        finally:
            if waited:
                self._sync_lock.release()
        self._provider.close()

    def __enter__(self) -> "MemoryIndex":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -- provider -------------------------------------------------------------

    @property
    def provider_choice(self) -> ProviderChoice:
        """The provider in force (resolved on first use), and why."""
        return self._provider.choice

    def _record_fallback(self, choice: ProviderChoice) -> None:
        record = {"from": choice.fallback_from, "to": choice.name, "reason": choice.fallback_reason, "at": time.time()}
        try:
            with self._store.transaction():
                self._store.set_meta_json("fallback", record)
        except Exception as exc:  # bookkeeping only
            import logging  # here: a one-shot search never logs, nor imports logging

            logging.getLogger("memext").debug("could not record fallback: %s", exc)

    # -- sync -------------------------------------------------------------------

    def sync(
        self,
        *,
        force: bool = False,
        progress: ProgressCallback | None = None,
        reason: str = "manual",
        lock_timeout: float | None = 600,
        cancel: threading.Event | None = None,
    ) -> SyncReport:
        """Bring the index up to date; ``force`` rebuilds it from scratch.

        Waits for a sync of the same agent in another thread or process.
        Setting ``cancel`` (or closing the index) from another thread stops
        the sync at its next check with SyncCancelled; work done so far stays.
        ``reason="manual"`` also indexes session transcripts below their
        delta thresholds. Raises MemextError (e.g. IndexBuildError, whose
        message says the previous index was kept).
        """
        from .indexing.last_failure import clear_failure, record_failure
        from .indexing.sync import AnySet, SyncCancelled  # the sync machinery loads when a sync runs

        if self._store.read_only:
            raise IndexReadOnly(
                f"the index {self._store.location} cannot be updated: {self._store.read_only} (it can still be searched as it is)"
            )
        with self._sync_lock:
            self._syncing = True
            try:
                # The provider's set-up (imports, a client: seconds on a busy
                # machine) before the lock, which only the writing needs.
                self.provider_choice  # noqa: B018
                with writer_lock(self.agent, self.db_path, timeout=lock_timeout) as lock:
                    files = self._recovery.files
                    if files is not None:
                        files.clean_stale_shadows(self.db_path)
                    if lock.previous_holder_died:  # the last writer died mid-write
                        self._recovery.check(locked=True)
                    report = self._sync_repairing(force, progress, reason, AnySet(self._cancel, cancel))
            except (SyncCancelled, LockTimeout):
                raise  # not the index's fault: another writer was busy
            except WorkspaceMissing:
                raise  # not recorded: status checks the workspace itself, and says so only while it is gone
            except MemextError as exc:
                self._last_error = str(exc)
                record_failure(self.db_path, self._last_error)
                raise
            except Exception as exc:
                full = is_disk_full(exc)
                self._last_error = (
                    f"sync failed: the disk holding {self._store.location} is full ({exc})" if full else f"sync failed: {exc}"
                )
                record_failure(self.db_path, self._last_error)
                raise (DiskFull if full else MemextError)(self._last_error) from exc
            finally:
                self._syncing = False
        clear_failure(self.db_path)
        self._last_error = report.provider_error
        if report.provider_gone:  # the provider in force stopped answering: searches need not wait for it too
            self._queries.provider_failed(report.provider_gone, self.provider_choice.provider)
        self._store.refresh()
        return report

    def _sync_repairing(self, force: bool, progress: ProgressCallback | None, reason: str, cancel: "Cancel") -> SyncReport:
        """A sync; when the index turns out damaged, it is set aside and the
        sync runs again into a fresh file (a rebuild from the Markdown)."""
        from .indexing.sync import SyncCancelled

        try:
            return self._sync_locked(force, progress, reason, cancel)
        except (SyncCancelled, LockTimeout):
            raise
        except Exception as exc:
            if not self._recovery.recover(exc, locked=True):
                raise
        return self._sync_locked(force, progress, reason, cancel)

    def _sync_locked(self, force: bool, progress: ProgressCallback | None, reason: str, cancel: "Cancel") -> SyncReport:
        from .indexing.sync import ProviderFailed, Syncer

        try:
            writer = self._recovery.new_store(reader=False)
        except CorruptIndex as exc:
            self._recovery.recover(exc, locked=True)
            writer = self._recovery.new_store(reader=False)
        sessions_all = reason == "manual"
        try:
            choice = self.provider_choice
            try:
                report = Syncer(self.agent, writer, choice.provider, progress, cancel).run(force=force, sessions_all=sessions_all)
            except ProviderFailed as exc:
                if not self._provider.switch_to_fallback(exc.provider, str(exc)):
                    raise IndexBuildError(
                        f"rebuilding the index needs the {exc.provider} provider, which failed: {exc}; the previous index is kept"
                    ) from exc
                return self._run_with_current(writer, progress, force, sessions_all, cancel)  # the fallback has no fallback
            if report.provider_error and choice.provider is not None:
                if self._provider.switch_to_fallback(choice.provider.id, report.provider_error):
                    report = self._run_with_current(writer, progress, force, sessions_all, cancel)
            return report
        finally:
            writer.close()

    def _run_with_current(self, writer: IndexStore, progress, force: bool, sessions_all: bool, cancel: "Cancel") -> SyncReport:
        """Sync with the fallback just switched to (a rebuild, as the provider changed)."""
        from .indexing.sync import ProviderFailed, Syncer

        try:
            return Syncer(self.agent, writer, self.provider_choice.provider, progress, cancel).run(force=force, sessions_all=sessions_all)
        except ProviderFailed as exc:
            raise IndexBuildError(
                f"rebuilding the index with the fallback {exc.provider} provider failed too: {exc}; the previous index is kept"
            ) from exc

    @property
    def dirty(self) -> bool:
        """True when the files on disk differ from the index (a stat scan
        against the files table, as a sync's fast path does)."""
        if workspace_problem(self.agent, self._files_indexed):
            return False  # a sync cannot change anything; status says why

        def scan() -> bool:
            self._store.refresh()
            return files_changed(self.agent, self._store)

        try:
            return self._guarded(scan)
        except OSError:
            return True  # cannot tell: say so rather than claim it is fresh

    @property
    def syncing(self) -> bool:
        return self._syncing

    def sync_running(self) -> bool:
        """True while this or another process is writing the index."""
        if self._syncing:
            return True
        return writer_lock_held(self.agent, self.db_path)

    def settings_changed(self) -> bool:
        """True when the index was built for another provider, model or
        settings than those in force, so the next sync rebuilds it."""

        def compare() -> bool:
            built = self._store.get_meta_json("fingerprint")
            if built is None:
                return self._store.file_count() > 0
            return built != fingerprint(self.agent, self.provider_choice.provider, self._store.vector_store)

        return self._guarded(compare)

    def needs_sync(self) -> bool:
        """True when a sync would change the index: never filled, files
        changed on disk, or settings changed since it was built. False for a
        read-only index, which no sync can change (status says why)."""
        if self._store.read_only:
            return False
        if self.never_synced or self.settings_changed():
            return True
        if workspace_problem(self.agent, self._files_indexed):
            return False  # a sync cannot change anything; status says why

        def scan():
            self._store.refresh()
            return index_changes(self.agent, self._store)

        try:
            changes = self._guarded(scan)
        except OSError:
            return True  # cannot tell: a sync finds out
        return changes.files or (changes.incomplete > 0 and self._embeddings_retry_due())

    def _embeddings_retry_due(self) -> bool:
        """Files are keyword-only after a provider failure: retry them once
        the failure is :data:`RETRY_EMBEDDINGS_AFTER_S` old (a wrong-size
        answer, an outage that is over)."""
        if self.provider_choice.provider is None:
            return False
        from .indexing.index_status import last_sync_of

        last = last_sync_of(self._store)
        if last is None or not (last.provider_error or last.embeddings_pending):
            return True
        return time.time() - last.at >= RETRY_EMBEDDINGS_AFTER_S

    @property
    def never_synced(self) -> bool:
        """True for an index that no sync has filled yet."""
        return self._guarded(lambda: self._store.get_meta("last_sync") is None and self._store.file_count() == 0)

    # -- search and read ----------------------------------------------------------

    def search(
        self,
        query: str,
        max_results: int | None = None,
        min_score: float | None = None,
        sources: Sequence[str] | None = None,
        explain: bool = False,
        max_lines: int | None = None,
        now: datetime | None = None,
        after: When | None = None,
        before: When | None = None,
        include_weak: bool = False,
        include_forgotten: bool = False,
        log_use: bool = True,
        *,
        options: SearchOptions | None = None,
    ) -> SearchResponse:
        """Hybrid search; results carry ``path:start-end`` citations (``path:line`` for one line).

        An answer whose confidence is below
        :data:`~.search.confidence.NOTHING_BELOW` (:mod:`.search.confidence`)
        comes back empty, with a ``notice`` saying that no memory matches;
        ``include_weak=True`` returns those weak hits anyway, each with
        ``confident`` False. ``min_score`` still drops hits below it.

        ``max_lines``: a reading budget, as many results as fit in that many
        lines, hits of one file that overlap or touch as one span. ``now``:
        the time cues ("last week") and relative dates are read from
        (default: the current time).

        ``after`` / ``before``: only memory dated on or after / before these
        (an ISO date or datetime, an age such as ``7d``, ``2w``, ``3m``,
        ``1y``, ``today``, ``yesterday``, or a date / datetime); a file's
        date is its name's (``memory/2026-03-01.md``), else its front
        matter's ``date:``, else its mtime (engine/memory/dates.py). The filter
        applies before ranking, so ``max_results`` results come back when
        that many match. Unreadable dates raise :class:`~.memory.dates.BadDate`.

        Forgotten and superseded entries are left out unless
        ``include_forgotten``; every result carries its ``origin``,
        ``status`` and ``untrusted`` mark, read from its file (DESIGN.md §17).

        The confident results returned are logged beside the index
        (``memory_search.use_log``, engine/memory/use_log.py): what
        :func:`~memext.engine.consolidate` counts. ``log_use=False`` leaves
        this search out (recall logs only the memories it hands on).

        ``options``: all of these as one :class:`SearchOptions` (what a face
        builds once), instead of the keywords.

        Searches the index as it is: it never syncs. Keeping it fresh is the
        caller's choice (:meth:`sync`, or a
        :class:`~memext.engine.freshness.keeper.FreshnessKeeper`'s ``before_search``).
        """
        given = SearchOptions(
            max_results, min_score, sources, explain, max_lines, now, after, before, include_weak, include_forgotten, log_use
        )
        if options is not None and given != SearchOptions():
            raise TypeError("pass a search's options as keywords or as options=, not both")
        opts = given if options is None else options
        if not self.agent.settings.enabled:
            raise SearchDisabled(
                f"memory search is turned off for agent {self.agent.id!r} "
                f"(memory_search.enabled = false{' in ' + str(self._config_file) if self._config_file else ''})"
            )
        if not query or not query.strip():
            raise MemextError("the query is empty")
        if not has_searchable_words(query):
            # Embedding punctuation alone finds arbitrary chunks: say so instead.
            raise MemextError(f"the query {query.strip()!r} has no searchable words (letters or digits)")
        opts = opts.for_agent(self.agent)
        days = day_range(opts.after, opts.before, opts.now)
        self.check_workspace()
        response = self._guarded(lambda: self._search(query, opts, days))
        if opts.log_use and response.confident:
            self.note_uses(response.results, opts.now)
        return response

    def check_workspace(self) -> None:
        """Raise :class:`~.errors.WorkspaceMissing` when the workspace is out of
        reach (gone, unreadable, or holding none of the files the index has:
        DESIGN.md §1). Search, get, append, forget and sync check it first."""
        self._guarded(lambda: check_workspace(self.agent, self._files_indexed))

    def _files_indexed(self) -> int:
        self._store.refresh()
        return workspace_files_indexed(self._store)

    def note_uses(self, results: Sequence[SearchResult], now: datetime | None = None) -> None:
        """Log the confident ``results`` as used (engine/memory/use_log.py),
        at ``now`` when given: what ``memext consolidate`` counts. Nothing
        when ``memory_search.use_log`` is off; never raises."""
        if not self.agent.settings.use_log:
            return
        from .memory.use_log import record_uses, used_results

        record_uses(self.db_path, self.agent.id, used_results(results), now=now.timestamp() if now is not None else None)

    def _search(self, query: str, opts: SearchOptions, days: DayRange | None) -> SearchResponse:
        """Search with ``opts`` resolved for the agent (:meth:`SearchOptions.for_agent`)."""
        self._store.refresh()
        paths = None
        if days is not None:
            paths = [p for p, row in self._store.file_rows().items() if days.keeps(row.day, row.mtime_ns)]
        choice = self.provider_choice
        provider = choice.provider
        setup = choice.reason if provider is None else None  # keyword-only by set-up
        notice = setup
        error = None
        qvec = None
        if provider is not None:
            stale_notice = self._built_for_other(provider)
            if stale_notice:
                notice = stale_notice
            elif self._store.dims is not None and not ids_only(query):
                # An ID's embedding means nothing: a query of IDs is matched
                # by its strings alone (DESIGN.md §7).
                qvec, error, notice = self._query_vector(provider, query)
            else:  # no vectors at all: say so when the provider failed at sync
                error = (self._store.get_meta_json("last_sync") or {}).get("provider_error")
                notice = f"the index has no vectors ({error}): keyword-only results" if error else None
        from .providers.nulls import null_for
        from .search.marks import file_marks, left_out_notice, live_results

        null = null_for(provider.id, provider.model, self._store.get_meta_json("entry_null")) if provider and qvec is not None else None
        modes: list[str] = []
        marks = file_marks(self.agent)

        def ranked(n: int):
            found, mode = run_search(
                self._store,
                query,
                qvec,
                self.agent.settings.query,
                dataclasses.replace(opts, max_results=n),
                paths=paths,
                null=null,
                marks=marks,
            )
            modes.append(mode)
            return found

        assert opts.max_results is not None  # resolved
        results, unreadable = live_results(ranked, self.agent, opts.max_results, include_retired=opts.include_forgotten)
        mode = modes[0]
        dated = f"no memory is dated {days.describe()}" if days is not None and not paths else None
        left_out = left_out_notice(unreadable)
        confidence = max((r.answer_confidence for r in results), default=0.0)
        confident = confidence >= NOTHING_BELOW
        weak_hidden = 0
        answer = None
        if not confident:
            if not opts.include_weak:
                weak_hidden, results = len(results), []
            answer = nothing_notice(query, weak_hidden) if not results else f"no confident match for {query.strip()!r}: weak matches shown"
        notices = tuple(n for n in (self._index_notice(), notice, answer, dated, left_out) if n)
        fallback = {"from": choice.fallback_from, "reason": choice.fallback_reason} if choice.fallback_from else None
        return SearchResponse(
            query=query,
            results=results,
            mode=mode,
            provider=provider.id if provider else "none",
            model=provider.model if provider else "",
            fallback=fallback,
            notice="; ".join(notices) or None,
            error=error,
            notices=notices,
            setup_notice=setup,
            confidence=confidence,
            confident=confident,
            weak_hidden=weak_hidden,
            answer_notice=answer,
        )

    def _index_notice(self) -> str | None:
        """What a search must say about the index file itself: read-only,
        or not (or not yet again) filled by a complete sync: empty, being
        built by this or another process (after a repair, say), or left
        part-built by a sync that stopped."""
        if self._store.read_only:
            return f"the index is read-only ({self._store.read_only}): searched as it is, it cannot be updated"
        if self._store.get_meta("last_sync") is not None:
            return None
        if self._recovery.repaired:
            return self._recovery.repaired
        if self.sync_running():
            return "the index is being built (a sync is filling it): results may be missing until it is done"
        if self._store.file_count() == 0:
            return "the index is empty: no sync has built it yet (memext index, or MemoryIndex.sync())"
        return "the index is not complete (no sync has finished filling it): results may be missing until one does"

    def _built_for_other(self, provider: EmbeddingProvider) -> str | None:
        """Why vectors cannot be used when the index holds another model's,
        else None. Says "being rebuilt" only while a sync really runs."""
        built = self._store.get_meta_json("fingerprint") or {}
        if not built or (built.get("provider"), built.get("model")) == (provider.id, provider.model):
            return None
        wanted = f"{provider.id}/{provider.model}"
        if self.sync_running():
            return f"the index is being rebuilt for {wanted}: keyword-only until it is done"
        was = "without embeddings" if built.get("provider") in (None, "none") else f"for {built['provider']}/{built.get('model', '')}"
        return f"the index was built {was}, not {wanted}: keyword-only until `memext index` (or the next sync) rebuilds it"

    def _keyword_only_reason(self, provider: EmbeddingProvider | None) -> str | None:
        """Why a search now would be keyword-only although a provider is in
        force (None when it would be hybrid, or there is no provider)."""
        if provider is None or self.never_synced:
            return None  # the first search syncs before it runs
        stale = self._built_for_other(provider)
        if stale:
            return stale
        if self._store.dims is None:
            error = (self._store.get_meta_json("last_sync") or {}).get("provider_error")
            return f"the index has no vectors ({error})" if error else "the index has no vectors yet"
        failing = self._queries.backing_off(provider)
        if failing:
            return f"the embedding provider failed ({failing})"
        return None

    def _query_vector(self, provider: EmbeddingProvider, query: str):
        """(vector, error, notice) for a query (see :class:`QueryEmbedder`)."""
        return self._queries.vector(provider, query, self._store.dims)

    def recall(self, text: str, *, limit: int | None = None, deadline: float | None = None, now: datetime | None = None) -> "Recall":
        """The few memories a message calls for, and the context block that
        quotes them for a model (DESIGN.md §18): at most ``limit`` (default
        ``recall.max_results``) confident, live and trusted hits, MEMORY.md
        and important entries first. ``deadline``: seconds it may take
        (default ``recall.deadline_ms``); past it, an empty recall with a
        notice, never an exception. Text that is itself a recalled block
        recalls nothing."""
        from .search import recall as r

        started = time.perf_counter()
        settings = self.agent.settings.recall
        n = r.resolve_limit(limit, settings.max_results)
        seconds = r.resolve_deadline(deadline, settings.deadline_ms)
        query = r.query_of(text)
        if query is None:
            return r.nothing(r.no_query_notice(text), started)
        return r.within(seconds, lambda: r.recall_from(self, query, n, now, started), started, r.SLOW)

    def get(self, path: str, from_line: int | None = None, lines: int | None = None) -> ReadResult:
        """Read lines of a memory file; paths outside memory are refused."""
        from .memory.read import read_lines

        self.check_workspace()
        return read_lines(path, self.agent.workspace, self.agent.extra_path_list(), from_line, lines)

    def append(
        self,
        text: str,
        file: str | None = None,
        heading: str | None = None,
        *,
        meta: "EntryMeta | None" = None,
        supersedes: str | None = None,
    ) -> AppendResult:
        """Append an entry to a memory file (today's daily log by default) and
        sync, so the entry is searchable on return; see engine/memory/append.py.

        ``meta``: the entry's metadata (default: written by a person through
        the Python API). ``supersedes``: the citation of an entry this one
        replaces; it is marked superseded by the new one (DESIGN.md §17)."""
        from .memory.supersede import append_superseding

        self.check_workspace()
        written = append_superseding(self.agent, self.db_path, text, file=file, heading=heading, meta=meta, supersedes=supersedes)
        return self._synced(written, "note")

    def forget(self, citation: str, reason: str | None = None) -> "RetireResult":
        """Mark the entries at ``citation`` (``path:line`` or ``path:from-to``)
        forgotten, with today's date and ``reason``: the file keeps them,
        marked; search leaves them out (DESIGN.md §17)."""
        from .memory.forget import retire

        self.check_workspace()
        marked = retire(self.agent, self.db_path, citation, reason=reason)
        try:
            self.sync(reason="note", lock_timeout=APPEND_SYNC_LOCK_WAIT_S)
        except MemextError:
            pass  # the mark is in the file, which search reads: the index catches up later
        return marked

    def _synced(self, written: AppendResult, reason: str) -> AppendResult:
        try:
            self.sync(reason=reason, lock_timeout=APPEND_SYNC_LOCK_WAIT_S)
        except MemextError as exc:  # the entry is on disk; only its indexing waits
            return dataclasses.replace(written, indexed=False, notice=f"written, but not indexed yet: {exc}")
        return written

    # -- status --------------------------------------------------------------------

    def status(self, *, check_files: bool = True) -> IndexStatus:
        """Files, chunks, provider, vector/FTS state, errors (DESIGN.md §10).

        ``check_files=False`` skips the stat scan behind ``dirty`` (None
        then), for callers that show counts after every search or sync.
        """
        return self._guarded(lambda: self._status(check_files))

    def _status(self, check_files: bool) -> IndexStatus:
        from .indexing.index_status import IndexFacts, disk_full, index_status

        self._store.refresh()
        choice = self.provider_choice
        facts = IndexFacts(
            dirty=self.dirty if check_files else None,
            syncing=self.sync_running(),
            last_error=self._last_error,
            keyword_only_reason=self._keyword_only_reason(choice.provider),
            settings_changed=self.settings_changed(),
            disk_full=self._local and disk_full(self.db_path.parent),
        )
        return index_status(self.agent, self._store, choice, self.db_path, facts)


def open_index(
    agent: str | None = None,
    *,
    config: Config | None = None,
    config_path: str | Path | None = None,
    provider: EmbeddingProvider | None = _FROM_CONFIG,
) -> MemoryIndex:
    """Open an agent's index (the first configured agent when ``agent`` is None).

    Loads the config from ``config_path``, ``$MEMEXT_CONFIG`` or the
    platformdirs location; without a config file the agent is the current
    folder (or ``$MEMEXT_WORKSPACE``).
    """
    cfg = config or load_config(config_path)
    return MemoryIndex(cfg.agent(agent), provider=provider, config_file=cfg.path)
