"""Chroma saves a memcli collection's HNSW index every ``SYNC_THRESHOLD`` writes (100), so an
opening loads the saved index and applies only the records after it, instead of rebuilding
it from Chroma's write-ahead log (which it did for every collection under 1000 writes, at
every cold command), and writes none of its files again; a store made with Chroma's default
threshold is changed in place; a collection on a server keeps the server's."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest
from test_consolidate import make_memcli
from test_hnsw_files import segments

from memcli.store import chroma, store_open
from memcli.store.chroma import COLLECTION


def log_left_to_replay(store_dir: Path) -> int:
    """How many records of Chroma's write-ahead log are newer than what the saved HNSW
    index of the collection's vector segment holds (its ``max_seq_id``; 0 when it was never
    saved): what an opening would apply again to rebuild the index."""
    db = sqlite3.connect(str(store_dir / "chroma.sqlite3"))
    try:
        [(segment,)] = db.execute(
            "SELECT s.id FROM segments s JOIN collections c ON c.id = s.collection"
            " WHERE c.name = ? AND s.scope = 'VECTOR'",
            (COLLECTION,),
        ).fetchall()
        saved = db.execute("SELECT seq_id FROM max_seq_id WHERE segment_id = ?", (segment,)).fetchone()
        return db.execute(
            "SELECT COUNT(*) FROM embeddings_queue WHERE seq_id > ?", (saved[0] if saved else 0,)
        ).fetchone()[0]
    finally:
        db.close()


def files_of(segment: Path) -> dict[str, tuple[int, int, int]]:
    """Each file of a segment folder: inode, size, modification time in ns."""
    return {p.name: (p.stat().st_ino, p.stat().st_size, p.stat().st_mtime_ns) for p in sorted(segment.iterdir())}


def sync_threshold(store_dir: Path) -> int:
    """The collection's ``sync_threshold`` as a fresh Chroma client reads it."""
    import chromadb
    from chromadb.api.shared_system_client import SharedSystemClient
    from chromadb.config import Settings

    client = chromadb.PersistentClient(path=str(store_dir), settings=Settings(anonymized_telemetry=False))
    try:
        return int(client.get_collection(COLLECTION).configuration_json["hnsw"]["sync_threshold"])
    finally:
        SharedSystemClient.clear_system_cache()


def test_a_reopened_small_store_loads_its_saved_index_and_rewrites_none_of_its_files(
    fake_model: Any, fake_embedder: Any, memcli_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the threshold lowered for the test: three notes and a reinforcement reach it
    monkeypatch.setattr(store_open, "HNSW_CONFIGURATION", {"space": "cosine", "sync_threshold": 1})
    monkeypatch.setattr(chroma, "SYNC_THRESHOLD", 1)
    engine = make_memcli(user="ana")
    for text in ("I like green tea in the morning", "My sister lives in Porto", "I started pottery in May"):
        engine.remember(text)
    store_dir = engine.store.paths.store_dir
    [segment] = segments(store_dir)
    assert (segment / "index_metadata.pickle").is_file()  # Chroma's id map: written when the index is saved
    assert log_left_to_replay(store_dir) == 0
    assert engine.recall("green tea", "ana", k=1)[0].memory.text == "I like green tea in the morning"
    # The recall's reinforcement waits in the sidecar, and the next opening of Chroma writes it
    # (and so saves the index) before anything reads Chroma's metadata: written here, so that
    # the opening below has nothing to write.
    assert engine.store.flush_behind() > 0
    before = files_of(segment)
    with engine.store.transaction():  # a new client, as every cold command opens
        assert engine.store._col.count() == 3
        assert engine.store._col.query(query_embeddings=[fake_embedder.embed_one("pottery")], n_results=1)["ids"][0]
    assert files_of(segment) == before


def test_a_store_made_with_chromas_default_threshold_is_changed_in_place_and_saved_at_its_next_opening(
    fake_model: Any, fake_embedder: Any, memcli_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # What a memcli before SYNC_THRESHOLD made: a collection with Chroma's default (1000).
    # (raising=False: the same test runs against a memcli without them, where it must fail below)
    monkeypatch.setattr(store_open, "HNSW_CONFIGURATION", {"space": "cosine"}, raising=False)
    monkeypatch.setattr(store_open, "set_sync_threshold", lambda collection: False, raising=False)
    engine = make_memcli(user="ana")
    engine.remember("I like green tea in the morning")
    engine.remember("My sister lives in Porto")
    store_dir = engine.store.paths.store_dir
    assert sync_threshold(store_dir) == 1000 and log_left_to_replay(store_dir) > 0
    monkeypatch.undo()

    with engine.store.transaction():
        assert engine.store._col.query(query_embeddings=[fake_embedder.embed_one("tea")], n_results=1)["ids"][0]
    assert sync_threshold(store_dir) == chroma.SYNC_THRESHOLD
    notes = [f"Day {i}: I walked {i + 2} km along the canal" for i in range(chroma.SYNC_THRESHOLD)]
    for note in notes:
        engine.remember(note)
    [segment] = segments(store_dir)
    assert (segment / "index_metadata.pickle").is_file()  # saved within SYNC_THRESHOLD writes, not 1000
    assert log_left_to_replay(store_dir) < chroma.SYNC_THRESHOLD
    assert {m.text for m in engine.store.memories(user="ana")} == {
        "I like green tea in the morning",
        "My sister lives in Porto",
        *notes,
    }


def test_a_collection_on_a_server_keeps_the_servers_threshold() -> None:
    """Only a folder's collections get memcli's ``SYNC_THRESHOLD``: a server's index is the
    server's to tune."""
    assert "sync_threshold" not in chroma.SERVER_HNSW_CONFIGURATION
    assert chroma.HNSW_CONFIGURATION["sync_threshold"] == chroma.SYNC_THRESHOLD
