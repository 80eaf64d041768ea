"""A query term's field columns merged into one score a document (``memcli.text.lexical._merged``):
each document once, its fields' weighted counts added in the columns' order, bit for bit
what adding one column after another into an array of every slot gives."""

from __future__ import annotations

import numpy as np
import pytest

from memcli.text.lexical import _merged


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
