"""The compact layout of a big user's recall index: the vectors' sign codes
(``memcli.store.index.sign_codes``) scanned for the best rows, which alone are scored with
the exact vectors (``Recaller._scanned``), read memory-mapped from the snapshot the index
adopts when it is saved (``UserIndex.adopt_snapshot``), with spare rows for what is
written after it."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import FakeEmbedder
from test_index import USER
from test_index_incremental import QUERIES, features, populated
from test_snapshot import restarted, whole

from memcli.recall import retrieval
from memcli.store import index as user_index
from memcli.store import snapshot
from memcli.store.index import UserIndex, sign_codes


def test_sign_codes_hold_the_sign_of_each_component() -> None:
    rng = np.random.default_rng(1)
    vectors = rng.standard_normal((7, 130)).astype(np.float32)  # 130: three words, the last partly used
    codes = sign_codes(vectors)
    assert codes.shape == (7, 3) and codes.dtype == np.uint64
    bits = np.unpackbits(codes.view(np.uint8), axis=1, bitorder="little")[:, :130]
    np.testing.assert_array_equal(bits.astype(bool), vectors > 0)
    assert not np.unpackbits(codes.view(np.uint8), axis=1, bitorder="little")[:, 130:].any()


def test_the_sign_estimate_follows_the_hamming_distance(fake_embedder: FakeEmbedder) -> None:
    engine, recaller = populated()
    with engine.store.transaction():
        index = recaller.index(USER)
    vector = recaller.encode(QUERIES[0])
    turn, window = index.sign_similarity(vector)
    assert turn.shape == window.shape == (len(index),)
    signs = vector > 0
    for got, vectors in ((turn, index.turn), (window, index.window)):
        differ = ((np.asarray(vectors) > 0) != signs).sum(axis=1)
        np.testing.assert_allclose(got, np.cos(np.pi * differ / index.dimension), atol=1e-6)
    assert index.sign_similarity(np.asarray(index.turn[0]))[0][0] == pytest.approx(1.0)


def test_scanning_the_signs_then_rescoring_all_recalls_as_the_exact_product(
    fake_embedder: FakeEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    engine, recaller = populated()
    with engine.store.transaction():
        want = {q: recaller.recall(q, USER, k=8) for q in QUERIES}
    monkeypatch.setattr(user_index, "SCAN_AT", 0)
    monkeypatch.setattr(user_index, "RESCORED", 10_000)
    with engine.store.transaction():
        for query in QUERIES:
            got = recaller.recall(query, USER, k=8)
            assert [h.memory.id for h in got] == [h.memory.id for h in want[query]], query
            assert [h.relevance for h in got] == pytest.approx([h.relevance for h in want[query]], abs=1e-5)
            assert [h.similarity for h in got] == pytest.approx([h.similarity for h in want[query]], abs=1e-6)


def test_the_hits_of_a_scan_carry_their_exact_scores(
    fake_embedder: FakeEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Only a few rows rescored: each hit is one of them, with its exact similarity and
    the vector signals z-scored as the exact product would (the sample is every row here)."""
    engine, recaller = populated()
    with engine.store.transaction():
        index = recaller.index(USER)
        exact = {q: recaller.recall(q, USER, k=100) for q in QUERIES}
    monkeypatch.setattr(user_index, "SCAN_AT", 0)
    monkeypatch.setattr(user_index, "RESCORED", 4)
    with engine.store.transaction():
        for query in QUERIES:
            got = recaller.recall(query, USER, k=10)
            assert 0 < len(got) <= 4, query
            truth = {h.memory.id: h for h in exact[query]}
            for hit in got:
                assert hit.similarity == pytest.approx(truth[hit.memory.id].similarity, abs=1e-6)
                for name in ("turn", "window"):
                    assert hit.signals[name] == pytest.approx(truth[hit.memory.id].signals[name], abs=1e-5)
    assert len(index) > 4


