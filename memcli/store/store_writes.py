"""Writing the store: add, upsert, update and delete memories (Chroma and the recall index in
one transaction), with room checked first, and compaction (``memcli.store.store.MemoryStore``)."""

from __future__ import annotations

import contextlib
import sqlite3
import subprocess
import sys
from collections.abc import Mapping, Sequence

from memcli.errors import (
    DiskFullError,
    MemcliError,
)
from memcli.memory import Memory
from memcli.paths import device_of
from memcli.store import chroma, snapshot
from memcli.store.hnsw import zero_unused_slots_under
from memcli.store.space import DELETE_BYTES, OPEN_ROOM, RESERVE, ROOM_FLOOR, ROOM_PER_MEMORY, room_needed


def _made(memories: Sequence[Memory]) -> list[tuple[str, str, list[str]]]:
    """(id, user, source ids) of the memories made from others, for the sidecar's index of
    derived memories (``Sidecar.record_derived``)."""
    return [(m.id, m.user, list(m.source_ids)) for m in memories if m.source_ids]


class StoreWrites:
    """The writes of ``MemoryStore``."""

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
            made = _made(memories)
            self.sidecar.record_derived(made)  # before Chroma: a kill between leaves the index a superset
            try:
                batch = max(1, min(chroma._GET_PAGE, int(self._client.get_max_batch_size())))
                for start in range(0, len(memories), batch):
                    chunk = memories[start : start + batch]
                    getattr(self._col, how)(
                        ids=[m.id for m in chunk],
                        embeddings=[list(map(float, e)) for e in embeddings[start : start + batch]],
                        documents=[m.text for m in chunk],
                        metadatas=[m.to_metadata() for m in chunk],
                    )
                self.sidecar.index.put(memories, embeddings, windows)
                self.sidecar.prune_derived(made)
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
            made = _made(memories)
            self.sidecar.record_derived(made)
            self._col.update(ids=[m.id for m in memories], metadatas=[m.to_metadata() for m in memories])
            self.sidecar.index.set_state(memories)
            self.sidecar.prune_derived(made)

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
                self.sidecar.forget_derived(page)
                self.sidecar.graph.forget_memories(page, users)

    def delete_page(self) -> int:
        """How many memories one step of a delete takes: ``chroma._GET_PAGE``, or on a device short
        of room as many as the room takes (``DELETE_BYTES`` a memory, or what a memory takes
        in the store's files when more), the store's reserve given back first when that is
        not even one (``RESERVE``). Raises DiskFullError when not one fits even then."""
        free = self.free_bytes()
        if free is None:
            return chroma._GET_PAGE
        each = DELETE_BYTES
        with contextlib.suppress(OSError):
            files = self.paths.database.stat().st_size + (self.paths.store_dir / "chroma.sqlite3").stat().st_size
            each = max(each, files // max(1, int(self._col.count())))
        if free < OPEN_ROOM + each * min(chroma._GET_PAGE, 64):
            self._release_reserve()
            free = self.free_bytes() or 0
        size = min(chroma._GET_PAGE, (free - OPEN_ROOM) // each)
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
            files = [self.paths.database, *self.backend.local_files()]
            largest = max((f.stat().st_size for f in files if f.exists()), default=0)
            free = self.free_bytes()
            if free is not None and free < largest + OPEN_ROOM:  # VACUUM writes the file again beside itself
                raise DiskFullError(
                    f"no space left on {device_of(self.paths.data_dir)}: compacting needs about "
                    f"{(largest + OPEN_ROOM) / 2**20:.1f} MiB, {free / 2**20:.1f} MiB are free"
                )
            if self.backend.local_files():  # a server's files are the server's to compact
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
