"""A 90-day simulation of forgetting through the command line.

A timeline of 30 turns (one a day, days 0..29 from 2025-01-01, user "sim") is imported with
``memcli import``; then, for each of 90 days, ``memcli recall -k 1`` runs at noon on a fixed
schedule (each turn has one distinctive word, so a query of that word finds exactly it) and
``memcli forget`` runs at 23:00. Beside it the test keeps its own plain model of every memory
(strength S, from 1 (``strength_turn`` set to 1), time of the last recall, R = exp(-d t / S)
with t in days, S += 1 per recall) and predicts, night by night, what is forgotten.

Threshold mode: the forgotten set of every night and the final survivors must equal the
prediction exactly. Stochastic mode (fixed --seed): the survivors must be statistically
consistent with the survival probabilities, and a second run with the same seed must give
the identical result.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from cli_checks import ok
from typer.testing import CliRunner

from memcli.cli import app

START = datetime(2025, 1, 1, tzinfo=UTC)
DAYS = 90
THRESHOLD = 0.05  # Settings.forget_threshold default
WORDS = [
    "zebra",
    "walnut",
    "violin",
    "tornado",
    "quartz",
    "pumpkin",
    "origami",
    "nebula",
    "marmot",
    "lantern",
    "kayak",
    "jasmine",
    "iguana",
    "harpoon",
    "glacier",
    "falcon",
    "ember",
    "cactus",
    "bagpipe",
    "avalanche",
    "yodel",
    "trombone",
    "sequoia",
    "pretzel",
    "obsidian",
    "mongoose",
    "lobster",
    "anchovy",
    "biscuit",
    "cobalt",
]  # turn i (learned on day i at 09:00) is the only one with WORDS[i]
TEMPLATE = "Today I noticed a {}."
# turn index -> days on which it is recalled (at noon). Gaps that grow with S keep some alive
# for 90 days; some schedules come too late, so the memory is gone before its recall.
SCHEDULE: dict[int, list[int]] = {
    0: [2, 7, 15, 26, 40, 58, 80],
    1: [3, 9, 18, 30, 45, 62, 84],
    3: [5, 10],
    5: [7, 12, 20, 31, 45, 62, 82],
    7: [9, 14, 22, 33, 47, 66],
    8: [11],
    10: [12, 16, 24, 35, 50, 70],
    12: [14, 19, 27, 38, 52, 70, 89],
    15: [18],
    20: [22, 27, 35, 46, 60, 79],
    22: [24, 33],
    25: [28, 34],
    27: [29, 33, 41, 52, 66, 84],
    29: [31, 36, 44, 55, 70, 88],
}


def at(day: int, hour: int) -> datetime:
    return START + timedelta(days=day, hours=hour)


# the independent model ----------------------------------------------------------------------


@dataclass
class Modelled:
    """What the test believes about one memory. Times in days since the epoch."""

    learned: float
    strength: float = 1.0
    last: float | None = None
    archived_on: int | None = None
    recalls: int = 0

    def retention(self, now: float, decay: float) -> float:
        since = self.learned if self.last is None else self.last
        return math.exp(-decay * max(0.0, now - since) / self.strength)


def days_of(moment: datetime) -> float:
    return moment.timestamp() / 86400.0


@dataclass
class Run:
    """One simulation's record."""

    ids: list[str]
    recalls_made: int = 0
    recalls_skipped: list[tuple[int, int]] = field(default_factory=list)  # (day, turn) whose turn was gone
    nightly: list[list[str]] = field(default_factory=list)  # ids forgotten each night
    survivors: set[str] = field(default_factory=set)
    model: dict[str, Modelled] = field(default_factory=dict)


def write_timeline(path: Path) -> Path:
    with path.open("w", encoding="utf-8") as f:
        for i, word in enumerate(WORDS):
            record = {
                "role": "user",
                "content": TEMPLATE.format(word),
                "timestamp": at(i, 9).isoformat(),
                "session": f"day-{i}",
            }
            f.write(json.dumps(record) + "\n")
    return path


