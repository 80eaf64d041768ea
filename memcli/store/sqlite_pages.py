"""Surgery on the free space of a SQLite database file: what a delete for good does to
Chroma's database, whose own connections delete without ``secure_delete``.

SQLite leaves a deleted row's bytes where they lay unless the connection that deleted it
has ``PRAGMA secure_delete`` on, and Chroma's Rust core neither sets it nor lets memcli set
it on its connections (its bundled SQLite is built without ``SQLITE_SECURE_DELETE``, and
exports no symbol through which a hook could be set). Measured: a text written, moved by an
update and deleted through connections without it stays in the file's free space even when
its row was blanked under ``secure_delete`` before the delete. VACUUM takes it out by writing
the whole file again; ``scrub_free_space`` instead zeroes only the bytes no row uses, in
place, after SQLite's own account of every page: the file format of
https://www.sqlite.org/fileformat2.html (B-tree page header, freeblocks, freelist trunk and
leaf pages, overflow pages), read through SQLite's ``dbstat`` table.
"""

from __future__ import annotations

import os
import sqlite3
import struct
from pathlib import Path

_ZERO = bytes(65536)

_INTERIOR = (2, 5)
"""Page type bytes of interior B-tree pages (index, table), whose header is 12 bytes (8 on a leaf)."""


class NotScrubbed(Exception):
    """The file could not be scrubbed in place (no ``dbstat`` table in this SQLite, a WAL
    database, a page SQLite accounts for otherwise than this module reads it): nothing was
    written, the caller rewrites the file (VACUUM) instead."""


def _free_ranges(
    data: bytearray, base: int, number: int, kind: str, payload: int, unused: int, usable: int
) -> list[tuple[int, int]]:
    """The byte ranges of one page (``number``, from 1, at ``base`` in ``data``) that hold no
    data, as (start, end) offsets in the page: on a B-tree page the space between the cell pointers and the cell
    content and every freeblock but its 4-byte header (fragments of 1 to 3 bytes are left);
    on an overflow page what follows its ``payload`` bytes. Raises NotScrubbed when the
    ranges do not add up to ``unused``, the free bytes SQLite counts on that page."""
    if kind == "overflow":
        if 4 + payload + unused != usable:
            raise NotScrubbed(f"overflow page {number}: {payload} + {unused} bytes of {usable}")
        return [(4 + payload, usable)]
    header = 100 if number == 1 else 0
    size = 12 if data[base + header] in _INTERIOR else 8
    freeblock, cells, content, fragmented = struct.unpack_from(">HHHB", data, base + header + 1)
    content = content or 65536
    ranges = [(header + size + 2 * cells, content)]
    free = content - ranges[0][0]
    seen = 0
    while freeblock:
        following, length = struct.unpack_from(">HH", data, base + freeblock)
        if length < 4 or freeblock + length > usable or seen > usable // 4:
            raise NotScrubbed(f"page {number}: a freeblock at {freeblock} of {length} bytes")
        ranges.append((freeblock + 4, freeblock + length))
        free += length
        freeblock = following
        seen += 1
    if free + fragmented != unused or free < 0:
        raise NotScrubbed(f"page {number}: {free} + {fragmented} free bytes, SQLite counts {unused}")
    return ranges


