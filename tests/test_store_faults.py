"""Storage faults get named errors: a read-only store (read commands work without writing,
recall skips reinforcement with a notice, writes exit 9 naming the path, the service
serves it instead of crash-looping) and a full device (exit 10, "no space left on ...;
nothing was stored", and then truly nothing stored, in Chroma, the recall index and the
journal, so that the same import run again stores everything).

A read-only store is made two ways: ``chmod -R a-w`` on the data folder (skipped where modes
do not stop this process: root, unless run with CAP_DAC_OVERRIDE dropped) and, as root, a read-only bind mount of it (what a backup mount
is; skipped where mounting is not allowed). A full device is a real 16 MB tmpfs filled but for
1 MB where one can be mounted (root); a device that fills in the middle of a write is an
ENOSPC raised at Chroma's, the sidecar's or the journal's write (a real one hangs
chromadb 1.5.9, see ``MemoryStore._require_room``).
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import os
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from cli_checks import assert_error, ok
from typer.testing import CliRunner

from memcli.cli import app
from memcli.errors import ExitCode
from memcli.paths import resolve_paths

NOTES = ["I moved to Lyon in 2021", "My sister Ana is a nurse in Porto", "I hike in the Alps on weekends"]


def _fingerprint(root: Path) -> dict[str, str]:
    """Every file under ``root`` and the SHA-256 of its bytes."""
    return {
        str(path.relative_to(root)): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(root.rglob("*"))
        if path.is_file()
    }


def _modes_bind() -> bool:
    """Whether a file's mode stops this process from writing it (not for root, whose
    CAP_DAC_OVERRIDE ignores modes, unless the capability was dropped)."""
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        probe = Path(folder) / "probe"
        probe.write_text("", encoding="utf-8")
        probe.chmod(0o444)
        try:
            probe.open("a").close()
        except PermissionError:
            return True
        return False


def _mount(*args: str) -> bool:
    return subprocess.run(["mount", *args], capture_output=True).returncode == 0


@pytest.fixture(params=["chmod", "mount"])
def make_read_only(request: pytest.FixtureRequest, memcli_home: Path) -> Iterator[Callable[[], Path]]:
    """Makes the test's data folder read-only when called (returns it) and writable again
    at the end of the test."""
    data = memcli_home / "data"
    undo: list[Callable[[], None]] = []

    def chmod() -> Path:
        if not _modes_bind():
            pytest.skip("this process ignores file modes (root): a chmod cannot make the store read-only")
        folders = [data, *(p for p in data.rglob("*") if p.is_dir())]
        for path in [*data.rglob("*"), data]:
            path.chmod(path.stat().st_mode & ~0o222)
        undo.append(lambda: [folder.chmod(0o700) for folder in folders])
        return data

    def mount() -> Path:
        if os.geteuid() != 0:
            pytest.skip("a read-only bind mount needs root")
        if not _mount("--bind", str(data), str(data)):
            pytest.skip("mount --bind is not allowed here")
        undo.append(lambda: subprocess.run(["umount", "--lazy", str(data)], check=True))
        if not _mount("-o", "remount,bind,ro", str(data)):
            pytest.skip("a read-only remount is not allowed here")
        return data

    yield chmod if request.param == "chmod" else mount
    for step in reversed(undo):
        step()


def _populate(runner: CliRunner) -> list[str]:
    ids = [
        ok(runner.invoke(app, ["remember", note, "--now", f"2025-01-0{i + 1}T10:00:00+00:00"])).stdout.strip()
        for i, note in enumerate(NOTES)
    ]
    return ids


# read-only ----------------------------------------------------------------------------


def test_read_commands_work_on_a_read_only_store_and_write_nothing(
    runner: CliRunner, fake_embedder: Any, make_read_only: Callable[[], Path]
) -> None:
    ids = _populate(runner)
    data = make_read_only()
    before = _fingerprint(data)

    listed = ok(runner.invoke(app, ["list", "--json"]))
    assert sorted(m["id"] for m in json.loads(listed.stdout)) == sorted(ids)
    assert "read-only store" in listed.stderr  # said once, on stderr

    shown = json.loads(ok(runner.invoke(app, ["show", ids[0], "--json"])).stdout)
    assert shown["text"] == NOTES[0]

    stats = json.loads(ok(runner.invoke(app, ["stats", "--json"])).stdout)
    assert stats["memories"] == 3

    plain = ok(runner.invoke(app, ["recall", "where did I move", "--no-reinforce", "--json"]))
    assert json.loads(plain.stdout)[0]["text"] == NOTES[0]
    assert "not reinforced" not in plain.stderr

    reinforced = ok(runner.invoke(app, ["recall", "where did I move", "--json"]))
    hits = json.loads(reinforced.stdout)
    assert hits[0]["text"] == NOTES[0]
    assert hits[0]["recall_count"] == 0
    assert "read-only store: recall not reinforced" in reinforced.stderr

    assert _fingerprint(data) == before


@pytest.mark.parametrize(
    "command",
    [
        ["remember", "a new note"],
        ["import", "NOTES_FILE"],
        ["pin", "ID"],
        ["feedback", "ID", "up"],
        ["forget", "--now", "2030-01-01T00:00:00+00:00"],
    ],
)
def test_write_commands_exit_read_only_naming_the_store(
    runner: CliRunner, fake_embedder: Any, make_read_only: Callable[[], Path], tmp_path: Path, command: list[str]
) -> None:
    ids = _populate(runner)
    notes = tmp_path / "notes.txt"
    notes.write_text("One more thing to remember.\n\nAnd another one.\n", encoding="utf-8")
    data = make_read_only()
    before = _fingerprint(data)
    argv = [{"NOTES_FILE": str(notes), "ID": ids[0]}.get(arg, arg) for arg in command]

    line = assert_error(runner.invoke(app, [*argv, "--quiet"]), ExitCode.READ_ONLY)

    assert "read-only" in line and str(data) in line
    assert _fingerprint(data) == before
    listed = json.loads(ok(runner.invoke(app, ["list", "--json", "--quiet"])).stdout)
    assert len(listed) == 3


@contextlib.contextmanager
def _fake_service(paths: Any) -> Iterator[Any]:
    """A real service with the fake models (``python tests/fakes serve``), stopped at the end."""
    from memcli.transport.client import ServiceClient

    process = subprocess.Popen(
        [sys.executable, str(Path(__file__).parent / "fakes"), "serve"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    client = ServiceClient(paths)
    try:
        deadline = time.monotonic() + 60
        while client.connect() is None and process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert process.poll() is None, process.stderr.read().decode()
        yield client, process
    finally:
        if process.poll() is None:
            client.stop()
        if process.poll() is None:
            process.kill()
        process.wait(30)
        process.stderr.close()


def test_an_immutable_chroma_file_opens_the_store_read_only_and_a_refused_note_is_not_stored_later(
    runner: CliRunner, fake_embedder: Any, memcli_home: Path
) -> None:
    _populate(runner)
    database = memcli_home / "data" / "chroma" / "chroma.sqlite3"
    if subprocess.run(["chattr", "+i", str(database)], capture_output=True).returncode != 0:
        pytest.skip("chattr +i is not allowed here (it needs root and a file system that has it)")
    try:
        listed = ok(runner.invoke(app, ["list", "--json"]))
        assert len(json.loads(listed.stdout)) == 3
        line = assert_error(runner.invoke(app, ["remember", "refused note", "--quiet"]), ExitCode.READ_ONLY)
        assert str(memcli_home / "data") in line
        assert len(json.loads(ok(runner.invoke(app, ["list", "--json", "--quiet"])).stdout)) == 3
    finally:
        subprocess.run(["chattr", "-i", str(database)], check=True)
    assert [m["text"] for m in json.loads(ok(runner.invoke(app, ["list", "--json"])).stdout)] == NOTES[::-1]


def test_completion_and_the_users_read_a_read_only_store_closed_cleanly(
    runner: CliRunner, fake_embedder: Any, make_read_only: Callable[[], Path]
) -> None:
    """A store closed cleanly (no -wal beside its sidecar, which is in WAL mode) on a
    read-only folder: TAB completion offers its users and ids, and the users are read
    without the lock, as from a writable one (SQLite cannot open a WAL database
    read-only there: it would make its -shm)."""
    from memcli.cli.completion import complete, read_candidates

    ids = _populate(runner)
    users = sorted({m["user"] for m in json.loads(ok(runner.invoke(app, ["list", "--json"])).stdout)})
    make_read_only()
    paths = resolve_paths()
    assert not Path(f"{paths.database}-wal").exists()
    assert [value for value, _ in read_candidates(paths, "user")] == users
    assert sorted(value for value, _ in complete(paths, "id", env={"MEMCLI_SERVICE": "off"})) == sorted(ids)
    from conftest import open_store

    assert open_store(paths).users_unlocked() == users


def test_a_copied_live_sidecar_without_its_shm_is_named_and_one_with_an_empty_log_is_read(
    fake_embedder: Any, memcli_home: Path, make_read_only: Callable[[], Path]
) -> None:
    """A sidecar copied from a live store (its -wal holding what the file lacks, its -shm
    left out) into a folder that cannot be written: memcli names the -wal and -shm and
    what to do, not a journal; one copied with an empty -wal is read."""
    import shutil

    from test_index import make_memcli, note

    from memcli.errors import MemcliError
    from memcli.store.sidecar import Sidecar

    engine = make_memcli()
    engine.add_memories([note(t) for t in NOTES])
    live = resolve_paths().database
    partial, emptied = memcli_home / "data" / "partial", memcli_home / "data" / "emptied"
    partial.mkdir()
    emptied.mkdir()
    engine.store.open_resident()
    try:
        engine.remember("I keep my passport in the blue drawer")  # in the -wal while the store is open
        for suffix in ("", "-wal"):
            shutil.copyfile(f"{live}{suffix}", partial / f"{live.name}{suffix}")
    finally:
        engine.store.close()
    assert (partial / f"{live.name}-wal").stat().st_size > 0
    shutil.copyfile(live, emptied / live.name)
    (emptied / f"{live.name}-wal").touch()
    make_read_only()
    with pytest.raises(MemcliError) as raised:
        Sidecar.snapshot(partial / live.name)
    assert f"{live.name}-wal" in str(raised.value) and f"{live.name}-shm" in str(raised.value)
    assert "memcli export" in str(raised.value) and "journal" not in str(raised.value)
    copy = Sidecar.snapshot(emptied / live.name)
    try:
        assert sorted(text for _, text, _, _ in copy.copies()) == sorted(
            [*NOTES, "I keep my passport in the blue drawer"]
        )
    finally:
        copy.close()


def test_a_service_serves_a_read_only_store_and_refuses_its_writes(
    memcli_home: Path, monkeypatch: pytest.MonkeyPatch, make_read_only: Callable[[], Path]
) -> None:
    from memcli.errors import ReadOnlyStoreError
    from memcli.transport.client import Handlers

    monkeypatch.delenv("MEMCLI_SERVICE")
    paths = resolve_paths()
    base = {"env": {"MEMCLI_LOCK_TIMEOUT": "5"}, "now": None, "model": None}
    with _fake_service(paths) as (client, _):
        for note in NOTES:
            client.request({**base, "verb": "remember", "args": {"text": note}}, Handlers())
    make_read_only()
    with _fake_service(paths) as (client, process):
        notices: list[str] = []
        listed = client.request({**base, "verb": "list", "args": {}}, Handlers(notice=notices.append))
        assert len(listed) == 3
        hits = client.request(
            {**base, "verb": "recall", "args": {"query": "where did I move"}}, Handlers(notice=notices.append)
        )
        assert hits[0]["text"] == NOTES[0] and hits[0]["recall_count"] == 0
        assert "memcli: read-only store: recall not reinforced" in notices
        with pytest.raises(ReadOnlyStoreError):
            client.request({**base, "verb": "remember", "args": {"text": "new"}}, Handlers())
        assert process.poll() is None  # still serving
        assert client.request({**base, "verb": "stats", "args": {}}, Handlers())["memories"] == 3


# disk full ----------------------------------------------------------------------------


def _counts(memcli_home: Path) -> tuple[int, int, int]:
    """(memories in Chroma, rows of the recall index, journal files): read directly."""
    from memcli.store.store import MemoryStore

    paths = resolve_paths()
    store = MemoryStore(paths, 5)
    with store.transaction():
        chroma = int(store._col.count())
    db = sqlite3.connect(paths.database)
    try:
        index = db.execute("SELECT count(*) FROM recall_index").fetchone()[0]
    finally:
        db.close()
    pending = len(list(paths.pending_dir.glob("*.json"))) if paths.pending_dir.exists() else 0
    return chroma, index, pending


def _enospc(*_: Any, **__: Any) -> None:
    raise OSError(errno.ENOSPC, "No space left on device")


def _little_room(patch: pytest.MonkeyPatch, free: int) -> None:
    """Make the store's device report ``free`` bytes available."""
    import memcli.store.space as store_module

    real = os.statvfs

    def statvfs(path: Any) -> Any:
        found = real(path)
        return os.statvfs_result((found.f_bsize, 1, found.f_blocks, free, free, *found[5:]))

    patch.setattr(store_module.os, "statvfs", statvfs)


