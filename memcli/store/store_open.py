"""Opening and closing the store: the Chroma client and collection (a folder or a server), the
read-only mode of a folder that cannot be written, and the space reserve that lets a full
device still be read and deleted from (``memcli.store.store.MemoryStore``)."""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path
from typing import Any

from memcli.errors import (
    READ_ONLY_ERRNOS,
    DiskFullError,
    MemcliError,
    ReadOnlyStoreError,
    StoreHeldError,
)
from memcli.paths import PRIVATE_FILE, device_of, private, private_dir, private_tree, write_private
from memcli.processes import service_pid
from memcli.store import space
from memcli.store.chroma import (
    HNSW_CONFIGURATION,
    REINDEXING,
    SCHEMA_VERSION,
    SERVER_HNSW_CONFIGURATION,
    SYNC_THRESHOLD,
    Server,
    _import_chroma,
    _ReadOnlyChroma,
    backend_of,
    forget_chroma_system,
    log,
    set_sync_threshold,
)
from memcli.store.sidecar import Sidecar
from memcli.store.space import OPEN_ROOM, ROOM_FLOOR

CLOSED_FILE = "chroma-closed.json"
"""The file in the data folder where a store that closes (a service's at its end, any store
that opened Chroma) records what Chroma's database was at that moment (``_record_closed``):
its files' identity, size and time, the collection's count and metadata. A later opening
that finds the files unchanged opens Chroma only when something needs it
(``_DeferredChroma``)."""

CLOSED_VERSION = 1


class _DeferredChroma:
    """Stands in for the Chroma client and collection of a local store whose database is
    as a service left it when it closed the store (``CLOSED_FILE``): ``count`` and
    ``metadata`` answer from that record, and anything else opens Chroma
    (``StoreOpening._open_deferred``: chromadb's import, about a second) and is done by
    the real client or collection. So a command served from the recall index's copy of
    the memories (``list``, ``show``, ``stats``, ``recall``) never imports chromadb.

    Once Chroma is open, the stand-in answers everything from it (a caller may have kept
    a reference to it across a write)."""

    def __init__(self, store: Any, role: str, count: int, metadata: dict[str, Any]) -> None:
        self._store = store
        self._role = role  # "client" or "collection"
        self._count = count
        self._metadata = metadata

    def _real(self) -> Any:
        return self._store._open_deferred(self._role)

    @property
    def metadata(self) -> dict[str, Any]:
        """The collection's metadata (schema version, embedder), as recorded at the close."""
        if self._store._deferred:
            return dict(self._metadata)
        return self._real().metadata

    def count(self) -> int:
        """How many records the collection held at the close (Chroma's count once it is open)."""
        if self._store._deferred:
            return self._count
        return self._real().count()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real(), name)


def _database_state(store_dir: Path) -> list[list[int]] | None:
    """What identifies the state of Chroma's SQLite database in ``store_dir`` (its file and
    write-ahead log: device, inode, size, modification time in ns; zeros for a file that
    is not there); None when it cannot be read. Any write to it changes this."""
    state = []
    for name in ("chroma.sqlite3", "chroma.sqlite3-wal"):
        try:
            found = os.stat(store_dir / name)
        except FileNotFoundError:
            state.append([0, 0, 0, 0])
            continue
        except OSError:
            return None
        state.append([found.st_dev, found.st_ino, found.st_size, found.st_mtime_ns])
    return state if state[0][1] else None


