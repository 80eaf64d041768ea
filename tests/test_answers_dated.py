"""Dated questions in the extractive answer: a feast names a day ("new year's eve", 元旦,
除夕), a note of the day a question names answers though it shares no other word with it
(issue 31), and a note with a question in it tells through its other sentences."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime

import pytest

from memcli.memory import Memory
from memcli.recall.answers import NOT_FOUND, NOT_FOUND_ZH, Extracted, answer

NOW = datetime(2026, 7, 1, 12).timestamp()


def _note(key: str, text: str, year: int, month: int, day: int) -> Memory:
    said = datetime(year, month, day, 12).timestamp()
    return Memory(key * 16, "sam", "note", text, said, f"{year}-{month:02d}-{day:02d}")


def _asked(question: str, notes: list[Memory]) -> Extracted:
    """``answer`` as ``memcli ask`` calls it, with recall's similarity (the first closest)."""
    return answer(question, notes, "sam", NOW, {m.id: 0.5 - 0.1 * i for i, m in enumerate(notes)})


def _quoted(question: str, notes: list[Memory]) -> list[str]:
    return _asked(question, notes).cited


@pytest.mark.parametrize(
    ("question", "notes"),
    [
        (
            "which film did we watch on new year's eve?",
            [
                _note("a", "watched Elf with the kids, christmas eve tradition", 2025, 12, 24),
                _note("b", "watched Parasite with Jo tonight", 2025, 12, 31),
            ],
        ),
        (
            "元旦那天我做了什么？",
            [_note("b", "去爬了香山", 2026, 1, 1), _note("a", "和小李吃火锅", 2026, 1, 5)],
        ),
        (
            "除夕那天我们看了什么电影？",
            [
                _note("a", "平安夜看了《小妇人》", 2025, 12, 24),
                _note("b", "和家人一起看了《流浪地球》", 2026, 2, 16),  # 除夕 of the lunar year 2026
            ],
        ),
    ],
)
def test_a_feast_names_the_day_asked_about(question: str, notes: list[Memory]) -> None:
    assert _quoted(question, notes) == ["b" * 16]


_OTHER_DAYS = [
    _note("x", "booked the dentist for next month", 2026, 1, 25),
    _note("y", "bought new running shoes", 2026, 6, 10),
]


@pytest.mark.parametrize(
    ("question", "note"),
    [
        ("what did we eat on Jan 21?", _note("d", "made ramen with Priya, so good", 2026, 1, 21)),
        ("how did I spend the first of january?", _note("d", "long walk on the beach with Jo", 2026, 1, 1)),
        ("1月21日我们吃了什么？", _note("d", "和小李做了拉面", 2026, 1, 21)),
    ],
)
def test_a_note_of_the_day_asked_about_answers_by_its_date(question: str, note: Memory) -> None:
    # recall finds notes of other days closer: the date, not closeness, picks the note
    notes = [note, *_OTHER_DAYS]
    similarity = {note.id: 0.1, **{m.id: 0.6 for m in _OTHER_DAYS}}
    assert answer(question, notes, "sam", NOW, similarity).cited == [note.id]


def test_the_day_does_not_answer_for_a_subject_noted_on_another_day() -> None:
    brunch = _note("d", "new year's day brunch with Sam", 2026, 1, 1)
    weighed = _note("w", "weighed 81.5 kg this morning", 2026, 1, 3)
    assert _asked("what did I weigh on Jan 1?", [brunch, weighed, *_OTHER_DAYS]).text == NOT_FOUND
    same_day = _note("w", "weighed 81.5 kg this morning", 2026, 1, 1)
    assert _quoted("what did I weigh on Jan 1?", [brunch, same_day, *_OTHER_DAYS]) == [same_day.id]


def test_an_undated_question_is_not_answered_by_a_note_holding_none_of_it() -> None:
    notes = [_note("d", "made ramen with Priya, so good", 2026, 1, 21), *_OTHER_DAYS]
    assert _asked("what's my blood type?", notes).text == NOT_FOUND


