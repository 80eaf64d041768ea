"""The engine's imports and exports: a file's records stored in batches sized by time, with
room checked first and Ctrl-C held back while a batch is written; a memcli export read
back as it was; the export itself (``memcli.library.engine.Engine``)."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from memcli import __version__
from memcli.errors import (
    BadInputError,
    DiskFullError,
    EmbedderChangedError,
    Interrupted,
    StoreServerError,
    UsageError,
)
from memcli.formats.export import PAGE as EXPORT_PAGE
from memcli.formats.export import Archive, export_pages, header, open_archive
from memcli.formats.importers import open_records
from memcli.library import engine_models
from memcli.library.interrupts import deferred_interrupt
from memcli.memory import Memory
from memcli.models.batching import batch_progress, import_batches
from memcli.models.embedding import Progress, embedder_identity, export_held, same_embedder
from memcli.paths import device_of
from memcli.store.sidecar import HistoryEntry
from memcli.store.space import room_measured
from memcli.store.store import REINDEXING

if TYPE_CHECKING:
    pass
from memcli.library.engine_models import RETENTION_FROM, Embedded, ImportReport


class FileWork:
    """The import and export work of ``Engine``."""

    def import_file(
        self,
        path: Path,
        fmt: str | None = None,
        user: str | None = None,
        conversation: str | None = None,
        progress: Progress | None = None,
        retention_from: str = "import",
    ) -> ImportReport:
        """Import a LoCoMo, MemoryBank, JSONL, text or memcli export file (format
        auto-detected when None).

        The file is parsed twice, a record at a time for text and JSONL
        (``memcli.formats.importers.open_records``): first whole, so that a malformed file stores
        nothing (and to count it), then to store it in batches (``engine_models.IMPORT_BATCH``,
        ``engine_models.IMPORT_BATCH_SECONDS``), each embedded and committed before the next is read
        (``add_memories``), so memory stays bounded whatever the file's size. Idempotent: ids derive from
        content, so memories already stored are skipped, and an interrupted import run
        again stores the rest. Each memory keeps the time of its conversation
        (``created_at``: shown, dated and recalled by it); its retention clock starts at
        the import (``retained_from``), so that old logs do not fade the moment they
        arrive, unless ``retention_from`` is "conversation" (simulations replaying a
        timeline). ``progress`` gets (memories done, memories found) as the batches are
        embedded and stored. A memcli export is imported as it was exported, state,
        history and consolidation progress included (``_import_export``; ``retention_from``
        does not apply to it, and a ``user`` other than the file's is refused).

        Ctrl-C (KeyboardInterrupt) or an ``Interrupted`` from ``progress`` (the service's
        client cancelled) stops it: the batches committed stay, and the report says
        ``interrupted``. A device that clearly has no room for the memories not stored yet
        refuses it before anything is stored (``_import_room``), and one that fills during
        it stops it after what was committed; the report says so in ``stopped``, counting
        what is stored. A Chroma server that goes away during it stops it the same way, and
        its StoreServerError counts what is stored. Raises UsageError (unknown format or retention_from,
        --conversation on a non-LoCoMo file) or BadInputError (unreadable or malformed
        file).

        The embedder's background export (``Embedder.export_held``) waits for the end of
        the import: a first import in a new home would share the machine with it.
        """
        with export_held(self.embedder):
            return self._import_file(path, fmt, user, conversation, progress, retention_from)

    def _import_file(
        self,
        path: Path,
        fmt: str | None,
        user: str | None,
        conversation: str | None,
        progress: Progress | None,
        retention_from: str,
    ) -> ImportReport:
        """``import_file`` itself."""
        started = time.perf_counter()
        if retention_from not in RETENTION_FROM:
            raise UsageError(f"unknown --retention-from {retention_from!r}; choose {' or '.join(RETENTION_FROM)}")
        now = self.clock()
        used, records = open_records(path, fmt, self.user(user), now, conversation)
        if conversation is not None and used != "locomo":
            raise UsageError("--conversation applies to LoCoMo files only")
        if used == "memcli":
            return self._import_export(path, progress, started, user)
        sizes: dict[str, int] = {}
        users: Counter[str] = Counter()
        for memory in records():
            if memory.id not in sizes:
                sizes[memory.id] = len(memory.text.encode("utf-8"))
                users[memory.user] += 1
        if not sizes:
            raise BadInputError(f"{path}: no memories found in this {used} file")
        found = len(sizes)
        refused, existing = self._import_room(sizes)
        sizes.clear()
        if refused:
            return ImportReport(
                str(path), used, found, 0, existing, dict(users), time.perf_counter() - started, stopped=refused
            )

        def prepare(memory: Memory) -> None:
            memory.strength = self.initial_strength(memory)
            if retention_from == "import" and memory.created_at < now:
                memory.retained_from = now

        added, done, interrupted, full = self._store_in_batches(records(), found, progress, prepare)
        self._server_gone(full, found, added, done)
        return ImportReport(
            str(path),
            used,
            found,
            added,
            done - added,
            dict(users),
            time.perf_counter() - started,
            interrupted,
            self._stopped(full, found, added, done),
        )

    def _import_room(self, sizes: Mapping[str, int]) -> tuple[str, int]:
        """Whether the device of the store clearly has no room for an import, before
        anything is stored: the memories found (``sizes``: id -> bytes of text) not stored
        yet take more than the free space by the measured figures (``room_measured``; the
        batches are checked again, with room to spare, as they are written). Returns the
        DiskFullError message that refuses it ("nothing was stored"; empty when there is
        room) and how many of the memories are stored already. Raises ReadOnlyStoreError
        (DiskFullError for a store opened from its copy for want of room) before anything
        is read, as the first write would."""
        free = self.store.free_bytes()
        if free is None:
            return "", 0
        with self.store.transaction():
            if self.store.read_only:  # refused in the same transaction: no "read-only store" notice before the error
                raise self.store.read_only_error()
            existing = self.store.existing_ids(list(sizes))
        new = [size for memory_id, size in sizes.items() if memory_id not in existing]
        if not new:
            return "", len(existing)
        dimension = len(self.embedder.embed_one("memcli"))
        needed = room_measured(len(new), dimension, sum(new))
        if free >= needed:
            return "", len(existing)
        return (
            f"no space left on {device_of(self.paths.data_dir)}: the import's {len(new)} new memories need about "
            f"{needed / 2**20:.1f} MiB, {free / 2**20:.1f} MiB are free; nothing was stored"
        ), len(existing)

    @staticmethod
    def _server_gone(cut: DiskFullError | StoreServerError | None, found: int, added: int, done: int) -> None:
        """Raise the StoreServerError of an import the store's Chroma server stopped
        (``cut``), its message counting what the server took before it went away (a batch
        it was given as it went may be stored too: the same import run again skips it);
        nothing when the import was not stopped by the server, or stored everything all the same."""
        if not isinstance(cut, StoreServerError) or done >= found:
            return
        raise StoreServerError(
            f"{cut.reason}; the import stopped: {done} of {found} memories are stored ({added} new, "
            f"{done - added} already stored); run the same import again once the server is back to store the "
            f"other {found - done} (what is stored is skipped)",
            cut.reason,
        ) from cut

    @staticmethod
    def _stopped(full: DiskFullError | StoreServerError | None, found: int, added: int, done: int) -> str:
        """The message of an import stopped by a full device (``full``), counting what it
        stored; empty when it stored everything all the same (Chroma took the last batch,
        the recall index did not: it is repaired from Chroma at the next command)."""
        stored = done
        if not isinstance(full, DiskFullError) or stored >= found:
            return ""
        return (
            f"{full.message.split(';')[0]}; the import stopped: {stored} of {found} memories are stored "
            f"({added} new, {done - added} already stored), {found - stored} are not: free some space and run "
            "the same import again to store them"
        )

    def _store_in_batches(
        self,
        memories: Iterable[Memory],
        found: int,
        progress: Progress | None,
        prepare: Callable[[Memory], None] | None = None,
        vectors: dict[str, Any] | None = None,
    ) -> tuple[int, int, bool, DiskFullError | StoreServerError | None]:
        """Store an import's ``memories`` (``found`` of them, duplicates left out) in
        batches (``engine_models.IMPORT_BATCH``, ``engine_models.IMPORT_BATCH_SECONDS``), each embedded while the one
        before is committed by a second thread (``add_memories`` in two halves), so the
        embedder does not wait for the store and memory stays bounded (two batches)
        whatever the file's size; ``prepare`` readies each memory of a batch before it is stored;
        ``vectors``: id -> stored vector to use instead of embedding (each taken out as its
        batch is stored). Returns (added, reached, interrupted, full): Ctrl-C or an
        ``Interrupted`` from ``progress`` stops it after the batches committed; so does a
        full device (``full``: its DiskFullError), what of its batch reached the store counted,
        and a Chroma server that cannot be used any more (``full``: its StoreServerError)."""
        seen: set[str] = set()
        counts = {"added": 0, "done": 0}
        interrupted = False
        full: DiskFullError | StoreServerError | None = None
        size = [min(64, engine_models.IMPORT_BATCH)]
        batches = import_batches(memories, size, seen)
        # One batch is stored (a thread) while the next is embedded (this one): the store
        # is taken only to check what a batch already holds, between two writes.
        pending: Future[None] | None = None

        def store(part: Embedded) -> None:
            """``part`` committed and counted by the store thread itself, then told as
            saved at once: a Ctrl-C that reaches the main thread anywhere (even between
            ``submit`` and its bookkeeping) cannot leave a written batch uncounted, and a
            service killed while the next batch embeds has said what it stored. A full
            device (or a server gone) counts what of the batch reached the store, and raises
            its DiskFullError (StoreServerError)."""
            stored: set[str] = set()
            try:
                self._add_embedded(part, stored)
            except (DiskFullError, StoreServerError):
                counts["added"] += len(stored)
                counts["done"] += len(stored)
                raise
            counts["added"] += len(stored)
            counts["done"] += len(part.batch)
            self.tell_saved(stored=counts["added"], total=found)

        def finish() -> None:
            """Wait for the batch being stored; raises its DiskFullError or StoreServerError."""
            nonlocal pending
            if pending is None:
                return
            pending.result()  # a Ctrl-C while it waits leaves it pending (the executor waits for it)
            pending = None
            if progress is not None:
                progress(counts["done"], found)

        def found_in(batch: list[Memory] | None) -> Embedded | None:
            """``batch`` prepared, and what of it the store lacks (None at the end)."""
            if batch is None:
                return None
            for memory in batch:
                if prepare is not None:
                    prepare(memory)
            return self._new_of(batch)

        def embedded(part: Embedded, base: int) -> Embedded:
            """``part`` embedded (``base``: the memories done once the batch stored meanwhile
            is); the next batch sized from the time it took a memory."""
            started = time.perf_counter()
            batch = part.batch
            given = {m.id: vectors.pop(m.id) for m in batch if m.id in vectors} if vectors else None
            within = None if progress is None else batch_progress(progress, base, len(batch), found)
            self._embed(part, progress=within, vectors=given)
            each = (time.perf_counter() - started) / len(batch)
            size[0] = max(
                min(16, engine_models.IMPORT_BATCH),
                min(engine_models.IMPORT_BATCH, int(engine_models.IMPORT_BATCH_SECONDS / max(each, 1e-6))),
            )
            return part

        # Leaving the ``with`` waits for the batch being stored (its write is not cut), so
        # the counts returned include every batch written, whatever stopped the import.
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="memcli-import-store") as writer:
            try:
                current = found_in(next(batches, None))
                base = 0
                while current is not None:
                    embedded(current, base)  # while the previous batch is stored
                    finish()
                    following = found_in(next(batches, None))  # the store is free: nothing written now
                    base = counts["done"] + len(current.batch)  # the store thread is idle: exact
                    pending = writer.submit(store, current)
                    current = following
                finish()
            except (KeyboardInterrupt, Interrupted):
                interrupted = True
            except (DiskFullError, StoreServerError) as exc:
                full = exc
        return counts["added"], counts["done"], interrupted, full

    def _import_export(
        self, path: Path, progress: Progress | None, started: float, user: str | None = None
    ) -> ImportReport:
        """Import a memcli export (``memcli.formats.export``) as it was exported: every memory with
        its state (strength, recall count, pins, archiving, feedback, dates...), then the
        consolidation progress and the history, and the supersession links the history
        lacks (``_link_superseded``). The file is read whole first, so a
        malformed one stores nothing; memories already stored are skipped (and keep their
        state), so importing it twice adds nothing. The file's vectors are stored as they
        are when it has them and its embedder is the configured one, else the memories are
        embedded again. Ctrl-C stops it as it stops any import (``_store_in_batches``).
        Raises BadInputError (malformed file, no memories), UsageError (``user`` given, and
        the file holds memories of another user: an export keeps its users)."""
        archive = open_archive(path)
        users: Counter[str] = Counter()
        sizes: dict[str, int] = {}
        reuse = bool(archive.header.get("vectors")) and same_embedder(
            archive.embedder, embedder_identity(self.embedder)
        )
        dimension = 0
        for kind, item in archive.records():
            if kind == "memory" and item[0].id not in sizes:
                sizes[item[0].id] = len(item[0].text.encode("utf-8"))
                users[item[0].user] += 1
                if reuse and item[1] is not None:
                    # vectors stored as they are must have the embedder's dimension (Chroma refuses others)
                    dimension = dimension or int(
                        getattr(self.embedder, "dimension", 0) or len(self.embedder.embed_one("dimension"))
                    )
                    if len(item[1]) // 4 != dimension:
                        raise BadInputError(
                            f"{path}: memory {item[0].id} has a vector of {len(item[1]) // 4} dimensions;"
                            f" the embedder {archive.embedder} makes {dimension}"
                        )
        if not sizes:
            raise BadInputError(f"{path}: no memories found in this memcli file")
        if user is not None and set(users) != {user}:
            # an export keeps its users: --user cannot move them, and silently ignoring it misleads
            raise UsageError(
                f"{path} is a memcli export of {', '.join(sorted(users))}; it is imported as it was exported,"
                " to its own users: import it without --user"
            )
        found = len(sizes)
        refused, existing = self._import_room(sizes)
        sizes.clear()  # the storing pass keeps its own
        if refused:
            return ImportReport(
                str(path), "memcli", found, 0, existing, dict(users), time.perf_counter() - started, stopped=refused
            )
        vectors: dict[str, Any] = {}

        def memories() -> Iterator[Memory]:
            for kind, item in archive.records():
                if kind == "memory":
                    memory, vector = item
                    if reuse and vector is not None:
                        vectors[memory.id] = np.frombuffer(vector, dtype=np.float32)
                    yield memory

        added, done, interrupted, full = self._store_in_batches(memories(), found, progress, vectors=vectors)
        self._server_gone(full, found, added, done)
        if not interrupted and full is None:
            try:
                self._restore_records(archive)
                self._link_superseded(archive)
            except KeyboardInterrupt:
                interrupted = True
        return ImportReport(
            str(path),
            "memcli",
            found,
            added,
            done - added,
            dict(users),
            time.perf_counter() - started,
            interrupted,
            self._stopped(full, found, added, done),
        )

    def _restore_records(self, archive: Archive) -> None:
        """Record an export's consolidation progress and history in the sidecar, a page
        (``memcli.formats.export.PAGE``) at a time; an event or row already recorded is recorded once."""
        history: list[HistoryEntry] = []
        rows: list[tuple[str, str, str, str, float]] = []

        def flush() -> None:
            with deferred_interrupt(), self.store.transaction():
                if self.store.read_only:
                    raise self.store.read_only_error()
                self.store.sidecar.record(history)
                self.store.sidecar.restore_progress(rows)
            history.clear()
            rows.clear()

        for kind, item in archive.records():
            if kind == "history":
                history.append(item)
            elif kind == "progress":
                rows.append(item)
            if len(history) + len(rows) >= EXPORT_PAGE:
                flush()
        flush()

    def _link_superseded(self, archive: Archive) -> None:
        """Write the history's supersession links of an export's superseded memories that
        the history lacks (an export without its history: ``superseded_by`` is kept, the
        events are not), as ``Changes.supersede`` writes them: an UPDATE of the older memory
        (related_id: the newer) and an ADD of the newer (related_id: the older), at the time
        the older one ended (``valid_to``). ``Changes.reopen`` finds what a memory
        superseded by these rows only (a delete reads no memory whole), so without them an
        edit or delete of the newer one would not reopen it. After the history is restored
        (a link it holds is not written again), a page (``memcli.formats.export.PAGE``) of
        superseded memories at a time; a memory no longer superseded by the same one in the
        store is left. Every superseded memory of the file is looked at, not only those
        this import stored: importing the file again writes what a kill left out."""
        # heavy: memcli.recall.changes reads what texts state (memcli.text.updates compiles its
        # patterns at import); an import of an export needs it, a list or show does not
        from memcli.recall.changes import supersession_events

        pairs: list[tuple[str, str]] = []

        def flush() -> None:
            with deferred_interrupt(), self.store.transaction():
                if self.store.read_only:
                    raise self.store.read_only_error()
                sidecar = self.store.sidecar
                found = {m.id: m for m in self.store.get_many(list({i for pair in pairs for i in pair}))}
                entries: list[HistoryEntry] = []
                for older_id, newer_id in pairs:
                    older, newer = found.get(older_id), found.get(newer_id)
                    if older is None or older.superseded_by != newer_id or older_id in sidecar.replaced_by(newer_id):
                        continue
                    if newer is not None:
                        entries += supersession_events(older, newer, older.valid_to)
                    else:  # the newer one not in the file: the UPDATE alone, naming it
                        entries.append(
                            HistoryEntry(
                                older.id,
                                older.user,
                                older.kind,
                                "UPDATE",
                                older.text,
                                "",
                                older.valid_to,
                                [newer_id],
                                newer_id,
                            )
                        )
                sidecar.record(entries)
            pairs.clear()

        for kind, item in archive.records():
            if kind == "memory" and item[0].superseded_by:
                pairs.append((item[0].id, item[0].superseded_by))
                if len(pairs) >= EXPORT_PAGE:
                    flush()
        if pairs:
            flush()

    def export(
        self, user: str | None = None, all_users: bool = False, history: bool = False, vectors: bool = False
    ) -> tuple[dict[str, Any], Iterator[tuple[str, list[str]]]]:
        """The header of an export of ``user``'s memories (every user's with ``all_users``)
        and its lines, a page at a time (``memcli.formats.export.export_pages``), journaled
        memories stored first. The header names the embedder that made the store's
        vectors (the configured one for an empty store). Raises EmbedderChangedError for ``vectors`` while a reindex
        is unfinished (the vectors are of two embedders)."""

        self.flush_pending()
        with self.store.transaction():
            recorded = self.store.embedder_record()
        if vectors and recorded is not None and recorded.startswith(REINDEXING):
            raise EmbedderChangedError(
                "a reindex of the store was interrupted: run memcli reindex before exporting vectors"
            )
        who = None if all_users else self.user(user)
        head = header(recorded or embedder_identity(self.embedder), who, history, vectors, self.clock(), __version__)
        return head, export_pages(self.store, head, who, history, vectors)
