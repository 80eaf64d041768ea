"""Forgetting and reinforcement through the command line (CliRunner, fake embedder and chat
model), with the clock set by ``--now`` or ``MEMCLI_NOW``: forget (dry run, archive, purge,
stochastic, JSON), restore, pin/unpin, recall reinforcement, important notes, feedback,
recall --explain/--sample, stats, and the reinforce/decay settings. Expected retentions are
worked out here from R = exp(-d t / S), t in days."""

from __future__ import annotations

import json
import math
import re
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from cli_checks import assert_error, ok
from conftest import list_json
from typer.testing import CliRunner

from memcli.cli import app, root
from memcli.errors import ExitCode

# helpers --------------------------------------------------------------------------


def iso(day: int, hour: int = 12, month: int = 1, year: int = 2025) -> str:
    return f"{year}-{month:02d}-{day:02d}T{hour:02d}:00:00+00:00"


def ts(moment: str | None) -> float:
    """The unix time of an ISO 8601 moment (a --now argument, or a time the JSON output gives)."""
    assert moment is not None
    parsed = datetime.fromisoformat(moment)
    assert parsed.utcoffset() is not None, moment  # the JSON's times carry their offset
    return parsed.timestamp()


def remember(runner: CliRunner, text: str, when: str, *args: str) -> str:
    return ok(runner.invoke(app, ["remember", text, "--now", when, *args])).stdout.strip()


def ids(rows: list[dict[str, Any]]) -> list[str]:
    return [row["id"] for row in rows]


def show(runner: CliRunner, memory_id: str) -> dict[str, Any]:
    return json.loads(ok(runner.invoke(app, ["show", memory_id, "--json"])).stdout)


def recall_json(runner: CliRunner, query: str, when: str, *args: str) -> list[dict[str, Any]]:
    return json.loads(ok(runner.invoke(app, ["recall", query, "--now", when, "--json", *args])).stdout)


def forget_json(runner: CliRunner, when: str, *args: str) -> dict[str, Any]:
    return json.loads(ok(runner.invoke(app, ["forget", "--now", when, "--json", *args])).stdout)


SUMMARY = re.compile(r"^examined (\d+), (forgot|would forget) (\d+) \(archived (\d+), purged (\d+)\) in [\d.]+ s$")

QUOKKA = "The quokka named Bartholomew lives on Rottnest Island and smiles at every tourist passing by"
HERON = "A grey heron fishes in the canal behind the bakery"


@pytest.fixture(autouse=True)
def unit_strengths(monkeypatch: pytest.MonkeyPatch) -> None:
    """S0 = 1 day for every kind and 3 for an important note (memcli's defaults before
    issue 22), which keep the arithmetic of these tests simple; the defaults themselves are
    tested in test_default_strengths_* below and in test_forgetting.py."""
    for kind in ("TURN", "NOTE", "FACT"):
        monkeypatch.setenv(f"MEMCLI_STRENGTH_{kind}", "1")
    monkeypatch.setenv("MEMCLI_IMPORTANT_STRENGTH", "3")


@pytest.fixture
def old_and_fresh(runner: CliRunner, fake_embedder: Any) -> tuple[str, str]:
    """QUOKKA learned on 1 January (t = 9 days on the 10th: R = e^-9), HERON on the 9th (R = e^-1)."""
    return remember(runner, QUOKKA, iso(1)), remember(runner, HERON, iso(9))


# forget --dry-run, forget, archive ------------------------------------------------------


