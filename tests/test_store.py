"""The store: its cross-process lock, the write-ahead journal of what the user said, the
schema version, and seeing other processes' writes."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cli_checks import assert_error, ok
from conftest import open_store
from typer.testing import CliRunner

from memcli.cli import app
from memcli.config import Paths, resolve_paths
from memcli.errors import ExitCode, MemcliError
from memcli.memory import Kind, Memory
from memcli.store.store import SCHEMA_VERSION, MemoryStore

pytestmark = pytest.mark.usefixtures("store_mode")  # every test with the folder, then a Chroma server

HOLD_LOCK = """
import sys, time, filelock
lock = filelock.FileLock(sys.argv[1])
lock.acquire()
print("locked", flush=True)
time.sleep(120)
"""


@contextlib.contextmanager
def lock_held_by_another_process(paths: Paths) -> Iterator[None]:
    """Another process holds the store lock for the duration of the block."""
    paths.data_dir.mkdir(parents=True, exist_ok=True)
    proc = subprocess.Popen([sys.executable, "-c", HOLD_LOCK, str(paths.lock_file)], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "locked"
        yield
    finally:
        proc.kill()
        proc.wait()
        if proc.stdout is not None:
            proc.stdout.close()


def snapshot(runner: CliRunner) -> str:
    return ok(runner.invoke(app, ["list", "-n", "0", "--json"])).stdout


def memory(memory_id: str, text: str, user: str = "default") -> Memory:
    return Memory(
        id=memory_id, user=user, kind=Kind.NOTE.value, text=text, created_at=1_700_000_000.0, day="2023-11-14"
    )


UNIT = [1.0] + [0.0] * 127  # the fake embedder's dimension


# the lock ----------------------------------------------------------------------------


def test_command_on_a_locked_store_fails_naming_the_lock(
    runner: CliRunner, fake_embedder: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    ok(runner.invoke(app, ["remember", "kept safe"]))
    before = snapshot(runner)
    paths = resolve_paths()
    monkeypatch.setenv("MEMCLI_LOCK_TIMEOUT", "1")
    with lock_held_by_another_process(paths):
        for args in (
            ["list"],
            ["recall", "safe"],
            ["delete", json.loads(before)[0]["id"]],
            ["import", __file__, "--format", "text"],
        ):
            line = assert_error(runner.invoke(app, args), ExitCode.STORE_LOCKED)
            assert str(paths.lock_file) in line, args
    assert snapshot(runner) == before


def test_remember_on_a_locked_store_keeps_the_note_journaled(
    runner: CliRunner, fake_embedder: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    paths = resolve_paths()
    monkeypatch.setenv("MEMCLI_LOCK_TIMEOUT", "1")
    with lock_held_by_another_process(paths):
        assert_error(runner.invoke(app, ["remember", "Call the plumber on Monday"]), ExitCode.STORE_LOCKED)
        journaled = list(paths.pending_dir.glob("*.json"))
        assert len(journaled) == 1
        assert json.loads(journaled[0].read_text(encoding="utf-8"))["text"] == "Call the plumber on Monday"
    # the next command that gets the store stores it, once
    stored = json.loads(snapshot(runner))
    assert [m["text"] for m in stored] == ["Call the plumber on Monday"]
    assert list(paths.pending_dir.glob("*.json")) == []
    assert len(json.loads(snapshot(runner))) == 1


def test_chat_turn_on_a_locked_store_is_not_lost(
    runner: CliRunner, fake_model: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    paths = resolve_paths()
    monkeypatch.setenv("MEMCLI_LOCK_TIMEOUT", "1")
    with lock_held_by_another_process(paths):
        result = runner.invoke(app, ["chat"], input="My bike is blue\n/exit\n")
        assert "Traceback" not in result.stdout + result.stderr
        assert "journaled" in result.stderr
    texts = [m["text"] for m in json.loads(snapshot(runner))]
    assert "My bike is blue" in texts


def test_chat_on_a_locked_store_keeps_every_message(
    runner: CliRunner, fake_model: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    paths = resolve_paths()
    monkeypatch.setenv("MEMCLI_LOCK_TIMEOUT", "1")
    with lock_held_by_another_process(paths):
        runner.invoke(app, ["chat"], input="My bike is blue\nMy car is red\n/exit\n")
    texts = [m["text"] for m in json.loads(snapshot(runner))]
    assert "My bike is blue" in texts
    assert "My car is red" in texts


def test_lock_is_released_after_a_failed_command(runner: CliRunner, fake_embedder: Any) -> None:
    paths = resolve_paths()
    runner.invoke(app, ["show", "ffffffffffffffff"])
    probe = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys, filelock; filelock.FileLock(sys.argv[1], timeout=0).acquire(); print('free')",
            str(paths.lock_file),
        ],
        capture_output=True,
        text=True,
    )
    assert probe.stdout.strip() == "free", probe.stderr


def test_transactions_nest_and_release_the_lock_once(tmp_path: Path) -> None:
    paths = resolve_paths()
    store = open_store(paths, lock_timeout=1)
    with store.transaction():
        with store.transaction():
            store.add([memory("a" * 16, "one")], [UNIT])
        assert store.count() == 1  # still inside the outer transaction
    with pytest.raises(RuntimeError):
        store._col  # noqa: B018 - outside a transaction the collection is closed
    other = open_store(paths, lock_timeout=0.2)
    with other.transaction():
        assert other.count() == 1


def test_a_closed_transaction_leaves_no_chroma_system_of_its_own_cached_and_anothers_alone() -> None:
    """A transaction's close drops what chromadb cached for it (a folder's system; a
    server's client, its admin client and the admin client the opening makes to check the
    database, each under a random identifier) and nothing else: a system cached by another
    client stays."""
    # heavy: chromadb's per-process cache of systems
    from chromadb.api.shared_system_client import SharedSystemClient

    other = object()
    SharedSystemClient._identifier_to_system["another store"] = other  # type: ignore[assignment]
    # what other tests of this process left open (a resident store, Chroma's own clients) stays too
    before = dict(SharedSystemClient._identifier_to_system)
    try:
        store = open_store(resolve_paths(), lock_timeout=1)
        with store.transaction():
            store.add([memory("a" * 16, "one")], [UNIT])
            assert len(SharedSystemClient._identifier_to_system) > len(before)
        assert SharedSystemClient._identifier_to_system == before
    finally:
        SharedSystemClient._identifier_to_system.pop("another store", None)


# schema ------------------------------------------------------------------------------


def test_schema_version_is_recorded_in_the_collection(runner: CliRunner, fake_embedder: Any) -> None:
    ok(runner.invoke(app, ["remember", "hello"]))
    store = open_store(resolve_paths())
    with store.transaction():
        assert store._col.metadata["schema_version"] == SCHEMA_VERSION


def test_store_of_a_newer_schema_is_refused(runner: CliRunner, fake_embedder: Any) -> None:
    ok(runner.invoke(app, ["remember", "written by a future memcli"]))
    store = open_store(resolve_paths())
    with store.transaction():
        store._col.modify(metadata={"schema_version": SCHEMA_VERSION + 1})
    with pytest.raises(MemcliError, match="upgrade"):
        with open_store(resolve_paths()).transaction():
            pass
    line = assert_error(runner.invoke(app, ["list"]), ExitCode.ERROR)
    assert "schema version" in line


# visibility ----------------------------------------------------------------------------


def test_a_store_sees_writes_made_after_its_last_transaction(tmp_path: Path) -> None:
    paths = resolve_paths()
    reader = open_store(paths)
    writer = open_store(paths)
    with reader.transaction():
        assert reader.count() == 0
    with writer.transaction():
        writer.add([memory("b" * 16, "written later")], [UNIT])
    with reader.transaction():
        assert reader.count() == 1
        assert reader.get("b" * 16).text == "written later"
    with writer.transaction():
        writer.delete(["b" * 16])
    with reader.transaction():
        assert reader.count() == 0


def test_reads_page_through_more_memories_than_one_page(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every read that walks the store (memories, users, ids, an index rebuild) sees all
    memories when they span several pages, the last one full or partial."""
    monkeypatch.setattr("memcli.store.chroma._GET_PAGE", 2)
    store = open_store(resolve_paths())
    ana = [memory(f"{i:016x}", f"note {i}", user="ana") for i in range(4)]
    bob = [memory(f"{i + 10:016x}", f"note {i}", user="bob") for i in range(3)]
    with store.transaction():
        store.add(ana + bob, [UNIT] * 7)
        assert sorted(m.id for m in store.memories()) == sorted(m.id for m in ana + bob)
        assert store.users() == ["ana", "bob"]
        assert sorted(store._ids("ana")) == sorted(m.id for m in ana)
        assert sorted(store._ids()) == sorted(m.id for m in ana + bob)
        memories, vectors = store._with_embeddings("bob")
        assert sorted(m.id for m in memories) == sorted(m.id for m in bob) and len(vectors) == 3


