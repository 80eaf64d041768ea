"""Chroma under the store: the collection's names and schema version, its metadata read
without writing, a ``chroma run`` server (``Server``), the stand-in a read-only store reads
through (``_ReadOnlyChroma``), and the metadata filters of a query (``memcli.store.store.MemoryStore``)."""

from __future__ import annotations

import contextlib
import functools
import logging
import os
import secrets
import sqlite3
import urllib.parse
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from memcli.config import Settings
from memcli.errors import (
    MemcliError,
    StoreServerError,
)
from memcli.memory import Memory
from memcli.paths import private_dir, private_tree, write_private
from memcli.store.hnsw import forget_scrubbed, scrub_changed
from memcli.store.sidecar import Sidecar

Embed = Callable[[list[str]], list[list[float]]]


COLLECTION = "memories"


REINDEXING = "reindexing:"
"""Prefix of ``embedder_record`` while a reindex runs: a store left so was interrupted."""


STAGING = "memories-reindex"
"""The collection a reindex fills before it takes the place of ``COLLECTION``."""


SCHEMA_VERSION = 1


SYNC_THRESHOLD = 100
"""Chroma's ``hnsw`` ``sync_threshold`` for memcli's collections in a folder: after how many
written records Chroma saves a collection's HNSW index (its own default: 1000). Until it is
saved, Chroma rebuilds the index from its write-ahead log at every opening of a client and
writes its files whole again from the process's heap (``memcli.store.hnsw``); a saved index
is loaded as it is and only the records after it applied. Measured, chromadb 1.5.9, a
client's opening and first query (CPU time, median of 5, load 35-40): 108 ms with the
default at 500 records, 241 ms at 999, 530 ms at 1,999 (999 of them in the log); 25-39 ms
with the index saved. Each save also writes and fsyncs Chroma's id map (a pickle of every
record's id: 0.9 MB at 10,000 records), so saving at each write (1) cost a single add at
10,000 records 21.9 ms of CPU against 10.6 ms at 100 (median of 40, load 7-9), and a
reinforcement (a metadata update) about 5 ms more at 1,000; at 100 a save comes once in 100
writes and an opening replays at most 99 records (27-35 ms at 100)."""


HNSW_CONFIGURATION: dict[str, Any] = {"space": "cosine", "sync_threshold": SYNC_THRESHOLD}
"""The ``hnsw`` configuration a memcli collection in a folder is created with (cosine
distance, ``SYNC_THRESHOLD``)."""

SERVER_HNSW_CONFIGURATION: dict[str, Any] = {"space": "cosine"}
"""The ``hnsw`` configuration of a collection on a Chroma server: cosine distance; when to
save its index is the server's to tune."""


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


def set_sync_threshold(collection: Any) -> bool:
    """Set the ``sync_threshold`` of a collection made with another (Chroma's default, 1000,
    by a memcli before ``SYNC_THRESHOLD``) to ``SYNC_THRESHOLD`` in place
    (``Collection.modify(configuration=...)``, which Chroma 1.x allows for it). Returns
    whether it changed the collection; a collection whose configuration has no ``hnsw``
    part (not a local HNSW index) is left alone."""
    hnsw = (collection.configuration_json or {}).get("hnsw") or {}
    if int(hnsw.get("sync_threshold", SYNC_THRESHOLD)) == SYNC_THRESHOLD:
        return False
    collection.modify(configuration={"hnsw": {"sync_threshold": SYNC_THRESHOLD}})
    return True


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


@functools.cache
def _chroma_settings() -> Any:
    """The ``chromadb.config.Settings`` of memcli's folders (telemetry off, no reset),
    built once a process: building one reads the environment and an ``.env`` file and
    validates every field (pydantic-settings), which every opening of a store paid. As
    Chroma's own objects are, it is read when it is built: here at the first opening in the
    process."""
    # heavy: chromadb takes about a second to import
    from chromadb.config import Settings as ChromaSettings

    return ChromaSettings(anonymized_telemetry=False, allow_reset=False)


@functools.lru_cache(maxsize=32)
def _folder_settings(path: str) -> Any:
    """The Settings of a ``PersistentClient`` on the folder ``path``, one object a folder and
    process: ``_chroma_settings`` copied (no environment read, nothing validated again) with
    the folder in it. ``PersistentClient`` writes the folder into the object it is given, so
    each folder has its own, holding already what it writes (the constructor's assignments
    change nothing): two homes in one process open their own folders."""
    return _chroma_settings().model_copy(update={"persist_directory": path, "is_persistent": True}, deep=True)


HOME_ID_FILE = "store-id"
"""The file in the data folder naming this memcli home's collections on a Chroma server."""


