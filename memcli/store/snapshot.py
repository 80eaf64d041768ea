"""Snapshots of a user's recall index in memory (``UserIndex``), so that a service started
again loads a big user's index in a fraction of a second instead of reading it back from
the sidecar (8.5 s for 100,000 memories: 300 MB of vectors read, BM25 postings tokenized).

A snapshot is a folder of files beside the sidecar (``SNAPSHOT_DIR`` under the data
folder, one folder per user, named by a hash of the user's name), written whole by
``save``: the vectors as ``.npy`` files, memory-mapped copy-on-write when loaded (a page
the index patches becomes the process's own; the file is never written again), the BM25
postings as ``.npy`` files memory-mapped read-only (a query reads its terms' columns alone),
the other per-row arrays as ``.npy`` files, the ids and texts of the rows as UTF-8 files
with the end of each string (read a block at a time: a million texts never held as one
string), the sessions as a code a row, and the short lists and names as JSON.
Each save writes a new *generation* folder, fsyncs it, and only then points the user's
``current`` file at it (``writing_private``: a rename), so a kill at any point leaves the
previous snapshot or the new one, whole; folders no pointer names are removed by the next
save.

A snapshot records the ``seq`` and epoch of the recall index it was taken at
(``memcli.store.recall_index``). ``load`` trusts it only when the user's epoch is still
the same (a rebuild, a reindex or a sidecar made again gives a new one), its ``seq`` is
not ahead of the sidecar's, and its files are whole and agree with its manifest; the
caller then brings it up to date with the sidecar's change log (``RecallIndex.changes``)
and checks the count of rows against the sidecar's. Anything else: the snapshot is not
used (the index is loaded from the sidecar, and a new snapshot taken).

A snapshot holds the text of memories (and the words of deleted ones in its vocabulary),
so deleting a memory for good removes its user's snapshots (``drop``), and a snapshot is
taken only of an index loaded whole from the sidecar since the last deletion
(``UserIndex.scrubbed``).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import mmap
import os
import shutil
import uuid
from pathlib import Path
from typing import Any

import numpy as np

from memcli.paths import open_private, private_dir, writing_private
from memcli.store.index import MappedRows, UserIndex

SNAPSHOT_DIR = "recall-snapshots"
"""The folder of the snapshots, under the store's data folder."""
SNAPSHOT_VERSION = 4
"""Bump when what a snapshot holds changes: older snapshots are then not used (2: the
vectors' sign codes, and spare rows after the vectors; 3: the BM25 postings as int32 slots
and uint16 counts, ``memcli.text.lexical.Postings``; 4: the ids and texts as UTF-8 files,
the sessions as codes, ``_STRINGS``)."""
_MAPPED = ("turn", "window")
"""The arrays memory-mapped copy-on-write when loaded, written with spare rows (``UserIndex.spare_rows``)."""
_READ_MAPPED = ("lexical_indices", "lexical_counts")
"""The arrays memory-mapped read-only when loaded (the BM25 postings: a query reads its
terms' columns alone, and a merge writes new arrays, never these)."""
_STRINGS = ("ids", "texts")
"""The lists of strings (one a row) written as a UTF-8 file (``NAME.utf8``) and the end of
each string in it (``NAME_ends``, int64), not as JSON: at a million rows the JSON of the
lists was 160 MB, read as one string (four bytes a character once a text holds one
character beyond Latin-1) and parsed whole, and loading a snapshot peaked 1.5 GB above
what it kept."""
_STRING_BLOCK = 8 << 20
"""Bytes of a strings file read at a time."""
_POINTER = "current"
_MANIFEST = "manifest.json"


def user_dir(data_dir: Path, user: str) -> Path:
    """The folder of ``user``'s snapshots under the data folder ``data_dir``."""
    return data_dir / SNAPSHOT_DIR / hashlib.sha256(user.encode("utf-8")).hexdigest()[:32]


def drop(data_dir: Path, users: list[str] | set[str]) -> None:
    """Remove every snapshot of ``users`` (a deletion for good: they hold the deleted text)."""
    for user in users:
        with contextlib.suppress(FileNotFoundError):
            shutil.rmtree(user_dir(data_dir, user))


