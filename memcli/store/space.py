"""Room on the device of the store: what a write asks for, what memories were measured to
take, and the store's reserve of space that keeps deleting possible on a full device.

A light module (no numpy, no Chroma): ``memcli doctor`` asks ``shortage`` without opening
the store; ``memcli.store.store`` takes and gives back the reserve through it.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

from memcli.paths import device_of, open_private

log = logging.getLogger(__name__)

ROOM_PER_MEMORY = 4096
ROOM_FLOOR = 2 << 20
"""Bytes a write needs on the device besides its memories (SQLite's journals, Chroma's log),
and a memory besides 32 bytes a vector dimension and 12 a byte of text (``room_needed``)."""
BYTES_PER_MEMORY = (4000, 16, 8)
"""What a stored memory takes on the device, measured: bytes (fixed, a vector dimension, a
byte of text). Measured by importing the ten LoCoMo conversations one after another (5,882
turns, 124 bytes of text on average) into an empty store on a tmpfs of its own and reading
the device's used bytes (statvfs) after each, the reserve file left out: with 384-dimension
vectors a memory took 15.1 KB after 419 memories, 12.5 KB after 2,080 and 11.4 KB after
5,882 (64 MiB in all: Chroma's SQLite file with its log and full-text index, its HNSW files,
and the sidecar's copy, vectors and windows); with 128 dimensions 8.9 KB, 7.6 KB and 7.2 KB
(after 4,805). The figures fit the larger stores (11.1 KB and 7.0 KB); a small import takes
more a memory, so an import refused by them is clearly short of room: what an import is
checked against before it starts (``room_measured``)."""


def room_needed(count: int, dimension: int, text_bytes: int) -> int:
    """Bytes to ask of the device before a write of ``count`` memories of ``dimension``
    dimensions and ``text_bytes`` bytes of text in all: ``ROOM_FLOOR`` and, a memory,
    ``ROOM_PER_MEMORY`` + 32 bytes a dimension + 12 a byte of text, about 1.5 times what a
    memory was measured to take (``BYTES_PER_MEMORY``), since a write that fills the device
    part way is worse than one refused."""
    return ROOM_FLOOR + count * (ROOM_PER_MEMORY + 32 * dimension) + 12 * text_bytes


def room_measured(count: int, dimension: int, text_bytes: int) -> int:
    """Bytes ``count`` memories of ``dimension`` dimensions and ``text_bytes`` bytes of text
    in all were measured to take on the device (``BYTES_PER_MEMORY``), ``ROOM_FLOOR`` besides."""
    fixed, per_dimension, per_byte = BYTES_PER_MEMORY
    return ROOM_FLOOR + count * (fixed + per_dimension * dimension) + per_byte * text_bytes


RESERVE_FILE = "space-reserve"
"""The file in the data folder that holds the store's reserve of space (``RESERVE``)."""
RESERVE = 4 << 20
"""Bytes of its device the store keeps for itself, in ``RESERVE_FILE``, so that deleting
works on a full device: Chroma writes a delete to its log, and SQLite to its journal,
before anything is freed, and opening Chroma needs a journal too. The reserve is given
back to the device when a delete (or opening the store) meets a full device, and taken
again once there is room; while it is short, writes are refused (``shortage``). Measured
with chromadb 1.5.9 on a 20 MB tmpfs, a store of 2,000 memories (384 dimensions, 300-byte
texts, chroma.sqlite3 4.5 MB): opening needs under 16 KiB; deleting 2,000 memories at once
needs between 1 and 2 MiB (with 1 MiB Chroma fails with "Failed to apply logs to the
metadata segment"), 1,000 well under 4 MiB. Deletes go in pages sized to the room
(``DELETE_BYTES``)."""
DELETE_BYTES = 2048
"""Room a deleted memory needs at least while it is deleted (Chroma's log and the journals):
twice the most measured (``RESERVE``); a store whose files take more a memory counts that."""
OPEN_ROOM = 256 << 10
"""Room given back from the reserve when Chroma cannot open on a full device (needs under 16 KiB, ``RESERVE``)."""


def free_bytes(folder: Path) -> int | None:
    """Bytes free for this user on the device of ``folder``; None when it cannot be asked."""
    try:
        found = os.statvfs(folder)
    except OSError:
        return None
    return found.f_bavail * found.f_frsize


def reserve_bytes(folder: Path) -> int:
    """Bytes of the reserve held in ``folder`` (the data folder) now; 0 when there is none."""
    try:
        return (folder / RESERVE_FILE).stat().st_size
    except OSError:
        return 0


def keep_reserve(folder: Path) -> bool:
    """Take the reserve of space (``RESERVE``) in ``folder`` again where it was given back,
    when the device has room for it and ``ROOM_FLOOR`` besides; returns whether it is whole.
    Allocated for real (``posix_fallocate``, which writes zeros where a file system cannot
    allocate): a sparse file would keep nothing."""
    have = reserve_bytes(folder)
    if have >= RESERVE:
        return True
    free = free_bytes(folder)
    if free is None or free < RESERVE - have + ROOM_FLOOR:
        return False
    try:
        descriptor = open_private(folder / RESERVE_FILE, os.O_WRONLY | os.O_CREAT)
        try:
            os.posix_fallocate(descriptor, 0, RESERVE)
        finally:
            os.close(descriptor)
    except OSError as exc:
        log.info("the store's reserve of space could not be taken: %s", exc)
        return False
    return True


def release_reserve(folder: Path, amount: int | None = None) -> int:
    """Give ``amount`` bytes of the reserve in ``folder`` (all of it when None) back to the
    device; returns how many were given back."""
    have = reserve_bytes(folder)
    keep = 0 if amount is None else max(0, have - amount)
    if have <= keep:
        return 0
    try:
        os.truncate(folder / RESERVE_FILE, keep)
    except OSError:
        return 0
    return have - keep


def shortage(folder: Path, needed: int = 0, stored: str = "nothing was written", take: bool = True) -> str:
    """Why a write of about ``needed`` bytes (besides ``ROOM_FLOOR``) to the store in
    ``folder`` is refused for want of room, in one line: the device cannot take it and keep
    the reserve whole (taken again first where it was given back, unless ``take`` is false:
    then only asked); empty when it fits, or when the device cannot be asked. ``stored``:
    what became of the write, as the line says it."""
    before = free_bytes(folder)
    if before is None:
        return ""
    have = reserve_bytes(folder)
    whole = keep_reserve(folder) if take else have >= RESERVE or before >= RESERVE - have + ROOM_FLOOR
    free = free_bytes(folder) or 0
    if whole and free >= needed + ROOM_FLOOR:
        return ""
    short = "" if whole else f" (and the store's {RESERVE >> 20} MiB reserve for deleting is in use)"
    return (
        f"no space left on {device_of(folder)}: {free / 2**20:.1f} MiB free{short}; {stored}. "
        "Reads and deletes work: free some space (or delete memories) to write"
    )
