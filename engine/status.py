"""What an agent's index holds and how it is doing (DESIGN.md §10).

Every part of :class:`IndexStatus` is a dataclass; ``to_dict()`` gives the
JSON form that ``memext status --json`` prints.
"""

from __future__ import annotations

import enum
from dataclasses import asdict, dataclass, field
from typing import Any, Mapping


class SearchKind(str, enum.Enum):
    """How a search of an agent runs: both halves, the keyword half alone,
    or not at all (``memory_search.enabled = false``)."""

    HYBRID = "hybrid"
    KEYWORD_ONLY = "keyword-only"
    OFF = "off"


@dataclass(frozen=True)
class SearchMode:
    """How a search of the agent runs now, and why: built once by the engine
    (:attr:`IndexStatus.search_mode`, ``KeeperSnapshot.search_mode``) so
    that every face words it from these fields, never from prose."""

    kind: SearchKind
    #: The embedding provider in force ("none" without one) and its model.
    provider: str = "none"
    model: str = ""
    #: Why search is keyword-only or off (None when hybrid), without the
    #: advice: ``auto: no local model (local.model_path), no OPENAI_API_KEY or GEMINI_API_KEY``.
    reason: str | None = None
    #: What would make it hybrid (or on), when the engine knows:
    #: ``run `memext model install minilm` for local semantic search``.
    advice: str | None = None
    #: The provider that failed while a fallback provider is in force.
    fallback_from: str | None = None
    #: Where notes are embedded: "on this machine", "sent to OpenAI"; ""
    #: when keyword-only. Said whenever hybrid: a remote provider sends
    #: the notes off the machine.
    embedded: str = ""

    def describe(self) -> str:
        """The short words for the kind, as every face shows them:
        ``hybrid (local all-MiniLM-L6-v2, on this machine)``, ``hybrid
        (gemini ..., sent to Gemini), fallback from openai``,
        ``keyword-only`` or ``off``."""
        if self.kind != SearchKind.HYBRID:
            return self.kind.value
        where = f", {self.embedded}" if self.embedded else ""
        words = f"hybrid ({self.provider}{' ' + self.model if self.model else ''}{where})"
        return f"{words}, fallback from {self.fallback_from}" if self.fallback_from else words

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "kind": self.kind.value}


@dataclass(frozen=True)
class ProviderStatus:
    """The embedding provider asked for, the one in force, and why."""

    requested: str
    in_force: str  # "none" when keyword-only
    model: str
    #: How ``auto`` chose, or why there is no provider (one sentence, with
    #: what to do about it).
    reason: str | None = None
    #: A provider that was to be used (asked for, or picked by ``auto``)
    #: but did not start, with no fallback taking over.
    failed: str | None = None
    #: Without a provider: ``reason``'s two parts, why and what to do.
    cause: str | None = None
    advice: str | None = None
    #: Where notes are embedded: "on this machine", "sent to OpenAI"; "" when keyword-only.
    embedded: str = ""

    @property
    def keyword_only(self) -> bool:
        """True when no provider is in force."""
        return self.in_force == "none"

    @property
    def problem(self) -> str | None:
        """Why the configured provider is not in force, or None.

        Keyword-only by choice (``none``, or ``auto`` finding nothing) is not
        a problem, nor is a fallback in force.
        """
        if not self.failed:
            return None
        return self.reason or f"the {self.failed} embedding provider is not available; keyword-only search"


@dataclass(frozen=True)
class FallbackStatus:
    """A fallback provider in force: which provider failed, and how."""

    from_provider: str
    reason: str

    def to_dict(self) -> dict[str, Any]:
        return {"from": self.from_provider, "reason": self.reason}


@dataclass(frozen=True)
class LastSync:
    """What the last completed sync recorded in the index."""

    at: float
    duration_s: float
    rebuilt: bool = False
    files_indexed: int = 0
    provider_error: str | None = None
    embeddings_pending: str | None = None

    @classmethod
    def from_dict(cls, d: Mapping[str, Any] | None) -> "LastSync | None":
        """From the record a sync stores (None when there is none)."""
        if not d or d.get("at") is None:
            return None
        return cls(
            at=float(d["at"]),
            duration_s=float(d.get("duration_s") or 0.0),
            rebuilt=bool(d.get("rebuilt", False)),
            files_indexed=int(d.get("files_indexed") or 0),
            provider_error=d.get("provider_error"),
            embeddings_pending=d.get("embeddings_pending"),
        )

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class VectorStatus:
    """The vector side: extension, where vectors live, what searches use."""

    available: bool  # the vector extension loaded
    extension: str | None  # its version
    store: str | None  # "vec0" or "blob" once the index holds vectors
    backend: str  # "mmap", "mmap+bits", "vec0", "numpy" or "none", as the next search would use
    dims: int | None
    error: str | None = None


@dataclass(frozen=True)
class FtsStatus:
    """The keyword side (FTS5)."""

    available: bool
    error: str | None = None


@dataclass(frozen=True)
class CacheStatus:
    """The embedding cache."""

    enabled: bool
    entries: int
    max_entries: int | None  # None: no cap


@dataclass(frozen=True)
class StorageStatus:
    """Where the index is kept: the storage backend and its version."""

    binding: str  # the SQLite module ("sqlite3", "sqlean", "pysqlite3") or "psycopg <version>"
    version: str  # SQLite's version, or the PostgreSQL server's
    backend: str = "sqlite"  # or "postgres"
    server: str | None = None  # postgres: the store.url without its password
    schema: str | None = None  # postgres: the agent's schema


@dataclass(frozen=True)
class BatchJob:
    """One OpenAI Batch API job."""

    id: str
    status: str
    requests: int
    completed: int = 0
    failed: int = 0