class Collection(Protocol):
    """The records of one memcli home in a vector store: each an id, a vector, a text and
    flat metadata (``Memory.to_metadata``). This is the part of Chroma's collection API the
    store uses, which both backends serve; a third backend returns an object with these
    methods (keyword arguments as Chroma names them; ``get`` and ``query`` return Chroma's
    dict of parallel lists: ``ids``, ``documents``, ``metadatas``, ``embeddings``,
    ``distances``, cosine distance)."""

    @property
    def metadata(self) -> Mapping[str, Any] | None: ...

    def add(self, *, ids: list[str], embeddings: Any, documents: list[str], metadatas: list[Any]) -> None: ...

    def upsert(self, *, ids: list[str], embeddings: Any, documents: list[str], metadatas: list[Any]) -> None: ...

    def get(
        self,
        ids: list[str] | None = None,
        where: Mapping[str, Any] | None = None,
        limit: int | None = None,
        offset: int | None = None,
        include: list[str] = ...,
    ) -> Mapping[str, Any]: ...

    def update(self, *, ids: list[str], metadatas: list[Any]) -> None: ...

    def delete(self, ids: list[str] | None = None) -> None: ...

    def query(
        self, *, query_embeddings: Any, n_results: int, where: Mapping[str, Any] | None = None, include: list[str] = ...
    ) -> Mapping[str, Any]: ...

    def count(self) -> int: ...

    def modify(
        self, name: str | None = None, metadata: Mapping[str, Any] | None = None, configuration: Any = None
    ) -> None: ...


class Backend(Protocol):
    """Where a store's records live, chosen once when the store opens
    (``MemoryStore.backend``): a Chroma folder on this machine (``Folder``) or a Chroma
    server (``Server``). The sidecar, the space reserve and the read-only mode are the
    store's own, the same over every backend.

    A third backend (pgvector, Qdrant, LanceDB...) implements these methods, and its
    ``client`` returns an object with the collection methods of Chroma's client that the
    store calls (``list_collections``, ``get_collection``, ``get_or_create_collection``,
    ``create_collection``, ``delete_collection``, ``get_max_batch_size``) whose collections
    are ``Collection``s; ``tests/test_store.py`` runs one suite against each backend."""

    def __str__(self) -> str:
        """Where the memories are, as messages name it."""
        ...

    def client(self) -> Any:
        """A client whose collections hold the records. Raises StoreServerError when it
        cannot be reached."""
        ...

    def names(self, data_dir: Path) -> tuple[str, str]:
        """The names of the home's collection and of a reindex's staging one."""
        ...

    def prepare(self) -> None:
        """Before the client opens: make what it will write private (a folder: 0700)."""
        ...

    def settle(self, opened: bool = True) -> None:
        """After the client wrote: make what it wrote private (a folder's files: 0600).
        ``opened``: whether a client of this process opened the records since the store
        was opened (False: a store opened without Chroma, whose opening made its files
        private; only what a killed process left is settled). Raises nothing of its own: a
        file it cannot settle is left as it is (the next transaction tries again)."""
        ...

    def error(self, exc: BaseException) -> StoreServerError | None:
        """The StoreServerError a failed request stands for, or None for any other failure."""
        ...

    def read_only_metadata(self) -> dict[str, Any]:
        """The collection's metadata, read without writing (for a read-only store), or {}."""
        ...

    def local_files(self) -> list[Path]:
        """Its files on this machine that compaction rewrites ([] for a server, whose files
        are the server's to compact)."""
        ...


def forget_chroma_system(client: Any | None, backend: Any) -> None:
    """Drop one store's Chroma system from chromadb's per-process cache
    (``SharedSystemClient``), so that the next opening of that store reads what other
    processes wrote since: the system of ``client`` (its identifier: a folder's path, or
    the random one of a server's client), else that of ``backend``'s folder (an opening
    that failed before a client existed); a server's backend without a client has nothing
    cached (Chroma's own constructor releases what it could not open). The other stores'
    systems stay: Chroma's ``clear_system_cache`` empties the whole cache, and an opening
    of another store in another thread of the same process (an evaluation's temporary
    store in the service, beside the home's own) then failed with a KeyError of its
    folder. A server's client and its admin client each have a system cached under a
    random identifier: both go. Nothing is stopped, as ``clear_system_cache`` stops nothing."""
    # Instance attributes of Chroma's client, read without ``getattr``, which a stand-in
    # (``_ReadOnlyChroma``, ``_DeferredChroma``) answers by refusing. A server's client
    # holds an admin client whose system chromadb caches under another random identifier.
    attributes = getattr(client, "__dict__", {})
    admin = getattr(attributes.get("_admin_client"), "__dict__", {})
    identifiers = {found for found in (attributes.get("_identifier"), admin.get("_identifier")) if found}
    if not identifiers and isinstance(backend, Folder):
        identifiers = {str(backend.store_dir)}  # a PersistentClient's identifier: its folder
    if not identifiers:
        return
    # heavy: chromadb takes about a second to import (imported already by the opening)
    from chromadb.api.shared_system_client import SharedSystemClient

    with SharedSystemClient._refcount_lock:  # the lock Chroma itself takes around these
        systems = [SharedSystemClient._identifier_to_system.get(found) for found in identifiers]
        # a system cached under a second identifier too (``AdminClient.from_system``)
        aliases = [
            key
            for key, value in SharedSystemClient._identifier_to_system.items()
            if any(value is system for system in systems)
        ]
        for key in identifiers | set(aliases):
            SharedSystemClient._identifier_to_system.pop(key, None)
            SharedSystemClient._identifier_to_refcount.pop(key, None)


