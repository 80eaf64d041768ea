"""memcli export and memcli import --format memcli: a backup that comes back as it was.

The store under test has every kind of memory (turns, notes, facts, daily and global
summaries and portraits, the running memory) written by the extractive consolidation, and
memories that were pinned, archived, edited, fed back, recalled and ended; an export of it
imported into an empty home and exported again gives the same lines, field by field.
"""

from __future__ import annotations

import base64
import json
import os
import stat
import subprocess
from dataclasses import asdict, fields
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from test_consolidate import DAY1, DAY2, NOW, USER, day_turns, make_memcli
from test_consolidate_extractive import GARDEN_TURNS, TRAIN_TURNS
from test_service import memcli as run_memcli
from test_service import paths, request, start_service  # noqa: F401  (paths, start_service: pytest fixtures, used by name)

from memcli.cli import app
from memcli.formats import export
from memcli.library.engine import Engine
from memcli.library.library import Memcli
from memcli.memory import Kind, Memory
from memcli.paths import resolve_paths
from memcli.store.recall_index import RecallIndex
from memcli.transport.client import Handlers


def lines_of(path: Path) -> list[dict[str, Any]]:
    return [json.loads(text) for text in path.read_text(encoding="utf-8").splitlines()]


def body(path: Path) -> list[str]:
    """The lines of an export but its header."""
    return path.read_text(encoding="utf-8").splitlines()[1:]


def every_memory(engine: Engine) -> dict[str, Memory]:
    with engine.store.transaction():
        return {m.id: m for m in engine.store.memories()}


@pytest.fixture
def full_store(fake_embedder: Any, fake_model: Any) -> Engine:
    """A store with every kind of memory, and every state a memory can be in."""
    engine = make_memcli(consolidation="extractive")
    engine.add_memories(day_turns(GARDEN_TURNS, DAY1, "s1") + day_turns(TRAIN_TURNS, DAY2, "s2"))
    engine.add_memories(day_turns([("Bo", "I repair old bicycles in my garage.")], DAY1, "b1", user="bo"))
    engine.consolidate(all_users=True)
    pinned, _ = engine.remember("Sister's birthday: 4 March", USER, importance=0.9, tags=["family"])
    engine.pin(pinned.id)
    edited, _ = engine.remember("The garage code is 1234", USER)
    engine.edit(edited.id, text="The garage code is 4321", tags=["home"])
    archived, _ = engine.remember("Parked on level 3", USER)
    memory = engine.get(archived.id)
    memory.archived, memory.archived_at = True, NOW + 5.25
    with engine.store.transaction():
        engine.store.update([memory])
    turn = next(m for m in every_memory(engine).values() if m.kind == Kind.TURN.value and m.user == USER)
    engine.feedback(turn.id, 1)
    engine.recall("tomatoes in the garden", USER, k=3)
    fact = next(m for m in every_memory(engine).values() if m.kind == Kind.FACT.value)
    fact.valid_to, fact.valid_from = NOW + 0.125, NOW - 86400.5
    with engine.store.transaction():
        engine.store.update([fact])
    return engine


def export_to(engine: Engine, path: Path, **args: Any) -> Any:
    return Memcli(engine).export(path=str(path), **{"all_users": True, **args})


def empty_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str = "restored") -> Engine:
    monkeypatch.setenv("MEMCLI_HOME", str(tmp_path / name))
    return make_memcli(resolve_paths(), consolidation="extractive")


def test_the_store_under_test_has_every_kind_and_state(full_store: Engine) -> None:
    memories = list(every_memory(full_store).values())
    assert {m.kind for m in memories} == {k.value for k in Kind}
    assert any(m.pinned for m in memories) and any(m.archived for m in memories) and any(m.feedback for m in memories)
    assert any(m.recall_count for m in memories) and any(m.valid_to for m in memories) and any(m.tags for m in memories)
    assert any(m.source_ids for m in memories) and any(m.retained_from == 0 for m in memories)


