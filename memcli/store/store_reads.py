"""Reading the store: memories by id or prefix, a user's memories a page at a time, vectors,
users and counts, from the recall index's mirror once it is checked against Chroma
(``memcli.store.store.MemoryStore``)."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from memcli.errors import (
    NotFoundError,
)
from memcli.memory import Memory
from memcli.store import chroma, snapshot
from memcli.store.chroma import (
    _GET_PAGE,
    MIN_PREFIX,
    WINDOWS_SKIPPED,
    Embed,
    _where,
    short_prefix,
)
from memcli.store.db import open_read_only
from memcli.store.index import UserIndex
from memcli.store.recall_index import INDEX_VERSION


class StoreReads:
    """The reads of ``MemoryStore``."""

    def existing_ids(self, ids: Sequence[str]) -> set[str]:
        """The subset of ``ids`` already in the store."""
        found: set[str] = set()
        with self.transaction():
            for start in range(0, len(ids), chroma._GET_PAGE):
                found.update(self._col.get(ids=list(ids[start : start + chroma._GET_PAGE]), include=[])["ids"])
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
            db = open_read_only(self.paths.database, timeout=0.5)
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

    def has_memories(self, user: str) -> bool:
        """Whether ``user`` has memories in the store. Only ``user``'s rows of the recall
        index are checked (``check_recall_index``), so asking about one user does not
        rebuild the stale rows of every other, as ``users`` would; read from Chroma when
        ``user``'s rows cannot be trusted."""
        with self.transaction():
            if self._mirrored(user):
                return self.sidecar.index.has(user)
            return bool(self._ids(user))

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
        """The results of ``_col.get(where=..., include=...)``, ``chroma._GET_PAGE`` memories at a
        time (Chroma's metadata brought up to date first: ``flush_behind``)."""
        if "metadatas" in include:
            self._flush_behind()
        offset = 0
        while True:
            page = self._col.get(where=where, include=include, limit=chroma._GET_PAGE, offset=offset)
            yield page
            if len(page["ids"]) < chroma._GET_PAGE:
                return
            offset += chroma._GET_PAGE

    def count(self, user: str | None = None) -> int:
        """How many memories ``user`` has (all users when None)."""
        with self.transaction():
            if user is None:
                return int(self._col.count())
            return len(self._col.get(where={"user": user}, include=[])["ids"])