@pytest.mark.parametrize(
    ("question", "text", "told"),
    [
        ("where did I move to?", "moved into the flat on Elm St today! where do I even start?", "Elm St"),
        ("which city do I live in?", "finally moved to Leeds! why is unpacking so slow?", "Leeds"),
        ("我住在哪个城市？", "终于搬到成都了！箱子怎么这么多？", "成都"),
    ],
)
def test_a_note_that_also_asks_tells_through_its_statement(question: str, text: str, told: str) -> None:
    found = _asked(question, [_note("m", text, 2026, 6, 3)])
    assert found.cited == ["m" * 16]
    assert told in found.text
    assert "?" not in found.text and "？" not in found.text


@pytest.mark.parametrize(
    ("question", "text", "not_found"),
    [
        ("what's the cabin wifi password?", "is the cabin wifi still lakeside2019?? ask Ruth", NOT_FOUND),
        ("who has the cabin wifi password?", "is the cabin wifi still lakeside2019?? ask Ruth", NOT_FOUND),
        ("小屋的wifi密码是什么？", "小屋wifi还是lakeside2019吗？问问阿琳", NOT_FOUND_ZH),
    ],
)
def test_a_value_asked_about_is_not_the_answer(question: str, text: str, not_found: str) -> None:
    assert _asked(question, [_note("m", text, 2026, 6, 3)]).text == not_found


@pytest.mark.parametrize(
    ("question", "notes"),
    [
        (
            "what did Sam give me for valentines?",
            [
                _note("a", "paid the gas bill", 2026, 2, 14),
                _note("b", "Sam gave me an early valentines present, a watch!", 2026, 2, 11),
            ],
        ),
        (
            "where did I put the christmas tree lights?",
            [
                _note("a", "dentist at 3pm, bring the insurance card", 2025, 12, 25),
                _note("b", "christmas tree lights are in the blue box in the garage", 2026, 1, 6),
            ],
        ),
        (
            "情人节礼物是什么？",
            [_note("a", "交了水电费", 2026, 2, 14), _note("b", "小美送的情人节礼物是一条围巾", 2026, 2, 10)],
        ),
        (
            "我的圣诞树放在哪？",
            [_note("a", "去医院复查", 2025, 12, 25), _note("b", "圣诞树收在储藏室的柜子顶上", 2026, 1, 3)],
        ),
    ],
)
def test_a_feast_that_names_a_thing_not_a_time_is_a_word_a_note_must_hold(question: str, notes: list[Memory]) -> None:
    # "valentines present", 情人节礼物, 圣诞树: no day is asked about; the note of the feast's
    # day that holds nothing of the question must not answer, and the note naming the feast does
    assert _quoted(question, notes) == ["b" * 16]


def test_of_the_notes_of_the_day_asked_about_the_closest_answers() -> None:
    dentist = _note("a", "dentist 3pm, bring the insurance card", 2025, 12, 25)
    goose = _note("b", "roast goose with all the trimmings at mum's", 2025, 12, 25)
    other = _note("c", "bought new running shoes", 2026, 1, 10)
    similarity = {dentist.id: 0.5, goose.id: 0.6, other.id: 0.55}
    assert answer("what did we eat on christmas day?", [dentist, goose, other], "sam", NOW, similarity).cited == [
        goose.id
    ]


def test_a_month_named_alone_is_the_latest_one_for_what_held_then() -> None:
    """ "What dose was I on in March?" asked in July: this year's March, when the older
    note still held (it was superseded in June), not the dose that replaced it."""
    new = _note("n", "Neurologist upped the propranolol to 80 mg twice a day.", 2026, 6, 10)
    old = replace(
        _note("o", "On propranolol 40 mg twice a day for the tremor.", 2026, 2, 3),
        superseded_by=new.id,
        valid_to=new.created_at,
    )
    found = answer("What dose of propranolol was I on in March?", [new, old], "sam", NOW, {new.id: 0.7, old.id: 0.67})
    assert found.cited[0] == old.id
    assert "40 mg" in found.text


