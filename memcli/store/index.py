"""One user's recall index in memory (``UserIndex``): the rows of the recall index
(``memcli.store.recall_index``) that recall scores, as arrays, with the per-row features recall
reads worked out once per row, brought up to date from the rows a write changed
(``IndexChanges``) rather than loaded again.
"""

from __future__ import annotations

import contextlib
import logging
import os
import tempfile
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np

from memcli.dates import says_when
from memcli.memory import Kind
from memcli.store.space import RESERVE, ROOM_FLOOR, free_bytes
from memcli.text.lexical import LexicalIndex, spill_room

log = logging.getLogger(__name__)

VECTOR_DTYPE = np.float32
"""The type of the vectors a ``UserIndex`` holds in memory. float16 would halve their
memory (2 x 384 x 2 bytes a memory with MiniLM instead of 3 KB) but makes every query
convert the whole matrix; ``scripts/bench.py --vector-dtype`` measures both."""


def has_neighbours(memory_kind: str, session: str) -> bool:
    """Whether a memory of ``memory_kind`` in ``session`` has neighbours: the turns of its
    (user, session), in time order; other kinds, and a turn without a session, have none."""
    return memory_kind == Kind.TURN.value and bool(session)


SCAN_AT = 200_000
"""Rows of a user's index from which recall scans the sign codes of the vectors (one bit a
component, ``UserIndex.sign_similarity``) instead of the vectors, and scores exactly only
the best ``RESCORED`` rows by that scan (``memcli.recall.retrieval``). Below it the exact
product over every row costs less than the scan and the rescoring (measured: 2 x 100,000
x 384 float32 in about 25 ms on one core, the sign scan 2 x 4 ms)."""
RESCORED = 1000
"""Rows scored exactly after a scan of the sign codes (``SCAN_AT``)."""


def sign_words(dimension: int) -> int:
    """64-bit words of the sign code of a vector of ``dimension`` components."""
    return (dimension + 63) // 64


def sign_codes(vectors: np.ndarray) -> np.ndarray:
    """The sign code of each row of ``vectors`` (shape (n, dimension)): bit i set when
    component i is positive, packed little-end first into ``sign_words`` uint64 words,
    shape (n, words)."""
    n, dimension = vectors.shape
    bits = np.zeros((n, sign_words(dimension) * 64), dtype=bool)
    bits[:, :dimension] = vectors > 0
    return np.packbits(bits, axis=1, bitorder="little").view(np.uint64).reshape(n, -1)


def _sign_storage(capacity: int, dimension: int) -> np.ndarray:
    """Zeroed storage for the sign codes of ``capacity`` rows, shape (capacity, words), laid
    out a word after another (Fortran order): a scan reads each word of every row as one
    contiguous array."""
    return np.zeros((sign_words(dimension), capacity), dtype=np.uint64).T


def _hamming(codes: np.ndarray, query: np.ndarray) -> np.ndarray:
    """The Hamming distance of each row of ``codes`` (n, words; ``_sign_storage``) to
    ``query`` (words,), uint16: ``HAMMING_BLOCK`` rows at a time, each word of a block a
    contiguous run (measured at a million rows: 2.3 times faster than over rows stored a
    row after another), and every word of the block xor-ed, counted and summed in one
    call each into buffers that stay in the cache (a third less time than a pass over
    every row a word, whose intermediate arrays went out to memory and back)."""
    n, words = codes.shape
    differ = np.empty(n, dtype=np.uint16)
    block = max(1, min(n, HAMMING_BLOCK))
    xor = np.empty((block, words), dtype=np.uint64, order="F")
    count = np.empty((block, words), dtype=np.uint8, order="F")
    for start in range(0, n, block):
        stop = min(n, start + block)
        rows = stop - start
        np.bitwise_xor(codes[start:stop], query, out=xor[:rows])
        np.bitwise_count(xor[:rows], out=count[:rows])
        np.sum(count[:rows], axis=1, dtype=np.uint16, out=differ[start:stop])
    return differ


HAMMING_BLOCK = 32_768
"""Rows of the sign codes ``_hamming`` takes at a time (1.5 MB of xor-ed words)."""


