"""A note written short ("Sarah bday = 17 Oct", "dentist appt") answers the
question written in full, a couch is a sofa; and a question asking a rate ("what interest
rate…", "mortgage rate", "resting heart rate", "利率") is answered only by a note stating a
number (issue 31: an answer never quotes a memory that holds none of what is asked)."""

from __future__ import annotations

from datetime import datetime

import pytest

from memcli.memory import Memory
from memcli.recall.answers import answer, asks_amount

NOW = datetime(2026, 7, 1, 12).timestamp()
NOT_FOUND = ("I don't find", "没有找到")


def _note(key: str, text: str, month: int) -> Memory:
    return Memory(key * 16, "sam", "note", text, datetime(2026, month, 2, 12).timestamp(), "")


def _cited(question: str, texts: list[str]) -> tuple[str, list[str], list[Memory]]:
    notes = [_note(chr(ord("a") + i), text, 1 + i) for i, text in enumerate(texts)]
    found = answer(question, notes, "sam", NOW, {m.id: 0.5 - 0.1 * i for i, m in enumerate(notes)})
    return found.text, found.cited, notes


@pytest.mark.parametrize(
    ("question", "text"),
    [
        ("When's Sarah's birthday?", "Sarah bday = 17 Oct, she wants nothing fancy"),
        ("when is my dentist appointment?", "dentist appt aug 28 3pm"),
        ("what colour is the new sofa?", "new couch is sage green, arrives friday"),
    ],
)
def test_a_note_written_short_answers_the_question_written_in_full(question: str, text: str) -> None:
    _, cited, notes = _cited(question, [text, "called the plumber about the boiler"])
    assert cited == [notes[0].id]


@pytest.mark.parametrize(
    ("question", "kind"),
    [
        ("what interest rate is my savings account earning?", "rate"),
        ("what's my mortgage rate now?", "rate"),
        ("what's my resting heart rate?", "rate"),
        ("我的房贷利率是多少？", "rate"),
        ("how much is my rent?", "money"),
    ],
)
def test_a_question_asking_a_rate_asks_an_amount_of_that_kind(question: str, kind: str) -> None:
    assert asks_amount(question) == kind


def test_a_note_naming_the_account_without_a_rate_does_not_answer_what_rate_it_earns() -> None:
    text, cited, _ = _cited(
        "what interest rate is my savings account earning?", ["opened a high yield savings at ally"]
    )
    assert not cited and text.startswith(NOT_FOUND)


@pytest.mark.parametrize(
    ("question", "text"),
    [
        ("what interest rate is my savings account earning?", "ally savings account now pays 4.2% apy"),
        ("what's my hourly rate for tutoring?", "tutoring hourly rate is $45/hr from september"),
        ("我的房贷利率是多少？", "房贷利率降到3.1%了，月供少了两百"),
    ],
)
def test_a_note_stating_the_rate_answers(question: str, text: str) -> None:
    _, cited, notes = _cited(question, [text])
    assert cited == [notes[0].id]
