"""A question about the past answered by the time order of the person's notes (issue 31,
``answers.of_its_time``): a dated one never by a note noted after its span, a "before" one
by a note noted before the change's or the current value's, never by that note itself."""

from __future__ import annotations

from datetime import datetime

from memcli.memory import Memory
from memcli.recall.answers import NOT_FOUND, NOT_FOUND_ZH, Extracted, answer, asks_earlier, of_its_time

NOW = datetime(2025, 9, 1, 9).timestamp()


def _note(letter: str, text: str, day: datetime) -> Memory:
    return Memory(letter * 16, "sam", "note", text, day.timestamp(), f"{day:%Y-%m-%d}")


def test_a_before_question_no_words_answer_is_told_by_the_note_before_the_latest() -> None:
    """No note holds "company": the latest of the close notes is the current one, and the
    person's close note before it answers, not a note too far from the question."""
    old = _note("o", "packer at the brightway warehouse, early shifts", datetime(2021, 2, 1))
    new = _note("n", "started at the northgate depot, team lead", datetime(2024, 3, 4))
    aside = _note("a", "got a parking permit", datetime(2024, 3, 1))
    similarity = {new.id: 0.46, old.id: 0.19, aside.id: 0.05}
    found = answer("what company was i at before my current one?", [new, old, aside], "sam", NOW, similarity)
    assert found.cited == [old.id, new.id]
    assert found.text.index("brightway") < found.text.index("northgate")


def test_a_chinese_before_question_passes_the_notes_of_the_new_value() -> None:
    """ "拿到字节的offer了" comes before "字节入职" but holds the new value: the note before that
    shares no word with the latest is the old one."""
    old = _note("o", "在滴滴干了三年了，想换换", datetime(2023, 1, 8))
    offer = _note("f", "拿到字节的offer了", datetime(2023, 3, 3))
    new = _note("n", "字节入职第一天，通勤好远", datetime(2023, 3, 31))
    similarity = {offer.id: 0.52, new.id: 0.47, old.id: 0.48}
    found = answer("我换工作之前在哪家公司？", [offer, new, old], "sam", NOW, similarity)
    assert found.cited == [old.id, new.id]
    assert "滴滴" in found.text


def test_a_dated_question_is_not_answered_by_a_note_noted_after_its_span() -> None:
    old = _note("o", "First day as a barista at Costa on Market Street.", datetime(2022, 2, 6))
    new = _note("n", "Started my apprenticeship as an electrician with Hartley & Sons.", datetime(2023, 5, 13))
    similarity = {new.id: 0.36, old.id: 0.23}
    found = answer("What was I doing for work in 2022?", [new, old], "sam", NOW, similarity)
    assert found.cited == [old.id]
    assert "barista" in found.text


def test_a_chinese_span_that_ended_is_about_the_past() -> None:
    """ "21年上半年" names no past verb: a span that ended before the question is past too."""
    old = _note("o", "南京的梅雨季又来了 衣服晒不干", datetime(2021, 5, 10))
    new = _note("n", "国庆 搬到杭州了 租在西湖区", datetime(2021, 10, 1))
    card = _note("c", "办了杭州的公交卡", datetime(2021, 10, 8))
    similarity = {old.id: 0.57, card.id: 0.61, new.id: 0.46}
    found = answer("21年上半年我住哪个城市？", [old, card, new], "sam", NOW, similarity)
    assert found.cited == [old.id]
    assert "南京" in found.text


def test_a_present_question_after_a_change_still_quotes_the_new_value() -> None:
    old = _note("o", "I work as a packer at the Brightway warehouse", datetime(2021, 2, 1))
    new = _note("n", "new job! I work at the Northgate depot as a team lead now", datetime(2024, 3, 4))
    similarity = {new.id: 0.56, old.id: 0.5}
    found = answer("where do I work?", [new, old], "sam", NOW, similarity)
    assert found.cited[:1] == [new.id]


def test_a_before_question_with_a_single_note_is_not_found() -> None:
    """Nothing older holds a value: the current note is no answer to what came before it."""
    only = _note("n", "started at the northgate depot, team lead", datetime(2024, 3, 4))
    found = answer("what company was i at before my current one?", [only], "sam", NOW, {only.id: 0.46})
    assert found.text == NOT_FOUND
    car = _note("c", "traded it in, drove home a used rav4", datetime(2024, 1, 14))
    found = answer("what did I drive before the SUV?", [car], "sam", NOW, {car.id: 0.4})
    assert found.text == NOT_FOUND
    only_zh = _note("n", "字节入职第一天，通勤好远", datetime(2023, 3, 31))
    found = answer("我换工作之前在哪家公司？", [only_zh], "sam", NOW, {only_zh.id: 0.47})
    assert found.text == NOT_FOUND_ZH


def test_a_same_day_before_is_no_question_about_a_past_value() -> None:
    """ "before work today" places a moment of the day, not an older value: the answer read
    from the words stands."""
    day = datetime(2025, 9, 1, 7)
    run = _note("r", "went for a run along the canal", day)
    earlier = _note("e", "watered the plants", datetime(2025, 8, 30))
    found = Extracted("quoted", [run.id])
    similarity = {run.id: 0.4, earlier.id: 0.3}
    assert of_its_time("what did I do before work today?", found, [run, earlier], "sam", NOW, similarity) is found


def test_never_before_is_no_question_about_the_past() -> None:
    assert not asks_earlier("我以前从没去过日本")
    assert not asks_earlier("我之前从来没吃过榴莲吗？")
    assert asks_earlier("我以前吃的是哪种降压药？")


def test_a_question_for_the_first_value_is_no_before_question() -> None:
    """A question with "originally" asks for the first value: the earliest note stands."""
    first = _note("f", "psych started me on wellbutrin 150 XL", datetime(2024, 2, 1))
    found = Extracted("quoted", [first.id])
    question = "what dose was I originally prescribed of bupropion?"
    assert of_its_time(question, found, [first], "sam", NOW, {first.id: 0.5}) is found
