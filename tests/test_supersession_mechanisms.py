"""Supersession at write time by mechanisms, not phrases (issue 31): the same subject with a
new value of the same kind (a dose of a medicine named in full or cut short, a diet of the
lexicon of diets, a job's role or employer), a stop said near a subject the person keeps a
habit of (matched by stem), and a bare note of a habit's end that ends the nearer habit, or
none when two are kept and it names neither."""

from __future__ import annotations

from typing import Any

import pytest
from cli_checks import remember_at, show_json
from typer.testing import CliRunner

from memcli.text.updates import keeps_habit, statements, updates


def _one(text: str, attribute: str) -> Any:
    (said,) = [s for s in statements(text) if s.key.split(":", 1)[0] == attribute]
    return said


@pytest.mark.parametrize(
    ("older", "newer"),
    [
        ("Amlodipine 5 mg each morning", "GP says amlo 10 mg from next week"),
        ("Prednisolone 30mg daily for the flare", "tapering: 15 mg pred from Monday"),
        ("vitamin D 25 mcg with breakfast", "D3 down to 10 mcg, levels fine now"),
        ("每天吃维生素D 800IU", "维生素D3改成400IU了"),
        ("维他命D每天1000IU", "复查后D3加到2000IU"),
    ],
)
def test_a_dose_of_the_same_medicine_by_an_abbreviation_or_a_vitamins_letter_updates_the_older(
    older: str, newer: str
) -> None:
    assert updates(_one(newer, "dose"), _one(older, "dose"))


@pytest.mark.parametrize(
    "text",
    [
        "we could try 150mg next time",
        "I try to keep it under 1500mg sodium a day",
        "I think maybe 200 mg would be better",
        "I take about 50 mg",
    ],
)
def test_a_function_word_next_to_a_number_is_no_medicine(text: str) -> None:
    named = {s.key.partition(":")[2] for s in statements(text) if s.key.startswith("dose:")}
    assert not named & {"try", "next", "under", "keep", "maybe", "think", "about", "take"}


@pytest.mark.parametrize(
    ("older", "newer"),
    [
        ("officially pescatarian as of this week", "went full vegan after watching Dominion, no going back"),
        ("officially keto as of monday", "back to eating meat, the keto thing was miserable"),
        ("生酮饮食，不吃主食", "生酮坚持不下去，换成轻断食"),
        ("我顿顿吃肉，无肉不欢", "开始吃素了，身体轻松多了"),
    ],
)
def test_a_diet_of_the_lexicon_standing_as_a_value_updates_the_older(older: str, newer: str) -> None:
    assert updates(_one(newer, "diet"), _one(older, "diet"))


def test_a_diet_dropped_ends_that_diet_only() -> None:
    dropped = _one("ditched the low carb thing after a week", "diet")
    assert updates(dropped, _one("low carb from today, wish me luck", "diet"))
    assert not updates(dropped, _one("vegetarian since uni", "diet"))
    assert not updates(_one("断食先停了", "diet"), _one("开始吃素了", "diet"))
    assert updates(_one("the dietitian has me on a mediterranean diet now", "diet"), _one("keto day 3", "diet"))


@pytest.mark.parametrize("text", ["made a vegan cake for the bake sale", "I don't eat meat", "keto recipes are boring"])
def test_a_diet_word_qualifying_a_noun_or_meat_not_eaten_states_no_diet(text: str) -> None:
    assert [s for s in statements(text) if s.key == "diet"] == []


@pytest.mark.parametrize(
    ("older", "newer"),
    [
        ("swimming laps every Tuesday and Thursday", "shoulder op, so no swimming for now"),
        ("meditating every night before bed", "gave up the meditation app, never stuck"),
        ("vaping every evening after work", "two weeks off vaping now"),
        ("每天晚上跑步五公里", "跑步暂时停了，膝盖疼"),
        ("每周三晚上跟同事他们打羽毛球", "羽毛球不打了，周三改成加班"),
    ],
)
def test_a_stop_near_the_subject_of_a_habit_kept_ends_it(older: str, newer: str) -> None:
    (stopped,) = [s for s in statements(newer) if s.ended and s.key.startswith("habit:")]
    assert keeps_habit(older, stopped.value)


