"""Supersession at write time by the kind of what changed (issue 31): a stopped habit ends
only a habit of its own kind (drinking is alcohol, not coffee; vaping is not smoking), a
stop may leave its habit unnamed ("not drinking anymore", "戒了三个月了"), a dose may be
changed without its medicine's name ("cut the long acting down to 14u", "doubled it, so
10mg"), and someone else's dose ("Jess's GP bumped it up") is not the writer's."""

from __future__ import annotations

from typing import Any

import pytest
from cli_checks import remember_at, show_json
from typer.testing import CliRunner

from memcli.text.updates import keeps_habit, statements, states_habit


def _stop(text: str) -> Any:
    (stop,) = [s for s in statements(text) if s.ended]
    return stop


@pytest.mark.parametrize(
    ("stop", "kept"),
    [
        ("I quit drinking.", "I drink two coffees every morning"),
        ("quit drinking for good", "drinking green tea every afternoon"),
        ("I quit drinking.", "drinking 2 litres of water a day"),
        ("I quit smoking.", "e-cig every day at work"),
    ],
)
def test_a_stopped_habit_ends_no_habit_of_another_kind(stop: str, kept: str) -> None:
    """Drinking with no drink named is alcohol: its stop keeps the coffee and the water;
    smoking and vaping are two habits."""
    said = _stop(stop)
    assert not states_habit(kept, said.words)
    assert not keeps_habit(kept, said.value)


@pytest.mark.parametrize(
    ("stop", "kept"),
    [
        ("I quit drinking.", "2-3 glasses of wine most nights lately, not great"),
        ("quit drinking for good", "beers with the team every Friday"),
    ],
)
def test_a_stopped_habit_ends_the_habit_of_its_kind(stop: str, kept: str) -> None:
    """Drinking stopped, with no drink named, ends the wine and the beer."""
    said = _stop(stop)
    assert states_habit(kept, said.words) or keeps_habit(kept, said.value)


def test_quitting_drinking_keeps_the_coffee_habit(
    runner: CliRunner, fake_embedder: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    coffee = remember_at(runner, monkeypatch, "2025-01-10T09:00:00", "I drink two coffees every morning.")
    remember_at(runner, monkeypatch, "2025-03-15T09:00:00", "I quit drinking.")
    assert show_json(runner, coffee)["valid_to"] is None


def test_not_drinking_anymore_ends_the_wine(
    runner: CliRunner, fake_embedder: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A stop said as "not …ing anymore" names drinking, and drinking is the wine."""
    wine = remember_at(runner, monkeypatch, "2024-12-10T21:00:00", "2-3 glasses of wine most nights lately, not great")
    stop = remember_at(
        runner, monkeypatch, "2025-02-01T09:00:00", "made it! honestly gonna keep going, not drinking anymore for now"
    )
    assert show_json(runner, wine)["superseded_by"] == stop


def test_a_chinese_bare_stop_with_its_duration_ends_the_habit_noted_before(
    runner: CliRunner, fake_embedder: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A duration is no habit's name ("戒了一个月了"); the stop ends the habit noted before."""
    assert statements("戒了三个月了")[0].key == "habit:"
    tea = remember_at(runner, monkeypatch, "2025-05-03T09:00:00", "这周又喝了四杯奶茶，喜茶和霸王茶姬轮着来")
    stop = remember_at(runner, monkeypatch, "2025-06-20T09:00:00", "戒了一个月了，居然没那么想喝")
    assert show_json(runner, tea)["superseded_by"] == stop


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("diabetes nurse called back: cut the long acting down to 14u at night", "14 unit"),
        ("home readings still ~145. doc doubled it, so 10mg once a day now, recheck in a month", "10 mg"),
    ],
)
def test_a_dose_changed_without_its_medicines_name_is_read(text: str, value: str) -> None:
    (dose,) = statements(text)
    assert (dose.key, dose.value) == ("dose:", value)


def test_a_dose_changed_without_its_name_is_of_the_medicine_the_note_names() -> None:
    (dose,) = statements("on amlodipine since May. doc doubled it, so 10mg now")
    assert (dose.key, dose.value) == ("dose:amlodipine", "10 mg")


def test_units_cut_to_14u_supersede_the_basal_dose(
    runner: CliRunner, fake_embedder: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    basal = remember_at(
        runner, monkeypatch, "2024-01-12T22:00:00", "lantus 18 units at bedtime, novorapid 1u per 10g carbs"
    )
    change = remember_at(
        runner,
        monkeypatch,
        "2024-02-06T10:00:00",
        "diabetes nurse called back: cut the long acting down to 14u at night, keep mealtime ratio the same",
    )
    assert show_json(runner, basal)["superseded_by"] == change


def test_doubled_it_so_10mg_supersedes_the_dose(
    runner: CliRunner, fake_embedder: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    dose = remember_at(
        runner, monkeypatch, "2025-01-08T09:00:00", "BP 152/95 at the pharmacy machine 😬 GP started me on norvasc 5mg"
    )
    change = remember_at(
        runner,
        monkeypatch,
        "2025-02-19T09:00:00",
        "home readings still ~145. doc doubled it, so 10mg once a day now, recheck in a month",
    )
    assert show_json(runner, dose)["superseded_by"] == change


@pytest.mark.parametrize(
    "text",
    [
        "Jess's GP bumped it up to 20mg",
        "Tom's dose went up to 10mg",
        "my roommate's dose went up to 10mg",
        "flatmate's meds went up to 20mg",
        "Tom's metformin went up to 1000mg",
    ],
)
def test_someone_elses_dose_is_not_the_writers(text: str) -> None:
    assert not [s for s in statements(text) if s.key.startswith("dose:")]


def test_someone_elses_dose_change_keeps_the_writers_dose(
    runner: CliRunner, fake_embedder: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    mine = remember_at(runner, monkeypatch, "2025-01-08T09:00:00", "sertraline 50mg every morning")
    remember_at(runner, monkeypatch, "2025-02-19T09:00:00", "Jess's GP bumped it up to 100mg")
    assert show_json(runner, mine)["valid_to"] is None
