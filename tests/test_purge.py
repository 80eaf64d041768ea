"""Deleted means gone: after ``delete``, ``forget --purge`` and ``purge-user`` the deleted
text is nowhere on disk under MEMCLI_HOME (every file read byte-wise, the text looked for
in UTF-8 and UTF-16-LE), the history keeps a PURGE event without text, and what
consolidation made from a purged turn leaves prompts at once and is made again, without
it, by the next ``consolidate``."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from cli_checks import assert_error, ok
from conftest import Given, isolate
from fakes.models import FakeChatModel, FakeEmbedder
from test_consolidate import make_memcli
from typer.testing import CliRunner

from memcli.cli import app
from memcli.errors import ExitCode
from memcli.library.engine import Engine
from memcli.memory import Kind
from memcli.recall.changes import DERIVED_KINDS
from memcli.store.store import MemoryStore

MARKER = "Zorblatt-Quixvane"
"""A word found nowhere else: in the note, and in a turn that consolidation quotes."""
USER = "ana"


def holders(home: Path, marker: str = MARKER) -> dict[str, int]:
    """Every file under ``home`` that holds ``marker``'s bytes (UTF-8 or UTF-16-LE), with
    how many times."""
    found: dict[str, int] = {}
    for path in home.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            for encoding in ("utf-8", "utf-16-le"):
                count = data.count(marker.encode(encoding))
                if count:
                    found[f"{path.relative_to(home)} ({encoding})"] = count
    return found


def chat_log(path: Path) -> Path:
    """A JSONL chat log of one day: the user says the marker, then two harmless turns."""
    lines = [
        {
            "role": "Ana",
            "content": f"My grandmother lived in {MARKER} and grew lemons by the sea.",
            "timestamp": "2023-05-08T10:00:00",
            "session": "s1",
        },
        {
            "role": "assistant",
            "content": "That sounds lovely, what else do you remember about her?",
            "timestamp": "2023-05-08T10:01:00",
            "session": "s1",
        },
        {
            "role": "Ana",
            "content": "I walked along the river all afternoon and ate pastries with my sister.",
            "timestamp": "2023-05-08T10:02:00",
            "session": "s1",
        },
    ]
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def consolidated_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The home of ``consolidated``, built once a module (import and consolidation take
    seconds) with the fakes, in the environment every test has; each test gets a copy."""
    base = tmp_path_factory.mktemp("consolidated")
    with pytest.MonkeyPatch.context() as monkeypatch:
        home = isolate(base, monkeypatch)
        Given.set(FakeEmbedder(), FakeChatModel())
        try:
            engine = make_memcli(consolidation="extractive", user=USER)
            engine.remember(f"The code word is {MARKER}, remember it")
            engine.remember("I like green tea in the morning")
            engine.import_file(chat_log(base / "chat.jsonl"))
            engine.consolidate(USER)
        finally:
            Given.set(None, None)
    return home


@pytest.fixture
def consolidated(consolidated_home: Path, fake_model: Any, memcli_home: Path) -> Engine:
    """A store with a note and a day of turns that say the marker, consolidated by
    extraction (the daily summary, portrait, running memory and a fact quote it): a copy of
    ``consolidated_home``, opened with this test's fakes."""
    shutil.copytree(consolidated_home, memcli_home)
    assert holders(memcli_home), "the marker should be stored before it is deleted"
    return make_memcli(consolidation="extractive", user=USER)


def with_marker(engine: Engine) -> list[Any]:
    return [m for m in engine.store.memories(user=USER) if MARKER in m.text]


def test_deleting_the_note_and_the_turn_leaves_the_marker_nowhere_on_disk(
    consolidated: Engine, memcli_home: Path
) -> None:
    quoting = with_marker(consolidated)
    kinds = {m.kind for m in quoting}
    assert {Kind.NOTE.value, Kind.TURN.value, Kind.EVENT_DAILY.value} <= kinds
    for memory in [m for m in quoting if m.kind in (Kind.NOTE.value, Kind.TURN.value)]:
        consolidated.delete(memory.id)
    assert with_marker(consolidated) == []
    assert holders(memcli_home) == {}
    assert any(m.text == "I like green tea in the morning" for m in consolidated.store.memories(user=USER))


