"""The recall index kept in memory (``UserIndex``) and brought up to date from what each
write changed (``RecallIndex.changes``): after every kind of write a recaller that has been
following the store recalls exactly what a recaller loading the index afresh recalls, and
it reads only the changed rows (no full load, no listing of the store's ids)."""

from __future__ import annotations

import sqlite3
from datetime import datetime
from typing import Any

import numpy as np
import pytest
from conftest import FakeEmbedder
from test_index import LINES, NOW, USER, Clock, embedding, make_memcli, note, session, sql

from memcli.dates import says_when, spoken_day
from memcli.library.engine import Engine
from memcli.memory import Kind, Memory, stable_id
from memcli.recall.retrieval import RECALLED_KINDS, Recaller
from memcli.store import snapshot
from memcli.store.index import IndexChanges, UserIndex
from memcli.store.recall_index import INDEX_VERSION, ROW_COLUMNS, RecallIndex, window_text
from memcli.store.store import MemoryStore

QUERIES = (
    "What is the name of Ana's puppy?",
    "What did Bob ask about the harbour?",
    "When did Ana fly over the lake in a zeppelin?",
    "pottery classes in May",
    "What happened in June?",
    "sister birthday March",
    "Where does Ana live now?",
)


S2 = [("Bob", "I started pottery classes."), ("Ana", "Pottery sounds relaxing, how was it?")]


def at(day: str, minute: int = 0) -> float:
    return datetime.fromisoformat(f"{day}T10:00:00").timestamp() + 60 * minute


def turn(name: str, speaker: str, text: str, created_at: float, day: str = "2023-05-08", user: str = USER) -> Memory:
    return Memory(
        id=stable_id(user, name, str(created_at), text),
        user=user,
        kind=Kind.TURN.value,
        text=text,
        created_at=created_at,
        day=day,
        session=name,
        speaker=speaker,
        source=f"{name}:{created_at}",
    )


def fact(text: str, minute: int = 0) -> Memory:
    return Memory(
        id=stable_id(USER, "fact", text),
        user=USER,
        kind=Kind.FACT.value,
        text=text,
        created_at=at("2023-05-20", minute),
        day="2023-05-20",
        source="test",
    )


def populated() -> tuple[Engine, Recaller]:
    """Two sessions, a note and a fact of ana, one note of bob; and a recaller that has loaded ana's index."""
    engine = make_memcli(clock=Clock(datetime(2023, 5, 31, 9).timestamp()))
    engine.add_memories(
        session("s1")
        + session("s2", S2, "2023-05-25")
        + [note("My sister's birthday is 4 March"), fact("Ana lives in Paris"), note("bob's note", user="bob")]
    )
    recaller = Recaller(engine.store, engine.embedder)
    with engine.store.transaction():
        recaller.recall(QUERIES[0], USER)
    return engine, recaller


def features(index: UserIndex) -> dict[str, tuple[Any, ...]]:
    """Memory id → every per-row feature of ``index``, over the rows alive."""
    index.says_when  # noqa: B018 - worked out on first use
    shift = 14 * 86400.0
    columns = (
        index.rowids,
        index.kinds,
        index.created_at,
        index.archived,
        index.ended,
        index.caption,
        index.first,
        index.log_length,
        index.question,
        index.says_when,
        index.months(0.0),
        index.months(shift),
    )
    out = {}
    for slot in np.flatnonzero(index.alive):
        out[index.ids[slot]] = (
            index.texts[slot],
            index.speakers[slot],
            *(c[slot] if c.dtype == object else c[slot].item() for c in columns),
            index.turn[slot].tobytes(),
            index.window[slot].tobytes(),
        )
    return out


def by_id(index: UserIndex, values: np.ndarray) -> dict[str, float]:
    return {index.ids[slot]: float(values[slot]) for slot in np.flatnonzero(index.alive)}


