"""The recall index: what recall scores, on disk beside the Chroma store, under the same ids.

Chroma holds the memories (text, metadata, embedding) and stays their record; this index,
in the SQLite sidecar, holds what recall reads for every query, so that a query touches no
Chroma at all. ``recall_index`` has one row per memory, with:

- the fields recall filters on, the memory's own vector (a copy of its Chroma embedding)
  and its *window* vector, the embedding of the turn with its previous and next turn of
  the same session (a question often names what one turn says and another answers);
- the three fields of its lexical document (``memcli.text.lexical``): its own text, its
  *context* (the two previous turns and the next one of its session) and its day
  (``8 May 2023``);
- a copy of its text and metadata (``record``), which ``MemoryStore`` reads instead of
  Chroma when it reads many memories and the copy is known to be whole.

A memory's neighbours are the turns of its (user, session) in time order; other kinds
have no neighbours. Every write to the store goes through ``put``, ``set_state`` or
``remove``, which keep the neighbours' context and windows current. A window vector that
could not be computed at write time (a new neighbour arrived, one was deleted, the index
was rebuilt) is left empty and filled by ``fill_windows`` before the next query, so that
writes never need the embedder.

Each write marks its users *dirty* before Chroma is written and clean once the index is,
so a crash in between leaves a mark; a dirty user, a user whose ids differ from Chroma's,
or an index written by another version of this code is rebuilt from the store.

Every write also records what it changed, so that an index loaded in memory
(``memcli.store.index.UserIndex``) is brought up to date by reading the changed rows alone
(``changes``): each write takes the next number of a counter kept in ``index_meta`` and
stamps it on every row it inserts or updates (``seq``) and on every row it deletes
(``recall_removed``). A user's rows written whole (a rebuild, or a user's first memories)
get a new *epoch*: what was loaded before is to be loaded again whole.
"""

from __future__ import annotations

import sqlite3
import uuid
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from memcli.dates import spoken_day
from memcli.memory import Kind, Memory
from memcli.store.db import atomic, execute_each, rows_in
from memcli.store.index import IndexChanges, UserIndex, has_neighbours

if TYPE_CHECKING:
    from memcli.store.statements import Said

INDEX_VERSION = 3
"""Bump when what the index stores changes: older indexes are then rebuilt."""
CONTEXT_BEFORE, CONTEXT_AFTER = 2, 1
"""Turns of the same session in a memory's lexical context column (measured best of 1-3 each)."""
LOAD_PAGE = 5_000
"""Rows ``load`` reads at a time (each about 5 KB as Python objects with 384 dimensions:
a million rows read at once would hold 5 GB). Measured at 100,000 rows: a page of 20,000
peaked 240 MB higher than one of 5,000 (its rows and what each row's pass makes of them,
freed heap glibc keeps), for no less CPU."""
WINDOW_BEFORE, WINDOW_AFTER = 1, 1
"""Turns of the same session embedded with a memory in its window vector."""

SCHEMA = """
CREATE TABLE IF NOT EXISTS recall_index (
    rowid INTEGER PRIMARY KEY,
    memory_id TEXT NOT NULL UNIQUE,
    user TEXT NOT NULL,
    kind TEXT NOT NULL,
    session TEXT NOT NULL,
    speaker TEXT NOT NULL,
    created_at REAL NOT NULL,
    archived INTEGER NOT NULL,
    ended INTEGER NOT NULL,
    text TEXT NOT NULL,
    caption INTEGER NOT NULL,
    own TEXT NOT NULL,
    window TEXT NOT NULL,
    turn_vector BLOB NOT NULL,
    window_vector BLOB,
    seq INTEGER NOT NULL DEFAULT 0,
    context TEXT NOT NULL DEFAULT '',
    spoken_day TEXT NOT NULL DEFAULT '',
    record TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX IF NOT EXISTS recall_by_session ON recall_index (user, session, created_at);
CREATE INDEX IF NOT EXISTS recall_by_kind ON recall_index (user, kind);
CREATE INDEX IF NOT EXISTS recall_missing_windows ON recall_index (user) WHERE window_vector IS NULL;
CREATE TABLE IF NOT EXISTS recall_removed (user TEXT NOT NULL, row INTEGER NOT NULL, seq INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS recall_removed_by_user ON recall_removed (user, seq);
CREATE TABLE IF NOT EXISTS index_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS metadata_behind (memory_id TEXT PRIMARY KEY);
"""
SEQ_SCHEMA = "CREATE INDEX IF NOT EXISTS recall_by_seq ON recall_index (user, seq)"
"""Created once the ``seq`` column exists (an index of version 1 gains it first)."""
UNRECORDED_SCHEMA = "CREATE INDEX IF NOT EXISTS recall_unrecorded ON recall_index (user) WHERE record = '{}'"
"""Rows without a copy of their memory (written by an older memcli): created once the
``record`` column exists."""
NEWER_COLUMNS = (
    ("seq", "INTEGER NOT NULL DEFAULT 0"),
    ("context", "TEXT NOT NULL DEFAULT ''"),
    ("spoken_day", "TEXT NOT NULL DEFAULT ''"),
    ("record", "TEXT NOT NULL DEFAULT '{}'"),
)
"""Columns an index of an older version may lack, with their types."""
ROW_COLUMNS = (
    "memory_id, rowid, kind, speaker, created_at, archived, ended, text, caption, session, turn_vector,"
    " COALESCE(window_vector, turn_vector), own, context, spoken_day"
)
"""What ``load`` and ``changes`` read of each row, in the order of ``UserIndex._put_rows``.
A window vector still to fill reads as the memory's own vector: what recall uses when the
windows could not be stored (a full device, ``MemoryStore.optional_write``)."""


