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
import logging
import os
import secrets
import sqlite3
import subprocess
import sys
import threading
import urllib.parse
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from memcli.config import Paths, Settings
from memcli.errors import (
    DISK_FULL_ERRNOS,
    READ_ONLY_ERRNOS,
    DiskFullError,
    EmbedderChangedError,
    MemcliError,
    NotFoundError,
    ReadOnlyStoreError,
    StoreHeldError,
    StoreServerError,
)
from memcli.memory import Memory
from memcli.models.embedding import same_embedder
from memcli.paths import PRIVATE_FILE, device_of, private, private_dir, private_tree, write_private
from memcli.processes import service_pid
from memcli.store import snapshot, space
from memcli.store.hnsw import zero_unused_slots_under
from memcli.store.index import UserIndex
from memcli.store.recall_index import INDEX_VERSION
from memcli.store.sidecar import Sidecar
from memcli.store.space import DELETE_BYTES, OPEN_ROOM, RESERVE, ROOM_FLOOR, ROOM_PER_MEMORY, room_needed

Embed = Callable[[list[str]], list[list[float]]]

COLLECTION = "memories"
REINDEXING = "reindexing:"
"""Prefix of ``embedder_record`` while a reindex runs: a store left so was interrupted."""
STAGING = "memories-reindex"
"""The collection a reindex fills before it takes the place of ``COLLECTION``."""
SCHEMA_VERSION = 1
_GET_PAGE = 5000
BEHIND_BATCH = 256
"""Reinforced memories whose Chroma metadata may wait (``MemoryStore.reinforce``) before
they are written to Chroma in one update."""
MIN_PREFIX = 4
"""The fewest characters of an id that find a memory by prefix (ids are 16 hex digits):
shorter prefixes would match too many memories to be worth a scan."""

log = logging.getLogger(__name__)

_FULL_SIGNS = ("database or disk is full", "No space left on device", "Disk quota exceeded", "File too large")
"""How SQLite and Chroma (whose Rust core reports an OS error as text) say that the device
is full (``DISK_FULL_ERRNOS``)."""
WINDOWS_SKIPPED = "window vectors not stored (recall uses each memory's own vector in their place)"
"""The notice of window vectors that could not be stored (``optional_write``)."""
_NO_ROOM_SIGN = "Failed to apply logs to the metadata segment"
"""How Chroma says that a delete could not be applied; on a device without room (``fault``)
that is a full disk (measured, ``RESERVE``)."""
_READ_ONLY_SIGNS = ("attempt to write a readonly database", "Read-only file system")
"""How they say that a write was refused (``READ_ONLY_ERRNOS``)."""


def short_prefix(memory_id: str) -> str:
    """What a not-found message adds for an id shorter than ``MIN_PREFIX``: that prefixes
    need ``MIN_PREFIX`` characters (else nothing)."""
    return f" (a prefix needs at least {MIN_PREFIX} characters)" if len(memory_id) < MIN_PREFIX else ""


def _chroma_metadata(store_dir: os.PathLike[str]) -> dict[str, Any]:
    """The metadata of the ``COLLECTION`` collection (its schema version and embedder),
    read from Chroma's SQLite file without writing (``mode=ro``): for a read-only store,
    which Chroma cannot open. Empty when it cannot be read."""

    uri = f"file:{urllib.parse.quote(os.path.join(os.fspath(store_dir), 'chroma.sqlite3'))}?mode=ro"
    try:
        db = sqlite3.connect(uri, uri=True)
        try:
            rows = db.execute(
                "SELECT key, str_value, int_value, float_value, bool_value FROM collection_metadata"
                " WHERE collection_id = (SELECT id FROM collections WHERE name = ?)",
                (COLLECTION,),
            ).fetchall()
        finally:
            db.close()
    except sqlite3.Error:
        return {}
    return {key: next((v for v in values if v is not None), None) for key, *values in rows}


_OPERATORS: dict[str, Callable[[Any, Any], bool]] = {
    "$eq": lambda a, b: a == b,
    "$ne": lambda a, b: a != b,
    "$gt": lambda a, b: a is not None and a > b,
    "$gte": lambda a, b: a is not None and a >= b,
    "$lt": lambda a, b: a is not None and a < b,
    "$lte": lambda a, b: a is not None and a <= b,
    "$in": lambda a, b: a in b,
    "$nin": lambda a, b: a not in b,
}


def _matches(metadata: Mapping[str, Any], where: Mapping[str, Any] | None) -> bool:
    """Whether Chroma metadata passes a Chroma ``where`` filter ($and, $or, and the
    comparison operators). Raises MemcliError for a filter it cannot read."""
    for key, condition in (where or {}).items():
        if key == "$and":
            ok = all(_matches(metadata, c) for c in condition)
        elif key == "$or":
            ok = any(_matches(metadata, c) for c in condition)
        elif isinstance(condition, dict):
            ok = True
            for operator, value in condition.items():
                if operator not in _OPERATORS:
                    raise MemcliError(f"a read-only store cannot filter with {operator}")
                ok = ok and _OPERATORS[operator](metadata.get(key), value)
        else:
            ok = metadata.get(key) == condition
        if not ok:
            return False
    return True


class _ReadOnlyChroma:
    """Stands in for the Chroma client and collection of a store opened read-only
    (``MemoryStore._open_read_only``): ``get`` and ``count`` answer from the copy of every
    memory that the recall index keeps (``Sidecar.copies``), ``metadata`` from Chroma's
    file read without writing, and anything else (add, upsert, update, delete, modify,
    create_collection...) raises ReadOnlyStoreError (DiskFullError for a store whose device
    is too full to open Chroma) before a byte is written."""

    def __init__(self, sidecar: Sidecar, metadata: dict[str, Any], refuse: Callable[[], MemcliError]) -> None:
        self._sidecar = sidecar
        self.metadata = metadata
        self._refuse = refuse

    def count(self) -> int:
        """How many memories the copy holds."""
        return self._sidecar.index.count()

    def get_max_batch_size(self) -> int:
        """As Chroma's client: the most records one call takes."""
        return _GET_PAGE

    def list_collections(self) -> list[Any]:
        """No staging collection (a reindex cannot run on a read-only store)."""
        return []

    def get(
        self,
        ids: Sequence[str] | None = None,
        where: dict[str, Any] | None = None,
        include: Sequence[str] = (),
        limit: int | None = None,
        offset: int | None = None,
    ) -> dict[str, Any]:
        """As ``Collection.get``: the memories of ``ids`` (all when None) that pass ``where``,
        ``limit`` from ``offset``, with the documents, metadatas and embeddings asked for."""
        rows = []
        for memory_id, text, record, vector in self._sidecar.copies(None if ids is None else list(ids)):
            metadata = Memory.from_record(memory_id, text, record).to_metadata()
            if _matches(metadata, where):
                rows.append((memory_id, text, metadata, vector))
        start = offset or 0
        rows = rows[start : None if limit is None else start + limit]
        return {
            "ids": [r[0] for r in rows],
            "documents": [r[1] for r in rows] if "documents" in include else None,
            "metadatas": [r[2] for r in rows] if "metadatas" in include else None,
            "embeddings": [np.frombuffer(r[3], dtype=np.float32) for r in rows] if "embeddings" in include else None,
        }

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        raise self._refuse()