def test_forget_dry_run_lists_what_would_go_and_changes_nothing(
    runner: CliRunner, old_and_fresh: tuple[str, str]
) -> None:
    old, fresh = old_and_fresh
    before = list_json(runner)
    result = ok(runner.invoke(app, ["forget", "--dry-run", "--now", iso(10)]))
    *rows, summary = result.stdout.splitlines()
    assert len(rows) == 1
    memory_id, r, s, t, kind, preview = rows[0].split("\t")
    assert memory_id == old
    assert r.startswith("R ") and float(r[2:]) == pytest.approx(math.exp(-9), abs=5e-5)
    assert s.startswith("S ") and float(s[2:]) == 1.0
    assert t.startswith("t ") and t.endswith(" d") and float(t[2:-2]) == pytest.approx(9.0, abs=0.005)  # in days
    assert kind == "note"
    assert QUOKKA.startswith(preview) and len(preview) >= 20
    match = SUMMARY.match(summary)
    assert match and match.groups()[:5] == ("2", "would forget", "1", "0", "0"), summary
    assert list_json(runner) == before
    assert list_json(runner, "--archived") == []
    assert show(runner, old)["archived"] is False


def test_forget_dry_run_json_reports_retention_without_archiving(
    runner: CliRunner, old_and_fresh: tuple[str, str]
) -> None:
    old, _ = old_and_fresh
    data = forget_json(runner, iso(10), "--dry-run")
    assert data["dry_run"] is True
    assert (data["examined"], data["forgotten"], data["archived"], data["purged"]) == (2, 1, 0, 0)
    [gone] = data["memories"]
    assert gone["id"] == old and gone["forgetting"]["retention"] == pytest.approx(math.exp(-9), abs=1e-6)
    assert gone["forgetting"]["elapsed_seconds"] == pytest.approx(9 * 86400, abs=1)
    assert gone["archived"] is False and gone["archived_at"] is None
    assert list_json(runner, "--archived") == []


def test_forget_archives_faded_memories_which_are_never_recalled(
    runner: CliRunner, old_and_fresh: tuple[str, str], fake_model: Any
) -> None:
    old, fresh = old_and_fresh
    result = ok(runner.invoke(app, ["forget", "--now", iso(10)]))
    [line] = result.stdout.splitlines()
    match = SUMMARY.match(line)
    assert match and match.groups() == ("2", "forgot", "1", "1", "0"), line
    assert ids(list_json(runner)) == [fresh]
    [archived] = list_json(runner, "--archived")
    assert archived["id"] == old and archived["archived"] is True
    assert ts(archived["archived_at"]) == ts(iso(10))
    assert old in ok(runner.invoke(app, ["list", "--archived"])).stdout
    # recall and the ask prompt never see it, even asked for by its own words
    assert old not in ids(recall_json(runner, "quokka Bartholomew Rottnest", iso(10)))
    assert old not in ids(recall_json(runner, "quokka", iso(10), "--kind", "note", "--no-reinforce"))
    ok(runner.invoke(app, ["ask", "Where does the quokka Bartholomew live?", "--now", iso(10)]))
    prompt = "\n".join(message.content for message in fake_model.prompts[-1])
    assert "Bartholomew" not in prompt.replace("Where does the quokka Bartholomew live?", "")
    assert HERON in prompt


def test_forget_json_has_the_counts_and_nothing_else_on_stdout(
    runner: CliRunner, old_and_fresh: tuple[str, str]
) -> None:
    data = forget_json(runner, iso(10))
    assert set(data) == {
        "dry_run",
        "examined",
        "forgotten",
        "archived",
        "purged",
        "derived_purged",
        "duration_seconds",
        "threshold",
        "time_unit",
        "memories",
    }
    assert (data["threshold"], data["time_unit"]) == (0.05, "day")
    assert (data["dry_run"], data["examined"], data["forgotten"], data["archived"], data["purged"]) == (
        False,
        2,
        1,
        1,
        0,
    )
    assert isinstance(data["duration_seconds"], (int, float)) and data["duration_seconds"] >= 0
    [gone] = data["memories"]
    assert set(gone["forgetting"]) == {"retention", "elapsed_seconds", "elapsed", "decay", "forgotten"}
    assert gone["forgetting"]["forgotten"] is True and gone["forgetting"]["elapsed"] == pytest.approx(9.0)


