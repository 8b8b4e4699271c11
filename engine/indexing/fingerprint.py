"""What an index was built with (DESIGN.md §5): the fingerprint stored in
its ``meta`` table, and whether a sync must rebuild it because the
configuration, provider, model or the model's vector size changed since."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..errors import ProviderTimeout
from ..settings import AgentConfig
from ..store import IndexStore
from ..store.drivers import driver_of
from ..text import FTS_VERSION

if TYPE_CHECKING:  # the providers' base classes load with a provider
    from ..providers import EmbeddingProvider

FINGERPRINT_VERSION = 2


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


def needs_rebuild(store: IndexStore, fp: dict, dims: int | None) -> bool:
    """Whether ``store`` was built other than ``fp`` says, or for vectors of
    another size than ``dims`` (the size the provider makes now, when
    known: a model swapped behind the same name changes only that): a sync
    then rebuilds it."""
    stored = store.get_meta_json("fingerprint")
    if stored is None:
        return store.file_count() > 0  # an index from before fingerprints
    if stored != fp:
        return True
    return dims is not None and store.dims is not None and dims != store.dims


#: The text embedded to learn a remote model's vector size (:func:`provider_dims`).
DIMS_PROBE = "memext: vector size"


def provider_dims(provider: EmbeddingProvider | None, store: IndexStore) -> int | None:
    """The size of the vectors ``provider`` makes now, when it can be known.

    A remote model's size shows only in its answers, so when the index holds
    vectors and the provider has not answered yet, it is asked for one: a
    model swapped behind the same name and endpoint answers in another size,
    and a size change is a fingerprint change (the old code: a sync with
    nothing to embed called the index fine while every search, its query
    vector of the new size rejected, fell back to keyword). A size other
    than the index's must come twice: one wrong-size answer is a bad answer,
    not a new model (DESIGN.md §6). A provider that fails here fails the
    sync's own calls too, which report it; one that does not answer within
    the query deadline raises :class:`ProviderTimeout`, so the sync does
    not wait for it again.
    """
    if provider is None:
        return None
    if provider.dims is not None or store.dims is None:
        return provider.dims
    first = _answer_size(provider, DIMS_PROBE)
    if first is None or first == store.dims:
        return first
    return first if _answer_size(provider, DIMS_PROBE + " again") == first else None


def _answer_size(provider: EmbeddingProvider, text: str) -> int | None:
    """The size of ``provider``'s vector for ``text`` (any size accepted: it
    is the question), None when the call fails."""
    provider.expected_dims = None
    try:
        return len(provider.embed_query(text))
    except ProviderTimeout:
        raise
    except Exception:  # noqa: BLE001 - the sync's own calls say what is wrong
        return None
