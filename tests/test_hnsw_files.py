"""The HNSW files under Chroma's folder hold no deleted text: hnswlib writes a new index's
``data_level0.bin`` and ``length.bin`` whole from memory it never initialised, which held
texts the process freed (deleted memories' included: chroma-core/chroma#7688), so a delete
for good, a reindex and a migration into the folder zero the places past the element
count (``memcli.store.hnsw``), keep the elements' own places byte for byte, and remove the
segment folders of deleted collections, which Chroma leaves on disk."""

from __future__ import annotations

import json
import sqlite3
import struct
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from test_consolidate import make_memcli
from test_purge import holders

from memcli.store.hnsw import drop_orphan_segments, scrub_segments, zero_unused_slots

MARKER = "Zorblatt-Quixvane"


def segments(store_dir: Path) -> list[Path]:
    """The HNSW segment folders under ``store_dir``."""
    return sorted(header.parent for header in store_dir.glob("*/header.bin"))


def plant(path: Path, at: int) -> None:
    """Write the marker into ``path`` at byte ``at``, as freed memory would lie there."""
    with path.open("r+b") as f:
        f.seek(at)
        f.write(MARKER.encode())


def read_back(store_dir: Path) -> dict[str, list[float]]:
    """Every id and vector of the collection, read by a fresh process (which loads the
    HNSW files rather than a copy in memory)."""
    code = (
        "import json, sys, chromadb\n"
        "from chromadb.config import Settings\n"
        "c = chromadb.PersistentClient(path=sys.argv[1], settings=Settings(anonymized_telemetry=False))\n"
        "col = c.get_collection('vectors')\n"
        "got = col.get(include=['embeddings'])\n"
        "near = col.query(query_embeddings=[got['embeddings'][0]], n_results=1)['ids'][0][0]\n"
        "print(json.dumps({'ids': got['ids'], 'vectors': [list(map(float, v)) for v in got['embeddings']],"
        " 'near': near, 'first': got['ids'][0]}))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(store_dir)], capture_output=True, text=True, check=True, timeout=120
    )
    found = json.loads(out.stdout.strip().splitlines()[-1])
    assert found["near"] == found["first"]
    return dict(zip(found["ids"], found["vectors"]))


def test_the_places_past_the_element_count_are_zeroed_and_the_elements_kept_byte_for_byte(tmp_path: Path) -> None:
    import chromadb
    from chromadb.config import Settings

    store_dir = tmp_path / "chroma"
    client = chromadb.PersistentClient(path=str(store_dir), settings=Settings(anonymized_telemetry=False))
    # sync_threshold 2: the index is saved every two writes, so its header counts elements
    col = client.create_collection(
        "vectors", configuration={"hnsw": {"space": "cosine", "sync_threshold": 2, "batch_size": 2}}
    )
    rng = np.random.default_rng(7)
    vectors = (3.0 * rng.normal(size=(6, 8))).astype(np.float32)  # not unit length: the norms matter
    for i, vector in enumerate(vectors):
        col.add(ids=[f"m{i}"], embeddings=[vector], documents=[f"kept {i}"])
    [segment] = segments(store_dir)
    _, capacity, count, per_element = struct.unpack_from("<qqqq", (segment / "header.bin").read_bytes(), 4)
    assert count >= 4 and capacity > count
    length, level0 = segment / "length.bin", segment / "data_level0.bin"
    plant(length, count * 4)
    plant(length, length.stat().st_size - len(MARKER))
    plant(level0, count * per_element + 3)
    used = (length.read_bytes()[: count * 4], level0.read_bytes()[: count * per_element])

    scrub_segments(store_dir)

    assert holders(store_dir) == {}
    assert (length.read_bytes()[: count * 4], level0.read_bytes()[: count * per_element]) == used
    assert not any(length.read_bytes()[count * 4 :]) and not any(level0.read_bytes()[count * per_element :])
    assert length.stat().st_size == 4 * capacity
    del col, client
    found = read_back(store_dir)
    assert sorted(found) == [f"m{i}" for i in range(6)]
    for i, vector in enumerate(vectors):
        np.testing.assert_allclose(found[f"m{i}"], vector, rtol=1e-5, atol=1e-5)


