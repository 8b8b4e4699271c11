"""Bringing an index up to date with the memory files (DESIGN.md §5).

Over 500 lines because one :class:`Syncer` carries a sync's state through
its steps (read, chunk and cut into entries, embed, write a group, read
again what changed while read, fall back when the provider fails, estimate
the model's null): split, each part would take most of it as arguments.

Incremental: a file whose mtime and size match is skipped without being
read; otherwise it is hashed (sha256) and re-chunked only if the hash
changed; only chunk texts missing from the embedding cache reach the
provider; rows of deleted files are removed. Files are written a group at
a time, one transaction per group, so memory holds one group and an
interrupted sync leaves a consistent index (each file old or new). The
store's derived data (the SQLite store's vector sidecar) is brought up to
date at the end (:meth:`IndexStore.finish_writes`).

A file is read with its stat taken before and after (read again when they
differ: it was being written), and the stat recorded is the one the text
was read under; an mtime too close to the read to vouch for the text is
recorded as unverified, so a later sync reads the file again
(engine/indexing/changes.py).

When the index fingerprint (provider, model, chunking, sources...) changes,
or on ``force``, the index is rebuilt into a shadow file seeded with the
embedding cache and swapped in atomically (see :meth:`IndexStore.copy_into`); a
failed rebuild leaves the old index in place and removes the shadow file.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:  # numpy loads on first use: keyword-only work never needs it
    import threading

    import numpy as np

from ..errors import EmbeddingsPending, IndexBuildError, ProviderError, ProviderTimeout, is_disk_full
from ..memory.chunking import Chunk, chunk_lines, chunk_markdown, text_hash
from ..memory.discovery import NotText, Skipped, SourceFile, read_file
from ..memory.index_entries import EntryText, entry_stems, markdown_entries, transcript_entries
from ..memory.transcripts import parse_transcript
from ..memory.workspace import check_workspace, workspace_files_indexed
from ..note_dates import content_date
from ..providers import EmbeddingProvider
from ..settings import AgentConfig
from ..store import CacheKey, IndexStore, NewChunk, NewEntry
from ..vector_math import normalize
from .changes import UNVERIFIED_MTIME_NS, discover_files, recorded_mtime, stat_matches, verified_in_ns
from .fingerprint import fingerprint, needs_rebuild, provider_dims
from .groups import COMMIT_CHUNKS, Groups, unchanged
from .reports import ProgressCallback, SyncProgress, SyncReport

#: A sync waits this long at most for the racy-timestamp window of files it
#: just read to close, then reads them again (engine/indexing/changes.py); with
#: nanosecond timestamps the window is milliseconds.
RECHECK_WAIT_S = 0.2


@dataclass
class _Pending:
    file: SourceFile  # with the stat to record (the read's, see engine/indexing/changes.py)
    hash: str
    chunks: list[Chunk]
    messages: int = 0
    note: str | None = None
    #: Set when the read cannot be verified yet: ns until a new read can be.
    verified_in_ns: int | None = None
    day: str | None = None  # FileRow.day: the date the name or front matter gives
    #: The index held nothing of this file when the sync began.
    new: bool = False
    #: The file's entries (engine/memory/index_entries.py), each embedded and kept.
    entries: list[EntryText] = field(default_factory=list)


class Cancel(Protocol):
    """What a sync checks between steps: set from another thread to stop it."""

    def is_set(self) -> bool: ...


class AnySet:
    """Set when any of its events is: a sync stops for close() or for its caller."""

    def __init__(self, *events: threading.Event | None):
        self._events = [e for e in events if e is not None]

    def is_set(self) -> bool:
        return any(e.is_set() for e in self._events)


class SyncCancelled(Exception):
    """The sync was asked to stop (the index is closing); work done so far stays."""


class ProviderFailed(Exception):
    """The provider failed during a rebuild; the caller may fall back."""

    def __init__(self, provider: str, message: str):
        super().__init__(message)
        self.provider = provider


def chunk_id(source: str, path: str, chunk: Chunk, model: str) -> str:
    import hashlib  # here, as in chunking.text_hash: a search hashes nothing

    key = "\0".join([source, path, str(chunk.start_line), str(chunk.end_line), chunk.hash, model])
    return hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()


class Syncer:
    """Runs one sync of one agent's index. The caller holds the writer lock."""

    def __init__(
        self,
        agent: AgentConfig,
        store: IndexStore,
        provider: EmbeddingProvider | None,
        progress: ProgressCallback | None = None,
        cancel: "Cancel | None" = None,
    ):
        self.agent = agent
        self.store = store
        self.provider = provider
        self.progress = progress
        self.cancel = cancel
        self.report = SyncReport()
        self._started = time.monotonic()
        self._provider_dead = False
        self._force = False
        # Paths written by this sync: a file new to the index is new only
        # the first time it is written.
        self._written: set[str] = set()

    # -- entry point --------------------------------------------------------

    def run(self, *, force: bool = False, sessions_all: bool = False) -> SyncReport:
        self._force = force
        self._check_workspace()
        fp = fingerprint(self.agent, self.provider, self.store.vector_store)
        if force or needs_rebuild(self.store, fp, self._provider_size()):
            self._expect_dims(None)  # a rebuild starts empty: the model's own size
            self._rebuild(fp)
        else:
            # Answers must fit the index: a wrong-size answer is rejected
            # (those files stay keyword-only until the next sync), never
            # taken as the size of a new model.
            self._expect_dims(self.store.dims)
            with self.store.transaction():
                self.store.set_meta_json("fingerprint", fp)
            self._sync_into(self.store, rebuild=False, sessions_all=sessions_all)
            self.store.finish_writes()
        self._estimate_null()
        self.report.duration_s = time.monotonic() - self._started
        self._finish_meta()
        self._emit("done", self.report.files_seen, self.report.files_seen, self.report.chunks_written, self.report.chunks_written)
        return self.report

    def _check_workspace(self) -> None:
        """:func:`check_workspace` before anything is deleted (a forced
        rebuild takes the workspace as it is)."""
        check_workspace(self.agent, None if self._force else lambda: workspace_files_indexed(self.store))

    def _provider_size(self) -> int | None:
        """:func:`provider_dims`; a provider that does not answer it in time is asked nothing more."""
        try:
            return provider_dims(self.provider, self.store)
        except ProviderTimeout as exc:
            self.report.provider_gone = f"{self.provider.id if self.provider else 'provider'}: {exc} (asking the model its vector size)"
            return None

    def _rebuild(self, fp: dict) -> None:
        self.report.rebuilt = True
        target = self.store
        shadow = None
        try:
            shadow = target.open_shadow()
            with shadow.transaction():
                shadow.set_meta_json("fingerprint", fp)
            self._sync_into(shadow, rebuild=True, sessions_all=True)
            shadow.finish_writes()
            shadow.copy_into(target)
        except (ProviderFailed, SyncCancelled, IndexBuildError):
            raise
        except Exception as exc:
            why = "the disk is full (free some space and sync again)" if is_disk_full(exc) else exc
            raise IndexBuildError(f"rebuilding {target.location} failed, the previous index is kept: {why}") from exc
        finally:
            if shadow is not None:
                shadow.discard()

    # -- the work -------------------------------------------------------------

    def _sync_into(self, store: IndexStore, *, rebuild: bool, sessions_all: bool) -> None:
        known = store.file_rows()
        # No binary check at discovery: the read of each changed file makes
        # it (a file found binary there is not counted as seen).
        files, skipped = discover_files(self.agent, known, sniff=False)
        self.report.skipped = skipped
        self.report.files_seen = len(files)
        present = {f.path for f in files}
        gone = [path for path in known if path not in present]
        if gone:
            # The workspace may have gone while it was listed (a drive
            # unmounted): its files are not deleted, they are out of reach.
            self._check_workspace()
        for path in gone:
            store.delete_file(path)
            self.report.files_deleted += 1

        # Files are read, chunked, embedded and written a group at a time,
        # one transaction per group: memory holds one group, and a crash
        # loses at most the group being written (the index stays consistent).
        # A file whose read could not be verified waits in ``pending`` for
        # its second read (it is few files: those changed just now).
        changed = sum(1 for f in files if not unchanged(known.get(f.path), f))
        out: Groups[_Pending] = Groups(
            lambda group, touched, progress: self._write_group(store, group, touched, rebuild, progress), self._group_size(), changed
        )
        pending: dict[str, _Pending] = {}
        recheck: list[tuple[SourceFile, int]] = []  # (file, ns until a read can vouch for it)
        for n, f in enumerate(files):
            self._check_cancel()
            row = known.get(f.path)
            # A file made unreadable keeps its stat (a chmod moves only ctime):
            # it is read again, which fails and takes its old chunks out.
            if row is not None and row.hash is not None and stat_matches(row, f) and os.access(f.fs_path, os.R_OK):
                self.report.files_unchanged += 1
                continue
            wait_ns = self._take(f, row, skipped, sessions_all, store, pending, out)
            if wait_ns is not None:
                recheck.append((f, wait_ns))
            if n % 200 == 0:
                self._emit("scan", n, len(files), out.chunks_done, out.chunks_estimate(), rebuild)
        if recheck:
            self._recheck(recheck, known, skipped, sessions_all, store, pending, out)
        for item in pending.values():
            out.add(item)
        out.flush()

    def _take(
        self,
        f: SourceFile,
        row,
        skipped: list[Skipped],
        sessions_all: bool,
        store: IndexStore,
        pending: dict[str, _Pending],
        out: "Groups[_Pending]",
    ) -> int | None:
        """Read a file whose stat does not match the index: queue it for
        writing when its text changed, else record its new stat. Returns
        how long (ns) until a new read of it can be verified when this one
        could not be (engine/indexing/changes.py), else None."""
        item = self._prepare(f, row, skipped, sessions_all, store)
        if item is None:
            return None
        if row is not None and row.hash == item.hash:
            out.touch(item.file)
            self.report.files_unchanged += 1
        elif item.verified_in_ns is None:
            out.add(item)
        else:
            pending[f.path] = item
        return item.verified_in_ns

    def _recheck(
        self,
        files: list[tuple[SourceFile, int]],
        known: dict,
        skipped: list[Skipped],
        sessions_all: bool,
        store: IndexStore,
        pending: dict[str, _Pending],
        out: "Groups[_Pending]",
    ) -> None:
        """Read again the files whose read could not be verified (racy mtime,
        or changing while read), once their window has closed, if it closes
        within :data:`RECHECK_WAIT_S`; else leave them unverified for a later
        sync, which ``report.recheck_after_s`` says when to run."""
        wait_s = max(ns for _, ns in files) / 1e9
        if wait_s > RECHECK_WAIT_S:
            self.report.files_unverified = len(files)
            self.report.recheck_after_s = wait_s
            return
        time.sleep(wait_s)
        left: list[tuple[SourceFile, int]] = []
        for f, _ in files:
            self._check_cancel()
            if pending.pop(f.path, None) is None:
                self.report.files_unchanged -= 1  # the first read counted it; this one counts it again
            skipped[:] = [k for k in skipped if k.path != f.path]  # its notes come again from this read
            wait_ns = self._take(f, known.get(f.path), skipped, sessions_all, store, pending, out)
            if wait_ns is not None:
                left.append((f, wait_ns))
        if left:
            self.report.files_unverified = len(left)
            self.report.recheck_after_s = max(ns for _, ns in left) / 1e9

    def _prepare(self, f: SourceFile, row, skipped: list[Skipped], sessions_all: bool, store: IndexStore) -> _Pending | None:
        tokens, overlap = self.agent.settings.chunking.tokens, self.agent.settings.chunking.overlap
        try:
            read = read_file(f.fs_path)
        except OSError as exc:
            skipped.append(Skipped(f.path, f"cannot read: {exc.strerror or exc}"))
            if row is not None:  # its old text must not be searched (nor cited, as get cannot read it)
                store.delete_file(f.path)
                self.report.files_deleted += 1
            return None
        except NotText as exc:
            skipped.append(Skipped(f.path, str(exc)))
            self.report.files_seen -= 1  # found binary by this read, not at discovery
            if row is not None:  # was text once: its old chunks must not linger
                store.delete_file(f.path)
                self.report.files_deleted += 1
            return None
        text = read.text
        digest = text_hash(text)
        dated = content_date(f.path, text if f.source == "memory" else "")
        day = dated.isoformat() if dated is not None else None
        note = "invalid UTF-8 bytes replaced with U+FFFD" if read.bad_bytes else None
        if note:
            skipped.append(Skipped(f.path, note + " (indexed)"))
        if f.source == "sessions":
            # Transcripts go by their size and message deltas: the stat of
            # what was read, never held back as unverified.
            f = f._replace(mtime_ns=read.mtime_ns, size=read.size)
            transcript = parse_transcript(text)
            if row is not None and row.hash is not None and not sessions_all and not self._past_delta(f, row, transcript.messages):
                self.report.files_deferred += 1
                return None
            chunks = chunk_lines(transcript.lines, tokens, overlap)
            return _Pending(
                f, digest, chunks, transcript.messages, note, day=day, new=row is None, entries=transcript_entries(transcript.lines)
            )
        # The stat recorded is the one the text was read under; an mtime that
        # cannot vouch for the text is recorded as unverified (engine/indexing/changes.py).
        recorded = recorded_mtime(read)
        f = f._replace(mtime_ns=recorded, size=read.size)
        wait = None if recorded != UNVERIFIED_MTIME_NS else verified_in_ns(read)
        return _Pending(
            f, digest, chunk_markdown(text, tokens, overlap), 0, note, wait, day, new=row is None, entries=markdown_entries(text)
        )

    def _past_delta(self, f: SourceFile, row, messages: int) -> bool:
        d = self.agent.settings.sync.sessions
        if f.size < row.size:  # rewritten, not appended to
            return True
        return f.size - row.size >= d.delta_bytes or messages - row.messages >= d.delta_messages

    def _group_size(self) -> int | None:
        """Chunks per group; None: every pending chunk in one group (a
        batch-API provider embeds a whole sync in one job)."""
        if self.provider is None:
            return COMMIT_CHUNKS
        return self.provider.batch_group_size

    def _write_group(
        self, store: IndexStore, group: list[_Pending], touched: list[SourceFile], rebuild: bool, progress: "Groups[_Pending]"
    ) -> None:
        """Embed a group's chunks, then write its files in one transaction."""
        chunks_total = progress.chunks_estimate()
        entry_texts = [e.text for p in group for e in p.entries]
        entry_hashes = [text_hash(t) for t in entry_texts]
        texts = {c.hash: c.text for p in group for c in p.chunks}
        vectors = self._embed(
            store,
            {**texts, **dict(zip(entry_hashes, entry_texts))},
            len(texts),
            rebuild,
            progress.chunks_done,
            chunks_total,
            progress.files_done,
            progress.files_total,
        )
        stems = iter(entry_stems(entry_texts))
        hashes = iter(entry_hashes)
        model = self.provider.model if self.provider else ""
        with store.transaction():
            for f in touched:
                store.touch_file(f.path, f.mtime_ns, f.size)
            for item in group:
                self._check_cancel()
                new = []
                complete = True
                for c in item.chunks:
                    vec = vectors.get(c.hash)
                    if self.provider is not None and vec is None:
                        complete = False
                    new.append(
                        NewChunk(chunk_id(item.file.source, item.file.path, c, model), c.start_line, c.end_line, c.hash, c.text, vec)
                    )
                entries = []
                for e in item.entries:
                    h = next(hashes)
                    vec = vectors.get(h)
                    if self.provider is not None and vec is None:
                        complete = False
                    entries.append(NewEntry(e.start_line, e.end_line, h, next(stems), vec))
                store.replace_file(
                    item.file.path,
                    item.file.source,
                    item.hash if complete else None,
                    item.file.mtime_ns,
                    item.file.size,
                    new,
                    model,
                    messages=item.messages,
                    note=item.note,
                    day=item.day,
                    new=item.new and item.file.path not in self._written,
                    entries=entries,
                )
                self._written.add(item.file.path)
        for item in group:
            self.report.files_indexed += 1
            self.report.chunks_written += len(item.chunks)
            progress.files_done += 1
            progress.chunks_done += len(item.chunks)
            self._emit("write", progress.files_done, progress.files_total, progress.chunks_done, progress.chunks_estimate(), rebuild)

    def _embed(
        self,
        store: IndexStore,
        texts: dict[str, str],
        chunks: int,
        rebuild: bool,
        chunks_done: int,
        chunks_total: int,
        files_done: int,
        files_total: int,
    ) -> dict[str, np.ndarray]:
        """Vectors by text hash (``texts``: the group's chunks, ``chunks`` of
        them, then its entries): from the cache, else from the provider."""
        if self.provider is None or not texts:
            return {}
        key = CacheKey(self.provider.id, self.provider.model, self.provider.endpoint_key)
        cache_on = self.agent.settings.cache.enabled
        found = store.cache_get(key, list(texts)) if cache_on else {}
        size = self.provider.expected_dims or self.provider.dims
        if size is not None:  # vectors a model of this name made before, of another size, are not this one's
            found = {h: v for h, v in found.items() if len(v) == size}
        self.report.cache_hits += len(found)
        missing = [h for h in texts if h not in found]
        if not missing or self._provider_dead:
            return found
        if self.report.provider_gone is not None:  # it stopped answering earlier in this sync
            return self._provider_failed(self.report.provider_gone, rebuild, found, None)

        def on_progress(done: int, total: int) -> None:
            # Progress counts chunks: the entries embedded with them are a share of each.
            self._emit("embed", files_done, files_total, chunks_done + done * chunks // max(1, len(texts)), chunks_total, rebuild)

        try:
            raw = self.provider.embed_batch([texts[h] for h in missing], on_progress)
            if len(raw) != len(missing):
                raise ProviderError(f"{self.provider.id} returned {len(raw)} vectors for {len(missing)} texts")
        except EmbeddingsPending as exc:
            if rebuild:
                raise IndexBuildError(
                    f"{exc}; the rebuilt index is swapped in by a later sync once they are ready, the previous index is kept meanwhile"
                ) from exc
            # Not a failure: these files stay keyword-only until a later
            # sync collects the vectors (their hash is left unset).
            self._provider_dead = True
            self.report.embeddings_pending = str(exc)
            return found
        except Exception as exc:
            message = f"{self.provider.id}: {str(exc) or type(exc).__name__}"
            if isinstance(exc, ProviderTimeout):
                self.report.provider_gone = message
            return self._provider_failed(message, rebuild, found, exc)
        self.report.embed_calls += 1
        self.report.texts_embedded += len(missing)
        fresh = {h: normalize(v) for h, v in zip(missing, raw)}
        if cache_on:
            store.cache_put(key, fresh)
        found.update(fresh)
        return found

    def _provider_failed(self, message: str, rebuild: bool, found: dict[str, np.ndarray], exc: Exception | None) -> dict[str, np.ndarray]:
        """A rebuild stops (the caller falls back); a sync writes the rest keyword-only."""
        if rebuild:
            name = self.provider.id if self.provider is not None else "provider"
            raise ProviderFailed(name, message.removeprefix(f"{name}: ")) from exc
        self._provider_dead = True
        self.report.provider_error = message
        return found

    # -- bookkeeping -----------------------------------------------------------

    def _estimate_null(self) -> None:
        """For a model whose null was not measured (search/confidence.py),
        estimate it from the index's own entry vectors and keep it in
        ``meta`` (``entry_null``): what searches judge its cosines against."""
        from ..providers.nulls import NULL_SAMPLE, model_null, null_of

        if self.provider is None or model_null(self.provider.model) is not None:
            return
        value = null_of(self.store.entry_vector_sample(NULL_SAMPLE))
        stored = {"provider": self.provider.id, "model": self.provider.model, "value": value}
        if self.store.get_meta_json("entry_null") != stored:
            with self.store.transaction():
                self.store.set_meta_json("entry_null", stored)

    def _expect_dims(self, dims: int | None) -> None:
        if self.provider is not None:
            self.provider.expected_dims = dims

    def _check_cancel(self) -> None:
        if self.cancel is not None and self.cancel.is_set():
            raise SyncCancelled("sync cancelled")

    def _finish_meta(self) -> None:
        s = self.agent.settings
        with self.store.transaction():
            self.store.set_meta_json(
                "last_sync",
                {
                    "at": time.time(),
                    "duration_s": round(self.report.duration_s, 3),
                    "rebuilt": self.report.rebuilt,
                    "files_indexed": self.report.files_indexed,
                    "provider_error": self.report.provider_error,
                    "embeddings_pending": self.report.embeddings_pending,
                },
            )
            self.store.set_meta_json("skipped", [[k.path, k.reason] for k in self.report.skipped])
        if s.cache.enabled and s.cache.max_entries:
            self.store.cache_prune(s.cache.max_entries)

    def _emit(self, phase: str, files_done: int, files_total: int, chunks_done: int, chunks_total: int, rebuild: bool = False) -> None:
        if self.progress is None:
            return
        elapsed = time.monotonic() - self._started
        eta = None
        if phase in ("embed", "write") and chunks_done and chunks_total:
            eta = elapsed / chunks_done * max(chunks_total - chunks_done, 0)
        elif phase == "done":
            eta = 0.0
        self.progress(SyncProgress(phase, files_done, files_total, chunks_done, chunks_total, elapsed, eta, rebuild))
