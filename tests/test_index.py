"""The recall index (``memcli.store.recall_index``) with the fake embedder: every write path keeps it equal
to the store (ids, archived and ended flags, the lexical context of each turn, window vectors),
and recall rebuilds it, with a notice, when it is missing, left dirty by an interrupted
write, stale, or of another version."""

from __future__ import annotations

import json
import sqlite3
from collections import defaultdict
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from cli_checks import ok
from conftest import FakeEmbedder, given_models
from test_consolidate import MOVE_TURNS, OLD_FACT, UPDATED_FACT, Script, add_fact, day_turns
from typer.testing import CliRunner

from memcli.cli import app
from memcli.config import load_settings, resolve_paths
from memcli.dates import spoken_day
from memcli.library.engine import Engine
from memcli.memory import Kind, Memory, stable_id
from memcli.store.recall_index import INDEX_VERSION, RecallIndex, context_text, window_text

USER = "ana"
DAY = "2023-05-08"
NOW = datetime(2023, 6, 1, 9, 0).timestamp()

# A session whose turns each have a word no other turn has.
LINES = [
    ("Ana", "I adopted a puppy named Rex."),
    ("Bob", "What breed is your puppy?"),
    ("Ana", "We flew over the lake in a zeppelin."),
    ("Bob", "Did you take photos of the harbour?"),
    ("Ana", "Only of the lighthouse at sunset."),
]


# helpers ------------------------------------------------------------------------------------


class Clock:
    """A clock the test moves."""

    def __init__(self, now: float = NOW) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def make_memcli(notices: list[str] | None = None, clock: Clock | None = None) -> Engine:
    paths = resolve_paths()
    return Engine(
        load_settings(paths),
        paths,
        clock=clock or Clock(),
        notice=notices.append if notices is not None else None,
        **given_models(),
    )


def session(name: str, lines: Sequence[tuple[str, str]] = LINES, day: str = DAY, user: str = USER) -> list[Memory]:
    start = datetime.fromisoformat(f"{day}T10:00:00").timestamp()
    return [
        Memory(
            id=stable_id(user, name, str(i), text),
            user=user,
            kind=Kind.TURN.value,
            text=text,
            created_at=start + 60 * i,
            day=day,
            session=name,
            speaker=speaker,
            source=f"{name}:{i}",
        )
        for i, (speaker, text) in enumerate(lines)
    ]


def note(text: str, user: str = USER) -> Memory:
    return Memory(
        id=stable_id(user, "note", text),
        user=user,
        kind=Kind.NOTE.value,
        text=text,
        created_at=NOW - 3600,
        day="2023-06-01",
    )


def rows(engine: Engine, user: str = USER) -> dict[str, dict[str, Any]]:
    """The index rows of ``user`` with their lexical fields, read from the database itself."""
    db = sqlite3.connect(engine.paths.database)
    db.row_factory = sqlite3.Row
    try:
        found = db.execute(
            "SELECT memory_id, kind, session, archived, ended, own, window, window_vector, context AS ctx, spoken_day AS day"
            " FROM recall_index WHERE user = ?",
            (user,),
        ).fetchall()
        return {r["memory_id"]: dict(r) for r in found}
    finally:
        db.close()


def sql(engine: Engine, statement: str, *args: Any) -> list[tuple[Any, ...]]:
    """Run one statement on the sidecar database behind the store's back."""
    db = sqlite3.connect(engine.paths.database)
    try:
        with db:
            return db.execute(statement, args).fetchall()
    finally:
        db.close()


def embedding(text: str) -> np.ndarray:
    return np.asarray(FakeEmbedder().embed([text])[0], dtype=np.float32)


def vector(row: dict[str, Any]) -> np.ndarray | None:
    blob = row["window_vector"]
    return None if blob is None else np.frombuffer(blob, dtype=np.float32)


def stored(engine: Engine, user: str = USER) -> list[Memory]:
    with engine.store.transaction():
        return engine.store.memories(user=user)