def test_an_export_holds_every_field_of_every_memory_exactly(full_store: Engine, tmp_path: Path) -> None:
    out = tmp_path / "backup.jsonl"
    result = export_to(full_store, out, history=True)
    records = lines_of(out)
    head = records[0]
    assert (
        head["format"] == "memcli"
        and head["format_version"] == export.FORMAT_VERSION
        and head["embedder"] == "FakeEmbedder"
    )
    assert head["exported_at"] and head["memcli_version"] and head["user"] is None and head["history"] is True
    memories = {r["id"]: r for r in records if r["type"] == "memory"}
    stored = every_memory(full_store)
    assert memories.keys() == stored.keys()
    for memory_id, memory in stored.items():
        record = dict(memories[memory_id])
        del record["type"]
        assert record == asdict(memory)  # every field, unix seconds as stored
        assert set(record) == {f.name for f in fields(Memory)}
    assert result.memories == len(stored) and result.lines == len(records) and result.size_bytes == out.stat().st_size
    assert result.history_events == sum(r["type"] == "history" for r in records) > 0
    assert result.progress_marks == sum(r["type"] == "progress" for r in records) > 0
    assert {r["event"] for r in records if r["type"] == "history"} >= {"ADD", "EDIT"}
    assert out.stat().st_mode & 0o777 == 0o600


