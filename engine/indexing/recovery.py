"""Crash recovery: the agent's open store, kept usable (DESIGN.md §4).

The index is disposable (the Markdown files are the truth), so a file that
is not a usable index is set aside (never deleted: it may be someone's
file) and replaced by an empty index that the next sync fills. That
happens when the store is opened, when it is opened after a writer died
holding the lock (its owner note outlived it) and a quick check finds
damage, and when a read through :meth:`RecoveringStore.guarded` fails
because of damage. Only an index kept as files on this machine is ever
damaged: a server keeps its own data sane (the driver row's
``index_files``, store/drivers.py).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Callable, TypeVar

from ..errors import IndexOpenError, LockTimeout
from ..store import CorruptIndex, IndexStore, StoreOptions, open_store
from ..store.drivers import driver_of, writer_lock

if TYPE_CHECKING:
    from ..settings import AgentConfig
    from ..store.drivers import IndexFiles

T = TypeVar("T")


class RecoveringStore:
    """The store :class:`~memext.engine.MemoryIndex` reads through, replaced
    by an empty one when its file turns out damaged.

    ``options()`` gives the options each store is opened with;
    ``on_repair(message)`` hears what was done each time a damaged file is
    replaced (what status and searches then say)."""

    def __init__(self, agent: AgentConfig, db_path: Path, options: Callable[[], StoreOptions], on_repair: Callable[[str], None]):
        self.agent = agent
        self.db_path = db_path
        self._options = options
        self._on_repair = on_repair
        #: Set when a damaged index file was replaced (what was done).
        self.repaired: str | None = None
        self.store: IndexStore = self._open_store()

    @property
    def files(self) -> IndexFiles | None:
        """The index's files on this machine; None for an index on a server."""
        return driver_of(self.agent).index_files()

    @property
    def _files(self) -> IndexFiles:
        files = self.files
        assert files is not None, "only a local index has files to check"
        return files

    def new_store(self, *, reader: bool = True) -> IndexStore:
        """A store on the index: the one the index searches through
        (``reader``), or a sync's writer."""
        return open_store(self.agent, self.db_path, self._options()._replace(reader=reader))

    def _open_store(self) -> IndexStore:
        """The agent's store, by ``store.driver`` (store/drivers.py)."""
        try:
            store = self.new_store()
        except CorruptIndex as exc:
            # The index is disposable: replace garbage with an empty index
            # that the next sync fills from the memory files. (Only a SQLite
            # file is ever corrupt: a server keeps its own data sane.)
            with writer_lock(self.agent, self.db_path, timeout=60):
                try:
                    return self.new_store()
                except CorruptIndex:
                    return self._replace_corrupt(str(exc))
        if self.files is not None and self._files.writer_died(self.db_path) and not store.read_only:
            store = self._check_after_crash(store)
        return store

    def _check_after_crash(self, store: IndexStore) -> IndexStore:
        """The last writer died holding the lock (its owner note outlived
        it): quick_check the file before trusting it. Skipped while another
        process writes (that writer is alive; its own open checks)."""
        try:
            lock = writer_lock(self.agent, self.db_path, timeout=0).acquire()
        except LockTimeout:
            return store
        try:
            if not lock.previous_holder_died:
                return store
            problem = self._files.quick_check(self.db_path)
            if problem is None:
                return store
            store.close()
            return self._replace_corrupt(f"found after a writer stopped uncleanly: {problem}")
        finally:
            lock.release()  # removes the dead writer's note: checked

    def _replace_corrupt(self, problem: str) -> IndexStore:
        """Move an unusable index aside (never delete it: it may be someone's
        file) and start an empty one that the next sync fills. The caller
        holds the writer lock."""
        self.repaired = self._files.set_aside(self.db_path, problem)
        self._on_repair(self.repaired)
        return self.new_store()

    def recover(self, exc: BaseException, *, locked: bool = False) -> bool:
        """Replace the index with an empty one when ``exc`` came from damage
        to it (DESIGN.md §4, engine/store/sqlite/repair.py); False when it did not.
        ``locked``: the caller holds the writer lock."""
        problem = self._files.damage_of(exc, self.db_path) if self.files is not None else None
        if problem is None:
            return False
        if self.store.read_only:
            raise IndexOpenError(f"the index {self.db_path} is damaged ({problem}) and cannot be replaced: {self.store.read_only}") from exc
        lock = None if locked else writer_lock(self.agent, self.db_path, timeout=60).acquire()
        try:
            try:
                if self.store.refresh():  # another process replaced it meanwhile
                    return True
            except Exception:
                pass  # the damage again: ours to replace
            self.store.close()
            self.store = self._replace_corrupt(problem)
        finally:
            if lock is not None:
                lock.release()
        return True

    def guarded(self, op: Callable[[], T]) -> T:
        """``op()`` reading the index; when it fails because the file is
        damaged, the file is replaced (the next sync rebuilds it) and ``op``
        runs once more, on the empty index."""
        try:
            return op()
        except Exception as exc:
            if not self.recover(exc):
                raise
        return op()

    def check(self, *, thorough: bool = False, locked: bool = False) -> bool:
        """Check the index file (SQLite's quick_check, or with ``thorough``
        its integrity_check) and replace it when it is damaged; True when it
        was replaced. Nothing to check for an index on a server."""
        if self.files is None:
            return False
        problem = self._files.quick_check(self.db_path, thorough=thorough)
        return problem is not None and self.recover(CorruptIndex(problem), locked=locked)