@pytest.mark.parametrize(
    ("older", "newer"),
    [
        ("swimming laps every Tuesday and Thursday", "no running for now"),
        ("Had a swim with Tom at the lido", "no swimming for now"),
        ("每周三晚上打羽毛球", "跑步暂时停了"),
    ],
)
def test_a_stop_ends_no_habit_of_another_subject_nor_a_note_without_a_frequency(older: str, newer: str) -> None:
    (stopped,) = [s for s in statements(newer) if s.ended and s.key.startswith("habit:")]
    assert not keeps_habit(older, stopped.value)


@pytest.mark.parametrize(
    "text", ["I can't stop thinking about the trip", "need to stop vaping", "no problem, see you then", "no idea."]
)
def test_a_negated_or_intended_stop_or_a_no_of_nothing_ends_no_habit(text: str) -> None:
    assert [s for s in statements(text) if s.key.startswith("habit:")] == []


@pytest.mark.parametrize(
    ("older", "newer"),
    [
        ("staff nurse at St Thomas' on nights", "new chapter: ux designer @ Monzo from March"),
        ("data analyst at Tesco, 3 years now", "career change — now a junior dev, bootcamp paid off"),
        ("在银行当柜员第三年", "现在是产品经理了，在一家互联网公司"),
        ("在京东干了两年了", "入职腾讯了，做运营"),
    ],
)
def test_a_later_role_or_employer_ends_the_earlier_job(older: str, newer: str) -> None:
    assert updates(_one(newer, "job"), _one(older, "job"))


@pytest.mark.parametrize(
    "text", ["Sam is now a manager at Tesco", "dinner @ Nando's with the team lead", "I met a nurse at St Mary's"]
)
def test_someone_elses_role_or_a_place_at_states_no_job(text: str) -> None:
    assert [s for s in statements(text) if s.key == "job"] == []


def test_a_second_club_is_additive_and_leaving_one_ends_that_one() -> None:
    chess = _one("joined the Thursday night chess club at the library", "membership")
    running = _one("joined the local running club", "membership")
    left = _one("left chess club, too many late nights", "membership")
    assert not updates(running, chess)
    assert updates(left, chess)


def test_remember_ends_the_habit_a_stop_names_by_its_stem(
    runner: CliRunner, fake_embedder: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    swimming = remember_at(runner, monkeypatch, "2024-01-02T09:00:00", "swimming laps every Tuesday and Thursday")
    reading = remember_at(runner, monkeypatch, "2024-01-03T09:00:00", "reading 20 pages every night")
    stop = remember_at(runner, monkeypatch, "2024-02-01T09:00:00", "shoulder op, so no swimming for now")
    assert show_json(runner, swimming)["superseded_by"] == stop
    assert show_json(runner, reading)["superseded_by"] in (None, "")


def test_a_bare_stop_ends_the_habit_it_shares_a_word_with(
    runner: CliRunner, fake_embedder: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    running = remember_at(runner, monkeypatch, "2024-03-01T09:00:00", "running 5k every morning before work")
    journal = remember_at(runner, monkeypatch, "2024-03-02T09:00:00", "journaling every night, one page")
    stopped = remember_at(runner, monkeypatch, "2024-03-20T09:00:00", "Stopped. The running was wrecking my knee.")
    assert show_json(runner, running)["superseded_by"] == stopped
    assert show_json(runner, journal)["superseded_by"] in (None, "")


def test_a_bare_stop_naming_neither_of_two_habits_ends_none(
    runner: CliRunner, fake_embedder: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    vaping = remember_at(runner, monkeypatch, "2024-03-01T09:00:00", "vaping every evening after work")
    wine = remember_at(runner, monkeypatch, "2024-03-02T09:00:00", "two glasses of red most nights")
    remember_at(runner, monkeypatch, "2024-03-20T09:00:00", "Quit. For good this time.")
    assert show_json(runner, vaping)["superseded_by"] in (None, "")
    assert show_json(runner, wine)["superseded_by"] in (None, "")


def test_remember_ends_the_dose_an_abbreviation_names(
    runner: CliRunner, fake_embedder: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    full = remember_at(runner, monkeypatch, "2024-01-05T09:00:00", "Amlodipine 5 mg each morning")
    other = remember_at(runner, monkeypatch, "2024-01-06T09:00:00", "atorvastatin 20 mg at night")
    short = remember_at(runner, monkeypatch, "2024-03-05T09:00:00", "GP says amlo 10 mg from next week")
    assert show_json(runner, full)["superseded_by"] == short
    assert show_json(runner, other)["superseded_by"] in (None, "")
