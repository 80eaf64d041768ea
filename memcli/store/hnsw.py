"""Surgery on the files of hnswlib, the vector index under Chroma's local HNSW segments.

Chroma persists each segment's HNSW index as hnswlib writes it under the store folder,
one folder a segment named by its id; nothing here goes through Chroma. The layout
(Chroma's fork of hnswlib, ``hnswlib/hnswalg.h``, ``persistHeader`` and ``persistDirty``):

- ``header.bin``: the format version (int32), then the offset of level 0, the capacity,
  the element count and the bytes per element (64-bit integers), and more fields, every
  one written from a value;
- ``data_level0.bin``: a slot of bytes-per-element a place of the capacity (links, vector,
  label); an element's slot is zeroed and filled when it is added;
- ``length.bin``: a float32 a place of the capacity, the vector's norm (a cosine space
  keeps vectors normalized and their norms here), written when the element is added;
- ``link_lists.bin``: the upper-level links of each element in turn, written from
  zeroed buffers.

A new index writes ``data_level0.bin`` and ``length.bin`` whole, from buffers hnswlib
allocates without zeroing (``malloc``): the places past the element count hold whatever the
process's heap held, measured to include the text of memories deleted before, by Chroma's
own threads (chroma-core/chroma#7688). Later saves write only the elements' own places, but
Chroma makes the index new, and so writes both files whole again, each time a client opens
a segment it has not saved yet (measured, chromadb 1.5.9: it saves every ``sync_threshold``
writes, 1000 by default, so a store with fewer was made again at every opening, from the
heap of the process at that moment). memcli's collections are saved every 100 writes
(``memcli.store.chroma.SYNC_THRESHOLD``), so an opening of one saved once loads it and
writes nothing; a new segment (a reindex's, a migration's, a store's before its 100th
write) is still written whole from the heap, and a save after the index grows may be too.
"""

from __future__ import annotations

import logging
import os
import sqlite3
import struct
import urllib.parse
import uuid
from pathlib import Path

log = logging.getLogger(__name__)

HNSW_FILES = frozenset({"header.bin", "data_level0.bin", "length.bin", "link_lists.bin", "index_metadata.pickle"})
"""The files a local HNSW segment's folder holds (the pickle: an older Chroma's id map)."""

_CHUNK = 1 << 20


def _zero_tail(path: Path, start: int, sync: bool = True) -> bool:
    """Zero ``path`` from byte ``start`` to its end, writing only the chunks that hold a
    byte other than zero (a clean tail is read, not written), and fsync it when written
    and ``sync``. Returns whether anything was written."""
    wrote = False
    with path.open("r+b") as f:
        f.seek(start)
        at = start
        while True:
            chunk = f.read(_CHUNK)
            if not chunk:
                break
            if chunk.count(0) != len(chunk):
                f.seek(at)
                f.write(bytes(len(chunk)))
                wrote = True
            at += len(chunk)
        if wrote and sync:
            f.flush()
            os.fsync(f.fileno())
    return wrote


def zero_unused_slots(segment: Path, sync: bool = True) -> None:
    """Zero the places past the element count in a persisted HNSW segment's
    ``data_level0.bin`` and ``length.bin``: hnswlib writes both whole when it makes the
    index, from memory it never initialised (module docstring). An element's place is
    written whole when the element takes it, so zeros there change nothing; the places of
    the element count, the kept vectors and their norms, are not touched.

    The header (version int32, then offset, capacity, element count, bytes per element and
    the label's offset in an element, 64-bit) is checked first (version 1, the label the
    element's last 8 bytes), and each file against it: a file larger than the capacity
    (another layout) is left alone. The count is the one last persisted, never more than
    the index holds in memory (the header is written before the elements): elements past
    it are written again from memory at the index's next save. ``sync``: fsync what was
    written."""
    try:
        header = (segment / "header.bin").read_bytes()
    except OSError:
        return
    if len(header) < 52:
        return
    version = struct.unpack_from("<i", header, 0)[0]
    _, capacity, count, per_element, label_at = struct.unpack_from("<qqqqq", header, 4)
    if version != 1 or not (0 <= count <= capacity and per_element > 0 and per_element == label_at + 8):
        log.info("%s: a header of another layout (version %d): left alone", segment, version)
        return
    for name, width in (("data_level0.bin", per_element), ("length.bin", 4)):
        path = segment / name
        try:
            size = path.stat().st_size
        except OSError:
            continue
        if size > capacity * width:
            log.info("%s is larger than its header says (%d > %d x %d): left alone", path, size, capacity, width)
            continue
        if size > count * width:
            _zero_tail(path, count * width, sync)