def test_second_forget_at_the_same_time_forgets_nothing(runner: CliRunner, fake_embedder: Any) -> None:
    words = ["ant", "bee", "cod", "doe", "eel", "fox", "gnu", "hen", "ibis", "jay", "koi", "lark"]
    days = [1, 2, 3, 4, 5, 6, 7, 8, 9, 9, 9, 9]
    for word, day in zip(words, days):
        remember(runner, f"a memory about the {word}", iso(day, hour=6))
    first = forget_json(runner, iso(9, hour=6))
    assert first["forgotten"] == 6  # learned on days 1-6: t ≥ 3 days, R ≤ e^-3 = 0.0498 < 0.05
    active = list_json(runner)
    again = ok(runner.invoke(app, ["forget", "--now", iso(9, hour=6)]))
    assert SUMMARY.match(again.stdout.strip()).groups()[:3] == ("6", "forgot", "0")
    assert list_json(runner) == active
    # stochastic: the same seed at the same time makes the same draws
    one = forget_json(runner, iso(9, hour=18), "--stochastic", "--seed", "7")
    two = forget_json(runner, iso(9, hour=18), "--stochastic", "--seed", "7")
    assert one["examined"] == 6 and two["forgotten"] == 0
    assert two["examined"] == 6 - one["forgotten"]


def test_forget_only_touches_the_user_unless_all_users(runner: CliRunner, fake_embedder: Any) -> None:
    mine = remember(runner, "my old bicycle", iso(1))
    theirs = remember(runner, "their old bicycle", iso(1), "--user", "zoe")
    assert forget_json(runner, iso(20))["forgotten"] == 1
    assert show(runner, mine)["archived"] is True and show(runner, theirs)["archived"] is False
    assert forget_json(runner, iso(20), "--all-users")["forgotten"] == 1
    assert show(runner, theirs)["archived"] is True


# restore, purge, pin -----------------------------------------------------------------------


