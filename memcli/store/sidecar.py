"""The SQLite database beside the Chroma store: what memcli keeps besides the memories.

It holds the recall index (``memcli.store.recall_index``), the graph memory (``memcli.store.graph``), the audit history of consolidated memories (Mem0's history of ADD / UPDATE /
DELETE events, old and new text) and the consolidation progress (which turns have been
through their day's summaries, their session's running memory and fact extraction, and
which daily summaries and portraits have been folded into the global ones).
``MemoryStore`` opens it inside its transactions, under the same file lock as Chroma.
Every write commits at once: Chroma is not transactional, so the two are kept consistent
by ordering and idempotent writes, not by one shared transaction.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from memcli.errors import MemcliError
from memcli.paths import open_private
from memcli.store import graph, recall_index
from memcli.store.candidates import candidates
from memcli.store.db import atomic, execute_in, left_beside, open_read_only, rows_in

SCHEMA_VERSION = 2
"""1: the history kept one event per (memory, event, old text, new text). 2: a person's
acts repeat an event (a note reopened twice by the same newer one, an edit undone and
made again), so an event is one per (memory, event, texts, related memory, time), and the
history is indexed by ``related_id`` (``Sidecar.replaced_by`` at each delete)."""
DONE, SKIPPED = "done", "skipped"
WAL_KEPT = 16 << 20
"""Bytes of the sidecar's write-ahead log kept after a checkpoint (``_write_ahead``)."""

_HISTORY_TABLE = """
CREATE TABLE IF NOT EXISTS history (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    memory_id TEXT NOT NULL,
    user TEXT NOT NULL,
    kind TEXT NOT NULL,
    event TEXT NOT NULL,
    old_text TEXT NOT NULL,
    new_text TEXT NOT NULL,
    at REAL NOT NULL,
    source_ids TEXT NOT NULL,
    related_id TEXT NOT NULL,
    UNIQUE (memory_id, event, old_text, new_text, related_id, at)
)"""
"""The history table of schema 2 (``SCHEMA_VERSION``), also what ``_migrate_history`` makes."""
_SCHEMA = (
    _HISTORY_TABLE
    + """;
CREATE INDEX IF NOT EXISTS history_by_user ON history (user, seq);
CREATE INDEX IF NOT EXISTS history_by_related ON history (related_id);
CREATE TABLE IF NOT EXISTS consolidated (
    user TEXT NOT NULL,
    stage TEXT NOT NULL,
    item_id TEXT NOT NULL,
    status TEXT NOT NULL,
    at REAL NOT NULL,
    PRIMARY KEY (user, stage, item_id)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS derived (
    source_id TEXT NOT NULL,
    memory_id TEXT NOT NULL,
    user TEXT NOT NULL,
    PRIMARY KEY (source_id, memory_id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS derived_by_memory ON derived (memory_id);
"""
)


@dataclass
class HistoryEntry:
    """One event in the life of a consolidated memory (Mem0's memory history).

    event: ADD, UPDATE or DELETE. old_text / new_text: the text before and after ("" when
    there is none). at: unix seconds of the change. source_ids: the turns that caused it.
    related_id: for a fact, the memory that replaced it (UPDATE) or that it replaced (ADD).
    """

    memory_id: str
    user: str
    kind: str
    event: str
    old_text: str
    new_text: str
    at: float
    source_ids: list[str] = field(default_factory=list)
    related_id: str = ""
    seq: int = 0


