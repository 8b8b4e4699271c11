"""Index storage: the :class:`IndexStore` interface, the driver table and the backends.

``base`` holds the interface and the row types that cross it; ``drivers``
the table of backends by ``store.driver`` (opening an agent's index, its
writer lock, where it is, and for an index kept as files on this machine
what the engine does with those files); ``tokenizer`` the terms FTS5 makes
of text, which every backend indexes. The SQLite backend (``sqlite/``) is
split by concern: ``db`` (the binding and its connections),
``connection`` (open, schema, refresh after a swap, meta, unusable files),
``ownership`` (is a file memext's to write), ``damage`` and ``repair``
(telling a damaged file, setting it aside), ``files`` (the index as files:
the driver row's ``index_files``), ``chunks`` (files, chunks, FTS5), ``entries`` (the files' entries; ``entry_vectors``, shared by both backends, searches their vectors),
``vectors`` (vec0 or the in-memory matrix), ``cache`` (the embedding
cache), ``lock`` (the writer's file lock) and ``store`` (the ``Store``
that puts them together). The PostgreSQL backend (``postgres/``,
:class:`~.postgres.store.PostgresStore`) is imported only when an agent
uses it.

The names below are the store interface the rest of the engine uses (no
backend's own names: those stay in their folders) and load on first use
(PEP 562), so reading the config, which consults the driver table, loads
no backend.
"""

from typing import TYPE_CHECKING

from ..lazy_exports import lazy_names

if TYPE_CHECKING:
    from .base import CacheKey, ChunkRow, CorruptIndex, EntryHit, EntryRow, FileRow, FileStat, IndexStore, NewChunk, NewEntry, StoreOptions
    from .drivers import open_store, writer_lock

#: Where each name lives (name -> submodule).
_EXPORTS: dict[str, str] = {
    "CacheKey": "base",
    "ChunkRow": "base",
    "CorruptIndex": "base",
    "EntryHit": "base",
    "EntryRow": "base",
    "FileRow": "base",
    "FileStat": "base",
    "IndexStore": "base",
    "NewChunk": "base",
    "NewEntry": "base",
    "StoreOptions": "base",
    "open_store": "drivers",
    "writer_lock": "drivers",
}

__all__ = list(_EXPORTS)
__getattr__, __dir__ = lazy_names(__name__, _EXPORTS)