def assert_same_as_fresh(engine: Engine, recaller: Recaller) -> UserIndex:
    """``recaller`` (brought up to date) recalls what a new recaller, loading afresh, recalls:
    the same memories in the same order with the same scores, from the same rows."""
    fresh = Recaller(engine.store, engine.embedder)
    with engine.store.transaction(), pytest.MonkeyPatch.context() as whole:
        whole.setattr(snapshot, "load", lambda *args: None)  # afresh: from the sidecar, not a snapshot
        kept, loaded = recaller.index(USER), fresh.index(USER)
        assert kept is not loaded
        assert features(kept) == features(loaded)
        assert kept.count == loaded.count == len(loaded)
        assert kept.speaker_names() == loaded.speaker_names()
        for query in QUERIES:
            vector = np.asarray(engine.embedder.embed_one(query), dtype=np.float32)
            masks = [i.alive & ~i.archived & ~i.ended & i.kind_mask(RECALLED_KINDS) for i in (kept, loaded)]
            got = recaller.scores(query, vector, USER, kept, masks[0])
            want = fresh.scores(query, vector, USER, loaded, masks[1])
            for name in want:
                a, b = by_id(kept, got[name]), by_id(loaded, want[name])
                assert a.keys() == b.keys()
                assert [a[i] for i in b] == pytest.approx([b[i] for i in b], rel=1e-5, abs=1e-6), (query, name)
            for kind in (None, "turn", "fact"):
                hits = recaller.recall(query, USER, k=100, kind=kind)
                expected = fresh.recall(query, USER, k=100, kind=kind)
                assert [h.memory.id for h in hits] == [h.memory.id for h in expected], (query, kind)
                assert [h.relevance for h in hits] == pytest.approx([h.relevance for h in expected], rel=1e-5, abs=1e-6)
    return kept


