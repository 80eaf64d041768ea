"""Supersession at write time looks its candidates up in the statements kept beside the
recall index (``memcli.store.statements``) instead of reading every memory of the user,
with the same results; a store whose statements are missing or were read under other
rules is read again off the request (``MemoryStore.fill_statements``), and the scan serves
until then."""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from cli_checks import ok, remember_at, show_json
from conftest import given_models, open_store
from typer.testing import CliRunner

from memcli.cli import app
from memcli.config import home_paths, load_settings
from memcli.dates import clock_from_env
from memcli.library.engine import Engine
from memcli.store import statements
from memcli.store.recall_index import RecallIndex
from memcli.store.statements import Said

DATA = Path(__file__).parent / "data" / "changes"

CHANGES = [
    ("I live in Leeds.", "I moved from Leeds to York last month."),
    ("I take levothyroxine 50 mcg every morning.", "The GP raised my levo to 75 mcg."),
    ("I drink two cups of coffee every morning.", "I stopped drinking coffee."),
    ("I work as a nurse at St Mary's hospital.", "I started a new job as a paramedic with the ambulance service."),
    ("I'm a member of the Riverside climbing gym.", "I cancelled my Riverside climbing gym membership."),
    ("My boyfriend is called Tom.", "Tom and I broke up."),
    ("我住在杭州。", "我上个月搬到了苏州。"),
    ("我每天喝咖啡。", "我不再喝咖啡了。"),
]


def _sidecar() -> sqlite3.Connection:
    paths = home_paths(Path(os.environ["MEMCLI_HOME"]))
    return sqlite3.connect(paths.database)


def _no_scan(monkeypatch: pytest.MonkeyPatch) -> None:
    """Candidates are not found by reading the user's rows: no read of every row is allowed."""

    def scan(self: RecallIndex, user: str, kinds: Any, any_of: Any = (), all_of: Any = ()) -> Any:
        raise AssertionError("supersession read every memory of the user")

    monkeypatch.setattr(RecallIndex, "current_holding", scan)


@pytest.mark.parametrize(("older", "newer"), CHANGES)
def test_remember_finds_what_it_supersedes_without_reading_every_memory(
    runner: CliRunner, fake_embedder: Any, monkeypatch: pytest.MonkeyPatch, older: str, newer: str
) -> None:
    _no_scan(monkeypatch)
    remember_at(runner, monkeypatch, "2024-01-01T09:00:00", "I parked on level 3.")
    first = remember_at(runner, monkeypatch, "2024-06-01T09:00:00", older)
    second = remember_at(runner, monkeypatch, "2025-01-01T09:00:00", newer)
    assert show_json(runner, first)["superseded_by"] == second


def _forget_statements() -> None:
    """The store as a memcli before the statements tables left it: none kept, no user covered."""
    with _sidecar() as db:
        db.execute("DELETE FROM said_terms")
        db.execute("DELETE FROM said")
        db.execute("DELETE FROM said_rules")


def _fill() -> tuple[int, float]:
    store = open_store(home_paths(Path(os.environ["MEMCLI_HOME"])))
    return store.fill_statements(page=2)


