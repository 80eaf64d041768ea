"""The recall index: what recall scores, on disk beside the Chroma store, under the same ids.

Chroma holds the memories (text, metadata, embedding) and stays their record; this index,
in the SQLite sidecar, holds what recall reads for every query, so that a query touches no
Chroma at all:

- ``recall_index``: one row per memory, with the fields recall filters on, the memory's
  own vector (a copy of its Chroma embedding) and its *window* vector, the embedding of
  the turn with its previous and next turn of the same session (a question often names
  what one turn says and another answers);
- ``lexical``: an SQLite FTS5 table (Porter stemming) with three columns per memory: its
  own text, its *context* (the two previous turns and the next one of its session) and
  its day (``8 May 2023``).

A memory's neighbours are the turns of its (user, session) in time order; other kinds
have no neighbours. Every write to the store goes through ``put``, ``set_state`` or
``remove``, which keep the neighbours' context and windows current. A window vector that
could not be computed at write time (a new neighbour arrived, one was deleted, the index
was rebuilt) is left empty and filled by ``fill_windows`` before the next query, so that
writes never need the embedder.

Each write marks its users *dirty* before Chroma is written and clean once the index is,
so a crash in between leaves a mark; a dirty user, a user whose ids differ from Chroma's,
or an index written by another version of this code is rebuilt from the store.
"""

from __future__ import annotations

import contextlib
import re
import sqlite3
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from datetime import date

import numpy as np

from memcli.memory import Kind, Memory

INDEX_VERSION = 1
"""Bump when what the index stores changes: older indexes are then rebuilt."""
CONTEXT_BEFORE, CONTEXT_AFTER = 2, 1
"""Turns of the same session in a memory's lexical context column (measured best of 1-3 each)."""
WINDOW_BEFORE, WINDOW_AFTER = 1, 1
"""Turns of the same session embedded with a memory in its window vector."""

LEXICAL_SQL = (
    "SELECT lexical.rowid, bm25(lexical, {own}, {ctx}, {day}) FROM lexical CROSS JOIN recall_index AS r"
    " ON r.rowid = lexical.rowid WHERE lexical MATCH ? AND r.user = ?"
)
"""BM25 of one user's matching rows. CROSS JOIN fixes the join order: the full-text query
runs once, then each match is looked up by rowid (a plain JOIN lets SQLite run it per row)."""

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
    window_vector BLOB
);
CREATE INDEX IF NOT EXISTS recall_by_session ON recall_index (user, session, created_at);
CREATE VIRTUAL TABLE IF NOT EXISTS lexical USING fts5 (own, ctx, day, tokenize = 'porter unicode61');
CREATE TABLE IF NOT EXISTS index_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
"""


@contextlib.contextmanager
def atomic(db: sqlite3.Connection) -> Iterator[None]:
    """One SQLite transaction around the block (committed at its end, rolled back on any
    exception), for a connection opened with ``isolation_level=None``, where ``with db:``
    alone would commit each statement by itself. Inside a transaction already, the block
    joins it."""
    if db.in_transaction:
        yield
        return
    db.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")


def spoken_day(day: str) -> str:
    """``YYYY-MM-DD`` as a question would write it, ``8 May 2023``; unchanged when unreadable."""
    try:
        moment = date.fromisoformat(day)
    except ValueError:
        return day
    return f"{moment.day} {moment:%B %Y}"


def _blob(vector: Sequence[float] | np.ndarray) -> bytes:
    return np.asarray(vector, dtype=np.float32).tobytes()


def _has_neighbours(memory_kind: str, session: str) -> bool:
    return memory_kind == Kind.TURN.value and bool(session)


def window_text(owns: Sequence[str], i: int) -> str:
    """The window of the ``i``-th of a session's turns (their ``index_text()`` in time order)."""
    return "\n".join(owns[max(0, i - WINDOW_BEFORE) : i + WINDOW_AFTER + 1])


def context_text(owns: Sequence[str], i: int) -> str:
    """The lexical context of the ``i``-th of a session's turns: its neighbours' texts."""
    return "\n".join(owns[j] for j in range(max(0, i - CONTEXT_BEFORE), min(len(owns), i + CONTEXT_AFTER + 1)) if j != i)


