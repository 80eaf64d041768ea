"""Snapshots of a user's recall index (``memcli.store.snapshot``): a recaller started again
reads the index from its snapshot, brought up to date with the sidecar's change log, and
recalls exactly what a whole load recalls; a snapshot that does not match (another epoch,
torn or damaged files, a write it cannot follow) is never used; a save interrupted at any
point leaves the previous snapshot whole; deleting for good removes the snapshots."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest
from conftest import FakeEmbedder
from test_index import USER, embedding, note
from test_index_incremental import QUERIES, features, populated

from memcli.library.engine import Engine
from memcli.recall.retrieval import Recaller
from memcli.store import snapshot
from memcli.store.index import UserIndex
from memcli.store.recall_index import INDEX_VERSION, RecallIndex


@pytest.fixture
def whole_loads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Counts the loads of a user's index whole from the sidecar."""
    calls: list[str] = []
    load = RecallIndex.load

    def counted(index: RecallIndex, user: str) -> UserIndex:
        calls.append(user)
        return load(index, user)

    monkeypatch.setattr(RecallIndex, "load", counted)
    return calls


def whole(engine: Engine) -> UserIndex:
    with engine.store.transaction():
        return engine.store.sidecar.index.load(USER)


def restarted(engine: Engine) -> tuple[Recaller, UserIndex]:
    """A new recaller (a service started again) and the index it reads."""
    recaller = Recaller(engine.store, engine.embedder)
    with engine.store.transaction():
        return recaller, recaller.index(USER)


def assert_recalls_as_whole(engine: Engine, recaller: Recaller, index: UserIndex) -> None:
    assert features(index) == features(whole(engine))
    assert index.count == whole(engine).count
    fresh = Recaller(engine.store, engine.embedder)
    with engine.store.transaction(), pytest.MonkeyPatch.context() as m:
        m.setattr(snapshot, "load", lambda *args: None)
        m.setattr(snapshot, "save", lambda *args: None)
        for query in QUERIES:
            got, want = recaller.recall(query, USER, k=100), fresh.recall(query, USER, k=100)
            assert [h.memory.id for h in got] == [h.memory.id for h in want], query
            assert [h.relevance for h in got] == pytest.approx([h.relevance for h in want], rel=1e-5, abs=1e-6)


def generation(engine: Engine) -> Path:
    home = snapshot.user_dir(engine.store.paths.data_dir, USER)
    return home / (home / "current").read_text()


def test_a_restart_reads_the_snapshot_not_the_sidecar(fake_embedder: FakeEmbedder, whole_loads: list[str]) -> None:
    engine, _ = populated()
    assert whole_loads == [USER], "the first load is whole, and takes a snapshot"
    manifest = snapshot.describe(engine.store.paths.data_dir, USER)
    assert manifest is not None and manifest["n"] == whole(engine).count
    whole_loads.clear()

    recaller, index = restarted(engine)
    assert whole_loads == []
    assert isinstance(index.turn, np.memmap), "the vectors are memory-mapped"
    assert_recalls_as_whole(engine, recaller, index)


def test_writes_after_the_snapshot_are_read_from_the_change_log(
    fake_embedder: FakeEmbedder, whole_loads: list[str]
) -> None:
    engine, _ = populated()
    engine.remember("I adopted a second puppy named Max", user=USER)
    engine.add_memories([note("The harbour festival is in July")])
    with engine.store.transaction():
        first = engine.store.memories(user=USER, kind="note")[0]
        first.archived = True
        engine.store.update([first])
    whole_loads.clear()

    recaller, index = restarted(engine)
    assert whole_loads == [], "brought up to date from the change log"
    assert "The harbour festival is in July" in index.texts
    assert_recalls_as_whole(engine, recaller, index)
    # the index read from a snapshot follows later writes too
    engine.remember("Ana moved to Lyon", user=USER)
    with engine.store.transaction():
        index = recaller.index(USER)
    assert_recalls_as_whole(engine, recaller, index)


def test_a_snapshot_of_another_epoch_is_not_used(fake_embedder: FakeEmbedder, whole_loads: list[str]) -> None:
    engine, _ = populated()
    with engine.store.transaction():
        memories, vectors = engine.store._with_embeddings(USER)
        engine.store.sidecar.index.rebuild(USER, memories[:-1], vectors[:-1])
    whole_loads.clear()

    recaller, index = restarted(engine)
    assert whole_loads == [USER]
    assert index.count == len(memories) - 1
    assert_recalls_as_whole(engine, recaller, index)