def from_the_note(engine: Engine, memory: Any) -> bool:
    """Whether ``memory`` is the kept note that says the marker or was made, in part, from it
    (consolidation reads a day's notes too, and folds the day into the global summaries): it
    may hold the marker after the turn is gone."""
    every = {m.id: m for m in engine.store.memories(user=USER)}
    seen: set[str] = set()

    def made(memory_id: str) -> bool:
        if memory_id in seen or memory_id not in every:
            return False
        seen.add(memory_id)
        found = every[memory_id]
        return found.kind == Kind.NOTE.value or any(made(source) for source in found.source_ids)

    return made(memory.id)


def test_history_keeps_a_purge_event_without_text(consolidated: Engine) -> None:
    turn = next(m for m in with_marker(consolidated) if m.kind == Kind.TURN.value)
    daily = next(m for m in with_marker(consolidated) if m.kind == Kind.EVENT_DAILY.value and turn.id in m.source_ids)
    assert any(MARKER in e.new_text for e in consolidated.history(daily.id))
    kept = {m.id for m in consolidated.store.memories(user=USER) if from_the_note(consolidated, m)}
    consolidated.delete(turn.id)
    events = [
        e for e in consolidated.history(user=USER, limit=0) if e.memory_id not in kept and e.memory_id != daily.id
    ]
    events += consolidated.history(daily.id)
    assert {e.event for e in consolidated.history(turn.id)} == {"PURGE"}
    assert [e.event for e in consolidated.history(daily.id)][-1] == "PURGE"
    assert events and all(MARKER not in e.old_text + e.new_text for e in events)


def test_what_was_made_from_a_purged_turn_leaves_prompts_and_is_made_again_without_it(
    consolidated: Engine, fake_model: Any
) -> None:
    turn = next(m for m in with_marker(consolidated) if m.kind == Kind.TURN.value)
    before = {m.kind for m in consolidated.store.memories(user=USER)}
    assert {Kind.EVENT_DAILY.value, Kind.EVENT_GLOBAL.value, Kind.RUNNING_SUMMARY.value} <= before
    consolidated.delete(turn.id)
    fake_model.replies = ["Nothing to add."]
    consolidated.ask("Where did my grandmother live?")
    prompt = "\n".join(message.content for message in fake_model.prompts[-1])
    assert "lemons" not in prompt  # the turn said it; the note with the marker is kept here
    report = consolidated.consolidate(USER)
    assert report.days == 1 and report.summaries >= 1
    after = {m.kind: m for m in consolidated.store.memories(user=USER)}
    assert {Kind.EVENT_DAILY.value, Kind.EVENT_GLOBAL.value, Kind.RUNNING_SUMMARY.value} <= set(after)
    chat_day = [m for m in consolidated.store.memories(user=USER, kind=Kind.EVENT_DAILY.value) if m.day == "2023-05-08"]
    assert len(chat_day) == 1 and "pastries" in chat_day[0].text
    assert [m.kind for m in with_marker(consolidated) if not from_the_note(consolidated, m)] == []
    assert Kind.NOTE.value in [m.kind for m in with_marker(consolidated)]
    assert consolidated.consolidate(USER).nothing_to_do


def test_forget_purge_leaves_the_marker_nowhere_on_disk(
    runner: CliRunner, fake_embedder: Any, memcli_home: Path
) -> None:
    ok(runner.invoke(app, ["remember", f"The code word is {MARKER}", "--now", "2023-01-01T12:00:00"]))
    ok(runner.invoke(app, ["remember", "A fresh note about the weather", "--now", "2024-06-01T12:00:00"]))
    assert holders(memcli_home)
    report = json.loads(ok(runner.invoke(app, ["forget", "--purge", "--json", "--now", "2024-06-02T12:00:00"])).stdout)
    assert report["purged"] == 1
    assert holders(memcli_home) == {}
    remaining = json.loads(ok(runner.invoke(app, ["list", "--json", "-n", "0"])).stdout)
    assert [m["text"] for m in remaining] == ["A fresh note about the weather"]