def batch_windows(memories: Sequence[Memory]) -> list[str]:
    """The window texts of the turns of ``memories`` with neighbours among ``memories``
    themselves (a batch that holds whole sessions, as an import does, holds every
    neighbour): what to embed ahead of ``RecallIndex.put``."""
    sessions: dict[tuple[str, str], list[Memory]] = {}
    for memory in memories:
        if _has_neighbours(memory.kind, memory.session):
            sessions.setdefault((memory.user, memory.session), []).append(memory)
    texts: list[str] = []
    for turns in sessions.values():
        owns = [m.index_text() for m in sorted(turns, key=lambda m: (m.created_at, m.id))]
        texts.extend(window_text(owns, i) for i in range(len(owns)) if len(owns) > 1)
    return list(dict.fromkeys(texts))


_RELATIVE_TIME = re.compile(
    r"\b(yesterday|today|tonight|tomorrow|ago|recently|lately|earlier|"
    r"(last|this|next|past|previous|coming|few|couple of|other)\s+(night|nights|day|days|week|weeks|weekend|weekends|"
    r"month|months|year|years|summer|winter|spring|fall|autumn|monday|tuesday|wednesday|thursday|friday|saturday|"
    r"sunday|morning|evening|time)|monday|tuesday|wednesday|thursday|friday|saturday|sunday|"
    r"january|february|march|april|june|july|august|september|october|november|december|\d{4})\b",
    re.I,
)


def says_when(text: str) -> bool:
    """Whether ``text`` places something in time: "yesterday", "last week", "in June"..."""
    return bool(_RELATIVE_TIME.search(text))


@dataclass
class UserIndex:
    """One user's rows of the recall index as arrays, in time order (what a query scores).

    ``turn`` and ``window``: unit vectors, shape (n, dimension). ``first``: the first turn
    of its session. ``archived`` / ``ended``: forgotten, or a fact that has ended.
    """

    ids: list[str]
    rowids: np.ndarray
    kinds: np.ndarray
    speakers: list[str]
    created_at: np.ndarray
    archived: np.ndarray
    ended: np.ndarray
    texts: list[str]
    caption: np.ndarray
    first: np.ndarray
    turn: np.ndarray
    window: np.ndarray

    def __len__(self) -> int:
        return len(self.ids)

    @cached_property
    def says_when(self) -> np.ndarray:
        """1.0 for the memories whose text places something in time (``says_when``), else
        0.0; worked out once per loaded index, at its first "when" question (about 11 ms
        for 400 turns), not at every one."""
        return np.array([says_when(t) for t in self.texts], dtype=np.float64)


