"""Imported memories start their retention clock at the import (``Memory.retained_from``):
old MemoryBank and LoCoMo logs keep their conversation's dates (created_at, day) but do
not fade the moment they arrive; ``--retention-from conversation`` replays the timeline
(they fade from their own time, as before); notes dated at the import and turns dated
after it get no ``retained_from``; ``forgetting.elapsed`` counts from the latest of
created_at, retained_from and last_recalled_at. CLI through CliRunner with the fake
embedder, the clock set by ``--now``; retentions worked out from R = exp(-d t / S)."""

from __future__ import annotations

import json
import math
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from cli_checks import assert_error, ok
from conftest import given_models
from typer.testing import CliRunner

from memcli.cli import app
from memcli.config import load_settings, resolve_paths
from memcli.errors import ExitCode, UsageError
from memcli.library.engine import Engine
from memcli.memory import Kind, Memory
from memcli.recall.forgetting import UNIT_SECONDS, elapsed, forget_pass, retention

IMPORTED = "2024-03-01T10:00:00+00:00"
HOUR_LATER = "2024-03-01T11:00:00+00:00"
DAY = UNIT_SECONDS["day"]


# helpers ------------------------------------------------------------------------------------


def ts(moment: str | None) -> float:
    """Unix seconds of an ISO 8601 time (a --now argument or a time the JSON output gives)."""
    assert moment is not None
    parsed = datetime.fromisoformat(moment)
    assert parsed.utcoffset() is not None, moment
    return parsed.timestamp()


def days_after(moment: str, days: float) -> str:
    return datetime.fromtimestamp(ts(moment) + days * DAY).astimezone().isoformat()


def write_json(path: Path, data: Any) -> Path:
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")
    return path


def memorybank_file(tmp_path: Path) -> Path:
    """Two users' chats from spring 2023: 8 turns."""
    return write_json(
        tmp_path / "mb.json",
        {
            "Ann Lee": {
                "history": {
                    "2023-04-27": [
                        {"query": "I started learning the violin.", "response": "That is wonderful!"},
                        {"query": "My teacher is called Marta.", "response": "Nice to meet Marta."},
                    ],
                    "2023-05-02": [{"query": "I played my first song.", "response": "Congratulations!"}],
                },
            },
            "Bo": {"history": {"2023-05-01": [{"query": "I like green tea.", "response": "Noted, green tea."}]}},
        },
    )


def locomo_sample_file(tmp_path: Path) -> Path:
    """One LoCoMo conversation of May 2023: 3 turns."""
    return write_json(
        tmp_path / "locomo.json",
        [
            {
                "sample_id": "conv-a",
                "conversation": {
                    "speaker_a": "Ann",
                    "speaker_b": "Bob",
                    "session_1_date_time": "1:56 pm on 8 May, 2023",
                    "session_1": [
                        {"speaker": "Ann", "dia_id": "D1:1", "text": "I adopted a puppy named Rex."},
                        {"speaker": "Bob", "dia_id": "D1:2", "text": "What breed is Rex?"},
                    ],
                    "session_2_date_time": "10:00 am on 25 May, 2023",
                    "session_2": [{"speaker": "Ann", "dia_id": "D2:1", "text": "Rex learned to sit."}],
                },
            }
        ],
    )


SHAPES = {"memorybank": (memorybank_file, 8), "locomo": (locomo_sample_file, 3)}
"""Each shape: (its file, how many memories it holds)."""


def import_json(runner: CliRunner, path: Path, *args: str, now: str = IMPORTED) -> dict[str, Any]:
    return json.loads(ok(runner.invoke(app, ["import", str(path), "--now", now, "--json", *args])).stdout)


def everyone(runner: CliRunner, *args: str) -> list[dict[str, Any]]:
    """Every active memory (``--archived``: every forgotten one) of every user in the store."""
    users = json.loads(ok(runner.invoke(app, ["stats", "--json"])).stdout)["all_users"]
    return [
        m
        for user in users
        for m in json.loads(ok(runner.invoke(app, ["list", "-n", "0", "--json", "--user", user, *args])).stdout)
    ]


