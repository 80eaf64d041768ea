"""Reinforcement written behind (``MemoryStore.reinforce``): the recall index's copy at
once, Chroma in batches; every read sees it at once, Chroma catches up at a batch, when
Chroma is opened (a store that never opened it leaves it waiting past its close), before
Chroma's metadata is read or written, and after a kill (the copy holds it)."""

from __future__ import annotations

from typing import Any

import pytest
from conftest import FakeEmbedder
from test_index import USER, Clock, make_memcli, note

from memcli.library.engine import Engine
from memcli.store import store as store_module

NOTES = [f"Note {i} about the harbour and the puppy" for i in range(6)]


def chroma_strength(engine: Engine, ids: list[str]) -> dict[str, Any]:
    """Strength and recall count as Chroma's own metadata holds them."""
    with engine.store.transaction():
        got = engine.store._col.get(ids=ids, include=["metadatas"])
    return {i: (m["strength"], m["recall_count"]) for i, m in zip(got["ids"], got["metadatas"])}


def resident(fake_embedder: FakeEmbedder) -> tuple[Engine, list[str]]:
    engine = make_memcli()
    engine.add_memories([note(t) for t in NOTES])
    engine.store.open_resident()
    with engine.store.transaction():
        ids = [m.id for m in engine.store.memories(user=USER)]
    return engine, ids


def command_opening_chroma(engine: Engine) -> None:
    """A normal step of a command that writes: the store opened, Chroma opened (as a write
    opens it), the store closed."""
    engine.store.open_resident()
    try:
        engine.store.open_chroma()
    finally:
        engine.store.close()


def behind_count(engine: Engine) -> int:
    """The reinforcements waiting in the sidecar, read without opening Chroma."""
    with engine.store.transaction():
        return engine.store.sidecar.index.behind_count()


def test_a_reinforcement_is_read_at_once_and_reaches_chroma_at_its_next_opening(
    fake_embedder: FakeEmbedder,
) -> None:
    """A recall's reinforcement in a store that never opened Chroma waits in the sidecar
    past the close, and the next command that opens Chroma writes it there."""
    engine, ids = resident(fake_embedder)
    try:
        hits = engine.recall("harbour puppy", USER, k=3)
        recalled = [h.memory.id for h in hits]
        with engine.store.transaction():
            assert all(m.recall_count == 1 for m in engine.store.get_many(recalled))
            assert engine.store.sidecar.index.behind_count() == 3
    finally:
        engine.store.close()
    assert behind_count(engine) == 3, "Chroma waits"
    command_opening_chroma(engine)
    assert behind_count(engine) == 0
    assert all(v == (2.0, 1) for v in chroma_strength(engine, recalled).values())