@pytest.fixture
def loads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Counts full loads of a user's index and listings of the store's ids."""
    calls: list[str] = []
    load, ids = RecallIndex.load, MemoryStore._ids

    def counted_load(index: RecallIndex, user: str) -> UserIndex:
        calls.append(f"load {user}")
        return load(index, user)

    def counted_ids(store: MemoryStore, user: str | None = None) -> list[str]:
        calls.append(f"ids {user}")
        return ids(store, user)

    monkeypatch.setattr(RecallIndex, "load", counted_load)
    monkeypatch.setattr(MemoryStore, "_ids", counted_ids)
    return calls


# each kind of write, followed incrementally ---------------------------------------------------


def test_a_new_note_is_read_without_a_full_load(fake_embedder: FakeEmbedder, loads: list[str]) -> None:
    engine, recaller = populated()
    loads.clear()
    remembered, _ = engine.remember("I adopted a second puppy named Max", user=USER)

    with engine.store.transaction():
        hits = recaller.recall("second puppy Max", USER, k=3)
    assert hits[0].memory.id == remembered.id
    assert loads == [], "one new memory is read as a change, not by reloading the index or listing the store"
    assert_same_as_fresh(engine, recaller)


def test_a_chat_turn_appended_to_a_session(fake_embedder: FakeEmbedder, loads: list[str]) -> None:
    engine, recaller = populated()
    loads.clear()
    last = session("s1")[-1]
    engine.write([turn("s1", "Bob", "Was the zeppelin loud over the harbour?", last.created_at + 60)])
    engine.write([turn("s1", "Ana", "Quite loud, Rex barked at it.", last.created_at + 120)])
    with engine.store.transaction():
        recaller.index(USER)
    assert loads == []

    kept = assert_same_as_fresh(engine, recaller)
    assert kept.count == 11


def test_a_turn_inserted_in_the_middle_refreshes_its_neighbours_windows(
    fake_embedder: FakeEmbedder, loads: list[str]
) -> None:
    engine, recaller = populated()
    loads.clear()
    turns = session("s1")
    middle = turn("s1", "Bob", "A zeppelin? Were you scared of the height?", turns[2].created_at + 30)
    engine.write([middle])

    with engine.store.transaction():
        kept = recaller.index(USER)
    assert loads == []
    owns = [m.index_text() for m in turns[:3] + [middle] + turns[3:]]
    for i, memory in enumerate(turns[:3] + [middle] + turns[3:]):
        slot = kept.ids.index(memory.id)
        np.testing.assert_allclose(kept.window[slot], embedding(window_text(owns, i)), atol=1e-6)
    context = {r[0]: r[1] for r in sql(engine, "SELECT memory_id, context FROM recall_index")}
    assert "scared of the height" in context[turns[2].id] and "scared of the height" in context[turns[4].id]
    with engine.store.transaction():
        hits = recaller.recall("scared of the height", USER, k=5)
    assert middle.id in [h.memory.id for h in hits]
    assert_same_as_fresh(engine, recaller)


def test_a_turn_older_than_its_session_becomes_its_first(fake_embedder: FakeEmbedder) -> None:
    engine, recaller = populated()
    turns = session("s1")
    opening = turn("s1", "Bob", "Hi Ana, long time no see!", turns[0].created_at - 60)
    engine.write([opening])

    kept = assert_same_as_fresh(engine, recaller)
    assert kept.first[kept.ids.index(opening.id)] and not kept.first[kept.ids.index(turns[0].id)]


def test_a_delete(fake_embedder: FakeEmbedder) -> None:
    engine, recaller = populated()
    turns = session("s1")
    engine.delete(turns[0].id)  # the first turn of its session: the next one becomes first
    engine.delete(turns[2].id)

    kept = assert_same_as_fresh(engine, recaller)
    assert turns[0].id not in features(kept) and kept.first[kept.ids.index(turns[1].id)]
    assert len(kept) == kept.count + 2, "deleted rows stay as dead slots until a compaction"


def test_deleting_every_turn_of_a_speaker_drops_the_speaker(fake_embedder: FakeEmbedder) -> None:
    engine, recaller = populated()
    for memory in session("s1") + session("s2", S2, "2023-05-25"):
        if memory.speaker == "Bob":
            engine.delete(memory.id)

    kept = assert_same_as_fresh(engine, recaller)
    assert kept.speaker_names() == {"Ana"}


def test_many_deletes_compact_the_index(fake_embedder: FakeEmbedder, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("memcli.store.index.COMPACT_AT", 2)
    engine, recaller = populated()
    turns = session("s1")
    for memory in turns[1:4]:
        engine.delete(memory.id)

    kept = assert_same_as_fresh(engine, recaller)
    assert len(kept) == kept.count == 6
    engine.write([turn("s1", "Bob", "And the lighthouse, was it tall?", turns[-1].created_at + 60)])
    assert_same_as_fresh(engine, recaller)


def test_archive_by_forget_and_restore(fake_embedder: FakeEmbedder) -> None:
    engine, recaller = populated()
    fresh, _ = engine.remember("I bought a red bicycle today", user=USER)
    engine.clock.now = datetime(2023, 7, 1, 9).timestamp()
    assert engine.forget(USER).archived > 0
    kept = assert_same_as_fresh(engine, recaller)
    assert kept.archived.any()

    engine.restore(session("s1")[2].id)
    kept = assert_same_as_fresh(engine, recaller)
    assert not kept.archived[kept.ids.index(session("s1")[2].id)]
    assert fresh.id in kept.ids


def test_an_update_that_ends_a_fact(fake_embedder: FakeEmbedder) -> None:
    engine, recaller = populated()
    with engine.store.transaction():
        [old] = engine.store.get_many([fact("Ana lives in Paris").id])
    old.valid_to = NOW
    new = fact("Ana lives in Lyon now", minute=5)
    engine.add_memories([new])
    engine.store.update([old])

    kept = assert_same_as_fresh(engine, recaller)
    assert kept.ended[kept.ids.index(old.id)]
    with engine.store.transaction():
        assert [h.memory.id for h in recaller.recall("Where does Ana live?", USER, k=10, kind="fact")] == [new.id]


def test_a_summary_regenerated_under_the_same_id(fake_embedder: FakeEmbedder) -> None:
    engine, recaller = populated()
    summary = Memory(
        id="event-daily-ana-2023-05-08",
        user=USER,
        kind=Kind.EVENT_DAILY.value,
        text="Ana adopted a puppy.",
        created_at=at("2023-05-08", 30),
        day="2023-05-08",
        source="test",
    )
    engine.add_memories([summary])
    assert_same_as_fresh(engine, recaller)

    summary.text, summary.created_at = "Ana flew in a zeppelin over the lake? Yes, in June.", at("2023-05-09")
    engine.store.upsert([summary], [embedding(summary.text)])
    kept = assert_same_as_fresh(engine, recaller)
    assert kept.texts[kept.ids.index(summary.id)] == summary.text


def test_a_rebuild_loads_the_index_whole_again(fake_embedder: FakeEmbedder, loads: list[str]) -> None:
    engine, recaller = populated()
    with engine.store.transaction():
        before = recaller.index(USER)
        memories, vectors = engine.store._with_embeddings(USER)
        engine.store.sidecar.index.rebuild(USER, memories, vectors)
    loads.clear()

    with engine.store.transaction():
        after = recaller.index(USER)
    assert after is not before and loads[-1] == f"load {USER}", "a new epoch: loaded whole"
    assert_same_as_fresh(engine, recaller)


def test_a_dirty_user_is_loaded_whole_again(fake_embedder: FakeEmbedder, loads: list[str]) -> None:
    engine, recaller = populated()
    with engine.store.transaction():
        engine.store.sidecar.index.mark_dirty([USER])
    loads.clear()
    assert_same_as_fresh(engine, recaller)
    assert loads[:2] == [f"ids {USER}", f"load {USER}"]


def test_another_users_writes_leave_the_index_as_it_is(fake_embedder: FakeEmbedder, loads: list[str]) -> None:
    engine, recaller = populated()
    with engine.store.transaction():
        kept = recaller.index(USER)
    seq = kept.seq
    engine.add_memories([note("bob again", user="bob")])
    loads.clear()
    with engine.store.transaction():
        assert recaller.index(USER) is kept
    assert kept.seq > seq and loads == []


# the parts -------------------------------------------------------------------------------------


def rows_of(memories: list[Memory], first_rowid: int = 1) -> list[tuple[Any, ...]]:
    """Rows as ``load`` reads them (``ROW_COLUMNS``)."""
    assert ROW_COLUMNS.split(", ")[:2] == ["memory_id", "rowid"]
    vectors = FakeEmbedder().embed([m.index_text() for m in memories])
    return [
        (
            m.id,
            first_rowid + i,
            m.kind,
            m.speaker,
            m.created_at,
            0,
            0,
            m.text,
            0,
            m.session,
            np.asarray(v, dtype=np.float32).tobytes(),
            np.asarray(v, dtype=np.float32).tobytes(),
            m.index_text(),
            "",
            spoken_day(m.day),
        )
        for i, (m, v) in enumerate(zip(memories, vectors))
    ]


def test_appending_a_row_copies_nothing_while_capacity_lasts() -> None:
    index = UserIndex.from_rows(rows_of(session("s1")))
    storage = index.turn.base
    assert storage is not None and storage.shape[0] > len(index)
    index.apply(IndexChanges(rows_of([turn("s1", "Bob", "One more.", NOW)], 100), [], 1, ""))
    assert index.turn.base is storage and len(index) == len(LINES) + 1
    assert index.turn.flags["C_CONTIGUOUS"] and index.turn.dtype == np.float32
    for _ in range(40):  # past the capacity: the storage grows (doubling), rows keep their values
        index.apply(
            IndexChanges(
                rows_of([turn("s9", "Bob", f"Turn {len(index)}.", NOW + len(index))], 100 + len(index)), [], 1, ""
            )
        )
    assert index.turn.base is not storage
    np.testing.assert_array_equal(index.turn[0], np.frombuffer(rows_of(session("s1"))[0][10], dtype=np.float32))
    assert index.first.sum() == 2 and index.first[0] and index.first[len(LINES) + 1]


def test_per_row_features_follow_the_texts() -> None:
    memories = session("s1")
    index = UserIndex.from_rows(rows_of(memories))
    assert index.question.tolist() == [float(t.endswith("?")) for _, t in LINES]
    np.testing.assert_allclose(index.log_length, np.log1p([len(t) for _, t in LINES]))
    assert index.says_when.tolist() == [float(says_when(t)) for _, t in LINES]
    late = turn("s1", "Ana", "We went there last week?", NOW)
    index.apply(IndexChanges(rows_of([late], 50), [], 2, ""))
    assert index.question[-1] == 1.0 and index.says_when[-1] == 1.0
    assert index.months(0.0)[-1] == datetime.fromtimestamp(NOW).month


def test_missing_windows_reads_a_partial_index(fake_embedder: FakeEmbedder) -> None:
    engine, _ = populated()
    statement = "SELECT rowid, window FROM recall_index INDEXED BY recall_missing_windows WHERE user = ? AND window_vector IS NULL"
    plan = [r[-1] for r in sql(engine, "EXPLAIN QUERY PLAN " + statement, USER)]
    assert any("recall_missing_windows" in step for step in plan), plan
    plan = [
        r[-1]
        for r in sql(engine, "EXPLAIN QUERY PLAN SELECT rowid FROM recall_index WHERE user = ? AND seq > ?", USER, 3)
    ]
    assert any("recall_by_seq" in step for step in plan), plan


def test_an_index_of_version_1_gains_the_change_counter_and_is_rebuilt(fake_embedder: FakeEmbedder) -> None:
    engine, _ = populated()
    db = sqlite3.connect(engine.paths.database)
    db.execute("DROP INDEX recall_by_seq")
    db.execute("ALTER TABLE recall_index DROP COLUMN seq")
    db.execute("UPDATE index_meta SET value = '1' WHERE key LIKE 'version:%'")
    db.commit()
    db.close()
    notices: list[str] = []
    engine = make_memcli(notices)
    with engine.store.transaction():
        assert [h.memory.text for h in engine.recaller.recall("puppy named Rex", USER, k=1)] == [
            "I adopted a puppy named Rex."
        ]
    assert len(notices) == 1 and "rebuilding" in notices[0]
    assert sql(engine, "SELECT value FROM index_meta WHERE key = 'version:ana'") == [(str(INDEX_VERSION),)]
    assert sql(engine, "SELECT min(seq) > 0 FROM recall_index WHERE user = ?", USER) == [(1,)]


def test_reinforcement_changes_no_row(fake_embedder: FakeEmbedder) -> None:
    engine, recaller = populated()
    with engine.store.transaction():
        seq = engine.store.sidecar.index.seq()
    engine.recall("puppy", USER, reinforce=True)
    with engine.store.transaction():
        assert engine.store.sidecar.index.seq() == seq
