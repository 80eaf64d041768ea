"""The history of superseded memories (issue 31): events a person's acts repeat are kept,
the history is indexed by the memory that replaced one, a sidecar of schema 1 is migrated,
and an import without the history writes the supersession links it needs."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from cli_checks import ok, remember_at, show_json
from typer.testing import CliRunner

from memcli.cli import app
from memcli.store.sidecar import SCHEMA_VERSION, HistoryEntry, Sidecar

# The history table as schema 1 made it (memcli before the migration).
SCHEMA_1 = """
CREATE TABLE history (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    memory_id TEXT NOT NULL,
    user TEXT NOT NULL,
    kind TEXT NOT NULL,
    event TEXT NOT NULL,
    old_text TEXT NOT NULL,
    new_text TEXT NOT NULL,
    at REAL NOT NULL,
    source_ids TEXT NOT NULL,
    related_id TEXT NOT NULL,
    UNIQUE (memory_id, event, old_text, new_text)
);
CREATE INDEX history_by_user ON history (user, seq);
"""


def _events(runner: CliRunner, memory_id: str) -> list[tuple[str, str]]:
    listed = json.loads(ok(runner.invoke(app, ["history", memory_id, "--json"])).stdout)
    return [(e["event"], e["related_id"] or "") for e in listed]


def _update(older: str, newer: str, at: float) -> HistoryEntry:
    return HistoryEntry(older, "u", "note", "UPDATE", "I live in Bristol.", "We moved to Cardiff.", at, [newer], newer)


def _reopen(older: str, newer: str, at: float) -> HistoryEntry:
    return HistoryEntry(older, "u", "note", "REOPEN", "", "I live in Bristol.", at, [], newer)


def test_a_note_reopened_twice_by_the_same_newer_one_tells_both_reopenings(
    runner: CliRunner, fake_embedder: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    older = remember_at(runner, monkeypatch, "2024-01-01T09:00:00", "I live in Bristol.")
    newer = remember_at(runner, monkeypatch, "2025-01-01T09:00:00", "We moved to Cardiff last weekend.")
    for when, text in [
        ("2025-01-02T09:00:00", "We visited Cardiff last weekend."),
        ("2025-01-03T09:00:00", "We moved to Cardiff last weekend."),
        ("2025-01-04T09:00:00", "We visited Cardiff last weekend."),
    ]:
        monkeypatch.setenv("MEMCLI_NOW", when)
        ok(runner.invoke(app, ["edit", newer, "--text", text]))
    assert show_json(runner, older)["superseded_by"] is None
    assert _events(runner, older) == [("UPDATE", newer), ("REOPEN", newer), ("UPDATE", newer), ("REOPEN", newer)]
    assert [e for e, _ in _events(runner, newer)] == ["ADD", "EDIT", "EDIT", "ADD", "EDIT"]


def test_a_resumed_run_does_not_repeat_the_latest_event_and_a_second_link_is_kept(tmp_path: Path) -> None:
    sidecar = Sidecar(tmp_path / "sidecar.db")
    sidecar.record([_update("o", "n", 1.0), _reopen("o", "n", 2.0), _update("o", "n", 3.0), _reopen("o", "n", 4.0)])
    sidecar.record([_reopen("o", "n", 5.0)])  # the same event again, nothing between: a run resumed
    assert [e.event for e in sidecar.history(memory_id="o")] == ["UPDATE", "REOPEN", "UPDATE", "REOPEN"]
    added = [HistoryEntry("n", "u", "note", "ADD", "", "We moved to Cardiff.", 1.0, ["n"], o) for o in ("o1", "o2")]
    sidecar.record(added)
    sidecar.record(added)  # an export's history imported twice
    assert [e.related_id for e in sidecar.history(memory_id="n")] == ["o1", "o2"]


def test_a_sidecar_of_schema_1_is_migrated_keeping_its_events_and_indexed_by_related_id(tmp_path: Path) -> None:
    path = tmp_path / "sidecar.db"
    db = sqlite3.connect(path)
    db.executescript(SCHEMA_1)
    db.executemany(
        "INSERT INTO history (seq, memory_id, user, kind, event, old_text, new_text, at, source_ids, related_id)"
        " VALUES (?, ?, 'u', 'note', ?, ?, ?, ?, '[]', ?)",
        [
            (3, "o", "UPDATE", "I live in Bristol.", "We moved to Cardiff.", 1.0, "n"),
            (7, "n", "ADD", "", "We moved to Cardiff.", 1.0, "o"),
            (9, "o", "REOPEN", "", "I live in Bristol.", 2.0, "n"),
        ],
    )
    db.execute("PRAGMA user_version = 1")
    db.commit()
    db.close()
    sidecar = Sidecar(path)
    assert sidecar._db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 2
    assert [(e.seq, e.event) for e in sidecar.history(memory_id="o")] == [(3, "UPDATE"), (9, "REOPEN")]
    assert sidecar.replaced_by("n") == ["o"]
    plan = sidecar._db.execute(
        "EXPLAIN QUERY PLAN SELECT memory_id FROM history WHERE event = 'UPDATE' AND related_id = ? ORDER BY seq",
        ("n",),
    ).fetchall()
    assert any("history_by_related" in row[-1] for row in plan)
    sidecar.record([_update("o", "n", 3.0), _reopen("o", "n", 4.0)])
    assert [e.event for e in sidecar.history(memory_id="o")] == ["UPDATE", "REOPEN", "UPDATE", "REOPEN"]
    sidecar.close()
    again = Sidecar(path)  # opened again: not migrated twice
    assert [e.seq for e in again.history(user="u")][-3:] == [9, 7, 3]
    assert len(again.history(user="u")) == 5


def test_an_import_without_history_links_each_superseded_note_and_an_export_with_it_adds_no_second_link(
    runner: CliRunner, fake_embedder: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    first = remember_at(runner, monkeypatch, "2024-01-01T09:00:00", "I live in Portland.")
    second = remember_at(runner, monkeypatch, "2024-01-15T09:00:00", "We live in Portland with the cat.")
    newer = remember_at(runner, monkeypatch, "2024-02-01T09:00:00", "We moved to Seattle last week.")
    bare, full = tmp_path / "bare.jsonl", tmp_path / "full.jsonl"
    ok(runner.invoke(app, ["export", "-o", str(bare)]))
    ok(runner.invoke(app, ["export", "--history", "-o", str(full)]))
    monkeypatch.setenv("MEMCLI_HOME", str(tmp_path / "imported"))
    ok(runner.invoke(app, ["import", str(bare), "--format", "memcli"]))
    ok(runner.invoke(app, ["import", str(full), "--format", "memcli"]))
    assert _events(runner, first) == [("UPDATE", newer)]
    assert _events(runner, second) == [("UPDATE", newer)]
    assert _events(runner, newer) == [("ADD", first), ("ADD", second)]
    monkeypatch.setenv("MEMCLI_NOW", "2024-03-01T09:00:00")
    ok(runner.invoke(app, ["edit", newer, "--text", "We visited Seattle last week."]))
    assert [show_json(runner, i)["superseded_by"] for i in (first, second)] == [None, None]


def test_deleting_a_note_superseded_in_turn_hands_the_older_one_to_the_newest(
    runner: CliRunner, fake_embedder: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    oldest = remember_at(runner, monkeypatch, "2024-01-01T09:00:00", "I live in Bristol.")
    middle = remember_at(runner, monkeypatch, "2025-01-01T09:00:00", "We moved to Cardiff last weekend.")
    newest = remember_at(runner, monkeypatch, "2025-02-01T09:00:00", "I moved to Swansea.")
    assert [show_json(runner, i)["superseded_by"] for i in (oldest, middle)] == [middle, newest]
    ok(runner.invoke(app, ["delete", middle, "--yes"]))
    shown = show_json(runner, oldest)
    assert shown["superseded_by"] == newest
    assert shown["valid_to"].startswith("2025-02-01")
    assert _events(runner, oldest) == [("UPDATE", middle), ("REOPEN", middle), ("UPDATE", newest)]
    ok(runner.invoke(app, ["delete", newest, "--yes"]))
    assert show_json(runner, oldest)["superseded_by"] is None


def test_deleting_two_links_of_a_chain_together_leaves_one_current_memory(
    runner: CliRunner, fake_embedder: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from test_consolidate import make_memcli

    ids = [
        remember_at(runner, monkeypatch, at, text)
        for at, text in [
            ("2023-01-01T09:00:00", "I live in Bristol."),
            ("2024-01-01T09:00:00", "We moved to Cardiff last weekend."),
            ("2025-01-01T09:00:00", "I moved to Swansea."),
            ("2025-06-01T09:00:00", "We moved to Newport last month."),
        ]
    ]
    bristol, cardiff, swansea, newport = ids
    assert [show_json(runner, i)["superseded_by"] for i in ids] == [cardiff, swansea, newport, None]
    engine = make_memcli()
    with engine.store.transaction():
        engine.changes.purge(engine.store.get_many([cardiff, newport]))
    assert [show_json(runner, i)["superseded_by"] for i in (bristol, swansea)] == [swansea, None]
