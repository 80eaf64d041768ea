"""A user's recall index loaded whole a page at a time (``UserIndex.from_chunks``): sized
from the row count, its vectors written to an unlinked file and memory-mapped (the spill),
its BM25 postings joined once from the pages; the index is the same as one built in memory."""

from __future__ import annotations

import contextlib
import errno
import os
import sqlite3
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
from test_index import LINES, NOW, session
from test_index_incremental import rows_of, turn

from memcli.store import index as index_module
from memcli.store import snapshot
from memcli.store.index import IndexChanges, MappedRows, UserIndex
from memcli.store.space import RESERVE, ROOM_FLOOR
from memcli.text import lexical
from memcli.text.lexical import LexicalIndex, Postings, Run, tokens

WORDS = ["painting", "lake", "puppy", "sister", "zeppelin", "may", "the", "camping", "violin"]


def many_rows(n_sessions: int = 12) -> list[tuple[Any, ...]]:
    """Rows of ``n_sessions`` sessions of turns, in time order, rowids ascending."""
    rows: list[tuple[Any, ...]] = []
    rng = np.random.default_rng(3)
    for s in range(n_sessions):
        lines = [
            (("Ana", "Bob")[i % 2], " ".join(rng.choice(WORDS, int(rng.integers(1, 7))))) for i in range(len(LINES))
        ]
        memories = session(f"s{s:02d}", lines)
        for m in memories:
            m.created_at += s * 86_400
        rows.extend(rows_of(memories, first_rowid=len(rows) + 1))
    return rows


def pages(rows: list[tuple[Any, ...]], size: int) -> list[list[tuple[Any, ...]]]:
    return [rows[i : i + size] for i in range(0, len(rows), size)]


def assert_same_index(got: UserIndex, expected: UserIndex) -> None:
    assert len(got) == len(expected) and got.ids == expected.ids and got.texts == expected.texts
    for name in [*UserIndex._COLUMNS, "turn", "window", "turn_signs", "window_signs"]:
        np.testing.assert_array_equal(got._column(name), expected._column(name), err_msg=name)
    got_arrays, _, _ = got.lexical.state()
    expected_arrays, _, _ = expected.lexical.state()
    for name in ("indptr", "indices", "counts"):
        np.testing.assert_array_equal(got_arrays[name], expected_arrays[name], err_msg=name)
    for name in ("length", "live"):  # kept with spare room: the slots in use
        np.testing.assert_array_equal(got_arrays[name][: len(got)], expected_arrays[name][: len(got)], err_msg=name)
    for query in (["painting", "lake"], ["puppy"], ["the", "violin", "may"]):
        stems = [t for w in query for t in tokens(w)]
        np.testing.assert_array_equal(
            got.lexical.scores(stems, (1.5, 1.0, 1.0), len(got)),
            expected.lexical.scores(stems, (1.5, 1.0, 1.0), len(expected)),
        )