def assert_index_matches_store(engine: Engine, user: str = USER, filled: bool = False) -> dict[str, dict[str, Any]]:
    """The index holds exactly the store's memories of ``user``, clean, with their flags, own
    text, day, the context and window of their session, and every window vector present
    (NULL allowed unless ``filled``) equal to the embedding of its window text."""
    memories = stored(engine, user)
    with engine.store.transaction():
        index = engine.store.sidecar.index
        assert index.ids(user) == {m.id for m in memories}
        assert not index.is_dirty(user)
    found = rows(engine, user)
    assert set(found) == {m.id for m in memories}
    sessions: dict[str, list[Memory]] = defaultdict(list)
    for m in memories:
        row = found[m.id]
        assert (row["archived"], row["ended"]) == (int(m.archived), int(m.valid_to > 0)), m.text
        assert row["own"] == m.index_text()
        assert row["day"] == spoken_day(m.day)
        if m.kind == Kind.TURN.value and m.session:
            sessions[m.session].append(m)
        else:
            assert (row["ctx"], row["window"]) == ("", m.index_text())
    for turns in sessions.values():
        turns.sort(key=lambda m: (m.created_at, m.id))
        owns = [m.index_text() for m in turns]
        for i, m in enumerate(turns):
            assert found[m.id]["ctx"] == context_text(owns, i)
            assert found[m.id]["window"] == window_text(owns, i)
    for row in found.values():
        if filled:
            assert vector(row) is not None, row["window"]
        if vector(row) is not None:
            np.testing.assert_allclose(vector(row), embedding(row["window"]), atol=1e-6)
    return found


def recall_ids(engine: Engine, query: str, user: str = USER, k: int = 50) -> list[str]:
    return [h.memory.id for h in engine.recall(query, user, k=k, reinforce=False)]


def contexts(engine: Engine) -> list[str]:
    return [r[0] for r in sql(engine, "SELECT context FROM recall_index")] + [
        r[0] for r in sql(engine, "SELECT window FROM recall_index")
    ]


