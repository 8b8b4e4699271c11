"""The settings an agent is searched with: the schema of ``[memory_search]``
(every key, its type, default and checks, ``Annotated[int, Check(min=1)]``)
and the :class:`AgentConfig` and :class:`Config` that carry them.

These are types only: :mod:`.config` reads the TOML file into them. The
names ``provider``, ``fallback`` and ``store.driver`` take are rows of the
provider and store-driver tables, which :mod:`.config` checks them against:
the tables and their backends import these types, so this module imports
neither (it imports only :mod:`.errors` and :mod:`.paths`, which import
nothing of the engine).

They are named tuples, not frozen dataclasses: every ``memext`` command
defines all eighteen, and Python 3.11 spent 9 ms generating dataclass
methods for them (a named tuple is six times cheaper to define). Change
one with ``_replace``.
"""

import os
from pathlib import Path
from types import MappingProxyType
from typing import Annotated, Mapping, NamedTuple, Optional, Sequence

from .errors import UnknownAgentError
from .paths import AppPaths, app_paths

SOURCES = ("memory", "sessions")
FUSIONS = ("weighted", "rrf")
VECTOR_BACKENDS = ("auto", "vec0", "numpy")


class Check(NamedTuple):
    """How a setting is checked beyond its type, and its TOML key when that
    differs from its Python name (``lambda`` is a Python keyword)."""

    min: Optional[float] = None
    max: Optional[float] = None
    choices: tuple[str, ...] = ()
    key: str = ""


class BatchSettings(NamedTuple):
    enabled: bool = False
    wait: bool = True
    concurrency: Annotated[int, Check(min=1)] = 2
    poll_interval_ms: Annotated[int, Check(min=10)] = 2000
    timeout_minutes: Annotated[float, Check(min=0.01)] = 60.0


class RemoteSettings(NamedTuple):
    base_url: str = ""
    api_key: str = ""
    headers: Mapping[str, str] = MappingProxyType({})
    #: How long one embedding call of a sync may take, its retries and
    #: back-off waits included (the sync holds the writer lock meanwhile,
    #: and asks a provider that ran it out nothing more).
    deadline_ms: Annotated[int, Check(min=100, max=3_600_000)] = 60_000
    #: How long a query embedding may take, retries and waits included (at
    #: most ``deadline_ms``): someone waits for a search, which past it
    #: answers by keyword and says so, so a silent provider costs a search
    #: seconds, not a sync's minute.
    query_deadline_ms: Annotated[int, Check(min=100, max=3_600_000)] = 5_000
    batch: BatchSettings = BatchSettings()


class LocalSettings(NamedTuple):
    model_path: str = ""
    model_cache_dir: str = ""
    #: CPU threads for the model; 0 = one per core, at most 8.
    threads: Annotated[int, Check(min=0, max=256)] = 0


class VectorSettings(NamedTuple):
    enabled: bool = True
    extension_path: str = ""
    # vec0 KNN, or an in-memory numpy matrix; "auto" picks vec0 for small
    # indexes and numpy above VECTOR_AUTO_NUMPY_ABOVE chunks (see store.py).
    backend: Annotated[str, Check(choices=VECTOR_BACKENDS)] = "auto"


class StoreSettings(NamedTuple):
    #: "sqlite": one file per agent (``path``); "postgres": a schema per
    #: agent in the PostgreSQL database at ``url`` (DESIGN.md §16).
    #: A name of the store driver table (engine/store/drivers.py).
    driver: str = "sqlite"
    path: str = ""
    #: ``postgresql://user@host:port/database``; the password comes from
    #: PGPASSWORD or ~/.pgpass (never shown: engine/store/postgres/url.py).
    url: str = ""
    vector: VectorSettings = VectorSettings()


class ChunkingSettings(NamedTuple):
    # Chosen on the LoCoMo dev split by turn recall at a 60-line reading
    # budget (bench/LOCOMO_RESULTS.md). A hit cites only its own lines
    # (engine/search/spans.py: neighbours split the lines they share), so a chunk
    # is indexed with half its size of context around what it cites:
    # 240/120 cites about 120 tokens matched with 240 (0.90; 200/40 0.898,
    # 240/160 0.899, 200/80 and 300/150 0.89, 160/60 0.887). 240 tokens
    # stay near the 256 word pieces that MiniLM-class models were tuned on.
    tokens: Annotated[int, Check(min=16, max=100_000)] = 240
    overlap: Annotated[int, Check(min=0)] = 120