def test_purge_user_removes_everything_of_that_user_and_only_theirs(
    consolidated: Engine, runner: CliRunner, memcli_home: Path
) -> None:
    ok(runner.invoke(app, ["remember", "Bob keeps bees on the roof", "--user", "bob"]))
    result = json.loads(ok(runner.invoke(app, ["purge-user", USER, "--yes", "--json"])).stdout)
    assert result["user"] == USER and result["purged"] >= 8 and result["history_events"] > 0
    assert holders(memcli_home) == {}
    assert holders(memcli_home, "lemons") == {}
    assert json.loads(ok(runner.invoke(app, ["list", "--json", "-u", USER])).stdout) == []
    assert [m["text"] for m in json.loads(ok(runner.invoke(app, ["list", "--json", "-u", "bob"])).stdout)] == [
        "Bob keeps bees on the roof"
    ]
    assert json.loads(ok(runner.invoke(app, ["history", "--json", "-u", USER, "-n", "0"])).stdout) == []


def test_purge_user_without_a_terminal_or_yes_refuses_and_changes_nothing(
    runner: CliRunner, fake_embedder: Any, memcli_home: Path
) -> None:
    ok(runner.invoke(app, ["remember", f"The code word is {MARKER}", "--user", USER]))
    assert_error(runner.invoke(app, ["purge-user", USER]), ExitCode.USAGE)
    assert len(json.loads(ok(runner.invoke(app, ["list", "--json", "-u", USER])).stdout)) == 1


def test_the_lines_typed_at_the_chat_prompt_go_with_the_memory(consolidated: Engine, memcli_home: Path) -> None:
    from prompt_toolkit.history import FileHistory

    from memcli.cli.repl import history_path

    history = FileHistory(str(history_path(consolidated.store.paths.state_dir)))
    history.store_string(f"/remember The code word is {MARKER}, remember it")
    history.store_string(f"My grandmother lived in {MARKER} and grew lemons by the sea.")
    history.store_string("what do I drink in the morning?")
    for memory in [m for m in with_marker(consolidated) if m.kind in (Kind.NOTE.value, Kind.TURN.value)]:
        consolidated.delete(memory.id)
    assert holders(memcli_home) == {}
    assert list(FileHistory(str(consolidated.store.paths.chat_history)).load_history_strings()) == [
        "what do I drink in the morning?"
    ]


