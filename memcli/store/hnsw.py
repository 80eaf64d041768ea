"""Surgery on the files of hnswlib, the vector index under Chroma's local HNSW segments.

Chroma persists each segment's HNSW index as hnswlib writes it (``header.bin``,
``data_level0.bin``, ...) under the store folder; nothing here goes through Chroma.
"""

from __future__ import annotations

import os
import struct
from pathlib import Path


def zero_unused_slots(segment: Path) -> None:
    """Zero the slots past the last element in a persisted HNSW segment's
    ``data_level0.bin``. hnswlib writes the index's whole capacity, and the slots not yet
    used hold whatever the process's heap held when they were allocated: measured, the
    JSON of a deleted memory, text included. A slot is written whole when an element
    takes it, so zeros there change nothing. The header (hnswlib's layout: version i32,
    then offset, capacity, element count and bytes per element as 64-bit integers) is
    checked against the file's size first; a file of another layout is left alone."""
    header = (segment / "header.bin").read_bytes()
    data = segment / "data_level0.bin"
    if len(header) < 36 or not data.is_file():
        return
    _, capacity, count, per_element = struct.unpack_from("<qqqq", header, 4)
    size = data.stat().st_size
    if not (0 <= count <= capacity and per_element > 0 and size == capacity * per_element):
        return
    with data.open("r+b") as f:
        f.seek(count * per_element)
        left = size - count * per_element
        while left > 0:
            f.write(bytes(min(left, 1 << 20)))
            left -= min(left, 1 << 20)
        f.flush()
        os.fsync(f.fileno())


def zero_unused_slots_under(store_dir: Path) -> None:
    """``zero_unused_slots`` in every HNSW segment persisted under the Chroma folder
    ``store_dir`` (one folder per segment, with its ``header.bin``)."""
    for header in store_dir.glob("*/header.bin"):
        zero_unused_slots(header.parent)