@pytest.mark.parametrize("command", [["import", "NOTES_FILE"], ["remember", "a note that does not fit"]])
def test_a_write_that_does_not_fit_stores_nothing(
    runner: CliRunner,
    fake_embedder: Any,
    memcli_home: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    command: list[str],
) -> None:
    _populate(runner)
    notes = tmp_path / "notes.txt"
    notes.write_text(
        "\n\n".join(f"Imported paragraph number {i} about topic {i * 7}." for i in range(40)), encoding="utf-8"
    )
    argv = [str(notes) if arg == "NOTES_FILE" else arg for arg in command]
    with monkeypatch.context() as patch:
        _little_room(patch, 100 * 1024)
        line = assert_error(runner.invoke(app, argv), ExitCode.DISK_FULL)

    assert line.startswith("memcli: error: no space left on ") and line.endswith("; nothing was stored")
    assert "MiB are free" in line
    assert _counts(memcli_home) == (3, 3, 0)
    ok(runner.invoke(app, argv))
    assert _counts(memcli_home)[0] == (43 if command[0] == "import" else 4)


@pytest.mark.parametrize("where", ["chroma", "sidecar"])
def test_a_device_that_fills_during_an_import_leaves_every_index_consistent(
    runner: CliRunner,
    fake_embedder: Any,
    memcli_home: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    where: str,
) -> None:
    _populate(runner)
    notes = tmp_path / "notes.txt"
    notes.write_text(
        "\n\n".join(f"Imported paragraph number {i} about topic {i * 7}." for i in range(40)), encoding="utf-8"
    )
    import chromadb.api.models.Collection as collection_module

    from memcli.store import recall_index as index_module

    with monkeypatch.context() as patch:
        if where == "chroma":
            real_add = collection_module.Collection.add

            def add_then_fail(
                self: Any, *args: Any, **kwargs: Any
            ) -> None:  # Chroma took the batch, then the device filled
                real_add(self, *args, **kwargs)
                _enospc()

            patch.setattr(collection_module.Collection, "add", add_then_fail)
        else:
            patch.setattr(index_module.RecallIndex, "put", _enospc)
        result = json.loads(ok(runner.invoke(app, ["import", str(notes), "--json"])).stdout)

    # Chroma, the record, took the whole batch: the import stored everything, and says so.
    assert (result["added"], result["failed"], result["error"]) == (40, 0, None)
    chroma, index, pending = _counts(memcli_home)
    assert (chroma, index, pending) == (
        43,
        3,
        0,
    )  # the index's part of the write was rolled back, and marked to be checked
    again = json.loads(ok(runner.invoke(app, ["import", str(notes), "--json", "--quiet"])).stdout)
    assert (again["added"], again["skipped"]) == (0, 40)
    listed = json.loads(ok(runner.invoke(app, ["list", "--limit", "0", "--json", "--quiet"])).stdout)
    assert len(listed) == 43
    assert _counts(memcli_home) == (43, 43, 0)


