"""What a query of a big user's index does a slot at a time, kept to what it must do: the
Hamming distances of the sign codes taken a block of rows at a time
(``memcli.store.index._hamming``), the moments' fixed sample of rows given from its
memo without a copy (``MappedRows``), and no mask of every slot by kind built again a
query once the index is unchanged (``Recaller``). Every result stays that of the plain
computation; no timing is asserted."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from conftest import FakeEmbedder
from test_index import USER
from test_index_incremental import QUERIES, populated
from test_snapshot_rows import saved

from memcli.store import index as user_index
from memcli.store.index import UserIndex, sign_codes


@pytest.mark.parametrize("rows", [1, 3, 7, 10])
def test_hamming_distances_taken_a_block_at_a_time_count_every_differing_sign(
    monkeypatch: pytest.MonkeyPatch, rows: int
) -> None:
    """Blocks of three rows: a whole block, several, and a last one cut short."""
    monkeypatch.setattr(user_index, "HAMMING_BLOCK", 3)
    rng = np.random.default_rng(4)
    vectors = rng.standard_normal((rows, 130)).astype(np.float32)  # three words, the last partly used
    query = rng.standard_normal(130).astype(np.float32)
    codes = user_index._sign_storage(rows, 130)
    codes[:] = sign_codes(vectors)
    got = user_index._hamming(codes, sign_codes(query.reshape(1, -1))[0])
    assert got.dtype == np.uint16
    np.testing.assert_array_equal(got, ((vectors > 0) != (query > 0)).sum(axis=1))


def test_a_repeated_read_of_many_rows_is_given_read_only_not_copied(tmp_path: Path) -> None:
    """The kept read and every read of the same slots are read-only views of it, alike
    from the first read on, and no caller can make one writeable to change the next."""
    n = 3000
    index, _ = saved(tmp_path, n)
    every = np.arange(n)  # more than MEMO_ROWS: kept for the next read of the same slots
    want = np.array(index.turn[:n])
    first = index.turn[every]
    again = index.turn[every]
    np.testing.assert_array_equal(again, want)
    assert np.shares_memory(again, first)  # not copied
    for read in (first, again):
        assert not read.flags.writeable
        with pytest.raises(ValueError):
            read.flags.writeable = True
        with pytest.raises(ValueError):
            read[0, 0] = 123.0
    np.testing.assert_array_equal(index.turn[every], want)


def test_an_unchanged_index_builds_no_kind_mask_of_every_slot_a_query(
    fake_embedder: FakeEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The relation rule (a relation's memory only when the query follows it) reads the
    relation slots kept from the index, and recall still leaves the relations out."""
    engine, recaller = populated()
    with engine.store.transaction():
        index = recaller.index(USER)
        want = {q: [h.memory.id for h in recaller.recall(q, USER, k=8)] for q in QUERIES}
    built: list[int] = []
    kind_mask = UserIndex.kind_mask

    def counted(self: UserIndex, kinds):  # type: ignore[no-untyped-def]
        built.append(len(self))
        return kind_mask(self, kinds)

    monkeypatch.setattr(UserIndex, "kind_mask", counted)
    with engine.store.transaction():
        for query in QUERIES:
            assert [h.memory.id for h in recaller.recall(query, USER, k=8)] == want[query], query
    assert built == []
    assert len(index) > 0