def locomo(tmp_path: Path) -> Path:
    data = [
        {
            "sample_id": "conv-a",
            "conversation": {
                "session_1_date_time": "1:56 pm on 8 May, 2023",
                "session_1": [{"speaker": s, "dia_id": f"D1:{i + 1}", "text": t} for i, (s, t) in enumerate(LINES)],
                "session_2_date_time": "10:00 am on 25 May, 2023",
                "session_2": [
                    {"speaker": "Bob", "dia_id": "D2:1", "text": "I started pottery classes."},
                    {
                        "speaker": "Ana",
                        "dia_id": "D2:2",
                        "text": "Pottery sounds relaxing.",
                        "blip_caption": "a clay bowl",
                    },
                ],
                "session_3_date_time": "9:00 am on 1 June, 2023",
                "session_3": [{"speaker": "Ana", "dia_id": "D3:1", "text": "A session of one turn."}],
            },
        },
        {
            "sample_id": "conv-b",
            "conversation": {
                "session_1_date_time": "9:00 am on 1 June, 2023",
                "session_1": [
                    {"speaker": "Cy", "dia_id": "D1:1", "text": "I run marathons."},
                    {"speaker": "Di", "dia_id": "D1:2", "text": "I prefer swimming."},
                ],
            },
        },
    ]
    path = tmp_path / "locomo.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def fail_once(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    """Make the next call of a RecallIndex method raise, as a crash between Chroma and the index would."""
    original = getattr(RecallIndex, name)
    calls: list[int] = []

    def call(index: RecallIndex, *args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        if len(calls) == 1:
            raise RuntimeError("killed between Chroma and the index")
        return original(index, *args, **kwargs)

    monkeypatch.setattr(RecallIndex, name, call)


# 6. every write path keeps the index equal to the store -----------------------------------


def test_import_indexes_every_turn_with_its_context_and_precomputed_windows(
    fake_embedder: FakeEmbedder, tmp_path: Path
) -> None:
    notices: list[str] = []
    engine = make_memcli(notices)
    engine.import_file(locomo(tmp_path))

    for user, count in (("conv-a", 8), ("conv-b", 2)):
        found = assert_index_matches_store(engine, user, filled=True)
        assert len(found) == count
    [rex] = [r for r in rows(engine, "conv-a").values() if r["own"] == "Ana: I adopted a puppy named Rex."]
    assert rex["ctx"] == "Bob: What breed is your puppy?"
    [bowl] = [r for r in rows(engine, "conv-a").values() if "clay bowl" in r["own"]]
    assert bowl["own"] == "Ana: Pottery sounds relaxing. [image: a clay bowl]"

    calls = fake_embedder.calls
    assert recall_ids(engine, "puppy Rex", "conv-a")
    assert fake_embedder.calls == calls + 1, "only the query is embedded: no window was left to fill"
    assert notices == []


def test_chat_turns_leave_the_previous_window_to_fill_at_the_next_recall(fake_embedder: FakeEmbedder) -> None:
    notices: list[str] = []
    engine = make_memcli(notices)
    turns = session(
        "chat-2023-06-01-abcd",
        [(USER, "I adopted a puppy."), ("assistant", "What is its name?"), (USER, "Rex, a beagle.")],
    )

    engine.write([turns[0]])
    [first] = assert_index_matches_store(engine, filled=True).values()
    np.testing.assert_allclose(vector(first), embedding(turns[0].index_text()), atol=1e-6)

    engine.write([turns[1]])
    found = assert_index_matches_store(engine)
    assert vector(found[turns[0].id]) is None and vector(found[turns[1].id]) is None
    recall_ids(engine, "puppy")
    assert_index_matches_store(engine, filled=True)

    engine.write([turns[2]])
    found = assert_index_matches_store(engine)
    assert vector(found[turns[0].id]) is not None, "its window (itself and the next turn) did not change"
    assert vector(found[turns[1].id]) is None and vector(found[turns[2].id]) is None
    assert "Rex, a beagle." in found[turns[1].id]["ctx"]
    assert recall_ids(engine, "What is the puppy's name?")
    assert_index_matches_store(engine, filled=True)
    assert notices == []


def test_remember_indexes_a_note_as_its_own_window(fake_embedder: FakeEmbedder) -> None:
    notices: list[str] = []
    engine = make_memcli(notices)
    engine.add_memories(session("s1"))
    remembered, _ = engine.remember("My sister's birthday is 4 March", importance=0.9, user=USER)

    row = assert_index_matches_store(engine, filled=True)[remembered.id]
    assert (row["kind"], row["ctx"], row["window"]) == ("note", "", remembered.text)
    np.testing.assert_allclose(vector(row), embedding(remembered.text), atol=1e-6)
    assert recall_ids(engine, "sister birthday")[0] == remembered.id
    assert notices == []


def test_delete_leaves_nothing_of_the_turn_in_its_neighbours(fake_embedder: FakeEmbedder) -> None:
    notices: list[str] = []
    engine = make_memcli(notices)
    turns = session("s1")
    engine.add_memories(turns)
    assert any("zeppelin" in c for c in contexts(engine))

    engine.delete(turns[2].id)

    assert_index_matches_store(engine)
    assert not any("zeppelin" in c for c in contexts(engine))
    assert recall_ids(engine, "zeppelin over the lake")
    assert_index_matches_store(engine, filled=True)
    assert notices == []


def test_forget_restore_and_purge_keep_the_index_flags(fake_embedder: FakeEmbedder) -> None:
    notices: list[str] = []
    clock = Clock(datetime(2023, 5, 31, 9).timestamp())
    engine = make_memcli(notices, clock)
    turns = session("s1")
    engine.add_memories(turns)
    fresh, _ = engine.remember("I bought a red bicycle today", user=USER)

    clock.now = datetime(2023, 6, 1, 9).timestamp()  # the turns are weeks old, the note a day
    assert engine.forget(USER).archived == len(turns)
    found = assert_index_matches_store(engine)
    assert {i for i, r in found.items() if r["archived"]} == {t.id for t in turns}
    assert recall_ids(engine, "puppy Rex zeppelin lighthouse") == [fresh.id]

    engine.restore(turns[2].id)
    found = assert_index_matches_store(engine)
    assert {i for i, r in found.items() if r["archived"]} == {t.id for t in turns} - {turns[2].id}
    assert recall_ids(engine, "zeppelin")[0] == turns[2].id

    clock.now = datetime(2024, 1, 1, 9).timestamp()
    # the restored turn (S = 1, as the test made it) and the note (strength_note = 60 days, 215 days old) have faded
    assert engine.forget(USER, purge=True).purged == 2
    assert_index_matches_store(engine)
    assert {m.id for m in stored(engine)} == {t.id for t in turns} - {turns[2].id}
    assert not any("zeppelin" in c for c in contexts(engine))
    assert recall_ids(engine, "zeppelin") == []
    assert notices == []


def test_consolidation_indexes_its_summaries_and_ends_the_replaced_fact(fake_model: Any) -> None:
    notices: list[str] = []
    engine = make_memcli(notices)
    script = Script()
    script.decision = {"event": "UPDATE", "target": 0, "text": UPDATED_FACT}
    fake_model.responder = script
    old = add_fact(engine, OLD_FACT)
    engine.add_memories(day_turns(MOVE_TURNS, "2023-05-09", "s2"))

    engine.consolidate(USER)

    found = assert_index_matches_store(engine)
    kinds = {r["kind"] for r in found.values()}
    assert {
        "event_daily",
        "portrait_daily",
        "event_global",
        "portrait_global",
        "running_summary",
        "fact",
        "turn",
    } <= kinds
    assert (found[old.id]["ended"], found[old.id]["archived"]) == (1, 0)
    # the replaced fact is the one ended memory besides relation memories a newer relation closed (graph memory)
    assert sum(r["ended"] for r in found.values() if r["kind"] != "relation") == 1
    assert old.id not in recall_ids(engine, OLD_FACT)
    assert old.id not in recall_ids(engine, OLD_FACT + " Lyon", k=100)
    assert_index_matches_store(engine, filled=True)
    assert notices == []


# 7. rebuilds ---------------------------------------------------------------------------------


def populated(notices: list[str], bob: bool = True) -> Engine:
    """Eight memories of ana (two sessions and a note) and, with ``bob``, one of bob."""
    engine = make_memcli(notices)
    engine.add_memories(
        session("s1")
        + session("s2", [("Bob", "I started pottery classes."), ("Ana", "Pottery sounds relaxing.")], "2023-05-25")
    )
    engine.add_memories([note("My sister's birthday is 4 March")] + ([note("bob's memory", user="bob")] if bob else []))
    return engine


def rebuilt(notices: list[str], count: int, user: str = USER) -> None:
    assert len(notices) == 1, notices
    assert f" {user} " in notices[0] and f"({count} memories)" in notices[0], notices[0]
    notices.clear()


def relevance(engine: Engine, query: str, user: str = USER) -> list[tuple[str, float]]:
    return [(h.memory.id, h.relevance) for h in engine.recall(query, user, k=20, reinforce=False)]


def same(ranking: list[tuple[str, float]]) -> list[tuple[str, Any]]:
    """``ranking`` up to float noise (BM25 sums in another order)."""
    return [(i, pytest.approx(r, abs=1e-6)) for i, r in ranking]


QUERY = "What is the name of Ana's puppy?"


def test_deleted_sidecar_is_rebuilt_at_the_next_recall_with_the_same_results(fake_embedder: FakeEmbedder) -> None:
    notices: list[str] = []
    engine = populated(notices, bob=False)
    before = relevance(engine, QUERY)
    assert notices == []

    engine.paths.database.unlink()

    assert relevance(engine, QUERY) == same(before)
    rebuilt(notices, 8)
    assert_index_matches_store(engine, filled=True)
    assert recall_ids(engine, "pottery") and notices == []


def test_deleted_sidecar_is_rebuilt_for_each_user_at_their_next_recall(fake_embedder: FakeEmbedder) -> None:
    notices: list[str] = []
    engine = populated(notices)
    engine.paths.database.unlink()

    recall_ids(engine, QUERY)
    rebuilt(notices, 8)
    assert recall_ids(engine, "bob's memory", "bob")
    rebuilt(notices, 1, "bob")
    assert_index_matches_store(engine, "bob", filled=True)


def test_another_users_memories_do_not_change_a_users_ranking(fake_embedder: FakeEmbedder) -> None:
    notices: list[str] = []
    engine = populated(notices, bob=False)
    before = relevance(engine, QUERY)
    engine.add_memories([note("bob's memory", user="bob")])
    assert relevance(engine, QUERY) == same(before)


def test_dirty_mark_left_by_an_interrupted_write_rebuilds(fake_embedder: FakeEmbedder) -> None:
    notices: list[str] = []
    engine = populated(notices)
    with engine.store.transaction():
        engine.store.sidecar.index.mark_dirty([USER])
    recall_ids(engine, "puppy")
    rebuilt(notices, 8)
    recall_ids(engine, "puppy")
    recall_ids(engine, "bob", "bob")
    assert notices == []


def test_write_interrupted_after_chroma_is_rebuilt_at_the_next_read(
    fake_embedder: FakeEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    notices: list[str] = []
    engine = populated(notices)
    fail_once(monkeypatch, "put")
    with pytest.raises(RuntimeError):
        engine.remember("zeppelin ride over the lake at dawn", user=USER)
    assert sql(engine, "SELECT count(*) FROM recall_index WHERE text LIKE 'zeppelin%'") == [(0,)]

    [zeppelin] = [m for m in stored(engine) if m.text.startswith("zeppelin")]
    rebuilt(notices, 9)
    assert recall_ids(engine, "zeppelin at dawn")[0] == zeppelin.id
    assert notices == []
    assert_index_matches_store(engine, filled=True)


def test_rows_without_a_copy_of_their_memory_are_rebuilt(fake_embedder: FakeEmbedder) -> None:
    """Rows an older memcli wrote carry no copy of their memory: the user is rebuilt
    before anything is read from the copy."""
    notices: list[str] = []
    engine = populated(notices)
    expected = sorted((m.id, m.text) for m in stored(engine))
    sql(engine, "UPDATE recall_index SET record = '{}' WHERE kind = 'note' AND user = ?", USER)

    assert sorted((m.id, m.text) for m in stored(engine)) == expected
    rebuilt(notices, 8)
    assert sql(engine, "SELECT count(*) FROM recall_index WHERE record = '{}' AND user = ?", USER) == [(0,)]


def test_a_write_after_an_interrupted_one_does_not_hide_it(
    fake_embedder: FakeEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One dirty mark a user: the next write rebuilds the user first, so that clearing its
    own mark does not leave the interrupted write's change out of the index's copy."""
    notices: list[str] = []
    engine = populated(notices)
    [birthday] = [m for m in stored(engine) if m.kind == "note"]
    fail_once(monkeypatch, "set_state")
    birthday.pinned = True
    with pytest.raises(RuntimeError):
        engine.store.update([birthday])

    engine.remember("a later note", user=USER)
    rebuilt(notices, 8)
    assert engine.get(birthday.id).pinned
    assert [m for m in stored(engine) if m.id == birthday.id][0].pinned