WRITE_IN_ANOTHER_PROCESS = """
import sys
from memcli.config import load_settings, resolve_paths
from memcli.memory import Memory
from memcli.store.store import MemoryStore, Server
paths = resolve_paths()
store = MemoryStore(paths, lock_timeout=10, server=Server.of(load_settings(paths)))
store.add([Memory(id="c" * 16, user="default", kind="note", text=sys.argv[1], created_at=1.7e9, day="2023-11-14")],
          [[1.0] + [0.0] * 127])
"""


def test_another_process_sees_our_writes_and_we_see_its(
    runner: CliRunner, fake_embedder: Any, memcli_home: Path
) -> None:
    note_id = ok(runner.invoke(app, ["remember", "written by the test process"])).stdout.strip()
    env = {**os.environ, "MEMCLI_HOME": str(memcli_home)}
    listed = subprocess.run(
        [sys.executable, "-m", "memcli", "list", "--json"], env=env, capture_output=True, text=True, timeout=120
    )
    assert listed.returncode == 0, listed.stderr
    assert [m["id"] for m in json.loads(listed.stdout)] == [note_id]
    # a store this process already opened sees what another process wrote since
    store = open_store(resolve_paths())
    with store.transaction():
        assert store.count() == 1
    wrote = subprocess.run(
        [sys.executable, "-c", WRITE_IN_ANOTHER_PROCESS, "written elsewhere"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert wrote.returncode == 0, wrote.stderr
    with store.transaction():
        assert store.count() == 2
        assert store.get("c" * 16).text == "written elsewhere"


# the recall index's copy of the memories -------------------------------------------------


def chroma_memories(store: MemoryStore) -> list[Memory]:
    """Every memory as Chroma itself holds it, sorted by id."""
    with store.transaction():
        page = store._col.get(include=["documents", "metadatas"])
    return sorted(
        (Memory.from_chroma(i, d, m) for i, d, m in zip(page["ids"], page["documents"], page["metadatas"])),
        key=lambda m: m.id,
    )


def by_id(memories: list[Memory]) -> list[Memory]:
    return sorted(memories, key=lambda m: m.id)


def test_reads_come_from_the_recall_index_copy_and_equal_chromas(monkeypatch: pytest.MonkeyPatch) -> None:
    """Once checked against Chroma, reads of many memories take the recall index's copy
    (no Chroma read at all), and it holds exactly what Chroma holds, every field, after
    adds, metadata updates and deletes."""
    store = open_store(resolve_paths())
    store.open_resident()
    try:
        notes = [memory(str(i) * 16, f"note {i}", user="ana" if i % 3 else "bob") for i in range(9)]
        notes[1].tags, notes[2].source_ids, notes[3].valid_to, notes[4].caption = (
            ["family", "ünïcode"],
            ["a", "b"],
            1.7e9,
            "a cat",
        )
        with store.transaction():
            store.add(notes, [UNIT] * len(notes))
            notes[5].strength, notes[5].last_recalled_at, notes[5].recall_count, notes[5].pinned = 2.5, 1.8e9, 3, True
            notes[6].archived, notes[6].archived_at = True, 1.8e9
            store.update([notes[5], notes[6]])
            store.delete([notes[7].id])
        expected = chroma_memories(store)
        assert len(expected) == 8
        with store.transaction():
            store.memories(), store.memories(user="ana"), store.memories(user="bob")  # checked against Chroma once

        def no_chroma(*args: Any, **kwargs: Any) -> Any:
            raise AssertionError("read from Chroma")

        monkeypatch.setattr(store._collection, "get", no_chroma)
        monkeypatch.setattr(store._collection, "count", no_chroma)
        with store.transaction():
            assert by_id(store.memories()) == expected
            assert by_id(store.memories(user="ana", archived=False, ended=False)) == [
                m for m in expected if m.user == "ana" and not m.archived and not m.valid_to
            ]
            assert by_id(store.memories(user="bob", archived=True)) == [notes[6]]
            assert store.users() == ["ana", "bob"]
            assert by_id(store.get_many([notes[2].id, notes[5].id, notes[7].id, "nothing"])) == by_id(
                [notes[2], notes[5]]
            )
            assert store.get(notes[1].id[:12]) == notes[1]
            with pytest.raises(MemcliError, match="no memory"):
                store.get(notes[7].id)
    finally:
        store.close()


def test_a_store_whose_index_lacks_memories_is_read_from_chroma(runner: CliRunner, fake_embedder: Any) -> None:
    """A sidecar lost (or from before the recall index) does not hide memories: the
    counts differ, so reads go to Chroma until the index is rebuilt."""
    for text in ("first note", "second note"):
        ok(runner.invoke(app, ["remember", text, "--user", "ana"]))
    paths = resolve_paths()
    paths.database.unlink()
    store = open_store(paths)
    with store.transaction():
        assert store.users() == ["ana"]
        assert sorted(m.text for m in store.memories()) == ["first note", "second note"]
        assert sorted(m.text for m in store.memories(user="ana")) == ["first note", "second note"]
        assert store.get_many([m.id for m in chroma_memories(store)]) != []


def test_the_store_opens_on_the_backend_its_settings_name(store_mode: str, tmp_path: Path) -> None:
    """One backend a store, chosen when it opens: the folder without ``store_url``, the
    server with it; each has every member of the ``Backend`` protocol, and the store names
    the backend's location in its messages."""
    import inspect

    from memcli.store.chroma import Backend, Folder, Server

    store = open_store(resolve_paths())
    assert type(store.backend) is {"folder": Folder, "server": Server}[store_mode]
    members = {name for name, _ in inspect.getmembers(Backend) if not name.startswith("_")} | {"__str__"}
    for name in members:
        assert callable(getattr(store.backend, name)), name
    with store.transaction():
        store.add([memory("a1b2c3d4e5f60718", "a note")], [[1.0] + [0.0] * 383])
        assert store.count() >= 1
    assert store.location == str(store.backend)
