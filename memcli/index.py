"""The recall index: what recall scores, on disk beside the Chroma store, under the same ids.

Chroma holds the memories (text, metadata, embedding) and stays their record; this index,
in the SQLite sidecar, holds what recall reads for every query, so that a query touches no
Chroma at all. ``recall_index`` has one row per memory, with:

- the fields recall filters on, the memory's own vector (a copy of its Chroma embedding)
  and its *window* vector, the embedding of the turn with its previous and next turn of
  the same session (a question often names what one turn says and another answers);
- the three fields of its lexical document (``memcli.lexical``): its own text, its
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

Every write also records what it changed, so that an index loaded in memory (``UserIndex``)
is brought up to date by reading the changed rows alone (``changes``): each write takes the
next number of a counter kept in ``index_meta`` and stamps it on every row it inserts or
updates (``seq``) and on every row it deletes (``recall_removed``). A user's rows written
whole (a rebuild, or a user's first memories) get a new *epoch*: what was loaded before is
to be loaded again whole.
"""

from __future__ import annotations

import contextlib
import sqlite3
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

import numpy as np

from memcli.dates import says_when, spoken_day
from memcli.lexical import LexicalIndex
from memcli.memory import Kind, Memory

INDEX_VERSION = 3
"""Bump when what the index stores changes: older indexes are then rebuilt."""
CONTEXT_BEFORE, CONTEXT_AFTER = 2, 1
"""Turns of the same session in a memory's lexical context column (measured best of 1-3 each)."""
WINDOW_BEFORE, WINDOW_AFTER = 1, 1
"""Turns of the same session embedded with a memory in its window vector."""
VECTOR_DTYPE = np.float32
"""The type of the vectors a ``UserIndex`` holds in memory. float16 would halve their
memory (2 x 384 x 2 bytes a memory with MiniLM instead of 3 KB) but makes every query
convert the whole matrix; ``scripts/bench.py --vector-dtype`` measures both."""

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
CREATE INDEX IF NOT EXISTS recall_missing_windows ON recall_index (user) WHERE window_vector IS NULL;
CREATE TABLE IF NOT EXISTS recall_removed (user TEXT NOT NULL, row INTEGER NOT NULL, seq INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS recall_removed_by_user ON recall_removed (user, seq);
CREATE TABLE IF NOT EXISTS index_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
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
    "memory_id, rowid, kind, speaker, created_at, archived, ended, text, caption, session, turn_vector, window_vector,"
    " own, context, spoken_day"
)
"""What ``load`` and ``changes`` read of each row, in the order of ``UserIndex._put_rows``."""


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


COMPACT_AT = 64
"""Dead slots (deleted rows) a ``UserIndex`` tolerates before it compacts, and at least a
quarter of its slots: compaction copies every row, so it runs rarely (amortised)."""


@dataclass
class IndexChanges:
    """What changed in one user's rows of the recall index after a ``seq`` (``RecallIndex.changes``).

    rows: the rows inserted or updated since, with the columns of ``ROW_COLUMNS``, in time
    order. removed: the rowids deleted since, oldest deletion first. seq: the counter now.
    epoch: the user's epoch now (a new one means: load the user's rows again whole).
    """

    rows: list[tuple]
    removed: list[int]
    seq: int
    epoch: str


def _code(codes: dict[str, int], names: list[str], name: str) -> int:
    """The small integer standing for ``name`` (a kind, a speaker), given on first sight."""
    code = codes.get(name)
    if code is None:
        code = codes[name] = len(names)
        names.append(name)
    return code


