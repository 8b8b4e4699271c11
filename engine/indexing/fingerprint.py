"""What an index was built with (DESIGN.md §5): the fingerprint stored in
its ``meta`` table, and whether a sync must rebuild it because the
configuration, provider or model changed since."""

from __future__ import annotations

from ..config import AgentConfig
from ..providers import EmbeddingProvider
from ..store import IndexStore
from ..store.drivers import driver_of
from ..text import FTS_VERSION

FINGERPRINT_VERSION = 1


def fingerprint(agent: AgentConfig, provider: EmbeddingProvider | None, vector_store: str) -> dict:
    """What the index was built with; any change means a rebuild."""
    s = agent.settings
    local = driver_of(agent).local  # a shared index keeps no machine's paths (DESIGN.md §16)
    return {
        "version": FINGERPRINT_VERSION,
        "provider": provider.id if provider else "none",
        "model": provider.model if provider else "",
        "endpoint": provider.endpoint_key if provider else "",
        "chunking": [s.chunking.tokens, s.chunking.overlap],
        "fts": FTS_VERSION,
        "sources": sorted(s.sources),
        "workspace": str(agent.workspace) if local else "",
        "extra_paths": list(s.extra_paths),
        "sessions_dir": str(agent.sessions_path) if "sessions" in s.sources and local else "",
        "vector_store": vector_store if provider else "",
    }


def needs_rebuild(store: IndexStore, fp: dict, provider: EmbeddingProvider | None) -> bool:
    """Whether ``store`` was built other than ``fp`` says (or for vectors of
    another size than ``provider`` makes): a sync then rebuilds it."""
    stored = store.get_meta_json("fingerprint")
    if stored is None:
        return store.file_count() > 0  # an index from before fingerprints
    if stored != fp:
        return True
    dims = provider.dims if provider else None
    return dims is not None and store.dims is not None and dims != store.dims