def _blob(vector: Sequence[float] | np.ndarray) -> bytes:
    return np.asarray(vector, dtype=np.float32).tobytes()


def window_text(owns: Sequence[str], i: int) -> str:
    """The window of the ``i``-th of a session's turns (their ``index_text()`` in time order)."""
    return "\n".join(owns[max(0, i - WINDOW_BEFORE) : i + WINDOW_AFTER + 1])


def context_text(owns: Sequence[str], i: int) -> str:
    """The lexical context of the ``i``-th of a session's turns: its neighbours' texts."""
    return "\n".join(
        owns[j] for j in range(max(0, i - CONTEXT_BEFORE), min(len(owns), i + CONTEXT_AFTER + 1)) if j != i
    )


def batch_windows(memories: Sequence[Memory]) -> list[str]:
    """The window texts of the turns of ``memories`` with neighbours among ``memories``
    themselves (a batch that holds whole sessions, as an import does, holds every
    neighbour): what to embed ahead of ``RecallIndex.put``."""
    sessions: dict[tuple[str, str], list[Memory]] = {}
    for memory in memories:
        if has_neighbours(memory.kind, memory.session):
            sessions.setdefault((memory.user, memory.session), []).append(memory)
    texts: list[str] = []
    for turns in sessions.values():
        owns = [m.index_text() for m in sorted(turns, key=lambda m: (m.created_at, m.id))]
        texts.extend(window_text(owns, i) for i in range(len(owns)) if len(owns) > 1)
    return list(dict.fromkeys(texts))


_INSERT_ROW = (
    "INSERT INTO recall_index (memory_id, user, kind, session, speaker, created_at, archived, ended, text,"
    " caption, own, window, turn_vector, window_vector, seq, context, spoken_day, record)"
    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)
"""The statement that writes a row of the recall index, its values in ``_row``'s order."""


def _row(
    memory: Memory, own: str, window: str, turn_vector: bytes, window_vector: bytes | None, seq: int, context: str
) -> tuple:
    """The values of ``memory``'s row for ``_INSERT_ROW``: its fields, then ``own`` (its
    index text), its ``window`` text, the two vectors as blobs, ``seq`` and its ``context``
    ("" until ``_refresh`` writes a turn's)."""
    return (
        memory.id,
        memory.user,
        memory.kind,
        memory.session,
        memory.speaker,
        memory.created_at,
        int(memory.archived),
        int(memory.valid_to > 0),
        memory.text,
        int(bool(memory.caption)),
        own,
        window,
        turn_vector,
        window_vector,
        seq,
        context,
        spoken_day(memory.day),
        memory.to_record(),
    )


