"""The memory store: a Chroma PersistentClient behind a cross-process file lock.

This is the only module that imports chromadb. Chroma is thread-safe but not
process-safe (a second client on the same directory can hang, and a process does not
see another's writes), so one process at a time owns the store, in one of two ways:

- *per transaction* (in-process mode, one command per process): every access happens
  inside ``transaction()``, which takes the file lock (waiting at most ``lock_timeout``
  seconds), opens a fresh client and the SQLite sidecar (``memcli.store.sidecar``), and on the
  way out closes both and releases the lock;
- *resident* (the memcli service): ``open_resident()`` takes the file lock once and keeps
  the client and the sidecar open until ``close()``; ``transaction()`` is then a
  re-entrant thread lock, so the service's request threads take turns on the store and
  nothing is reopened per call.

Transactions nest in both.

Reads of memories (``get``, ``get_many``, ``memories``, ``users``) take them from the copy
that the recall index keeps of every memory (``memcli.store.recall_index``) when that copy is known to
be whole: Chroma keeps metadata one row per field, and reading 100,000 memories from it
takes about 12 s. The copy is checked against Chroma once a process: by the count of every
memory when it matches (nothing else is dirty), else user by user by their ids. A user
whose write was left half done (a dirty mark), or whose rows are of an older version, is
rebuilt from Chroma before anything of theirs is read or written. Until a check passes,
reads go to Chroma, which stays the record.

The store is private: its folders are made 0700 and its files 0600 explicitly (an older
store is tightened when opened, ``notice`` says so once). A store whose folder cannot be
written (a read-only mount, ``chattr +i``) is opened read-only (``read_only``): reads come
from the recall index's copy, writes raise ReadOnlyStoreError. A full device is
DiskFullError: a write that does not fit is refused before anything is written
(``_require_room``, ``room_error``), and one that fills the device part way leaves the index
to be rebuilt from Chroma at the next transaction. Reads and deletes work on a full device:
the store keeps a reserve of space (``memcli.store.space``), given back to open Chroma and to
delete when the device is full, and writes are refused while it is in use; a device too
full even for that is read from the recall index's copy, as a read-only store is
(``full_reason``).

With ``store_url`` set (``Server``) the memories live on a Chroma server instead, opened
with ``chromadb.HttpClient``; everything above holds, the sidecar and the file lock staying
in the data folder of this machine. The folder-level work is the server's there: no file
modes for Chroma's files, no ``chroma vacuum`` or HNSW slot zeroing in ``compact``; a
read-only data folder is read from the copy as above, without the server's collection
metadata. A server that cannot be used raises StoreServerError.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from memcli.config import Paths
from memcli.errors import (
    DISK_FULL_ERRNOS,
    READ_ONLY_ERRNOS,
    DiskFullError,
    MemcliError,
    ReadOnlyStoreError,
)
from memcli.memory import Memory
from memcli.paths import device_of
from memcli.store import snapshot
from memcli.store.chroma import (
    _FULL_SIGNS,
    _GET_PAGE,
    _NO_ROOM_SIGN,
    _OPERATORS,
    _READ_ONLY_SIGNS,
    BEHIND_BATCH,
    COLLECTION,
    HOME_ID_FILE,
    MIN_PREFIX,
    REINDEXING,
    SCHEMA_VERSION,
    STAGING,
    WINDOWS_SKIPPED,
    Backend,
    Embed,
    Server,
    _chroma_metadata,
    _import_chroma,
    _matches,
    _ReadOnlyChroma,
    _where,
    backend_of,
    log,
    short_prefix,
)
from memcli.store.index import UserIndex
from memcli.store.recall_index import INDEX_VERSION
from memcli.store.sidecar import HistoryEntry, Sidecar
from memcli.store.space import OPEN_ROOM, ROOM_PER_MEMORY
from memcli.store.store_maintenance import StoreMaintenance
from memcli.store.store_open import StoreOpening
from memcli.store.store_reads import StoreReads
from memcli.store.store_writes import StoreWrites


class MemoryStore(StoreOpening, StoreWrites, StoreReads, StoreMaintenance):
    """Memories of every user in one cosine-space Chroma collection, filtered by ``user``.

    Every write also updates the recall index in the sidecar (``memcli.store.recall_index``).
    ``notice`` receives status lines (the recall index is being rebuilt).

    Raises StoreHeldError (a StoreLockedError naming the service's pid when the service
    holds the store) when the lock is not had within ``lock_timeout`` seconds,
    and MemcliError when the store was written by a newer memcli (schema version).
    """

    def __init__(
        self,
        paths: Paths,
        lock_timeout: float = 30.0,
        notice: Callable[[str], None] | None = None,
        server: Server | None = None,
    ) -> None:
        self.paths = paths
        self.server = server
        """The Chroma server holding the memories; None: the folder ``paths.store_dir``."""
        self.backend: Backend = backend_of(paths, server)
        """Where the records are (``Folder`` or ``Server``), chosen here and by ``use``."""
        self.lock_timeout = lock_timeout
        self.notice = notice or (lambda message: None)
        self.resident = False
        """Whether this store stays open between transactions (``open_resident``)."""
        self._depth = 0
        self._lock: Any = None
        self._client: Any = None
        self._collection: Any = None
        self._staging: Any = None
        """The staging collection of a reindex under way (``begin_reindex``)."""
        self._deferred = False
        """Whether ``_client`` and ``_collection`` stand in for a Chroma not yet opened (``_DeferredChroma``)."""
        self._sidecar: Sidecar | None = None
        self._threads = threading.RLock()
        self._checked: set[str] = set()
        """Users whose rows of the recall index were checked against Chroma in this process."""
        self._complete: bool | None = None
        """Whether the recall index held as many memories as Chroma when last counted (None: not counted)."""
        self._rebuilds = 0
        """Users' rows rebuilt from Chroma by this store (readers of the copy look again after one)."""
        self.read_only_reason = ""
        """Why the store was opened read-only (the path and the error); empty when it is writable."""
        self.full_reason = ""
        """Why the store was opened from its copy because its device is full (Chroma itself
        could not open, even with ``OPEN_ROOM`` of the reserve given back); empty otherwise."""
        self._told_read_only = False
        self._tightened = False

    @contextlib.contextmanager
    def transaction(self) -> Iterator[MemoryStore]:
        """Hold the store (the file lock and an open collection, or in a resident store
        the thread lock) for the duration of the block; at its end what Chroma wrote is
        settled (``Backend.settle``: private, the HNSW files' unused places zeroed)."""
        with self._threads:
            if self._depth == 0 and not self.resident:
                with self._faults():
                    self._open()
            elif self._depth == 0 and self.full_reason and self._room_to_reopen():
                with self._faults():  # the service, opened from its copy on a full device: there is room again
                    self._drop_opened()
                    self._open_files()
            self._depth += 1
            try:
                with self._faults():
                    yield self
                if self._depth == 1:
                    self._tell_read_only()
            finally:
                self._depth -= 1
                if self._depth == 0 and not self.resident:
                    self._close()
                elif self._depth == 0 and self._client is not None and not self.read_only:
                    # a resident store (the service) keeps its client: what Chroma wrote in
                    # this transaction is settled now, as a closing store's is (``_close``),
                    # and so is what a memcli killed before it took the store left (Chroma
                    # not opened yet: ``_close`` says why)
                    self.backend.settle(opened=not self._deferred)

    @contextlib.contextmanager
    def _faults(self) -> Iterator[None]:
        """Turn a storage fault raised in the block into its MemcliError: a full device
        into DiskFullError, a write refused by a read-only folder into ReadOnlyStoreError
        (``fault``); anything else goes through as it is."""
        try:
            yield
        except MemcliError:
            raise
        except Exception as exc:
            fault = self.fault(exc)
            if fault is None:
                raise
            raise fault from exc

    def fault(
        self, exc: BaseException, stored: str = "the write stopped (what it left half done is repaired at the next run)"
    ) -> MemcliError | None:
        """The MemcliError of a storage fault ``exc`` (an OSError, a sqlite3 or a Chroma
        error), or None when it is none: DiskFullError for ENOSPC, EDQUOT or EFBIG (also
        SQLite's and Chroma's "database or disk is full"), its message naming the device
        and ``stored`` (what became of the write); ReadOnlyStoreError for a write refused
        under the data folder (EROFS, EACCES, EPERM, "readonly database")."""
        if (found := self.backend.error(exc)) is not None:
            return found
        number = getattr(exc, "errno", None)
        text = str(exc)
        if (
            number in DISK_FULL_ERRNOS
            or any(sign in text for sign in _FULL_SIGNS)
            or (_NO_ROOM_SIGN in text and (self.free_bytes() or 0) < OPEN_ROOM)
        ):
            return DiskFullError(f"no space left on {device_of(self.paths.data_dir)}; {stored}")
        name = getattr(exc, "filename", None)
        under = name is not None and os.path.abspath(name).startswith(os.path.abspath(self.paths.data_dir))
        if (number in READ_ONLY_ERRNOS and under) or any(sign in text for sign in _READ_ONLY_SIGNS):
            return self.read_only_error(f"{name or self.paths.data_dir}: {getattr(exc, 'strerror', None) or text}")
        return None

    @contextlib.contextmanager
    def optional_write(self, skipped: str) -> Iterator[None]:
        """Run a write that a read can do without (window vectors, a rebuild of the recall
        index, recall's reinforcement): on a device without room for it, or a store that
        cannot be written, it is skipped with a notice ("...: ``skipped``") and the read goes
        on; the SQLite part of it is rolled back (``memcli.store.db.atomic``), and a Chroma part
        left half done is repaired from the dirty mark at the next write."""
        try:
            with self._faults():
                yield
        except (DiskFullError, ReadOnlyStoreError) as exc:
            self.notice(f"{exc.message.split(';')[0]}: {skipped}")

    @property
    def sidecar(self) -> Sidecar:
        """The open SQLite sidecar (history, consolidation progress); inside transaction() only."""
        if self._sidecar is None:
            raise RuntimeError("MemoryStore used outside transaction()")
        return self._sidecar

    def reinforce(self, memories: Sequence[Memory]) -> None:
        """Write back the metadata of recalled memories (a reinforcement), behind: the
        recall index's copy at once (what every read of the store takes), Chroma in
        batches of ``BEHIND_BATCH`` (``flush_behind``), and whatever is still behind when
        the store is closed, before anything reads Chroma's metadata, or when the store is
        next opened after a kill. A reinforcement is thus one SQLite transaction, not a
        Chroma write, and one not waited on to reach the disk (``Sidecar.unsynced``: a kill
        loses none of it, a power cut may lose the last ones). Raises DiskFullError as
        ``update`` does; ReadOnlyStoreError in a read-only store."""
        if not memories:
            return
        with self.transaction(), self.sidecar.unsynced():
            self.update_behind(memories)

    def update_behind(self, memories: Sequence[Memory], history: Sequence[HistoryEntry] = ()) -> None:
        """Write back the metadata (not text or embedding) of existing memories behind, as
        ``reinforce`` does (the recall index's copy at once, Chroma later), with ``history``
        entries recorded in the same SQLite transaction: a supersession at write time
        (``memcli.recall.changes.Changes.supersede``) is one commit, whole after a kill or
        not at all. Raises DiskFullError as ``update`` does; ReadOnlyStoreError in a
        read-only store."""
        if not memories:
            return
        with self.transaction():
            if self.read_only:
                raise self.read_only_error()
            if refused := self.room_error(ROOM_PER_MEMORY * len(memories), "nothing was changed"):
                raise refused
            self._repair({m.user for m in memories})
            with self.sidecar.atomic():
                self.sidecar.record(history)
                behind = self.sidecar.index.set_behind(memories)
            if behind >= BEHIND_BATCH:
                self.flush_behind()

    def flush_behind(self) -> int:
        """Write to Chroma the metadata the recall index's copy holds ahead of it
        (``reinforce``), a page at a time, each page marked current once written: a kill
        in between writes it again, the same, at the next flush. Returns the memories
        written (ids waiting for a memory deleted since are dropped, not counted)."""
        with self.transaction():
            return self._flush_behind()

    def _flush_behind(self) -> int:
        """``flush_behind`` with the store open (no transaction taken: ``_close`` calls it).
        In a store opened without Chroma (``_open_deferrable``) anything waiting opens it
        first (``_open_real_chroma``); nothing waiting leaves it closed."""
        if self.read_only or self._sidecar is None or self._collection is None:
            return 0
        index = self._sidecar.index
        if self._deferred:
            if not index.behind_count():
                return 0
            self._open_real_chroma()
        written = 0
        while True:
            ids, memories = index.behind(_GET_PAGE)
            if not ids:
                return written
            if memories:
                self._collection.update(ids=[m.id for m in memories], metadatas=[m.to_metadata() for m in memories])
            index.caught_up(ids)
            written += len(memories)

    # The recall index keeps a copy of every memory (``RecallIndex.records``): reads take it
    # from there when it can be trusted, and from Chroma otherwise.

    def save_recall_snapshot(self, user: str, index: UserIndex) -> bool:
        """Take a snapshot of ``user``'s ``index`` (``memcli.store.snapshot``), unless rows
        were deleted since it was loaded whole (its vocabulary may hold their words), the
        store is read-only, or it is empty; returns whether one was taken. A snapshot that
        cannot be written (a full device) is skipped: it only saves time."""
        if index.scrubbed or self.read_only or index.count == 0:
            return False
        try:
            snapshot.save(self.paths.data_dir, user, index, INDEX_VERSION)
        except OSError as exc:
            log.warning("no snapshot of the recall index of %s: %s", user, exc)
            return False
        index.behind = 0
        return True


# Names that moved to memcli.store.chroma, still importable from here.
__all__ = [
    "MemoryStore",
    "Embed",
    "COLLECTION",
    "REINDEXING",
    "STAGING",
    "SCHEMA_VERSION",
    "_GET_PAGE",
    "BEHIND_BATCH",
    "MIN_PREFIX",
    "log",
    "_FULL_SIGNS",
    "WINDOWS_SKIPPED",
    "_NO_ROOM_SIGN",
    "_READ_ONLY_SIGNS",
    "short_prefix",
    "_chroma_metadata",
    "_OPERATORS",
    "_matches",
    "_ReadOnlyChroma",
    "_where",
    "_import_chroma",
    "HOME_ID_FILE",
    "Server",
]