def test_a_batch_is_written_to_chroma(fake_embedder: FakeEmbedder, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(store_module, "BEHIND_BATCH", 4)
    engine, ids = resident(fake_embedder)
    try:
        with engine.store.transaction():
            engine.reinforce(engine.store.get_many(ids[:3]))
            assert engine.store.sidecar.index.behind_count() == 3
            engine.reinforce(engine.store.get_many(ids[3:5]))
            assert engine.store.sidecar.index.behind_count() == 0
        assert all(v == (2.0, 1) for v in chroma_strength(engine, ids[:5]).values())
    finally:
        engine.store.close()


def test_reading_chromas_metadata_catches_it_up_first(fake_embedder: FakeEmbedder) -> None:
    """A rebuild of the recall index from Chroma (a user left dirty) keeps the reinforcement."""
    engine, ids = resident(fake_embedder)
    try:
        with engine.store.transaction():
            engine.reinforce(engine.store.get_many(ids[:2]))
            engine.store.sidecar.index.mark_dirty([USER])
            engine.store.check_recall_index(USER)
            assert engine.store.sidecar.index.behind_count() == 0
            assert all(m.recall_count == 1 for m in engine.store.get_many(ids[:2]))
    finally:
        engine.store.close()


def test_a_later_write_and_a_delete_take_the_memory_off_the_list(fake_embedder: FakeEmbedder) -> None:
    engine, ids = resident(fake_embedder)
    try:
        with engine.store.transaction():
            engine.reinforce(engine.store.get_many(ids[:3]))
            pinned = engine.store.get(ids[0])
            pinned.pinned = True
            engine.store.update([pinned])
            engine.store.delete([ids[1]])
            assert engine.store.sidecar.index.behind_count() == 0, "the update wrote what waited first"
        assert chroma_strength(engine, [ids[0]])[ids[0]] == (2.0, 1), "the update wrote it whole"
    finally:
        engine.store.close()
    assert chroma_strength(engine, [ids[2]])[ids[2]] == (2.0, 1)


def test_a_kill_before_chroma_caught_up_loses_nothing(fake_embedder: FakeEmbedder) -> None:
    """The store is dropped without closing (as a kill -9 leaves it): the next process
    reads the reinforcement from the copy, and the next command that opens Chroma writes
    it there."""
    engine, ids = resident(fake_embedder)
    with engine.store.transaction():
        engine.reinforce(engine.store.get_many(ids[:2]))
    engine.store._flush_behind = lambda: 0  # type: ignore[method-assign]  # what a kill skips
    engine.store.close()
    assert all(v == (1.0, 0) for v in chroma_strength(engine, ids[:2]).values())

    again = make_memcli()
    with again.store.transaction():
        assert all(m.recall_count == 1 for m in again.store.get_many(ids[:2]))
        assert again.store.sidecar.index.behind_count() == 2
    command_opening_chroma(again)
    assert behind_count(again) == 0
    assert all(v == (2.0, 1) for v in chroma_strength(again, ids[:2]).values())


def chroma_superseded_by(engine: Engine, memory_id: str) -> str:
    """The ``superseded_by`` that Chroma's own metadata holds for ``memory_id``."""
    with engine.store.transaction():
        got = engine.store._col.get(ids=[memory_id], include=["metadatas"])
    return str(got["metadatas"][0].get("superseded_by") or "")


def test_a_supersession_at_write_time_is_written_behind_and_survives_a_kill(fake_embedder: FakeEmbedder) -> None:
    """``remember`` of a note that supersedes another (issue 31) writes the older one's end
    to the copy and the history in one commit, Chroma later: after a kill before Chroma
    caught up, the next process reads it from the copy, and the next command that opens
    Chroma writes it there."""
    clock = Clock()
    engine = make_memcli(clock=clock)
    engine.store.open_resident()
    older, _ = engine.remember("I take lisinopril 10 mg once a day", USER)
    clock.now += 86400
    newer, _ = engine.remember("The GP raised my lisinopril dose to 20 mg", USER)
    with engine.store.transaction():
        assert engine.store.get(older.id).superseded_by == newer.id
        assert engine.store.sidecar.index.behind_count() == 1
        assert [e.event for e in engine.store.sidecar.history(memory_id=older.id)][-1] == "UPDATE"
    assert chroma_superseded_by(engine, older.id) == "", "Chroma waits"
    engine.store._flush_behind = lambda: 0  # type: ignore[method-assign]  # what a kill skips
    engine.store.close()

    again = make_memcli()
    with again.store.transaction():
        assert again.store.get(older.id).superseded_by == newer.id
        assert again.store.sidecar.index.behind_count() == 1
    command_opening_chroma(again)
    assert behind_count(again) == 0
    assert chroma_superseded_by(again, older.id) == newer.id


def commits_by_synchronous(engine: Engine) -> list[str]:
    """Starts recording the ``synchronous`` setting in force at each COMMIT of the sidecar's
    connection (the store held resident, so the connection stays the same); returns the list
    it appends to."""
    seen = {"now": engine.store.sidecar._db.execute("PRAGMA synchronous").fetchone()[0]}
    commits: list[str] = []

    def trace(statement: str) -> None:
        words = statement.upper().split()
        if words[:2] == ["PRAGMA", "SYNCHRONOUS"] and "=" in words:
            seen["now"] = words[-1]
        elif words[:1] == ["COMMIT"]:
            commits.append(str(seen["now"]))

    engine.store.sidecar._db.set_trace_callback(trace)
    return commits


def test_a_reinforcement_commits_unsynced_in_the_write_ahead_log_and_a_note_synced(
    fake_embedder: FakeEmbedder,
) -> None:
    """The sidecar is in WAL mode; a reinforcement's commit is not waited on to reach the
    disk (``synchronous = NORMAL``: a kill loses nothing of it, a power cut may lose it),
    a note's commits are (FULL, as every other write), and the reinforcement is read back
    by the next process."""
    engine, ids = resident(fake_embedder)
    try:
        with engine.store.transaction():
            assert engine.store.sidecar._db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
            commits = commits_by_synchronous(engine)
            engine.reinforce(engine.store.get_many(ids[:2]))
            assert commits == ["NORMAL"]
            commits.clear()
        engine.remember("A new note about the lighthouse", USER)
        assert commits and set(commits) == {"FULL"}
    finally:
        engine.store.close()
    again = make_memcli()
    with again.store.transaction():
        assert [m.recall_count for m in again.store.get_many(ids[:2])] == [1, 1]


def test_unsynced_inside_a_transaction_joins_it_and_a_blocks_error_is_the_one_raised(
    fake_embedder: FakeEmbedder,
) -> None:
    """``Sidecar.unsynced`` entered inside a transaction joins it (SQLite changes
    ``synchronous`` only between transactions); a block that raises with its own
    transaction open has it rolled back, its error raised, and the setting FULL again."""
    engine, ids = resident(fake_embedder)
    sidecar = engine.store.sidecar
    FULL = 2

    def synchronous() -> int:
        return int(sidecar._db.execute("PRAGMA synchronous").fetchone()[0])

    try:
        with engine.store.transaction():
            with sidecar.atomic(), sidecar.unsynced():
                engine.store.update_behind(engine.store.get_many(ids[:1]))
            assert synchronous() == FULL
            with pytest.raises(ValueError, match="the block's own error"), sidecar.unsynced():
                sidecar._db.execute("BEGIN")
                sidecar._db.execute("INSERT INTO index_meta VALUES ('probe', '1')")
                raise ValueError("the block's own error")
            assert not sidecar._db.in_transaction
            assert synchronous() == FULL
            assert sidecar._db.execute("SELECT 1 FROM index_meta WHERE key = 'probe'").fetchone() is None
    finally:
        engine.store.close()