def _fills_after_first_batch(patch: pytest.MonkeyPatch) -> None:
    """The device reports room until Chroma has taken one batch, none after it."""
    import chromadb.api.models.Collection as collection_module

    import memcli.store.space as store_module

    real_add, real_statvfs = collection_module.Collection.add, os.statvfs
    added: list[int] = []

    def add(self: Any, *args: Any, **kwargs: Any) -> None:
        real_add(self, *args, **kwargs)
        added.append(1)

    def statvfs(path: Any) -> Any:
        found = real_statvfs(path)
        free = 0 if added else found.f_bavail * found.f_frsize  # in bytes: the fake's blocks are 1 byte
        return os.statvfs_result((found.f_bsize, 1, found.f_blocks, free, free, *found[5:]))

    patch.setattr(collection_module.Collection, "add", add)
    patch.setattr(store_module.os, "statvfs", statvfs)


def test_an_import_stopped_by_a_full_device_counts_what_it_stored_and_finishes_when_run_again(
    runner: CliRunner, fake_embedder: Any, memcli_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _populate(runner)
    notes = tmp_path / "notes.txt"
    notes.write_text(
        "\n\n".join(f"Imported paragraph number {i} about topic {i * 7}." for i in range(100)), encoding="utf-8"
    )
    with monkeypatch.context() as patch:
        _fills_after_first_batch(patch)
        done = runner.invoke(app, ["import", str(notes), "--json"])
    assert done.exit_code == ExitCode.DISK_FULL, (done.stdout, done.stderr)
    result = json.loads(done.stdout)  # --json reports it even though the import stopped
    assert (result["found"], result["added"], result["skipped"], result["failed"]) == (100, 64, 0, 36)
    line = done.stderr.strip()
    assert "\n" not in line and line.startswith("memcli: error: no space left on ")
    assert "64 of 100 memories are stored (64 new, 0 already stored), 36 are not" in line and result["error"] in line
    assert _counts(memcli_home) == (67, 67, 0)  # what the message says, nothing half written

    again = json.loads(ok(runner.invoke(app, ["import", str(notes), "--json", "--quiet"])).stdout)
    assert (again["added"], again["skipped"], again["failed"]) == (36, 64, 0)
    texts = [m["text"] for m in json.loads(ok(runner.invoke(app, ["list", "-n", "0", "--json", "--quiet"])).stdout)]
    assert len(texts) == len(set(texts)) == 103
    assert _counts(memcli_home) == (103, 103, 0)


def test_an_import_the_device_clearly_has_no_room_for_is_refused_before_it_starts(
    runner: CliRunner, fake_embedder: Any, memcli_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memcli.store.space import room_measured

    _populate(runner)
    notes = tmp_path / "notes.txt"
    notes.write_text(
        "\n\n".join(f"Imported paragraph number {i} about topic {i * 7}." for i in range(2000)), encoding="utf-8"
    )
    import chromadb.api.models.Collection as collection_module

    calls: list[int] = []
    # Room for a batch (the batches' own check passes), not for the whole file by the measured figures.
    free = room_measured(2000, 128, 2000 * 45) // 2
    with monkeypatch.context() as patch:
        patch.setattr(collection_module.Collection, "add", lambda *a, **k: calls.append(1))
        _little_room(patch, free)
        line = assert_error(runner.invoke(app, ["import", str(notes)]), ExitCode.DISK_FULL)
        refused = runner.invoke(app, ["import", str(notes), "--json"])
    assert "the import's 2000 new memories need about" in line and line.endswith("; nothing was stored")
    assert calls == []
    assert refused.exit_code == ExitCode.DISK_FULL
    result = json.loads(refused.stdout)
    assert (result["added"], result["skipped"], result["failed"]) == (0, 0, 2000) and result["error"] in line
    assert _counts(memcli_home) == (3, 3, 0)


def test_a_full_device_during_remember_leaves_nothing_journaled_or_stored(
    runner: CliRunner, fake_embedder: Any, memcli_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _populate(runner)
    import memcli.store.journal as journal_module

    with monkeypatch.context() as patch:
        patch.setattr(journal_module.json, "dump", _enospc)
        line = assert_error(runner.invoke(app, ["remember", "a note for a full disk"]), ExitCode.DISK_FULL)
    assert line.endswith("; nothing was stored")
    assert _counts(memcli_home) == (3, 3, 0)
    ok(runner.invoke(app, ["remember", "a note for a full disk"]))
    assert _counts(memcli_home) == (4, 4, 0)


@pytest.fixture
def small_device(memcli_home: Path) -> Iterator[Path]:
    """``memcli_home`` on a 16 MB tmpfs of its own (root only; skipped where it cannot be mounted)."""
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    memcli_home.mkdir(parents=True, exist_ok=True)
    if not _mount(
        "-t", "tmpfs", "-o", "size=16m,mode=0700", "tmpfs", str(memcli_home)
    ):  # a tmpfs root is 1777 else: refused (exit 12)
        pytest.skip("mounting a tmpfs is not allowed here")
    try:
        yield memcli_home
    finally:
        subprocess.run(["umount", "--lazy", str(memcli_home)], check=True)  # Chroma's Rust core may still hold a file


def test_a_really_full_device_is_named_and_nothing_is_stored(
    runner: CliRunner, fake_embedder: Any, small_device: Path, tmp_path: Path
) -> None:
    _populate(runner)
    notes = tmp_path / "notes.txt"
    notes.write_text(
        "\n\n".join(f"Imported paragraph {i}: " + "lorem ipsum dolor " * 20 for i in range(300)), encoding="utf-8"
    )
    filler = small_device / "filler"
    room = os.statvfs(small_device)
    filler.write_bytes(b"\0" * max(0, room.f_bavail * room.f_frsize - 1024 * 1024))

    line = assert_error(runner.invoke(app, ["import", str(notes)]), ExitCode.DISK_FULL)

    assert f"no space left on tmpfs (mounted on {small_device})" in line and line.endswith("nothing was stored")
    filler.unlink()
    assert _counts(small_device) == (3, 3, 0)
    result = json.loads(ok(runner.invoke(app, ["import", str(notes), "--json", "--quiet"])).stdout)
    assert result["added"] == 300
    assert _counts(small_device) == (303, 303, 0)


def test_a_sidecar_upgrade_that_does_not_fit_leaves_reads_working_and_is_done_once_there_is_room(
    runner: CliRunner, fake_embedder: Any, small_device: Path
) -> None:
    """A sidecar of schema 1 on a full device: its upgrade (a copy of the history) does not
    fit even in the reserve given back, and fails half written, leaving a journal that a
    read-only reader cannot roll back. Reads still work (from the copy), a write exits 10
    naming the full device (not "not a memcli database"), and the upgrade is made at the
    first opening with room."""
    ids = _populate(runner)
    database = resolve_paths().database
    db = sqlite3.connect(database)
    columns = "memory_id, user, kind, event, old_text, new_text, at, source_ids, related_id"
    with db:
        db.execute("ALTER TABLE history RENAME TO schema2")
        db.execute("DROP INDEX history_by_user")
        db.execute("DROP INDEX history_by_related")
        db.execute(
            "CREATE TABLE history (seq INTEGER PRIMARY KEY AUTOINCREMENT, memory_id TEXT NOT NULL, user TEXT NOT NULL,"
            " kind TEXT NOT NULL, event TEXT NOT NULL, old_text TEXT NOT NULL, new_text TEXT NOT NULL, at REAL NOT NULL,"
            " source_ids TEXT NOT NULL, related_id TEXT NOT NULL, UNIQUE (memory_id, event, old_text, new_text))"
        )
        db.execute("CREATE INDEX history_by_user ON history (user, seq)")
        db.execute(f"INSERT INTO history ({columns}) SELECT {columns} FROM schema2")
        db.execute("DROP TABLE schema2")
        # enough history that its copy needs more than the reserve gives back to open (``OPEN_ROOM``)
        db.executemany(
            f"INSERT INTO history ({columns}) VALUES (?, 'u', 'note', 'ADD', '', ?, 1.0, '[]', '')",
            [(f"m{i}", f"an old event {i} " + "of some length " * 12) for i in range(8000)],
        )
        db.execute("PRAGMA user_version = 1")
    db.execute("VACUUM")
    events = db.execute("SELECT count(*) FROM history").fetchone()[0]
    db.close()
    filler = small_device / "filler"
    room = os.statvfs(small_device)
    filler.write_bytes(b"\0" * max(0, room.f_bavail * room.f_frsize - 64 * 1024))

    listed = ok(runner.invoke(app, ["list", "--json"]))
    assert [m["id"] for m in json.loads(listed.stdout)] == ids[::-1]
    assert "not even to open the store" in listed.stderr
    line = assert_error(runner.invoke(app, ["remember", "a note for a full disk"]), ExitCode.DISK_FULL)
    assert "no space left on" in line and "not a memcli database" not in line
    assert [m["id"] for m in json.loads(ok(runner.invoke(app, ["list", "--json"])).stdout)] == ids[::-1]

    filler.unlink()
    assert [m["id"] for m in json.loads(ok(runner.invoke(app, ["list", "--json"])).stdout)] == ids[::-1]
    db = sqlite3.connect(database)
    try:
        assert db.execute("PRAGMA user_version").fetchone()[0] == 2
        assert db.execute("SELECT count(*) FROM history").fetchone()[0] == events
    finally:
        db.close()


# a full device: reads and deletes work, writes exit 10 -------------------------------------


def test_a_transaction_that_sqlite_rolled_back_for_a_full_database_raises_the_full_database() -> None:
    """SQLITE_FULL rolls the transaction back by itself: what is raised is "database or disk
    is full" (a DiskFullError once the store sees it), not the "cannot rollback - no
    transaction is active" of a second ROLLBACK."""
    from memcli.store.db import atomic

    db = sqlite3.connect(":memory:", isolation_level=None)
    db.execute("CREATE TABLE t (x BLOB)")
    db.execute("PRAGMA max_page_count = 3")
    with pytest.raises(sqlite3.OperationalError, match="database or disk is full"), atomic(db):
        db.execute("INSERT INTO t VALUES (?)", (b"x" * 100_000,))
    assert not db.in_transaction
    with atomic(db):
        db.execute("INSERT INTO t VALUES (?)", (b"small",))
    assert db.execute("SELECT count(*) FROM t").fetchone()[0] == 1


def _full_sidecar(patch: pytest.MonkeyPatch) -> None:
    """The sidecar's writes of a memory's state fail as SQLite fails on a device without a
    byte free ("database or disk is full", raised at the write inside its transaction)."""
    from memcli.store import recall_index as index_module

    def full(*_: Any, **__: Any) -> None:
        raise sqlite3.OperationalError("database or disk is full")

    patch.setattr(index_module.RecallIndex, "set_state", full)


def test_a_recall_whose_reinforcement_meets_a_full_database_still_answers(
    runner: CliRunner, fake_embedder: Any, memcli_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ids = _populate(runner)
    with monkeypatch.context() as patch:
        _full_sidecar(patch)
        done = ok(runner.invoke(app, ["recall", "where did I move", "-k", "3"]))
        assert ids[0] in done.stdout
        assert "recall not reinforced" in done.stderr and "memcli: error" not in done.stderr
        pinned = runner.invoke(app, ["pin", ids[1]])  # a write meeting it exits 10, not 1 ("cannot rollback")
        assert pinned.exit_code == ExitCode.DISK_FULL
        assert pinned.stderr.strip().splitlines()[-1].startswith("memcli: error: no space left on ")
    assert len(json.loads(ok(runner.invoke(app, ["list", "--json"])).stdout)) == 3


def _full_device(patch: pytest.MonkeyPatch) -> None:
    """The store's device reports no byte free but what the store gave back of its reserve
    (what memcli asks before writing, and before deleting)."""
    import memcli.store.space as space_module

    real = os.statvfs

    def statvfs(path: Any) -> Any:
        found = real(path)
        given = space_module.RESERVE - space_module.reserve_bytes(Path(path))
        return os.statvfs_result((found.f_bsize, 1, found.f_blocks, given, given, *found[5:]))

    patch.setattr(space_module.os, "statvfs", statvfs)


def test_on_a_full_device_reads_and_deletes_work_and_writes_exit_10(
    runner: CliRunner, fake_embedder: Any, memcli_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memcli.store.space import RESERVE, RESERVE_FILE

    ids = _populate(runner)
    reserve = memcli_home / "data" / RESERVE_FILE
    assert reserve.stat().st_size == RESERVE and oct(reserve.stat().st_mode & 0o777) == "0o600"
    with monkeypatch.context() as patch:
        _full_device(patch)
        recalled = ok(runner.invoke(app, ["recall", "where did I move"]))
        assert ids[0] in recalled.stdout and "recall not reinforced" in recalled.stderr
        for read in (["list"], ["show", ids[1]], ["stats"], ["export", "-o", str(tmp_path / "export.jsonl")]):
            ok(runner.invoke(app, read))
        for write in (["pin", ids[1]], ["remember", "a new note"], ["edit", ids[1], "--importance", "0.9"]):
            line = assert_error(runner.invoke(app, write), ExitCode.DISK_FULL)
            assert line.startswith("memcli: error: no space left on ")

        deleted = ok(runner.invoke(app, ["delete", ids[0], "--yes"]))
        assert "used 4.00 MiB of the store's reserve of space" in deleted.stderr
        assert reserve.stat().st_size == 0  # given back to the device for the delete
        assert_error(runner.invoke(app, ["show", ids[0]]), ExitCode.NOT_FOUND)
        purged = json.loads(ok(runner.invoke(app, ["forget", "--purge", "--now", "2040-01-01", "--json"])).stdout)
        assert purged["purged"] == 2
        assert json.loads(ok(runner.invoke(app, ["stats", "--json"])).stdout)["memories"] == 0
    ok(runner.invoke(app, ["list"]))  # room again: the reserve is taken again
    assert reserve.stat().st_size == RESERVE
    ok(runner.invoke(app, ["remember", "a note once there is room"]))


def test_purge_user_works_on_a_full_device(
    runner: CliRunner, fake_embedder: Any, memcli_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _populate(runner)
    ok(runner.invoke(app, ["remember", "a note of someone else", "--user", "other"]))
    with monkeypatch.context() as patch:
        _full_device(patch)
        result = json.loads(ok(runner.invoke(app, ["purge-user", "other", "--yes", "--json"])).stdout)
        assert result["purged"] == 1
    assert _counts(memcli_home) == (3, 3, 0)


def test_a_store_whose_device_is_too_full_to_open_chroma_reads_from_its_copy(
    runner: CliRunner, fake_embedder: Any, memcli_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Chroma opens with a journal: on a device without a byte free it cannot open at all.
    Once the reserve given back does not help either, the store is read from the copy the
    recall index keeps, reads work, and a write or a delete exits 10 saying why."""
    from memcli.store.store import MemoryStore

    ids = _populate(runner)
    with monkeypatch.context() as patch:
        _full_device(patch)

        def cannot_open(self: Any) -> Any:
            raise sqlite3.OperationalError("database or disk is full")

        patch.setattr(MemoryStore, "_open_collection", cannot_open)
        listed = ok(runner.invoke(app, ["list", "--json"]))
        assert [m["id"] for m in json.loads(listed.stdout)] == ids[::-1]
        assert "not even to open the store" in listed.stderr
        ok(runner.invoke(app, ["recall", "where did I move"]))
        line = assert_error(runner.invoke(app, ["delete", ids[0], "--yes"]), ExitCode.DISK_FULL)
        assert "free some space on the device to write or delete" in line
    assert _counts(memcli_home) == (3, 3, 0)


def test_a_service_starts_read_mostly_on_a_full_device_and_says_why(
    memcli_home: Path, monkeypatch: pytest.MonkeyPatch, small_device: Path
) -> None:
    from memcli.transport.client import Handlers, ServiceClient

    monkeypatch.delenv("MEMCLI_SERVICE")
    paths = resolve_paths()
    base = {"env": {"MEMCLI_LOCK_TIMEOUT": "5"}, "now": None, "model": None}
    with _fake_service(paths) as (client, _):
        ids = [
            client.request({**base, "verb": "remember", "args": {"text": note}}, Handlers())["memory"]["id"]
            for note in NOTES
        ]
    filler = small_device / "filler"
    descriptor = os.open(filler, os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        for block in (65536, 512, 1):  # every byte of the device
            with contextlib.suppress(OSError):
                while True:
                    os.write(descriptor, b"\0" * block)
    finally:
        os.close(descriptor)
    with _fake_service(paths) as (client, process):
        status = ServiceClient(paths).status()
        assert "no space left on" in status["read_mostly"]
        assert "read-mostly: no space left on" in paths.log_file.read_text()
        notices: list[str] = []
        hits = client.request(
            {**base, "verb": "recall", "args": {"query": "where did I move"}}, Handlers(notice=notices.append)
        )
        assert hits[0]["text"] == NOTES[0]
        client.request({**base, "verb": "delete", "args": {"id": ids[0]}}, Handlers(notice=notices.append))
        listed = client.request({**base, "verb": "list", "args": {}}, Handlers())
        assert [m["text"] for m in listed] == NOTES[:0:-1]
        assert process.poll() is None
    filler.unlink()


def test_a_recall_whose_window_vectors_cannot_be_stored_still_answers(
    runner: CliRunner, fake_embedder: Any, memcli_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    turns = tmp_path / "turns.jsonl"
    turns.write_text(
        "".join(
            json.dumps(
                {"role": "user", "content": f"turn {i} about the garden {i * 3}", "timestamp": f"2025-01-01T10:0{i}:00"}
            )
            + "\n"
            for i in range(6)
        ),
        encoding="utf-8",
    )
    ok(runner.invoke(app, ["import", str(turns)]))
    db = sqlite3.connect(resolve_paths().database)
    with db:
        db.execute("UPDATE recall_index SET window_vector = NULL")  # windows left to fill, as a write leaves them
    db.close()
    from memcli.store import recall_index as index_module

    def full(*_: Any, **__: Any) -> None:
        raise sqlite3.OperationalError("database or disk is full")

    with monkeypatch.context() as patch:
        patch.setattr(index_module.RecallIndex, "fill_windows", full)
        done = ok(runner.invoke(app, ["recall", "garden 9", "-k", "2", "--no-reinforce"]))
    assert "turn 3 about the garden 9" in done.stdout
    assert "window vectors not stored" in done.stderr
    ok(runner.invoke(app, ["recall", "garden 9", "-k", "2"]))
    db = sqlite3.connect(resolve_paths().database)
    assert db.execute("SELECT count(*) FROM recall_index WHERE window_vector IS NULL").fetchone()[0] == 0
    db.close()


def test_a_resident_store_opened_from_its_copy_opens_chroma_again_once_there_is_room(
    runner: CliRunner, fake_embedder: Any, memcli_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The service's store, opened on a device too full for Chroma, serves reads from its
    copy and refuses deletes with exit 10; once there is room its next transaction opens
    Chroma (the file lock held throughout), and a delete works."""
    from memcli.errors import DiskFullError
    from memcli.store.store import MemoryStore

    ids = _populate(runner)
    store = MemoryStore(resolve_paths(), 5)
    try:
        with monkeypatch.context() as patch:
            _full_device(patch)

            def cannot_open(self: Any) -> Any:
                raise sqlite3.OperationalError("database or disk is full")

            patch.setattr(MemoryStore, "_open_collection", cannot_open)
            store.open_resident()
            assert store.full_reason and "no space left on" in store.space_problem()
            assert len(store.memories()) == 3
            with pytest.raises(DiskFullError):
                store.delete([ids[0]])
        store.delete([ids[0]])
        assert not store.full_reason and store.space_problem() == ""
        assert store.count() == 2
    finally:
        store.close()
    assert _counts(memcli_home) == (2, 2, 0)


# the sidecar's write-ahead log counted ---------------------------------------------------


def _held_open_with_a_large_log(fake_embedder: Any) -> Any:
    """An engine whose store is held open (as the service holds it), three notes in it, and
    the sidecar's -wal grown to about 16 MiB while its file stays small (no checkpoint)."""
    from test_index import make_memcli, note

    engine = make_memcli()
    engine.add_memories([note(t) for t in NOTES])
    engine.store.open_resident()
    db = engine.store.sidecar._db
    db.execute("PRAGMA wal_autocheckpoint = 0")
    db.execute("CREATE TABLE padding (b BLOB)")
    db.execute("INSERT INTO padding VALUES (randomblob(8 << 20))")
    db.execute("DROP TABLE padding")
    wal = resolve_paths().database_files()[1]
    assert wal.stat().st_size > 8 * resolve_paths().database.stat().st_size
    return engine


def _sidecar_bytes() -> int:
    return sum(p.stat().st_size for p in resolve_paths().database_files() if p.exists())


def test_stats_counts_the_sidecars_write_ahead_log_in_the_store_size(fake_embedder: Any) -> None:
    engine = _held_open_with_a_large_log(fake_embedder)
    try:
        paths = resolve_paths()
        chroma = sum(p.stat().st_size for p in paths.store_dir.rglob("*") if p.is_file())
        assert engine.stats()["store_bytes"] == chroma + _sidecar_bytes()
    finally:
        engine.store.close()


def test_a_delete_on_a_short_device_sizes_its_pages_with_the_sidecars_write_ahead_log(
    fake_embedder: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A page of deletes takes no more memories than the room takes at what the store's
    files (the sidecar's -wal among them) come to a memory."""
    from memcli.store.space import OPEN_ROOM

    engine = _held_open_with_a_large_log(fake_embedder)
    try:
        free = OPEN_ROOM + (20 << 20)
        monkeypatch.setattr(engine.store, "free_bytes", lambda: free)
        files = _sidecar_bytes() + (resolve_paths().store_dir / "chroma.sqlite3").stat().st_size
        with engine.store.transaction():
            page = engine.store.delete_page()
        assert 1 <= page <= (free - OPEN_ROOM) // (files // len(NOTES))
    finally:
        engine.store.close()


def test_a_compaction_counts_the_sidecars_write_ahead_log_in_the_room_it_needs(
    fake_embedder: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memcli.errors import DiskFullError
    from memcli.store.space import OPEN_ROOM

    engine = _held_open_with_a_large_log(fake_embedder)
    try:
        paths = resolve_paths()
        files = [paths.database, *engine.store.backend.local_files()]
        room = max(f.stat().st_size for f in files) + OPEN_ROOM  # enough for any one file without the log
        assert room < _sidecar_bytes() + OPEN_ROOM
        monkeypatch.setattr(engine.store, "free_bytes", lambda: room)
        with pytest.raises(DiskFullError, match="compacting needs"):
            engine.store.compact()
    finally:
        engine.store.close()
