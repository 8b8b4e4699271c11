"""Index storage: the :class:`IndexStore` interface and its SQLite implementation.

``base`` holds the interface and the row types that cross it; the SQLite
backend is split by concern: ``connection`` (open, schema, refresh after a
swap, meta, unusable files), ``ownership`` (is a file memext's to write),
``damage`` (telling a damaged file), ``chunks`` (files, chunks, FTS5),
``vectors`` (vec0 or the in-memory matrix), ``cache`` (the embedding cache)
and ``sqlite`` (the :class:`Store` that puts them together). The PostgreSQL
backend is ``postgres`` (:class:`~.postgres.PostgresStore`) with ``pg_*``
modules, imported only when an agent uses it; ``factory.open_store``
chooses by ``store.driver``.
"""

from .base import CacheKey, ChunkRow, CorruptIndex, FileRow, FileStat, IndexStore, NewChunk, StoreOptions
from .factory import open_store
from .sqlite.connection import SCHEMA_VERSION
from .sqlite.index_files import clean_stale_shadows, move_aside, remove_index_files
from .sqlite.damage import quick_check
from .sqlite.store import Store
from .sqlite.vectors import VECTOR_AUTO_NUMPY_ABOVE

__all__ = [
    "SCHEMA_VERSION",
    "VECTOR_AUTO_NUMPY_ABOVE",
    "CacheKey",
    "ChunkRow",
    "CorruptIndex",
    "FileRow",
    "FileStat",
    "IndexStore",
    "NewChunk",
    "Store",
    "StoreOptions",
    "clean_stale_shadows",
    "open_store",
    "move_aside",
    "quick_check",
    "remove_index_files",
]
