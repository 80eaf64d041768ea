"""Writing the store: add, upsert, update and delete memories (Chroma and the recall index in
one transaction), with room checked first, and compaction (``memcli.store.store.MemoryStore``)."""

from __future__ import annotations

import contextlib
import logging
import os
import sqlite3
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from memcli.errors import (
    DiskFullError,
)
from memcli.memory import Memory
from memcli.paths import device_of, drop_prompt_states, open_private
from memcli.store import chroma, snapshot
from memcli.store.hnsw import scrub_segments
from memcli.store.space import DELETE_BYTES, OPEN_ROOM, RESERVE, ROOM_FLOOR, ROOM_PER_MEMORY, room_needed
from memcli.store.sqlite_pages import NotScrubbed, scrub_free_space

log = logging.getLogger(__name__)

FILL_PAGE = 500
"""Memories ``fill_statements`` reads a transaction (about 0.15 s of CPU: a request waits at
most that long for the store)."""


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
            # Waiting reinforcements first: one of these memories killed after Chroma took it
            # and before ``index.put`` would otherwise have its older metadata flushed over it.
            self._flush_behind()
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

    def fill_statements(self, page: int = FILL_PAGE, stop: Callable[[], bool] | None = None) -> tuple[int, float]:
        """Read what the notes and turns of every user not yet covered state, under the
        rules of this code (``memcli.store.statements``; ``RecallIndex.fill_said``), ``page``
        memories a transaction so that requests are served in between; ``stop`` is asked
        between pages (True: leave the rest for the next time). Supersession at write time
        looks a covered user's candidates up; it reads the others' memories one by one.
        Returns (memories read, seconds). Nothing is written to a read-only store."""
        started = time.perf_counter()
        done = 0
        with self.transaction():
            if self.read_only:
                return 0, 0.0
            users = self.sidecar.index.unsaid()
        for user in users:
            after: int | None = 0
            while after is not None:
                if stop is not None and stop():
                    return done, time.perf_counter() - started
                with self.transaction():
                    after, read = self.sidecar.index.fill_said(user, after, page)
                done += read
                time.sleep(0)  # a request waiting for the store takes it here
        return done, time.perf_counter() - started

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
            self._flush_behind()  # waiting reinforcements first, as ``_write`` does
            self.sidecar.index.mark_dirty(m.user for m in memories)
            made = _made(memories)
            self.sidecar.record_derived(made)
            self._col.update(ids=[m.id for m in memories], metadatas=[m.to_metadata() for m in memories])
            # Only once Chroma holds them: cleared before, a write interrupted inside Chroma lost
            # the waiting reinforcement of these memories for good.
            self.sidecar.index.caught_up([m.id for m in memories])
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
            drop_prompt_states(self.paths.prompt_states_dir)  # and the chat openings' tokens
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
            files = self._sidecar_bytes() + (self.paths.store_dir / "chroma.sqlite3").stat().st_size
            # The recall index's count of the memories (Chroma's takes 0.1 s at 10,000), or
            # Chroma's where the index holds none (a store whose index was never built).
            count = self.sidecar.index.count() or int(self._col.count())
            each = max(each, files // max(1, count))
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
        (Chroma's database read whole and its free space zeroed in place, the full-text index
        merged: about 0.2 s of CPU at 10,000 memories, see docs/forgetting.md, "Deleting for good").

        Raises DiskFullError, before anything is rewritten, when the device has no room for
        the copy a VACUUM would write (the size of the larger file, the sidecar's counted with
        its write-ahead log: the zeroing in place needs
        none, but where it cannot be done Chroma's database is vacuumed, and the sidecar's is
        once); the delete stands without it."""
        with self.transaction():
            sizes = [self._sidecar_bytes(), *(f.stat().st_size for f in self.backend.local_files() if f.exists())]
            largest = max(sizes)
            free = self.free_bytes()
            if free is not None and free < largest + OPEN_ROOM:  # a VACUUM writes the file again beside itself
                raise DiskFullError(
                    f"no space left on {device_of(self.paths.data_dir)}: compacting needs about "
                    f"{(largest + OPEN_ROOM) / 2**20:.1f} MiB, {free / 2**20:.1f} MiB are free"
                )
            if self.backend.local_files():  # a server's files are the server's to compact
                self._compact_chroma()
            self.sidecar.compact()
            self.keep_reserve()

    def _sidecar_bytes(self) -> int:
        """Bytes of the sidecar database's files (``Paths.database_files``): in WAL mode
        its log may hold more than the file (every page written since the last checkpoint),
        and a VACUUM of it writes the new file into the log. A file that is not there
        counts 0."""
        total = 0
        for path in self.paths.database_files():
            with contextlib.suppress(FileNotFoundError):
                total += path.stat().st_size
        return total

    def _compact_chroma(self) -> None:
        """Erase from Chroma's database what deleted memories left behind: the text its log
        keeps of them, the word pieces its full-text index keeps, and the bytes of deleted
        and moved rows in its free space (its SQLite deletes without ``secure_delete``, and
        its bundled SQLite is built without it, so a deleted row's bytes stay where they lay).

        Chroma's log (``embeddings_queue``) keeps the text and metadata of every write until
        the vector segment has persisted past it (the local HNSW segment persists every
        ``sync_threshold`` writes: Chroma's default 1000, chroma-core/chroma#7659; memcli's
        ``chroma.SYNC_THRESHOLD``). Its rows lose their
        metadata (text included) here, under ``secure_delete``, once the metadata segment has
        applied them (its ``max_seq_id``), and so do those of every memory no longer stored:
        the vector segment replays only their operation and vector, so Chroma reads them as
        before, and purges them in its time. FTS5's ``optimize`` merges the full-text index
        so the pieces of deleted documents leave its data blocks (Chroma offers no command
        for that). Then the free space of the file is zeroed in place
        (``sqlite_pages.scrub_free_space``: only the pages that held something are written),
        with Chroma's client left open: measured at 10,000 memories, 0.07 s of CPU where
        writing the file again (VACUUM INTO a copy, and reopening the client, as Chroma asks
        before a VACUUM) took 0.25 s. Where the file cannot be scrubbed so (a SQLite without
        ``dbstat``, a WAL database, a page read otherwise than SQLite counts it) it is written
        again as before: with the client closed, ``VACUUM INTO`` a private copy beside it,
        fsynced and renamed over it (a kill leaves the old file whole, and the copy it left
        is dropped at the next compaction). Then the HNSW files are scrubbed
        (``hnsw.scrub_segments``): the folders of deleted collections removed, and the places
        past the element count of every kept segment, which hnswlib wrote from memory that may
        hold deleted texts, zeroed."""
        database = self.paths.store_dir / "chroma.sqlite3"
        copy = database.with_name(database.name + ".compacting")
        copy.unlink(missing_ok=True)  # one a kill left: it may hold what was deleted since
        connection = sqlite3.connect(str(database), isolation_level=None)
        try:
            connection.execute("PRAGMA secure_delete = ON")
            tables = {r[0] for r in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
            if {"embeddings_queue", "embeddings", "segments", "max_seq_id"} <= tables:
                applied = connection.execute(
                    "SELECT MIN(COALESCE(max_seq_id.seq_id, -1)) FROM segments LEFT JOIN max_seq_id"
                    " ON segments.id = max_seq_id.segment_id WHERE segments.scope = 'METADATA'"
                ).fetchone()[0]
                connection.execute(
                    "UPDATE embeddings_queue SET metadata = NULL WHERE metadata IS NOT NULL"
                    " AND (seq_id <= ? OR id NOT IN (SELECT embedding_id FROM embeddings))",
                    (applied if isinstance(applied, int) else -1,),
                )
            if "embedding_fulltext_search" in tables:
                connection.execute(
                    "INSERT INTO embedding_fulltext_search(embedding_fulltext_search) VALUES ('optimize')"
                )
        finally:
            connection.close()
        try:
            scrub_free_space(database)
        except NotScrubbed as exc:
            log.info("compaction writes %s again: %s", database, exc)
            self._vacuum_chroma(database, copy)
        scrub_segments(self.paths.store_dir)

    def _vacuum_chroma(self, database: Path, copy: Path) -> None:
        """Write Chroma's database ``database`` again, with its client closed: ``VACUUM INTO``
        the private ``copy``, fsynced and renamed over it, or VACUUM itself in WAL mode."""
        self._drop_client()
        try:
            connection = sqlite3.connect(str(database), isolation_level=None)
            try:
                if connection.execute("PRAGMA journal_mode").fetchone()[0] == "wal":
                    connection.execute("VACUUM")
                else:
                    os.close(open_private(copy, os.O_WRONLY | os.O_CREAT | os.O_TRUNC))
                    try:
                        connection.execute("VACUUM INTO ?", (str(copy),))
                    except BaseException:
                        copy.unlink(missing_ok=True)  # a full device: its room back
                        raise
            finally:
                connection.close()
            if copy.exists():
                with copy.open("rb") as f:
                    os.fsync(f.fileno())
                os.replace(copy, database)
                folder = os.open(database.parent, os.O_RDONLY)
                try:
                    os.fsync(folder)
                finally:
                    os.close(folder)
        finally:
            self._collection = self._open_collection()