def show(runner: CliRunner, memory_id: str) -> dict[str, Any]:
    return json.loads(ok(runner.invoke(app, ["show", memory_id, "--json"])).stdout)


def forget_json(runner: CliRunner, when: str, *args: str) -> dict[str, Any]:
    return json.loads(ok(runner.invoke(app, ["forget", "--now", when, "--json", "--all-users", *args])).stdout)


def memory(
    created_at: float, retained_from: float = 0.0, last_recalled_at: float = 0.0, strength: float = 1.0
) -> Memory:
    return Memory(
        id="m",
        user="u",
        kind=Kind.TURN.value,
        text="t",
        created_at=created_at,
        day="2023-05-01",
        retained_from=retained_from,
        last_recalled_at=last_recalled_at,
        strength=strength,
    )


# the clock starts at the import ---------------------------------------------------------------


@pytest.mark.parametrize("shape", SHAPES)
def test_imported_old_logs_do_not_fade_right_after_the_import(
    runner: CliRunner, fake_embedder: Any, tmp_path: Path, shape: str
) -> None:
    make, count = SHAPES[shape]
    path = make(tmp_path)
    report = import_json(runner, path)
    assert (report["format"], report["added"]) == (shape, count)
    before = {m["id"]: m for m in everyone(runner)}
    assert len(before) == count

    data = forget_json(runner, HOUR_LATER)
    assert (data["examined"], data["forgotten"], data["archived"]) == (count, 0, 0)
    data = forget_json(runner, HOUR_LATER, "--dry-run")
    assert data["forgotten"] == 0
    after = {m["id"]: m for m in everyone(runner)}
    assert after.keys() == before.keys() and everyone(runner, "--archived") == []
    for memory_id, shown in after.items():
        assert ts(shown["retained_from"]) == ts(IMPORTED)
        assert (shown["created_at"], shown["day"]) == (before[memory_id]["created_at"], before[memory_id]["day"])
        assert shown["day"].startswith("2023-0")  # the conversation's day, not the import's
        assert ts(shown["created_at"]) < ts(IMPORTED) - 200 * DAY


def test_imported_memories_keep_the_conversation_dates_in_show(
    runner: CliRunner, fake_embedder: Any, tmp_path: Path
) -> None:
    import_json(runner, memorybank_file(tmp_path))
    [violin] = [m for m in everyone(runner) if m["text"] == "I started learning the violin."]
    shown = show(runner, violin["id"])
    assert shown["day"] == "2023-04-27"
    assert datetime.fromisoformat(shown["created_at"]).date().isoformat() == "2023-04-27"
    assert ts(shown["retained_from"]) == ts(IMPORTED)


def test_imported_memories_fade_from_the_import_on(runner: CliRunner, fake_embedder: Any, tmp_path: Path) -> None:
    import_json(runner, memorybank_file(tmp_path))
    # Imported turns start at strength_turn = 10 days. t = 29 days from the import:
    # R = e^-2.9 = 0.055, kept; t = 31 days: R = e^-3.1 = 0.045 < 0.05, forgotten
    assert {m["strength"] for m in everyone(runner)} == {10.0}
    kept = forget_json(runner, days_after(IMPORTED, 29), "--dry-run")
    assert kept["forgotten"] == 0
    gone = forget_json(runner, days_after(IMPORTED, 31))
    assert gone["forgotten"] == gone["archived"] == 8
    for forgotten in gone["memories"]:
        assert forgotten["forgetting"]["elapsed_seconds"] == pytest.approx(31 * DAY, abs=1)
        assert forgotten["forgetting"]["retention"] == pytest.approx(math.exp(-3.1), abs=1e-6)


