"""A question may name a service by its kind ("what streaming service am I subscribed to?",
"who's my mobile network?", "which gym", "grocery membership", "哪个视频会员"): a note naming
a service of that kind answers it (issue 31), and a service named in someone else's sentence
("dad finally got netflix") is not the asker's. A note that only plans or needs ("need to
figure out a hotel in kyoto") does not answer a question about something done."""

from __future__ import annotations

from datetime import datetime

import pytest

from memcli.memory import Memory
from memcli.recall.answers import answer

NOW = datetime(2026, 7, 1, 12).timestamp()
NOT_FOUND = ("I don't find", "没有找到")


def _note(key: str, text: str, year: int, month: int, day: int) -> Memory:
    said = datetime(year, month, day, 12).timestamp()
    return Memory(key * 16, "sam", "note", text, said, f"{year}-{month:02d}-{day:02d}")


def _answered(question: str, notes: list[Memory]) -> tuple[str, list[str]]:
    """The text and the ids ``answer`` cites, as ``memcli ask`` calls it (the first note
    recalled closest)."""
    found = answer(question, notes, "sam", NOW, {m.id: 0.5 - 0.1 * i for i, m in enumerate(notes)})
    return found.text, found.cited


def _finds_nothing(question: str, text: str) -> bool:
    """Whether a note of ``text`` alone leaves ``question`` unanswered: nothing cited, "not found"."""
    found_text, cited = _answered(question, [_note("a", text, 2026, 3, 2)])
    return not cited and found_text.startswith(NOT_FOUND)


@pytest.mark.parametrize(
    ("question", "texts"),
    [
        ("what streaming service am I subscribed to?", ["trying mubi for a month, loving it", "car wash sat"]),
        ("who's my cell carrier?", ["ported my number to mint mobile, $30/mo", "dentist thursday 3pm"]),
        ("which gym do I go to?", ["signed up at the castle climbing centre, £55/mo unlimited", "new kettle"]),
        ("what grocery membership do I have?", ["joined the local food co-op, $25/yr", "called the plumber"]),
        ("我现在在哪家健身？", ["办了超级猩猩的次卡，跳操很开心", "周五和小吴吃饭"]),
        ("我开的是哪个视频会员？", ["开了B站大会员，主要看纪录片", "车要年检了"]),
    ],
)
def test_a_service_named_by_its_kind_is_answered_by_the_note_naming_one(question: str, texts: list[str]) -> None:
    notes = [_note(chr(ord("a") + i), text, 2026, 3, 2 + i) for i, text in enumerate(texts)]
    assert _answered(question, notes)[1] == [notes[0].id]


def test_a_service_named_in_someone_elses_sentence_answers_nothing_of_the_askers() -> None:
    assert _finds_nothing(
        "what streaming service am I subscribed to?", "dad finally got netflix, asks me for recs constantly"
    )


@pytest.mark.parametrize(
    ("question", "text"),
    [
        # the word of the kind in the question is held only by a service of that kind
        ("which gym do I go to?", "ported my number to mint mobile, $30/mo"),
        ("who's my mobile network?", "trying mubi for a month, loving it"),
    ],
)
def test_a_service_of_another_kind_does_not_answer(question: str, text: str) -> None:
    assert _finds_nothing(question, text)


@pytest.mark.parametrize(
    ("question", "text"),
    [
        ("which hotel did I book in kyoto?", "need to figure out a hotel in kyoto"),
        ("what did I buy for mum's birthday?", "should buy mum something for her birthday"),
        ("which dentist did I register with?", "todo: register with a dentist near the new flat"),
    ],
)
def test_a_note_that_only_plans_does_not_answer_a_question_about_something_done(question: str, text: str) -> None:
    assert _finds_nothing(question, text)


def test_a_note_that_only_plans_still_answers_a_question_about_the_plan() -> None:
    plan = _note("a", "need to buy a doormat for the flat", 2026, 3, 2)
    assert _answered("what did I need to buy for the flat?", [plan])[1] == [plan.id]