def _segment_ids(store_dir: Path) -> set[str] | None:
    """The ids of the segments Chroma's database names (``segments.id``), read without
    writing; None when they cannot be read (no database, another schema)."""
    database = store_dir / "chroma.sqlite3"
    if not database.is_file():
        return None
    uri = f"file:{urllib.parse.quote(str(database))}?mode=ro"
    try:
        db = sqlite3.connect(uri, uri=True)
        try:
            return {str(row[0]) for row in db.execute("SELECT id FROM segments")}
        finally:
            db.close()
    except sqlite3.Error:
        return None


def drop_orphan_segments(store_dir: Path) -> list[str]:
    """Remove the HNSW segment folders under the Chroma folder ``store_dir`` that no
    segment of Chroma's database names: those of a deleted collection (a reindex deletes
    the old one), which Chroma leaves on disk (chroma-core/chroma#5259) with every vector
    the collection held, deleted memories' included. A folder is removed only when its
    name is a segment id (a UUID), Chroma's database can be read and names no such
    segment, and it holds only HNSW files (``HNSW_FILES``); the segments of the kept
    collection are never touched, so a kill in the middle loses nothing (what is left is
    removed the next time). Returns the names removed."""
    known = _segment_ids(store_dir)
    if not known:
        return []
    removed = []
    for folder in sorted(p for p in store_dir.iterdir() if p.is_dir()):
        try:
            uuid.UUID(folder.name)
        except ValueError:
            continue
        if folder.name in known:
            continue
        entries = list(folder.iterdir())
        if any(not e.is_file() or e.is_symlink() or e.name not in HNSW_FILES for e in entries):
            log.info("%s is named by no segment but holds other files: left alone", folder)
            continue
        for entry in entries:
            entry.unlink()
        folder.rmdir()
        removed.append(folder.name)
    return removed


def scrub_segments(store_dir: Path) -> None:
    """Leave no freed memory and no deleted collection in the HNSW files under the Chroma
    folder ``store_dir``: the folders of deleted collections removed
    (``drop_orphan_segments``), then the unused places of every segment kept zeroed
    (``zero_unused_slots``). Run after a delete for good (compaction) and after anything
    that makes a new segment (a reindex, a migration into the folder), whose files hnswlib
    writes from memory that may hold deleted texts. An OSError is logged, not raised (the
    work before it stands), and the segments are scrubbed again at the next transaction's
    end."""
    if not store_dir.is_dir():
        return
    try:
        drop_orphan_segments(store_dir)
        for header in store_dir.glob("*/header.bin"):
            zero_unused_slots(header.parent)
    except OSError as exc:  # what ran before it stands: the next transaction's ``scrub_changed`` tries again
        log.warning("the HNSW files under %s were not scrubbed: %s", store_dir, exc)
        forget_scrubbed(store_dir)


_SCRUBBED: dict[Path, tuple[tuple[int, int, int], ...]] = {}
"""Each segment's files as ``scrub_changed`` last left them (inode, size, mtime in ns)."""


def _fingerprint(segment: Path) -> tuple[tuple[int, int, int], ...]:
    found = []
    for name in ("header.bin", "data_level0.bin", "length.bin"):
        try:
            st = (segment / name).stat()
        except OSError:
            found.append((0, -1, 0))
        else:
            found.append((st.st_ino, st.st_size, st.st_mtime_ns))
    return tuple(found)


def scrub_changed(store_dir: Path) -> None:
    """``zero_unused_slots`` in every segment under ``store_dir`` whose files changed since
    this process last scrubbed them (a stat each; a segment is read only when Chroma wrote
    it since): run as every transaction on a folder ends, since Chroma writes a segment it
    has not saved yet whole again, from the process's heap, at each opening (module
    docstring), which in a process that deleted memories may hold their text. Not fsynced:
    it follows Chroma's own unsynced writes, whose pages it overwrites before they are
    likely to reach the disk; compaction (``scrub_segments``) fsyncs."""
    for header in store_dir.glob("*/header.bin"):
        segment = header.parent
        if _SCRUBBED.get(segment) == _fingerprint(segment):
            continue
        zero_unused_slots(segment, sync=False)
        _SCRUBBED[segment] = _fingerprint(segment)


def forget_scrubbed(store_dir: Path) -> None:
    """Forget what ``scrub_changed`` knows of the segments under ``store_dir``: their next
    check zeroes their unused places whatever their files' stat says. Called as a new
    Chroma client opens the folder (it writes a segment not saved yet whole again, with
    the same inode and size: on a file system with coarse times the stat would not show
    it), and after a scrub that failed."""
    for segment in [s for s in _SCRUBBED if s.parent == store_dir]:
        del _SCRUBBED[segment]