@pytest.mark.parametrize("shape", SHAPES)
def test_retention_from_conversation_fades_them_from_their_own_time(
    runner: CliRunner, fake_embedder: Any, tmp_path: Path, shape: str
) -> None:
    make, count = SHAPES[shape]
    import_json(runner, make(tmp_path), "--retention-from", "conversation")
    imported = everyone(runner)
    assert all(m["retained_from"] is None for m in imported)

    data = forget_json(runner, HOUR_LATER)
    assert (data["examined"], data["forgotten"], data["archived"]) == (count, count, count)
    for forgotten in data["memories"]:
        assert forgotten["forgetting"]["elapsed_seconds"] == pytest.approx(
            ts(HOUR_LATER) - ts(forgotten["created_at"]), abs=1
        )
    assert sorted(m["id"] for m in everyone(runner, "--archived")) == sorted(m["id"] for m in imported)


def test_retention_from_conversation_in_the_library(fake_embedder: Any, tmp_path: Path) -> None:
    paths = resolve_paths()
    engine = Engine(load_settings(paths), paths, clock=lambda: ts(IMPORTED), **given_models())
    report = engine.import_file(memorybank_file(tmp_path), retention_from="conversation")
    assert report.added == 8
    with engine.store.transaction():
        stored = engine.store.memories()
    assert len(stored) == 8 and all(m.retained_from == 0.0 for m in stored)
    with pytest.raises(UsageError, match="retention-from"):
        engine.import_file(memorybank_file(tmp_path), retention_from="yesterday")


def test_reimporting_later_does_not_restart_the_clock(runner: CliRunner, fake_embedder: Any, tmp_path: Path) -> None:
    path = memorybank_file(tmp_path)
    import_json(runner, path)
    again = import_json(runner, path, now=days_after(IMPORTED, 3))
    assert (again["added"], again["skipped"]) == (0, 8)
    assert {ts(m["retained_from"]) for m in everyone(runner)} == {ts(IMPORTED)}


def test_stats_right_after_an_import_show_nothing_fading(runner: CliRunner, fake_embedder: Any, tmp_path: Path) -> None:
    import_json(runner, memorybank_file(tmp_path))
    stats = json.loads(ok(runner.invoke(app, ["stats", "--json", "--user", "AnnLee", "--now", HOUR_LATER])).stdout)
    assert stats["memories"] == 6 and stats["fading"] == 0
    assert stats["retention_histogram"][-1] == 6  # R = e^(-1/24) = 0.96
    assert (stats["first_day"], stats["last_day"]) == ("2023-04-27", "2023-05-02")


# what gets no retained_from -------------------------------------------------------------------


def test_text_notes_are_dated_at_the_import_and_get_no_retained_from(
    runner: CliRunner, fake_embedder: Any, tmp_path: Path
) -> None:
    notes = tmp_path / "notes.md"
    notes.write_text("# Garden\n\nThe roses need water on Sundays.\n\nPlant tulips in October.\n", encoding="utf-8")
    report = import_json(runner, notes)
    assert (report["format"], report["added"]) == ("text", 2)
    for shown in (show(runner, m["id"]) for m in everyone(runner)):
        assert shown["retained_from"] is None
        assert ts(shown["created_at"]) == ts(IMPORTED)
    assert forget_json(runner, HOUR_LATER)["forgotten"] == 0


def test_a_turn_dated_after_the_import_time_gets_no_retained_from(
    runner: CliRunner, fake_embedder: Any, tmp_path: Path
) -> None:
    log = tmp_path / "chat.jsonl"
    log.write_text(
        json.dumps({"role": "user", "content": "I moved to Lyon.", "timestamp": "2023-05-01T10:00:00+00:00"})
        + "\n"
        + json.dumps({"role": "user", "content": "I bought a bike.", "timestamp": "2024-03-05T10:00:00+00:00"})
        + "\n",
        encoding="utf-8",
    )
    import_json(runner, log)
    by_text = {m["text"]: m for m in everyone(runner)}
    assert ts(by_text["I moved to Lyon."]["retained_from"]) == ts(IMPORTED)
    assert by_text["I bought a bike."]["retained_from"] is None


