"""Supersession at write time over phrasings people write (issue 31): a Chinese dose noted as
a name and a number without a verb, an employer named after "first day/week/shift at" in a
sentence that goes on in lower case, a Chinese start "在/到/去 X 上班", and a note headed by a
label ("book club pick: …"), which tells rather than asks."""

from __future__ import annotations

from typing import Any

import pytest
from cli_checks import remember_at, show_json
from typer.testing import CliRunner

from memcli.text.updates import asks, statements, updates


def _one(text: str, attribute: str) -> Any:
    (said,) = [s for s in statements(text) if s.key.split(":", 1)[0] == attribute]
    return said


@pytest.mark.parametrize(
    ("text", "medicine"),
    [
        ("二甲双胍 500毫克 饭后吃", "二甲双胍"),
        ("缬沙坦 80mg 每天一次", "缬沙坦"),
        ("优甲乐一天75微克", "优甲乐"),
        ("二甲双胍早晚各500毫克", "二甲双胍"),
        ("雅施达，早上 4毫克", "雅施达"),
    ],
)
def test_a_chinese_dose_written_as_a_name_and_a_number_names_its_medicine(text: str, medicine: str) -> None:
    assert _one(text, "dose").key == f"dose:{medicine}"


def test_a_clause_before_the_dose_that_is_no_medicine_is_not_taken_for_one() -> None:
    assert _one("甲状腺复查，医生让减到50微克", "dose").key == "dose:"


@pytest.mark.parametrize(
    ("older", "newer"),
    [
        ("格华止 500毫克 饭后吃", "复查后医生让加到1000毫克"),
        ("雅施达 4mg 每天一次", "血压还是高，医生说加到8mg"),
    ],
)
def test_remember_ends_a_chinese_dose_noted_without_a_verb(
    runner: CliRunner, fake_embedder: Any, monkeypatch: pytest.MonkeyPatch, older: str, newer: str
) -> None:
    old = remember_at(runner, monkeypatch, "2024-01-05T09:00:00", older)
    other = remember_at(runner, monkeypatch, "2024-01-06T09:00:00", "交电费 230")
    new = remember_at(runner, monkeypatch, "2024-03-05T09:00:00", newer)
    assert show_json(runner, old)["superseded_by"] == new
    assert show_json(runner, other)["superseded_by"] in (None, "")


@pytest.mark.parametrize(
    ("older", "newer", "employer"),
    [
        ("I work at Barclays", "first week at Octopus Energy over, exhausted", "octopus energy"),
        ("I'm a nurse at St Mary's", "First shift at the Royal Free done, feet destroyed", "royal free"),
        ("我在华为上班", "开始在阿里上班了", "阿里"),
        ("我现在在腾讯工作", "下周一到字节上班", "字节"),
    ],
)
def test_a_start_at_a_new_employer_ends_the_older_job(older: str, newer: str, employer: str) -> None:
    new = _one(newer, "job")
    assert new.value.split("|")[1] == employer
    assert updates(new, _one(older, "job"))


def test_a_wish_to_work_somewhere_states_no_job() -> None:
    assert not [s for s in statements("我想去华为工作") if s.key == "job"]


@pytest.mark.parametrize(
    "text",
    [
        "book club pick: Piranesi. loved it",
        "list of meds: metformin, ramipril",
        "check-up moved to Thursday",
        "新书单：《三体》",
        "When: Tuesday 3pm",
        "me: still in Leeds for now, lease up in May",
        "Doctor told me: dose down to 5mg now",
        "GP gave me: amlodipine 10mg",
        "thank you: the flowers arrived",
    ],
)
def test_a_note_headed_by_a_label_tells(text: str) -> None:
    assert not asks(text)


@pytest.mark.parametrize(
    "text",
    [
        "Q: where do I live?",
        "todo: book the dentist",
        "remind me: call mum",
        "tell us: which one?",
        "can you remind me: the plumber's number",
        "please tell me: what time is the match",
        "请问：医院几点开门",
        "book a table",
    ],
)
def test_a_label_that_asks_or_a_request_after_a_label_still_asks(text: str) -> None:
    assert asks(text)


@pytest.mark.parametrize(
    ("older", "newer"),
    [
        ("Vit D 2000 IU with breakfast", "bloods came back low, GP says go up to 5000 IU"),
        ("Vit B12 500 mcg every morning", "pharmacist said to step down to 250 mcg"),
    ],
)
def test_remember_ends_a_vitamin_dose_written_short_when_a_later_note_moves_it(
    runner: CliRunner, fake_embedder: Any, monkeypatch: pytest.MonkeyPatch, older: str, newer: str
) -> None:
    old = remember_at(runner, monkeypatch, "2024-01-05T09:00:00", older)
    new = remember_at(runner, monkeypatch, "2024-02-05T09:00:00", newer)
    assert show_json(runner, old)["superseded_by"] == new


@pytest.mark.parametrize(
    ("older", "newer"),
    [
        ("Signed a lease for the flat on Cowley Road, keys on Friday", "Finally moved into the house on Iffley Road"),
        ("Today moved into the studio on Elm Street", "Eventually moved to the apartment on Oak Avenue"),
    ],
)
def test_a_move_to_another_street_opening_on_an_adverb_ends_the_older_home(older: str, newer: str) -> None:
    assert updates(_one(newer, "residence"), _one(older, "residence"))


def test_someone_named_moving_states_no_home_of_ones_own() -> None:
    assert not [s for s in statements("Sarah moved to Portland last week") if s.key == "residence"]


@pytest.mark.parametrize(
    ("older", "newer"),
    [
        ("got shift lead at Tesco!", "started at Aldi as store manager, handed in notice at the old place"),
        ("still a staff nurse at St Thomas', nights mostly", "became ward sister at Guy's, huge news"),
        ("made senior engineer at Arup this week", "I work for Atkins now"),
    ],
)
def test_a_role_taken_or_still_held_at_an_employer_is_a_job_a_later_one_ends(older: str, newer: str) -> None:
    assert updates(_one(newer, "job"), _one(older, "job"))


def test_someone_named_getting_a_role_states_no_job_of_ones_own() -> None:
    assert not [s for s in statements("Tom got manager at Tesco") if s.key == "job"]


@pytest.mark.parametrize(
    ("older", "newer"),
    [
        ("still a barista at Pret, early shifts mostly", "promoted to shift supervisor, more money finally"),
        ("currently a staff nurse at St Thomas', nights mostly", "I work for Guy's now, days only"),
    ],
)
def test_remember_ends_a_job_noted_only_by_its_title_at_an_employer(
    runner: CliRunner, fake_embedder: Any, monkeypatch: pytest.MonkeyPatch, older: str, newer: str
) -> None:
    old = remember_at(runner, monkeypatch, "2024-01-05T09:00:00", older)
    new = remember_at(runner, monkeypatch, "2024-06-05T09:00:00", newer)
    assert show_json(runner, old)["superseded_by"] == new
