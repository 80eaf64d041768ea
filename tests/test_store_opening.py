"""Opening and closing the store (``memcli.store.store_open``): a close interrupted while it
settles what Chroma wrote still drops Chroma's client and gives the store up; an opening
without Chroma walks Chroma's folder once; waiting reinforcements are counted as memories
written; Chroma's settings are built once a folder and process."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from memcli import paths as paths_module
from memcli.config import resolve_paths
from memcli.memory import Kind, Memory
from memcli.store import chroma
from memcli.store.chroma import Folder
from memcli.store.store import MemoryStore

VECTOR = [1.0] + [0.0] * 127


def note(memory_id: str, text: str) -> Memory:
    return Memory(
        id=memory_id, user="tester", kind=Kind.NOTE.value, text=text, created_at=1_700_000_000.0, day="2023-11-14"
    )


def texts(paths: Any) -> list[str]:
    """The memories' texts as another store (lock taken within a second) reads them."""
    store = MemoryStore(paths, lock_timeout=1.0)
    with store.transaction():
        return sorted(m.text for m in store.memories(user="tester"))


def test_a_ctrl_c_in_the_closes_settle_drops_chromas_client_and_frees_the_store(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A Ctrl-C while the close zeroes the HNSW files: the write stands, Chroma's client is
    dropped from the process's cache and the lock is given up. Before, the client stayed
    cached (and, before the close's ``finally``, the lock stayed held)."""
    # heavy: the cache of clients the close must clear
    from chromadb.api.shared_system_client import SharedSystemClient

    interrupt = [False]
    real = chroma.scrub_changed

    def scrub_changed(store_dir: Path) -> None:
        if interrupt[0]:
            raise KeyboardInterrupt
        real(store_dir)

    monkeypatch.setattr(chroma, "scrub_changed", scrub_changed)
    paths = resolve_paths()
    store = MemoryStore(paths, lock_timeout=1.0)
    with pytest.raises(KeyboardInterrupt), store.transaction():
        store.upsert([note("aaaaaaaaaaaaaaaa", "I live in York")], [VECTOR])
        interrupt[0] = True
    assert store._client is None and store._lock is None
    assert str(paths.store_dir) not in SharedSystemClient._identifier_to_system
    interrupt[0] = False
    assert texts(paths) == ["I live in York"]


def test_an_opening_without_chroma_walks_chromas_folder_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """The opening makes every file private; the close only zeroes (Chroma wrote nothing).
    Before, the close walked Chroma's folder again."""
    paths = resolve_paths()
    MemoryStore(paths).upsert([note("aaaaaaaaaaaaaaaa", "I live in York")], [VECTOR])
    database = paths.store_dir / "chroma.sqlite3"
    seen: list[Path] = []
    real = paths_module.private

    def private(path: Path) -> bool:
        seen.append(path)
        return real(path)

    monkeypatch.setattr(paths_module, "private", private)
    store = MemoryStore(paths)
    with store.transaction():
        assert store._deferred
        assert [m.text for m in store.memories(user="tester")] == ["I live in York"]
    assert seen.count(database) == 1


def test_flush_behind_counts_the_memories_written_not_the_ids_waiting() -> None:
    """A store opened without Chroma, with a reinforcement waiting and the id of a memory
    deleted since (what a rebuild of the user's copy leaves): one memory is written.
    Before, the opening counted both ids."""
    paths = resolve_paths()
    MemoryStore(paths).upsert(
        [note("aaaaaaaaaaaaaaaa", "I live in York"), note("bbbbbbbbbbbbbbbb", "I moved to Leeds")], [VECTOR, VECTOR]
    )
    store = MemoryStore(paths)
    with store.transaction():
        (york,) = [m for m in store.memories(user="tester") if m.id.startswith("a")]
        store.reinforce([york])
        store.sidecar.index._db.execute("INSERT INTO metadata_behind VALUES ('cccccccccccccccc')")
        assert store._deferred and store.sidecar.index.behind_count() == 2
        assert store.flush_behind() == 1
        assert store.sidecar.index.behind_count() == 0


def test_chromas_settings_are_built_once_a_folder_and_each_home_keeps_its_own(tmp_path: Path) -> None:
    """Building Chroma's Settings reads the environment and validates every field, at each
    opening before; two homes in one process still open their own folders."""
    # heavy: the cache of clients the store drops at each close
    from chromadb.api.shared_system_client import SharedSystemClient

    first, second = Folder(tmp_path / "a"), Folder(tmp_path / "b")
    try:
        settings_a = first.client().get_settings()
        SharedSystemClient.clear_system_cache()
        assert first.client().get_settings() is settings_a
        settings_b = second.client().get_settings()
        assert settings_b is not settings_a
        assert (settings_a.persist_directory, settings_b.persist_directory) == (str(first), str(second))
        assert (settings_a.anonymized_telemetry, settings_a.allow_reset) == (False, False)
    finally:
        SharedSystemClient.clear_system_cache()


def test_a_store_closing_leaves_the_chroma_of_another_store_open_in_the_process(tmp_path: Path) -> None:
    """Two stores in one process (the service runs an evaluation's temporary store beside
    the home's own): one closing drops its own Chroma system from chromadb's per-process
    cache, not the other's. Before, the close emptied the whole cache, and the other
    store's Chroma, opening in another thread at that moment, failed with a KeyError of
    its folder (seen in the service running two evaluations at once)."""
    # heavy: the cache of Chroma systems the close drops
    from chromadb.api.shared_system_client import SharedSystemClient

    home, other = resolve_paths(), resolve_paths({"MEMCLI_HOME": str(tmp_path / "other")})
    first, second = MemoryStore(home, lock_timeout=1.0), MemoryStore(other, lock_timeout=1.0)
    with first.transaction():
        first.upsert([note("aaaaaaaaaaaaaaaa", "I live in York")], [VECTOR])
        with second.transaction():
            second.upsert([note("bbbbbbbbbbbbbbbb", "I work as a nurse")], [VECTOR])
        assert str(home.store_dir) in SharedSystemClient._identifier_to_system
        assert str(other.store_dir) not in SharedSystemClient._identifier_to_system
        first.upsert([note("cccccccccccccccc", "I moved to Leeds")], [VECTOR])
    assert str(home.store_dir) not in SharedSystemClient._identifier_to_system
    assert texts(home) == ["I live in York", "I moved to Leeds"]
    assert texts(other) == ["I work as a nurse"]
