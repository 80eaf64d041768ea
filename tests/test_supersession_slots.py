"""Supersession at write time over what a note names by the slot it fills (issue 31, the
rules path): an employer named in any case where a job's start, offer or end names one
("first week at octopus energy", "offer from monzo, accepting", "monzo onboarding"), work
told of at a place ("another late shift at the Co-op"), which a job elsewhere ends but which
ends nothing, and a Chinese place where one works, which is no employer ("我在北京工作")."""

from __future__ import annotations

from typing import Any

import pytest
from cli_checks import remember_at, show_json
from typer.testing import CliRunner

from memcli.text.updates import WORK_CONTEXT, statements, updates


def _job(text: str) -> Any:
    (said,) = [s for s in statements(text) if s.key == "job"]
    return said


def _no_job(text: str) -> bool:
    return not [s for s in statements(text) if s.key == "job"]


@pytest.mark.parametrize(
    ("text", "employer"),
    [
        ("got an offer from monzo today, accepting it", "monzo"),
        ("Arup made me an offer and I took it", "arup"),
        ("first week at octopus energy, exhausted", "octopus energy"),
        ("day one at the nhs trust done", "nhs trust"),
        ("monzo onboarding day 2, so many forms", "monzo"),
        ("induction at Network Rail all week", "network rail"),
        ("接了美团的offer，下个月入职", "美团"),
    ],
)
def test_an_employer_named_in_any_case_by_a_start_or_an_offer_taken_is_a_job(text: str, employer: str) -> None:
    assert _job(text).value.split("|")[1] == employer


@pytest.mark.parametrize(
    "text",
    [
        "offer from Arup, not sure whether to accept",
        "got an offer from monzo, turned it down",
        "ran the client onboarding call, went fine",
        "first day at school tomorrow for the twins",
        "拿到了美团的offer，还在考虑",
    ],
)
def test_an_offer_not_taken_or_a_start_that_names_no_employer_is_no_job(text: str) -> None:
    assert _no_job(text)


@pytest.mark.parametrize(
    ("text", "title"),
    [
        ("landed the senior designer role!!", "senior designer"),
        ("got the promotion! team lead from May", "team lead"),
        ("teaching year 5 at st marks primary", "teacher"),
    ],
)
def test_a_title_taken_or_a_living_by_its_doing_is_a_job(text: str, title: str) -> None:
    assert _job(text).value.split("|")[0] == title


def test_going_freelance_ends_a_job_at_an_employer() -> None:
    assert updates(_job("gone freelance as a photographer"), _job("I work at Boots"))


def test_the_end_of_a_job_at_one_employer_ends_no_job_taken_at_another() -> None:
    last_day = _job("last day at deloitte, drinks after")
    assert updates(last_day, _job("first day at deloitte, audit team"))
    assert not updates(last_day, _job("accepted the offer from Stripe"))


@pytest.mark.parametrize(
    "text",
    ["another late shift at the Co-op, feet are gone", "stand-up at Monzo overran again", "still grinding at Ocado"],
)
def test_work_told_of_at_a_place_is_ended_by_a_job_elsewhere_and_ends_none(text: str) -> None:
    context = _job(text)
    assert context.state == WORK_CONTEXT
    assert updates(_job("first week at octopus energy, exhausted"), context)
    assert not updates(context, _job("I work at Tesco"))


def test_someone_elses_shift_is_no_job_of_ones_own() -> None:
    assert _no_job("Tom's shift at Tesco ran late")


@pytest.mark.parametrize("text", ["我在北京工作", "我在杭州上班，压力挺大", "在浦东新区上班"])
def test_a_chinese_place_where_one_works_is_no_employer(text: str) -> None:
    assert all(not s.value.split("|")[1] for s in statements(text) if s.key == "job")


def test_a_chinese_title_after_the_place_where_one_works_is_the_job() -> None:
    assert _job("我在深圳上班，做前端开发").value == "前端开发|"


def test_a_chinese_employer_is_still_one() -> None:
    assert _job("我在腾讯工作").value == "|腾讯"