class SessionSyncSettings(NamedTuple):
    delta_bytes: Annotated[int, Check(min=0)] = 100_000
    delta_messages: Annotated[int, Check(min=0)] = 50


class SyncSettings(NamedTuple):
    on_session_start: bool = True
    on_search: bool = True
    watch: bool = True
    watch_debounce_ms: Annotated[int, Check(min=0)] = 1500
    interval_minutes: Annotated[float, Check(min=0)] = 0.0
    sessions: SessionSyncSettings = SessionSyncSettings()


class MMRSettings(NamedTuple):
    enabled: bool = False
    lambda_: Annotated[float, Check(key="lambda", min=0.0, max=1.0)] = 0.7


class TemporalDecaySettings(NamedTuple):
    enabled: bool = False
    half_life_days: Annotated[float, Check(min=0.001)] = 30.0


class HybridSettings(NamedTuple):
    enabled: bool = True
    # Chosen on the LoCoMo dev split (bench/LOCOMO_RESULTS.md): weighted
    # fusion ranked best (RRF k=60 lost 5.5 points), and its scores make
    # min_score meaningful where RRF's barely vary. Equal weights: neither
    # signal is known to be the better one for every provider, and weights
    # from 0.6/0.4 to 0.2/0.8 scored within 0.4 points of each other.
    fusion: Annotated[str, Check(choices=FUSIONS)] = "weighted"
    vector_weight: Annotated[float, Check(min=0.0)] = 0.5
    text_weight: Annotated[float, Check(min=0.0)] = 0.5
    candidate_multiplier: Annotated[int, Check(min=1, max=100)] = 4
    rrf_k: Annotated[int, Check(min=1)] = 60
    # Share of the vector side taken by a chunk's best entry (found by its
    # own vector, a third candidate pool beside the chunks' vectors and
    # BM25) when that entry is nearer the query than the whole chunk; 0
    # ranks by chunk vectors alone. Equal shares: LoCoMo dev recall@L60
    # and multi-hop rose with them, and letting the entry replace the
    # chunk's cosine outright lost single-hop answers (bench/LOCOMO_RESULTS.md).
    entry_share: Annotated[float, Check(min=0.0, max=1.0)] = 0.5
    mmr: MMRSettings = MMRSettings()
    temporal_decay: TemporalDecaySettings = TemporalDecaySettings()

    @property
    def weights(self) -> tuple[float, float]:
        """(vector, text) weights normalised to sum to 1."""
        total = self.vector_weight + self.text_weight
        return self.vector_weight / total, self.text_weight / total


class QuerySettings(NamedTuple):
    max_results: Annotated[int, Check(min=1, max=200)] = 6
    # With equal weights, 0.1 lets a hit through on one signal alone when its
    # cosine is at least 0.2 or it holds a fifth of the query's BM25 weight:
    # below those levels the local model's vector-only and BM25-only LoCoMo
    # dev recall starts to fall. It costs no LoCoMo answer and drops a fifth
    # of the results for questions asked of the wrong conversation; 0.15
    # drops over half of those but also real semantic-only hits (cosine
    # 0.2-0.3 for MiniLM). The reference's 0.35 would cost a sixth of the
    # answers (bench/LOCOMO_RESULTS.md).
    min_score: Annotated[float, Check(min=0.0, max=1.0)] = 0.1
    # A chunk dated inside a time the query names ("last week", "in May
    # 2023") scores x (1 + time_boost); 0 turns it off. Queries without a
    # time cue are never affected (engine/search/time_ranking.py).
    time_boost: Annotated[float, Check(min=0.0, max=10.0)] = 0.2
    # Hits of one file that overlap or touch come back as one span (one
    # citation), as they always do with a max_lines budget: a reader never
    # gets the same lines twice, and the six results are six places
    # (LoCoMo dev turn_recall@6 0.815 -> 0.837 at 200/40 chunks).
    merge_spans: bool = True
    hybrid: HybridSettings = HybridSettings()


class CacheSettings(NamedTuple):
    enabled: bool = True
    max_entries: Annotated[Optional[int], Check(min=1)] = None


class CaptureSettings(NamedTuple):
    # Off by default: capture writes to memory from what a conversation
    # says, which a person should opt into per agent (DESIGN.md §17).
    enabled: bool = False