def import_timeline(runner: CliRunner, tmp_path: Path) -> list[str]:
    """Import the timeline; returns the memory id of turn i at index i."""
    # A simulation replays a timeline: each turn's retention clock starts when it was said.
    timeline = write_timeline(tmp_path / "timeline.jsonl")
    report = json.loads(
        ok(runner.invoke(app, ["import", str(timeline), "--retention-from", "conversation", "--json"])).stdout
    )
    assert (report["found"], report["added"], report["users"]) == (30, 30, {"sim": 30})
    rows = json.loads(ok(runner.invoke(app, ["list", "-n", "0", "--json"])).stdout)
    by_word = {}
    for row in rows:
        [word] = [w for w in WORDS if w in row["text"].split(" ")[-1]]
        by_word[word] = row
    assert all(
        by_word[w]["strength"] == 1.0
        and datetime.fromisoformat(by_word[w]["created_at"]).timestamp() == at(i, 9).timestamp()
        for i, w in enumerate(WORDS)
    )
    return [by_word[w]["id"] for w in WORDS]


def simulate(runner: CliRunner, tmp_path: Path, decay: float, stochastic_seed: int | None = None) -> Run:
    """Run the 90 days through the CLI, checking every night against the model as it goes.

    Threshold mode: every scheduled recall runs; when the model says its turn is gone, the
    recall must not print it (it prints whatever else is nearest, and the model counts
    that memory as recalled). Stochastic mode: a recall runs only while its turn is alive,
    so that each turn's fate depends on its own draws only.
    """
    ids = import_timeline(runner, tmp_path)
    run = Run(ids)
    model = {memory_id: Modelled(days_of(at(i, 9))) for i, memory_id in enumerate(ids)}
    run.model = model
    for day in range(DAYS):
        noon = at(day, 12).isoformat()
        for turn, days in sorted(SCHEDULE.items()):
            if day not in days:
                continue
            target = ids[turn]
            alive = model[target].archived_on is None
            if stochastic_seed is not None and not alive:
                run.recalls_skipped.append((day, turn))
                continue
            printed = json.loads(
                ok(runner.invoke(app, ["recall", WORDS[turn], "-k", "1", "--json"], env={"MEMCLI_NOW": noon})).stdout
            )
            printed_ids = [hit["id"] for hit in printed]
            if alive:
                assert printed_ids == [target], (day, turn, printed)
            else:
                run.recalls_skipped.append((day, turn))
                assert target not in printed_ids, (day, turn, "a forgotten memory was recalled")
            for memory_id in printed_ids:
                assert model[memory_id].archived_on is None, (day, memory_id, "a forgotten memory was recalled")
                m = model[memory_id]
                m.strength += 1.0
                m.last = days_of(at(day, 12))
                m.recalls += 1
                run.recalls_made += 1
        night = at(day, 23)
        now = days_of(night)
        args = ["forget", "--json"] + (
            ["--stochastic", "--seed", str(stochastic_seed)] if stochastic_seed is not None else []
        )
        report = json.loads(ok(runner.invoke(app, args, env={"MEMCLI_NOW": night.isoformat()})).stdout)
        living = [i for i, m in model.items() if m.archived_on is None and m.learned <= now]
        forgotten = [row["id"] for row in report["memories"]]
        assert report["examined"] == len([i for i, m in model.items() if m.archived_on is None]), day
        for row in report["memories"]:
            assert row["id"] in living, (day, row)
            assert row["forgetting"]["retention"] == pytest.approx(model[row["id"]].retention(now, decay), abs=2e-6), (
                day,
                row,
            )
        if stochastic_seed is None:
            for memory_id in living:
                r = model[memory_id].retention(now, decay)
                assert abs(r - THRESHOLD) > 1e-6, f"schedule too close to the threshold: day {day}, R {r}"
            predicted = sorted(i for i in living if model[i].retention(now, decay) < THRESHOLD)
            assert sorted(forgotten) == predicted, (day, sorted(forgotten), predicted)
        for memory_id in forgotten:
            model[memory_id].archived_on = day
        run.nightly.append(sorted(forgotten))
    active = json.loads(ok(runner.invoke(app, ["list", "-n", "0", "--json"])).stdout)
    archived = json.loads(ok(runner.invoke(app, ["list", "-n", "0", "--json", "--archived"])).stdout)
    run.survivors = {row["id"] for row in active}
    assert {row["id"] for row in archived} == set(ids) - run.survivors
    for row in active:  # what the store says of each survivor agrees with the model
        m = model[row["id"]]
        assert row["strength"] == pytest.approx(m.strength) and row["recall_count"] == m.recalls
    return run