class Sidecar:
    """An open connection to the sidecar database. Raises MemcliError when the file was
    written by a newer memcli or is not a SQLite database."""

    def __init__(self, path: Path, connection: sqlite3.Connection | None = None) -> None:
        self.path = path
        migrating = False
        fresh = connection is None
        try:
            if connection is None:
                # SQLite makes the file (and its -wal and -shm, which take the file's mode) as the
                # umask says: make it 0600 first.
                os.close(open_private(path, os.O_RDWR | os.O_CREAT))
                # The service's request threads share this connection, one at a time under the
                # store's lock (``MemoryStore.transaction``).
                connection = sqlite3.connect(str(path), isolation_level=None, check_same_thread=False)
            self._db = connection
            # Deleted rows are overwritten with zeros where they lay, so a delete for good
            # needs no VACUUM to take their text out of the file (``compact``).
            self._db.execute("PRAGMA secure_delete = ON")
            version = self._db.execute("PRAGMA user_version").fetchone()[0]
            if version > SCHEMA_VERSION:
                raise MemcliError(
                    f"{path} has schema version {version}; this memcli reads version {SCHEMA_VERSION}: upgrade memcli"
                )
            if fresh:
                _write_ahead(self._db)
            migrating = 0 < version < 2
            if migrating:
                _migrate_history(self._db)
            # The tables of what texts state are made by their first use (``RecallIndex.said``).
            self._db.executescript(_SCHEMA + recall_index.SCHEMA + graph.SCHEMA)
            if version != SCHEMA_VERSION:  # a write: not on every opening (a full device refuses it)
                self._db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        except sqlite3.DatabaseError as exc:
            if connection is not None:  # closed here, not left to the garbage collector with its locks
                connection.close()
            if isinstance(exc, sqlite3.OperationalError):
                # a storage fault (a full device, a lock), named as such: the store maps the first to DiskFullError
                what = f"cannot upgrade its history to schema {SCHEMA_VERSION}" if migrating else "cannot open it"
                raise MemcliError(f"{path}: {what} ({exc})") from exc
            raise MemcliError(f"{path}: not a memcli database ({exc})") from exc
        self.index = recall_index.RecallIndex(self._db, spill=path.parent)
        """The recall index tables."""
        self.graph = graph.Graph(self._db)
        """The graph memory tables (``memcli.store.graph``)."""

    @classmethod
    def snapshot(cls, path: Path) -> Sidecar:
        """A copy in memory of the database at ``path`` (empty when there is none), read
        without writing a byte to its folder: for a store that cannot be written (a
        read-only mount, ``chattr +i``). What is written to the copy (a rebuilt row, a
        filled window vector) is lost when it closes. Costs the database's size in memory
        and about its size / disk speed in time (SQLite's online backup). Raises MemcliError
        when the file is not a memcli database."""
        copy = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
        if path.is_file():
            try:
                _backup(lambda: open_read_only(path), copy)
            except sqlite3.OperationalError as exc:
                # What the file lacks is beside it and cannot be read in a folder that cannot
                # be written: a write-ahead log without its -shm (a live folder copied in
                # part), or a journal to roll back (a write that failed for want of room, an
                # upgrade of the schema: "attempt to write a readonly database"). A writable
                # folder lets SQLite read the log or roll the journal back (which takes no
                # room: the file shrinks to what it was).
                if not os.access(path.parent, os.W_OK):
                    copy.close()
                    raise MemcliError(f"{path}: cannot read it ({_unreadable(path, exc)})") from None
                try:
                    _backup(lambda: sqlite3.connect(os.fspath(path)), copy)
                except sqlite3.DatabaseError as exc:
                    copy.close()
                    raise MemcliError(f"{path}: cannot read it ({exc})") from exc
            except sqlite3.DatabaseError as exc:
                copy.close()
                raise MemcliError(f"{path}: cannot read it ({exc})") from exc
        return cls(path, copy)

    def copies(self, ids: Sequence[str] | None = None) -> list[tuple[str, str, str, bytes]]:
        """(id, text, record, vector as float32 bytes) of the memories the recall index
        keeps a whole copy of, in the order they were first written; only those of ``ids``
        when given. What a read-only store reads instead of Chroma."""
        select = "SELECT memory_id, text, record, turn_vector FROM recall_index WHERE record != '{}'"
        if ids is None:
            return self._db.execute(select + " ORDER BY rowid").fetchall()
        return list(rows_in(self._db, select + " AND memory_id IN ({marks}) ORDER BY rowid", ids))

    def close(self) -> None:
        """Close the connection."""
        self._db.close()

    @contextlib.contextmanager
    def unsynced(self) -> Iterator[None]:
        """The block's commits not waited on to reach the disk (SQLite's ``synchronous =
        NORMAL`` in WAL mode), for what may be lost by a power cut but never by a kill: a
        reinforcement (``MemoryStore.reinforce``). A commit is in the write-ahead log, in
        the kernel's cache, once it returns, so a killed process (kill -9, a crash) loses
        nothing; a power cut may lose the last such commits (never the database: WAL stays
        consistent, and the next commit waited on, any other write, makes them durable with
        it). Without WAL (a database that could not be switched) commits stay waited on:
        ``NORMAL`` with a rollback journal may corrupt the file at a power cut. Saves the
        commit's fsync: about 2-10 ms of a recall, up to 20 on a busy machine.

        Entered inside a transaction, the block joins it and commits as it does (waited on:
        SQLite changes the setting only between transactions). A block that raises with a
        transaction of its own still open has it rolled back, so that the setting is FULL
        again and its error is the one raised."""
        if self._db.in_transaction or self._db.execute("PRAGMA journal_mode").fetchone()[0].lower() != "wal":
            yield
            return
        self._db.execute("PRAGMA synchronous = NORMAL")
        try:
            yield
        except BaseException:
            if self._db.in_transaction:
                with contextlib.suppress(sqlite3.Error):
                    self._db.execute("ROLLBACK")
            with contextlib.suppress(sqlite3.Error):
                self._db.execute("PRAGMA synchronous = FULL")
            raise
        self._db.execute("PRAGMA synchronous = FULL")

    # history -------------------------------------------------------------------

    def atomic(self) -> contextlib.AbstractContextManager[None]:
        """One SQLite transaction around the block, for writes that must land together
        (``memcli.store.db.atomic``: inside a transaction already, the block joins it)."""
        return atomic(self._db)

    def record(self, entries: Iterable[HistoryEntry]) -> None:
        """Append ``entries`` to the history. An entry is left out when it is the memory's
        latest event again (same event, old and new text, related memory; any time): a run
        resumed after a kill, or an import writing what it already wrote, does not repeat
        itself; and when the history holds it at the same time (an export's event imported
        twice). The same event after another one is recorded: a note reopened, superseded
        and reopened again by the same newer one tells both reopenings."""
        entries = list(entries)
        # each memory's latest event, read in pages of ids (SQLite takes a bare column of a
        # max() aggregate from the row of the max), then kept up to date as entries are added
        latest = {
            row[0]: tuple(row[2:])
            for row in rows_in(
                self._db,
                "SELECT memory_id, max(seq), event, old_text, new_text, related_id FROM history"
                " WHERE memory_id IN ({marks}) GROUP BY memory_id",
                sorted({e.memory_id for e in entries}),
            )
        }
        with atomic(self._db):
            for e in entries:
                event = (e.event, e.old_text, e.new_text, e.related_id)
                if latest.get(e.memory_id) == event:
                    continue
                added = self._db.execute(
                    "INSERT OR IGNORE INTO history"
                    " (memory_id, user, kind, event, old_text, new_text, at, source_ids, related_id)"
                    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (
                        e.memory_id,
                        e.user,
                        e.kind,
                        e.event,
                        e.old_text,
                        e.new_text,
                        e.at,
                        json.dumps(e.source_ids),
                        e.related_id,
                    ),
                ).rowcount
                if added:
                    latest[e.memory_id] = event

    def history(self, memory_id: str | None = None, user: str | None = None, limit: int = 0) -> list[HistoryEntry]:
        """History entries of one memory (oldest first), or the newest ``limit`` entries of
        ``user`` (0: all), newest first."""
        columns = "seq, memory_id, user, kind, event, old_text, new_text, at, source_ids, related_id"
        if memory_id is not None:
            rows = self._db.execute(f"SELECT {columns} FROM history WHERE memory_id = ? ORDER BY seq", (memory_id,))
        else:
            rows = self._db.execute(
                f"SELECT {columns} FROM history WHERE user = ? ORDER BY seq DESC LIMIT ?",
                (user, limit if limit > 0 else -1),
            )
        return [
            HistoryEntry(m, u, k, e, o, n, at, json.loads(s), r, seq)
            for seq, m, u, k, e, o, n, at, s, r in rows.fetchall()
        ]

    def replaced_by(self, memory_id: str) -> list[str]:
        """The ids of the memories whose history holds an UPDATE naming ``memory_id`` as
        the memory that replaced them (related_id), oldest first, each once. One lookup in
        the history's index by related_id."""
        rows = self._db.execute(
            "SELECT memory_id FROM history WHERE event = 'UPDATE' AND related_id = ? ORDER BY seq", (memory_id,)
        )
        return list(dict.fromkeys(r[0] for r in rows.fetchall()))

    def history_page(self, user: str | None, after: int, limit: int) -> list[HistoryEntry]:
        """Up to ``limit`` history entries of ``user`` (every user's when None) whose
        ``seq`` is above ``after``, oldest first: an export reads the history a page at a time."""
        where, args = ("seq > ? AND user = ?", [after, user]) if user is not None else ("seq > ?", [after])
        rows = self._db.execute(
            "SELECT seq, memory_id, user, kind, event, old_text, new_text, at, source_ids, related_id"
            f" FROM history WHERE {where} ORDER BY seq LIMIT ?",
            [*args, limit],
        )
        return [
            HistoryEntry(m, u, k, e, o, n, at, json.loads(s), r, seq)
            for seq, m, u, k, e, o, n, at, s, r in rows.fetchall()
        ]

    def history_ids(self, prefix: str) -> list[str]:
        """Distinct memory ids in the history that start with ``prefix``."""
        pattern = prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
        rows = self._db.execute("SELECT DISTINCT memory_id FROM history WHERE memory_id LIKE ? ESCAPE '\\'", (pattern,))
        return [r[0] for r in rows.fetchall()]

    def completions(self, what: str, prefix: str = "", user: str | None = None) -> list[tuple[str, str]]:
        """Shell completions of memory ids, users or kinds from the recall index
        (``memcli.store.candidates.candidates``)."""
        return candidates(self._db, what, prefix, user)

    # consolidation progress ------------------------------------------------------

    def mark_consolidated(self, user: str, stage: str, item_ids: Sequence[str], at: float, status: str = DONE) -> None:
        """Record that ``item_ids`` went through consolidation ``stage`` at ``at`` (unix
        seconds): ``done``, or ``skipped`` when the model's output stayed invalid."""
        with atomic(self._db):
            self._db.executemany(
                "INSERT OR REPLACE INTO consolidated (user, stage, item_id, status, at) VALUES (?, ?, ?, ?, ?)",
                [(user, stage, item_id, status, at) for item_id in item_ids],
            )

    def progress_page(
        self, user: str | None, after: tuple[str, str, str], limit: int
    ) -> list[tuple[str, str, str, str, float]]:
        """Up to ``limit`` rows (user, stage, item id, status, at) of the consolidation
        progress of ``user`` (every user's when None) that sort after ``after`` (user,
        stage, item id), in that order: an export reads the progress a page at a time."""
        where, args = "(user, stage, item_id) > (?, ?, ?)", list(after)
        if user is not None:
            where, args = f"{where} AND user = ?", [*args, user]
        rows = self._db.execute(
            f"SELECT user, stage, item_id, status, at FROM consolidated WHERE {where} ORDER BY user, stage, item_id LIMIT ?",
            [*args, limit],
        )
        return rows.fetchall()

    def restore_progress(self, rows: Sequence[tuple[str, str, str, str, float]]) -> None:
        """Record consolidation progress rows (user, stage, item id, status, at) as they
        were exported (``progress_page``); a row already recorded is replaced."""
        with atomic(self._db):
            self._db.executemany(
                "INSERT OR REPLACE INTO consolidated (user, stage, item_id, status, at) VALUES (?, ?, ?, ?, ?)", rows
            )

    def consolidated(self, user: str, stage: str) -> dict[str, str]:
        """Item id → status (``done`` or ``skipped``) of ``user``'s items through ``stage``."""
        rows = self._db.execute("SELECT item_id, status FROM consolidated WHERE user = ? AND stage = ?", (user, stage))
        return dict(rows.fetchall())

    def unmark_consolidated(self, item_ids: Sequence[str], stage: str | None = None) -> None:
        """Forget the consolidation progress of ``item_ids`` (in ``stage``, or in every stage)."""
        with atomic(self._db):
            if stage is None:
                # The key starts with the user: each statement reads the whole table, so one
                # for ``db.IN_PAGE`` ids rather than one an id.
                execute_in(self._db, "DELETE FROM consolidated WHERE item_id IN ({marks})", list(item_ids))
            else:
                self._db.executemany(
                    "DELETE FROM consolidated WHERE item_id = ? AND stage = ?", [(i, stage) for i in item_ids]
                )

    def unmark_stage(self, user: str, stage: str) -> None:
        """Forget all of ``user``'s consolidation progress through ``stage``."""
        with atomic(self._db):
            self._db.execute("DELETE FROM consolidated WHERE user = ? AND stage = ?", (user, stage))

    # the index of derived memories ----------------------------------------------------

    def record_derived(self, made: Iterable[tuple[str, str, Sequence[str]]]) -> None:
        """Record that each memory (id, user, source ids) was made from its sources: a row
        a source, kept beside any the memory already has (``prune_derived`` takes the old
        ones out once the new sources are stored). Written before the memory reaches
        Chroma, so a kill between the two leaves the index with more than the store, never
        less: a delete looks a memory up here to find what may quote it."""
        rows = [(source, memory_id, user) for memory_id, user, sources in made for source in sources]
        if rows:
            with atomic(self._db):
                self._db.executemany(
                    "INSERT OR IGNORE INTO derived (source_id, memory_id, user) VALUES (?, ?, ?)", rows
                )

    def prune_derived(self, made: Iterable[tuple[str, str, Sequence[str]]]) -> None:
        """Drop the rows of each memory (id, user, source ids) whose source it no longer
        cites (a regenerated summary stored with other sources); after the memory is stored."""
        with atomic(self._db):
            for memory_id, _, sources in made:
                held = {
                    r[0] for r in self._db.execute("SELECT source_id FROM derived WHERE memory_id = ?", (memory_id,))
                }
                if held - set(sources):
                    self._db.executemany(
                        "DELETE FROM derived WHERE source_id = ? AND memory_id = ?",
                        [(s, memory_id) for s in held - set(sources)],
                    )

    def forget_derived(self, ids: Sequence[str]) -> None:
        """Drop every row naming one of ``ids`` (deleted memories), as a source or as made."""
        with atomic(self._db):
            self._db.executemany("DELETE FROM derived WHERE source_id = ?", [(i,) for i in ids])
            self._db.executemany("DELETE FROM derived WHERE memory_id = ?", [(i,) for i in ids])

    def made_from(self, ids: Iterable[str]) -> set[str]:
        """The ids of the memories recorded as made from one of ``ids`` (one step: what cites
        them; the caller follows the steps). May name a memory no longer stored, or one that
        no longer cites it (a kill between ``record_derived`` and the store's write)."""
        return {
            r[0] for r in rows_in(self._db, "SELECT memory_id FROM derived WHERE source_id IN ({marks})", list(ids))
        }

    def derived_filled(self) -> bool:
        """Whether the index of derived memories holds every stored memory made from others
        (``fill_derived`` has run once on this store; every write keeps it since)."""
        return self._db.execute("SELECT 1 FROM index_meta WHERE key = 'derived_index'").fetchone() is not None

    def fill_derived(self, made: Iterable[tuple[str, str, Sequence[str]]]) -> None:
        """The migration of a store an older memcli wrote: record every memory made from
        others (id, user, source ids: all of them, read from the store) and mark the index
        filled, in one transaction."""
        with atomic(self._db):
            self.record_derived(made)
            self._db.execute("INSERT OR REPLACE INTO index_meta VALUES ('derived_index', '1')")

    def is_consolidated(self, user: str, stage: str, item_ids: Iterable[str]) -> set[str]:
        """Those of ``user``'s ``item_ids`` through ``stage`` (done or skipped)."""
        sql = "SELECT item_id FROM consolidated WHERE user = ? AND stage = ? AND item_id IN ({marks})"
        return {r[0] for r in rows_in(self._db, sql, list(item_ids), (user, stage))}

    # deleting for good -------------------------------------------------------------

    def scrub_history(self, user: str, gone: Mapping[str, str], at: float) -> int:
        """Take out of ``user``'s history the text of the memories ``gone`` (id → kind,
        deleted for good) and of every event caused by one of them (its ``source_ids`` cite one: a
        fact's UPDATE row holds the new fact's text), and record a PURGE event (id, time,
        no text) for each of ``gone``. The events stay, with empty texts; events of one
        memory that become the same (the same event, related memory and time: an event
        recorded twice with two texts) are kept once.
        The one exception: the UPDATE of a memory that is kept, superseded by one of
        ``gone`` (its ``source_ids`` name only its ``related_id``, the newer memory: what
        ``supersession_events`` writes), loses only the newer memory's text (``new_text``);
        its own text (``old_text``) is still the kept memory's, which the delete reopens.
        Returns how many events lost their text."""
        # Found by SQLite (json_each) in one pass over the user's events, rather than each
        # event with text read and its sources parsed here.
        ids = json.dumps(sorted(gone))
        found = self._db.execute(
            "SELECT seq, memory_id IN (SELECT value FROM json_each(?2)) OR event != 'UPDATE'"
            " OR source_ids != json_array(related_id) FROM history"
            " WHERE user = ?1 AND (old_text != '' OR new_text != '')"
            " AND (memory_id IN (SELECT value FROM json_each(?2))"
            " OR EXISTS (SELECT 1 FROM json_each(history.source_ids) WHERE value IN (SELECT value FROM json_each(?2))))",
            (user, ids),
        ).fetchall()
        scrub = [seq for seq, whole in found if whole]
        superseded = [seq for seq, whole in found if not whole]
        with atomic(self._db):
            for seq in scrub:
                self._db.execute("UPDATE OR IGNORE history SET old_text = '', new_text = '' WHERE seq = ?", (seq,))
            for seq in superseded:
                self._db.execute("UPDATE OR IGNORE history SET new_text = '' WHERE seq = ?", (seq,))
            # An event that became the same as one kept (UPDATE OR IGNORE left it): kept once.
            self._db.executemany(
                "DELETE FROM history WHERE seq = ? AND (old_text != '' OR new_text != '')", [(s,) for s in scrub]
            )
            self._db.executemany("DELETE FROM history WHERE seq = ? AND new_text != ''", [(s,) for s in superseded])
            self._db.executemany(
                "INSERT OR IGNORE INTO history (memory_id, user, kind, event, old_text, new_text, at, source_ids, related_id)"
                " VALUES (?, ?, ?, 'PURGE', '', '', ?, '[]', '')",
                [(memory_id, user, kind, at) for memory_id, kind in sorted(gone.items())],
            )
        return len(found)

    def forget_user(self, user: str) -> None:
        """Delete every history event, all consolidation progress, the index of derived
        memories and the graph of ``user`` (a user purged whole: their memories are deleted
        by ``MemoryStore.delete``)."""
        with atomic(self._db):
            self._db.execute("DELETE FROM history WHERE user = ?", (user,))
            self._db.execute("DELETE FROM consolidated WHERE user = ?", (user,))
            self._db.execute("DELETE FROM derived WHERE user = ?", (user,))
        self.graph.forget_user(user)

    def compact(self) -> None:
        """Leave nothing of deleted rows in the database's files. This connection deletes
        with ``secure_delete`` (SQLite overwrites a deleted row's bytes with zeros, in the
        page it writes to the write-ahead log), so what is left is to copy those pages over
        the old ones in the file and to empty the log, which still holds the rows as they
        were written (a checkpoint, TRUNCATE: the log cut to 0 bytes); before that, once, the
        file is written again by a VACUUM under ``secure_delete`` (the first compaction of a
        file an older memcli wrote: it may hold deleted rows in free pages; costs about the
        file's size in writes, then never again). Raises MemcliError when another connection
        reads the database all along the connection's busy timeout (5 s), so the log cannot
        be emptied (the deleted text stays in it, and in the file's old pages, until a
        compaction that can)."""
        if self._db.execute("SELECT value FROM index_meta WHERE key = 'secure_delete'").fetchone() is None:
            self._db.execute("VACUUM")
            self._db.execute("INSERT OR REPLACE INTO index_meta VALUES ('secure_delete', '1')")
        # After the VACUUM: in WAL mode it writes the new file into the log, not over the old.
        busy = self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0]
        if busy:
            raise MemcliError(
                f"{self.path}: another process is reading it, so its write-ahead log ({self.path.name}-wal) "
                "could not be emptied"
            )