def test_the_day_answers_when_its_note_holds_as_much_of_the_question_as_another_day_s() -> None:
    """ "what was the verdict on my car last tuesday?": Tuesday's note holds "car" as the car
    wash of another day does; the day decides, and its short note is quoted whole (chosen as
    a note, not by a sentence's words). A note of another day holding more of the question
    still makes it a question of that subject, and a day with no note is not found."""
    asked = datetime(2024, 6, 24, 9).timestamp()
    notes = [
        Memory(
            "a" * 16,
            "sam",
            "note",
            "took the car in bc of the squeaking. brake pads down to 20%, replace within a month",
            datetime(2024, 6, 18, 12).timestamp(),
            "2024-06-18",
        ),
        Memory(
            "b" * 16, "sam", "note", "car wash + vacuum, finally", datetime(2024, 6, 20, 12).timestamp(), "2024-06-20"
        ),
        Memory(
            "c" * 16,
            "sam",
            "note",
            "oil change sticker says i'm 3k miles over lol",
            datetime(2024, 6, 14, 12).timestamp(),
            "2024-06-14",
        ),
    ]
    similarity = {"a" * 16: 0.24, "b" * 16: 0.2, "c" * 16: 0.19}
    found = answer("what was the verdict on my car last tuesday?", notes, "sam", asked, similarity)
    assert found.cited == ["a" * 16]
    assert "brake pads" in found.text
    assert not answer("what was the verdict on my car last wednesday?", notes, "sam", asked, similarity).answered
    washed = Memory(
        "a" * 16, "sam", "note", "car wash + vacuum, finally", datetime(2024, 6, 18, 12).timestamp(), "2024-06-18"
    )
    verdict = Memory(
        "b" * 16,
        "sam",
        "note",
        "mechanic's verdict on the car: new brake pads",
        datetime(2024, 6, 20, 12).timestamp(),
        "2024-06-20",
    )
    found = answer(
        "what was the mechanic's verdict on my car last tuesday?", [washed, verdict, notes[2]], "sam", asked, similarity
    )
    assert "car wash" not in found.text


def _day_note(letter: str, text: str, day: datetime) -> Memory:
    return Memory(letter * 16, "sam", "note", text, day.timestamp(), f"{day:%Y-%m-%d}")


def test_a_tie_with_another_day_goes_to_the_closer_note_and_someone_elses_counts_for_nothing() -> None:
    """ "what did I buy at the market last tuesday?": Tuesday's "stock market dipped" ties on
    "market" with another day's market note that recall finds closer; "what was my blood
    pressure last tuesday?": Tuesday's "Dan's blood pressure" is his. Neither is the day's
    answer."""
    asked = datetime(2024, 6, 24, 9).timestamp()
    tuesday, thursday, friday = datetime(2024, 6, 18, 12), datetime(2024, 6, 20, 12), datetime(2024, 6, 14, 12)
    oil = _day_note("c", "oil change sticker says i'm 3k miles over lol", friday)
    stock = _day_note("a", "stock market dipped again, ugh", tuesday)
    market = _day_note("b", "market: honey and sourdough, 12 quid", thursday)
    similarity = {stock.id: 0.2, market.id: 0.21, oil.id: 0.1}
    assert not answer(
        "what did I buy at the market last tuesday?", [stock, market, oil], "sam", asked, similarity
    ).answered
    dan = _day_note("a", "Dan's blood pressure is through the roof", tuesday)
    test = _day_note("b", "blood test booked for friday", thursday)
    similarity = {dan.id: 0.5, test.id: 0.3, oil.id: 0.1}
    assert not answer("what was my blood pressure last tuesday?", [dan, test, oil], "sam", asked, similarity).answered


def test_a_short_note_quoted_whole_leaves_out_what_it_tells_of_another() -> None:
    """ "took the car in. Sarah's biopsy came back benign thank god": Sarah's news is no part
    of the verdict on the asker's car."""
    asked = datetime(2024, 6, 24, 9).timestamp()
    car = _day_note("a", "took the car in. Sarah's biopsy came back benign thank god", datetime(2024, 6, 18, 12))
    wash = _day_note("b", "car wash + vacuum, finally", datetime(2024, 6, 20, 12))
    oil = _day_note("c", "oil change sticker says i'm 3k miles over lol", datetime(2024, 6, 14, 12))
    similarity = {car.id: 0.24, wash.id: 0.2, oil.id: 0.19}
    found = answer("what was the verdict on my car last tuesday?", [car, wash, oil], "sam", asked, similarity)
    assert "took the car in" in found.text
    assert "biopsy" not in found.text