def survival_probability(turn: int, decay: float) -> float:
    """P(turn i survives the 90 nights of stochastic forgetting), from the schedule alone:
    while alive it follows one fixed path (recalled on its days), and each night it survives
    with probability R, independently (the draw is a hash of seed, time and id)."""
    learned = days_of(at(turn, 9))
    strength, since, log_p = 1.0, learned, 0.0
    for day in range(turn, DAYS):
        if day in SCHEDULE.get(turn, []):
            strength, since = strength + 1.0, days_of(at(day, 12))
        log_p += -decay * (days_of(at(day, 23)) - since) / strength
    return math.exp(log_p)


@pytest.fixture
def sim_user(monkeypatch: pytest.MonkeyPatch) -> None:
    """User "sim", whose turns start at S = 1 day (strength_turn; the default, 10, lasts a
    month): the schedule is drawn for that scale, so that 90 days see many forgettings."""
    monkeypatch.setenv("MEMCLI_USER", "sim")
    monkeypatch.setenv("MEMCLI_STRENGTH_TURN", "1")


def test_the_fake_embedder_tells_the_words_apart(fake_embedder: Any) -> None:
    """Precondition of the schedule: each word lands in its own dimension of the fake
    embedder, apart from the template's words, so `recall WORD -k 1` finds that turn only."""

    def slot(word: str) -> int:
        vector = fake_embedder.embed_one(word)
        return max(range(len(vector)), key=vector.__getitem__)

    slots = [slot(w) for w in WORDS]
    template = {slot(w) for w in ["user", "today", "i", "noticed", "a"]}  # `user:` is the speaker prefix
    assert len(set(slots)) == len(WORDS) and not set(slots) & template


def test_ninety_days_threshold_forgetting_matches_the_model(
    runner: CliRunner, fake_embedder: Any, sim_user: None, tmp_path: Path
) -> None:
    run = simulate(runner, tmp_path, decay=1.0)
    predicted = {i for i, m in run.model.items() if m.archived_on is None}
    assert run.survivors == predicted
    # the schedule exercises what it is meant to: survivors, losses, recalls that came too late
    assert 0 < len(run.survivors) < len(run.ids)
    assert run.recalls_skipped and all(day >= 30 for day, _ in run.recalls_skipped)
    never_recalled = [run.ids[i] for i in range(30) if i not in SCHEDULE]
    assert not set(never_recalled) & run.survivors  # S = 1 and 60+ days: R = e^-60
    print(
        f"\nthreshold: imported {len(run.ids)}, recalls {run.recalls_made} ({len(run.recalls_skipped)} of a forgotten turn), "
        f"forgotten {sum(map(len, run.nightly))}, survivors {len(run.survivors)} (predicted {len(predicted)})"
    )


STOCHASTIC_DECAY = 0.0005  # nightly stochastic passes compound: Π R over 90 nights
SEED = 20250101


@pytest.mark.slow  # two simulations: ~1 minute, dealt out first (conftest)
def test_ninety_days_stochastic_forgetting_is_consistent_and_reproducible(
    runner: CliRunner, fake_embedder: Any, sim_user: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMCLI_DECAY", str(STOCHASTIC_DECAY))
    first = simulate(runner, tmp_path, STOCHASTIC_DECAY, stochastic_seed=SEED)

    p = [survival_probability(i, STOCHASTIC_DECAY) for i in range(len(WORDS))]
    expected, sd = sum(p), math.sqrt(sum(q * (1 - q) for q in p))
    assert 3 < expected < 27  # the setting makes the outcome genuinely uncertain
    assert abs(len(first.survivors) - expected) <= 4 * sd + 1, (len(first.survivors), expected, sd)
    # a memory is more likely to survive the more it was recalled: the ten most likely
    # survivors must not do worse than the ten least likely
    order = sorted(range(len(WORDS)), key=lambda i: p[i])
    low = sum(first.ids[i] in first.survivors for i in order[:10])
    high = sum(first.ids[i] in first.survivors for i in order[-10:])
    assert high >= low

    monkeypatch.setenv("MEMCLI_HOME", str(tmp_path / "second-home"))
    (tmp_path / "again").mkdir()
    second = simulate(runner, tmp_path / "again", STOCHASTIC_DECAY, stochastic_seed=SEED)
    assert second.ids == first.ids
    assert second.survivors == first.survivors
    assert second.nightly == first.nightly
    print(
        f"\nstochastic: imported {len(first.ids)}, recalls {first.recalls_made}, forgotten {sum(map(len, first.nightly))}, "
        f"survivors {len(first.survivors)} (expected {expected:.2f} ± {sd:.2f})"
    )