@pytest.fixture
def spill_from_one_row(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(index_module, "SPILL_AT", 1)


@pytest.mark.parametrize("join_block", [1 << 22, 5])
def test_a_load_in_pages_into_a_spill_is_the_index_built_in_memory(
    spill_from_one_row: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, join_block: int
) -> None:
    monkeypatch.setattr(lexical, "JOIN_BLOCK", join_block)  # the postings' files written a block of columns at a time
    rows = many_rows()
    expected = UserIndex.from_rows(rows)
    got = UserIndex.from_chunks(pages(rows, 7), rows=len(rows), spill=tmp_path)
    assert isinstance(got._store["turn"], MappedRows) and isinstance(got._store["window"], MappedRows)
    assert isinstance(got.lexical._base.indices, np.memmap)  # type: ignore[union-attr]
    assert got._capacity == len(rows) + got.spare_rows(len(rows))  # sized once, with the spare rows
    assert os.listdir(tmp_path) == []  # the spill's files are never named
    assert_same_index(got, expected)
    # rows written after the load fill the spare rows of the map, as after a snapshot's load
    late = rows_of([turn("s99", "Bob", "A violin by the lake.", NOW + 10**7)], 10_000)
    got.apply(IndexChanges(late, [], 1, ""))
    expected.apply(IndexChanges(late, [], 1, ""))
    assert isinstance(got._store["turn"], MappedRows)
    assert_same_index(got, expected)


def test_a_load_of_more_rows_than_it_was_told_keeps_them_in_memory(
    spill_from_one_row: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(UserIndex, "spare_rows", lambda self, rows=None: 0)
    rows = many_rows()
    got = UserIndex.from_chunks(pages(rows, 5), rows=7, spill=tmp_path)
    assert not isinstance(got._store["turn"], MappedRows)
    assert_same_index(got, UserIndex.from_rows(rows))


def test_a_load_without_room_for_its_spill_keeps_the_vectors_in_memory(
    spill_from_one_row: None, tmp_path: Path
) -> None:
    rows = many_rows(3)
    got = UserIndex.from_chunks(pages(rows, 4), rows=len(rows), spill=tmp_path / "missing")
    assert not isinstance(got._store["turn"], MappedRows)
    assert_same_index(got, UserIndex.from_rows(rows))


def test_a_snapshot_written_from_a_spilled_load_loads_as_the_index(
    spill_from_one_row: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(snapshot, "_WRITE_STEP", 64)  # the mapped postings written in several blocks
    rows = many_rows()
    loaded = UserIndex.from_chunks(pages(rows, 6), rows=len(rows), spill=tmp_path)
    snapshot.save(tmp_path, "ana", loaded, 1)
    again = snapshot.load(tmp_path, "ana", "", 0, 1)
    assert again is not None
    assert_same_index(again, UserIndex.from_rows(rows))


def test_postings_appended_page_by_page_are_those_of_one_put() -> None:
    rng = np.random.default_rng(5)
    documents = [
        (" ".join(rng.choice(WORDS, int(rng.integers(1, 6)))), " ".join(rng.choice(WORDS, 3)), "8 May 2023")
        for _ in range(60)
    ]
    whole = LexicalIndex()
    whole.put(list(range(60)), documents)
    paged = LexicalIndex()
    paged.loading()
    for start in range(0, 60, 9):  # pages in order: their postings wait, then are joined once
        paged.put(list(range(start, min(start + 9, 60))), documents[start : start + 9])
    assert len(paged._pending) > 1
    stems = tokens("painting the lake")
    np.testing.assert_array_equal(paged.scores(stems, (1.0, 1.0, 1.0), 60), whole.scores(stems, (1.0, 1.0, 1.0), 60))
    assert paged._pending == []
    for got, expected in zip(
        (paged._base.indptr, paged._base.indices, paged._base.counts),  # type: ignore[union-attr]
        (whole._base.indptr, whole._base.indices, whole._base.counts),  # type: ignore[union-attr]
    ):
        np.testing.assert_array_equal(got, expected)
        assert got.dtype == expected.dtype


def test_joined_postings_keep_each_columns_slots_ascending() -> None:
    first = Postings(np.array([0, 2, 3]), np.array([0, 4, 1], dtype=np.int32), np.array([1, 2, 3], dtype=np.uint16))
    second = Postings(np.array([0, 1, 1, 3]), np.array([6, 5, 9], dtype=np.int32), np.array([4, 5, 6], dtype=np.uint16))
    joined = Postings.joined([Run.of(first), Run.of(second)])
    assert joined.indptr.tolist() == [0, 3, 4, 6]
    assert joined.indices.tolist() == [0, 4, 6, 1, 5, 9]
    assert joined.counts.tolist() == [1, 2, 4, 3, 5, 6]


def test_a_write_after_a_load_goes_to_the_delta_and_never_joins_the_base_again(
    spill_from_one_row: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rows = many_rows()
    got = UserIndex.from_chunks(pages(rows, 7), rows=len(rows), spill=tmp_path)
    base = got.lexical._base
    joins: list[int] = []
    joined = Postings.joined
    monkeypatch.setattr(Postings, "joined", lambda parts, spill=None: joins.append(1) or joined(parts, spill))
    expected = UserIndex.from_rows(rows)
    for k in range(3):  # a write then a recall, as each chat turn does
        late = rows_of([turn("s99", "Bob", f"A violin by the lake {k}.", NOW + 10**7 + k)], 10_000 + k)
        got.apply(IndexChanges(late, [], 1 + k, ""))
        expected.apply(IndexChanges(late, [], 1 + k, ""))
        stems = tokens("violin lake")
        np.testing.assert_array_equal(
            got.lexical.scores(stems, (1.5, 1.0, 1.0), len(got)),
            expected.lexical.scores(stems, (1.5, 1.0, 1.0), len(expected)),
        )
    assert joins == [] and got.lexical._pending == []
    assert got.lexical._base is base  # the mapped base is kept, not copied into memory
    assert len(got.lexical._delta) == 3


def test_a_put_of_new_slots_after_a_compaction_goes_to_the_delta() -> None:
    rng = np.random.default_rng(7)
    documents = [(" ".join(rng.choice(WORDS, 4)), "", "") for _ in range(30)]
    index = LexicalIndex()
    index.put(list(range(20)), documents[:20])
    index.drop(3)
    index.compact(np.array([i for i in range(20) if i != 3]))
    base = index._base
    index.put([19], [documents[20]])
    assert index._pending == [] and index._base is base and list(index._delta) == [19]


def _no_room(*args: Any, **kwargs: Any) -> Any:
    raise OSError(errno.ENOSPC, "No space left on device")


class _FullFile:
    """A temporary file whose writes fail as on a full device."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.closed = False
        self.device = open("/dev/full", "wb")  # noqa: SIM115  (Linux: its writes fail with ENOSPC)
        opened.append(self)

    def write(self, data: Any) -> int:
        raise OSError(errno.ENOSPC, "No space left on device")

    def fileno(self) -> int:
        return self.device.fileno()  # a device whose writes fail with ENOSPC

    def close(self) -> None:
        self.device.close()
        self.closed = True


opened: list[_FullFile] = []


@pytest.mark.parametrize("failing", ["write", "second file", "first file"])
def test_a_load_whose_postings_spill_has_no_room_holds_them_in_memory(
    spill_from_one_row: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, failing: str
) -> None:
    opened.clear()
    if failing == "write":
        monkeypatch.setattr(lexical, "tempfile", SimpleNamespace(TemporaryFile=_FullFile))
    else:
        made: list[Any] = []
        real = lexical.tempfile.TemporaryFile

        def second_fails(*args: Any, **kwargs: Any) -> Any:
            if failing == "first file" or made:
                _no_room()
            made.append(real(*args, **kwargs))
            return made[-1]

        monkeypatch.setattr(lexical, "tempfile", SimpleNamespace(TemporaryFile=second_fails))
    rows = many_rows()
    got = UserIndex.from_chunks(pages(rows, 7), rows=len(rows), spill=tmp_path)
    assert isinstance(got._store["turn"], MappedRows)  # the vectors' spill was made: the postings' alone failed
    assert not isinstance(got.lexical._base.indices, np.memmap)  # type: ignore[union-attr]
    assert_same_index(got, UserIndex.from_rows(rows))
    if failing == "write":  # the file of the pending postings, then the two of the join
        assert len(opened) == 3 and all(f.closed for f in opened)
    if failing == "second file":
        assert len(made) == 1 and made[0].closed


def test_a_join_that_fails_keeps_the_pending_postings(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(5)
    documents = [(" ".join(rng.choice(WORDS, 3)), "", "") for _ in range(20)]
    index = LexicalIndex()
    index.loading()
    for start in range(0, 20, 5):
        index.put(list(range(start, start + 5)), documents[start : start + 5])
    pending = list(index._pending)
    joined = Postings.joined
    monkeypatch.setattr(Postings, "joined", _no_room)
    with pytest.raises(OSError):
        index.settle()
    assert index._pending == pending
    monkeypatch.setattr(Postings, "joined", joined)
    whole = LexicalIndex()
    whole.put(list(range(20)), documents)
    stems = tokens("painting lake")
    np.testing.assert_array_equal(index.scores(stems, (1.0, 1.0, 1.0), 20), whole.scores(stems, (1.0, 1.0, 1.0), 20))


@pytest.mark.parametrize(("free_mb", "spilled"), [(1, False), (10_000, True)])
def test_a_load_spills_its_vectors_only_with_twice_their_room_free(
    spill_from_one_row: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, free_mb: int, spilled: bool
) -> None:
    class Found:
        f_bavail, f_frsize = free_mb << 8, 4096

    monkeypatch.setattr(os, "statvfs", lambda folder: Found())
    rows = many_rows()
    got = UserIndex.from_chunks(pages(rows, 7), rows=len(rows), spill=tmp_path)
    assert isinstance(got._store["turn"], MappedRows) is spilled
    assert_same_index(got, UserIndex.from_rows(rows))


def test_a_spill_needs_twice_its_files_the_postings_room_and_the_store_floor_free(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rows, dimension = 1000, 384
    needed = 2 * rows * dimension * 4
    postings = lexical.POSTINGS_PER_DOCUMENT * rows * 12  # waiting + joined, then joined + snapshot: 12 bytes an entry
    wanted = 2 * needed + postings + ROOM_FLOOR + RESERVE
    for free, made in ((wanted - 4096, False), (wanted, True), (2 * needed + ROOM_FLOOR + RESERVE, False)):

        class Found:
            f_bavail, f_frsize = -(-free // 4096), 4096

        monkeypatch.setattr(os, "statvfs", lambda folder, found=Found: found())
        spill = index_module._Spill.make(tmp_path, rows, dimension)
        assert (spill is not None) is made
        if spill is not None:
            spill.close()


def _deleted_files() -> int:
    """Open descriptors of this process on unlinked files."""
    count = 0
    for fd in os.listdir("/proc/self/fd"):
        with contextlib.suppress(OSError):
            count += os.readlink(f"/proc/self/fd/{fd}").endswith(" (deleted)")
    return count


@pytest.mark.parametrize("error", [KeyboardInterrupt, sqlite3.OperationalError])
def test_a_load_that_fails_midway_closes_its_spill(
    spill_from_one_row: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, error: type[BaseException]
) -> None:
    made: list[Any] = []
    make = index_module._Spill.make
    monkeypatch.setattr(index_module._Spill, "make", lambda *a: made.append(make(*a)) or made[-1])
    rows = many_rows()

    def chunks() -> Any:
        yield from pages(rows, 7)[:3]
        raise error("disk I/O error")

    before = _deleted_files()
    with pytest.raises(error):
        UserIndex.from_chunks(chunks(), rows=len(rows), spill=tmp_path)
    assert made and made[0] is not None
    assert all(f.closed for f in made[0].files.values())
    if os.path.isdir("/proc/self/fd"):
        assert _deleted_files() == before


def test_a_spilled_loads_pending_postings_wait_in_a_file_not_in_memory(
    spill_from_one_row: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    waiting: list[Run] = []
    settle = LexicalIndex.settle
    monkeypatch.setattr(
        LexicalIndex, "settle", lambda self, spill=None: waiting.extend(self._pending) or settle(self, spill)
    )
    rows = many_rows()
    got = UserIndex.from_chunks(pages(rows, 7), rows=len(rows), spill=tmp_path)
    assert len(waiting) > 1 and all(r.file is not None and not len(r.indices) and r.size for r in waiting)
    assert all(r.file.closed for r in waiting)  # the file goes once they are joined
    assert os.listdir(tmp_path) == []
    assert_same_index(got, UserIndex.from_rows(rows))


def test_a_snapshot_of_a_load_gives_it_the_snapshots_postings_and_frees_the_spill(
    spill_from_one_row: None, tmp_path: Path
) -> None:
    rows = many_rows()
    before = _deleted_files()
    loaded = UserIndex.from_chunks(pages(rows, 6), rows=len(rows), spill=tmp_path / "data")
    generation = snapshot.save(tmp_path, "ana", loaded, 1)
    base = loaded.lexical._base
    assert base is not None
    for array, name in ((base.indices, "lexical_indices"), (base.counts, "lexical_counts")):
        assert isinstance(array, np.memmap) and Path(str(array.filename)) == generation / f"{name}.npy"
    if os.path.isdir("/proc/self/fd"):  # the spill's unlinked files (vectors and postings) given back
        assert _deleted_files() == before
    assert_same_index(loaded, UserIndex.from_rows(rows))
    late = rows_of([turn("s99", "Bob", "A violin by the lake.", NOW + 10**7)], 10_000)
    expected = UserIndex.from_rows(rows)
    loaded.apply(IndexChanges(late, [], 1, ""))
    expected.apply(IndexChanges(late, [], 1, ""))
    assert_same_index(loaded, expected)


def test_a_load_marks_the_first_turn_of_each_session_as_writes_do() -> None:
    rows = many_rows(5)
    tied = [turn("s42", "Ana", f"Line {k} of a tie.", NOW + 5 * 10**6 + (k > 1)) for k in range(4)]
    rows += rows_of(tied, first_rowid=len(rows) + 1)  # three turns at the session's first second: the least id
    rows.sort(key=lambda r: r[4])
    loaded = UserIndex.from_chunks(pages(rows, 4), rows=len(rows))
    written = UserIndex.from_rows(rows[:1])
    for k, page in enumerate(pages(rows[1:], 3)):  # row after row, as writes do (``_first``)
        written.apply(IndexChanges(page, [], k + 1, ""))
    np.testing.assert_array_equal(loaded._column("first"), written._column("first"))
    assert int(loaded._column("first").sum()) == 6
    assert loaded._column("first")[[i for i, r in enumerate(rows) if r[0] == min(m.id for m in tied[:3])]].all()