def test_remember_ends_work_told_of_at_a_place_when_a_job_starts_elsewhere(
    runner: CliRunner, fake_embedder: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    old = remember_at(runner, monkeypatch, "2024-01-05T09:00:00", "another late shift at the Co-op, feet are gone")
    other = remember_at(runner, monkeypatch, "2024-01-06T09:00:00", "buy a birthday card for Jan")
    new = remember_at(runner, monkeypatch, "2024-04-05T09:00:00", "first week at octopus energy, exhausted")
    assert show_json(runner, old)["superseded_by"] == new
    assert show_json(runner, other)["superseded_by"] in (None, "")


def _membership(text: str) -> Any:
    (said,) = [s for s in statements(text) if s.key.startswith("membership:")]
    return said


@pytest.mark.parametrize(
    ("older", "newer"),
    [
        ("joined anytime fitness, $25/mo", "cancelled AF today, too far from the flat"),
        ("Disney+ annual plan bought", "disney+ cancelled, nothing on"),
        ("amazon prime membership renewed, £95", "let amazon prime lapse, never used it"),
        ("hbo family plan, $20 a month", "dropped hbo, nothing worth watching"),
    ],
)
def test_a_membership_ended_by_its_name_or_initials_ends_the_one_held(older: str, newer: str) -> None:
    ended, held = _membership(newer), _membership(older)
    assert ended.ended and not held.ended
    assert updates(ended, held)


def test_an_initialism_is_no_other_name() -> None:
    assert not updates(_membership("cancelled GP, too dear"), _membership("joined anytime fitness, $25/mo"))


@pytest.mark.parametrize("text", ["lesson plan for monday", "signed up for the 10k in May", "left the office at 6"])
def test_a_plan_or_a_sign_up_at_no_price_holds_no_membership(text: str) -> None:
    assert not [s for s in statements(text) if s.key.startswith("membership:") and not s.ended]


def test_a_habit_stopped_is_still_read_beside_a_membership_ended_by_name() -> None:
    assert [s for s in statements("I quit smoking") if s.key.startswith("habit:")]


def test_a_chinese_pass_given_back_is_ended() -> None:
    said = _membership("乐刻退了，换成超级猩猩")
    assert said.ended and said.value == "乐刻"


def test_remember_ends_a_membership_cancelled_by_its_initials(
    runner: CliRunner, fake_embedder: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    old = remember_at(runner, monkeypatch, "2024-01-05T09:00:00", "joined anytime fitness, $25/mo")
    new = remember_at(runner, monkeypatch, "2024-05-05T09:00:00", "cancelled AF today, too far from the flat")
    assert show_json(runner, old)["superseded_by"] == new


def _diet(text: str) -> Any:
    (said,) = [s for s in statements(text) if s.key == "diet"]
    return said


@pytest.mark.parametrize(
    ("older", "newer"),
    [
        ("strict keto since jan", "switched over to mediterranean, dietitian's idea"),
        ("doing 16:8 fasting most days", "changed to 20:4, eating window 2-6pm"),
        ("intermittent fasting 18/6 now", "back to 16:8 fasting, the 18 was too much"),
    ],
)
def test_a_diet_switched_to_or_a_fasting_schedule_changed_ends_the_older(older: str, newer: str) -> None:
    assert updates(_diet(newer), _diet(older))


@pytest.mark.parametrize("text", ["meeting moved to 14:10", "booked a mediterranean cruise for June", "train at 16:8"])
def test_a_time_or_a_mediterranean_thing_is_no_diet(text: str) -> None:
    assert not [s for s in statements(text) if s.key == "diet"]


def test_fasting_stopped_ends_a_fasting_schedule() -> None:
    assert updates(_diet("dropped the fasting, too hungry"), _diet("doing 16:8 fasting most days"))


def _partner(text: str) -> Any:
    (said,) = [s for s in statements(text) if s.key == "partner"]
    return said


@pytest.mark.parametrize(
    ("older", "newer"),
    [
        ("sam & i official now!!", "broke up with sam last night"),
        ("dating noor, it's going well", "noor and i split up, mutual"),
        ("seeing someone new - tariq, met at salsa", "ended things with tariq"),
        ("lena and i broke up", "dating omar now, met through work"),
    ],
)
def test_a_partner_named_in_lower_case_in_a_couples_slot_is_read(older: str, newer: str) -> None:
    assert updates(_partner(newer), _partner(older))


@pytest.mark.parametrize(
    "text", ["dating apps are exhausting", "seeing clients all day", "play date with lucy at 3", "broke up with him"]
)
def test_a_word_in_a_couples_slot_that_names_no_one_is_no_partner(text: str) -> None:
    assert not [s for s in statements(text) if s.key == "partner"]


def test_remember_ends_a_couple_noted_in_lower_case_when_it_ends(
    runner: CliRunner, fake_embedder: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    old = remember_at(runner, monkeypatch, "2024-01-05T09:00:00", "sam & i official now!!")
    new = remember_at(runner, monkeypatch, "2024-05-05T09:00:00", "broke up with sam last night")
    assert show_json(runner, old)["superseded_by"] == new


def test_an_initialism_finds_the_membership_by_its_kept_initials_not_by_a_scan(
    runner: CliRunner, fake_embedder: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """ "cancelled AF" keys no term of "anytime fitness": the held membership keeps its
    initials as a term, so remember looks them up instead of scanning every row the user
    holds (a million, for a big user)."""
    from memcli.store.recall_index import RecallIndex

    old = remember_at(runner, monkeypatch, "2024-01-05T09:00:00", "joined anytime fitness, $25/mo")
    remember_at(runner, monkeypatch, "2024-02-05T09:00:00", "long walk by the canal")

    def no_scan(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("scanned every row of the user")

    monkeypatch.setattr(RecallIndex, "current_holding", no_scan)
    new = remember_at(runner, monkeypatch, "2024-05-05T09:00:00", "cancelled AF today, too far from the flat")
    assert show_json(runner, old)["superseded_by"] == new