def backend_of(paths: Any, server: Server | None) -> Backend:
    """The backend of a store: ``server``, or the folder ``paths.store_dir`` when None."""
    return Folder(paths.store_dir) if server is None else server


@dataclass(frozen=True)
class Folder:
    """A Chroma folder on this machine (``chromadb.PersistentClient``): the default
    backend, at ``store_dir`` (``Paths.store_dir``), which only this memcli process opens
    (Chroma is not process-safe: the store's file lock holds it)."""

    store_dir: Path

    def __str__(self) -> str:
        return str(self.store_dir)

    def client(self) -> Any:
        """A ``chromadb.PersistentClient`` on the folder, telemetry off; the next ``settle``
        scrubs every segment (``hnsw.forget_scrubbed``)."""
        _import_chroma()
        # heavy: chromadb takes about a second to import
        import chromadb

        path = str(self.store_dir)
        client = chromadb.PersistentClient(path=path, settings=_folder_settings(path))
        forget_scrubbed(self.store_dir)  # this client writes segments not saved yet whole again
        return client

    def names(self, data_dir: Path) -> tuple[str, str]:
        """``COLLECTION`` and ``STAGING``: the folder is this home's alone."""
        return COLLECTION, STAGING

    def prepare(self) -> None:
        """The folder made 0700 before Chroma makes it: what it writes inside is out of others' reach."""
        private_dir(self.store_dir)

    def settle(self, opened: bool = True) -> None:
        """What Chroma wrote (chroma.sqlite3 as the umask says, a new HNSW segment) made 0600,
        and the unused places of the HNSW files it wrote zeroed (``hnsw.scrub_changed``):
        Chroma writes a segment it has not saved yet whole at each opening, from memory that
        may hold the text of memories deleted before. ``opened`` False (Chroma not opened
        in this store): the zeroing alone, the opening having made the folder private
        (``StoreOpening._open``) and nothing of this process having written it since.
        Raises nothing of its own: a file that refuses its chmod is left as it is
        (``paths.private``), and a zeroing that fails (a full device) is logged; the store
        is whole without either, and the next transaction tries again."""
        try:
            scrub_changed(self.store_dir)
        except OSError as exc:  # the store is whole without it: the next transaction or delete tries again
            log.warning("the unused places of Chroma's HNSW files were not zeroed: %s", exc)
        if opened:
            private_tree(self.store_dir)

    def error(self, exc: BaseException) -> StoreServerError | None:
        """None: a folder's failures are the store's own (full device, read-only files)."""
        return None

    def read_only_metadata(self) -> dict[str, Any]:
        """The collection's metadata from chroma.sqlite3, opened read-only."""
        return _chroma_metadata(self.store_dir)

    def local_files(self) -> list[Path]:
        """Chroma's database, which compaction vacuums."""
        return [self.store_dir / "chroma.sqlite3"]


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
        reason = f"the Chroma server at {self} {why}"
        return StoreServerError(f"{reason}; nothing was half written, run the command again once it is back", reason)

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

    def names(self, data_dir: Path) -> tuple[str, str]:
        """``memcli-<id>`` and ``memcli-<id>-reindex``: a server may hold many memcli homes,
        so each names its collections by an id made once a home (random, in
        ``HOME_ID_FILE`` in the data folder ``data_dir``, which a migration keeps)."""
        path = data_dir / HOME_ID_FILE
        try:
            home = path.read_text(encoding="utf-8").strip()
        except FileNotFoundError:
            home = ""
        if not home:
            home = secrets.token_hex(8)
            write_private(path, home + "\n")
        return f"memcli-{home}", f"memcli-{home}-reindex"

    def prepare(self) -> None:
        """Nothing: the server keeps its own files."""

    def settle(self, opened: bool = True) -> None:
        """Nothing: the server keeps its own files."""

    def read_only_metadata(self) -> dict[str, Any]:
        """{}: a read-only store over a server reads its copy as it is."""
        return {}

    def local_files(self) -> list[Path]:
        """[]: a server's files are the server's to compact."""
        return []

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
            try:
                names = {d["name"] for d in admin.list_databases(tenant=self.tenant)}
                if self.database not in names:
                    admin.create_database(self.database, tenant=self.tenant)
            finally:  # its system, cached by chromadb under a random identifier, is needed no more
                forget_chroma_system(admin, self)
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