@dataclass(frozen=True)
class BatchStatus:
    """The provider's Batch API state (``remote.batch.enabled``)."""

    active: bool
    mode: str  # "batch", or "inline" after too many failures
    wait: bool
    failures: int
    failure_limit: int
    last_error: str | None = None
    disabled_reason: str | None = None
    jobs_completed: int = 0
    jobs: tuple[BatchJob, ...] = ()
    #: Jobs submitted with ``wait = false`` whose results a later sync collects.
    pending: tuple[str, ...] = ()


@dataclass(frozen=True)
class LocalModelStatus:
    """The local GGUF model: its file, probe result and whether it is loaded."""

    model_file: str
    probe: str | None  # None before the probe ran, "ok" or "failed: ..."
    loaded: bool
    n_ctx: int | None
    query_timeout_s: float
    busy: bool  # a query the caller stopped waiting for still holds the model


@dataclass(frozen=True)
class SkippedFile:
    """A memory file the last sync did not index, and why."""

    path: str
    reason: str


@dataclass(frozen=True)
class LongTermFile:
    """``MEMORY.md``'s size against ``memory_search.memory_file_warn_bytes``
    (DESIGN.md §17): an agent loads the file whole at the start of a
    session, and a file past that size is cut or crowds out the work."""

    path: str
    size: int
    #: The size past which faces warn (0: never).
    warn_bytes: int

    @property
    def too_big(self) -> bool:
        return self.warn_bytes > 0 and self.size > self.warn_bytes

    def warning(self) -> str | None:
        """What to say when the file is too big (None when it is not)."""
        if not self.too_big:
            return None
        from .human_size import human_size

        return (
            f"{self.path} is {self.size:,} bytes ({human_size(self.size)}), over the {self.warn_bytes:,} an agent should load at "
            "the start of a session: move old or rarely needed facts out of it (into memory/ topic files, which search still "
            "finds), or raise memory_search.memory_file_warn_bytes"
        )


@dataclass
class IndexStatus:
    """A snapshot of one agent's index; ``to_dict()`` is what ``--json`` prints."""

    agent: str
    workspace: str
    db_path: str
    enabled: bool
    files: dict[str, int]  # per source
    chunks: dict[str, int]  # per source
    dirty: bool | None  # None: not checked (status(check_files=False))
    syncing: bool
    last_sync: LastSync | None
    provider: ProviderStatus
    fallback: FallbackStatus | None  # while a fallback is in force
    vector: VectorStatus
    fts: FtsStatus
    cache: CacheStatus
    storage: StorageStatus
    batch: BatchStatus | None = None  # None when the provider is not batching
    local_model: LocalModelStatus | None = None  # the local provider's model
    skipped: list[SkippedFile] = field(default_factory=list)
    last_error: str | None = None
    #: Why a search now would be keyword-only although a provider is in
    #: force (index built for another model, no vectors, query failures).
    keyword_only_reason: str | None = None
    #: Why the index cannot be updated (a read-only file or folder): it is
    #: searched as it is. None when it can be.
    read_only: str | None = None
    #: The index was built for another provider, model or settings (e.g.
    #: chunking) than those in force: the next sync rebuilds it, and until
    #: then searches answer from the old build.
    settings_changed: bool = False
    #: ``MEMORY.md`` (or ``memory.md``) and its size; None when the
    #: workspace has none.
    long_term: LongTermFile | None = None
    #: The disk holding the index (a file on this machine) has no space
    #: left: syncs fail until there is room; searches answer from the index
    #: as it is.
    disk_full: bool = False

    @property
    def problems(self) -> tuple[str, ...]:
        """What is wrong with the agent's index, one sentence each (empty
        when nothing is): what ``memext status`` says on stderr."""
        out = [self.last_error] if self.last_error else []
        if self.disk_full:
            out.append(f"the disk holding {self.db_path} is full: syncs fail until there is room (searches answer from the index as it is)")
        return tuple(out)

    @property
    def total_files(self) -> int:
        return sum(self.files.values())

    @property
    def total_chunks(self) -> int:
        return sum(self.chunks.values())

    @property
    def search_mode(self) -> SearchMode:
        """How a search would run now, and why (the one place it is decided)."""
        prov = self.provider
        fallback_from = self.fallback.from_provider if self.fallback else None
        if not self.enabled:
            return SearchMode(
                SearchKind.OFF,
                "none",
                "",
                "memory_search.enabled = false",
                "set memory_search.enabled = true in the config to search this agent",
            )
        if prov.keyword_only:
            return SearchMode(SearchKind.KEYWORD_ONLY, reason=prov.cause or prov.reason or "no embedding provider", advice=prov.advice)
        if self.keyword_only_reason:
            return SearchMode(SearchKind.KEYWORD_ONLY, prov.in_force, prov.model, self.keyword_only_reason, None, fallback_from)
        return SearchMode(SearchKind.HYBRID, prov.in_force, prov.model, fallback_from=fallback_from, embedded=prov.embedded)

    @property
    def mode(self) -> str:
        """ "hybrid", "keyword-only" or "off": :attr:`search_mode`'s kind."""
        return self.search_mode.kind.value

    def to_dict(self) -> dict[str, Any]:
        """The JSON form (``fallback`` as ``{"from", "reason"}``; lists, not tuples)."""
        d = asdict(self, dict_factory=lambda items: {k: list(v) if isinstance(v, tuple) else v for k, v in items})
        d["fallback"] = self.fallback.to_dict() if self.fallback else None
        d["mode"] = self.mode
        d["search_mode"] = self.search_mode.to_dict()
        return d
