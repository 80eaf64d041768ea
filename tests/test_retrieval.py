"""Recall: dense and BM25 candidates fused by reciprocal rank (fake embedder)."""

from __future__ import annotations

from memcli.config import load_settings, resolve_paths
from memcli.core import Memcli
from memcli.memory import Kind, Memory, stable_id
from memcli.retrieval import RRF_K


def _memcli() -> Memcli:
    paths = resolve_paths()
    return Memcli(load_settings(paths), paths, clock=lambda: 1_700_000_000.0)


def _turn(user: str, text: str, created_at: float, kind: str = Kind.TURN.value) -> Memory:
    return Memory(
        id=stable_id(user, text), user=user, kind=kind, text=text, created_at=created_at, day="2023-05-08", source=text[:8]
    )


def test_memory_found_by_both_retrievers_ranks_first(fake_embedder) -> None:
    memcli = _memcli()
    memcli._add(
        [
            _turn("ana", "I adopted a puppy named Rex last spring", 1.0),
            _turn("ana", "The weather in Lyon was rainy", 2.0),
            _turn("ana", "My puppy Rex loves the park", 3.0),
        ]
    )
    hits = memcli.recall("puppy Rex", "ana", k=3)
    assert {h.memory.text for h in hits[:2]} == {"I adopted a puppy named Rex last spring", "My puppy Rex loves the park"}
    top = hits[0]
    assert top.dense_rank is not None and top.lexical_rank is not None
    assert top.fused == 1 / (RRF_K + top.dense_rank) + 1 / (RRF_K + top.lexical_rank)
    assert hits[-1].memory.text == "The weather in Lyon was rainy"


def test_recall_keeps_to_the_user_kind_and_since(fake_embedder) -> None:
    memcli = _memcli()
    memcli._add(
        [
            _turn("ana", "tea with grandma", 100.0),
            _turn("ana", "tea in Kyoto", 200.0, kind=Kind.NOTE.value),
            _turn("bob", "tea at work", 300.0),
        ]
    )
    assert {h.memory.user for h in memcli.recall("tea", "ana", k=10)} == {"ana"}
    assert [h.memory.text for h in memcli.recall("tea", "ana", k=10, kind="note")] == ["tea in Kyoto"]
    assert [h.memory.text for h in memcli.recall("tea", "ana", k=10, since=150.0)] == ["tea in Kyoto"]


def test_recall_returns_at_most_k_best_first(fake_embedder) -> None:
    memcli = _memcli()
    memcli._add([_turn("ana", f"note number {i} about gardening", float(i)) for i in range(30)])
    hits = memcli.recall("gardening", "ana", k=7)
    assert len(hits) == 7
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)


def test_lexical_index_sees_memories_added_after_it_was_built(fake_embedder) -> None:
    memcli = _memcli()
    memcli._add([_turn("ana", "first memory about sailing", 1.0)])
    assert memcli.recall("sailing", "ana", k=5)[0].memory.text == "first memory about sailing"
    memcli._add([_turn("ana", "zeppelin ride over the lake", 2.0)])
    hits = memcli.recall("zeppelin", "ana", k=1)
    assert hits[0].memory.text == "zeppelin ride over the lake" and hits[0].lexical_rank == 1