class RecallIndex:
    """The recall index tables of an open sidecar connection (see the module docstring)."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self._db = db

    # state --------------------------------------------------------------------------

    def _meta(self, key: str) -> str | None:
        row = self._db.execute("SELECT value FROM index_meta WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    def mark_dirty(self, users: Iterable[str]) -> None:
        """Mark ``users`` as being written (committed at once, before Chroma is written,
        unless called inside a transaction)."""
        with atomic(self._db):
            self._db.executemany("INSERT OR REPLACE INTO index_meta VALUES (?, '1')", [(f"dirty:{u}",) for u in set(users)])

    def _clean(self, users: Iterable[str], written: bool = False) -> None:
        """Mark ``users`` clean (inside a write's transaction); ``written``: their rows were
        (re)written whole by this version of the code."""
        users = set(users)
        self._db.executemany("DELETE FROM index_meta WHERE key = ?", [(f"dirty:{u}",) for u in users])
        if written:
            self._db.executemany("INSERT OR REPLACE INTO index_meta VALUES (?, ?)", [(f"version:{u}", str(INDEX_VERSION)) for u in users])

    def is_dirty(self, user: str) -> bool:
        """Whether a write of ``user``'s memories was interrupted, or ``user``'s rows were
        written by another version of this code (or never)."""
        return self._meta(f"dirty:{user}") is not None or self._meta(f"version:{user}") != str(INDEX_VERSION)

    def ids(self, user: str) -> set[str]:
        """The ids of ``user``'s memories in the index."""
        return {r[0] for r in self._db.execute("SELECT memory_id FROM recall_index WHERE user = ?", (user,))}

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
            self._put(memories, vectors, windows or {})

    def _put(self, memories: Sequence[Memory], vectors: Sequence[Sequence[float]], windows: Mapping[str, Sequence[float]]) -> None:
        # A user with no rows yet is written whole by this version from the start.
        users = {m.user for m in memories}
        new_users = {u for u in users if not self._db.execute("SELECT 1 FROM recall_index WHERE user = ? LIMIT 1", (u,)).fetchone()}
        for memory, vector in zip(memories, vectors):
            own = memory.index_text()
            # A turn with neighbours gets its window from _refresh; a memory alone is its own window.
            alone = not _has_neighbours(memory.kind, memory.session)
            self._db.execute(
                "INSERT INTO recall_index (memory_id, user, kind, session, speaker, created_at, archived, ended, text,"
                " caption, own, window, turn_vector, window_vector) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
                " ON CONFLICT (memory_id) DO UPDATE SET user = excluded.user, kind = excluded.kind,"
                " session = excluded.session, speaker = excluded.speaker, created_at = excluded.created_at,"
                " archived = excluded.archived, ended = excluded.ended, text = excluded.text, caption = excluded.caption,"
                " own = excluded.own, window = excluded.window, turn_vector = excluded.turn_vector,"
                " window_vector = excluded.window_vector",
                (memory.id, memory.user, memory.kind, memory.session, memory.speaker, memory.created_at,
                 int(memory.archived), int(memory.valid_to > 0), memory.text, int(bool(memory.caption)), own,
                 own if alone else "", _blob(vector), _blob(vector) if alone else None),
            )
            rowid = self._db.execute("SELECT rowid FROM recall_index WHERE memory_id = ?", (memory.id,)).fetchone()[0]
            self._db.execute("DELETE FROM lexical WHERE rowid = ?", (rowid,))
            self._db.execute("INSERT INTO lexical (rowid, own, ctx, day) VALUES (?, ?, '', ?)", (rowid, own, spoken_day(memory.day)))
        self._refresh({(m.user, m.session) for m in memories if _has_neighbours(m.kind, m.session)}, windows)
        self._clean(users)
        self._clean(new_users, written=True)

    def set_state(self, memories: Sequence[Memory]) -> None:
        """Record that ``memories`` were archived, restored, or (facts) ended; mark their users clean.

        An archived turn is no longer recalled, but its words stay in its neighbours'
        context and windows (the trace a faded memory leaves in what surrounded it) until
        it is purged, which ``remove`` scrubs."""
        with atomic(self._db):
            self._db.executemany(
                "UPDATE recall_index SET archived = ?, ended = ? WHERE memory_id = ?",
                [(int(m.archived), int(m.valid_to > 0), m.id) for m in memories],
            )
            self._clean(m.user for m in memories)

    def remove(self, ids: Sequence[str], users: Iterable[str]) -> None:
        """Drop memories from the index and refresh their sessions' context and windows, so
        that nothing of a deleted turn survives in its neighbours; mark ``users`` clean."""
        with atomic(self._db):
            sessions: set[tuple[str, str]] = set()
            for memory_id in ids:
                row = self._db.execute("SELECT rowid, user, session, kind FROM recall_index WHERE memory_id = ?", (memory_id,)).fetchone()
                if row is None:
                    continue
                rowid, user, session, kind = row
                self._db.execute("DELETE FROM recall_index WHERE rowid = ?", (rowid,))
                self._db.execute("DELETE FROM lexical WHERE rowid = ?", (rowid,))
                if _has_neighbours(kind, session):
                    sessions.add((user, session))
            self._refresh(sessions, {})
            self._clean(users)

    def _refresh(self, sessions: Iterable[tuple[str, str]], windows: Mapping[str, Sequence[float]]) -> None:
        """Recompute the context column and window of every turn of ``sessions``; a window
        whose text changed takes its vector from ``windows`` or is left to fill."""
        for user, session in sessions:
            rows = self._db.execute(
                "SELECT r.rowid, r.own, r.window, lexical.ctx FROM recall_index AS r JOIN lexical ON lexical.rowid = r.rowid"
                " WHERE r.user = ? AND r.session = ? AND r.kind = ? ORDER BY r.created_at, r.memory_id",
                (user, session, Kind.TURN.value),
            ).fetchall()
            owns = [r[1] for r in rows]
            for i, (rowid, own, window, ctx) in enumerate(rows):
                new_ctx, new_window = context_text(owns, i), window_text(owns, i)
                if new_ctx != ctx:
                    self._db.execute("UPDATE lexical SET ctx = ? WHERE rowid = ?", (new_ctx, rowid))
                if new_window != window:
                    # A turn alone in its session is its own window: its turn vector.
                    vector = windows.get(new_window) if new_window != own else self._turn_vector(rowid)
                    self._db.execute(
                        "UPDATE recall_index SET window = ?, window_vector = ? WHERE rowid = ?",
                        (new_window, None if vector is None else _blob(vector), rowid),
                    )

    def _turn_vector(self, rowid: int) -> np.ndarray:
        blob = self._db.execute("SELECT turn_vector FROM recall_index WHERE rowid = ?", (rowid,)).fetchone()[0]
        return np.frombuffer(blob, dtype=np.float32)

    def rebuild(self, user: str, memories: Sequence[Memory], vectors: Sequence[Sequence[float]]) -> None:
        """Replace ``user``'s rows with ``memories`` (read from the store) and their vectors;
        windows are left to fill."""
        with atomic(self._db):
            self._db.execute("DELETE FROM lexical WHERE rowid IN (SELECT rowid FROM recall_index WHERE user = ?)", (user,))
            # Rows no memory owns (left by a crash of older code, or written by hand) would weigh in BM25.
            self._db.execute("DELETE FROM lexical WHERE rowid NOT IN (SELECT rowid FROM recall_index)")
            self._db.execute("DELETE FROM recall_index WHERE user = ?", (user,))
            self._put(memories, vectors, {})
            self._clean([user], written=True)

    # reads --------------------------------------------------------------------------

    def missing_windows(self, user: str) -> list[tuple[int, str]]:
        """(rowid, window text) of ``user``'s rows whose window vector is still to compute."""
        return self._db.execute("SELECT rowid, window FROM recall_index WHERE user = ? AND window_vector IS NULL", (user,)).fetchall()

    def fill_windows(self, vectors: Mapping[int, Sequence[float]]) -> None:
        """Store computed window vectors by rowid."""
        with atomic(self._db):
            self._db.executemany("UPDATE recall_index SET window_vector = ? WHERE rowid = ?", [(_blob(v), r) for r, v in vectors.items()])

    def load(self, user: str) -> UserIndex:
        """``user``'s rows as arrays (``missing_windows`` must be filled first)."""
        rows = self._db.execute(
            "SELECT memory_id, rowid, kind, speaker, created_at, archived, ended, text, caption, session, turn_vector,"
            " window_vector FROM recall_index WHERE user = ? ORDER BY created_at, memory_id",
            (user,),
        ).fetchall()
        sessions = [r[9] for r in rows]
        seen: set[str] = set()
        first = np.zeros(len(rows), dtype=bool)
        for i, (row, session) in enumerate(zip(rows, sessions)):
            if _has_neighbours(row[2], session) and session not in seen:
                seen.add(session)
                first[i] = True
        dimension = len(rows[0][10]) // 4 if rows else 0
        matrix = lambda column: np.frombuffer(b"".join(r[column] for r in rows), dtype=np.float32).reshape(len(rows), dimension)  # noqa: E731
        return UserIndex(
            ids=[r[0] for r in rows],
            rowids=np.array([r[1] for r in rows], dtype=np.int64),
            kinds=np.array([r[2] for r in rows], dtype=object),
            speakers=[r[3] for r in rows],
            created_at=np.array([r[4] for r in rows], dtype=np.float64),
            archived=np.array([bool(r[5]) for r in rows], dtype=bool),
            ended=np.array([bool(r[6]) for r in rows], dtype=bool),
            texts=[r[7] for r in rows],
            caption=np.array([bool(r[8]) for r in rows], dtype=bool),
            first=first,
            turn=matrix(10),
            window=matrix(11),
        )

    def lexical(self, match: str, weights: tuple[float, float, float], user: str) -> dict[int, float]:
        """Rowid → BM25 score (higher is better) of ``user``'s rows that match the FTS5
        query ``match``, with per-column weights (own, context, day). The BM25 statistics
        (IDF, mean length) are those of the whole table, every user's rows.

        The CROSS JOIN keeps SQLite from scanning the user's rows and running the full-text
        query once for each (33 ms instead of about 1 ms for 600 turns); see ``LEXICAL_SQL``."""
        own, ctx, day = weights
        rows = self._db.execute(LEXICAL_SQL.format(own=float(own), ctx=float(ctx), day=float(day)), (match, user))
        return {rowid: -score for rowid, score in rows}
