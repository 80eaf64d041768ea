"""A question about the past answered by the time order of the person's notes (issue 31,
``answers.of_its_time``): a dated one never by a note noted after its span, a "before" one
by a note noted before the change's or the current value's, never by that note itself."""

from __future__ import annotations

from datetime import datetime

import pytest

from memcli.memory import Memory
from memcli.recall.answers import (
    NOT_FOUND,
    NOT_FOUND_ZH,
    Extracted,
    _asks_past_value,
    answer,
    asks_earlier,
    of_its_time,
)

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


def test_a_before_question_with_a_single_note_keeps_the_words_answer() -> None:
    """Nothing older holds a value: the time order changes nothing (the words' answer, as
    ``_earlier_word`` leaves it)."""
    only = _note("n", "started at the northgate depot, team lead", datetime(2024, 3, 4))
    found = answer("what company was i at before my current one?", [only], "sam", NOW, {only.id: 0.46})
    assert found.text == NOT_FOUND
    car = _note("c", "traded it in, drove home a used rav4", datetime(2024, 1, 14))
    found = answer("what did I drive before the SUV?", [car], "sam", NOW, {car.id: 0.4})
    assert found.cited == [car.id]
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


def _quotes(question: str, notes: list[Memory], similarity: list[float], now: datetime) -> list[str]:
    found = answer(question, notes, "sam", now.timestamp(), {m.id: s for m, s in zip(notes, similarity, strict=True)})
    assert found.answered
    return found.cited


@pytest.mark.parametrize(
    ("question", "text", "noted", "asked"),
    [
        (
            "What was my best 10k time in 2024?",
            "2024 recap: best 10k was 48:12 at the harbour run",
            datetime(2025, 1, 2, 10),
            datetime(2025, 3, 1),
        ),
        (
            "What was my best 10k time in 2024?",
            "2024 recap: best 10k was 48:12 at the harbour run",
            datetime(2025, 2, 20, 10),
            datetime(2025, 3, 1),
        ),
        (
            "What book did I finish last month?",
            "Finished Piranesi on Saturday night, loved it",
            datetime(2025, 9, 1, 8),
            datetime(2025, 9, 3, 9),
        ),
        (
            "What did I buy in March 2025?",
            "bought a road bike at the end of March",
            datetime(2025, 4, 2, 18),
            datetime(2025, 6, 1),
        ),
        ("我去年暑假去哪儿玩了？", "暑假去云南玩回来了，大理真美", datetime(2024, 9, 2, 20), datetime(2025, 6, 1)),
    ],
)
def test_a_dated_question_keeps_a_note_written_just_after_its_span_or_naming_it(
    question: str, text: str, noted: datetime, asked: datetime
) -> None:
    """A note written within recall's after-window of the span ("2024 recap" on 2 Jan 2025),
    or naming it (on 20 Feb 2025), tells of it: the answer stands, never "not found"."""
    note = _note("r", text, noted)
    assert _quotes(question, [note], [0.6], asked) == [note.id]


@pytest.mark.parametrize(
    ("question", "text"),
    [
        ("Did I ever meet Tom before?", "Met Tom at Anna's birthday party"),
        ("Where did I put my old laptop?", "Put my old laptop in the loft"),
        ("出发之前要准备什么？", "出发之前要换好欧元，还要买转换插头"),
        ("我以前养过什么宠物？", "小时候养过一只橘猫，叫大黄"),
        ("我曾经在哪家医院做过手术？", "在协和医院做了阑尾手术，恢复得不错"),
    ],
)
def test_a_before_question_with_nothing_older_keeps_its_answer(question: str, text: str) -> None:
    """Nothing comes before the anchor: the words' answer stands, as ``_earlier_word``'s."""
    note = _note("n", text, datetime(2025, 4, 3))
    assert _quotes(question, [note], [0.6], datetime(2025, 9, 1)) == [note.id]


def test_an_old_value_far_from_its_change_keeps_its_answer() -> None:
    """The move note is far off: nothing close comes before the old address's note."""
    elm = _note("a", "my address is 14 Elm Road", datetime(2023, 1, 3))
    move = _note("m", "moving boxes everywhere, the new flat is great", datetime(2025, 3, 3))
    cited = _quotes("What was my old address?", [elm, move], [0.7, 0.3], datetime(2025, 9, 1))
    assert cited[:1] == [elm.id]


@pytest.mark.parametrize(
    ("question", "older", "newer", "similarity"),
    [
        ("我每天上班之前做什么？", "每天上班之前去健身房练一小时", "每天上班之前改成在家做瑜伽了", [0.6, 0.62]),
        ("我上班之前做什么？", "每天上班之前去健身房练一小时", "每天上班之前改成在家做瑜伽了", [0.6, 0.62]),
        (
            "What did the doctor say I should take before meals?",
            "started metformin 500mg twice a day with meals",
            "doctor says take gliclazide 30 minutes before meals",
            [0.5, 0.62],
        ),
        (
            "出发之前要准备什么？",
            "罗马之行：出发之前要办好申根签证",
            "东京之行：出发之前要换好日元、准备西瓜卡",
            [0.5, 0.6],
        ),
    ],
)
def test_a_before_of_a_routine_or_a_plan_keeps_the_present_answer(
    question: str, older: str, newer: str, similarity: list[float]
) -> None:
    """ "每天上班之前", "before meals", "出发之前要": what recurs or is ahead, not a value that
    changed: the latest note stands first."""
    old, new = _note("o", older, datetime(2024, 3, 3)), _note("n", newer, datetime(2025, 3, 3))
    assert _quotes(question, [old, new], similarity, datetime(2025, 9, 1))[:1] == [new.id]


def test_a_routine_word_placed_after_a_change_or_formerly_still_asks_the_past() -> None:
    """A routine or a plan ahead is no past value; a routine held before a change, or
    "formerly" (以前 before 每天), is."""
    assert not _asks_past_value("我每天上班之前做什么？")
    assert not _asks_past_value("出发之前要准备什么？")
    assert not _asks_past_value("我上班之前做什么？")
    assert not _asks_past_value("下班之前我做什么？")
    assert _asks_past_value("我之前那只老猫叫什么名字？")
    assert _asks_past_value("我上一任叫什么名字？")
    assert _asks_past_value("我换工作之前在哪家公司？")
    assert not _asks_past_value("What did the doctor say I should take before meals?")
    assert not _asks_past_value("Did I ever meet Tom before?")
    assert _asks_past_value("我以前每天几点起床？")
    assert _asks_past_value("我搬家之前一般在哪买菜？")
    assert _asks_past_value("What did I always order before I went vegan?")
    assert _asks_past_value("What car did I drive before the Civic?")