def _write_ahead(db: sqlite3.Connection) -> None:
    """Put the database of ``db`` in WAL mode (kept in the file), every commit waited on
    to reach the disk (``synchronous = FULL``, as with the rollback journal before): a
    commit is one append and one fsync of the log where the rollback journal took three
    fsyncs and an unlink; a reinforcement commits unsynced (``Sidecar.unsynced``). A
    database that cannot be switched now (a full device, another connection reading)
    stays as it is: it works the same, slower. The log is cut back to ``WAL_KEPT`` bytes
    after each checkpoint (SQLite's every 1,000 pages), not left at the size of the
    largest transaction while a service holds the database open."""
    with contextlib.suppress(sqlite3.OperationalError):
        db.execute("PRAGMA journal_mode = WAL")
    db.execute("PRAGMA synchronous = FULL")
    db.execute(f"PRAGMA journal_size_limit = {WAL_KEPT}")


def _backup(source: Callable[[], sqlite3.Connection], copy: sqlite3.Connection) -> None:
    """Copy the database that ``source`` opens into ``copy`` (SQLite's online backup),
    closing it after. Raises sqlite3.DatabaseError."""
    connection = source()
    try:
        connection.backup(copy)
    finally:
        connection.close()


def _unreadable(path: Path, exc: sqlite3.OperationalError) -> str:
    """Why the database at ``path``, in a folder that cannot be written, cannot be read
    (``exc``: SQLite's error), and what to do."""
    left = left_beside(path)
    if left == "-wal":
        return (
            f"its write-ahead log {path.name}-wal cannot be read without its {path.name}-shm in a folder "
            f"that cannot be written: copy {path.name} with its -wal and -shm, or use memcli export"
        )
    if left == "-journal":
        return "a journal is left to roll back, in a folder that cannot be written"
    return str(exc)


def _migrate_history(db: sqlite3.Connection) -> None:
    """Schema 1 to 2 (``SCHEMA_VERSION``): the history table made again with its new key,
    every event kept in its order (its ``seq``), in one transaction with the new version
    (a kill leaves schema 1 whole, migrated again at the next opening). Costs one copy of the
    table (about its size in writes), once."""
    if db.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'history'").fetchone() is None:
        return
    columns = "seq, memory_id, user, kind, event, old_text, new_text, at, source_ids, related_id"
    with atomic(db):
        db.execute("ALTER TABLE history RENAME TO history_schema1")
        db.execute("DROP INDEX IF EXISTS history_by_user")
        db.execute(_HISTORY_TABLE)
        db.execute(f"INSERT INTO history ({columns}) SELECT {columns} FROM history_schema1 ORDER BY seq")
        db.execute("DROP TABLE history_schema1")
        db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