def test_a_scan_works_out_the_signals_of_its_pool_alone_and_as_the_full_scoring_does(
    fake_embedder: FakeEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The speaker, person and when signals of a big index are worked out for the pool of
    the best slots by the signals that read every slot anyway (``retrieval.POOL`` x
    ``RESCORED``), not for every slot; each hit still carries every signal the full
    scoring gives that memory (the vector ones exact: the moments from every row here)."""
    engine, recaller = populated()
    queries = ("What did Bob ask about the harbour?", "What did I tell you about pottery?", *QUERIES)
    with engine.store.transaction():
        index = recaller.index(USER)
        exact = {q: {h.memory.id: h for h in recaller.recall(q, USER, k=100)} for q in queries}
    monkeypatch.setattr(user_index, "SCAN_AT", 0)
    monkeypatch.setattr(user_index, "RESCORED", 1)
    pool = retrieval.POOL * user_index.RESCORED
    assert index.count > pool
    asked: list[int] = []
    speaker_table = UserIndex.speaker_table

    def recorded(self: UserIndex, chosen, slots=None):  # type: ignore[no-untyped-def]
        values = speaker_table(self, chosen, slots)
        asked.append(len(values))
        return values

    monkeypatch.setattr(UserIndex, "speaker_table", recorded)
    with engine.store.transaction():
        for query in queries:
            got = recaller.recall(query, USER, k=10)
            assert len(got) == 1, query
            truth = exact[query][got[0].memory.id]
            assert got[0].relevance == pytest.approx(truth.relevance, abs=1e-5), query
            assert got[0].signals == pytest.approx(truth.signals, abs=1e-5), query
            assert got[0].similarity == pytest.approx(truth.similarity, abs=1e-6), query
    assert asked and max(asked) <= pool, "the speaker and person signals of the pool alone"


def test_a_saved_index_reads_its_vectors_from_the_snapshot_and_appends_into_spare_rows(
    fake_embedder: FakeEmbedder,
) -> None:
    engine, recaller = populated()
    with engine.store.transaction():
        index = recaller.index(USER)
    assert isinstance(index.turn, np.memmap) and isinstance(index.window, np.memmap), "adopted at the save"
    manifest = snapshot.describe(engine.store.paths.data_dir, USER)
    assert manifest is not None
    assert manifest["arrays"]["turn"][0][0] == manifest["n"] + index.spare_rows()
    mapped = index.turn.base
    engine.remember("I adopted a second puppy named Max", user=USER)
    with engine.store.transaction():
        index = recaller.index(USER)
    assert index.turn.base is mapped, "the new row went into a spare row of the map, nothing copied"
    assert "I adopted a second puppy named Max" in index.texts
    assert features(index) == features(whole(engine))
    np.testing.assert_array_equal(index._column("turn_signs"), sign_codes(np.asarray(index.turn)))
    _, again = restarted(engine)
    assert isinstance(again.turn, np.memmap)
    np.testing.assert_array_equal(again._column("window_signs"), sign_codes(np.asarray(again.window)))


def test_sign_codes_follow_updates_and_compaction(fake_embedder: FakeEmbedder) -> None:
    engine, _ = populated()
    with engine.store.transaction():
        rows = engine.store.sidecar.index._db.execute(
            f"SELECT {user_index_columns()} FROM recall_index WHERE user = ? ORDER BY created_at, memory_id", (USER,)
        ).fetchall()
    index = UserIndex.from_rows(rows)
    for slot in range(0, len(index), 2):
        index._store["alive"][slot] = False
        index._dead += 1
    index._compact()
    assert len(index) == len(rows) // 2
    np.testing.assert_array_equal(index._column("turn_signs"), sign_codes(np.asarray(index.turn)))
    np.testing.assert_array_equal(index._column("window_signs"), sign_codes(np.asarray(index.window)))


def user_index_columns() -> str:
    from memcli.store.recall_index import ROW_COLUMNS

    return ROW_COLUMNS


def test_the_sidecar_is_read_a_page_of_rows_at_a_time(
    fake_embedder: FakeEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memcli.store import recall_index

    engine, _ = populated()
    with engine.store.transaction():
        rows = engine.store.sidecar.index._db.execute(
            f"SELECT {user_index_columns()} FROM recall_index WHERE user = ? ORDER BY created_at, memory_id", (USER,)
        ).fetchall()
        pages: list[int] = []
        put = UserIndex._put_rows

        def counted(index: UserIndex, chunk, touched) -> None:  # type: ignore[no-untyped-def]
            pages.append(len(chunk))
            put(index, chunk, touched)

        monkeypatch.setattr(recall_index, "LOAD_PAGE", 3)
        monkeypatch.setattr(UserIndex, "_put_rows", counted)
        paged = engine.store.sidecar.index.load(USER)
    assert max(pages) == 3 and sum(pages) == len(rows) > 3
    monkeypatch.setattr(UserIndex, "_put_rows", put)
    assert features(paged) == features(UserIndex.from_rows(rows))


@pytest.mark.parametrize("size", [1, 10, 4000, 99_999])
def test_the_pool_is_the_best_slots_whatever_their_spread(size: int) -> None:
    """``retrieval._top`` (a threshold from a sample, then a partition) picks the slots a
    partition of every value picks, slots recall may not return (minus infinity) included."""
    rng = np.random.default_rng(size)
    values = rng.standard_normal(100_000)
    values[rng.random(100_000) < 0.3] = -np.inf
    values[:500] = 7.0  # ties at the top
    got = retrieval._top(values, size)
    assert len(got) == size and np.all(np.diff(got) > 0)
    want = np.argpartition(values, len(values) - size)[len(values) - size :]
    np.testing.assert_array_equal(np.sort(values[got]), np.sort(values[want]))