def test_export_import_export_gives_the_same_lines(
    full_store: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = tmp_path / "first.jsonl"
    export_to(full_store, first, history=True)
    restored = empty_home(tmp_path, monkeypatch)
    report = restored.import_file(first)
    assert report.format == "memcli" and report.added == report.found == len(every_memory(full_store))
    second = tmp_path / "second.jsonl"
    export_to(restored, second, history=True)
    assert body(second) == body(first)
    # Field by field, as the store holds them: strength, recall counts, pins, archiving... were not reset.
    before, after = every_memory(full_store), every_memory(restored)
    for memory_id, memory in before.items():
        for field in fields(Memory):
            assert getattr(after[memory_id], field.name) == getattr(memory, field.name), (memory_id, field.name)
    assert restored.history(None, USER, limit=0) and len(restored.history(None, USER, 0)) == len(
        full_store.history(None, USER, 0)
    )
    # The consolidation progress came along: the restored store has exactly what the exported
    # one had left to consolidate (the notes remembered after its consolidation), no more.
    left = full_store.consolidate(all_users=True, dry_run=True)
    todo = restored.consolidate(all_users=True, dry_run=True)
    assert (todo.days, todo.sessions, todo.pairs, todo.folds) == (left.days, left.sessions, left.pairs, left.folds)
    assert todo.sessions == 0 and todo.pairs == 0 and todo.days <= 1
    assert body(second) == body(tmp_path / "second.jsonl")


def test_importing_an_export_twice_adds_nothing(
    full_store: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "backup.jsonl"
    export_to(full_store, out, history=True)
    restored = empty_home(tmp_path, monkeypatch)
    restored.import_file(out)
    report = restored.import_file(out)
    assert report.added == 0 and report.skipped == report.found
    twice = tmp_path / "twice.jsonl"
    export_to(restored, twice, history=True)
    assert body(twice) == body(out)


def test_one_users_export_holds_only_theirs(full_store: Engine, tmp_path: Path) -> None:
    out = tmp_path / "bo.jsonl"
    Memcli(full_store).export(user="bo", path=str(out), history=True)
    records = lines_of(out)
    assert records[0]["user"] == "bo"
    assert {r["user"] for r in records[1:]} == {"bo"}
    assert sum(r["type"] == "memory" for r in records) == sum(m.user == "bo" for m in every_memory(full_store).values())


def test_the_export_is_read_and_sent_a_page_at_a_time(fake_embedder: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    engine = make_memcli()
    engine.add_memories(day_turns([("Ana", f"Line number {i} of a long day.") for i in range(50)], DAY1, "s1"))
    monkeypatch.setattr(export, "PAGE", 7)
    read: list[int] = []
    page = RecallIndex.records_page

    def counted(self: RecallIndex, *args: Any, **kwargs: Any) -> Any:
        rows = page(self, *args, **kwargs)
        read.append(len(rows))
        return rows

    monkeypatch.setattr(RecallIndex, "records_page", counted)
    pieces: list[str] = []
    result = Memcli(engine, lambda event, **f: pieces.append(f["text"]) if event == "piece" else None).export(USER)
    assert max(read) == 7 and sum(read) == 50
    memory_pieces = [p for p in pieces if '"type":"memory"' in p]
    assert len(memory_pieces) == 8 and all(p.count("\n") <= 7 for p in pieces[1:])
    assert result.memories == 50 and result.path is None and result.lines == sum(p.count("\n") for p in pieces)


def test_with_vectors_the_stored_vectors_are_used_not_the_embedder(
    full_store: Engine, fake_embedder: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "vectors.jsonl"
    result = export_to(full_store, out, with_vectors=True)
    assert result.vectors and lines_of(out)[0]["vectors"] is True
    with full_store.store.transaction():
        before = {m.id: v for page in full_store.store.pages(vectors=True) for m, v in page}
    restored = empty_home(tmp_path, monkeypatch)
    fake_embedder.calls = 0
    restored.import_file(out)
    assert fake_embedder.calls == 0
    with restored.store.transaction():
        after = {m.id: v for page in restored.store.pages(vectors=True) for m, v in page}
    assert after == before
    again = tmp_path / "again.jsonl"
    export_to(restored, again, with_vectors=True)
    assert body(again) == body(out)
    assert restored.recall("tomatoes garden", USER, k=2)  # the windows left to fill are filled at the first recall


def test_a_file_from_another_embedder_is_embedded_again(
    full_store: Engine, fake_embedder: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "other.jsonl"
    export_to(full_store, out, with_vectors=True)
    records = lines_of(out)
    records[0]["embedder"] = "other-model@0123456789ab"
    for record in records[1:]:
        if record["type"] == "memory":
            record["vector"] = base64.b64encode(np.ones(3, dtype=np.float32).tobytes()).decode()
    out.write_text("".join(export.line(r) for r in records), encoding="utf-8")
    restored = empty_home(tmp_path, monkeypatch)
    fake_embedder.calls = 0
    report = restored.import_file(out)
    assert fake_embedder.calls > 0 and report.added == report.found
    with restored.store.transaction():
        dimensions = {len(v) for page in restored.store.pages(vectors=True) for _, v in page}
    assert dimensions == {4 * fake_embedder.dimension}


def test_the_cli_exports_to_stdout_and_imports_it_back(
    full_store: Engine, runner: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    done = runner.invoke(app, ["export", "--all-users", "--history"])
    assert done.exit_code == 0, done.output
    out = tmp_path / "stdout.jsonl"
    out.write_bytes(done.stdout_bytes)
    assert json.loads(done.stdout.splitlines()[0])["format"] == "memcli"
    assert "exported" in done.stderr
    monkeypatch.setenv("MEMCLI_HOME", str(tmp_path / "cli-restored"))
    imported = runner.invoke(app, ["import", str(out), "--format", "memcli", "--json"])
    assert imported.exit_code == 0, imported.output
    assert json.loads(imported.stdout)["format"] == "memcli"
    written = runner.invoke(app, ["export", "--all-users", "--history", "-o", str(tmp_path / "file.jsonl"), "--json"])
    assert written.exit_code == 0, written.output
    result = json.loads(written.stdout)
    assert result["path"] == str(tmp_path / "file.jsonl") and result["memories"] == len(every_memory(full_store))
    assert body(tmp_path / "file.jsonl") == body(out)


def test_an_export_is_detected_whatever_its_name(
    full_store: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "notes.txt"
    export_to(full_store, out)
    restored = empty_home(tmp_path, monkeypatch)
    assert restored.import_file(out).format == "memcli"


@pytest.mark.parametrize(
    "bad, message",
    [
        ('{"type":"memory","id":"x"}', "missing field"),
        ("not json", "not valid JSON"),
        (
            '{"type":"memory","id":"a1","user":"ana","kind":"turn","text":"t","created_at":"yesterday","day":"2023-05-08"}',
            "'created_at' must be float",
        ),
        (
            '{"type":"memory","id":"a1","user":"ana","kind":"dream","text":"t","created_at":1.0,"day":"2023-05-08"}',
            "unknown kind",
        ),
        (
            '{"type":"memory","id":"a1","user":"ana","kind":"turn","text":"t","created_at":1.0,"day":"2023-05-08","mood":1}',
            "unknown field",
        ),
        ('{"type":"gossip"}', "unknown record type"),
        (
            '{"type":"memory","id":"a1","user":"ana","kind":"turn","text":"t","created_at":1e300,"day":"2023-05-08"}',
            "'created_at' 1e+300 is out of range",
        ),
        (
            '{"type":"memory","id":"a1","user":"ana","kind":"turn","text":"t","created_at":1.0,"day":"2023-05-08","importance":5}',
            "'importance' must be between 0 and 1",
        ),
        (
            '{"type":"memory","id":"a1","user":"ana","kind":"turn","text":"t","created_at":1.0,"day":"2023-05-08","strength":-1}',
            "'strength' must be above 0",
        ),
        (
            '{"type":"memory","id":"a1","user":"ana","kind":"turn","text":"t","created_at":1.0,"day":"2023-05-08","recall_count":-3}',
            "'recall_count' must be between 0",
        ),
        (
            '{"type":"memory","id":"a1","user":"ana","kind":"turn","text":"t","created_at":1.0,"day":"May 8"}',
            "'day' must be a day written YYYY-MM-DD",
        ),
        (
            '{"type":"memory","id":"a1","user":"ana","kind":"turn","text":"t","created_at":1.0,"day":"2023-05-08","vector":"'
            + base64.b64encode(np.array([1.0, float("nan")], dtype=np.float32).tobytes()).decode()
            + '"}',
            "'vector' holds NaN",
        ),
        ('{"type":"memory","text":"' + "x" * (export.MAX_LINE_BYTES + 10) + '"}', "a line longer than"),
        ('{"type":"history","memory_id":"a1"}', "missing field"),
    ],
)
def test_a_malformed_export_stores_nothing(
    full_store: Engine, runner: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, bad: str, message: str
) -> None:
    out = tmp_path / "bad.jsonl"
    export_to(full_store, out, history=True)
    lines = out.read_text(encoding="utf-8").splitlines()
    lines.insert(len(lines) - 1, bad)
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    monkeypatch.setenv("MEMCLI_HOME", str(tmp_path / "untouched"))
    done = runner.invoke(app, ["import", str(out), "--format", "memcli"])
    assert done.exit_code == 5
    assert done.stderr.count("\n") == 1 and message in done.stderr and f"bad.jsonl:{len(lines) - 1}:" in done.stderr
    listed = runner.invoke(app, ["list", "-n", "0", "--json", "--user", USER])
    assert json.loads(listed.stdout) == []


def test_a_file_that_is_not_an_export_is_refused_as_memcli(runner: Any, tmp_path: Path) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("Just a note.\n", encoding="utf-8")
    done = runner.invoke(app, ["import", str(notes), "--format", "memcli"])
    assert done.exit_code == 5 and "not a memcli export" in done.stderr


def test_a_newer_format_is_refused(tmp_path: Path) -> None:
    out = tmp_path / "future.jsonl"
    out.write_text(export.line({"format": "memcli", "format_version": export.FORMAT_VERSION + 1}), encoding="utf-8")
    with pytest.raises(Exception, match="upgrade memcli"):
        export.open_archive(out)


def test_through_the_service_the_lines_come_as_pieces_or_the_service_writes_the_file(
    start_service: Any, paths: Any, tmp_path: Path
) -> None:
    start_service()
    for text in ("The spare key is under the blue pot", "Sister's birthday: 4 March", "Dentist on Tuesday"):
        request(paths, "remember", text=text)
    pieces: list[str] = []
    streamed = request(paths, "export", Handlers(piece=pieces.append), all_users=True, history=True)
    assert streamed["path"] is None and streamed["memories"] == 3 and len(pieces) >= 2
    out = tmp_path / "backup.jsonl"
    done = run_memcli(paths, "export", "--all-users", "--history", "-o", str(out), "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["path"] == str(out) and out.stat().st_mode & 0o777 == 0o600
    assert body(out) == "".join(pieces).splitlines()[1:]
    piped = run_memcli(paths, "export", "--all-users", "--history")
    assert (
        piped.returncode == 0 and piped.stdout.splitlines()[1:] == body(out) and "exported 3 memories" in piped.stderr
    )


def test_vectors_of_another_dimension_than_the_embedders_store_nothing(
    full_store: Engine, runner: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "dims.jsonl"
    export_to(full_store, out, with_vectors=True)
    records = lines_of(out)
    for record in records[1:]:
        if record["type"] == "memory":
            record["vector"] = base64.b64encode(np.ones(3, dtype=np.float32).tobytes()).decode()
    out.write_text("".join(export.line(r) for r in records), encoding="utf-8")
    monkeypatch.setenv("MEMCLI_HOME", str(tmp_path / "untouched"))
    done = runner.invoke(app, ["import", str(out), "--format", "memcli"])
    assert done.exit_code == 5 and "has a vector of 3 dimensions" in done.stderr, done.output
    assert json.loads(runner.invoke(app, ["list", "-n", "0", "--json", "--user", USER]).stdout) == []


def test_export_through_a_symlink_writes_the_file_it_names_and_keeps_the_link(
    runner: Any, fake_embedder: Any, tmp_path: Path
) -> None:
    assert runner.invoke(app, ["remember", "the spare key is under the blue pot"]).exit_code == 0
    drive = tmp_path / "other-drive"
    drive.mkdir()
    (drive / "backup.jsonl").write_text("old backup\n")
    link = tmp_path / "backup.jsonl"
    link.symlink_to(drive / "backup.jsonl")
    done = runner.invoke(app, ["export", "-o", str(link)])
    assert done.exit_code == 0, done.output
    assert link.is_symlink() and "blue pot" in (drive / "backup.jsonl").read_text()


@pytest.mark.parametrize("kind", ["fifo", "folder", "missing folder"])
def test_export_to_what_is_not_a_file_is_refused_and_left_as_it_was(
    runner: Any, fake_embedder: Any, tmp_path: Path, kind: str
) -> None:
    assert runner.invoke(app, ["remember", "the spare key is under the blue pot"]).exit_code == 0
    target = tmp_path / "target"
    if kind == "fifo":
        os.mkfifo(target)
    elif kind == "folder":
        target.mkdir()
    else:
        target = tmp_path / "nope" / "x"
    done = runner.invoke(app, ["export", "-o", str(target)])
    assert done.exit_code == 5 and done.stderr.count("\n") == 1, done.output
    if kind == "fifo":
        assert stat.S_ISFIFO(target.lstat().st_mode)
    elif kind == "folder":
        assert target.is_dir()
    else:
        assert not target.parent.exists()


def test_a_temporary_file_a_killed_export_left_is_removed_by_the_next(
    runner: Any, fake_embedder: Any, tmp_path: Path
) -> None:
    assert runner.invoke(app, ["remember", "the spare key is under the blue pot"]).exit_code == 0
    dead = subprocess.Popen(["true"])
    dead.wait()
    left = tmp_path / f".backup.jsonl.memcli-{dead.pid}.x1y2.tmp"
    left.write_text("what the killed export wrote")
    live = tmp_path / f".backup.jsonl.memcli-{os.getpid()}.x1y2.tmp"  # a writer still at work
    live.write_text("being written")
    assert runner.invoke(app, ["export", "-o", str(tmp_path / "backup.jsonl")]).exit_code == 0
    assert not left.exists() and live.exists()


def test_import_user_of_an_export_of_another_user_is_refused_not_ignored(
    full_store: Engine, runner: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "theirs.jsonl"
    export_to(full_store, out)
    monkeypatch.setenv("MEMCLI_HOME", str(tmp_path / "untouched"))
    done = runner.invoke(app, ["import", str(out), "--user", "alice"])
    assert done.exit_code == 2 and "import it without --user" in done.stderr, done.output
    assert json.loads(runner.invoke(app, ["list", "-n", "0", "--json", "--user", USER]).stdout) == []