class UserIndex:
    """One user's rows of the recall index as arrays (what a query scores), with the
    per-row features recall reads worked out once per row, brought up to date by ``apply``.

    Rows sit in *slots*. A fresh load (``from_rows``) puts them in time order (created_at,
    then memory id); rows inserted later are appended after them, rows updated later are
    patched where they sit, and deleted rows become dead slots (``alive`` false) until a
    compaction (``COMPACT_AT``). Every array has one entry per slot (``len``), and the
    arrays are views of storage with spare capacity that doubles when full, so appending
    a row copies nothing in the common case.

    ``turn`` and ``window``: unit vectors (``VECTOR_DTYPE``), shape (len, dimension), contiguous.
    ``first``: the first turn of its session. ``archived`` / ``ended``: forgotten, or a fact
    that has ended. ``kind_codes`` / ``speaker_codes``: small integers standing for the
    kind and speaker (``kind_mask``, ``speaker_table``). ``log_length``: log(1 + length of
    the text); ``question``: 1.0 when the text ends with "?". ``seq`` / ``epoch``: how far
    the index has been brought (``RecallIndex.changes``).
    """

    _COLUMNS: dict[str, type] = {
        "rowids": np.int64, "kind_codes": np.int32, "speaker_codes": np.int32, "created_at": np.float64,
        "archived": bool, "ended": bool, "caption": bool, "first": bool, "alive": bool,
        "log_length": np.float64, "question": np.float64, "says_when": np.float64,
    }

    def __init__(self, dimension: int = 0, seq: int = 0, epoch: str = "") -> None:
        self.dimension = dimension
        self.seq = seq
        self.epoch = epoch
        self.ids: list[str] = []
        """The memory id of each slot."""
        self.texts: list[str] = []
        """The text of each slot."""
        self._sessions: list[str] = []
        self._n = 0
        self._dead = 0
        self._capacity = 0
        self._store: dict[str, np.ndarray] = {}
        self._slot_of: dict[int, int] = {}
        self._session_slots: dict[str, set[int]] = {}
        self._session_first: dict[str, int] = {}
        self._kind_codes: dict[str, int] = {}
        self._kind_names: list[str] = []
        self._speaker_codes: dict[str, int] = {}
        self._speaker_names: list[str] = []
        self._speaker_counts: list[int] = []
        self._says_when_ready = False
        self._months: dict[float, np.ndarray] = {}
        self.lexical = LexicalIndex()
        """BM25 postings of the rows, by slot (``memcli.lexical``)."""
        self._reserve(0)

    @classmethod
    def from_rows(cls, rows: Sequence[tuple], seq: int = 0, epoch: str = "") -> UserIndex:
        """An index of ``rows`` (columns of ``ROW_COLUMNS``, in time order), at ``seq`` and ``epoch``."""
        index = cls(len(rows[0][10]) // 4 if rows else 0, seq, epoch)
        touched: dict[str, list[int]] = {}
        index._put_rows(rows, touched)
        index._first(touched)
        return index

    # the arrays -----------------------------------------------------------------------

    def __len__(self) -> int:
        """Slots, dead ones included: the length of every array."""
        return self._n

    @property
    def count(self) -> int:
        """Rows alive (memories in the index)."""
        return self._n - self._dead

    def _column(self, name: str) -> np.ndarray:
        return self._store[name][: self._n]

    rowids = property(lambda self: self._column("rowids"), doc="The rowid of each slot.")
    kind_codes = property(lambda self: self._column("kind_codes"), doc="The kind of each slot, as a code.")
    speaker_codes = property(lambda self: self._column("speaker_codes"), doc="The speaker of each slot, as a code.")
    created_at = property(lambda self: self._column("created_at"), doc="Unix seconds the memory was learned.")
    archived = property(lambda self: self._column("archived"), doc="Forgotten (archived).")
    ended = property(lambda self: self._column("ended"), doc="A fact that has ended.")
    caption = property(lambda self: self._column("caption"), doc="Shares an image.")
    first = property(lambda self: self._column("first"), doc="The first turn of its session.")
    alive = property(lambda self: self._column("alive"), doc="False for a dead slot (a deleted row).")
    log_length = property(lambda self: self._column("log_length"), doc="log(1 + length of the text).")
    question = property(lambda self: self._column("question"), doc="1.0 when the text ends with '?'.")
    turn = property(lambda self: self._column("turn"), doc="Each memory's own unit vector, (len, dimension).")
    window = property(lambda self: self._column("window"), doc="Each memory's window unit vector, (len, dimension).")

    @property
    def kinds(self) -> np.ndarray:
        """The kind of each slot (an object array of strings)."""
        return np.array(self._kind_names + [""], dtype=object)[self.kind_codes]

    @property
    def speakers(self) -> list[str]:
        """The speaker of each slot ("" for none)."""
        return [self._speaker_names[c] for c in self.speaker_codes]

    @property
    def says_when(self) -> np.ndarray:
        """1.0 for the memories whose text places something in time (``says_when``), else
        0.0; worked out for every row at the first "when" question (about 11 ms for 400
        turns), then for each row as it is written, not at every question."""
        if not self._says_when_ready:
            self._store["says_when"][: self._n] = [says_when(t) for t in self.texts]
            self._says_when_ready = True
        return self._column("says_when")

    def months(self, shift: float = 0.0) -> np.ndarray:
        """The month (1-12, local time) of each slot's ``created_at`` minus ``shift``
        seconds; worked out for every row at the first call with this shift, then for each
        row as it is written."""
        if shift not in self._months:
            store = np.zeros(self._capacity, dtype=np.int8)
            store[: self._n] = [datetime.fromtimestamp(t - shift).month for t in self.created_at]
            self._months[shift] = store
        return self._months[shift][: self._n]

    def kind_mask(self, kinds: Iterable[str]) -> np.ndarray:
        """True for the slots of one of ``kinds``."""
        table = np.zeros(len(self._kind_names) + 1, dtype=bool)
        for kind in kinds:
            if kind in self._kind_codes:
                table[self._kind_codes[kind]] = True
        return table[self.kind_codes]

    def speaker_names(self) -> set[str]:
        """The speakers of the rows alive ("" for none left out)."""
        return {name for name, count in zip(self._speaker_names, self._speaker_counts) if name and count > 0}

    def speaker_table(self, chosen: Callable[[str], bool]) -> np.ndarray:
        """1.0 for the slots whose speaker is ``chosen``, else 0.0 (one call per speaker)."""
        table = np.array([float(chosen(name)) for name in self._speaker_names] + [0.0])
        return table[self.speaker_codes]

    # updates ---------------------------------------------------------------------------

    def apply(self, changes: IndexChanges) -> None:
        """Bring the index up to ``changes`` (of the same epoch): drop the removed rows,
        append the new ones, patch the updated ones where they sit, and set the ``first``
        flag of every session they touch again."""
        touched: dict[str, list[int]] = {}
        for rowid in changes.removed:
            slot = self._slot_of.pop(rowid, None)
            if slot is not None:
                self._unlink(slot, touched)
                self._store["alive"][slot] = False
                self.lexical.drop(slot)
                self._dead += 1
        self._put_rows(changes.rows, touched)
        self._first(touched)
        self.seq = changes.seq
        if self._dead >= max(COMPACT_AT, self._n // 4):
            self._compact()

    def _reserve(self, n: int) -> None:
        """Grow the storage to hold ``n`` slots (doubling), copying the slots in use."""
        if n <= self._capacity and self._store:
            return
        capacity = max(n, 2 * self._capacity, 16)
        store: dict[str, np.ndarray] = {}
        for name, dtype in self._COLUMNS.items():
            store[name] = np.zeros(capacity, dtype=dtype)
        for name in ("turn", "window"):
            store[name] = np.zeros((capacity, self.dimension), dtype=VECTOR_DTYPE)
        for name, array in self._store.items():
            store[name][: self._n] = array[: self._n]
        for shift, array in list(self._months.items()):
            self._months[shift] = np.zeros(capacity, dtype=np.int8)
            self._months[shift][: self._n] = array[: self._n]
        self._store, self._capacity = store, capacity

    def _unlink(self, slot: int, touched: dict[str, list[int]]) -> None:
        """Take ``slot`` out of its session and its speaker's count (before it is rewritten
        or dropped); its session goes into ``touched``."""
        self._speaker_counts[self._store["speaker_codes"][slot]] -= 1
        session = self._sessions[slot]
        if session:
            self._session_slots[session].discard(slot)
            touched.setdefault(session, [])
            if self._session_first.get(session) == slot:
                del self._session_first[session]
        self._store["first"][slot] = False

    def _put_rows(self, rows: Sequence[tuple], touched: dict[str, list[int]]) -> None:
        """Write ``rows`` into their slots (new rows appended); ``touched`` gains each
        session a row joined, with the slots that joined it."""
        if not rows:
            return
        if self.dimension == 0:
            self.dimension = len(rows[0][10]) // 4
            self._store = {}
            self._reserve(self._capacity)
        slots = np.empty(len(rows), dtype=np.int64)
        appended = 0
        for i, row in enumerate(rows):
            slot = self._slot_of.get(row[1])
            if slot is None:
                slot = self._slot_of[row[1]] = self._n + appended
                appended += 1
            else:
                self._unlink(slot, touched)
            slots[i] = slot
        self._reserve(self._n + appended)
        self.ids.extend([""] * appended)
        self.texts.extend([""] * appended)
        self._sessions.extend([""] * appended)
        self._n += appended
        for slot, row in zip(slots.tolist(), rows):
            memory_id, _, kind, _, _, _, _, text, _, session = row[:10]
            self.ids[slot], self.texts[slot] = memory_id, text
            self._sessions[slot] = session if _has_neighbours(kind, session) else ""
            if self._sessions[slot]:
                self._session_slots.setdefault(session, set()).add(slot)
                touched.setdefault(session, []).append(slot)
        # contiguous slots (a load, an append) take a slice, not a fancy index
        where: slice | np.ndarray = slots
        if len(rows) == 1 or (slots[-1] - slots[0] == len(rows) - 1 and bool(np.all(np.diff(slots) == 1))):
            where = slice(int(slots[0]), int(slots[-1]) + 1)
        speakers = [_code(self._speaker_codes, self._speaker_names, r[3]) for r in rows]
        self._speaker_counts.extend([0] * (len(self._speaker_names) - len(self._speaker_counts)))
        for code in speakers:
            self._speaker_counts[code] += 1
        texts = [r[7] for r in rows]
        s = self._store
        s["rowids"][where] = [r[1] for r in rows]
        s["kind_codes"][where] = [_code(self._kind_codes, self._kind_names, r[2]) for r in rows]
        s["speaker_codes"][where] = speakers
        s["created_at"][where] = [r[4] for r in rows]
        s["archived"][where] = [bool(r[5]) for r in rows]
        s["ended"][where] = [bool(r[6]) for r in rows]
        s["caption"][where] = [bool(r[8]) for r in rows]
        s["alive"][where] = True
        s["first"][where] = False
        s["log_length"][where] = np.log1p([len(t) for t in texts])
        s["question"][where] = [t.strip().endswith("?") for t in texts]
        s["turn"][where] = np.frombuffer(b"".join(r[10] for r in rows), dtype=np.float32).reshape(len(rows), self.dimension)
        s["window"][where] = np.frombuffer(b"".join(r[11] for r in rows), dtype=np.float32).reshape(len(rows), self.dimension)
        self.lexical.put(slots, [(r[12], r[13], r[14]) for r in rows])
        if self._says_when_ready:
            s["says_when"][where] = [says_when(t) for t in texts]
        for shift, months in self._months.items():
            months[where] = [datetime.fromtimestamp(r[4] - shift).month for r in rows]

    def _first(self, touched: Mapping[str, list[int]]) -> None:
        """Set ``first`` again on the turns of the ``touched`` sessions, the earliest
        (created_at, memory id) of each: among the slots that joined and the session's
        first, or among all its slots when its first left."""
        first, created_at = self._store["first"], self._store["created_at"]
        for session, joined in touched.items():
            slots = self._session_slots.get(session)
            if not slots:
                self._session_slots.pop(session, None)
                self._session_first.pop(session, None)
                continue
            current = self._session_first.get(session)
            best = min(slots if current is None else [current, *joined], key=lambda i: (created_at[i], self.ids[i]))
            if current is not None:
                first[current] = False
            first[best] = True
            self._session_first[session] = best

    def _compact(self) -> None:
        """Drop the dead slots, keeping the order of the others."""
        keep = np.flatnonzero(self.alive)
        for name, array in [*self._store.items(), *self._months.items()]:
            array[: len(keep)] = array[keep]
        self.lexical.compact(keep)
        self.ids = [self.ids[i] for i in keep]
        self.texts = [self.texts[i] for i in keep]
        self._sessions = [self._sessions[i] for i in keep]
        self._n, self._dead = len(keep), 0
        self._slot_of = {int(r): i for i, r in enumerate(self.rowids)}
        self._session_slots, self._session_first = {}, {}
        first = self.first
        for slot, session in enumerate(self._sessions):
            if session:
                self._session_slots.setdefault(session, set()).add(slot)
                if first[slot]:
                    self._session_first[session] = slot


class RecallIndex:
    """The recall index tables of an open sidecar connection (see the module docstring)."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self._db = db
        # An index of an older version lacks columns: add them (its rows are rebuilt, INDEX_VERSION),
        # and drop the FTS5 table that held the lexical fields up to version 2.
        columns = {row[1] for row in db.execute("PRAGMA table_info(recall_index)")}
        added = [(name, kind) for name, kind in NEWER_COLUMNS if name not in columns]
        old_tables = [name for (name,) in db.execute("SELECT name FROM sqlite_master WHERE name IN ('lexical', 'lexical_terms')")]
        if added or old_tables:
            with atomic(db):
                for name, kind in added:
                    db.execute(f"ALTER TABLE recall_index ADD COLUMN {name} {kind}")
                for name in sorted(old_tables, key=lambda n: n != "lexical_terms"):  # the vocabulary before its table
                    db.execute(f"DROP TABLE IF EXISTS {name}")
        db.execute(SEQ_SCHEMA)
        db.execute(UNRECORDED_SCHEMA)

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
            # A random epoch, not a count: a sidecar deleted and made again cannot repeat one.
            self._db.executemany("INSERT OR REPLACE INTO index_meta VALUES (?, ?)", [(f"epoch:{u}", uuid.uuid4().hex) for u in users])

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
            or self._db.execute("SELECT 1 FROM recall_index WHERE user = ? AND record = '{}' LIMIT 1", (user,)).fetchone() is not None
        )

    def forget_user(self, user: str) -> None:
        """Drop the marks (dirty, version, epoch) of a user who has no rows left."""
        keys = [f"dirty:{user}", f"version:{user}", f"epoch:{user}"]
        marks = ", ".join("?" * len(keys))
        if self._db.execute(f"SELECT 1 FROM index_meta WHERE key IN ({marks}) LIMIT 1", keys).fetchone():
            with atomic(self._db):
                self._db.execute(f"DELETE FROM index_meta WHERE key IN ({marks})", keys)

    def ids(self, user: str) -> set[str]:
        """The ids of ``user``'s memories in the index."""
        return {r[0] for r in self._db.execute("SELECT memory_id FROM recall_index WHERE user = ?", (user,))}

    def unclean(self) -> list[str]:
        """The users whose rows may differ from the store (``is_dirty``), among those the
        index knows of."""
        found = {
            key.partition(":")[2]
            for (key,) in self._db.execute(
                "SELECT key FROM index_meta WHERE key LIKE 'dirty:%' OR (key LIKE 'version:%' AND value != ?)", (str(INDEX_VERSION),)
            )
        }
        found.update(user for (user,) in self._db.execute("SELECT DISTINCT user FROM recall_index WHERE record = '{}'"))
        return sorted(found)

    def count(self) -> int:
        """The memories in the index, every user's."""
        return int(self._db.execute("SELECT count(*) FROM recall_index").fetchone()[0])

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

    def records_by_id(self, ids: Sequence[str]) -> list[tuple[str, str, str, str]]:
        """(id, user, text, record) of the memories with these ids that the index holds."""
        found: list[tuple[str, str, str, str]] = []
        for start in range(0, len(ids), 500):
            chunk = list(ids[start : start + 500])
            marks = ", ".join("?" * len(chunk))
            found.extend(self._db.execute(f"SELECT memory_id, user, text, record FROM recall_index WHERE memory_id IN ({marks})", chunk))
        return found

    def ids_with_prefix(self, prefix: str) -> list[str]:
        """Every id in the index that starts with ``prefix``."""
        # A range on the unique index: every string that starts with prefix sorts below prefix + U+10FFFF.
        return [r[0] for r in self._db.execute(
            "SELECT memory_id FROM recall_index WHERE memory_id >= ? AND memory_id < ?", (prefix, prefix + "\U0010ffff")
        )]

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
        self, memories: Sequence[Memory], vectors: Sequence[Sequence[float]], windows: Mapping[str, Sequence[float]], seq: int
    ) -> None:
        # A user with no rows yet is written whole by this version from the start.
        users = {m.user for m in memories}
        new_users = {u for u in users if not self._db.execute("SELECT 1 FROM recall_index WHERE user = ? LIMIT 1", (u,)).fetchone()}
        for memory, vector in zip(memories, vectors):
            own = memory.index_text()
            # A turn with neighbours gets its window from _refresh; a memory alone is its own window.
            alone = not _has_neighbours(memory.kind, memory.session)
            self._db.execute(
                "INSERT INTO recall_index (memory_id, user, kind, session, speaker, created_at, archived, ended, text,"
                " caption, own, window, turn_vector, window_vector, seq, context, spoken_day, record)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, '', ?, ?)"
                " ON CONFLICT (memory_id) DO UPDATE SET user = excluded.user, kind = excluded.kind,"
                " session = excluded.session, speaker = excluded.speaker, created_at = excluded.created_at,"
                " archived = excluded.archived, ended = excluded.ended, text = excluded.text, caption = excluded.caption,"
                " own = excluded.own, window = excluded.window, turn_vector = excluded.turn_vector,"
                " window_vector = excluded.window_vector, seq = excluded.seq, context = excluded.context,"
                " spoken_day = excluded.spoken_day, record = excluded.record",
                (memory.id, memory.user, memory.kind, memory.session, memory.speaker, memory.created_at,
                 int(memory.archived), int(memory.valid_to > 0), memory.text, int(bool(memory.caption)), own,
                 own if alone else "", _blob(vector), _blob(vector) if alone else None, seq, spoken_day(memory.day),
                 memory.to_record()),
            )
        self._refresh({(m.user, m.session) for m in memories if _has_neighbours(m.kind, m.session)}, windows, seq)
        self._clean(users)
        self._clean(new_users, written=True)

    def set_state(self, memories: Sequence[Memory]) -> None:
        """Record the metadata of ``memories`` written back to the store (reinforcement,
        pins, feedback, archiving, restoring, a fact's end); mark their users clean. Only
        rows archived, restored or ended count as changed for recall (``seq``).

        An archived turn is no longer recalled, but its words stay in its neighbours'
        context and windows (the trace a faded memory leaves in what surrounded it) until
        it is purged, which ``remove`` scrubs."""
        with atomic(self._db):
            self._db.executemany("UPDATE recall_index SET record = ? WHERE memory_id = ?", [(m.to_record(), m.id) for m in memories])
            # Only the rows whose state changes count as changed (a reinforcement changes none).
            states = [(int(m.archived), int(m.valid_to > 0), m.id) for m in memories]
            changed = [
                state for state in states
                if self._db.execute("SELECT 1 FROM recall_index WHERE memory_id = ? AND (archived != ? OR ended != ?)",
                                    (state[2], state[0], state[1])).fetchone()
            ]
            if changed:
                seq = self._stamp()
                self._db.executemany(
                    "UPDATE recall_index SET archived = ?, ended = ?, seq = ? WHERE memory_id = ?", [(a, e, seq, i) for a, e, i in changed]
                )
            self._clean(m.user for m in memories)

    def remove(self, ids: Sequence[str], users: Iterable[str]) -> None:
        """Drop memories from the index and refresh their sessions' context and windows, so
        that nothing of a deleted turn survives in its neighbours; mark ``users`` clean."""
        with atomic(self._db):
            seq = self._stamp()
            sessions: set[tuple[str, str]] = set()
            for memory_id in ids:
                row = self._db.execute("SELECT rowid, user, session, kind FROM recall_index WHERE memory_id = ?", (memory_id,)).fetchone()
                if row is None:
                    continue
                rowid, user, session, kind = row
                self._db.execute("DELETE FROM recall_index WHERE rowid = ?", (rowid,))
                self._db.execute("INSERT INTO recall_removed (user, row, seq) VALUES (?, ?, ?)", (user, rowid, seq))
                if _has_neighbours(kind, session):
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
                    self._db.execute("UPDATE recall_index SET context = ?, seq = ? WHERE rowid = ?", (new_ctx, seq, rowid))
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
            known = windows if windows is not None else {
                window: np.frombuffer(blob, dtype=np.float32)
                for window, blob in self._db.execute(
                    "SELECT window, window_vector FROM recall_index WHERE user = ? AND window_vector IS NOT NULL", (user,)
                )
            }
            self._db.execute("DELETE FROM recall_index WHERE user = ?", (user,))
            # The new epoch tells every loaded copy to load again whole: no deletion to track.
            self._db.execute("DELETE FROM recall_removed WHERE user = ?", (user,))
            self._put(memories, vectors, known, seq)
            self._clean([user], written=True)

    # reads --------------------------------------------------------------------------

    def missing_windows(self, user: str) -> list[tuple[int, str]]:
        """(rowid, window text) of ``user``'s rows whose window vector is still to compute
        (a partial index holds those rows alone: nothing is scanned when none is missing)."""
        return self._db.execute(
            "SELECT rowid, window FROM recall_index INDEXED BY recall_missing_windows WHERE user = ? AND window_vector IS NULL", (user,)
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
        (``missing_windows`` must be filled first)."""
        rows = self._db.execute(
            f"SELECT {ROW_COLUMNS} FROM recall_index WHERE user = ? ORDER BY created_at, memory_id", (user,)
        ).fetchall()
        return UserIndex.from_rows(rows, self.seq(), self.epoch(user))

    def changes(self, user: str, since: int) -> IndexChanges:
        """What changed in ``user``'s rows after ``since`` (a ``seq``): the rows written
        since (``missing_windows`` must be filled first) and the rowids deleted since."""
        rows = self._db.execute(
            f"SELECT {ROW_COLUMNS} FROM recall_index WHERE user = ? AND seq > ? ORDER BY created_at, memory_id", (user, since)
        ).fetchall()
        removed = self._db.execute("SELECT row FROM recall_removed WHERE user = ? AND seq > ? ORDER BY seq", (user, since))
        return IndexChanges(rows, [r[0] for r in removed], self.seq(), self.epoch(user))