class RecallIndex:
    """The recall index tables of an open sidecar connection (see the module docstring)."""

    def __init__(self, db: sqlite3.Connection, spill: Path | None = None) -> None:
        self._db = db
        self.spill = spill
        """A folder where a big ``load`` writes its vectors rather than holding them
        (``UserIndex.from_chunks``): the sidecar's own; None: held in memory."""
        self._said: Said | None = None
        # An index of an older version lacks columns: add them (its rows are rebuilt, INDEX_VERSION),
        # and drop the FTS5 table that held the lexical fields up to version 2.
        columns = {row[1] for row in db.execute("PRAGMA table_info(recall_index)")}
        added = [(name, kind) for name, kind in NEWER_COLUMNS if name not in columns]
        old_tables = [
            name for (name,) in db.execute("SELECT name FROM sqlite_master WHERE name IN ('lexical', 'lexical_terms')")
        ]
        if added or old_tables:
            with atomic(db):
                for name, kind in added:
                    db.execute(f"ALTER TABLE recall_index ADD COLUMN {name} {kind}")
                for name in sorted(old_tables, key=lambda n: n != "lexical_terms"):  # the vocabulary before its table
                    db.execute(f"DROP TABLE IF EXISTS {name}")
        db.execute(SEQ_SCHEMA)
        db.execute(UNRECORDED_SCHEMA)

    @property
    def said(self) -> Said:
        """What each note and turn states (``memcli.store.statements``), written and deleted
        with its row; its tables are made (if missing) and its module imported at first use,
        by a write or a supersession, not by a list, show or stats. Tables made inside the
        caller's transaction are made again (``IF NOT EXISTS``) at the next use until one
        outside a transaction, so that a transaction rolled back leaves no ``Said`` over
        tables that are not there."""
        if self._said is not None:
            return self._said
        # heavy: memcli.store.statements reads texts with memcli.text.updates and
        # memcli.text.entities, whose patterns compile at import (a third of a CPU-second)
        from memcli.store import statements

        joined = self._db.in_transaction
        execute_each(self._db, statements.SCHEMA)
        said = statements.Said(self._db)
        if not joined:
            self._said = said
        return said

    # state --------------------------------------------------------------------------

    def _meta(self, key: str) -> str | None:
        row = self._db.execute("SELECT value FROM index_meta WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    def mark_dirty(self, users: Iterable[str]) -> None:
        """Mark ``users`` as being written (committed at once, before Chroma is written,
        unless called inside a transaction)."""
        with atomic(self._db):
            self._db.executemany(
                "INSERT OR REPLACE INTO index_meta VALUES (?, '1')", [(f"dirty:{u}",) for u in set(users)]
            )

    def _clean(self, users: Iterable[str], written: bool = False, said: bool = True) -> None:
        """Mark ``users`` clean (inside a write's transaction); ``written``: their rows were
        (re)written whole by this version of the code; ``said``: with what each of their
        rows states (else ``fill_said`` reads it later)."""
        users = set(users)
        self._db.executemany("DELETE FROM index_meta WHERE key = ?", [(f"dirty:{u}",) for u in users])
        if written:
            self._db.executemany(
                "INSERT OR REPLACE INTO index_meta VALUES (?, ?)", [(f"version:{u}", str(INDEX_VERSION)) for u in users]
            )
            if said:
                self.said.cover(users)
            # A random epoch, not a count: a sidecar deleted and made again cannot repeat one.
            self._db.executemany(
                "INSERT OR REPLACE INTO index_meta VALUES (?, ?)", [(f"epoch:{u}", uuid.uuid4().hex) for u in users]
            )

    def _stamp(self) -> int:
        """The next value of the change counter, for the rows the current write touches
        (inside its transaction)."""
        self._db.execute(
            "INSERT INTO index_meta VALUES ('seq', '1') ON CONFLICT (key) DO UPDATE SET value = CAST(value AS INTEGER) + 1"
        )
        return self.seq()

    def seq(self) -> int:
        """The change counter: the ``seq`` of the latest write (0 before any)."""
        return int(self._meta("seq") or 0)

    def epoch(self, user: str) -> str:
        """``user``'s epoch, new each time ``user``'s rows are written whole (a rebuild)."""
        return self._meta(f"epoch:{user}") or ""

    def is_dirty(self, user: str) -> bool:
        """Whether a write of ``user``'s memories was interrupted, or ``user``'s rows were
        written by another version of this code (or never), or some lack the copy of
        their memory (an older memcli wrote them)."""
        return (
            self._meta(f"dirty:{user}") is not None
            or self._meta(f"version:{user}") != str(INDEX_VERSION)
            or self._db.execute(
                "SELECT 1 FROM recall_index WHERE user = ? AND record = '{}' LIMIT 1", (user,)
            ).fetchone()
            is not None
        )

    def forget_user(self, user: str) -> None:
        """Drop the marks (dirty, version, epoch) of a user who has no rows left."""
        keys = [f"dirty:{user}", f"version:{user}", f"epoch:{user}"]
        marks = ", ".join("?" * len(keys))
        if self._db.execute(f"SELECT 1 FROM index_meta WHERE key IN ({marks}) LIMIT 1", keys).fetchone():
            with atomic(self._db):
                self._db.execute(f"DELETE FROM index_meta WHERE key IN ({marks})", keys)
        # a store whose statements tables were never made holds none of the user's: nothing to drop,
        # and a list of an unknown user neither makes them nor imports what reads texts
        if not self._db.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'said_rules'").fetchone():
            return
        if self._db.execute("SELECT 1 FROM said_rules WHERE user = ?", (user,)).fetchone():
            with atomic(self._db):
                self.said.drop_user(user)

    def ids(self, user: str) -> set[str]:
        """The ids of ``user``'s memories in the index."""
        return {r[0] for r in self._db.execute("SELECT memory_id FROM recall_index WHERE user = ?", (user,))}

    def unclean(self) -> list[str]:
        """The users whose rows may differ from the store (``is_dirty``), among those the
        index knows of."""
        found = {
            key.partition(":")[2]
            for (key,) in self._db.execute(
                "SELECT key FROM index_meta WHERE key LIKE 'dirty:%' OR (key LIKE 'version:%' AND value != ?)",
                (str(INDEX_VERSION),),
            )
        }
        found.update(user for (user,) in self._db.execute("SELECT DISTINCT user FROM recall_index WHERE record = '{}'"))
        return sorted(found)

    def count(self) -> int:
        """The memories in the index, every user's."""
        return int(self._db.execute("SELECT count(*) FROM recall_index").fetchone()[0])

    def count_of(self, user: str) -> int:
        """``user``'s memories in the index."""
        return int(self._db.execute("SELECT count(*) FROM recall_index WHERE user = ?", (user,)).fetchone()[0])

    def has(self, user: str) -> bool:
        """Whether ``user`` has a memory in the index: one row looked up (``count_of``
        counts every row of the user's, about 40 ms at a million memories)."""
        return self._db.execute("SELECT 1 FROM recall_index WHERE user = ? LIMIT 1", (user,)).fetchone() is not None

    # the copy of the store ------------------------------------------------------------
    # Each row keeps its memory's text and metadata (``Memory.to_record``), so that what
    # reads many memories (list, stats, forget, consolidation) reads them here rather than
    # from Chroma (12 s for 100,000 memories; here about 1 s). ``MemoryStore`` decides when
    # the copy can be trusted.

    def records(
        self, user: str | None = None, kind: str | None = None, archived: bool | None = None, ended: bool | None = None
    ) -> list[tuple[str, str, str]]:
        """(id, text, record) of the memories of ``user`` (every user's when None), of
        ``kind``, archived or not, ended or not (None: either)."""
        clauses, args = [], []
        for column, value in (("user", user), ("kind", kind), ("archived", archived), ("ended", ended)):
            if value is not None:
                clauses.append(f"{column} = ?")
                args.append(int(value) if isinstance(value, bool) else value)
        where = f" WHERE {' AND '.join(clauses)}" if clauses else ""
        return self._db.execute(f"SELECT memory_id, text, record FROM recall_index{where}", args).fetchall()

    def current_holding(
        self, user: str, kinds: Sequence[str], any_of: Sequence[str] = (), all_of: Sequence[str] = ()
    ) -> list[tuple[str, str, str]]:
        """(id, text, record) of the current memories of ``user`` (neither archived nor
        ended) of ``kinds`` whose text holds, lower-cased, one of ``any_of`` (when given)
        and every one of ``all_of``: the candidates that supersession at write time reads
        (``memcli.recall.changes.Changes.supersede``). One pass over the user's rows."""
        kind_marks = ", ".join("?" * len(kinds))
        clauses = [f"user = ? AND kind IN ({kind_marks}) AND archived = 0 AND ended = 0"]
        args: list[str] = [user, *kinds]
        if any_of:
            clauses.append("(" + " OR ".join("instr(lower(text), ?) > 0" for _ in any_of) + ")")
            args += [needle.lower() for needle in any_of]
        for needle in all_of:
            clauses.append("instr(lower(text), ?) > 0")
            args.append(needle.lower())
        return self._db.execute(
            f"SELECT memory_id, text, record FROM recall_index WHERE {' AND '.join(clauses)}", args
        ).fetchall()

    def unsaid(self) -> list[str]:
        """The users with memories in the index who are not covered by the statements kept
        (``memcli.store.statements``): their rows were written before the table existed or
        under other rules, and are to be read again (``fill_said``)."""
        return [u for u in self.users() if not self.said.covers(u)]

    def fill_said(self, user: str, after: int, limit: int) -> tuple[int | None, int]:
        """Keep what ``user``'s notes and turns state for up to ``limit`` of them whose rowid
        is above ``after``, in one transaction; returns the last rowid read (None once every
        row was read: ``user`` is then covered) and the rows read. A row written meanwhile by ``put``
        keeps what it states already; one rewritten is read again by it."""
        # heavy: what a text states (memcli.text.updates compiles its patterns at import); off a request's path
        from memcli.store.statements import SAID_KINDS

        kind_marks = ", ".join("?" * len(SAID_KINDS))
        with atomic(self._db):
            rows = self._db.execute(
                f"SELECT rowid, memory_id, user, kind, text FROM recall_index WHERE user = ? AND kind IN ({kind_marks})"
                " AND rowid > ? ORDER BY rowid LIMIT ?",
                (user, *SAID_KINDS, after, limit),
            ).fetchall()
            self.said.write(r[1:] for r in rows)
            if len(rows) < limit:
                self.said.cover([user])
                return None, len(rows)
        return int(rows[-1][0]), len(rows)

    def records_page(
        self, user: str | None, after: int, limit: int, vectors: bool = False
    ) -> list[tuple[int, str, str, str, bytes | None]]:
        """(rowid, id, text, record, vector) of up to ``limit`` memories of ``user`` (every
        user's when None) whose rowid is above ``after``, in rowid order: the order they
        were first written (a rewrite keeps its row). ``vector``: the memory's own vector
        as float32 bytes when ``vectors``, else None. An export reads the copy so, a page
        at a time."""
        column = "turn_vector" if vectors else "NULL"
        where, args = ("rowid > ? AND user = ?", [after, user]) if user is not None else ("rowid > ?", [after])
        return self._db.execute(
            f"SELECT rowid, memory_id, text, record, {column} FROM recall_index WHERE {where} ORDER BY rowid LIMIT ?",
            [*args, limit],
        ).fetchall()

    def records_by_id(self, ids: Sequence[str]) -> list[tuple[str, str, str, str]]:
        """(id, user, text, record) of the memories with these ids that the index holds."""
        return list(
            rows_in(
                self._db, "SELECT memory_id, user, text, record FROM recall_index WHERE memory_id IN ({marks})", ids
            )
        )

    def ids_with_prefix(self, prefix: str) -> list[str]:
        """Every id in the index that starts with ``prefix``."""
        # A range on the unique index: every string that starts with prefix sorts below prefix + U+10FFFF.
        return [
            r[0]
            for r in self._db.execute(
                "SELECT memory_id FROM recall_index WHERE memory_id >= ? AND memory_id < ?",
                (prefix, prefix + "\U0010ffff"),
            )
        ]

    def rowids_with_tags(self, user: str, tags: Sequence[str]) -> np.ndarray:
        """The rowids of ``user``'s memories that carry every one of ``tags`` (int64), from
        the copy of their metadata (a record leaves out an empty tag list, so the rows
        without tags are passed over by a substring test before any JSON is read)."""
        wanted = sorted(set(tags))
        if not wanted:
            return np.zeros(0, dtype=np.int64)
        marks = ", ".join("?" * len(wanted))
        rows = self._db.execute(
            "SELECT rowid FROM recall_index AS r WHERE user = ? AND instr(record, '\"tags\"') > 0"
            f" AND (SELECT count(DISTINCT value) FROM json_each(r.record, '$.tags') WHERE value IN ({marks})) = ?",
            (user, *wanted, len(wanted)),
        ).fetchall()
        return np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))

    def users(self) -> list[str]:
        """Every user with memories in the index, sorted."""
        return [r[0] for r in self._db.execute("SELECT DISTINCT user FROM recall_index ORDER BY user")]

    # writes -------------------------------------------------------------------------

    def put(
        self,
        memories: Sequence[Memory],
        vectors: Sequence[Sequence[float]],
        windows: Mapping[str, Sequence[float]] | None = None,
    ) -> None:
        """Index ``memories`` (new or replaced) with their own vectors, refresh the context and
        windows of their sessions, and mark their users clean. ``windows``: window text →
        vector, computed ahead by the caller; a window not found there is left to fill."""
        with atomic(self._db):
            self._put(memories, vectors, windows or {}, self._stamp())

    def _put(
        self,
        memories: Sequence[Memory],
        vectors: Sequence[Sequence[float]],
        windows: Mapping[str, Sequence[float]],
        seq: int,
    ) -> None:
        # A user with no rows yet is written whole by this version from the start.
        users = {m.user for m in memories}
        new_users = {u for u in users if not self.has(u)}
        for memory, vector in zip(memories, vectors):
            own = memory.index_text()
            # A turn with neighbours gets its window from _refresh; a memory alone is its own window.
            alone = not has_neighbours(memory.kind, memory.session)
            self._db.execute(
                _INSERT_ROW + " ON CONFLICT (memory_id) DO UPDATE SET user = excluded.user, kind = excluded.kind,"
                " session = excluded.session, speaker = excluded.speaker, created_at = excluded.created_at,"
                " archived = excluded.archived, ended = excluded.ended, text = excluded.text, caption = excluded.caption,"
                " own = excluded.own, window = excluded.window, turn_vector = excluded.turn_vector,"
                " window_vector = excluded.window_vector, seq = excluded.seq, context = excluded.context,"
                " spoken_day = excluded.spoken_day, record = excluded.record",
                _row(memory, own, own if alone else "", _blob(vector), _blob(vector) if alone else None, seq, ""),
            )
        self.said.write((m.id, m.user, m.kind, m.text) for m in memories)
        self._refresh({(m.user, m.session) for m in memories if has_neighbours(m.kind, m.session)}, windows, seq)
        self._clean(users)
        self._clean(new_users, written=True)

    def put_fresh(
        self,
        user: str,
        batches: Iterable[tuple[Sequence[Memory], Sequence[Sequence[float]], Mapping[str, Sequence[float]]]],
    ) -> int:
        """Write the rows of ``user``, who has none yet, from ``batches`` of (memories,
        vectors, windows) as ``put`` takes them, each batch holding whole sessions (a
        session's turns in one batch: an import of a conversation, the bench's synthetic
        stores); returns the rows written. The rows are those ``put`` writes, batch after
        batch; what differs is the cost, for a user of a million memories: each turn's
        context and window worked out from its batch, each batch inserted with one
        statement, rather than a row and then its session's refresh at a time; and what
        each memory states (``memcli.store.statements``) is left to ``fill_said``
        (``MemoryStore.fill_statements``), as for a store an older memcli wrote. One
        transaction a batch: ``user`` stays dirty until the last is written, and gets a new
        epoch then. Raises ValueError (the batch not written) when ``user`` has rows, a
        memory is another user's, or a session's turns come in two batches."""
        with atomic(self._db):
            if self.has(user):
                raise ValueError(f"{user} has rows in the recall index already")
            self.mark_dirty([user])
            seq = self._stamp()
        seen: set[str] = set()
        written = 0
        for memories, vectors, windows in batches:
            rows = self._fresh_rows(user, memories, vectors, windows, seen, seq)
            with atomic(self._db):
                self._db.executemany(_INSERT_ROW, rows)
            written += len(rows)
        with atomic(self._db):
            self._clean([user], written=True, said=False)
        return written

    @staticmethod
    def _fresh_rows(
        user: str,
        memories: Sequence[Memory],
        vectors: Sequence[Sequence[float]],
        windows: Mapping[str, Sequence[float]],
        seen: set[str],
        seq: int,
    ) -> list[tuple]:
        """The rows of a batch of ``put_fresh``, in its order, with the context and window
        ``_refresh`` would give each turn; ``seen``: the sessions of earlier batches (this
        batch's are added). Raises ValueError as ``put_fresh`` says."""
        if len(memories) != len(vectors):
            raise ValueError("one vector per memory")
        sessions: dict[str, list[int]] = {}
        for i, memory in enumerate(memories):
            if memory.user != user:
                raise ValueError(f"a memory of {memory.user} among those of {user}")
            if has_neighbours(memory.kind, memory.session):
                sessions.setdefault(memory.session, []).append(i)
        if seen & sessions.keys():
            raise ValueError(f"the turns of session {sorted(seen & sessions.keys())[0]} come in two batches")
        seen.update(sessions)
        owns = [m.index_text() for m in memories]
        blobs = [_blob(v) for v in vectors]
        context = [""] * len(memories)
        window = list(owns)
        window_vectors: list[bytes | None] = list(blobs)
        for members in sessions.values():
            members.sort(key=lambda i: (memories[i].created_at, memories[i].id))
            texts = [owns[i] for i in members]
            for j, i in enumerate(members):
                context[i], window[i] = context_text(texts, j), window_text(texts, j)
                if window[i] != owns[i]:  # a turn alone in its session is its own window
                    found = windows.get(window[i])
                    window_vectors[i] = None if found is None else _blob(found)
        return [
            _row(m, owns[i], window[i], blobs[i], window_vectors[i], seq, context[i]) for i, m in enumerate(memories)
        ]

    def set_behind(self, memories: Sequence[Memory]) -> int:
        """Record the metadata of ``memories`` (a reinforcement: strength, last recall,
        recall count) here alone, Chroma's copy left behind until ``flush_behind`` writes
        it (``MemoryStore.reinforce``), in one transaction; returns the memories now behind."""
        with atomic(self._db):
            self.set_state(memories)
            self._db.executemany("INSERT OR IGNORE INTO metadata_behind VALUES (?)", [(m.id,) for m in memories])
        return self.behind_count()

    def behind_count(self) -> int:
        """The memories whose metadata in Chroma is behind this copy (``set_behind``)."""
        return int(self._db.execute("SELECT count(*) FROM metadata_behind").fetchone()[0])

    def behind(self, limit: int) -> tuple[list[str], list[Memory]]:
        """Up to ``limit`` ids whose Chroma metadata is behind, and the memories among them
        still in the index (as this copy has them) to write to Chroma."""
        ids = [r[0] for r in self._db.execute("SELECT memory_id FROM metadata_behind LIMIT ?", (limit,))]
        rows = self.records_by_id(ids)
        return ids, [Memory.from_record(memory_id, text, record) for memory_id, _, text, record in rows]

    def caught_up(self, ids: Sequence[str]) -> None:
        """Chroma's metadata of ``ids`` is current again (written, or the memories deleted)."""
        with atomic(self._db):
            self._db.executemany("DELETE FROM metadata_behind WHERE memory_id = ?", [(i,) for i in ids])

    def set_state(self, memories: Sequence[Memory]) -> None:
        """Record the metadata of ``memories`` written back to the store (reinforcement,
        pins, feedback, archiving, restoring, a fact's end); mark their users clean. Only
        rows archived, restored or ended count as changed for recall (``seq``).

        An archived turn is no longer recalled, but its words stay in its neighbours'
        context and windows (the trace a faded memory leaves in what surrounded it) until
        it is purged, which ``remove`` scrubs."""
        with atomic(self._db):
            self._db.executemany(
                "UPDATE recall_index SET record = ? WHERE memory_id = ?", [(m.to_record(), m.id) for m in memories]
            )
            # Only the rows whose state changes count as changed (a reinforcement changes none).
            states = [(int(m.archived), int(m.valid_to > 0), m.id) for m in memories]
            changed = [
                state
                for state in states
                if self._db.execute(
                    "SELECT 1 FROM recall_index WHERE memory_id = ? AND (archived != ? OR ended != ?)",
                    (state[2], state[0], state[1]),
                ).fetchone()
            ]
            if changed:
                seq = self._stamp()
                self._db.executemany(
                    "UPDATE recall_index SET archived = ?, ended = ?, seq = ? WHERE memory_id = ?",
                    [(a, e, seq, i) for a, e, i in changed],
                )
            self._clean(m.user for m in memories)

    def remove(self, ids: Sequence[str], users: Iterable[str]) -> None:
        """Drop memories from the index and refresh their sessions' context and windows, so
        that nothing of a deleted turn survives in its neighbours; mark ``users`` clean."""
        with atomic(self._db):
            seq = self._stamp()
            sessions: set[tuple[str, str]] = set()
            for memory_id in ids:
                row = self._db.execute(
                    "SELECT rowid, user, session, kind FROM recall_index WHERE memory_id = ?", (memory_id,)
                ).fetchone()
                if row is None:
                    continue
                rowid, user, session, kind = row
                self._db.execute("DELETE FROM recall_index WHERE rowid = ?", (rowid,))
                self._db.execute("DELETE FROM metadata_behind WHERE memory_id = ?", (memory_id,))
                self.said.drop([memory_id])
                self._db.execute("INSERT INTO recall_removed (user, row, seq) VALUES (?, ?, ?)", (user, rowid, seq))
                if has_neighbours(kind, session):
                    sessions.add((user, session))
            self._refresh(sessions, {}, seq)
            self._clean(users)

    def _refresh(self, sessions: Iterable[tuple[str, str]], windows: Mapping[str, Sequence[float]], seq: int) -> None:
        """Recompute the context and window of every turn of ``sessions``; a window whose
        text changed takes its vector from ``windows`` or is left to fill. A row whose
        context or window changed is stamped ``seq``."""
        for user, session in sessions:
            rows = self._db.execute(
                "SELECT rowid, own, window, context FROM recall_index"
                " WHERE user = ? AND session = ? AND kind = ? ORDER BY created_at, memory_id",
                (user, session, Kind.TURN.value),
            ).fetchall()
            owns = [r[1] for r in rows]
            for i, (rowid, own, window, ctx) in enumerate(rows):
                new_ctx, new_window = context_text(owns, i), window_text(owns, i)
                if new_ctx != ctx:
                    self._db.execute(
                        "UPDATE recall_index SET context = ?, seq = ? WHERE rowid = ?", (new_ctx, seq, rowid)
                    )
                if new_window != window:
                    # A turn alone in its session is its own window: its turn vector.
                    vector = windows.get(new_window) if new_window != own else self._turn_vector(rowid)
                    self._db.execute(
                        "UPDATE recall_index SET window = ?, window_vector = ?, seq = ? WHERE rowid = ?",
                        (new_window, None if vector is None else _blob(vector), seq, rowid),
                    )

    def _turn_vector(self, rowid: int) -> np.ndarray:
        blob = self._db.execute("SELECT turn_vector FROM recall_index WHERE rowid = ?", (rowid,)).fetchone()[0]
        return np.frombuffer(blob, dtype=np.float32)

    def rebuild(
        self,
        user: str,
        memories: Sequence[Memory],
        vectors: Sequence[Sequence[float]],
        windows: Mapping[str, Sequence[float]] | None = None,
    ) -> None:
        """Replace ``user``'s rows with ``memories`` (read from the store) and their vectors.
        A window whose text the old rows had embedded keeps its vector (an upgrade of the
        index does not embed a user's whole history again), unless ``windows`` (window text
        -> vector, a reindex with another embedder) gives the vectors; the others are left
        to fill. ``user`` gets a new epoch."""
        with atomic(self._db):
            seq = self._stamp()
            known = (
                windows
                if windows is not None
                else {
                    window: np.frombuffer(blob, dtype=np.float32)
                    for window, blob in self._db.execute(
                        "SELECT window, window_vector FROM recall_index WHERE user = ? AND window_vector IS NOT NULL",
                        (user,),
                    )
                }
            )
            self._db.execute("DELETE FROM recall_index WHERE user = ?", (user,))
            self.said.drop_user(user)
            # The new epoch tells every loaded copy to load again whole: no deletion to track.
            self._db.execute("DELETE FROM recall_removed WHERE user = ?", (user,))
            self._put(memories, vectors, known, seq)
            self._clean([user], written=True)

    # reads --------------------------------------------------------------------------

    def missing_windows(self, user: str) -> list[tuple[int, str]]:
        """(rowid, window text) of ``user``'s rows whose window vector is still to compute
        (a partial index holds those rows alone: nothing is scanned when none is missing)."""
        return self._db.execute(
            "SELECT rowid, window FROM recall_index INDEXED BY recall_missing_windows WHERE user = ? AND window_vector IS NULL",
            (user,),
        ).fetchall()

    def fill_windows(self, missing: Sequence[tuple[int, str]], vectors: Sequence[Sequence[float]]) -> None:
        """Store the vectors computed for ``missing`` (rowid, window text), as
        ``missing_windows`` gave them; a row whose window has changed since keeps waiting
        for the vector of its new text."""
        if not missing:
            return
        with atomic(self._db):
            seq = self._stamp()
            self._db.executemany(
                "UPDATE recall_index SET window_vector = ?, seq = ? WHERE rowid = ? AND window = ?",
                [(_blob(v), seq, rowid, text) for (rowid, text), v in zip(missing, vectors)],
            )

    def load(self, user: str) -> UserIndex:
        """``user``'s rows as arrays, in time order, at the current ``seq`` and epoch
        (``missing_windows`` filled first: one left unfilled reads as the memory's own vector)."""
        seq, epoch = self.seq(), self.epoch(user)
        cursor = self._db.execute(
            f"SELECT {ROW_COLUMNS} FROM recall_index WHERE user = ? ORDER BY created_at, memory_id", (user,)
        )
        rows = self.count_of(user)
        return UserIndex.from_chunks(iter(lambda: cursor.fetchmany(LOAD_PAGE), []), seq, epoch, rows, self.spill)

    def changes(self, user: str, since: int) -> IndexChanges:
        """What changed in ``user``'s rows after ``since`` (a ``seq``): the rows written
        since (``missing_windows`` filled first, as for ``load``) and the rowids deleted since."""
        rows = self._db.execute(
            f"SELECT {ROW_COLUMNS} FROM recall_index WHERE user = ? AND seq > ? ORDER BY created_at, memory_id",
            (user, since),
        ).fetchall()
        removed = self._db.execute(
            "SELECT row FROM recall_removed WHERE user = ? AND seq > ? ORDER BY seq", (user, since)
        )
        return IndexChanges(rows, [r[0] for r in removed], self.seq(), self.epoch(user))
