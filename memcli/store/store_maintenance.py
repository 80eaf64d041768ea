"""The store's maintenance: which embedder made its vectors, a reindex into a staging
collection swapped in at the end, and a migration between a Chroma folder and a Chroma
server (``memcli.store.store.MemoryStore``)."""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any

import numpy as np

from memcli.errors import (
    EmbedderChangedError,
    MemcliError,
)
from memcli.memory import Memory
from memcli.models.embedding import same_embedder
from memcli.paths import private_dir, private_tree
from memcli.store import chroma
from memcli.store.chroma import (
    HNSW_CONFIGURATION,
    REINDEXING,
    SCHEMA_VERSION,
    SERVER_HNSW_CONFIGURATION,
    Server,
    backend_of,
)
from memcli.store.hnsw import scrub_segments


class StoreMaintenance:
    """Reindex, migrate, the embedder record and the index of derived memories of ``MemoryStore``."""

    def derived_from(self, ids: Collection[str], kinds: Collection[str]) -> list[Memory]:
        """The stored memories made from ``ids``, directly or through one another (a global
        summary from a daily one made from a turn), as the sidecar's index of derived
        memories records them (``Sidecar.made_from``): read by id, not by reading every
        memory. The index may name more than cite them (a kill between its write and the
        store's): the caller checks their ``source_ids``.

        A store an older memcli wrote has no index yet: the memories of ``kinds`` (those
        made from others) are read once and recorded (``Sidecar.fill_derived``, the
        migration); on a device with no room for that, or a store that cannot be written,
        the memories of ``kinds`` are returned as read, and the next delete tries again."""
        with self.transaction():
            sidecar = self.sidecar
            if not sidecar.derived_filled():
                every = [m for kind in sorted(kinds) for m in self.memories(kind=kind) if m.source_ids]
                filled = False
                with self.optional_write("the index of derived memories is filled at the next delete"):
                    sidecar.fill_derived((m.id, m.user, list(m.source_ids)) for m in every)
                    filled = True
                if not filled:
                    return every
            seen, step = set(ids), set(ids)
            while step:
                step = sidecar.made_from(step) - seen
                seen |= step
            return self.get_many(sorted(seen - set(ids)))

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
            self.backend = backend_of(self.paths, server)
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
                    name=name,
                    metadata=metadata,
                    configuration={"hnsw": HNSW_CONFIGURATION if target is None else SERVER_HNSW_CONFIGURATION},
                    embedding_function=None,
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
                    found = dest.get(include=[], limit=chroma._GET_PAGE, offset=offset)["ids"]
                    extra.extend(i for i in found if i not in left)
                    if len(found) < chroma._GET_PAGE:
                        break
                    offset += chroma._GET_PAGE
                for start in range(0, len(extra), chroma._GET_PAGE):
                    dest.delete(ids=extra[start : start + chroma._GET_PAGE])
                worst = self._compare(dest, ids)
                if target is None:  # the folder's new segment: written from memory that may hold deleted texts
                    scrub_segments(self.paths.store_dir)
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
        for start in range(0, len(ids), chroma._GET_PAGE):
            chunk = ids[start : start + chroma._GET_PAGE]
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
                configuration={"hnsw": HNSW_CONFIGURATION if self.backend.local_files() else SERVER_HNSW_CONFIGURATION},
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
            batch = max(1, min(chroma._GET_PAGE, int(self._client.get_max_batch_size())))
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
        swap a crash cut short), and ``identity`` recorded as the store's embedder. Then, in
        a folder, the HNSW files are scrubbed (``hnsw.scrub_segments``): the old collection's
        segment folder, which Chroma leaves on disk with every vector it held, is removed,
        and the new segment's unused places, which hnswlib wrote from memory that may hold
        the text of memories deleted before, are zeroed (measured: a note deleted for good,
        then a reindex, and the note's text was in the new ``data_level0.bin``)."""
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
            self._scrub_segments()

    def _scrub_segments(self) -> None:
        """``hnsw.scrub_segments`` on a folder's Chroma files (a server's are its own)."""
        if self.backend.local_files():
            scrub_segments(self.paths.store_dir)

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