def _where(**conditions: Any) -> dict[str, Any] | None:
    """A Chroma ``where`` filter from equality / operator conditions (None values skipped)."""
    clauses = [{k: v} for k, v in conditions.items() if v is not None]
    if not clauses:
        return None
    return clauses[0] if len(clauses) == 1 else {"$and": clauses}


def _import_chroma() -> None:
    """Import chromadb (with its telemetry off); the store's opening calls it before it
    takes the file lock, so that the import does not hold up other memcli processes."""
    os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
    import chromadb  # noqa: F401

    # The API a PersistentClient loads on first use (chromadb 1.x's default
    # chroma_api_impl): its import (the Rust bindings) is most of an opening's second.
    with contextlib.suppress(ImportError):
        import chromadb.api.rust  # noqa: F401


HOME_ID_FILE = "store-id"
"""The file in the data folder naming this memcli home's collections on a Chroma server."""


@dataclass(frozen=True)
class Server:
    """Where a Chroma server keeps the memories (settings ``store_url``, ``store_tenant``,
    ``store_database``, ``store_token_env``, ``store_timeout``). The token is read from the
    environment variable ``token_env`` names when a client is made, never kept here."""

    url: str
    tenant: str = "default_tenant"
    database: str = "default_database"
    token_env: str = ""
    timeout: float = 30.0

    @classmethod
    def of(cls, settings: Settings) -> Server | None:
        """The server of ``settings``; None when ``store_url`` is empty (the folder)."""
        if not settings.store_url:
            return None
        return cls(
            settings.store_url,
            settings.store_tenant,
            settings.store_database,
            settings.store_token_env,
            settings.store_timeout,
        )

    def __str__(self) -> str:
        return f"{self.url.rstrip('/')} (tenant {self.tenant}, database {self.database})"

    def _parts(self) -> tuple[str, int, bool]:
        """Host, port and TLS of ``url`` (when the URL names no port: Chroma's 8000 over http, 443 over https)."""
        found = urllib.parse.urlsplit(self.url if "://" in self.url else f"http://{self.url}")
        if found.scheme not in ("http", "https") or not found.hostname:
            raise StoreServerError(f"store_url {self.url!r} is not an http(s) URL such as http://127.0.0.1:8000")
        ssl = found.scheme == "https"
        return found.hostname, found.port or (443 if ssl else 8000), ssl

    def _headers(self) -> dict[str, str]:
        if not self.token_env:
            return {}
        token = os.environ.get(self.token_env, "")
        if not token:
            raise StoreServerError(
                f"store_token_env names {self.token_env}, but the memcli service's environment has no such variable "
                "(set it where memcli starts, and run memcli service stop to restart the service)"
            )
        return {"Authorization": f"Bearer {token}"}

    def error(self, exc: BaseException) -> StoreServerError | None:
        """The StoreServerError of a failed request to the server (``exc``: an httpx or a
        Chroma error), or None when ``exc`` is none of those."""
        # heavy: chromadb takes about a second to import
        import httpx
        from chromadb import errors as chroma_errors

        text = str(exc)
        if isinstance(exc, httpx.TimeoutException):
            why = f"did not answer within {self.timeout:g} s (store_timeout)"
        elif isinstance(exc, (httpx.TransportError, ConnectionError)) or "Could not connect to a Chroma server" in text:
            why = "cannot be reached (is it running?)"
        elif (
            isinstance(exc, (chroma_errors.ChromaAuthError, chroma_errors.AuthorizationError))
            or "Unauthorized" in text
            or "Forbidden" in text
        ):
            why = "refused the token (401/403): check the variable store_token_env names"
        elif isinstance(exc, (chroma_errors.VersionMismatchError, chroma_errors.InvalidHTTPVersion)):
            why = f"speaks another version of Chroma's API than this memcli's chromadb: {text}"
        else:
            return None
        return StoreServerError(
            f"the Chroma server at {self} {why}; nothing was half written, run the command again once it is back"
        )

    def check(self) -> None:
        """Ask the server, with our own short request, whether it can be used before a
        client is made (``chromadb.HttpClient`` says only "could not connect" for all of
        these): its version (API v2, the major version of this chromadb) and that the token
        is taken. Raises StoreServerError."""
        # heavy: needed only with a Chroma server
        import chromadb
        import httpx

        host, port, ssl = self._parts()
        base = f"{'https' if ssl else 'http'}://{host}:{port}/api/v2"
        try:
            with httpx.Client(timeout=self.timeout, headers=self._headers()) as client:
                version = client.get(f"{base}/version")
                if version.status_code in (401, 403):
                    raise StoreServerError(
                        f"the Chroma server at {self} refused the token ({version.status_code}): check the variable store_token_env names"
                    )
                if version.status_code == 404:
                    raise StoreServerError(
                        f"{self.url} does not serve Chroma's API v2: a Chroma server older than 1.0, or not Chroma (chromadb {chromadb.__version__} here)"
                    )
                version.raise_for_status()
                theirs = str(version.json())
                if theirs.split(".")[0] != chromadb.__version__.split(".")[0]:
                    raise StoreServerError(
                        f"the Chroma server at {self} is version {theirs}; this memcli's chromadb is {chromadb.__version__} (another major version)"
                    )
                identity = client.get(f"{base}/auth/identity")
                if identity.status_code in (401, 403):
                    raise StoreServerError(
                        f"the Chroma server at {self} refused the token ({identity.status_code}): check the variable store_token_env names"
                    )
        except StoreServerError:
            raise
        except (httpx.HTTPError, ValueError) as exc:
            raise self.error(exc) or StoreServerError(
                f"the Chroma server at {self} answered what memcli cannot read: {exc}"
            ) from exc

    def client(self) -> Any:
        """A ``chromadb.HttpClient`` on the server, its tenant and database (the database is
        made when missing), each request limited to ``timeout`` seconds. Raises StoreServerError."""
        _import_chroma()
        # heavy: chromadb takes about a second to import
        import chromadb
        import httpx
        from chromadb.config import Settings as ChromaSettings

        self.check()
        host, port, ssl = self._parts()
        headers = self._headers()
        settings = ChromaSettings(anonymized_telemetry=False)
        try:
            admin = chromadb.AdminClient(
                settings=ChromaSettings(
                    anonymized_telemetry=False,
                    chroma_api_impl="chromadb.api.fastapi.FastAPI",
                    chroma_server_host=host,
                    chroma_server_http_port=port,
                    chroma_server_ssl_enabled=ssl,
                    chroma_server_headers=dict(headers),
                )
            )
            names = {d["name"] for d in admin.list_databases(tenant=self.tenant)}
            if self.database not in names:
                admin.create_database(self.database, tenant=self.tenant)
            client = chromadb.HttpClient(
                host=host,
                port=port,
                ssl=ssl,
                headers=dict(headers),
                settings=settings,
                tenant=self.tenant,
                database=self.database,
            )
        except StoreServerError:
            raise
        except Exception as exc:
            cause = exc.__context__ if isinstance(exc, ValueError) and exc.__context__ is not None else exc
            found = self.error(cause) or self.error(exc)
            if found is None:
                raise
            raise found from exc
        # chromadb's HTTP session waits for ever (httpx timeout None); a store that hangs
        # would hang every memcli command behind it.
        client._server._session.timeout = httpx.Timeout(self.timeout)
        return client