@pytest.mark.parametrize(
    "damage",
    ["truncated vectors", "missing postings", "garbage manifest", "pointer elsewhere", "lists of another length"],
)
def test_a_damaged_snapshot_is_not_used(fake_embedder: FakeEmbedder, whole_loads: list[str], damage: str) -> None:
    engine, _ = populated()
    folder = generation(engine)
    if damage == "truncated vectors":
        path = folder / "turn.npy"
        path.write_bytes(path.read_bytes()[:-100])
    elif damage == "missing postings":
        (folder / "lexical_indices.npy").unlink()
    elif damage == "garbage manifest":
        (folder / "manifest.json").write_text("{not json")
    elif damage == "pointer elsewhere":
        (folder.parent / "current").write_text("../../../etc")
    elif damage == "lists of another length":
        lists = json.loads((folder / "lists.json").read_text())
        lists["session_names"] = lists["session_names"][:-1]
        (folder / "lists.json").write_text(json.dumps(lists))
    elif damage == "truncated texts":
        path = folder / "texts.utf8"
        path.write_bytes(path.read_bytes()[:-3])
    else:
        path = folder / "texts.utf8"
        path.write_bytes(b"\xff" + path.read_bytes()[1:])
    whole_loads.clear()

    recaller, index = restarted(engine)
    assert whole_loads == [USER]
    assert_recalls_as_whole(engine, recaller, index)


def test_a_snapshot_that_disagrees_with_the_sidecar_is_not_used(
    fake_embedder: FakeEmbedder, whole_loads: list[str]
) -> None:
    engine, _ = populated()
    # A row the change log does not tell of (written behind its back): the counts differ.
    with engine.store.transaction():
        engine.store.sidecar._db.execute("UPDATE recall_index SET seq = 0")
        before = engine.store.sidecar.index.count_of(USER)
    engine.add_memories([note("The harbour festival is in July")])
    with engine.store.transaction():
        engine.store.sidecar._db.execute("UPDATE recall_index SET seq = 0 WHERE text LIKE 'The harbour%'")
    whole_loads.clear()

    notices: list[str] = []
    engine.store.notice = notices.append  # type: ignore[method-assign]
    recaller, index = restarted(engine)
    assert whole_loads == [USER] and index.count == before + 1
    assert any("did not match" in n for n in notices)
    assert_recalls_as_whole(engine, recaller, index)


def test_a_save_cut_short_leaves_the_previous_snapshot(
    fake_embedder: FakeEmbedder, monkeypatch: pytest.MonkeyPatch, whole_loads: list[str]
) -> None:
    """A save stopped at each of its writes in turn (as a kill would stop it) leaves the
    previous snapshot, whole, which is then brought up to date from the change log; past
    its last write, the new one."""
    engine, recaller = populated()
    engine.add_memories([note(f"note {i} about the harbour") for i in range(5)])
    previous = generation(engine)
    real_fsync = os.fsync
    fail_at = 0
    while True:
        writes = {"n": 0}

        def failing_fsync(fd: int, writes: dict[str, int] = writes, fail_at: int = fail_at) -> None:
            writes["n"] += 1
            if writes["n"] > fail_at:
                raise OSError("killed")
            real_fsync(fd)

        monkeypatch.setattr(os, "fsync", failing_fsync)
        with engine.store.transaction():
            saved = engine.store.save_recall_snapshot(USER, recaller.index(USER))
        monkeypatch.setattr(os, "fsync", real_fsync)
        whole_loads.clear()
        restart, index = restarted(engine)
        assert whole_loads == [], fail_at
        assert_recalls_as_whole(engine, restart, index)
        folders = [p for p in previous.parent.iterdir() if p.is_dir()]
        if saved:
            assert generation(engine) != previous and folders == [generation(engine)]
            break
        assert generation(engine) == previous and folders == [previous], fail_at
        fail_at += 1
    assert fail_at > 15, "every file of the snapshot was written"


def test_deleting_for_good_removes_the_snapshot(fake_embedder: FakeEmbedder) -> None:
    engine, _ = populated()
    home = snapshot.user_dir(engine.store.paths.data_dir, USER)
    with engine.store.transaction():
        gone = next(m for m in engine.store.memories(user=USER) if "birthday" in m.text)
    assert any(b"birthday" in p.read_bytes() for p in home.rglob("*") if p.is_file())

    engine.delete(gone.id)
    assert not home.exists()
    recaller, index = restarted(engine)
    assert not any(b"birthday" in p.read_bytes() for p in home.rglob("*") if p.is_file())
    assert_recalls_as_whole(engine, recaller, index)


def test_an_index_that_lost_rows_since_its_whole_load_is_not_saved(fake_embedder: FakeEmbedder) -> None:
    """Its vocabulary may still hold words only the deleted rows had."""
    engine, recaller = populated()
    with engine.store.transaction():
        gone = next(m for m in engine.store.memories(user=USER) if "birthday" in m.text)
    engine.store.delete([gone.id])
    with engine.store.transaction():
        index = recaller.index(USER)
        assert index.scrubbed
        assert not engine.store.save_recall_snapshot(USER, index)
    assert snapshot.describe(engine.store.paths.data_dir, USER) is None


