"""What a big user's snapshot keeps out of the process's resident memory
(``memcli.store.snapshot``): the rows recall rescores are read from the vector files with
``pread`` (``memcli.store.index.MappedRows``), not through their memory map, and the BM25
postings stay memory-mapped read-only. Resident
pages are read from ``/proc/self/smaps`` (Linux)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from memcli.store import snapshot
from memcli.store.index import IndexChanges, UserIndex
from memcli.store.recall_index import INDEX_VERSION
from memcli.text.lexical import LexicalIndex, tokens

USER = "ana"
DIMENSION = 64
WORDS = [f"word{i}" for i in range(400)]

pytestmark = pytest.mark.skipif(not Path("/proc/self/smaps").exists(), reason="reads /proc/self/smaps (Linux)")


def rows(n: int, start: int = 0, seed: int = 0) -> list[tuple]:
    """``n`` rows as ``RecallIndex.load`` reads them (``ROW_COLUMNS``), random unit vectors."""
    rng = np.random.default_rng(seed)
    vectors = rng.standard_normal((n, 2, DIMENSION)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=2, keepdims=True)
    out = []
    for i in range(n):
        row = start + i
        text = " ".join(WORDS[(row * 7 + j * 13) % len(WORDS)] for j in range(6))
        out.append(
            (f"m{row:06d}", row + 1, "turn", "Ana", 1_600_000_000.0 + row, 0, 0, text, 0, f"s{row // 20}",
             vectors[i, 0].tobytes(), vectors[i, 1].tobytes(), text, "", "8 May 2023")
        )  # fmt: skip
    return out


def resident_kb(path: Path) -> int | None:
    """Resident kB of this process's mappings of ``path`` (None when it is not mapped)."""
    found, total, inside = False, 0, False
    for line in Path("/proc/self/smaps").read_text().splitlines():
        fields = line.split()
        if fields and "-" in fields[0] and len(fields) >= 5:  # a mapping's first line
            inside = fields[-1] == str(path)
            found = found or inside
        elif inside and fields[:1] == ["Rss:"]:
            total += int(fields[1])
    return total if found else None


def saved(tmp_path: Path, n: int) -> tuple[UserIndex, Path]:
    """An index of ``n`` rows saved as a snapshot, and that snapshot loaded (as after a restart)."""
    index = UserIndex.from_rows(rows(n), seq=1, epoch="e")
    folder = snapshot.save(tmp_path, USER, index, INDEX_VERSION)
    loaded = snapshot.load(tmp_path, USER, "e", 1, INDEX_VERSION)
    assert loaded is not None
    return loaded, folder


def test_rows_picked_by_slot_are_read_from_the_file_and_not_mapped_in(tmp_path: Path) -> None:
    n = 4000
    index, folder = saved(tmp_path, n)
    slots = np.random.default_rng(2).choice(n, 300, replace=False)
    want = UserIndex.from_rows(rows(n))
    for name in ("turn", "window"):
        got = getattr(index, name)[slots]
        np.testing.assert_array_equal(got, getattr(want, name)[slots])
        assert resident_kb(folder / f"{name}.npy") == 0, "the rows were read through the map"


def test_runs_of_consecutive_slots_read_as_their_rows_in_any_order(tmp_path: Path) -> None:
    """A run of consecutive slots is read at once: the rows come back as picked, in the
    order asked, repeats and descending runs included, up to the last row."""
    n = 4000
    index, folder = saved(tmp_path, n)
    want = UserIndex.from_rows(rows(n))
    slots = np.array([5, 6, 7, 8, 100, 3, 4, 4, 3998, 3999, 0, 1, 9, 8, 7, 2000, 2001, -1])
    for name in ("turn", "window"):
        np.testing.assert_array_equal(getattr(index, name)[slots], getattr(want, name)[slots])
        assert resident_kb(folder / f"{name}.npy") == 0, "the rows were read through the map"


def test_rows_written_after_the_snapshot_are_read_as_written(tmp_path: Path) -> None:
    n = 500
    index, _ = saved(tmp_path, n)
    changed = rows(3, start=10, seed=5)  # rewrites rows 10-12 where they sit
    added = rows(4, start=n, seed=6)  # into the spare rows
    index.apply(IndexChanges(changed + added, [], 2, "e"))
    want = UserIndex.from_rows(rows(n))
    want.apply(IndexChanges(changed + added, [], 2, "e"))
    slots = np.array([0, 10, 11, 12, 13, n, n + 3, n - 1])
    for name in ("turn", "window"):
        np.testing.assert_array_equal(getattr(index, name)[slots], getattr(want, name)[slots])
        np.testing.assert_array_equal(getattr(index, name)[-slots[:1] - 1], getattr(want, name)[-slots[:1] - 1])
    index.apply(IndexChanges([], list(range(1, 200)), 3, "e"))  # enough deletions to compact
    want.apply(IndexChanges([], list(range(1, 200)), 3, "e"))
    assert len(index) == len(want) < n
    every = np.arange(len(index))
    for name in ("turn", "window"):
        np.testing.assert_array_equal(getattr(index, name)[every], getattr(want, name)[every])


def test_the_postings_stay_mapped_and_score_as_a_fresh_index(tmp_path: Path) -> None:
    n = 3000
    index, folder = saved(tmp_path, n)
    fresh = LexicalIndex()
    fresh.put(list(range(n)), [(r[12], r[13], r[14]) for r in rows(n)])
    for word in ("word3", "word250 word17", "may"):
        stems = [s for w in word.split() for s in tokens(w)]
        np.testing.assert_allclose(
            index.lexical.scores(stems, (1.0, 0.5, 0.2), n), fresh.scores(stems, (1.0, 0.5, 0.2), n), rtol=1e-6
        )
    # How much of the map a query brings in is the kernel's choice (fault-around, large
    # folios: 512 kB here for one term); what matters is that the postings are not copied in.
    assert resident_kb(folder / "lexical_indices.npy") is not None, "the postings were read into the process"
    assert resident_kb(folder / "lexical_counts.npy") is not None


def test_a_big_read_repeated_after_a_write_sees_the_write(tmp_path: Path) -> None:
    n = 3000
    index, _ = saved(tmp_path, n)
    every = np.arange(n)  # more than MEMO_ROWS: kept for the next read of the same slots
    np.testing.assert_array_equal(index.turn[every], UserIndex.from_rows(rows(n)).turn)
    changed = rows(1, start=5, seed=9)
    index.apply(IndexChanges(changed, [], 2, "e"))
    want = UserIndex.from_rows(rows(n))
    want.apply(IndexChanges(changed, [], 2, "e"))
    np.testing.assert_array_equal(index.turn[every], want.turn)