class MemoryStore:
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
        the thread lock) for the duration of the block."""
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
        if self.server is not None and (found := self.server.error(exc)) is not None:
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

    def close(self) -> None:
        """Give the store up (a resident store at the end of the service)."""
        with self._threads:
            if self.resident:
                self.resident = False
                self._close()

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
        for attempt in (1, 2):
            try:
                if self.server is None:
                    private_dir(
                        self.paths.store_dir
                    )  # before Chroma makes it: what it writes inside is out of others' reach
                self._collection = self._open_collection()
                self._sidecar = Sidecar(self.paths.database)
                if self.server is None:
                    private_tree(self.paths.store_dir)  # what Chroma has just made (chroma.sqlite3 as the umask says)
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
                if self.server is None and isinstance(fault, ReadOnlyStoreError):
                    # The folder takes the lock but a file of the store refuses writes (chattr +i on chroma.sqlite3).
                    self._open_read_only(f"{self.paths.store_dir}: {exc}")
                    return False
                raise
        self.keep_reserve()
        return True

    def _drop_opened(self) -> None:
        """Close what a failed opening opened (Chroma caches the client it could not open:
        dropped too), keeping the file lock."""
        self._collection = self._staging = None
        if self._sidecar is not None:
            self._sidecar.close()
            self._sidecar = None
        if self._client is not None or self.server is None:
            # heavy: chromadb takes about a second to import
            from chromadb.api.shared_system_client import SharedSystemClient

            SharedSystemClient.clear_system_cache()
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
        metadata = _chroma_metadata(self.paths.store_dir) if self.server is None else {}
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

    # room on the device -----------------------------------------------------------

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
        return str(self.server) if self.server is not None else str(self.paths.store_dir)

    def _names(self, server: Server | None | bool = True) -> tuple[str, str]:
        """The names of the store's collection and of a reindex's staging one (on
        ``server``; True: where the store is): ``COLLECTION``
        and ``STAGING`` in the folder; on a server, which many memcli homes may share,
        ``memcli-<id>`` and ``memcli-<id>-reindex``, the id made once a home (random, in
        ``HOME_ID_FILE`` in the data folder, which a migration keeps)."""
        if (self.server if server is True else server) is None:
            return COLLECTION, STAGING
        path = self.paths.data_dir / HOME_ID_FILE
        try:
            home = path.read_text(encoding="utf-8").strip()
        except FileNotFoundError:
            home = ""
        if not home:
            home = secrets.token_hex(8)
            write_private(path, home + "\n")
        return f"memcli-{home}", f"memcli-{home}-reindex"

    def _new_client(self, server: Server | None) -> Any:
        """A Chroma client on ``server``, or on the folder when None."""
        if server is not None:
            return server.client()
        _import_chroma()
        # heavy: chromadb takes about a second to import
        import chromadb
        from chromadb.config import Settings as ChromaSettings

        return chromadb.PersistentClient(
            path=str(self.paths.store_dir),
            settings=ChromaSettings(anonymized_telemetry=False, allow_reset=False),
        )

    def _open_collection(self) -> Any:
        self._client = self._new_client(self.server)
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
            configuration={"hnsw": {"space": "cosine"}},
            embedding_function=None,
        )
        version = int((collection.metadata or {}).get("schema_version", SCHEMA_VERSION))
        if version > SCHEMA_VERSION:
            raise MemcliError(
                f"the store at {self.location} has schema version {version}; "
                f"this memcli reads version {SCHEMA_VERSION}: upgrade memcli"
            )
        return collection

    def _close(self) -> None:
        try:
            self._flush_behind()
        except Exception as exc:  # the copy holds it: the next flush writes it
            log.warning("the metadata of reinforced memories stays behind in Chroma for now: %s", exc)
        self._collection = None
        self._staging = None
        if self._sidecar is not None:
            self._sidecar.close()
            self._sidecar = None
        if self.read_only:
            self._client = None
        if self._client is not None:
            # What Chroma wrote in this transaction (a new HNSW segment file) is made 0600
            # explicitly, beside the umask and the store folder's 0700.
            if self.server is None:
                private_tree(self.paths.store_dir)
            # heavy: chromadb takes about a second to import
            from chromadb.api.shared_system_client import SharedSystemClient

            # Drop the per-process cache so the next transaction sees other processes' writes.
            SharedSystemClient.clear_system_cache()
            self._client = None
        if self._lock is not None:
            self._lock.release()
            self._lock = None

    @property
    def _col(self) -> Any:
        if self._collection is None:
            raise RuntimeError("MemoryStore used outside transaction()")
        return self._collection

    @property
    def sidecar(self) -> Sidecar:
        """The open SQLite sidecar (history, consolidation progress); inside transaction() only."""
        if self._sidecar is None:
            raise RuntimeError("MemoryStore used outside transaction()")
        return self._sidecar

    # writes ---------------------------------------------------------------

    def add(
        self,
        memories: Sequence[Memory],
        embeddings: Sequence[Sequence[float]],
        windows: Mapping[str, Sequence[float]] | None = None,
        embedder: str | None = None,
    ) -> None:
        """Add memories with their embeddings (one vector per memory, same order).
        ``windows``: window text → vector for the recall index, when computed ahead.
        ``embedder``: the identity of the embedder that made them (``require_embedder``)."""
        self._write("add", memories, embeddings, windows, embedder)

    def upsert(
        self,
        memories: Sequence[Memory],
        embeddings: Sequence[Sequence[float]],
        windows: Mapping[str, Sequence[float]] | None = None,
        embedder: str | None = None,
    ) -> None:
        """Add memories, or replace the text, embedding and metadata of those whose id is
        already stored (a regenerated summary keeps its id). ``embedder`` as for ``add``."""
        self._write("upsert", memories, embeddings, windows, embedder)

    def _write(
        self,
        how: str,
        memories: Sequence[Memory],
        embeddings: Sequence[Sequence[float]],
        windows: Mapping[str, Sequence[float]] | None,
        embedder: str | None,
    ) -> None:
        if len(memories) != len(embeddings):
            raise ValueError("one embedding per memory")
        if not memories:
            return
        with self.transaction():
            if embedder is not None:
                self.require_embedder(embedder)
            self._repair({m.user for m in memories})
            if self.read_only:
                raise self.read_only_error()
            self._require_room(memories, embeddings)
            self.sidecar.index.mark_dirty(m.user for m in memories)
            try:
                batch = max(1, min(_GET_PAGE, int(self._client.get_max_batch_size())))
                for start in range(0, len(memories), batch):
                    chunk = memories[start : start + batch]
                    getattr(self._col, how)(
                        ids=[m.id for m in chunk],
                        embeddings=[list(map(float, e)) for e in embeddings[start : start + batch]],
                        documents=[m.text for m in chunk],
                        metadatas=[m.to_metadata() for m in chunk],
                    )
                self.sidecar.index.put(memories, embeddings, windows)
            except Exception as exc:
                if not isinstance(self.fault(exc), DiskFullError):
                    raise
                # No undo: on a full device Chroma's delete hangs (measured: chromadb 1.5.9 on a
                # full tmpfs). The dirty mark has the index rebuilt from Chroma at the next run.
                self._complete = None
                self._checked.clear()
                raise DiskFullError(
                    f"no space left on {device_of(self.paths.data_dir)}; the write stopped part way: what of it reached the "
                    "store is kept and the recall index is repaired at the next run; free some space and run the same "
                    "command again to store the rest"
                ) from exc

    def _require_room(self, memories: Sequence[Memory], embeddings: Sequence[Sequence[float]]) -> None:
        """Raise DiskFullError ("nothing was stored") before a write that would not fit in
        the free space of the store's device with its reserve kept whole (``room_error``):
        a write that fills the device part way leaves Chroma half written, and Chroma
        cannot be relied on to undo it there (its delete hangs on a full device). The
        estimate is ``room_needed``."""
        dimension = len(embeddings[0]) if len(embeddings) else 0
        needed = room_needed(len(memories), dimension, sum(len(m.text.encode("utf-8")) for m in memories))
        refused = self.room_error(needed - ROOM_FLOOR)
        if refused is None:
            return
        free = self.free_bytes() or 0
        short = (
            ""
            if self._reserve_bytes() >= RESERVE
            else f" besides the store's {RESERVE >> 20} MiB reserve for deleting, now in use"
        )
        raise DiskFullError(
            f"no space left on {device_of(self.paths.data_dir)}: {len(memories)} memories need about "
            f"{needed / 2**20:.1f} MiB{short}, {free / 2**20:.1f} MiB are free; nothing was stored"
        )

    def update(self, memories: Sequence[Memory]) -> None:
        """Write back the metadata (not text or embedding) of existing memories. Raises
        DiskFullError, before anything is written, when the device has no room for it
        (``room_error``)."""
        if not memories:
            return
        with self.transaction():
            if not self.read_only and (
                refused := self.room_error(ROOM_PER_MEMORY * len(memories), "nothing was changed")
            ):
                raise refused
            self._repair({m.user for m in memories})
            self.sidecar.index.mark_dirty(m.user for m in memories)
            # Written whole below: a reinforcement recorded behind is in these memories.
            self.sidecar.index.caught_up([m.id for m in memories])
            self._col.update(ids=[m.id for m in memories], metadatas=[m.to_metadata() for m in memories])
            self.sidecar.index.set_state(memories)

    def reinforce(self, memories: Sequence[Memory]) -> None:
        """Write back the metadata of recalled memories (a reinforcement), behind: the
        recall index's copy at once (what every read of the store takes), Chroma in
        batches of ``BEHIND_BATCH`` (``flush_behind``), and whatever is still behind when
        the store is closed, before anything reads Chroma's metadata, or when the store is
        next opened after a kill. A reinforcement is thus one SQLite transaction, not a
        Chroma write. Raises DiskFullError as ``update`` does; ReadOnlyStoreError in a
        read-only store."""
        if not memories:
            return
        with self.transaction():
            if self.read_only:
                raise self.read_only_error()
            if refused := self.room_error(ROOM_PER_MEMORY * len(memories), "nothing was changed"):
                raise refused
            self._repair({m.user for m in memories})
            if self.sidecar.index.set_behind(memories) >= BEHIND_BATCH:
                self.flush_behind()

    def flush_behind(self) -> int:
        """Write to Chroma the metadata the recall index's copy holds ahead of it
        (``reinforce``), a page at a time, each page marked current once written: a kill
        in between writes it again, the same, at the next flush. Returns the memories
        written."""
        with self.transaction():
            return self._flush_behind()

    def _flush_behind(self) -> int:
        """``flush_behind`` with the store open (no transaction taken: ``_close`` calls it)."""
        written = 0
        if self.read_only or self._sidecar is None or self._collection is None:
            return 0
        index = self._sidecar.index
        while True:
            ids, memories = index.behind(_GET_PAGE)
            if not ids:
                return written
            if memories:
                self._collection.update(ids=[m.id for m in memories], metadatas=[m.to_metadata() for m in memories])
            index.caught_up(ids)
            written += len(memories)

    def delete(self, ids: Sequence[str]) -> None:
        """Delete memories for good: text, metadata and embedding, and their place in the
        graph (``Graph.forget_memories``: a relation memory takes its relation with it;
        their history stays)."""
        if not ids:
            return
        with self.transaction():
            if self.read_only:
                raise self.read_only_error()
            # In pages: SQLite (under Chroma) takes at most 32,766 variables a statement; on a
            # device short of room, pages as large as the room takes (``delete_page``).
            size = self.delete_page()
            pages = [list(ids[start : start + size]) for start in range(0, len(ids), size)]
            users = {
                str((m or {}).get("user"))
                for page in pages
                for m in self._col.get(ids=page, include=["metadatas"])["metadatas"]
            }
            self._repair(users)
            snapshot.drop(self.paths.data_dir, users)  # they hold the text of what goes
            for page in pages:
                self.sidecar.index.mark_dirty(users)
                self._col.delete(ids=page)
                self.sidecar.index.remove(page, users)
                self.sidecar.unmark_consolidated(page)
                self.sidecar.graph.forget_memories(page, users)

    def delete_page(self) -> int:
        """How many memories one step of a delete takes: ``_GET_PAGE``, or on a device short
        of room as many as the room takes (``DELETE_BYTES`` a memory, or what a memory takes
        in the store's files when more), the store's reserve given back first when that is
        not even one (``RESERVE``). Raises DiskFullError when not one fits even then."""
        free = self.free_bytes()
        if free is None:
            return _GET_PAGE
        each = DELETE_BYTES
        with contextlib.suppress(OSError):
            files = self.paths.database.stat().st_size + (self.paths.store_dir / "chroma.sqlite3").stat().st_size
            each = max(each, files // max(1, int(self._col.count())))
        if free < OPEN_ROOM + each * min(_GET_PAGE, 64):
            self._release_reserve()
            free = self.free_bytes() or 0
        size = min(_GET_PAGE, (free - OPEN_ROOM) // each)
        if size < 1:
            raise DiskFullError(
                f"no space left on {device_of(self.paths.data_dir)}: {free / 2**20:.2f} MiB free, not even room to delete "
                "(Chroma logs a delete before it frees anything); nothing was deleted: free some space on the device"
            )
        return int(size)

    def compact(self) -> None:
        """Erase from the files what deleted memories left behind, so that a deleted text is
        nowhere on disk: Chroma's write-ahead log, its full-text index and free pages
        (``_compact_chroma``), then the sidecar's (``Sidecar.compact``). Run once per command
        that deletes, after its deletions; its cost grows with the size of the store
        (about 1.3 s for 10,000 memories, see docs/forgetting.md, "Deleting for good").

        Raises DiskFullError, before anything is rewritten, when the device has no room for
        the copy VACUUM writes (the size of the larger file); the delete stands without it."""
        with self.transaction():
            files = [self.paths.database] + ([self.paths.store_dir / "chroma.sqlite3"] if self.server is None else [])
            largest = max((f.stat().st_size for f in files if f.exists()), default=0)
            free = self.free_bytes()
            if free is not None and free < largest + OPEN_ROOM:  # VACUUM writes the file again beside itself
                raise DiskFullError(
                    f"no space left on {device_of(self.paths.data_dir)}: compacting needs about "
                    f"{(largest + OPEN_ROOM) / 2**20:.1f} MiB, {free / 2**20:.1f} MiB are free"
                )
            if self.server is None:  # a server's files are the server's to compact
                self._compact_chroma()
            self.sidecar.compact()
            self.keep_reserve()

    def _compact_chroma(self) -> None:
        """Purge Chroma's log and vacuum its database, with Chroma's own maintenance
        (``chroma vacuum``, which purges the log up to what every segment has persisted and
        runs SQLite's VACUUM), after making sure every segment has persisted it all.

        Chroma's log (``embeddings_queue``) keeps the text of every write until the vector
        segment has persisted past it, and the local HNSW segment persists only every
        ``sync_threshold`` (1000) writes, so without help the log of a small store is never
        purged (chroma-core/chroma#7659). The collection's ``sync_threshold`` is set to 1
        for the time of a fresh client's first read, which replays the log into the segment
        and persists it; then set back. The client is closed while the vacuum runs (Chroma
        asks that nothing else use the database then) and FTS5's ``optimize`` merges the
        full-text index first, so the word pieces of deleted documents leave its data
        blocks (Chroma offers no command for that). The vacuum runs in a child process:
        Chroma's command line prints to standard output, which is memcli's data."""

        hnsw = dict((self._col.configuration or {}).get("hnsw") or {})
        threshold = int(hnsw.get("sync_threshold") or 1000)
        self._col.modify(configuration={"hnsw": {"sync_threshold": 1}})
        try:
            self._drop_client()
            self._collection = self._open_collection()
            self._col.count()  # the read that replays the log into the vector segment and persists it
        finally:
            if self._collection is None:  # the reopening failed: try once more, to set the threshold back
                self._collection = self._open_collection()
            self._col.modify(configuration={"hnsw": {"sync_threshold": threshold}})
        self._drop_client()
        try:
            database = self.paths.store_dir / "chroma.sqlite3"
            connection = sqlite3.connect(str(database), isolation_level=None)
            try:
                if connection.execute(
                    "SELECT 1 FROM sqlite_master WHERE name = 'embedding_fulltext_search'"
                ).fetchone():
                    connection.execute(
                        "INSERT INTO embedding_fulltext_search(embedding_fulltext_search) VALUES ('optimize')"
                    )
            finally:
                connection.close()
            done = subprocess.run(
                [
                    sys.executable,
                    "-P",  # the current directory off sys.path: nothing there can shadow chromadb's bindings
                    "-c",
                    "import sys, chromadb_rust_bindings; chromadb_rust_bindings.cli(sys.argv[1:])",
                    "chroma",
                    "vacuum",
                    "--path",
                    str(self.paths.store_dir),
                    "--force",
                ],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                check=False,
            )
            if done.returncode != 0:
                raise MemcliError(
                    f"chroma vacuum of {self.paths.store_dir} failed: {done.stderr.decode(errors='replace').strip()}"
                )
            zero_unused_slots_under(self.paths.store_dir)
        finally:
            self._collection = self._open_collection()

    def use(self, server: Server | None) -> None:
        """Keep the memories on ``server`` (the folder when None) from the next transaction
        on: a resident store is closed and opened there (the service, after a migration or
        a change of ``store_url``). The recall index is checked against the new place
        before it is trusted again."""
        with self._threads:
            if server == self.server:
                return
            resident = self.resident
            self.close()
            self.server = server
            self._complete = None
            self._checked.clear()
            if resident:
                self.open_resident()

    def migrate(self, target: Server | None, progress: Callable[[int, int], None] | None = None) -> tuple[int, float]:
        """Copy every memory (id, text, every metadata field, vector) and the collection's
        metadata (schema version, embedder) to ``target`` (a server, or the folder when
        None), then read the copy back and compare it with the store: the same ids, texts,
        fields and vectors. Memories the target holds that the store does not (left from an
        earlier migration) are deleted there, so that nothing deleted comes back. The store
        itself is not touched: an interrupted migration is run again (upserts by id).
        ``progress`` gets (memories copied, memories in all). Returns the count copied and
        the largest difference of a vector component found in the comparison.

        Raises MemcliError when the target is where the store already is, during a
        reindex, or when the comparison finds a difference; StoreServerError for a server
        that cannot be used."""
        with self.transaction():
            if target == self.server:
                raise MemcliError(f"the memories are already at {self.location}")
            if self.read_only:
                raise self.read_only_error()
            recorded = str((self._col.metadata or {}).get("embedder") or "")
            if recorded.startswith(REINDEXING):
                raise MemcliError(
                    "a reindex is under way or was interrupted: run memcli reindex to finish it, then migrate"
                )
            if target is None:
                private_dir(self.paths.store_dir)
            try:
                client = self._new_client(target)
                name = self._names(target)[0]
                metadata = dict(self._col.metadata or {}) or {"schema_version": SCHEMA_VERSION}
                dest = client.get_or_create_collection(
                    name=name, metadata=metadata, configuration={"hnsw": {"space": "cosine"}}, embedding_function=None
                )
                dest.modify(metadata=metadata)
                total = int(self._col.count())
                ids: list[str] = []
                for page in self._pages(None, ["documents", "metadatas", "embeddings"]):
                    if page["ids"]:
                        dest.upsert(
                            ids=page["ids"],
                            embeddings=np.asarray(page["embeddings"], dtype=np.float32),
                            documents=page["documents"],
                            metadatas=page["metadatas"],
                        )
                    ids.extend(page["ids"])
                    if progress is not None:
                        progress(len(ids), total)
                left = set(ids)
                extra: list[str] = []
                offset = 0
                while True:
                    found = dest.get(include=[], limit=_GET_PAGE, offset=offset)["ids"]
                    extra.extend(i for i in found if i not in left)
                    if len(found) < _GET_PAGE:
                        break
                    offset += _GET_PAGE
                for start in range(0, len(extra), _GET_PAGE):
                    dest.delete(ids=extra[start : start + _GET_PAGE])
                worst = self._compare(dest, ids)
            finally:
                if target is None:
                    private_tree(self.paths.store_dir)
        return len(ids), worst

    def _compare(self, dest: Any, ids: list[str]) -> float:
        """Compare ``dest`` with the store, ``ids`` being every id of the store: the same
        count, ids, texts and metadata, and vectors equal to float32 rounding. Returns the
        largest vector difference; raises MemcliError at the first difference."""
        if int(dest.count()) != len(ids):
            raise MemcliError(
                f"the copy holds {int(dest.count())} memories, the store {len(ids)}: run memcli migrate again"
            )
        worst = 0.0
        for start in range(0, len(ids), _GET_PAGE):
            chunk = ids[start : start + _GET_PAGE]
            include = ["documents", "metadatas", "embeddings"]
            mine = self._col.get(ids=chunk, include=include)
            theirs = dest.get(ids=chunk, include=include)
            if sorted(theirs["ids"]) != sorted(chunk):
                raise MemcliError("the copy's ids differ from the store's: run memcli migrate again")
            at = {i: n for n, i in enumerate(theirs["ids"])}
            for n, memory_id in enumerate(mine["ids"]):
                k = at[memory_id]
                if mine["documents"][n] != theirs["documents"][k] or dict(mine["metadatas"][n]) != dict(
                    theirs["metadatas"][k]
                ):
                    raise MemcliError(
                        f"the copy of memory {memory_id} differs from the store's: run memcli migrate again"
                    )
                a = np.asarray(mine["embeddings"][n], dtype=np.float32)
                b = np.asarray(theirs["embeddings"][k], dtype=np.float32)
                if a.shape != b.shape or not np.allclose(a, b, rtol=0, atol=1e-6):
                    raise MemcliError(f"the vector of memory {memory_id} differs in the copy: run memcli migrate again")
                worst = max(worst, float(np.max(np.abs(a - b))) if a.size else 0.0)
        return worst

    def discard(self) -> None:
        """Delete this home's collections from the server (a temporary store of an
        evaluation, when ``store_url`` is set); nothing in the folder mode, whose files go
        with their folder."""
        if self.server is None:
            return
        with self.transaction():
            for name in self._names():
                with contextlib.suppress(Exception):  # the staging one is usually absent
                    self._client.delete_collection(name)
            self._collection = None

    def _drop_client(self) -> None:
        """Close the Chroma client (the store lock and the sidecar stay held)."""
        # heavy: chromadb takes about a second to import
        from chromadb.api.shared_system_client import SharedSystemClient

        self._collection = None
        self._client = None
        SharedSystemClient.clear_system_cache()

    # reads ----------------------------------------------------------------

    def existing_ids(self, ids: Sequence[str]) -> set[str]:
        """The subset of ``ids`` already in the store."""
        found: set[str] = set()
        with self.transaction():
            for start in range(0, len(ids), _GET_PAGE):
                found.update(self._col.get(ids=list(ids[start : start + _GET_PAGE]), include=[])["ids"])
        return found

    def get(self, memory_id: str) -> Memory:
        """The memory with this id, or a unique id prefix (``MIN_PREFIX``+ characters).

        Raises NotFoundError when none (or more than one, for a prefix) matches.
        """
        with self.transaction():
            found = self._mirrored_many([memory_id])[0]
            if found:
                return found[0]
            if self._all_mirrored():
                matches = self.sidecar.index.ids_with_prefix(memory_id) if len(memory_id) >= MIN_PREFIX else []
                if len(matches) > 1:
                    raise NotFoundError(f"memory id prefix {memory_id!r} is ambiguous ({len(matches)} memories)")
                if not matches:
                    raise NotFoundError(f"no memory with id {memory_id!r}{short_prefix(memory_id)}")
                return self._mirrored_many(matches)[0][0]
            self._flush_behind()
            result = self._col.get(ids=[memory_id], include=["documents", "metadatas"])
            if not result["ids"] and len(memory_id) >= MIN_PREFIX:
                matches = [i for i in self._ids() if i.startswith(memory_id)]
                if len(matches) > 1:
                    raise NotFoundError(f"memory id prefix {memory_id!r} is ambiguous ({len(matches)} memories)")
                if matches:
                    result = self._col.get(ids=matches, include=["documents", "metadatas"])
            if not result["ids"]:
                raise NotFoundError(f"no memory with id {memory_id!r}{short_prefix(memory_id)}")
            return Memory.from_chroma(result["ids"][0], result["documents"][0], result["metadatas"][0])

    def get_many(self, ids: Sequence[str]) -> list[Memory]:
        """The memories with these exact ids, those that exist, in no particular order."""
        if not ids:
            return []
        with self.transaction():
            found, left = self._mirrored_many(ids)
            if left and not self._all_mirrored():
                self._flush_behind()
                result = self._col.get(ids=left, include=["documents", "metadatas"])
                found.extend(
                    Memory.from_chroma(i, d, m)
                    for i, d, m in zip(result["ids"], result["documents"], result["metadatas"])
                )
        return found

    # The recall index keeps a copy of every memory (``RecallIndex.records``): reads take it
    # from there when it can be trusted, and from Chroma otherwise.

    def _repair(self, users: set[str]) -> None:
        """Rebuild the rows of ``users`` left dirty by an interrupted write before another
        write clears the mark (one mark a user: the next write's would hide the first's)."""
        index = self.sidecar.index
        for user in users:
            if index.is_dirty(user) and index.ids(user):
                self.check_recall_index(user)

    def _mirrored(self, user: str) -> bool:
        """Whether ``user``'s memories can be read from the recall index's copy, after
        ``check_recall_index``: its rows were rebuilt if a write of theirs was interrupted
        or they are of an older version, and checked against Chroma once in this process
        (by the count of every memory when it matches, else by the user's ids)."""
        self.check_recall_index(user)
        return not self.sidecar.index.is_dirty(user)

    def _all_mirrored(self) -> bool:
        """Whether the recall index's copy holds every memory of every user: the users it
        knows to be unclean are rebuilt first (``check_recall_index``), and its count must
        match Chroma's (counted once a process, and again after a rebuild)."""
        index = self.sidecar.index
        unclean = index.unclean()
        for user in unclean:
            self.check_recall_index(user)
        if unclean and index.unclean():
            return False
        if self._complete is None:
            self._complete = index.count() == int(self._col.count())
        return self._complete

    def _mirrored_many(self, ids: Sequence[str]) -> tuple[list[Memory], list[str]]:
        """The memories of ``ids`` read from the recall index's copy, and the ids it could
        not answer for (not there, or of a user whose rows cannot be trusted). Whom to
        trust is settled (and any rebuild done) before the copy is read."""
        index = self.sidecar.index
        rows = index.records_by_id(list(ids))
        rebuilds = self._rebuilds
        trusted = {user for user in {row[1] for row in rows} if self._mirrored(user)}
        if self._rebuilds != rebuilds:  # a user was rebuilt: what was read may be gone
            rows = index.records_by_id(list(ids))
        found: list[Memory] = []
        left = dict.fromkeys(ids)
        for memory_id, user, text, record in rows:
            if user in trusted:
                found.append(Memory.from_record(memory_id, text, record))
                del left[memory_id]
        return found, list(left)

    def memories(
        self, user: str | None = None, kind: str | None = None, archived: bool | None = None, ended: bool | None = None
    ) -> list[Memory]:
        """Every memory of ``user`` (all users when None), oldest first; optionally of one
        kind, only archived (True) or not archived (False) ones, and only facts that have
        ended (True: ``valid_to`` set) or memories that have not (False)."""
        out: list[Memory] = []
        valid_to = None if ended is None else ({"$gt": 0.0} if ended else 0.0)
        where = _where(user=user, kind=kind, archived=archived, valid_to=valid_to)
        with self.transaction():
            if self._mirrored(user) if user is not None else self._all_mirrored():
                out = [Memory.from_record(*row) for row in self.sidecar.index.records(user, kind, archived, ended)]
            else:
                for page in self._pages(where, ["documents", "metadatas"]):
                    out.extend(
                        Memory.from_chroma(i, d, m)
                        for i, d, m in zip(page["ids"], page["documents"], page["metadatas"])
                    )
        out.sort(key=lambda m: (m.created_at, m.source, m.id))
        return out

    def pages(
        self, user: str | None = None, vectors: bool = False, size: int = _GET_PAGE
    ) -> Iterator[list[tuple[Memory, bytes | None]]]:
        """Every memory of ``user`` (all users when None), ``size`` at a time, each with its
        stored vector as float32 bytes when ``vectors`` (else None): from the recall
        index's copy in the order the memories were first written, when it can be trusted,
        else from Chroma in Chroma's order. What an export reads: memory is that of one page
        whatever the size of the store. The store is held until the iteration ends (or the
        iterator is closed), so the pages are of one state of it."""
        with self.transaction():
            if self._mirrored(user) if user is not None else self._all_mirrored():
                after = 0
                while rows := self.sidecar.index.records_page(user, after, size, vectors):
                    yield [(Memory.from_record(i, t, r), v) for _, i, t, r, v in rows]
                    after = rows[-1][0]
                return
            include = ["documents", "metadatas", *(["embeddings"] if vectors else [])]
            self._flush_behind()
            offset = 0
            while True:
                page = self._col.get(where=_where(user=user), include=include, limit=size, offset=offset)
                found = page["embeddings"] if vectors else [None] * len(page["ids"])
                yield [
                    (Memory.from_chroma(i, d, m), None if v is None else np.asarray(v, dtype=np.float32).tobytes())
                    for i, d, m, v in zip(page["ids"], page["documents"], page["metadatas"], found)
                ]
                if len(page["ids"]) < size:
                    return
                offset += size

    def active_with_vectors(self, user: str, kind: str) -> tuple[list[Memory], np.ndarray]:
        """Every active memory of ``user`` of ``kind`` (not archived, not an ended fact) and
        their stored vectors scaled to unit length (n x d, float32; 0 x 0 when there are
        none), in one read: what a batch of new facts is deduplicated against (cosine
        similarity = dot product).

        The search over them is exact, not Chroma's HNSW query: that one is approximate and
        now and then leaves out a stored memory, which made consolidation ADD a fact instead
        of updating or deduplicating the one it missed."""
        memories: list[Memory] = []
        rows: list[Any] = []
        with self.transaction():
            for page in self._pages(
                _where(user=user, kind=kind, archived=False, valid_to=0.0), ["documents", "metadatas", "embeddings"]
            ):
                memories.extend(
                    Memory.from_chroma(i, d, m) for i, d, m in zip(page["ids"], page["documents"], page["metadatas"])
                )
                rows.extend(page["embeddings"])
        if not rows:
            return memories, np.zeros((0, 0), dtype=np.float32)
        vectors = np.asarray(rows, dtype=np.float32)
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        norms[norms == 0] = 1.0
        return memories, vectors / norms

    def users_unlocked(self) -> list[str] | None:
        """The users of the recall index, read from the sidecar file opened read-only
        without taking the store (another process may hold it); None when it cannot be
        read. For a question that must not wait on the lock, such as which user a command
        defaults to."""

        if not self.paths.database.is_file():
            return []
        try:
            db = sqlite3.connect(f"{self.paths.database.as_uri()}?mode=ro", uri=True, timeout=0.5)
            try:
                return [r[0] for r in db.execute("SELECT DISTINCT user FROM recall_index ORDER BY user")]
            finally:
                db.close()
        except sqlite3.Error:
            return None

    def users(self) -> list[str]:
        """Every user who has memories, sorted."""
        found: set[str] = set()
        with self.transaction():
            if self._all_mirrored():
                return self.sidecar.index.users()
            for page in self._pages(None, ["metadatas"]):
                found.update(str(m.get("user")) for m in page["metadatas"] if m)
        return sorted(found)

    # the embedder -------------------------------------------------------------

    def embedder_record(self) -> str | None:
        """The identity (``Embedder.identity``) of the embedder that made the store's
        vectors, as recorded in the collection's metadata; ``REINDEXING`` + identity while
        a reindex to it is under way (or was interrupted); None when none is recorded (a
        new store, or one an older memcli wrote)."""
        with self.transaction():
            value = (self._col.metadata or {}).get("embedder")
        return None if value is None else str(value)

    def record_embedder(self, identity: str) -> None:
        """Record ``identity`` as the embedder of the store's vectors (``embedder_record``)."""
        with self.transaction():
            metadata = dict(self._col.metadata or {})
            metadata["embedder"] = identity
            metadata.setdefault("schema_version", SCHEMA_VERSION)
            self._col.modify(metadata=metadata)

    def embedded_by(self, identity: str) -> bool:
        """Whether the store's vectors are recorded as the embedder ``identity``'s, with no
        reindex under way."""

        recorded = self.embedder_record()
        return recorded is not None and not recorded.startswith(REINDEXING) and same_embedder(recorded, identity)

    def require_embedder(self, identity: str) -> None:
        """Make sure the store's vectors come from the embedder ``identity`` before a
        recall or a write uses it; a store with none recorded takes it. Callers call it
        inside the transaction that reads or writes vectors, so no reindex can come between.

        Raises EmbedderChangedError when another embedder made them, or a reindex was
        interrupted."""
        with self.transaction():
            recorded = self.embedder_record()
            if recorded is None:
                if not self.read_only:  # a read-only store is read as it is
                    self.record_embedder(identity)
                return
            if self.embedded_by(identity):
                return
            count = int(self._col.count())
        if recorded.startswith(REINDEXING):
            raise EmbedderChangedError(
                f"a reindex of the store to {recorded[len(REINDEXING) :]} was interrupted; run memcli reindex to finish it"
            )
        raise EmbedderChangedError(
            f"the {count} memories in {self.location} were embedded by {recorded}, but the embedder settings "
            f"(embedder, embedder_url) name {identity}: run memcli reindex to re-embed them with it, or set them back"
        )

    def begin_reindex(self, identity: str) -> None:
        """Start re-embedding the store with the embedder ``identity``: mark the store
        (``REINDEXING``: recall and writes refuse it until ``finish_reindex``) and open an
        empty staging collection that ``reembed`` fills. The store's own collection is
        not touched until ``finish_reindex`` swaps the staging one in, so an interrupted
        reindex loses nothing: the next one starts over."""
        with self.transaction():
            self.record_embedder(REINDEXING + identity)
            self._drop_staging()
            self._staging = self._client.create_collection(
                name=self._names()[1],
                metadata={"schema_version": SCHEMA_VERSION, "embedder": REINDEXING + identity},
                configuration={"hnsw": {"space": "cosine"}},
                embedding_function=None,
            )

    def reembed(
        self, user: str, memories: Sequence[Memory], vectors: np.ndarray, windows: Mapping[str, Sequence[float]]
    ) -> None:
        """Stage ``user``'s ``memories`` (all of them, as ``memories`` reads them) with their
        new ``vectors`` (one row each) in the reindex's staging collection, and rebuild the
        user's recall index with them and the window vectors ``windows`` (window text ->
        vector). The store stays marked until ``finish_reindex``."""
        with self.transaction():
            if self._staging is None:
                raise RuntimeError("reembed outside begin_reindex")
            self.sidecar.index.mark_dirty([user])
            batch = max(1, min(_GET_PAGE, int(self._client.get_max_batch_size())))
            for start in range(0, len(memories), batch):
                chunk = memories[start : start + batch]
                self._staging.add(
                    ids=[m.id for m in chunk],
                    embeddings=np.asarray(vectors[start : start + batch], dtype=np.float32),
                    documents=[m.text for m in chunk],
                    metadatas=[m.to_metadata() for m in chunk],
                )
            self.sidecar.index.rebuild(user, memories, vectors, windows)
            self._checked.add(user)
            self._rebuilds += 1

    def finish_reindex(self, identity: str) -> None:
        """Swap the staging collection in for the store's: marked complete first, then the
        old collection is deleted and the staging one renamed (``_open_collection`` ends a
        swap a crash cut short), and ``identity`` recorded as the store's embedder."""
        with self.transaction():
            staging = self._staging
            if staging is None:
                raise RuntimeError("finish_reindex outside begin_reindex")
            staging.modify(
                metadata={"schema_version": SCHEMA_VERSION, "embedder": REINDEXING + identity, "complete": True}
            )
            self._client.delete_collection(self._names()[0])
            self._swap_in(staging, identity)
            self._staging = None
            self._complete = None

    def _swap_in(self, staging: Any, identity: str) -> None:
        name = self._names()[0]
        staging.modify(name=name)
        staging.modify(metadata={"schema_version": SCHEMA_VERSION, "embedder": identity})
        self._collection = self._client.get_collection(name, embedding_function=None)

    def _drop_staging(self) -> None:
        staging_name = self._names()[1]
        if staging_name in {c.name for c in self._client.list_collections()}:
            self._client.delete_collection(staging_name)
        self._staging = None

    def check_recall_index(self, user: str) -> None:
        """Rebuild ``user``'s rows of the recall index from the store when they are missing,
        stale or were left dirty by an interrupted write (``notice`` says so). Once a
        process, compares the user's ids with Chroma's (5 s for 100,000 memories, so only
        when the index's count differs from Chroma's or something is dirty); later, only a
        dirty mark (or another version) makes it look again."""
        with self.transaction():
            index = self.sidecar.index
            if not index.is_dirty(user) and (user in self._checked or self._all_mirrored()):
                self._checked.add(user)
                return
            stored = self._ids(user)
            rows = index.ids(user)
            if not stored and not rows:
                index.forget_user(user)  # no memories: nothing to rebuild, no mark to keep
            elif index.is_dirty(user) or rows != set(stored):
                self.notice(f"rebuilding the recall index of {user} from the store ({len(stored)} memories)")
                memories, vectors = self._with_embeddings(user)
                rebuilt = False
                with self.optional_write(
                    f"the recall index of {user} was not rebuilt; their memories are read from the store"
                ):
                    index.rebuild(user, memories, vectors)
                    rebuilt = True
                self._complete = None
                if not rebuilt:
                    return
                self._rebuilds += 1
            self._checked.add(user)

    def recall_index(self, user: str, embed: Embed) -> UserIndex:
        """``user``'s recall index, ready to score: checked first (``check_recall_index``),
        with every window vector still missing computed by ``embed``. Read from the user's
        snapshot (``memcli.store.snapshot``) brought up to date with the sidecar's change
        log when there is one that can be trusted, else loaded whole from the sidecar and
        a snapshot taken of it (``save_recall_snapshot``)."""
        with self.transaction():
            self.check_recall_index(user)
            index = self.sidecar.index
            missing = index.missing_windows(user)
            if missing:
                vectors = embed([text for _, text in missing])
                with self.optional_write(WINDOWS_SKIPPED):
                    index.fill_windows(missing, vectors)
            seq, epoch = index.seq(), index.epoch(user)
            loaded = snapshot.load(self.paths.data_dir, user, epoch, seq, INDEX_VERSION)
            if loaded is not None:
                loaded.apply(index.changes(user, loaded.seq))
                if loaded.count == index.count_of(user) and loaded.epoch == epoch:
                    return loaded
                self.notice(f"the snapshot of the recall index of {user} did not match the store; loading it whole")
            whole = index.load(user)
            self.save_recall_snapshot(user, whole)
            return whole

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

    def _ids(self, user: str | None = None) -> list[str]:
        """Every id in the store, or ``user``'s."""
        return [i for page in self._pages(_where(user=user), []) for i in page["ids"]]

    def _with_embeddings(self, user: str) -> tuple[list[Memory], list[Any]]:
        memories: list[Memory] = []
        vectors: list[Any] = []
        for page in self._pages({"user": user}, ["documents", "metadatas", "embeddings"]):
            memories.extend(
                Memory.from_chroma(i, d, m) for i, d, m in zip(page["ids"], page["documents"], page["metadatas"])
            )
            vectors.extend(page["embeddings"])
        return memories, vectors

    def _pages(self, where: dict[str, Any] | None, include: list[str]) -> Iterator[dict[str, Any]]:
        """The results of ``_col.get(where=..., include=...)``, ``_GET_PAGE`` memories at a
        time (Chroma's metadata brought up to date first: ``flush_behind``)."""
        if "metadatas" in include:
            self._flush_behind()
        offset = 0
        while True:
            page = self._col.get(where=where, include=include, limit=_GET_PAGE, offset=offset)
            yield page
            if len(page["ids"]) < _GET_PAGE:
                return
            offset += _GET_PAGE

    def count(self, user: str | None = None) -> int:
        """How many memories ``user`` has (all users when None)."""
        with self.transaction():
            if user is None:
                return int(self._col.count())
            return len(self._col.get(where={"user": user}, include=[])["ids"])