def _fsync_dir(path: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _write_array(folder: Path, name: str, array: np.ndarray) -> None:
    with os.fdopen(open_private(folder / f"{name}.npy"), "wb") as f:
        if isinstance(array, np.memmap) and array.ndim == 1 and len(array):
            _write_mapped(f, array)
        else:
            np.save(f, np.ascontiguousarray(array), allow_pickle=False)
        f.flush()
        os.fsync(f.fileno())


def _write_mapped(f: Any, array: np.memmap) -> None:
    """Write the read-only memory map ``array`` (1-D: the BM25 postings of an index loaded
    whole, ``memcli.text.lexical.Postings.joined``) as a ``.npy`` file a block at a time,
    each block's pages dropped from the process once written (``MADV_DONTNEED``: the file
    keeps them), so that writing it does not map the whole file in."""
    header = {"descr": np.lib.format.dtype_to_descr(array.dtype), "fortran_order": False, "shape": array.shape}
    np.lib.format.write_array_header_1_0(f, header)
    handle = getattr(array, "_mmap", None)
    lead = int(getattr(array, "offset", 0)) % mmap.ALLOCATIONGRANULARITY  # where the array starts in the map
    step = max(1, _WRITE_STEP // array.itemsize)
    for start in range(0, len(array), step):
        stop = min(start + step, len(array))
        f.write(memoryview(np.ascontiguousarray(array[start:stop])).cast("B"))
        end = (lead + stop * array.itemsize) // mmap.PAGESIZE * mmap.PAGESIZE
        with contextlib.suppress(AttributeError, OSError, ValueError):
            handle.madvise(mmap.MADV_DONTNEED, 0, end)  # type: ignore[union-attr]


def _write_padded(folder: Path, name: str, array: np.ndarray, spare: int) -> list[int]:
    """Write ``array`` (n, d) as a ``.npy`` file of n + ``spare`` rows, the spare ones
    zeros, a block of rows at a time (the array may be a memory map of a million rows:
    never copied whole); returns the file's shape."""
    shape = [len(array) + spare, *array.shape[1:]]
    header = {"descr": np.lib.format.dtype_to_descr(array.dtype), "fortran_order": False, "shape": tuple(shape)}
    with os.fdopen(open_private(folder / f"{name}.npy"), "wb") as f:
        np.lib.format.write_array_header_1_0(f, header)
        for start in range(0, len(array), _ROWS_BLOCK):
            stop = min(start + _ROWS_BLOCK, len(array))
            # a memory map read with pread, not through the map: its pages are not mapped into the process
            block = array.read_rows(start, stop) if isinstance(array, MappedRows) else array[start:stop]
            f.write(memoryview(np.ascontiguousarray(block)).cast("B"))
        row = array.dtype.itemsize * int(np.prod(array.shape[1:]))
        left = spare * row
        while left > 0:
            f.write(bytes(min(left, 1 << 20)))
            left -= min(left, 1 << 20)
        f.flush()
        os.fsync(f.fileno())
    return shape


_BLOCK = 65536
"""Strings of a strings file written at a time."""
_WRITE_STEP = 8 << 20
"""Bytes of a memory-mapped array written at a time (``_write_mapped``)."""
_ROWS_BLOCK = 8192
"""Rows of a vector file written at a time (12 MB with 384 float32 components)."""


def _write_strings(folder: Path, name: str, strings: list[str]) -> np.ndarray:
    """Write ``strings`` as UTF-8, one after another, into ``NAME.utf8`` (a block of
    ``_BLOCK`` at a time); returns the end of each in bytes (int64)."""
    ends = np.zeros(len(strings), dtype=np.int64)
    written = 0
    with os.fdopen(open_private(folder / f"{name}.utf8"), "wb") as f:
        for start in range(0, len(strings), _BLOCK):
            encoded = [s.encode("utf-8") for s in strings[start : start + _BLOCK]]
            block_ends = np.cumsum([len(e) for e in encoded], dtype=np.int64)
            ends[start : start + len(encoded)] = written + block_ends
            f.write(b"".join(encoded))
            written += int(block_ends[-1]) if len(encoded) else 0
        f.flush()
        os.fsync(f.fileno())
    return ends


def _read_strings(path: Path, ends: np.ndarray) -> list[str]:
    """The strings of the UTF-8 file at ``path`` that end at ``ends`` (``_write_strings``),
    read ``_STRING_BLOCK`` bytes at a time and decoded one by one. Raises ValueError when
    the file is not as long as the ends say, or a string is not UTF-8."""
    ends = np.asarray(ends, dtype=np.int64)
    total = int(ends[-1]) if len(ends) else 0
    if len(ends) and (int(ends[0]) < 0 or bool(np.any(np.diff(ends) < 0))):
        raise ValueError("string ends out of order")
    out: list[str] = []
    with open(path, "rb") as f:
        if os.fstat(f.fileno()).st_size != total:
            raise ValueError("a strings file of another length")
        first, done = 0, 0
        while first < len(ends):
            # the strings that end within the next block (at least one, however long)
            last = max(first + 1, int(np.searchsorted(ends, done + _STRING_BLOCK, side="right")))
            block = f.read(int(ends[last - 1]) - done)
            bounds = (ends[first:last] - done).tolist()
            out.extend(str(block[a:b], "utf-8") for a, b in zip([0, *bounds[:-1]], bounds))
            first, done = last, int(ends[last - 1])
    return out


def save(data_dir: Path, user: str, index: UserIndex, index_version: int) -> Path:
    """Write a snapshot of ``user``'s ``index`` (at its ``seq`` and epoch), made with
    recall index version ``index_version``; returns its generation folder. The vector
    files get spare rows (``UserIndex.spare_rows``), and the index then reads its vectors
    from them, memory-mapped copy-on-write (``UserIndex.adopt_snapshot``): the process
    keeps no copy of its own, and the rows written later fill the spare ones; the BM25
    postings' entries likewise from the snapshot's files, memory-mapped read-only (those
    of a load's join, held or in unlinked files, are let go). Raises
    OSError (a full device: the previous snapshot stays, and the index its own vectors)."""
    state = index.snapshot_state()
    home = private_dir(user_dir(data_dir, user))
    generation = home / f"g-{uuid.uuid4().hex}"
    generation.mkdir(mode=0o700)
    try:
        lists = dict(state["lists"])
        names: dict[str, int] = {}  # one code a session
        state["arrays"]["session_codes"] = np.fromiter(
            (names.setdefault(s, len(names)) for s in lists.pop("sessions")), dtype=np.int32, count=len(index)
        )
        lists["session_names"] = list(names)
        for name in _STRINGS:
            state["arrays"][f"{name}_ends"] = _write_strings(generation, name, lists.pop(name))
        shapes: dict[str, list[Any]] = {}
        for name, array in state["arrays"].items():
            if name in _MAPPED:
                shapes[name] = [_write_padded(generation, name, array, index.spare_rows()), str(array.dtype)]
            else:
                _write_array(generation, name, array)
                shapes[name] = [list(array.shape), str(array.dtype)]
        manifest = {
            "version": SNAPSHOT_VERSION,
            "index_version": index_version,
            "user": user,
            **state["scalars"],
            "arrays": shapes,
        }
        with writing_private(generation / "lists.json") as f:
            f.write(json.dumps(lists, ensure_ascii=False).encode("utf-8"))
        with writing_private(generation / _MANIFEST) as f:
            f.write(json.dumps(manifest).encode("utf-8"))
        _fsync_dir(generation)
        with writing_private(home / _POINTER) as f:
            f.write(generation.name.encode("utf-8"))
    except BaseException:
        shutil.rmtree(generation, ignore_errors=True)
        raise
    for old in home.iterdir():  # older generations, and what a killed save left
        if old.is_dir() and old.name != generation.name:
            shutil.rmtree(old, ignore_errors=True)
    if index.count:
        with contextlib.suppress(OSError, ValueError):  # the index keeps its own copy
            postings = None
            if (
                _READ_MAPPED[0] in shapes and shapes[_READ_MAPPED[0]][0][0] > 0
            ):  # entries saved: mapped as a load maps them
                postings = tuple(
                    _random_access(np.load(generation / f"{name}.npy", mmap_mode="r", allow_pickle=False))
                    for name in _READ_MAPPED
                )
            index.adopt_snapshot({name: _map(generation / f"{name}.npy") for name in _MAPPED}, postings)
    return generation


def _map(path: Path) -> np.ndarray:
    """The vectors of the ``.npy`` file at ``path``, memory-mapped copy-on-write (what the
    process writes into it stays its own, the file is never written), the rows recall
    rescores read with ``pread`` (``MappedRows``)."""
    return _random_access(MappedRows.open(str(path)))


def _random_access(array: np.ndarray) -> np.ndarray:
    """``array`` (a memory map) with the kernel told that it is read at random
    (``MADV_RANDOM``): no read-ahead from the device around each row recall reads (a store
    not in the page cache). It does not stop the kernel from mapping the cached pages
    around each row read into the process (fault-around, 64 KB), which is why the rows
    recall rescores are read with ``pread`` (``MappedRows``). Where madvise is missing, as it is."""
    handle = getattr(array, "_mmap", None)
    with contextlib.suppress(AttributeError, OSError, ValueError):
        handle.madvise(mmap.MADV_RANDOM)  # type: ignore[union-attr]
    return array


def load(data_dir: Path, user: str, epoch: str, seq: int, index_version: int) -> UserIndex | None:
    """``user``'s snapshot as a ``UserIndex`` at the snapshot's ``seq`` (to be brought up to
    date by the caller), or None when there is none or it cannot be trusted: another
    version, another user, another epoch than ``epoch``, a ``seq`` ahead of ``seq`` (the
    sidecar's now), or files that do not agree with its manifest (a torn or damaged
    snapshot). The vectors are memory-mapped (copy-on-write), the BM25 postings read-only."""
    home = user_dir(data_dir, user)
    try:
        generation = home / (home / _POINTER).read_text(encoding="utf-8").strip()
        if not generation.name.startswith("g-") or generation.parent != home:
            return None
        manifest = json.loads((generation / _MANIFEST).read_text(encoding="utf-8"))
        if (
            manifest.get("version") != SNAPSHOT_VERSION
            or manifest.get("index_version") != index_version
            or manifest.get("user") != user
            or manifest.get("epoch") != epoch
            or not isinstance(manifest.get("seq"), int)
            or manifest["seq"] > seq
        ):
            return None
        arrays: dict[str, np.ndarray] = {}
        for name, (shape, dtype) in manifest["arrays"].items():
            mode = None
            if int(np.prod(shape)) > 0:
                mode = "c" if name in _MAPPED else "r" if name in _READ_MAPPED else None
            path = generation / f"{name}.npy"
            if mode == "c":
                array = _map(path)
            else:
                array = np.load(path, mmap_mode=mode, allow_pickle=False)
                if mode:
                    array = _random_access(array)
            if list(array.shape) != shape or str(array.dtype) != dtype:
                return None
            arrays[name] = array
        lists = json.loads((generation / "lists.json").read_text(encoding="utf-8"))
        for name in _STRINGS:
            lists[name] = _read_strings(generation / f"{name}.utf8", arrays.pop(f"{name}_ends"))
        names = lists.pop("session_names")
        lists["sessions"] = [names[code] for code in arrays.pop("session_codes").tolist()]
        return UserIndex.from_snapshot(manifest, arrays, lists)
    except (OSError, ValueError, KeyError, TypeError, IndexError):
        return None


def describe(data_dir: Path, user: str) -> dict[str, Any] | None:
    """The manifest of ``user``'s current snapshot (None when there is none): for tests and doctor."""
    home = user_dir(data_dir, user)
    try:
        generation = home / (home / _POINTER).read_text(encoding="utf-8").strip()
        return json.loads((generation / _MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