def test_a_snapshot_of_another_version_is_not_used(tmp_path: Path) -> None:
    vector = np.asarray(embedding("hello"), dtype=np.float32).tobytes()
    row = ("m1", 1, "note", "", 1.0, 0, 0, "hello", 0, "", vector, vector, "hello", "", "")
    index = UserIndex.from_rows([row], seq=3, epoch="e")
    snapshot.save(tmp_path, USER, index, INDEX_VERSION)
    assert snapshot.load(tmp_path, USER, "e", 3, INDEX_VERSION) is not None
    assert snapshot.load(tmp_path, USER, "e", 3, INDEX_VERSION + 1) is None
    assert snapshot.load(tmp_path, USER, "e", 2, INDEX_VERSION) is None, "a snapshot ahead of the sidecar"
    assert snapshot.load(tmp_path, USER, "f", 3, INDEX_VERSION) is None, "another epoch"
    assert snapshot.load(tmp_path, "bob", "e", 3, INDEX_VERSION) is None


def test_a_snapshot_carries_the_says_when_flags_so_a_restart_reads_no_text_for_them(
    fake_embedder: FakeEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first load asked no "when" question; the snapshot still holds the flags, and the
    first "when" question after a restart reads them instead of every memory's text."""
    engine, _ = populated()
    manifest = snapshot.describe(engine.store.paths.data_dir, USER)
    assert manifest is not None and manifest["says_when_ready"] is True
    want = whole(engine).says_when.copy()
    recaller, index = restarted(engine)

    def read_again(text: str) -> bool:
        raise AssertionError(f"says_when read again for {text!r}")

    monkeypatch.setattr("memcli.store.index.says_when", read_again)
    np.testing.assert_array_equal(index.says_when, want)
    assert want.any(), "some memories place something in time"
    with engine.store.transaction():
        hits = recaller.recall(QUERIES[2], USER, k=5)
    assert hits and any(h.signals["when"] for h in hits)


def test_the_strings_of_a_snapshot_read_back_block_by_block(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    strings = ["", "plain", "naïve café", "我们明天见", "emoji 🎉 here", "", "x" * 50, "line\none"]
    ends = snapshot._write_strings(tmp_path, "texts", strings)
    monkeypatch.setattr(snapshot, "_STRING_BLOCK", 7)  # blocks shorter than some strings
    assert snapshot._read_strings(tmp_path / "texts.utf8", ends) == strings
    with pytest.raises(ValueError):
        snapshot._read_strings(tmp_path / "texts.utf8", ends[:-1])


def test_deleting_for_good_removes_the_chat_openings_kept_on_disk(fake_embedder: FakeEmbedder) -> None:
    """A chat opening's state holds the tokens of the portrait and running memory it was
    evaluated from (``memcli.models.llm.OPENING_STATES``): a delete for good takes them too."""
    engine, _ = populated()
    states = engine.store.paths.prompt_states_dir
    states.mkdir(parents=True)
    kept = [states / "a.state", states / "b.state"]
    for path in kept:
        path.write_bytes(b"memcli prompt state 1\n{}\n")
    with engine.store.transaction():
        gone = next(m for m in engine.store.memories(user=USER) if "birthday" in m.text)

    engine.delete(gone.id)
    assert not any(path.exists() for path in kept)


def test_a_chat_opening_made_before_a_delete_for_good_is_neither_written_nor_used(tmp_path: Path) -> None:
    """The chat model's writer thread may still hold an opening made of the memories as
    they were before a delete for good: it is not written after the drop, nor read."""
    import time

    from memcli.models.llm import LlamaCppModel, _KeptState
    from memcli.paths import drop_prompt_states

    model = LlamaCppModel.__new__(LlamaCppModel)  # the disk's part alone: no GGUF loaded
    model._states_dir, model._identity, model._writing = tmp_path / "prompt-states", "model|n_ctx=512", None

    def written(tokens: list[int], asked: float) -> None:
        model._write_opening(_KeptState(tokens, b"state"), asked)
        assert model._writing is not None
        model._writing.join()

    before = time.time()
    written([1, 2, 3], before)
    assert model._read_opening([1, 2, 3]) is not None
    stale = model._states_dir / ".x.state.memcli-1.abc.tmp"  # what a killed writer leaves
    stale.write_bytes(b"state")

    time.sleep(0.01)
    drop_prompt_states(model._states_dir)
    assert not stale.exists() and not list(model._states_dir.glob("*.state"))
    written([1, 2, 3], before)  # made before the drop, written after it
    assert not list(model._states_dir.glob("*.state"))
    assert model._read_opening([1, 2, 3]) is None
    written([4, 5], time.time() + 2)  # made after it (a coarse clock of the file system included)
    assert model._read_opening([4, 5]) is not None