def test_a_file_larger_than_its_header_says_is_left_alone_and_a_shorter_one_zeroed_past_the_count(
    tmp_path: Path,
) -> None:
    segment = tmp_path / "segment"
    segment.mkdir()
    header = struct.pack("<iqqqqq", 1, 0, 10, 2, 16, 8) + bytes(52)
    (segment / "header.bin").write_bytes(header)
    odd = MARKER.encode() * 10  # 170 bytes: more than 10 places of 4
    (segment / "length.bin").write_bytes(odd)
    (segment / "data_level0.bin").write_bytes(bytes(32) + MARKER.encode())
    zero_unused_slots(segment)
    assert (segment / "length.bin").read_bytes() == odd
    assert (segment / "data_level0.bin").read_bytes() == bytes(32 + len(MARKER))


@pytest.mark.parametrize(
    "header",
    [struct.pack("<iqqqqq", 2, 0, 10, 2, 16, 8), struct.pack("<iqqqqq", 1, 0, 10, 2, 16, 4)],
    ids=["another version", "the label not an element's last 8 bytes"],
)
def test_a_header_of_another_layout_leaves_the_files_alone(tmp_path: Path, header: bytes) -> None:
    segment = tmp_path / "segment"
    segment.mkdir()
    (segment / "header.bin").write_bytes(header + bytes(52))
    written = bytes(32) + MARKER.encode()
    (segment / "data_level0.bin").write_bytes(written)
    zero_unused_slots(segment)
    assert (segment / "data_level0.bin").read_bytes() == written


def test_only_segment_folders_no_segment_names_and_holding_only_hnsw_files_are_removed(tmp_path: Path) -> None:
    store_dir = tmp_path / "chroma"
    store_dir.mkdir()
    db = sqlite3.connect(str(store_dir / "chroma.sqlite3"))
    kept = "0b5d2a9e-7c1f-4f0e-9a51-2f6f7c3c1d10"
    db.execute("CREATE TABLE segments (id TEXT PRIMARY KEY)")
    db.execute("INSERT INTO segments VALUES (?)", (kept,))
    db.commit()
    db.close()
    orphan, foreign, other = (
        "5e0c0b7e-1d9f-4a8e-8d8e-4f5c8b0d2a11",
        "7a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d",
        "not-a-segment",
    )
    for name in (kept, orphan, foreign, other):
        (store_dir / name).mkdir()
        (store_dir / name / "header.bin").write_bytes(bytes(100))
        (store_dir / name / "data_level0.bin").write_bytes(MARKER.encode())
    (store_dir / foreign / "notes.txt").write_text("not Chroma's")
    assert drop_orphan_segments(store_dir) == [orphan]
    assert sorted(p.name for p in store_dir.iterdir() if p.is_dir()) == sorted([kept, foreign, other])