class StoreOpening:
    """How ``MemoryStore`` opens, closes, goes read-only and keeps its reserve of space."""

    def read_only_error(self, why: str = "") -> MemcliError:
        """The error of a write to this store when it cannot be written (``why``: the path
        and the reason; default: why it was opened read-only): ReadOnlyStoreError, or
        DiskFullError for a store opened from its copy because its device is full
        (``full_reason``)."""
        if self.full_reason and not why:
            return DiskFullError(
                f"no space left on {device_of(self.paths.data_dir)} ({self.full_reason}), not even to open the store for a "
                "write or a delete; nothing was written. Read commands work; free some space on the device to write or delete"
            )
        return ReadOnlyStoreError(
            f"the memory store at {self.paths.data_dir} is read-only ({why or self.read_only_reason}); nothing was written. "
            "Read commands work; make the folder writable to write"
        )

    @property
    def read_only(self) -> bool:
        """Whether the store was opened read-only (its folder cannot be written: a read-only
        mount, ``chattr +i``, no write permission). Reads work, from memcli's copy of the
        memories (``_ReadOnlyChroma``); every write raises ReadOnlyStoreError, so a caller
        with an optional write (recall's reinforcement) checks this first. A store whose
        device is too full even to open Chroma is read so too (``full_reason``), its writes
        raising DiskFullError."""
        return bool(self.read_only_reason or self.full_reason)

    def open_resident(self) -> None:
        """Take the store for the life of this process: the file lock, the Chroma client
        and the sidecar stay open until ``close()``, and every ``transaction()`` after this
        is a re-entrant thread lock. Raises StoreLockedError as ``transaction()`` does."""
        with self._threads:
            if not self.resident:
                self._open()
                self.resident = True

    @property
    def chroma_deferred(self) -> bool:
        """Whether this resident store opened with a stand-in for Chroma that opens Chroma at
        its first write (``_open_deferrable``): ``open_chroma`` would open it."""
        return bool(self._deferred)

    def open_chroma(self) -> None:
        """Open Chroma now in a resident store opened with a stand-in (``_open_deferrable``),
        so that the first write after it does not pay the opening (a second or more: the
        service's warm-up calls this once it is quiet); nothing for a store already open.
        chromadb is imported first, without the store's lock (a request meanwhile does not
        wait for the import). Raises what opening Chroma raises, through
        ``transaction()``'s storage-fault errors."""
        if self._deferred:
            _import_chroma()
        with self.transaction():
            if self._deferred:
                self._open_deferred("collection")

    def close(self) -> None:
        """Give the store up (a resident store at the end of the service)."""
        with self._threads:
            if self.resident:
                self.resident = False
                self._close(record=True)

    def _open(self) -> None:
        """Take the file lock and open Chroma and the sidecar; every folder of the store is
        made 0700 and every file 0600 (those an older memcli left readable are tightened,
        and ``notice`` says so once). A store whose folder cannot be written is opened
        read-only instead (``read_only``)."""
        # heavy: needed only to take a lock
        import filelock

        lock = filelock.FileLock(str(self.paths.lock_file), timeout=self.lock_timeout, mode=PRIVATE_FILE)
        # An older memcli's 0755 folder and 0644 lock file, tightened (and counted in the notice
        # below) before the lock is taken: filelock 3.x makes the lock file 0600 as it takes
        # it, 4.x only when it creates it, and the notice must not depend on which is installed.
        loose = sum(private(path) for path in (self.paths.data_dir, self.paths.lock_file))
        if not (self.backend.local_files() and (self.paths.data_dir / CLOSED_FILE).exists()):
            _import_chroma()  # 1 s, several on a busy machine, that no other memcli should wait on
        try:
            private_dir(self.paths.data_dir)
            lock.acquire()
        except filelock.Timeout:
            raise StoreHeldError(service_pid(self.paths), self.lock_timeout, str(self.paths.lock_file)) from None
        except OSError as exc:
            if exc.errno not in READ_ONLY_ERRNOS:
                raise
            self._open_read_only(f"{exc.filename or self.paths.data_dir}: {exc.strerror}")
            return
        self._lock = lock
        self.read_only_reason = ""
        try:
            tightened = [self.paths.data_dir] * loose + private_tree(self.paths.data_dir)
        except BaseException:
            self._close()
            raise
        if not self._open_files():
            return
        if tightened and not self._tightened:
            self._tightened = True
            self.notice(
                f"made {len(tightened)} files and folders under {self.paths.data_dir} private (0600/0700): "
                "an older memcli left them readable by other users"
            )

    def _open_files(self) -> bool:
        """Open Chroma and the sidecar, the file lock held; on a device too full to open
        them, even with ``OPEN_ROOM`` of the reserve given back, open from the copy instead
        (``full_reason``). Returns whether Chroma was opened."""
        self.full_reason = ""
        if self._open_deferrable():
            self.keep_reserve()
            return True
        for attempt in (1, 2):
            try:
                self.backend.prepare()
                self._collection = self._open_collection()
                self._sidecar = Sidecar(self.paths.database)
                self.backend.settle()
                break
            except BaseException as exc:
                fault = self.fault(exc) if isinstance(exc, Exception) else None
                self._drop_opened()
                if isinstance(fault, DiskFullError):
                    # Chroma and SQLite open with a journal: a device without a byte free refuses them.
                    if attempt == 1 and self._release_reserve(OPEN_ROOM):
                        continue
                    self._open_read_only(f"{self.free_bytes() or 0} bytes free", full=True)
                    return False
                self._close()
                if self.backend.local_files() and isinstance(fault, ReadOnlyStoreError):
                    # The folder takes the lock but a file of the store refuses writes (chattr +i on chroma.sqlite3).
                    self._open_read_only(f"{self.paths.store_dir}: {exc}")
                    return False
                raise
        self.keep_reserve()
        return True

    def _drop_opened(self) -> None:
        """Close what a failed opening opened (Chroma caches the client it could not open:
        dropped too), keeping the file lock."""
        deferred, self._deferred = self._deferred, False
        self._collection = self._staging = None
        if self._sidecar is not None:
            self._sidecar.close()
            self._sidecar = None
        if deferred:
            self._client = None
        elif self._client is not None or self.backend.local_files():
            forget_chroma_system(self._client, self.backend)
            self._client = None

    def _open_read_only(self, why: str, full: bool = False) -> None:
        """Open the store without writing to it: Chroma cannot open a folder it cannot
        write (it writes chroma.sqlite3 on open: "attempt to write a readonly database"),
        so the reads are served from the whole copy of every memory that the recall index
        keeps in the sidecar, read into memory (``Sidecar.snapshot``), and every write
        raises ReadOnlyStoreError (``_ReadOnlyChroma``). No file lock: none can be taken,
        and no memcli can write this store either.

        ``full``: the device is too full for Chroma to open (``why``: what is free); the
        file lock is kept, and writes and deletes raise DiskFullError (``full_reason``)."""
        if full:
            self.full_reason = why
        else:
            self.read_only_reason = why
        self._sidecar = Sidecar.snapshot(self.paths.database)
        # With a server, its collection's metadata (the embedder) is not read: the copy is read as it is.
        metadata = self.backend.read_only_metadata()
        self._client = self._collection = _ReadOnlyChroma(self._sidecar, metadata, self.read_only_error)

    def _tell_read_only(self) -> None:
        """Say once, after the first transaction on a read-only store that did not fail, that
        the store is read-only (a write command's ReadOnlyStoreError says it alone, in its one line)."""
        if not self.read_only or self._told_read_only or self._sidecar is None:
            return
        self._told_read_only = True
        unclean = self._sidecar.index.unclean()
        what = (
            f"no space left on {device_of(self.paths.data_dir)} ({self.full_reason}), not even to open the store"
            if self.full_reason
            else f"read-only store ({self.read_only_reason})"
        )
        self.notice(
            f"{what}: reading memcli's copy of the memories in {self.paths.database.name}; "
            "writes are refused"
            + (
                f"; the copy of {', '.join(unclean)} was left incomplete by an interrupted write and cannot be repaired "
                "in a read-only store: some of their memories may be missing"
                if unclean
                else ""
            )
        )

    def free_bytes(self) -> int | None:
        """Bytes free for this user on the device of the data folder; None when it cannot be asked."""
        return space.free_bytes(self.paths.data_dir)

    def _room_to_reopen(self) -> bool:
        """Whether a store opened from its copy for want of room (``full_reason``) now has
        room to open Chroma (``OPEN_ROOM`` and ``ROOM_FLOOR``)."""
        return (self.free_bytes() or 0) >= OPEN_ROOM + ROOM_FLOOR

    def _reserve_bytes(self) -> int:
        return space.reserve_bytes(self.paths.data_dir)

    def keep_reserve(self) -> bool:
        """Take the store's reserve of space again where it was given back (``memcli.store.space.keep_reserve``);
        returns whether it is whole. Nothing in a read-only store."""
        return not self.read_only and space.keep_reserve(self.paths.data_dir)

    def _release_reserve(self, amount: int | None = None) -> int:
        """Give ``amount`` bytes of the reserve (all of it when None) back to the device,
        with a notice when it is all (a delete's; the little an opening takes is only
        logged); returns how many were given back."""
        given = space.release_reserve(self.paths.data_dir, amount)
        if given and amount is not None:
            log.info("gave %d bytes of the store's reserve of space back to open the store", given)
        elif given:
            self.notice(
                f"used {given / 2**20:.2f} MiB of the store's reserve of space: {device_of(self.paths.data_dir)} is full"
            )
        return given

    def room_error(self, needed: int = 0, stored: str = "nothing was written") -> DiskFullError | None:
        """The DiskFullError of a write of about ``needed`` bytes that the device cannot
        take while keeping the store's reserve whole (``memcli.store.space.shortage``); None when
        it fits. ``stored``: what became of the write, as the message says it."""
        if self.full_reason:
            return DiskFullError(self.read_only_error().message)
        if self.read_only:
            return None
        why = space.shortage(self.paths.data_dir, needed, stored)
        return DiskFullError(why) if why else None

    def space_problem(self) -> str:
        """Why writes are refused for space right now, in one line (the device is full and
        the store's reserve is in use or writes would not fit; the store could be opened
        only from its copy); empty when writes fit. What the service says when it starts
        and in its status."""
        if self.read_only_reason:
            return ""
        refused = self.room_error()
        if refused is None:
            return ""
        return refused.message.replace("; nothing was written. ", ": writes are refused. ")

    @property
    def location(self) -> str:
        """Where the memories are, as messages name it: the server or the folder."""
        return str(self.backend)

    def _names(self, server: Server | None | bool = True) -> tuple[str, str]:
        """The names of the store's collection and of a reindex's staging one, where the
        store is (``server`` True) or on ``server`` (the folder when None): ``Backend.names``."""
        backend = self.backend if server is True else backend_of(self.paths, server)
        return backend.names(self.paths.data_dir)

    def _new_client(self, server: Server | None) -> Any:
        """A Chroma client on ``server``, or on the folder when None (``Backend.client``)."""
        return backend_of(self.paths, server).client()

    def _open_collection(self) -> Any:
        self._client = self.backend.client()
        name, staging_name = self._names()
        names = {c.name for c in self._client.list_collections()}
        if staging_name in names:
            staging = self._client.get_collection(staging_name, embedding_function=None)
            metadata = staging.metadata or {}
            if metadata.get("complete") and name not in names:
                # A reindex stopped between dropping the old collection and renaming the new one.
                self._swap_in(staging, str(metadata.get("embedder", ""))[len(REINDEXING) :])
                names.add(name)
        collection = self._client.get_or_create_collection(
            name=name,
            metadata={"schema_version": SCHEMA_VERSION},
            configuration={"hnsw": HNSW_CONFIGURATION if self.backend.local_files() else SERVER_HNSW_CONFIGURATION},
            embedding_function=None,
        )
        version = int((collection.metadata or {}).get("schema_version", SCHEMA_VERSION))
        if version > SCHEMA_VERSION:
            raise MemcliError(
                f"the store at {self.location} has schema version {version}; "
                f"this memcli reads version {SCHEMA_VERSION}: upgrade memcli"
            )
        # A folder made by an older memcli: its index saved from now on (a server's is the server's to tune).
        if self.backend.local_files() and set_sync_threshold(collection):
            log.info("%s: Chroma saves its HNSW index every %d writes from now on", self.location, SYNC_THRESHOLD)
        return collection

    def _close(self, record: bool = False) -> None:
        """Give up what ``_open`` took; ``record``: write what Chroma's database is as it
        closes (``CLOSED_FILE``), as a service does at its end. A store that opened Chroma
        records it too, whatever ``record`` says, so that the next opening (of this process
        or another) need not open Chroma to read. The metadata Chroma has behind the recall
        index's copy (``flush_behind``) is written now unless Chroma was never opened: it is
        kept in the sidecar until the next opening of Chroma writes it (``_open_deferred``
        writes it before anything else touches Chroma; a read of Chroma's metadata and a
        write flush it first too), so that a recall that reinforced what it found does not
        import chromadb at its close (1.2-1.7 CPU-s)."""
        if not self._deferred:
            try:
                self._flush_behind()
            except Exception as exc:  # the copy holds it: the next flush writes it
                log.warning("the metadata of reinforced memories stays behind in Chroma for now: %s", exc)
        opened = self._client is not None and not (self.read_only or self._deferred)
        closing = self._closing_record() if record or opened else None
        try:
            try:
                self._collection = None
                self._staging = None
                if self._sidecar is not None:
                    self._sidecar.close()
                    self._sidecar = None
                if self._client is not None and not self.read_only:
                    # What Chroma wrote in this transaction (a new HNSW segment file) is made 0600
                    # explicitly, beside the umask and the store folder's 0700. A Chroma never
                    # opened here has its unused places zeroed all the same: a memcli killed after
                    # its Chroma wrote them and before it zeroed them left the heap's bytes there,
                    # and the record this opening trusted sees only Chroma's SQLite files.
                    self.backend.settle(opened=not self._deferred)
            finally:
                # Whatever failed above (a Ctrl-C in the settle), Chroma's client is dropped
                # before the lock is given up: a client left cached would serve this process's
                # next transaction what Chroma held before other processes' writes.
                client, self._client = self._client, None
                self._deferred = False
                if opened:
                    # Chroma's cached system dropped so the next transaction sees other processes' writes.
                    forget_chroma_system(client, self.backend)
            if closing is not None:
                self._record_closed(*closing)
        finally:
            # Whatever failed above, the lock is given up: the store stays usable by the
            # next transaction, of this process or another.
            if self._lock is not None:
                self._lock.release()
                self._lock = None

    def _open_deferrable(self) -> bool:
        """With the file lock held, open the sidecar alone and stand in for Chroma
        (``_DeferredChroma``) when the store is a folder whose database is as a store left
        it at its last close (``CLOSED_FILE``), of this memcli's schema version, the folder
        and the database can be written, and the device has room to open Chroma later;
        returns whether it did.
        Anything else (no record, another state, a read-only or full device) opens
        Chroma at once, as before."""
        if not self.backend.local_files() or (self.free_bytes() or 0) < OPEN_ROOM + ROOM_FLOOR:
            return False
        store_dir = self.paths.store_dir
        try:
            record = json.loads((self.paths.data_dir / CLOSED_FILE).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return False
        if (
            not isinstance(record, dict)
            or record.get("version") != CLOSED_VERSION
            or record.get("state") != _database_state(store_dir)
            or not isinstance(record.get("count"), int)
            or not isinstance(record.get("metadata"), dict)
            or record["metadata"].get("schema_version", SCHEMA_VERSION) != SCHEMA_VERSION  # refused by the opening
            or not all(
                os.access(path, os.W_OK) for path in (self.paths.data_dir, store_dir, store_dir / "chroma.sqlite3")
            )
        ):
            return False
        self._sidecar = Sidecar(self.paths.database)
        self._deferred = True
        self._collection = _DeferredChroma(self, "collection", record["count"], record["metadata"])
        self._client = _DeferredChroma(self, "client", record["count"], record["metadata"])
        return True

    def _open_deferred(self, role: str) -> Any:
        """Open Chroma for a store opened with a stand-in (``_open_deferrable``), the first
        time something needs more than its count or metadata, and write to it the metadata
        of reinforcements waiting in the sidecar (``flush_behind``) before anything else
        does; returns the real client (``role`` "client") or collection. Raises what
        opening Chroma raises (the transaction turns a storage fault into its
        MemcliError)."""
        with self._threads:
            if self._deferred:
                self._open_real_chroma()
                # Before anything else touches Chroma: a write of a memory whose reinforcement
                # waits, killed after Chroma took it, would otherwise have the waiting (older)
                # metadata written over it at the next flush.
                self._flush_behind()
            return self._client if role == "client" else self._col

    def _open_real_chroma(self) -> None:
        """Open Chroma in place of the stand-in of a store opened without it
        (``_open_deferrable``), and settle what the opening wrote; the metadata waiting in
        the sidecar is the caller's to write next, before anything else touches Chroma
        (``_open_deferred``, ``_flush_behind``). Raises what opening Chroma raises."""
        if self._sidecar is None:
            raise RuntimeError("MemoryStore used outside transaction()")
        self.backend.prepare()
        self._client = None
        try:
            self._collection = self._open_collection()
        except BaseException:
            # Chroma caches the client it could not open: dropped, as ``_drop_opened`` does.
            forget_chroma_system(self._client, self.backend)
            raise
        self._deferred = False
        self.backend.settle()

    def _closing_record(self) -> tuple[int, dict[str, Any]] | None:
        """Chroma's count and metadata as the store closes, to record once Chroma is
        closed (``_record_closed``); None for a server, a read-only store, or when they
        cannot be read."""
        if not self.backend.local_files() or self.read_only or self._collection is None:
            return None
        try:
            return int(self._collection.count()), dict(self._collection.metadata or {})
        except Exception as exc:  # only the next opening's speed depends on it
            log.info("Chroma's state at the close was not recorded: %s", exc)
            return None

    def _record_closed(self, count: int, metadata: dict[str, Any]) -> None:
        """Write ``CLOSED_FILE``: Chroma's database state (``_database_state``) as it is now
        that Chroma is closed, with its ``count`` and ``metadata``. A record that cannot be
        written is left out (it only saves the next opening time)."""
        state = _database_state(self.paths.store_dir)
        if state is None:
            return
        record = {"version": CLOSED_VERSION, "state": state, "count": count, "metadata": metadata}
        try:
            write_private(self.paths.data_dir / CLOSED_FILE, json.dumps(record))
        except OSError as exc:
            log.info("Chroma's state at the close was not recorded: %s", exc)

    @property
    def _col(self) -> Any:
        if self._collection is None:
            raise RuntimeError("MemoryStore used outside transaction()")
        return self._collection

    def _drop_client(self) -> None:
        """Close the Chroma client (the store lock and the sidecar stay held)."""
        client, self._client = self._client, None
        self._collection = None
        self._deferred = False
        forget_chroma_system(client, self.backend)

    def discard(self) -> None:
        """Delete this home's collections from the server (a temporary store of an
        evaluation, when ``store_url`` is set); nothing in the folder mode, whose files go
        with their folder."""
        if self.backend.local_files():
            return
        with self.transaction():
            for name in self._names():
                with contextlib.suppress(Exception):  # the staging one is usually absent
                    self._client.delete_collection(name)
            self._collection = None