# a bad --retention-from -------------------------------------------------------------------------


def test_an_unknown_retention_from_exits_2_and_stores_nothing(
    runner: CliRunner, fake_embedder: Any, tmp_path: Path
) -> None:
    result = runner.invoke(
        app, ["import", str(memorybank_file(tmp_path)), "--retention-from", "yesterday", "--now", IMPORTED]
    )
    line = assert_error(result, ExitCode.USAGE)
    assert "yesterday" in line and "import" in line and "conversation" in line
    assert result.stdout == ""
    assert everyone(runner) == []


# elapsed ------------------------------------------------------------------------------------------


CREATED = datetime(2023, 5, 1, 10, 0).timestamp()
IMPORT = CREATED + 300 * DAY


@pytest.mark.parametrize(
    ("retained_from", "last_recalled_at", "since"),
    [
        (0.0, 0.0, CREATED),  # a memory learned when it happened: from created_at
        (IMPORT, 0.0, IMPORT),  # imported: from the import
        (IMPORT, IMPORT + 2 * DAY, IMPORT + 2 * DAY),  # recalled after the import: from the recall
        (IMPORT, CREATED + DAY, IMPORT),  # a recall in the replayed timeline, before the import: from the import
        (0.0, CREATED + 5 * DAY, CREATED + 5 * DAY),  # recalled: from the recall
        (0.0, CREATED - DAY, CREATED),  # a recall dated before it was learned does not age it
    ],
)
def test_elapsed_counts_from_the_latest_of_learned_imported_and_recalled(
    retained_from: float, last_recalled_at: float, since: float
) -> None:
    now = IMPORT + 7 * DAY
    m = memory(CREATED, retained_from, last_recalled_at, strength=2.0)
    assert elapsed(m, now) == pytest.approx((now - since) / DAY)
    assert elapsed(m, now, UNIT_SECONDS["hour"]) == pytest.approx((now - since) / 3600)
    assert retention(m, now) == pytest.approx(math.exp(-(now - since) / DAY / 2.0))


def test_elapsed_is_never_negative() -> None:
    assert elapsed(memory(CREATED, IMPORT), IMPORT - DAY) == 0.0
    assert retention(memory(CREATED, IMPORT), IMPORT - DAY) == 1.0


def test_the_forget_pass_keeps_an_import_and_forgets_the_same_memory_without_retained_from() -> None:
    now = IMPORT + DAY / 24
    imported, replayed = memory(CREATED, IMPORT), memory(CREATED)
    replayed.id = "replayed"
    verdicts = {v.memory.id: v for v in forget_pass([imported, replayed], now)}
    assert not verdicts["m"].forgotten and verdicts["m"].elapsed == pytest.approx(1 / 24)
    assert verdicts["replayed"].forgotten and verdicts["replayed"].elapsed == pytest.approx(300 + 1 / 24)


def test_a_memory_consolidation_makes_from_an_imported_turn_fades_from_the_import() -> None:
    """A fact or summary is dated like the turn it comes from, retention clock included."""
    from types import SimpleNamespace

    from memcli.consolidation.consolidate import Consolidator

    turn = Memory(
        id="t1",
        user="ana",
        kind=Kind.TURN.value,
        text="I adopted a cat.",
        created_at=1_600_000_000.0,
        day="2020-09-13",
        retained_from=1_700_000_000.0,
    )
    owner = SimpleNamespace(engine=SimpleNamespace(initial_strength=lambda memory: 1.0))
    made = Consolidator._memory(owner, "ana", Kind.FACT, "k", "Ana adopted a cat.", turn, "D1:1", ["t1"])  # type: ignore[arg-type]
    assert (made.created_at, made.day, made.retained_from) == (turn.created_at, turn.day, turn.retained_from)