def test_a_purge_deletes_in_pages(consolidated: Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    from memcli.store import chroma

    monkeypatch.setattr(chroma, "_GET_PAGE", 2)  # Chroma's SQLite takes at most 32,766 ids a statement
    consolidated.remember("Bob keeps bees on the roof", user="bob")
    assert len(consolidated.store.memories(user=USER)) > 4
    consolidated.purge_user(USER)
    assert consolidated.store.memories(user=USER) == []
    assert [m.text for m in consolidated.store.memories(user="bob")] == ["Bob keeps bees on the roof"]


def test_a_delete_looks_up_what_was_made_from_a_memory_and_reads_no_memory_by_kind(
    consolidated: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What was made from a memory is found in the sidecar's index of derived memories, by
    id: a delete reads no kind of memory whole (after the first, which fills the index of a
    store an older memcli wrote), but the running memory when a folded turn goes."""
    reads: list[str | None] = []
    memories = MemoryStore.memories

    def counted(self: MemoryStore, user: str | None = None, kind: str | None = None, **rest: Any) -> list[Any]:
        reads.append(kind)
        return memories(self, user, kind, **rest)

    tea = next(m for m in consolidated.store.memories(user=USER) if m.text == "I like green tea in the morning")
    monkeypatch.setattr(MemoryStore, "memories", counted)
    consolidated.delete(tea.id)
    assert None not in reads and set(reads) <= DERIVED_KINDS
    turn = next(m for m in with_marker(consolidated) if m.kind == Kind.TURN.value)
    reads.clear()
    consolidated.delete(turn.id)
    assert reads == [Kind.RUNNING_SUMMARY.value]
    monkeypatch.undo()
    assert with_marker(consolidated) and all(from_the_note(consolidated, m) for m in with_marker(consolidated))


def test_a_store_without_the_index_of_derived_memories_is_filled_at_its_first_delete(
    consolidated: Engine, memcli_home: Path
) -> None:
    """A store an older memcli wrote has no index of derived memories: the first delete
    reads the memories made from others once and records them, and finds what quotes the
    deleted memory all the same."""
    with consolidated.store.transaction():
        db = consolidated.store.sidecar._db
        db.execute("DELETE FROM derived")
        db.execute("DELETE FROM index_meta WHERE key = 'derived_index'")
    quoting = [m for m in with_marker(consolidated) if m.kind in (Kind.NOTE.value, Kind.TURN.value)]
    for memory in quoting:
        consolidated.delete(memory.id)
    assert holders(memcli_home) == {}
    with consolidated.store.transaction():
        sidecar = consolidated.store.sidecar
        assert sidecar.derived_filled()
        recorded = sidecar._db.execute("SELECT source_id, memory_id FROM derived").fetchall()
    expected = {(s, m.id) for m in consolidated.store.memories(user=USER) for s in m.source_ids}
    assert set(recorded) == expected


def test_the_index_of_derived_memories_follows_their_sources(consolidated: Engine) -> None:
    """Every memory made from others is in the index with exactly its sources, after a
    consolidation that made it again from other turns."""

    def recorded() -> set[tuple[str, str]]:
        with consolidated.store.transaction():
            return set(consolidated.store.sidecar._db.execute("SELECT source_id, memory_id FROM derived").fetchall())

    def cited() -> set[tuple[str, str]]:
        return {(s, m.id) for m in consolidated.store.memories(user=USER) for s in m.source_ids}

    assert cited() and recorded() == cited()
    turn = next(m for m in with_marker(consolidated) if m.kind == Kind.TURN.value)
    consolidated.delete(turn.id)
    consolidated.consolidate(USER)
    assert recorded() == cited()
    assert all(turn.id not in pair for pair in recorded())


def chroma_log_texts(engine: Engine) -> int:
    """How many rows of Chroma's log (``embeddings_queue``) still hold metadata (a text)."""
    import sqlite3

    db = sqlite3.connect(str(engine.store.paths.store_dir / "chroma.sqlite3"))
    try:
        return int(db.execute("SELECT COUNT(*) FROM embeddings_queue WHERE metadata IS NOT NULL").fetchone()[0])
    finally:
        db.close()


def test_a_delete_takes_the_text_out_of_chromas_log_and_chroma_opens_whole_after_it(
    consolidated: Engine, memcli_home: Path
) -> None:
    """Compaction blanks the metadata of the log rows Chroma has applied (the vector segment
    replays only operations and vectors): a client opened afterwards replays the log and
    holds every memory not deleted, with its text, and finds them by vector."""
    assert chroma_log_texts(consolidated) > 0, "the log holds the texts before"
    tea = next(m for m in consolidated.store.memories(user=USER) if m.text == "I like green tea in the morning")
    consolidated.delete(tea.id)
    assert chroma_log_texts(consolidated) == 0
    kept = {m.id: m.text for m in consolidated.store.memories(user=USER)}
    reopened = make_memcli(consolidation="extractive", user=USER)
    with reopened.store.transaction():
        col = reopened.store._col
        found = col.get(ids=list(kept), include=["documents", "embeddings"])
        assert dict(zip(found["ids"], found["documents"])) == kept
        assert col.count() == len(kept)
        nearest = col.query(query_embeddings=[found["embeddings"][0]], n_results=1)["ids"][0]
        assert nearest == [found["ids"][0]]


def test_a_copy_of_chromas_database_a_kill_left_is_dropped_at_the_next_compaction(
    consolidated: Engine, memcli_home: Path
) -> None:
    """Compaction writes Chroma's database again beside it and renames it over; a kill
    before the rename leaves the copy, which may hold what is deleted next: the next
    compaction drops it first."""
    left = consolidated.store.paths.store_dir / "chroma.sqlite3.compacting"
    left.write_bytes(f"a part-written copy: {MARKER}".encode())
    for memory in [m for m in with_marker(consolidated) if m.kind in (Kind.NOTE.value, Kind.TURN.value)]:
        consolidated.delete(memory.id)
    assert not left.exists()
    assert holders(memcli_home) == {}


def test_a_delete_scrubs_chromas_database_in_place_and_leaves_the_marker_nowhere(
    consolidated: Engine, memcli_home: Path
) -> None:
    """Compaction zeroes the free space of Chroma's database where it lies (the file is not
    written again and renamed, nor the client reopened), and the marker is gone all the same."""
    database = consolidated.store.paths.store_dir / "chroma.sqlite3"
    before = database.stat().st_ino
    client = consolidated.store._client
    for memory in [m for m in with_marker(consolidated) if m.kind in (Kind.NOTE.value, Kind.TURN.value)]:
        consolidated.delete(memory.id)
    assert holders(memcli_home) == {}
    assert database.stat().st_ino == before
    assert consolidated.store._client is client


def test_where_the_free_space_cannot_be_scrubbed_chromas_database_is_written_again(
    consolidated: Engine, memcli_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memcli.store import sqlite_pages, store_writes

    def refuse(database: Path) -> int:
        raise sqlite_pages.NotScrubbed("no dbstat here")

    monkeypatch.setattr(store_writes, "scrub_free_space", refuse)
    database = consolidated.store.paths.store_dir / "chroma.sqlite3"
    written: list[Path] = []
    vacuum = store_writes.StoreWrites._vacuum_chroma

    def written_again(self: Any, path: Path, copy: Path) -> None:
        written.append(path)
        vacuum(self, path, copy)

    # Counted, not read from the file's inode: two rewrites in a row may be given the
    # first file's freed inode back.
    monkeypatch.setattr(store_writes.StoreWrites, "_vacuum_chroma", written_again)
    for memory in [m for m in with_marker(consolidated) if m.kind in (Kind.NOTE.value, Kind.TURN.value)]:
        consolidated.delete(memory.id)
    assert holders(memcli_home) == {}
    assert written and set(written) == {database}
    assert any(m.text == "I like green tea in the morning" for m in consolidated.store.memories(user=USER))


def test_a_delete_while_another_process_reads_the_sidecar_says_its_text_may_stay_and_the_next_delete_erases_it(
    fake_embedder: FakeEmbedder, memcli_home: Path
) -> None:
    """The store held open (as the service holds it: the sidecar's write-ahead log stays
    beside it); another process reads the sidecar all along the delete, so its log cannot
    be emptied: the delete says the text may stay (it is in the -wal), and the next delete,
    with no one reading, leaves it nowhere."""
    from test_index import make_memcli as make_noticing

    notices: list[str] = []
    engine = make_noticing(notices)
    engine.store.open_resident()
    try:
        secret, _ = engine.remember("My locker code is zebra-quartz")
        other, _ = engine.remember("I like green tea in the morning")
        reader = sqlite3.connect(engine.store.paths.database)
        try:
            reader.execute("BEGIN")
            reader.execute("SELECT count(*) FROM recall_index").fetchone()  # a read transaction, held
            engine.store.sidecar._db.execute("PRAGMA busy_timeout = 50")  # the reader outlasts it
            engine.delete(secret.id)
        finally:
            reader.close()
        assert any("could not be compacted" in n and "-wal" in n for n in notices), notices
        assert "data/memcli.sqlite3-wal (utf-8)" in holders(memcli_home, "zebra-quartz")
        engine.delete(other.id)
        assert holders(memcli_home, "zebra-quartz") == {}
    finally:
        engine.store.close()


def test_the_first_compaction_of_a_sidecar_in_wal_mode_leaves_no_deleted_text_in_its_file(
    fake_embedder: FakeEmbedder, memcli_home: Path
) -> None:
    """A sidecar an older memcli wrote (a row deleted without ``secure_delete``: its text in
    a free page) is written again by the first compaction, and with the store still open
    (its log kept) the file itself holds the text no more: the rewrite is copied over the
    file, not left in the log."""
    from test_index import make_memcli as make_noticing

    engine = make_noticing()
    kept, _ = engine.remember("I like green tea in the morning")
    engine.store.close()
    old = sqlite3.connect(engine.store.paths.database)
    old.execute("PRAGMA secure_delete = OFF")
    old.execute("CREATE TABLE older (t TEXT)")
    old.execute("INSERT INTO older VALUES (?)", (f"an older memcli's deleted row: {MARKER} " * 40,))
    old.commit()
    old.execute("DROP TABLE older")
    old.commit()
    old.close()
    assert holders(memcli_home)
    engine.store.open_resident()
    try:
        engine.delete(kept.id)
        assert holders(memcli_home) == {}
    finally:
        engine.store.close()