def test_a_store_without_statements_supersedes_by_reading_until_they_are_filled(
    runner: CliRunner, fake_embedder: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    remember_at(runner, monkeypatch, "2024-01-01T09:00:00", "I parked on level 3.")
    older = remember_at(runner, monkeypatch, "2024-02-01T09:00:00", "I live in Bristol.")
    remember_at(runner, monkeypatch, "2024-03-01T09:00:00", "I take ramipril 5 mg.")
    _forget_statements()
    newer = remember_at(runner, monkeypatch, "2025-01-01T09:00:00", "We moved to Cardiff last weekend.")
    assert show_json(runner, older)["superseded_by"] == newer
    read, _ = _fill()
    assert read == 4  # page by page: 2, then 2
    with _sidecar() as db:
        assert db.execute("SELECT count(*) FROM said").fetchone()[0] == 4
    _no_scan(monkeypatch)
    dose = remember_at(runner, monkeypatch, "2025-02-01T09:00:00", "Ramipril upped to 10 mg today.")
    assert show_json(runner, dose)["superseded_by"] is None
    assert _fill()[0] == 0  # every user covered: nothing to read


def test_consolidate_fills_the_statements_of_a_store_used_without_a_service(
    runner: CliRunner, fake_embedder: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    remember_at(runner, monkeypatch, "2024-01-01T09:00:00", "I parked on level 3.")
    older = remember_at(runner, monkeypatch, "2024-02-01T09:00:00", "I live in Bristol.")
    _forget_statements()
    monkeypatch.setenv("MEMCLI_NOW", "2024-02-02T03:00:00")
    ok(runner.invoke(app, ["consolidate", "-q"]))
    with _sidecar() as db:
        assert db.execute("SELECT count(*) FROM said").fetchone()[0] == 2
    _no_scan(monkeypatch)
    newer = remember_at(runner, monkeypatch, "2025-01-01T09:00:00", "We moved to Cardiff last weekend.")
    assert show_json(runner, older)["superseded_by"] == newer


def test_statements_read_under_other_rules_are_read_again(
    runner: CliRunner, fake_embedder: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    older = remember_at(runner, monkeypatch, "2024-02-01T09:00:00", "I live in Bristol.")
    with _sidecar() as db:
        db.execute("UPDATE said SET statements = '[]', terms = '[]'")
        db.execute("DELETE FROM said_terms")
        db.execute("UPDATE said_rules SET rules = 'older rules'")
    newer = remember_at(runner, monkeypatch, "2025-01-01T09:00:00", "We moved to Cardiff last weekend.")
    assert show_json(runner, older)["superseded_by"] == newer  # not covered: the scan reads the store
    assert _fill()[0] == 2
    with _sidecar() as db:
        (rules,) = db.execute("SELECT rules FROM said_rules").fetchone()
        kept = dict(db.execute("SELECT memory_id, statements FROM said"))
    assert rules == statements.rules_version()
    assert json.loads(kept[older])[0][:2] == ["residence", "bristol"]


def test_a_change_of_the_rules_uncovers_every_user(monkeypatch: pytest.MonkeyPatch) -> None:
    db = sqlite3.connect(":memory:")
    db.executescript(statements.SCHEMA)
    said = Said(db)
    said.cover(["sam"])
    assert said.covers("sam")
    monkeypatch.setattr(statements, "rules_version", lambda: "another version")
    assert not said.covers("sam")


def test_the_rules_version_of_an_install_without_sources(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Bytecode only (no ``.py`` beside it): the version falls back to memcli's, per module."""
    with_sources = statements.rules_version()
    statements.rules_version.cache_clear()
    monkeypatch.setattr(statements.importlib.resources, "files", lambda package: tmp_path)
    try:
        without = statements.rules_version()
    finally:
        statements.rules_version.cache_clear()
    assert without != with_sources
    assert len(without) == 16


def test_deleting_editing_and_purging_keep_the_statements_with_their_memory(
    runner: CliRunner, fake_embedder: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    kept = remember_at(runner, monkeypatch, "2024-01-01T09:00:00", "I live in Bristol.")
    edited = remember_at(runner, monkeypatch, "2024-02-01T09:00:00", "I take ramipril 5 mg.")
    deleted = remember_at(runner, monkeypatch, "2024-03-01T09:00:00", "I'm vegetarian.")
    ok(runner.invoke(app, ["edit", edited, "--text", "My sister takes ramipril."]))
    ok(runner.invoke(app, ["delete", deleted, "--yes"]))
    with _sidecar() as db:
        said = dict(db.execute("SELECT memory_id, statements FROM said"))
        terms = {t for (t,) in db.execute("SELECT term FROM said_terms")}
    assert set(said) == {kept, edited}
    assert json.loads(said[edited]) == []
    assert "@dose:rami" not in terms and "@diet" not in terms and "w:vegetarian" not in terms
    assert "@residence" in terms


def test_the_lookup_gives_the_scans_results_on_the_changes_corpus(
    fake_embedder: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The notes of three sets remembered at their dates by one ``Engine`` per home, on
    a resident store, as the service remembers (a ``memcli remember`` each opened the store and
    Chroma twice a note: ~70 s of the suite), once with the lookup and once with the scan:
    every event of the store the same (``history`` with no limit; ``memcli history`` showed
    the newest 20)."""
    notes = [
        (note["date"] + "T09:00:00", note["text"])
        for name in ("dev.jsonl", "dev2.jsonl", "dev3.jsonl")
        for line in (DATA / name).read_text(encoding="utf-8").splitlines()
        for note in json.loads(line)["notes"]
    ]
    notes.sort()
    ends: dict[bool, list[Any]] = {}
    for covered in (True, False):
        paths = home_paths(tmp_path / str(covered))
        if not covered:
            monkeypatch.setattr(Said, "covers", lambda self, user: False)
        moment = [0.0]
        engine = Engine(load_settings(paths), paths, clock=lambda: moment[0], **given_models())
        engine.store.open_resident()  # as the service holds it: Chroma opened once, not twice a note
        try:
            ids: dict[str, str] = {}
            for when, text in notes:
                moment[0] = clock_from_env({"MEMCLI_NOW": when})()
                ids[engine.remember(text)[0].id] = text
            listed = engine.history(limit=0)
        finally:
            engine.store.close()
        ends[covered] = sorted(
            (e.event, ids.get(e.memory_id), ids.get(e.related_id or "")) for e in listed if e.event in ("UPDATE", "ADD")
        )
    assert ends[True] == ends[False]
    assert sum(event == "UPDATE" for event, _, _ in ends[True]) >= 10  # ten supersessions at least