def scrub_free_space(database: Path) -> int:
    """Zero, in place, every byte of the SQLite database ``database`` that holds no data:
    the free pages, the unused tail of overflow pages, and in each B-tree page the space
    between its cell pointers and cells and its freeblocks (``_free_ranges``); what deleted
    or moved rows left there, by whichever connection, is gone after it. Returns the number
    of pages written.

    Done under an exclusive lock of a connection of this process (no other connection reads
    or writes meanwhile; a hot journal a kill left is rolled back first), on the file as
    SQLite committed it (rollback journal only: a WAL database raises NotScrubbed). Every
    page's free ranges are checked against SQLite's own count (``dbstat``) and every page
    of the file must be either a B-tree page it lists or a free page, before a byte is
    written; then the pages that change are written whole and synced, and the file change
    counter is advanced as a commit does, so that other connections drop the pages they
    cached (which hold the old bytes). Only bytes SQLite does not read are changed, so a kill
    part way leaves a sound database. Costs a read of the file, ``dbstat``'s walk of its
    pages and a write of the pages that held something (about 0.07 s of CPU for a 26 MB
    file, measured). Raises NotScrubbed (nothing written) or sqlite3.Error."""
    connection = sqlite3.connect(str(database), isolation_level=None)
    try:
        if connection.execute("PRAGMA journal_mode").fetchone()[0].lower() == "wal":
            raise NotScrubbed("a WAL database")
        connection.execute("BEGIN EXCLUSIVE")
        try:
            try:
                pages = connection.execute("SELECT pageno, pagetype, payload, unused FROM dbstat").fetchall()
            except sqlite3.OperationalError as exc:  # SQLite built without SQLITE_ENABLE_DBSTAT_VTAB
                raise NotScrubbed(str(exc)) from exc
            return _scrub(database, pages)
        finally:
            connection.execute("COMMIT")
    finally:
        connection.close()


def _scrub(database: Path, pages: list[tuple[int, str, int, int]]) -> int:
    fd = os.open(database, os.O_RDWR)
    try:
        head = os.pread(fd, 100, 0)
        size = struct.unpack_from(">H", head, 16)[0]
        size = 65536 if size == 1 else size
        usable = size - head[20]
        counter, count = struct.unpack_from(">II", head, 24)
        if struct.unpack_from(">I", head, 92)[0] != counter or head[52:56] != bytes(4):
            # The page count in the header is stale (a file an old SQLite wrote), or the
            # database has pointer-map pages (auto_vacuum): left to VACUUM.
            raise NotScrubbed("a header this module does not read")
        data = bytearray(size * count)
        if os.preadv(fd, [data], 0) != size * count:
            raise NotScrubbed("a file shorter than its header says")
        changes: dict[int, list[tuple[int, int]]] = {}
        listed = set()
        for number, kind, payload, unused in pages:
            listed.add(number)
            changes[number] = _free_ranges(data, (number - 1) * size, number, kind, payload, unused, usable)
        trunk = struct.unpack_from(">I", head, 32)[0]
        while trunk:
            if trunk in listed or not 0 < trunk <= count:
                raise NotScrubbed(f"freelist trunk page {trunk}")
            listed.add(trunk)
            following, leaves = struct.unpack_from(">II", data, (trunk - 1) * size)
            if 8 + 4 * leaves > usable:
                raise NotScrubbed(f"freelist trunk page {trunk} with {leaves} leaves")
            for n in range(leaves):
                leaf = struct.unpack_from(">I", data, (trunk - 1) * size + 8 + 4 * n)[0]
                if leaf in listed or not 0 < leaf <= count:
                    raise NotScrubbed(f"freelist leaf page {leaf}")
                listed.add(leaf)
                changes[leaf] = [(0, usable)]
            changes[trunk] = [(8 + 4 * leaves, usable)]
            trunk = following
        lock_page = (1 << 30) // size + 1
        if len(listed - {lock_page}) != count - (1 if count >= lock_page else 0):
            raise NotScrubbed(f"{count - len(listed)} pages neither in a B-tree nor free")
        written = 0
        for number, ranges in changes.items():
            start = (number - 1) * size
            dirty = False
            for a, b in ranges:
                if b > a and data.count(0, start + a, start + b) != b - a:
                    data[start + a : start + b] = _ZERO[: b - a]
                    dirty = True
            if dirty:
                os.pwrite(fd, memoryview(data)[start : start + size], start)
                written += 1
        if written:
            os.fsync(fd)
            # As a commit does (the change counter and the version-valid-for number):
            # other connections then read the pages again rather than trust their cache.
            os.pwrite(fd, struct.pack(">I", (counter + 1) & 0xFFFFFFFF), 24)
            os.pwrite(fd, struct.pack(">I", (counter + 1) & 0xFFFFFFFF), 92)
            os.fsync(fd)
        return written
    finally:
        os.close(fd)