SPILL_AT = 65_536
"""Rows from which a load whole (``UserIndex.from_chunks``) writes its vectors to a file
rather than holding them (2 x 200 MB at 384 dimensions)."""


class _Spill:
    """The vectors of a load (``UserIndex.from_chunks``), "turn" and "window", written as
    they come into two unlinked files of ``rows`` rows, room made for them at once
    (``posix_fallocate``), then memory-mapped copy-on-write (``mapped``). A file never
    named: nothing is left behind by a kill, and its room is given back when the last map
    of it goes (the snapshot taken after the load maps its own files)."""

    def __init__(self, files: dict[str, Any], rows: int, dimension: int) -> None:
        self.files, self.rows, self.dimension = files, rows, dimension

    @classmethod
    def make(cls, folder: str | os.PathLike[str], rows: int, dimension: int) -> _Spill | None:
        """A spill of ``rows`` rows of ``dimension`` float32 in ``folder``, or None when
        the files cannot be made or the device has no room for them: it must have twice
        what the spill takes free (the snapshot written after the load takes as much
        again), the room of the postings' spill and snapshot (``spill_room``: the load's
        postings wait and are joined on the same device), ``ROOM_FLOOR`` and the store's
        ``RESERVE`` besides."""
        needed = len(UserIndex._VECTORS) * rows * dimension * 4
        wanted = 2 * needed + spill_room(rows) + ROOM_FLOOR + RESERVE
        free = free_bytes(Path(folder))
        if free is not None and free < wanted:
            log.info(
                "a load of %d rows keeps its vectors and postings in memory: %d MB free in %s, %d MB wanted",
                rows,
                free >> 20,
                folder,
                wanted >> 20,
            )
            return None
        files: dict[str, Any] = {}
        try:
            for name in UserIndex._VECTORS:
                files[name] = tempfile.TemporaryFile(dir=folder)
                if hasattr(os, "posix_fallocate"):
                    os.posix_fallocate(files[name].fileno(), 0, rows * dimension * 4)
                else:
                    files[name].truncate(rows * dimension * 4)
        except OSError:
            for f in files.values():
                f.close()
            return None
        return cls(files, rows, dimension)

    def write(self, name: str, where: int | np.ndarray, vectors: np.ndarray) -> None:
        """Write ``vectors`` (n, dimension float32) at row ``where`` on, or at rows ``where``
        (an array of slots). Raises OSError (the device)."""
        fd, size = self.files[name].fileno(), self.dimension * 4
        data = np.ascontiguousarray(vectors, dtype=np.float32)
        if isinstance(where, int):
            os.pwrite(fd, memoryview(data).cast("B"), where * size)
            return
        for slot, row in zip(where.tolist(), data):
            os.pwrite(fd, memoryview(row).cast("B"), slot * size)

    def mapped_one(self, name: str) -> MappedRows:
        """The file ``name`` as ``MappedRows`` (rows x dimension)."""
        return MappedRows.of_file(self.files[name].fileno(), self.rows, self.dimension)

    def mapped(self) -> dict[str, np.ndarray]:
        """The files as ``MappedRows`` (name -> rows x dimension); the files are closed (the maps keep them)."""
        try:
            return {name: self.mapped_one(name) for name in self.files}
        finally:
            self.close()

    def close(self) -> None:
        """Close the files (their room is given back once no map of them is left)."""
        for f in self.files.values():
            f.close()


def give_back_heap() -> None:
    """Give the heap freed by a big load back to the system (glibc's ``malloc_trim``): glibc
    keeps freed blocks below its mmap threshold in the process, and a load of a million rows
    left about 0.9 GB of them. Nothing where glibc is not the C library."""
    # a rare path (a big load): the C library's loader, not needed by anything else here
    import ctypes
    import ctypes.util

    with contextlib.suppress(OSError, AttributeError, TypeError):
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        libc.malloc_trim(0)


