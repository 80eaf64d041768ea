"""What a warm recall reads: once a user's recall index is held, a request reads no more
than its few memories, whatever the store's size (a count of the user's rows, to learn
whether they have any, read all of them: about 40 ms a request at a million memories)."""

from __future__ import annotations

import pytest
from conftest import FakeEmbedder
from test_index import USER
from test_index_incremental import QUERIES, populated

from memcli.errors import NotFoundError
from memcli.store.recall_index import RecallIndex


def test_a_warm_recall_counts_none_of_the_users_rows(
    fake_embedder: FakeEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    engine, _ = populated()
    first = engine.recall(QUERIES[0], USER, reinforce=False)  # loads the index (its check may count)

    def counted(index: RecallIndex, user: str) -> int:
        raise AssertionError(f"{user}'s rows counted by a warm recall")

    monkeypatch.setattr(RecallIndex, "count_of", counted)
    again = engine.recall(QUERIES[0], USER, reinforce=False)
    assert [h.memory.id for h in again] == [h.memory.id for h in first]


def test_whether_a_user_has_memories_is_read_from_one_row(fake_embedder: FakeEmbedder) -> None:
    engine, _ = populated()
    with engine.store.transaction():
        index = engine.store.sidecar.index
        assert index.has(USER) and index.has("bob")
        assert not index.has("carol") and not index.has("")
    assert engine.store.has_memories("bob") and not engine.store.has_memories("carol")
    with pytest.raises(NotFoundError, match="carol"):
        engine.recall("anything", "carol")
