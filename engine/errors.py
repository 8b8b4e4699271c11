"""Exceptions raised by the engine.

Every error a user can cause carries a message that says what to do about
it; callers (CLI, notebook, tray) show ``str(exc)`` and nothing else.
"""

from __future__ import annotations

import errno


class MemextError(Exception):
    """Base class for every error memext raises on purpose."""


class ConfigError(MemextError):
    """The configuration file is missing a value, has a bad one, or cannot be read.

    ``key`` is the dotted key (``memory_search.chunking.tokens``) and
    ``path`` the file, when they are known.
    """

    def __init__(self, message: str, *, key: str | None = None, path: str | None = None):
        self.key = key
        self.path = path
        where = f"{path}: " if path else ""
        what = f"{key}: " if key else ""
        super().__init__(f"{where}{what}{message}")


class UnknownAgentError(MemextError):
    """An agent id that the configuration does not define."""


class AccessDenied(MemextError):
    """``get()`` was asked for a path outside the agent's memory."""


class BadPath(AccessDenied):
    """A path that cannot name a file at all (a NUL byte, a name or path
    too long for the file system, not text). An AccessDenied, so callers
    that refuse paths need only one except clause."""


class LockTimeout(MemextError):
    """Another process holds the agent's writer lock for too long."""


class ProviderError(MemextError):
    """An embedding provider failed (unreachable, bad key, bad response)."""


class ProviderTimeout(ProviderError):
    """The provider did not answer within a call's deadline: it hangs,
    trickles its answer, or kept failing until the time was up. A sync
    stops asking it for the rest of that sync (DESIGN.md §6)."""


class BadEmbeddings(ProviderError):
    """The provider answered, but with vectors that must not be used (the
    wrong size, NaN or infinite values, all zero): rejected, nothing stored.
    A quick answer, so the next call may simply try again."""


class EmbeddingsPending(ProviderError):
    """Embeddings were requested but are not ready yet (e.g. an OpenAI batch
    job submitted with ``remote.batch.wait = false``). Not a failure: the
    files stay keyword-only until a later sync collects the vectors."""


class DiskFull(MemextError):
    """The disk (or the user's quota) holding a memory file or the index is
    full. What was being written was undone: a memory file is as it was, an
    index transaction rolled back. Free some space and try again."""


#: SQLITE_FULL, the primary result code of "database or disk is full".
_SQLITE_FULL = 13
_FULL_ERRNOS = {errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC)}


def is_disk_full(exc: BaseException) -> bool:
    """True when ``exc``, or an exception it was raised from, says the disk
    is full: ENOSPC/EDQUOT from the OS, SQLITE_FULL from SQLite."""
    seen: set[int] = set()
    e: BaseException | None = exc
    while e is not None and id(e) not in seen:
        seen.add(id(e))
        if isinstance(e, DiskFull) or (isinstance(e, OSError) and e.errno in _FULL_ERRNOS):
            return True
        code = getattr(e, "sqlite_errorcode", None)
        if isinstance(code, int) and code & 0xFF == _SQLITE_FULL:
            return True
        e = e.__cause__ or e.__context__
    return False


class IndexBuildError(MemextError):
    """A rebuild of the index failed; the previous index was kept."""


class IndexOpenError(MemextError):
    """The index file cannot be created, opened or recovered (``store.path``)."""


class ForeignDatabase(IndexOpenError):
    """``store.path`` names a database memext did not create: it is left untouched."""


class IndexReadOnly(MemextError):
    """The index can be searched but not updated (its file or folder is read-only)."""


class WorkspaceMissing(MemextError):
    """The agent's workspace cannot be used: it does not exist, is not a
    folder, cannot be read, or no longer holds any of the memory files its
    index has (an unmounted drive leaves its empty mount point behind).
    Searching it would answer "nothing" and syncing it would empty the
    index, so both refuse; the index keeps its rows until the folder is
    back. ``workspace`` is the folder, ``agent`` the agent's id."""

    def __init__(self, message: str, *, workspace: str | None = None, agent: str | None = None):
        super().__init__(message)
        self.workspace = workspace
        self.agent = agent


class BadLineRange(MemextError, ValueError):
    """``get()`` was given a line range that cannot exist (e.g. line 0).

    Also a ValueError, which the API raised before it was a MemextError."""


class LinesNotFound(MemextError):
    """``get()`` found no lines where it was asked to read: the memory file
    does not exist (yet), or the first line asked for is past its end.
    Nothing is wrong with the request: ``memext get`` exits with status 1,
    "nothing found", as a search that matches nothing does."""


class SearchDisabled(MemextError):
    """The agent's config turns memory search off (``memory_search.enabled = false``)."""


class StoreUnavailable(IndexOpenError):
    """The index's database server cannot be reached (``store.url``); the
    message names the server without its password."""