def test_archive_interrupted_before_the_index_is_rebuilt_and_not_recalled(
    fake_embedder: FakeEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    notices: list[str] = []
    engine = populated(notices)
    [birthday] = [m for m in stored(engine) if m.kind == "note"]
    fail_once(monkeypatch, "set_state")
    birthday.archived, birthday.archived_at = True, NOW
    with pytest.raises(RuntimeError):
        engine.store.update([birthday])

    assert birthday.id not in recall_ids(engine, "sister birthday March")
    rebuilt(notices, 8)
    assert assert_index_matches_store(engine)[birthday.id]["archived"] == 1


def test_delete_interrupted_before_the_index_is_rebuilt_without_the_turn(
    fake_embedder: FakeEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    notices: list[str] = []
    engine = populated(notices)
    turns = session("s1")
    fail_once(monkeypatch, "remove")
    with pytest.raises(RuntimeError):
        engine.delete(turns[2].id)

    recall_ids(engine, "zeppelin")
    rebuilt(notices, 7)
    assert_index_matches_store(engine, filled=True)
    assert not any("zeppelin" in c for c in contexts(engine))


def test_rows_deleted_behind_the_stores_back_are_rebuilt(fake_embedder: FakeEmbedder) -> None:
    notices: list[str] = []
    engine = populated(notices)
    turns = session("s1")
    sql(engine, "DELETE FROM recall_index WHERE memory_id = ?", turns[0].id)

    assert recall_ids(engine, "puppy named Rex")[0] == turns[0].id
    rebuilt(notices, 8)
    assert_index_matches_store(engine, filled=True)


def test_index_of_another_version_is_rebuilt(fake_embedder: FakeEmbedder) -> None:
    notices: list[str] = []
    engine = populated(notices)
    sql(engine, "UPDATE index_meta SET value = ? WHERE key LIKE 'version:%'", str(INDEX_VERSION + 1))

    recall_ids(engine, "puppy")
    rebuilt(notices, 8)
    recall_ids(engine, "puppy")
    assert notices == []
    assert sql(engine, "SELECT value FROM index_meta WHERE key = 'version:ana'") == [(str(INDEX_VERSION),)]


def test_a_rebuild_keeps_the_window_vectors_it_had(fake_embedder: FakeEmbedder) -> None:
    """An upgrade of the index rebuilds every user's rows; the windows already embedded
    keep their vectors, so the rebuild embeds nothing but the query."""
    notices: list[str] = []
    engine = populated(notices)
    recall_ids(engine, "puppy")
    sql(engine, "UPDATE index_meta SET value = ? WHERE key LIKE 'version:%'", str(INDEX_VERSION - 1))
    texts: list[str] = []
    embed = fake_embedder.embed
    fake_embedder.embed = lambda batch, *a, **k: texts.extend(batch) or embed(batch, *a, **k)  # type: ignore[method-assign]

    recall_ids(engine, "pottery classes")
    rebuilt(notices, 8)
    assert texts == ["pottery classes"]
    assert_index_matches_store(engine, filled=True)


def test_index_of_another_version_is_rebuilt_for_every_user(fake_embedder: FakeEmbedder) -> None:
    notices: list[str] = []
    engine = populated(notices)
    sql(engine, "UPDATE index_meta SET value = ? WHERE key LIKE 'version:%'", str(INDEX_VERSION - 1))

    recall_ids(engine, "puppy")
    rebuilt(notices, 8)
    recall_ids(engine, "bob's memory", "bob")
    rebuilt(notices, 1, "bob")


def test_index_of_version_2_loses_its_fts5_table_and_is_rebuilt(fake_embedder: FakeEmbedder) -> None:
    """Version 2 kept the lexical fields in an FTS5 table (whose data blocks kept the
    words of deleted memories); opening it drops that table, adds the columns, and the
    next recall rebuilds the rows and finds memories by their words again."""
    notices: list[str] = []
    engine = populated(notices)
    db = sqlite3.connect(engine.paths.database)
    with db:
        db.execute("ALTER TABLE recall_index DROP COLUMN context")
        db.execute("ALTER TABLE recall_index DROP COLUMN spoken_day")
        db.execute("CREATE VIRTUAL TABLE lexical USING fts5 (own, ctx, day, tokenize = 'porter unicode61')")
        db.execute("CREATE VIRTUAL TABLE lexical_terms USING fts5vocab (lexical, 'row')")
        db.execute("INSERT INTO lexical (own, ctx, day) VALUES ('a secret word: zeppelin', '', '')")
        db.execute("UPDATE index_meta SET value = '2' WHERE key LIKE 'version:%'")
    db.close()

    hits = engine.recall("puppy named Rex", USER, reinforce=False)
    rebuilt(notices, 8)
    tables = {name for (name,) in sql(engine, "SELECT name FROM sqlite_master")}
    assert not any(name.startswith("lexical") for name in tables), tables
    assert {"context", "spoken_day"} <= {row[1] for row in sql(engine, "PRAGMA table_info(recall_index)")}
    assert hits[0].memory.text == "I adopted a puppy named Rex." and hits[0].signals["lexical"] > 0
    assert_index_matches_store(engine, filled=True)


def test_no_rebuild_when_nothing_is_stale(fake_embedder: FakeEmbedder) -> None:
    notices: list[str] = []
    engine = populated(notices)
    for query in ("puppy", "pottery classes", "birthday"):
        recall_ids(engine, query)
    engine.remember("a new note for ana", user=USER)
    recall_ids(engine, "bob's memory", "bob")
    recall_ids(engine, "new note")
    assert notices == []


def test_no_rebuild_notice_for_a_user_without_memories(fake_embedder: FakeEmbedder) -> None:
    notices: list[str] = []
    engine = make_memcli(notices)
    with engine.store.transaction():
        index = engine.store.recall_index(USER, fake_embedder.embed)
    assert len(index) == 0
    assert notices == []


def test_recall_prints_the_rebuild_notice_on_stderr_and_nothing_with_quiet(
    runner: CliRunner, fake_embedder: FakeEmbedder
) -> None:
    ids = {
        ok(runner.invoke(app, ["remember", text])).stdout.strip()
        for text in ("I adopted a puppy named Rex", "Rex loves the park")
    }
    paths = resolve_paths()

    paths.database.unlink()
    result = ok(runner.invoke(app, ["recall", "puppy Rex", "--no-reinforce"]))
    assert result.stderr.splitlines() == ["memcli: rebuilding the recall index of tester from the store (2 memories)"]
    lines = result.stdout.splitlines()
    assert {line.split("\t")[0] for line in lines} == ids and len(lines) == 2

    assert ok(runner.invoke(app, ["recall", "puppy Rex", "--no-reinforce"])).stderr == ""

    paths.database.unlink()
    quiet = ok(runner.invoke(app, ["recall", "puppy Rex", "--quiet", "--json", "--no-reinforce"]))
    assert quiet.stderr == ""
    assert {hit["id"] for hit in json.loads(quiet.stdout)} == ids


# interrupted index writes are atomic; ties in time keep their order -------------------------


def test_a_rebuild_interrupted_midway_leaves_the_user_dirty_and_is_redone(
    fake_embedder: FakeEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    notices: list[str] = []
    engine = populated(notices)
    engine.paths.database.unlink()
    original = RecallIndex._refresh
    calls: list[int] = []

    def killed(index: RecallIndex, *args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        if len(calls) == 1:
            raise KeyboardInterrupt  # Ctrl-C during the rebuild
        return original(index, *args, **kwargs)

    monkeypatch.setattr(RecallIndex, "_refresh", killed)
    with pytest.raises(KeyboardInterrupt):
        recall_ids(engine, "puppy")
    notices.clear()
    # nothing half-written: no rows at all, so the next recall rebuilds again, whole
    assert sql(engine, "SELECT count(*) FROM recall_index")[0][0] == 0
    assert recall_ids(engine, "zeppelin")
    rebuilt(notices, 8)
    assert_index_matches_store(engine, filled=True)
    assert "" not in [r["window"] for r in rows(engine).values() if r["kind"] == Kind.TURN.value]


def test_a_put_that_fails_midway_writes_no_row(fake_embedder: FakeEmbedder, monkeypatch: pytest.MonkeyPatch) -> None:
    engine = make_memcli()
    engine.add_memories(session("s1"))

    def broken(index: RecallIndex, *args: Any, **kwargs: Any) -> None:
        raise RuntimeError("disk full")

    monkeypatch.setattr(RecallIndex, "_refresh", broken)
    with engine.store.transaction(), pytest.raises(RuntimeError):
        engine.store.sidecar.index.put(
            session("s2", [("Bob", "A new turn."), ("Ana", "Another.")]), [embedding("a"), embedding("b")]
        )
    assert sql(engine, "SELECT count(*) FROM recall_index")[0][0] == len(LINES)


def test_jsonl_turns_with_the_same_timestamp_keep_the_files_order(
    runner: CliRunner, fake_embedder: FakeEmbedder, tmp_path: Path
) -> None:
    path = tmp_path / "chat.jsonl"
    path.write_text(
        "\n".join(
            json.dumps({"role": s, "content": t, "timestamp": "2023-05-08T10:00:00", "session": "s1"}) for s, t in LINES
        ),
        encoding="utf-8",
    )
    ok(runner.invoke(app, ["import", str(path)]))
    engine = make_memcli()
    recall_ids(engine, "puppy", "tester")
    ordered = [
        r[0] for r in sql(engine, "SELECT text FROM recall_index WHERE user = 'tester' ORDER BY created_at, memory_id")
    ]
    assert ordered == [text for _, text in LINES]
    by_text = {r["own"]: r for r in rows(engine, "tester").values()}
    assert by_text["Ana: I adopted a puppy named Rex."]["ctx"] == "Bob: What breed is your puppy?"


def test_chat_turns_under_a_standing_clock_keep_their_order(fake_embedder: FakeEmbedder, fake_model: Any) -> None:
    from memcli.library.chat import ChatSession

    engine = make_memcli()
    chat = ChatSession(engine, USER)
    for text in ("first words", "second words", "third words"):
        chat.respond(text, lambda piece: None)
    turns = sorted(stored(engine), key=lambda m: m.created_at)
    users_turns = [m.text for m in turns if m.speaker == USER]
    assert users_turns == ["first words", "second words", "third words"]
    assert len({m.created_at for m in turns}) == len(turns)
