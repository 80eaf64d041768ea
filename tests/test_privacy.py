"""Private by default: every folder memcli makes is 0700 and every file 0600, whatever the
umask (set explicitly, not left to it); a store an older memcli left readable is tightened
when it is opened, and says so once; ``memcli doctor`` (and ``memcli stats``) warn about a
path that group or others can reach, exit 0, and ``doctor --json`` is ``DoctorReport``.
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cli_checks import ok
from conftest import given_models
from typer.testing import CliRunner

from memcli import schema
from memcli.cli import app
from memcli.config import load_settings
from memcli.library.engine import Engine
from memcli.paths import private_tree, resolve_paths, write_private


@pytest.fixture
def permissive_umask() -> Iterator[None]:
    """The umask most systems give users (022: others may read what is made)."""
    previous = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(previous)


def _exposed(root: Path) -> dict[str, str]:
    """Every path under ``root`` (root excluded) that is not 0700 (folder) / 0600 (other), with its mode."""
    found = {}
    for path in root.rglob("*"):
        mode = stat.S_IMODE(path.lstat().st_mode)
        if mode != (0o700 if path.is_dir() else 0o600):
            found[str(path.relative_to(root))] = f"{mode:04o}"
    return found


def _memcli() -> Engine:
    paths = resolve_paths()
    return Engine(load_settings(paths), paths, **given_models())


def test_the_library_makes_every_path_private_whatever_the_umask(
    memcli_home: Path, fake_embedder: Any, permissive_umask: None, tmp_path: Path
) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("I moved to Lyon in 2021.\n\nMy sister Ana is a nurse.\n", encoding="utf-8")
    engine = _memcli()
    engine.import_file(notes)
    engine.remember("I drink tea")
    assert engine.recall("where do I live", k=2)
    engine.consolidate(dry_run=True)

    assert (memcli_home / "data" / "chroma" / "chroma.sqlite3").is_file()
    assert _exposed(memcli_home) == {}


def test_journal_files_are_private_while_they_wait(
    memcli_home: Path, fake_embedder: Any, permissive_umask: None
) -> None:
    engine = _memcli()
    from memcli.memory import Memory

    note = Memory(id="0123456789abcdef", user="u", kind="note", text="pending", created_at=1.0, day="2025-01-01")
    with engine.journal.writing([note]):
        files = list(engine.paths.pending_dir.glob("*.json"))
        assert len(files) == 1
        assert stat.S_IMODE(files[0].stat().st_mode) == 0o600
        assert stat.S_IMODE(engine.paths.pending_dir.stat().st_mode) == 0o700


def test_commands_make_every_path_private(
    memcli_home: Path, runner: CliRunner, fake_embedder: Any, permissive_umask: None
) -> None:
    ok(runner.invoke(app, ["remember", "I moved to Lyon in 2021"]))
    ok(runner.invoke(app, ["recall", "Lyon"]))
    ok(runner.invoke(app, ["stats"]))
    assert _exposed(memcli_home) == {}


def test_an_older_store_is_tightened_when_opened_and_says_so_once(
    memcli_home: Path, runner: CliRunner, fake_embedder: Any
) -> None:
    ok(runner.invoke(app, ["remember", "I moved to Lyon in 2021"]))
    data = memcli_home / "data"
    for path in [data, *data.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    assert _exposed(data)

    loose = len(_exposed(data)) + 1  # and the data folder itself

    first = ok(runner.invoke(app, ["list"]))
    assert first.stderr.count(f"made {loose} files and folders under {data} private (0600/0700)") == 1
    assert str(data) in first.stderr
    assert _exposed(data) == {}
    assert "private" not in ok(runner.invoke(app, ["list"])).stderr


def test_the_tightening_notice_counts_the_lock_file_whichever_filelock_takes_it(
    memcli_home: Path, runner: CliRunner, fake_embedder: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # filelock 3.x (pyproject allows >=3.13) chmods the lock file to its mode on every
    # acquire, 4.x only on creating it: that is why a fresh clone's venv counted 11, not 12.
    import filelock

    ok(runner.invoke(app, ["remember", "I moved to Lyon in 2021"]))
    data = memcli_home / "data"
    for path in [data, *data.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    loose = len(_exposed(data)) + 1
    assert "store.lock" in _exposed(data)
    acquire = filelock.FileLock.acquire

    def acquire_as_filelock_3(self: Any, *args: Any, **kwargs: Any) -> Any:
        with contextlib.suppress(OSError):
            os.chmod(self.lock_file, 0o600)
        return acquire(self, *args, **kwargs)

    monkeypatch.setattr(filelock.FileLock, "acquire", acquire_as_filelock_3)
    first = ok(runner.invoke(app, ["list"]))
    assert f"made {loose} files and folders under {data} private (0600/0700)" in first.stderr


def test_doctor_warns_about_a_readable_path_and_exits_0(
    memcli_home: Path, runner: CliRunner, fake_embedder: Any
) -> None:
    ok(runner.invoke(app, ["remember", "I moved to Lyon in 2021"]))
    database = memcli_home / "data" / "memcli.sqlite3"
    clean = json.loads(ok(runner.invoke(app, ["doctor", "--json"])).stdout)
    assert clean["ok"] and clean["warnings"] == []

    database.chmod(0o644)
    result = ok(runner.invoke(app, ["doctor"]))
    warnings = [line for line in result.stderr.splitlines() if line.startswith("memcli: warning: ")]
    assert warnings == [
        f"memcli: warning: {database} is readable by group and others (mode 0644): chmod go-rwx {database}"
    ]
    assert f"warn\t0644\t{database}" in result.stdout.splitlines()

    report = schema.DoctorReport.model_validate_json(ok(runner.invoke(app, ["doctor", "--json", "--quiet"])).stdout)
    assert not report.ok and report.store_writable
    assert [c.name for c in report.checks if not c.ok] == ["database"]
    assert report.checked == len(report.checks) > 5


def test_doctor_counts_the_paths_under_an_exposed_folder_in_its_line(memcli_home: Path, runner: CliRunner) -> None:
    # the home private whatever the process's umask (a CLI run earlier in this process sets 077, a shell's is 022)
    memcli_home.mkdir(parents=True, exist_ok=True)
    memcli_home.chmod(0o700)
    config = memcli_home / "config"
    config.mkdir(mode=0o755)
    config.chmod(0o755)
    (config / "config.toml").write_text('user = "ana"\n', encoding="utf-8")
    (config / "config.toml").chmod(0o666)

    result = ok(runner.invoke(app, ["doctor"]))

    warnings = [line for line in result.stderr.splitlines() if line.startswith("memcli: warning: ")]
    assert warnings == [
        f"memcli: warning: {config} is readable/searchable by group and others (mode 0755), and so are 1 paths under it: "
        f"chmod -R go-rwx {config}"
    ]


def test_stats_prints_the_doctor_warnings_on_stderr(memcli_home: Path, runner: CliRunner, fake_embedder: Any) -> None:
    ok(runner.invoke(app, ["remember", "I moved to Lyon in 2021"]))
    state = memcli_home / "state"
    state.mkdir(mode=0o700)
    state.chmod(0o750)

    result = ok(runner.invoke(app, ["stats", "--json"]))

    assert json.loads(result.stdout)["memories"] == 1
    assert (
        f"memcli: warning: {state} is readable/searchable by group (mode 0750): chmod go-rwx {state}"
        in result.stderr.splitlines()
    )
    assert "warning" not in ok(runner.invoke(app, ["stats", "--json", "--quiet"])).stderr


def test_write_private_replaces_a_file_atomically_with_a_private_one(tmp_path: Path, permissive_umask: None) -> None:
    target = tmp_path / "config" / "config.toml"
    target.parent.mkdir()
    target.write_text("old\n", encoding="utf-8")
    target.chmod(0o644)

    write_private(target, 'user = "ana"\n')

    assert target.read_text(encoding="utf-8") == 'user = "ana"\n'
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    assert stat.S_IMODE(target.parent.stat().st_mode) == 0o700
    assert sorted(p.name for p in target.parent.iterdir()) == ["config.toml"]  # no temporary left


def test_private_tree_leaves_symlinks_and_private_paths_alone(tmp_path: Path) -> None:
    root = tmp_path / "root"
    (root / "sub").mkdir(parents=True)
    (root / "sub").chmod(0o755)
    (root / "sub" / "file").write_text("x", encoding="utf-8")
    (root / "sub" / "file").chmod(0o644)
    outside = tmp_path / "outside"
    outside.write_text("y", encoding="utf-8")
    outside.chmod(0o644)
    (root / "link").symlink_to(outside)
    root.chmod(0o700)

    changed = private_tree(root)

    assert sorted(p.name for p in changed) == ["file", "sub"]
    assert stat.S_IMODE(outside.stat().st_mode) == 0o644


def test_tightening_takes_bits_off_and_never_makes_a_read_only_path_writable(tmp_path: Path) -> None:
    folder = tmp_path / "data"
    folder.mkdir()
    (folder / "chroma.sqlite3").write_text("x", encoding="utf-8")
    (folder / "chroma.sqlite3").chmod(0o444)
    folder.chmod(0o555)  # chmod -R a-w on a store an older memcli made 0755/0644

    private_tree(folder)

    assert stat.S_IMODE(folder.stat().st_mode) == 0o500
    assert stat.S_IMODE((folder / "chroma.sqlite3").stat().st_mode) == 0o400
    folder.chmod(0o700)


# issue 25 §5: never write into a home someone else controls ---------------------------

OTHER_UID = 65534
"""nobody: the owner of the folders "someone else" made (root may chown to it)."""


def _error_line(result: Any, code: int) -> str:
    assert result.exit_code == code, (result.exit_code, result.stdout, result.stderr)
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr
    return lines[0]


@pytest.mark.parametrize("folder", ["", "data", "config", "state", "cache"])
def test_a_folder_others_can_write_is_refused_naming_it_and_the_fix(
    memcli_home: Path, runner: CliRunner, fake_embedder: Any, folder: str
) -> None:
    target = memcli_home / folder if folder else memcli_home
    target.mkdir(parents=True, exist_ok=True)
    target.chmod(0o777)
    for argv in (["remember", "A secret"], ["list"], ["config", "set", "user", "ana"], ["chat"]):
        line = _error_line(runner.invoke(app, argv, input="hello\n"), 12)
        assert line == (
            f"memcli: error: memcli will not use a folder that someone else controls: {target} is writable by group and others "
            f"(mode 0777): chmod 700 {target}"
        )
    assert stat.S_IMODE(target.stat().st_mode) == 0o777  # left as it was: not memcli's to change
    assert not (memcli_home / "data" / "chroma").exists() and not (memcli_home / "config" / "config.toml").exists()
    target.chmod(0o700)
    ok(runner.invoke(app, ["remember", "A secret"]))


@pytest.mark.skipif(os.geteuid() != 0, reason="only root can give a folder to another user")
@pytest.mark.parametrize("mode", [0o700, 0o777])
def test_a_folder_of_another_user_is_refused_even_by_root(
    memcli_home: Path, runner: CliRunner, fake_embedder: Any, mode: int
) -> None:
    """The issue's case: another user made MEMCLI_HOME/data (0777, or private); root, in
    process, must not write its store into it."""
    memcli_home.mkdir(mode=0o700)
    data = memcli_home / "data"
    data.mkdir(mode=mode)
    data.chmod(mode)
    os.chown(data, OTHER_UID, OTHER_UID)
    line = _error_line(runner.invoke(app, ["remember", "A secret"]), 12)
    assert (
        f"{data} belongs to uid {OTHER_UID}, not to you (uid 0)" in line
        and f"chown -R 0 {data} && chmod 700 {data}" in line
    )
    assert list(data.iterdir()) == [] and data.stat().st_uid == OTHER_UID


def test_a_group_writable_home_made_with_umask_002_is_refused(memcli_home: Path, runner: CliRunner) -> None:
    memcli_home.mkdir(mode=0o775)
    memcli_home.chmod(0o775)
    line = _error_line(runner.invoke(app, ["stats"]), 12)
    assert f"{memcli_home} is writable by group (mode 0775): chmod 700 {memcli_home}" in line


def test_doctor_and_paths_report_an_unsafe_home_and_exit_0(memcli_home: Path, runner: CliRunner) -> None:
    memcli_home.mkdir(mode=0o777)
    memcli_home.chmod(0o777)
    assert ok(runner.invoke(app, ["paths"])).stdout
    result = ok(runner.invoke(app, ["doctor"]))
    assert (
        f"memcli: warning: {memcli_home} is readable/writable/searchable by group and others (mode 0777)"
        in result.stderr
    )


def test_an_empty_memcli_home_is_an_error_not_the_default_home(
    runner: CliRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMCLI_HOME", "")
    for argv in (["list"], ["paths"], ["doctor"]):
        line = _error_line(runner.invoke(app, argv), 5)
        assert line.startswith("memcli: error: MEMCLI_HOME is set but empty")


def test_doctor_run_by_another_user_reports_and_does_not_crash(memcli_home: Path, tmp_path: Path) -> None:
    """``memcli doctor`` by a user who may not enter the home: each folder is a warning
    ("cannot be examined"), exit 0. (The check itself, as another uid needs root.)"""
    from memcli.library.doctor import check

    memcli_home.mkdir(mode=0o700)
    (memcli_home / "data").mkdir(mode=0o700)
    denied = PermissionError(13, "Permission denied")
    real_lstat, real_stat = os.lstat, os.stat

    def refuse_under(function: Any) -> Any:
        def call(path: Any, *args: Any, **kwargs: Any) -> Any:
            if str(path).startswith(str(memcli_home) + os.sep):
                raise denied
            return function(path, *args, **kwargs)

        return call

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(os, "lstat", refuse_under(real_lstat))
        patch.setattr(os, "stat", refuse_under(real_stat))
        report = check(resolve_paths())
    assert not report.ok
    unreadable = [c.name for c in report.checks if c.type == "unreadable"]
    assert {"config_dir", "data_dir", "state_dir", "cache_dir"} <= set(unreadable)
    assert any("cannot be examined by you" in w for w in report.warnings)


def test_the_sidecars_write_ahead_log_and_its_index_are_private_whatever_the_umask(
    memcli_home: Path, fake_embedder: Any, permissive_umask: None
) -> None:
    """The sidecar in WAL mode, the store held open (as the service holds it): its -wal
    (the rows as written) and -shm are 0600, as SQLite makes them with the file's mode."""
    engine = _memcli()
    engine.store.open_resident()
    try:
        engine.remember("My locker code is zebra-quartz")
        database, wal, shm = engine.paths.database_files()
        assert wal.stat().st_size > 0 and shm.is_file()
        assert {p.name: f"{stat.S_IMODE(p.stat().st_mode):04o}" for p in (database, wal, shm)} == {
            p.name: "0600" for p in (database, wal, shm)
        }
        assert _exposed(memcli_home) == {}
    finally:
        engine.store.close()