class RecallSettings(NamedTuple):
    # A few memories before each turn: each one costs the model's context,
    # and the fourth-best confident hit is rarely what the turn needs.
    max_results: Annotated[int, Check(min=1, max=20)] = 3
    # Recall runs before the model answers: past this, the turn goes on
    # without memories rather than waiting on a slow provider or store.
    deadline_ms: Annotated[int, Check(min=10, max=60000)] = 1500


class ExperimentalSettings(NamedTuple):
    session_memory: bool = False


class MemorySearchSettings(NamedTuple):
    """Everything under ``[memory_search]``, merged for one agent."""

    enabled: bool = True
    sources: Sequence[str] = ("memory",)
    extra_paths: Sequence[str] = ()
    #: "auto", "none" or a name of the provider table (engine/providers/registry.py).
    provider: str = "auto"
    #: "none" or a name of the provider table.
    fallback: str = "none"
    #: Remote providers ``auto`` may send notes to (DESIGN.md §6): naming
    #: one here is the user's consent; a key in the environment is not.
    allow_remote: Sequence[str] = ()
    model: str = ""
    max_file_bytes: Annotated[int, Check(min=1)] = 10 * 1024 * 1024
    #: Log which memories searches return (engine/memory/use_log.py), for
    #: ``memext consolidate``; the log stays beside the index.
    use_log: bool = True
    #: ``memext status``, the tray and the notebook warn when MEMORY.md is
    #: larger (0: never). The default is the reference system's bootstrap
    #: limit (``bootstrapMaxChars``, 20,000 characters): past it, the file
    #: an agent loads at the start of every session is cut (DESIGN.md §17).
    memory_file_warn_bytes: Annotated[int, Check(min=0)] = 20_000
    remote: RemoteSettings = RemoteSettings()
    local: LocalSettings = LocalSettings()
    store: StoreSettings = StoreSettings()
    chunking: ChunkingSettings = ChunkingSettings()
    sync: SyncSettings = SyncSettings()
    query: QuerySettings = QuerySettings()
    cache: CacheSettings = CacheSettings()
    capture: CaptureSettings = CaptureSettings()
    recall: RecallSettings = RecallSettings()
    experimental: ExperimentalSettings = ExperimentalSettings()


class AgentConfig(NamedTuple):
    """One agent: where its memory lives and how it is searched."""

    id: str
    workspace: Path
    settings: MemorySearchSettings = MemorySearchSettings()
    sessions_dir: Optional[Path] = None
    #: True for the agent made up when there is no config file.
    adhoc: bool = False

    @property
    def sessions_path(self) -> Path:
        """Folder of session transcripts (``<workspace>/sessions`` unless set)."""
        return self.sessions_dir if self.sessions_dir is not None else self.workspace / "sessions"

    def db_path(self, paths: AppPaths | None = None) -> Path:
        """The agent's index file (``store.path`` or the platformdirs state dir)."""
        custom = self.settings.store.path
        if custom:
            return Path(os.path.expanduser(custom.replace("{agent_id}", self.id)))
        return (paths or app_paths()).index_dir / f"{self.id}.sqlite"

    def extra_path_list(self) -> list[Path]:
        """``extra_paths`` resolved against the workspace."""
        out = []
        for raw in self.settings.extra_paths:
            p = Path(os.path.expanduser(raw))
            out.append(p if p.is_absolute() else self.workspace / p)
        return out


class Config(NamedTuple):
    """A loaded configuration: its file (if any) and its agents, in file order."""

    path: Optional[Path]
    agents: list[AgentConfig]

    def agent(self, agent_id: str | None = None) -> AgentConfig:
        """The named agent, or the first one when ``agent_id`` is None."""
        if agent_id is None:
            return self.agents[0]
        for a in self.agents:
            if a.id == agent_id:
                return a
        known = ", ".join(a.id for a in self.agents) or "none"
        where = f" in {self.path}" if self.path else ""
        raise UnknownAgentError(f"no agent {agent_id!r}{where} (known: {known}); add it with `memext agents add`")

    def agent_at(self, folder: str | os.PathLike) -> AgentConfig | None:
        """The agent whose workspace holds ``folder`` (the innermost one when
        workspaces nest), or None when ``folder`` is in none of them."""
        here = Path(os.path.realpath(folder))
        best: AgentConfig | None = None
        depth = -1
        for a in self.agents:
            ws = Path(os.path.realpath(a.workspace))
            if (here == ws or ws in here.parents) and len(ws.parts) > depth:
                best, depth = a, len(ws.parts)
        return best