def sign_cosines(dimension: int) -> np.ndarray:
    """cos(pi * h / dimension) for h = 0 .. ``dimension`` (float32): the estimate of the
    cosine similarity of two vectors whose signs differ in h components (Charikar's SimHash)."""
    return np.cos(np.pi * np.arange(dimension + 1) / dimension).astype(np.float32)


class _Descriptor:
    """An open file descriptor, closed when the last array reading through it is gone: of
    the file at ``path``, or a duplicate of ``fd``."""

    def __init__(self, path: str = "", fd: int = -1) -> None:
        self.fd = os.dup(fd) if fd >= 0 else os.open(path, os.O_RDONLY)

    def __del__(self) -> None:
        with contextlib.suppress(OSError, AttributeError):
            os.close(self.fd)


class MappedRows(np.memmap):
    """A snapshot's vector file (rows of ``dimension`` float32) memory-mapped copy-on-write,
    whose rows picked by an array of slots (``vectors[slots]``, what recall's exact
    rescoring reads) are read from the file with ``pread`` rather than through the map.

    Through the map, the kernel maps the cached pages around every row read into the
    process (fault-around, 64 KB a fault) and they count in its resident memory: at a
    million memories both vector files (3 GB) ended up mapped after 100 recalls. A row
    written since the map was made (``mark``: appended into a spare row, or patched) is
    read through the map, where the write went. Every other use (slices, products,
    writes) is the memory map's."""

    _file: _Descriptor | None = None
    _row0 = 0
    _file_offset = 0
    _patched: np.ndarray | None = None
    _memo: dict[str, np.ndarray] | None = None

    @classmethod
    def open(cls, path: str) -> MappedRows:
        """The ``.npy`` file at ``path`` (2-D, C order), mapped copy-on-write. Raises
        OSError or ValueError as ``numpy.load`` does."""
        mapped = np.load(path, mmap_mode="c", allow_pickle=False)
        if mapped.ndim != 2 or not mapped.flags.c_contiguous:
            raise ValueError("not a matrix of rows")
        rows = mapped.view(cls)
        rows._file = _Descriptor(path)
        rows._file_offset = int(mapped.offset)
        rows._row0 = rows.ctypes.data
        rows._patched = np.zeros(len(mapped), dtype=bool)
        rows._memo = {}
        return rows

    @classmethod
    def of_file(cls, fd: int, rows: int, dimension: int) -> MappedRows:
        """The raw float32 rows (``rows`` x ``dimension``, from offset 0) of the open file
        ``fd`` (which may be unlinked), mapped copy-on-write. Raises OSError or ValueError
        as ``numpy.memmap`` does."""
        with os.fdopen(os.dup(fd), "rb") as f:
            mapped = np.memmap(f, dtype=np.float32, mode="c", shape=(rows, dimension))
        view = mapped.view(cls)
        view._file = _Descriptor(fd=fd)
        view._row0 = view.ctypes.data
        view._patched = np.zeros(rows, dtype=bool)
        view._memo = {}
        return view

    def __array_finalize__(self, obj: Any) -> None:
        super().__array_finalize__(obj)
        for name in ("_file", "_row0", "_file_offset", "_patched", "_memo"):
            setattr(self, name, getattr(obj, name, getattr(MappedRows, name)))

    def mark(self, where: slice | np.ndarray) -> None:
        """Rows ``where`` were written since the map was made: read them through the map."""
        if self._patched is not None:
            self._patched[where] = True
        if self._memo:
            self._memo.clear()

    def __getitem__(self, key: Any) -> Any:
        if (
            isinstance(key, np.ndarray)
            and key.ndim == 1
            and key.dtype.kind in "iu"
            and self._file is not None
            and self.ndim == 2
            and self.ctypes.data == self._row0
        ):
            return self._read(key)
        return super().__getitem__(key)

    def read_rows(self, start: int, stop: int) -> np.ndarray:
        """Rows ``start`` to ``stop`` as a new array, read with ``pread`` (a patched row
        through the map), so that reading the whole file a block at a time (a snapshot
        written from it) maps none of its pages into the process; nothing kept."""
        if self._file is None or self.ndim != 2 or self.ctypes.data != self._row0:
            return np.array(self[start:stop])
        memo, self._memo = self._memo, None
        try:
            return self._read(np.arange(start, stop, dtype=np.int64))
        finally:
            self._memo = memo

    def _read(self, slots: np.ndarray) -> np.ndarray:
        """Rows ``slots`` as a new array, each run of consecutive slots read with one
        ``pread`` (a patched row through the map). The last read of more than ``MEMO_ROWS``
        rows is kept read-only, and that read and every read of the same slots again
        (recall's fixed sample for the moments of a signal, every query) are given as a
        read-only view of it, not copied, until a row is written (``mark``): a view of a
        read-only array cannot be made writeable, so no caller can change what the next read
        gives."""
        n = len(self)
        slots = np.where(slots < 0, slots + n, slots).astype(np.int64)
        if len(slots) and (slots.min() < 0 or slots.max() >= n):
            raise IndexError("a slot out of range")
        memo = self._memo
        if memo and len(memo["slots"]) == len(slots) and np.array_equal(memo["slots"], slots):
            return memo["rows"].view()  # not copied: 6 MB a read of 4,096 rows
        out = np.empty((len(slots), self.shape[1]), dtype=self.dtype)
        size = out.itemsize * self.shape[1]
        buffer = memoryview(out).cast("B")
        fd, offset = self._file.fd, self._file_offset  # type: ignore[union-attr]
        # one read a run of consecutive slots (a session's neighbouring turns often come together)
        starts = np.flatnonzero(np.diff(slots, prepend=-2) != 1).tolist()
        for start, end in zip(starts, [*starts[1:], len(slots)]):
            want = (end - start) * size
            if os.preadv(fd, [buffer[start * size : end * size]], offset + int(slots[start]) * size) != want:
                raise OSError("a vector file shorter than its map")
        patched = self._patched[slots] if self._patched is not None else None
        if patched is not None and patched.any():
            out[patched] = np.asarray(super().__getitem__(slots[patched]))
        if memo is not None and len(slots) > MEMO_ROWS:
            out.setflags(write=False)
            memo.update(slots=slots, rows=out)
            return out.view()
        return out


