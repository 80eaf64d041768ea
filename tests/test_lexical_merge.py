"""A query term's field columns merged into one score a document (``memcli.text.lexical._merged``):
each document once, its fields' weighted counts added in the columns' order, bit for bit
what adding one column after another into an array of every slot gives."""

from __future__ import annotations

import numpy as np
import pytest

from memcli.text import lexical
from memcli.text.lexical import LexicalIndex, _merged


@pytest.mark.parametrize("seed", range(6))
def test_merged_columns_hold_each_slot_once_with_its_fields_added_in_order(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = 200
    parts = []
    for weight in rng.uniform(0.1, 2.0, size=int(rng.integers(2, 6))):
        slots = np.sort(rng.choice(n, size=int(rng.integers(1, n)), replace=False)).astype(np.int32)
        parts.append((slots, rng.integers(1, 9, size=len(slots)).astype(np.uint16), float(weight)))
    summed = np.zeros(n, dtype=np.float32)
    for slots, counts, weight in parts:  # one column after another, as a slot's sum adds them
        summed[slots] += np.multiply(counts, weight, out=np.empty(len(slots), dtype=np.float32))
    found = np.unique(np.concatenate([slots for slots, _, _ in parts]))
    present, f = _merged(parts, np.empty(sum(len(s) for s, _, _ in parts), dtype=np.float32))
    np.testing.assert_array_equal(present, found)
    assert f.dtype == np.float32
    np.testing.assert_array_equal(f, summed[found])


def fresh(documents: list[tuple[str, str, str]]) -> LexicalIndex:
    index = LexicalIndex()
    index.put(list(range(len(documents))), documents)
    return index


def test_a_frequent_term_is_merged_once_and_scores_as_a_fresh_index_through_writes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A term most documents hold has its merged columns kept (``LexicalIndex._frequent``):
    a second query does not merge them again, and after writes (the delta, stale rows, a
    merge, a compaction: a new base) every query still scores as an index built at once."""
    monkeypatch.setattr(lexical, "MERGE_AT", 3)
    calls: list[int] = []
    merged = lexical._merged

    def counted(parts, values):  # type: ignore[no-untyped-def]
        calls.append(len(parts))
        return merged(parts, values)

    monkeypatch.setattr(lexical, "_merged", counted)
    rng = np.random.default_rng(3)
    words = ["puppy", "lake", "painting", "zeppelin", "sister"]

    def document() -> tuple[str, str, str]:
        pick = lambda n: " ".join(rng.choice(words, n))  # noqa: E731
        return f"what {pick(rng.integers(1, 4))}", f"what {pick(rng.integers(0, 3))}", "8 May 2023"

    held = {slot: document() for slot in range(30)}
    index = fresh([held[s] for s in range(30)])
    weights = (1.5, 1.0, 1.0)
    index.scores(["what"], weights, 30)
    index.scores(["what"], weights, 30)
    assert calls == [2]  # own and context merged once, for both queries
    for step in range(40):
        if step % 3 == 0:  # a new document after every slot
            slot = max(held) + 1
            held[slot] = document()
            index.put([slot], [held[slot]])
        elif step % 3 == 1:
            slot = int(rng.choice(list(held)))
            held[slot] = document()
            index.put([slot], [held[slot]])
        else:
            slot = int(rng.choice(list(held)))
            index.drop(slot)
            del held[slot]
        if step % 10 == 9:
            keep = np.array(sorted(held))
            index.compact(keep)
            held = {i: held[int(old)] for i, old in enumerate(keep)}
        n = max(held) + 1
        alive = sorted(held)
        for query in (["what"], ["what", "puppi"], ["lake", "what", "may"]):
            expected = np.zeros(n)
            expected[alive] = fresh([held[s] for s in alive]).scores(query, weights, len(alive))
            np.testing.assert_allclose(index.scores(query, weights, n), expected, rtol=1e-6, atol=1e-9)


def questions(n: int, seed: int = 5) -> list[tuple[str, str, str]]:
    rng = np.random.default_rng(seed)
    words = ["puppy", "lake", "painting", "zeppelin", "sister"]
    return [(f"what {' '.join(rng.choice(words, 2))}", f"what {rng.choice(words)}", "8 May 2023") for _ in range(n)] + [
        ("a kayak on the lake", "", "9 May 2023")
    ]


def test_the_kept_columns_go_as_soon_as_the_base_is_replaced(monkeypatch: pytest.MonkeyPatch) -> None:
    """A merge, a compaction, a join and an adoption let go of the merged columns kept from
    the base before, without waiting for a query."""
    monkeypatch.setattr(lexical, "MERGE_AT", 3)
    documents = questions(30)
    index = fresh(documents)
    weights = (1.5, 1.0, 1.0)

    def kept() -> int:
        index.scores(["what"], weights, len(index))
        return len(index._frequent_columns)

    assert kept() == 1
    index.put([0, 1, 2, 3, 4], documents[5:10])  # more than MERGE_AT: a merge
    assert not index._frequent_columns
    assert kept() == 1
    index.compact(np.arange(31))
    assert not index._frequent_columns
    assert kept() == 1
    indices, counts = index._base.indices, index._base.counts  # type: ignore[union-attr]
    index.adopt(indices.copy(), counts.copy())
    assert not index._frequent_columns
    assert kept() == 1
    index.loading()
    index.put([31, 32], documents[:2])
    index.settle()
    assert not index._frequent_columns


def test_a_query_reads_a_rare_terms_columns_once_and_sorts_a_frequent_terms_postings_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A rare term's columns are read once a query; a frequent term's base postings are
    merged once, not again with the delta's, and the scores are bit for bit those of an
    index that keeps nothing."""
    documents = questions(40)
    index, keeping_nothing = fresh(documents), fresh(documents)
    for each in (index, keeping_nothing):
        each.put([3, 7, 41], [documents[9], ("what a lake", "what", "1 May 2023"), documents[2]])
    assert index._delta
    read: list[int] = []
    column = lexical.Postings.column

    def counted_column(self, c):  # type: ignore[no-untyped-def]
        read.append(c)
        return column(self, c)

    monkeypatch.setattr(lexical.Postings, "column", counted_column)
    weights = (1.5, 1.0, 1.0)
    index.scores(["kayak"], weights, 42)
    assert len(read) == 2 * lexical.FIELDS  # the base's and the delta's, once each
    sorted_entries: list[int] = []
    merged = lexical._merged

    def counted(parts, values):  # type: ignore[no-untyped-def]
        sorted_entries.append(sum(len(slots) for slots, _, _ in parts))
        return merged(parts, values)

    monkeypatch.setattr(lexical, "_merged", counted)
    term = index._vocab["what"]
    base_entries = sum(len(index._base.column(lexical.FIELDS * term + f)[0]) for f in range(2))  # type: ignore[union-attr]
    delta_entries = sum(len(index._delta_postings.column(lexical.FIELDS * term + f)[0]) for f in range(2))  # type: ignore[union-attr]
    got = index.scores(["what"], weights, 42)  # a miss: its base postings merged and kept
    assert sum(sorted_entries) == base_entries + delta_entries
    for query in (["what"], ["what", "lake"]):
        got = index.scores(query, weights, 42)
        monkeypatch.setattr(lexical, "FREQUENT_SHARE", 0)  # nothing kept merged
        np.testing.assert_array_equal(got, keeping_nothing.scores(query, weights, 42))
        monkeypatch.setattr(lexical, "FREQUENT_SHARE", 16)
