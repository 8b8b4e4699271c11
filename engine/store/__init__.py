"""Index storage: the :class:`IndexStore` interface, the driver table and the backends.

``base`` holds the interface and the row types that cross it; ``drivers``
the table of backends by ``store.driver`` (opening an agent's index, its
writer lock, where it is). The SQLite backend (``sqlite/``) is split by
concern: ``connection`` (open, schema, refresh after a swap, meta,
unusable files), ``ownership`` (is a file memext's to write), ``damage``
(telling a damaged file), ``chunks`` (files, chunks, FTS5), ``vectors``
(vec0 or the in-memory matrix), ``cache`` (the embedding cache), ``lock``
(the writer's file lock) and ``store`` (the :class:`Store` that puts them
together). The PostgreSQL backend (``postgres/``,
:class:`~.postgres.store.PostgresStore`) is imported only when an agent
uses it.

The names below load on first use (PEP 562), so reading the config, which
consults the driver table, loads no backend.
"""

from typing import TYPE_CHECKING

from ..lazy import lazy_names

if TYPE_CHECKING:
    from .base import CacheKey, ChunkRow, CorruptIndex, FileRow, FileStat, IndexStore, NewChunk, StoreOptions
    from .drivers import open_store
    from .sqlite.connection import SCHEMA_VERSION
    from .sqlite.damage import quick_check
    from .sqlite.index_files import clean_stale_shadows, move_aside, remove_index_files
    from .sqlite.store import Store
    from .sqlite.vectors import VECTOR_AUTO_NUMPY_ABOVE

#: Where each name lives (name -> submodule).
_EXPORTS: dict[str, str] = {
    "CacheKey": "base",
    "ChunkRow": "base",
    "CorruptIndex": "base",
    "FileRow": "base",
    "FileStat": "base",
    "IndexStore": "base",
    "NewChunk": "base",
    "StoreOptions": "base",
    "open_store": "drivers",
    "SCHEMA_VERSION": "sqlite.connection",
    "quick_check": "sqlite.damage",
    "clean_stale_shadows": "sqlite.index_files",
    "move_aside": "sqlite.index_files",
    "remove_index_files": "sqlite.index_files",
    "Store": "sqlite.store",
    "VECTOR_AUTO_NUMPY_ABOVE": "sqlite.vectors",
}

__all__ = list(_EXPORTS)
__getattr__, __dir__ = lazy_names(__name__, _EXPORTS)