def test_restore_brings_a_forgotten_memory_back_with_its_clock_restarted(
    runner: CliRunner, old_and_fresh: tuple[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    old, _ = old_and_fresh
    forget_json(runner, iso(10))
    monkeypatch.setenv("MEMCLI_NOW", iso(11))
    assert ok(runner.invoke(app, ["restore", old])).stdout.strip() == old
    shown = show(runner, old)
    assert shown["archived"] is False and shown["archived_at"] is None and ts(shown["last_recalled_at"]) == ts(iso(11))
    assert old in ids(list_json(runner)) and list_json(runner, "--archived") == []
    assert ids(recall_json(runner, "quokka Bartholomew", iso(11), "-k", "1")) == [old]
    # it fades again from the restore on: kept a day later, gone a week later (S = 2 after that recall)
    assert old not in [m["id"] for m in forget_json(runner, iso(12))["memories"]]
    assert old in [m["id"] for m in forget_json(runner, iso(18))["memories"]]
    assert_error(runner.invoke(app, ["restore", "0123456789abcdef"]), ExitCode.NOT_FOUND)


def test_purge_deletes_forgotten_memories_for_good(runner: CliRunner, old_and_fresh: tuple[str, str]) -> None:
    old, fresh = old_and_fresh
    result = ok(runner.invoke(app, ["forget", "--purge", "--now", iso(10)]))
    assert SUMMARY.match(result.stdout.strip()).groups() == ("2", "forgot", "1", "0", "1")
    assert_error(runner.invoke(app, ["show", old]), ExitCode.NOT_FOUND)
    assert list_json(runner, "--archived") == []
    assert ids(list_json(runner)) == [fresh]


def test_a_pinned_memory_survives_any_time_until_unpinned(runner: CliRunner, old_and_fresh: tuple[str, str]) -> None:
    old, fresh = old_and_fresh
    assert ok(runner.invoke(app, ["pin", old])).stdout.strip() == old
    assert show(runner, old)["pinned"] is True
    far = iso(1, year=2045)
    data = forget_json(runner, far)
    assert [m["id"] for m in data["memories"]] == [fresh]
    assert ids(list_json(runner)) == [old]
    stats = json.loads(ok(runner.invoke(app, ["stats", "--now", far, "--json"])).stdout)
    assert stats["pinned"] == 1 and stats["retention_histogram"][-1] == 1 and stats["fading"] == 0
    assert ok(runner.invoke(app, ["unpin", old, "--json"])).stdout and show(runner, old)["pinned"] is False
    assert [m["id"] for m in forget_json(runner, far)["memories"]] == [old]
    assert_error(runner.invoke(app, ["pin", "0123456789abcdef"]), ExitCode.NOT_FOUND)


# reinforcement ------------------------------------------------------------------------------


def test_recall_reinforces_what_it_prints_unless_no_reinforce(runner: CliRunner, fake_embedder: Any) -> None:
    recalled = remember(runner, "the walrus sleeps on the ice floe", iso(1))
    twin = remember(runner, "the penguin sleeps on the ice floe", iso(1))
    assert ids(recall_json(runner, "walrus", iso(3), "-k", "1")) == [recalled]
    shown = show(runner, recalled)
    assert (shown["strength"], shown["recall_count"]) == (2.0, 1)
    assert ts(shown["last_recalled_at"]) == ts(iso(3))
    untouched = show(runner, twin)
    assert (untouched["strength"], untouched["recall_count"], untouched["last_recalled_at"]) == (1.0, 0, None)
    assert ids(recall_json(runner, "walrus", iso(4), "-k", "1", "--no-reinforce")) == [recalled]
    assert show(runner, recalled) == shown
    # on the 6th: the twin has t = 5, S = 1 (R = e^-5); the recalled one t = 3, S = 2 (R = e^-1.5)
    data = forget_json(runner, iso(6))
    assert [m["id"] for m in data["memories"]] == [twin]
    assert ids(list_json(runner)) == [recalled]


def test_remember_important_note_starts_stronger(
    runner: CliRunner, fake_embedder: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    important = remember(runner, "the vault code is on the blue card", iso(1), "-i", "0.9")
    plain = remember(runner, "the lamp bulb is warm white", iso(1), "-i", "0.5")
    assert show(runner, important)["strength"] == 3.0  # important_strength times strength_note
    assert show(runner, plain)["strength"] == 1.0  # strength_note
    # t = 5 days: e^-5/3 = 0.19 stays, e^-5 = 0.007 goes
    assert [m["id"] for m in forget_json(runner, iso(6))["memories"]] == [plain]
    monkeypatch.setenv("MEMCLI_IMPORTANT_STRENGTH", "2")
    monkeypatch.setenv("MEMCLI_STRENGTH_NOTE", "2")
    monkeypatch.setenv("MEMCLI_INITIAL_STRENGTH", "5")  # summaries and the like only: not a note
    assert show(runner, remember(runner, "the spare key hides under the frog", iso(7), "-i", "0.8"))["strength"] == 4.0
    assert show(runner, remember(runner, "the kettle whistles loudly", iso(7), "-i", "0.79"))["strength"] == 2.0


def test_reinforce_multiply_from_the_environment_uses_boost(
    runner: CliRunner, fake_embedder: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMCLI_REINFORCE", "multiply")
    a = remember(runner, "the albatross glides for hours", iso(1))
    recall_json(runner, "albatross", iso(2), "-k", "1")
    assert show(runner, a)["strength"] == pytest.approx(1.5)  # default boost
    monkeypatch.setenv("MEMCLI_BOOST", "2")
    recall_json(runner, "albatross", iso(3), "-k", "1")
    recall_json(runner, "albatross", iso(4), "-k", "1")
    shown = show(runner, a)
    assert shown["strength"] == pytest.approx(6.0) and shown["recall_count"] == 3
    monkeypatch.setenv("MEMCLI_REINFORCE", "double")
    assert_error(runner.invoke(app, ["recall", "albatross", "--now", iso(5)]), ExitCode.BAD_INPUT)


def test_user_decay_from_the_config_file_makes_that_user_fade_slower(
    runner: CliRunner, fake_embedder: Any, memcli_home: Path
) -> None:
    config = memcli_home / "config" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text("forget_threshold = 0.05\n\n[user_decay]\nalice = 0.1\n", encoding="utf-8")
    alice = remember(runner, "my garden has tall sunflowers", iso(1), "-u", "alice")
    bob = remember(runner, "my garden has tall sunflowers", iso(1), "-u", "bob")
    # t = 10 days: alice R = e^-1 = 0.37, bob (decay 1) R = e^-10
    explained = ok(
        runner.invoke(app, ["recall", "sunflowers", "-u", "alice", "--now", iso(11), "--explain", "--no-reinforce"])
    )
    assert f"retention {math.exp(-1):.3f}" in explained.stdout
    dry = ok(runner.invoke(app, ["forget", "--all-users", "--dry-run", "--now", iso(11)])).stdout.splitlines()
    assert [line.split("\t")[0] for line in dry[:-1]] == [bob]
    assert float(dry[0].split("\t")[1][2:]) == pytest.approx(math.exp(-10), abs=5e-5)
    forget_json(runner, iso(11), "--all-users")
    assert show(runner, alice)["archived"] is False and show(runner, bob)["archived"] is True
    stats = json.loads(ok(runner.invoke(app, ["stats", "-u", "alice", "--now", iso(11), "--json"])).stdout)
    assert stats["retention_histogram"][3] == 1 and stats["fading"] == 0  # 0.37 falls in 0.3-0.4
    # alice too fades in the end: t = 40 days, R = e^-4
    forget_json(runner, iso(10, month=2), "--all-users")
    assert show(runner, alice)["archived"] is True


def test_recalling_a_memory_dated_later_than_now_does_not_age_it(
    runner: CliRunner, fake_embedder: Any, tmp_path: Path
) -> None:
    timeline = tmp_path / "later.jsonl"
    timeline.write_text(
        json.dumps({"role": "user", "content": "I will plant the kiwi tree", "timestamp": iso(20)})
        + "\n"
        + json.dumps({"role": "user", "content": "I will plant the mango tree", "timestamp": iso(20)})
        + "\n",
        encoding="utf-8",
    )
    ok(runner.invoke(app, ["import", str(tmp_path / "later.jsonl")]))
    [kiwi] = recall_json(runner, "kiwi", iso(1), "-k", "1")
    assert "kiwi" in kiwi["text"]
    # 2 days after both were learned: the unrecalled mango has R = e^-2 and stays
    data = forget_json(runner, iso(22))
    assert data["forgotten"] == 0, data["memories"]


# feedback, explain, sample, stats ----------------------------------------------------------------


def test_feedback_votes_change_the_feedback(runner: CliRunner, fake_embedder: Any) -> None:
    memory = remember(runner, "the otter juggles pebbles", iso(1))
    assert ok(runner.invoke(app, ["feedback", memory, "up"])).stdout.strip() == f"{memory}\tfeedback 1"
    assert show(runner, memory)["feedback"] == 1.0
    ok(runner.invoke(app, ["feedback", memory, "down"]))
    data = json.loads(ok(runner.invoke(app, ["feedback", memory[:8], "down", "--json"])).stdout)
    assert data["id"] == memory and data["feedback"] == -1.0
    line = assert_error(runner.invoke(app, ["feedback", memory, "sideways"]), ExitCode.USAGE)
    assert "sideways" in line
    assert show(runner, memory)["feedback"] == -1.0
    assert_error(runner.invoke(app, ["feedback", "0123456789abcdef", "up"]), ExitCode.NOT_FOUND)
    # the feedback component of the score: −1 vote over a scale of 3
    explained = ok(runner.invoke(app, ["recall", "otter", "--now", iso(1), "--explain", "--no-reinforce"])).stdout
    assert "feedback -0.333" in explained


def test_recall_explain_prints_every_component(runner: CliRunner, fake_embedder: Any) -> None:
    memory = remember(runner, "the lighthouse keeper paints seashells", iso(1), "-i", "0.7")
    remember(runner, "an unrelated note on tax forms", iso(1))
    lines = ok(
        runner.invoke(app, ["recall", "lighthouse seashells", "--now", iso(3), "--explain", "-k", "1"])
    ).stdout.splitlines()
    assert len(lines) == 3 and lines[0].startswith(memory) and lines[1].startswith("\t") and lines[2].startswith("\t")
    signals = dict(re.findall(r"([a-z_]+) ([-+]\d+\.\d+)", lines[1]))
    assert set(signals) == {
        "relevance",
        "lexical",
        "window",
        "turn",
        "speaker",
        "person",
        "date",
        "when",
        "graph",
        "superseded",
        "prior",
    }
    # the fused relevance is the sum of the weighted signals (each printed to 2 decimals)
    assert float(signals.pop("relevance")) == pytest.approx(sum(map(float, signals.values())), abs=0.05)
    parts = dict(re.findall(r"([a-z_]+) (-?\d+\.\d+)", lines[2]))
    assert float(parts["relevance"]) == 1.0
    assert float(parts["importance"]) == pytest.approx(0.7)
    assert float(parts["retention"]) == pytest.approx(math.exp(-2), abs=5e-4)  # t = 2 days, S = 1
    assert float(parts["use"]) == 0.0 and float(parts["recent_penalty"]) == 0.0 and float(parts["feedback"]) == 0.0


def test_recall_sample_is_reproducible_with_the_same_seed(runner: CliRunner, fake_embedder: Any) -> None:
    words = ["tulip", "rose", "lily", "iris", "fern", "moss", "sage", "mint"]
    notes = {remember(runner, f"the garden has {w}", iso(1)) for w in words}

    def sample(seed: str) -> list[str]:
        return ids(recall_json(runner, "garden", iso(2), "--sample", "--seed", seed, "-k", "3", "--no-reinforce"))

    first = sample("3")
    assert sample("3") == first
    assert len(first) == 3 and len(set(first)) == 3 and set(first) <= notes
    assert len({tuple(sorted(sample(str(seed)))) for seed in range(8)}) > 1  # it does sample


def test_stats_json_has_the_retention_histogram_and_counts(runner: CliRunner, fake_embedder: Any) -> None:
    gone = remember(runner, "the xylophone in the attic", iso(1))
    pinned = remember(runner, "the pelican on the pier", iso(1))
    ok(runner.invoke(app, ["pin", pinned]))
    assert [m["id"] for m in forget_json(runner, iso(12))["memories"]] == [gone]
    for day, word in [(16, "dolphin"), (18, "daisy"), (19, "dune"), (20, "dawn")]:
        remember(runner, f"a note about the {word}", iso(day))
    data = json.loads(ok(runner.invoke(app, ["stats", "--now", iso(20), "--json"])).stdout)
    # R: pinned 1, dawn 1 (t 0), dune e^-1 = 0.37, daisy e^-2 = 0.14, dolphin e^-4 = 0.018
    assert data["retention_histogram"] == [1, 1, 0, 1, 0, 0, 0, 0, 0, 2]
    assert (data["memories"], data["fading"], data["archived"], data["pinned"]) == (5, 1, 1, 1)
    text = ok(runner.invoke(app, ["stats", "--now", iso(20)])).stdout
    assert "retention" in text and "fading: 1" in text and "archived: 1" in text


def test_remembering_a_forgotten_note_again_brings_it_back(runner: CliRunner, fake_embedder: Any) -> None:
    note = remember(runner, "The spare key is under the blue flowerpot", iso(1))
    forget_json(runner, iso(20))
    assert note in ids(list_json(runner, "--archived"))
    again = remember(runner, "The spare key is under the blue flowerpot", iso(21))
    assert again == note
    assert note in ids(list_json(runner)) and note not in ids(list_json(runner, "--archived"))
    assert ts(show(runner, note)["last_recalled_at"]) == ts(iso(21))


# the default strengths by kind, forget --explain ---------------------------------------------


def days_later(days: int) -> str:
    """``days`` after iso(1) (1 January 2025, noon UTC)."""
    return (datetime.fromisoformat(iso(1)) + timedelta(days=days)).isoformat()


def explained(runner: CliRunner, when: str) -> tuple[list[str], dict[str, list[str]]]:
    """forget --dry-run --explain piped: its rule line and column names, and each row by id."""
    rule, header, *rows, summary = ok(
        runner.invoke(app, ["forget", "--dry-run", "--explain", "--now", when])
    ).stdout.splitlines()
    assert SUMMARY.match(summary), summary
    return [rule, *header.split("\t")], {row.split("\t")[1]: row.split("\t") for row in rows}


def test_default_strengths_keep_a_note_months_and_a_turn_weeks(
    runner: CliRunner, fake_embedder: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    for name in ("STRENGTH_TURN", "STRENGTH_NOTE", "STRENGTH_FACT", "IMPORTANT_STRENGTH"):
        monkeypatch.delenv(f"MEMCLI_{name}")
    note = remember(runner, "my sister's birthday is on 4 March", iso(1))
    important = remember(runner, "the vault code is on the blue card", iso(1), "-i", "0.9")
    chat = tmp_path / "chat.jsonl"
    chat.write_text(
        json.dumps({"role": "user", "content": "I live in Lisbon", "timestamp": iso(1)}) + "\n", encoding="utf-8"
    )
    ok(runner.invoke(app, ["import", str(chat), "--now", iso(1)]))
    [turn] = [m["id"] for m in list_json(runner) if m["kind"] == "turn"]
    assert [show(runner, i)["strength"] for i in (turn, note, important)] == [10.0, 60.0, 120.0]
    # never recalled, forgotten once t > S ln 20 (about 3 S days): the turn after 30 days,
    # the note after 180, the important note after 360
    expected = {
        7: ("keep", "keep", "keep"),
        29: ("keep", "keep", "keep"),
        31: ("forget", "keep", "keep"),
        90: ("forget", "keep", "keep"),
        179: ("forget", "keep", "keep"),
        181: ("forget", "forget", "keep"),
        359: ("forget", "forget", "keep"),
        365: ("forget", "forget", "forget"),
    }
    for days, verdicts in expected.items():
        head, rows = explained(runner, days_later(days))
        assert tuple(rows[i][0] for i in (turn, note, important)) == verdicts, days
    assert head == [
        "R = exp(-d t / S), t and S in days; forgotten when R < 0.05; a daily summary or portrait goes with the last turn of its day",
        "verdict",
        "id",
        "t",
        "S",
        "d",
        "R",
        "kind",
        "text",
    ]
    assert rows[note][2:7] == ["365.0", "60", "1", f"{math.exp(-365 / 60):.4f}", "note"]
    assert len(list_json(runner)) == 3  # a dry run archives nothing


def test_forget_explain_lists_kept_memories_too_and_a_table_on_a_terminal(
    runner: CliRunner, old_and_fresh: tuple[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    old, fresh = old_and_fresh
    data = forget_json(runner, iso(10), "--dry-run", "--explain")
    assert data["forgotten"] == 1 and {m["id"]: m["forgetting"]["forgotten"] for m in data["memories"]} == {
        old: True,
        fresh: False,
    }
    assert (
        forget_json(runner, iso(10), "--dry-run")["memories"][0]["id"] == old
    )  # without --explain: the forgotten only
    monkeypatch.setattr(root, "_terminal", lambda: True)
    shown = ok(runner.invoke(app, ["forget", "--dry-run", "--explain", "--now", iso(10)])).stdout.splitlines()
    assert "\t" not in "".join(shown)
    header = shown[1]
    assert header.split() == ["verdict", "id", "t", "S", "d", "R", "kind", "text"]
    row = next(line for line in shown if old in line)
    assert row.split()[:7] == ["forget", old, "9.0", "1", "1", f"{math.exp(-9):.4f}", "note"]
    assert row.index(old) == header.index("id")  # aligned under its column