MEMO_ROWS = 2048
"""Rows from which a read of ``MappedRows`` is kept for the next read of the same slots
(above twice ``RESCORED``: the rows a query rescores differ from query to query)."""


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
        "rowids": np.int64,
        "kind_codes": np.int32,
        "speaker_codes": np.int32,
        "created_at": np.float64,
        "archived": bool,
        "ended": bool,
        "caption": bool,
        "first": bool,
        "alive": bool,
        "log_length": np.float64,
        "question": np.float64,
        "says_when": np.float64,
    }
    _VECTORS = ("turn", "window")
    _CODES = {"turn": "turn_signs", "window": "window_signs"}

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
        self._linked = True
        """Whether ``_slot_of``, ``_session_slots`` and ``_session_first`` are worked out (``_link``)."""
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
        """BM25 postings of the rows, by slot (``memcli.text.lexical``)."""
        self.scrubbed = False
        """Rows were deleted since the index was loaded whole: its vocabulary may hold
        words only they had, so no snapshot is taken of it (``memcli.store.snapshot``)."""
        self.behind = 0
        """Rows written since the index was loaded whole or from a snapshot (``apply``)."""
        self._expected = 0
        """Slots to make room for at the first rows (``from_chunks``)."""
        self._spill: _Spill | None = None
        """Where a load writes its vectors (``from_chunks``), while it runs."""
        self._spill_to: str | os.PathLike[str] | None = None
        """The folder of the spill a load makes at its first rows (``from_chunks``)."""
        self._reserve(0)

    @classmethod
    def from_rows(cls, rows: Sequence[tuple], seq: int = 0, epoch: str = "") -> UserIndex:
        """An index of ``rows`` (columns of ``ROW_COLUMNS``, in time order), at ``seq`` and ``epoch``."""
        return cls.from_chunks([rows], seq, epoch)

    @classmethod
    def from_chunks(
        cls,
        chunks: Iterable[Sequence[tuple]],
        seq: int = 0,
        epoch: str = "",
        rows: int = 0,
        spill: str | os.PathLike[str] | None = None,
    ) -> UserIndex:
        """An index of the rows of ``chunks`` (lists of rows with the columns of
        ``ROW_COLUMNS``, in time order), at ``seq`` and ``epoch``: a big user's rows read a
        page at a time, never all held at once as Python objects.

        ``rows``: how many rows the chunks hold (0: unknown): the arrays are made that big
        at once, with ``spare_rows`` after them, instead of doubling as rows come (at a
        million rows each doubling copied gigabytes of vectors). ``spill``: a folder where,
        from ``SPILL_AT`` rows, the vectors are written as they come into unlinked files
        (``_Spill``) and then read through a copy-on-write memory map, as a snapshot's are,
        so that a big load never holds them in the process's own memory (3 GB at a million
        rows with 384 dimensions); the BM25 postings of the pages wait there too, in an
        unlinked file, until they are joined (``LexicalIndex.loading``); without room there
        (``_Spill.make``), both are kept in memory. An exception during the load (an
        interrupt included) closes the spill's files before it goes up."""
        index = cls(0, seq, epoch)
        index._expected = rows + index.spare_rows(rows) if rows else 0
        touched: dict[str, list[int]] = {}
        if spill is not None and rows >= SPILL_AT and VECTOR_DTYPE == np.float32:
            index._spill_to = spill
        index.lexical.loading()
        # Every row is new: the slot of each rowid and the slots of each session are worked
        # out at the first write (``_link``), not held through the load (at a million rows,
        # about 170 MB of Python dicts, sets and integers at its peak).
        index._linked = False
        try:
            for page in chunks:
                index._put_rows(page, touched)
            index._first_turns()
            index.lexical.settle(spill if index._spill is not None else None)
        except BaseException:  # an error or an interrupt: the spill's reserved room given back now, not at GC
            if index._spill is not None:
                index._spill.close()
                index._spill = None
            index.lexical.abandon()
            raise
        if index._spill is not None:
            spilled, index._spill = index._spill, None
            index._adopt(spilled.mapped())
        if rows >= SPILL_AT:
            give_back_heap()
        return index

    def snapshot_state(self) -> dict[str, Any]:
        """What ``memcli.store.snapshot`` saves of this index: {"arrays": name -> array,
        "lists": name -> JSON-able list or dict, "scalars": name -> number or string}.
        The ``says_when`` flags are worked out first, if no "when" question has asked for
        them yet, so that a snapshot always carries them: an index loaded from it does not
        read every text again at its first "when" question (seconds at a million rows)."""
        self._work_out_says_when()
        n = self._n
        arrays = {name: self._store[name][:n] for name in self._COLUMNS}
        for name in self._VECTORS:
            arrays[name], arrays[self._CODES[name]] = self._store[name][:n], self._store[self._CODES[name]][:n]
        lexical_arrays, lexical_lists, lexical_scalars = self.lexical.state()
        arrays.update({f"lexical_{k}": v for k, v in lexical_arrays.items()})
        lists = {
            "ids": self.ids,
            "texts": self.texts,
            "sessions": self._sessions,
            "kind_names": self._kind_names,
            "speaker_names": self._speaker_names,
            "speaker_counts": self._speaker_counts,
            **{f"lexical_{k}": v for k, v in lexical_lists.items()},
        }
        scalars = {
            "dimension": self.dimension,
            "seq": self.seq,
            "epoch": self.epoch,
            "n": n,
            "dead": self._dead,
            "says_when_ready": self._says_when_ready,
            **{f"lexical_{k}": v for k, v in lexical_scalars.items()},
        }
        return {"arrays": arrays, "lists": lists, "scalars": scalars}

    @classmethod
    def from_snapshot(
        cls, scalars: Mapping[str, Any], arrays: Mapping[str, np.ndarray], lists: Mapping[str, Any]
    ) -> UserIndex:
        """The index ``snapshot_state`` described (``turn`` and ``window`` may be read-only
        or copy-on-write memory maps: they are used as they are). Raises ValueError when
        the parts do not agree with each other."""
        n = int(scalars["n"])
        index = cls(int(scalars["dimension"]), int(scalars["seq"]), str(scalars["epoch"]))
        if any(len(arrays[name]) != n for name in cls._COLUMNS) or any(
            len(lists[name]) != n for name in ("ids", "texts", "sessions")
        ):
            raise ValueError("a snapshot whose parts differ in length")
        if any(len(arrays[name]) < n or arrays[name].shape[1] != index.dimension for name in cls._VECTORS):
            raise ValueError("a snapshot of another dimension, or too few vectors")
        codes = {
            name: arrays[code][:n] if code in arrays else sign_codes(arrays[name][:n])
            for name, code in cls._CODES.items()
        }
        if any(c.shape != (n, sign_words(index.dimension)) for c in codes.values()):
            raise ValueError("a snapshot whose sign codes differ in shape")
        index._n, index._dead = n, int(scalars["dead"])
        # not copied here: ``_adopt`` copies each into storage of the vectors' capacity
        index._store = {name: np.asarray(arrays[name][:n], dtype=dtype) for name, dtype in cls._COLUMNS.items()}
        index._store.update({cls._CODES[name]: c for name, c in codes.items()})
        index._capacity = n
        index._adopt({name: arrays[name] for name in cls._VECTORS})
        sessions: dict[str, str] = {}  # one string a session, not one a row
        index.ids, index.texts = list(lists["ids"]), list(lists["texts"])
        index._sessions = [sessions.setdefault(session, session) for session in lists["sessions"]]
        index._kind_names, index._speaker_names = list(lists["kind_names"]), list(lists["speaker_names"])
        index._speaker_counts = [int(c) for c in lists["speaker_counts"]]
        index._kind_codes = {name: i for i, name in enumerate(index._kind_names)}
        index._speaker_codes = {name: i for i, name in enumerate(index._speaker_names)}
        index._says_when_ready = bool(scalars["says_when_ready"])
        # The slot of each rowid and the slots of each session serve writes alone: worked
        # out at the first write (``_link``), not at a load that a recall waits for.
        index._linked = False
        index.lexical = LexicalIndex.from_state(
            {k[8:]: v for k, v in arrays.items() if k.startswith("lexical_")},
            {k[8:]: v for k, v in lists.items() if k.startswith("lexical_")},
            {k[8:]: v for k, v in scalars.items() if k.startswith("lexical_")},
        )
        return index

    def _adopt(self, vectors: Mapping[str, np.ndarray]) -> None:
        """Take ``vectors`` ("turn" and "window": arrays of at least ``len`` rows, the first
        ``len`` equal to this index's, usually memory maps of a snapshot with spare rows
        after them) as the storage of the vectors, and size every other array to their
        capacity (their rows in use copied). A memory map of another type than
        ``VECTOR_DTYPE`` is converted (read whole)."""
        n = self._n
        capacity = min(len(v) for v in vectors.values())
        store: dict[str, np.ndarray] = {}
        for name, array in self._store.items():
            if name in self._VECTORS:
                continue
            if len(array) == capacity and (name not in self._CODES.values() or array.flags.f_contiguous):
                store[name] = array  # already of that capacity (a load's, or a snapshot of it): not copied
                continue
            if name in self._CODES.values():
                store[name] = _sign_storage(capacity, self.dimension)
            else:
                store[name] = np.zeros((capacity, *array.shape[1:]), dtype=array.dtype)
            store[name][:n] = array[:n]
        for name in self._VECTORS:
            array = vectors[name][:capacity]
            store[name] = array if array.dtype == VECTOR_DTYPE else array.astype(VECTOR_DTYPE)
        for shift, array in list(self._months.items()):
            if len(array) != capacity:
                self._months[shift] = np.zeros(capacity, dtype=np.int8)
                self._months[shift][:n] = array[:n]
        self._store, self._capacity = store, capacity

    def spare_rows(self, rows: int | None = None) -> int:
        """Rows of zeros a snapshot's vector files hold after the rows in use (``len``, or
        ``rows``), for the rows written after the snapshot is loaded: appended in place,
        without copying the memory-mapped vectors (an eighth of the rows, at least 1,024)."""
        return max(1024, (self._n if rows is None else rows) // 8)

    def adopt_snapshot(
        self, vectors: Mapping[str, np.ndarray], postings: tuple[np.ndarray, np.ndarray] | None = None
    ) -> None:
        """Read the vectors from now on from ``vectors`` ("turn", "window": the memory maps
        of the snapshot just written of this index, ``memcli.store.snapshot.save``) instead of
        the process's own copy, which is freed; and the BM25 postings' entries from
        ``postings`` (the snapshot's slots and counts, read-only maps) instead of memory or
        the load's spill file, which is given back (``LexicalIndex.adopt``). Raises
        ValueError when they do not hold this index's rows (the vectors are then adopted,
        the postings not, if the postings alone do not agree)."""
        n = self._n
        for name in self._VECTORS:
            mapped = vectors[name]
            if len(mapped) < n or mapped.shape[1:] != (self.dimension,):
                raise ValueError("vectors that are not this index's")
        self._adopt(vectors)
        if postings is not None:
            self.lexical.adopt(*postings)

    def sign_similarity(self, vector: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """An estimate of the cosine similarity of each slot's ``turn`` and ``window``
        vector to the unit ``vector`` (float32, shape (len,) each), from the signs of their
        components alone (``sign_codes``): cos(pi * h / dimension), h the number of signs
        that differ (the estimate of Charikar's SimHash). Reads 2 x 48 bytes a slot with
        384 dimensions instead of 2 x 1,536; what recall uses to pick the candidates it
        scores exactly (``memcli.recall.retrieval``)."""
        table = sign_cosines(self.dimension)
        return tuple(np.take(table, differ) for differ in self.sign_differences(vector))  # type: ignore[return-value]

    def sign_differences(self, vector: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The number of components whose sign differs from that of the unit ``vector``'s,
        of each slot's ``turn`` and ``window`` vector (uint16, shape (len,) each): what
        ``sign_similarity`` reads its estimate from (``sign_cosines``)."""
        query = sign_codes(np.asarray(vector, dtype=np.float32).reshape(1, -1))[0]
        return tuple(_hamming(self._column(self._CODES[name]), query) for name in self._VECTORS)  # type: ignore[return-value]

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
        self._work_out_says_when()
        return self._column("says_when")

    def _work_out_says_when(self) -> None:
        """Fill ``says_when`` for every row, once (then each row as it is written)."""
        if not self._says_when_ready:
            self._store["says_when"][: self._n] = [says_when(t) for t in self.texts]
            self._says_when_ready = True

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
        return np.take(table, self.kind_codes)

    def speaker_names(self) -> set[str]:
        """The speakers of the rows alive ("" for none left out)."""
        return {name for name, count in zip(self._speaker_names, self._speaker_counts) if name and count > 0}

    def speaker_table(self, chosen: Callable[[str], bool], slots: np.ndarray | None = None) -> np.ndarray:
        """1.0 for the slots whose speaker is ``chosen``, else 0.0 (one call per speaker):
        of every slot, or of ``slots`` alone (an array of slots), in their order."""
        table = np.array([float(chosen(name)) for name in self._speaker_names] + [0.0])
        return np.take(table, self.speaker_codes if slots is None else self.speaker_codes[slots])

    # updates ---------------------------------------------------------------------------

    def _link(self) -> None:
        """Work out the slot of each rowid and the slots and first turn of each session,
        when a snapshot's load left them (``from_snapshot``)."""
        if self._linked:
            return
        alive, first = self.alive, self.first
        self._slot_of = {int(r): i for i, r in enumerate(self.rowids.tolist()) if alive[i]}
        self._session_slots, self._session_first = {}, {}
        for slot, session in enumerate(self._sessions):
            if session and alive[slot]:
                self._session_slots.setdefault(session, set()).add(slot)
                if first[slot]:
                    self._session_first[session] = slot
        self._linked = True

    def apply(self, changes: IndexChanges) -> None:
        """Bring the index up to ``changes`` (of the same epoch): drop the removed rows,
        append the new ones, patch the updated ones where they sit, and set the ``first``
        flag of every session they touch again."""
        if not changes.rows and not changes.removed:
            self.seq = changes.seq
            return
        self._link()
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
        self.scrubbed = self.scrubbed or bool(changes.removed)
        self.behind += len(changes.rows) + len(changes.removed)
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
        for name in self._VECTORS:
            store[name] = np.zeros((capacity, self.dimension), dtype=VECTOR_DTYPE)
            store[self._CODES[name]] = _sign_storage(capacity, self.dimension)
        spilled = self._spill is not None and capacity > self._spill.rows
        for name, array in self._store.items():
            if not spilled or name not in self._VECTORS:
                store[name][: self._n] = array[: self._n]
        if spilled and self._spill is not None:  # more rows than a load was told: its vectors read back, kept in memory
            for name in self._VECTORS:
                store[name][: self._n] = self._spill.mapped_one(name)[: self._n]
            self._spill.close()
            self._spill = None
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
            self._reserve(max(self._capacity, self._expected))
            if self._spill_to is not None:
                self._spill = _Spill.make(self._spill_to, self._capacity, self.dimension)
                if self._spill is not None:  # the postings of the pages wait on the same device
                    self.lexical.loading(self._spill_to)
                self._spill_to = None
        if not self._linked:  # a load (``from_chunks``): every row is new, appended
            slots, appended = np.arange(self._n, self._n + len(rows), dtype=np.int64), len(rows)
        else:
            slots, appended = np.empty(len(rows), dtype=np.int64), 0
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
            self._sessions[slot] = session if has_neighbours(kind, session) else ""
            if self._sessions[slot] and self._linked:
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
        for name, column in (("turn", 10), ("window", 11)):
            vectors = np.frombuffer(b"".join(r[column] for r in rows), dtype=np.float32).reshape(
                len(rows), self.dimension
            )
            if self._spill is not None:  # a load: untouched storage, the rows in the spill
                self._spill.write(name, int(slots[0]) if isinstance(where, slice) else slots, vectors)
            else:
                s[name][where] = vectors
            if isinstance(s[name], MappedRows):
                s[name].mark(where)
            s[self._CODES[name]][where] = sign_codes(vectors)
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

    def _first_turns(self) -> None:
        """Set ``first`` on the earliest (created_at, memory id) turn of each session, over
        every slot, from the arrays alone (a load: ``_link`` not worked out). The same
        turns as ``_first`` picks, without a set of slots a session."""
        n = self._n
        first = self._store["first"]
        first[:n] = False
        names: dict[str, int] = {}
        codes = np.fromiter(
            (names.setdefault(s, len(names)) if s else -1 for s in self._sessions[:n]), dtype=np.int64, count=n
        )
        held = np.flatnonzero((codes >= 0) & self._store["alive"][:n])
        if not len(held):
            return
        created_at = self._store["created_at"][:n]
        order = held[np.lexsort((created_at[held], codes[held]))]  # by session, then time (stable: by slot)
        ordered_codes, ordered_times = codes[order], created_at[order]
        starts = np.flatnonzero(np.r_[True, ordered_codes[1:] != ordered_codes[:-1]])
        ends = np.r_[starts[1:], len(order)]
        best = order[starts]
        # a session whose earliest time is shared by several turns: the least memory id of those
        tied = np.flatnonzero(
            (ends - starts > 1) & (ordered_times[np.minimum(starts + 1, len(order) - 1)] == ordered_times[starts])
        )
        for g in tied.tolist():
            start, end = int(starts[g]), int(ends[g])
            same = order[start:end][ordered_times[start:end] == ordered_times[start]]
            best[g] = min(same.tolist(), key=lambda i: self.ids[i])
        first[best] = True

    def _compact(self) -> None:
        """Drop the dead slots, keeping the order of the others."""
        keep = np.flatnonzero(self.alive)
        for name, array in [*self._store.items(), *self._months.items()]:
            array[: len(keep)] = array[keep]
            if isinstance(array, MappedRows):
                array.mark(np.flatnonzero(keep != np.arange(len(keep))))
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
