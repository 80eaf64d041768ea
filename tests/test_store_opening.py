"""Opening and closing the store (``memcli.store.store_open``): what Chroma wrote is settled
(made private, the HNSW files' unused places zeroed) through one step that logs its
failure, so a full device or a file that refuses a chmod loses nothing and leaves the store
usable (closed, recorded, its lock given up); an opening without Chroma walks Chroma's
folder once; waiting reinforcements are counted as memories written; Chroma's settings
are built once a folder and process."""

from __future__ import annotations

import errno
import json
from pathlib import Path
from typing import Any

import pytest

from memcli import paths as paths_module
from memcli.config import resolve_paths
from memcli.memory import Kind, Memory
from memcli.store import chroma
from memcli.store.chroma import Folder
from memcli.store.store import MemoryStore
from memcli.store.store_open import CLOSED_FILE

VECTOR = [1.0] + [0.0] * 127


def note(memory_id: str, text: str) -> Memory:
    return Memory(
        id=memory_id, user="tester", kind=Kind.NOTE.value, text=text, created_at=1_700_000_000.0, day="2023-11-14"
    )


def refusing(failing: list[bool]) -> Any:
    """``private_tree`` for Chroma's folder that refuses a chmod (EPERM, a file of another
    owner or an immutable one) while ``failing[0]`` is set."""
    real = chroma.private_tree

    def private_tree(root: Path) -> list[Path]:
        if failing[0]:
            raise PermissionError(errno.EPERM, "Operation not permitted", str(root / "chroma.sqlite3"))
        return real(root)

    return private_tree


def texts(paths: Any) -> list[str]:
    """The memories' texts as another store (lock taken within a second) reads them."""
    store = MemoryStore(paths, lock_timeout=1.0)
    with store.transaction():
        return sorted(m.text for m in store.memories(user="tester"))


def test_a_settle_refused_at_the_opening_and_the_close_stores_the_write_and_frees_the_store(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Before, the opening took the refused chmod for a read-only store, and the write was refused."""
    monkeypatch.setattr(chroma, "private_tree", refusing([True]))
    paths = resolve_paths()
    MemoryStore(paths, lock_timeout=1.0).upsert([note("aaaaaaaaaaaaaaaa", "I live in York")], [VECTOR])
    assert texts(paths) == ["I live in York"]
    assert json.loads((paths.data_dir / CLOSED_FILE).read_text())["count"] == 1


def test_a_settle_refused_at_the_close_still_closes_records_and_releases_the_store(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Before, the OSError left the transaction with Chroma's client cached, no record and
    the file lock held: the next transaction waited for it in vain."""
    failing = [False]
    monkeypatch.setattr(chroma, "private_tree", refusing(failing))
    paths = resolve_paths()
    store = MemoryStore(paths, lock_timeout=1.0)
    with store.transaction():
        store.upsert([note("aaaaaaaaaaaaaaaa", "I live in York")], [VECTOR])
        failing[0] = True
    assert store._lock is None and store._client is None
    assert json.loads((paths.data_dir / CLOSED_FILE).read_text())["count"] == 1
    assert texts(paths) == ["I live in York"]


def test_a_settle_refused_as_a_deferred_store_opens_chroma_stores_the_write(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A store opened without Chroma (its record trusted) opens it for a write; before, the
    refused chmod after that opening failed the write."""
    paths = resolve_paths()
    MemoryStore(paths).upsert([note("aaaaaaaaaaaaaaaa", "I live in York")], [VECTOR])  # records the close
    monkeypatch.setattr(chroma, "private_tree", refusing([True]))
    store = MemoryStore(paths, lock_timeout=1.0)
    with store.transaction():
        assert store._deferred
        store.upsert([note("bbbbbbbbbbbbbbbb", "I moved to Leeds")], [VECTOR])
        assert not store._deferred
    assert texts(paths) == ["I live in York", "I moved to Leeds"]


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