@pytest.mark.parametrize("resident", [False, True], ids=["a command", "the service"])
def test_what_chroma_writes_into_the_unused_places_during_a_transaction_is_zeroed_as_it_ends(
    fake_model: Any, memcli_home: Path, resident: bool
) -> None:
    """What CI found once: a deleted note's text in the store's ``length.bin`` after the
    delete. Chroma makes an index it has not saved yet anew at each opening, writing
    ``length.bin`` and ``data_level0.bin`` whole from the process's heap; here the text is
    put where that heap's bytes would lie, inside a transaction, after Chroma opened."""
    engine = make_memcli(user="ana")
    if resident:  # the service's store stays open between its transactions
        engine.store.open_resident()
    engine.remember("I like green tea in the morning")
    note, _ = engine.remember(f"The code word is {MARKER}, remember it")
    engine.delete(note.id)
    with engine.store.transaction():
        assert [m.text for m in engine.store.memories(user="ana")] == ["I like green tea in the morning"]
        [segment] = segments(engine.store.paths.store_dir)
        plant(segment / "length.bin", (segment / "length.bin").stat().st_size - 2 * len(MARKER))
        plant(segment / "data_level0.bin", (segment / "data_level0.bin").stat().st_size - 2 * len(MARKER))
    assert holders(memcli_home) == {}
    assert [m.text for m in engine.store.memories(user="ana")] == ["I like green tea in the morning"]
    assert engine.recall("green tea", "ana", k=1)[0].memory.text == "I like green tea in the morning"


def test_a_service_that_opens_without_chroma_zeroes_what_a_killed_memcli_left_in_the_unused_places(
    fake_model: Any, memcli_home: Path
) -> None:
    """A memcli killed after its Chroma wrote the HNSW files and before it zeroed their unused
    places leaves the heap's bytes there, and Chroma's SQLite files as the last close recorded
    them: the service that opens next, without Chroma (``_open_deferrable``), zeroes them as
    its first transaction ends."""
    engine = make_memcli(user="ana")
    engine.remember("I like green tea in the morning")
    note, _ = engine.remember(f"The code word is {MARKER}, remember it")
    engine.delete(note.id)
    [segment] = segments(engine.store.paths.store_dir)
    plant(segment / "length.bin", (segment / "length.bin").stat().st_size - 2 * len(MARKER))
    plant(segment / "data_level0.bin", (segment / "data_level0.bin").stat().st_size - 2 * len(MARKER))
    engine.store.open_resident()
    try:
        assert engine.store.chroma_deferred
        assert [m.text for m in engine.store.memories(user="ana")] == ["I like green tea in the morning"]
        assert engine.store.chroma_deferred
        assert holders(memcli_home) == {}
    finally:
        engine.store.close()


def test_a_reindex_after_a_delete_leaves_the_deleted_text_nowhere_and_one_segment(
    fake_model: Any, memcli_home: Path
) -> None:
    """A reindex makes a new segment, whose files hnswlib writes from memory that held the
    text of notes deleted just before (measured: 3 runs in 5 without the scrub); the old
    segment's folder, which Chroma keeps, goes. Three rounds in one process."""
    engine = make_memcli(user="ana")
    engine.remember("I like green tea in the morning")
    store_dir = engine.store.paths.store_dir
    for round_ in range(3):
        notes = [engine.remember((f"{round_}.{i} The code word is {MARKER} " * 20)[:396])[0] for i in range(8)]
        for note in notes:
            engine.delete(note.id)
        engine.reindex(force=True)
        assert holders(memcli_home) == {}
        db = sqlite3.connect(str(store_dir / "chroma.sqlite3"))
        try:
            named = {r[0] for r in db.execute("SELECT id FROM segments WHERE scope = 'VECTOR'")}
        finally:
            db.close()
        assert {s.name for s in segments(store_dir)} <= named and len(segments(store_dir)) == 1
    assert [m.text for m in engine.store.memories(user="ana")] == ["I like green tea in the morning"]
    assert engine.recall("green tea", "ana", k=1)[0].memory.text == "I like green tea in the morning"


def test_a_scrub_that_fails_leaves_the_store_whole(
    fake_model: Any, memcli_home: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    from memcli.store import chroma

    def refuse(store_dir: Path) -> None:
        raise PermissionError(13, "Permission denied", str(store_dir))

    monkeypatch.setattr(chroma, "scrub_changed", refuse)
    engine = make_memcli(user="ana")
    engine.remember("I like green tea in the morning")
    assert [m.text for m in engine.store.memories(user="ana")] == ["I like green tea in the morning"]
    assert "were not zeroed" in caplog.text
