"""A list question gathers its items from every note that holds one (issue 31, "answers
that fit the question"), also a note that goes on with an earlier one without the
question's words ("oh and the bear spray", "别忘了买拖把"), and a later note that adds an
item is an item, not "the latest" that replaced the first. Questions that ask for a list
without a plural ("what do I need to pack", "where have I been", "gift ideas") are list
questions."""

from __future__ import annotations

from datetime import datetime

import pytest

from memcli.memory import Memory
from memcli.recall.answers import answer, is_list_question

NOW = datetime(2026, 7, 1, 12).timestamp()


def _note(key: str, text: str, month: int, day: int) -> Memory:
    said = datetime(2026, month, day, 12).timestamp()
    return Memory(key * 16, "sam", "note", text, said, f"2026-{month:02d}-{day:02d}")


def _notes(*dated: tuple[str, int, int]) -> list[Memory]:
    return [_note(chr(ord("a") + i), text, month, day) for i, (text, month, day) in enumerate(dated)]


def _cited(question: str, notes: list[Memory], similarity: list[float]) -> set[str]:
    """The ids ``answer`` cites, with recall's cosine of each note (in ``notes``' order)."""
    found = answer(question, notes, "sam", NOW, {m.id: s for m, s in zip(notes, similarity)})
    return set(found.cited)


@pytest.mark.parametrize(
    "question",
    [
        "what do I still need to buy for the new place?",
        "what do we need to pack for the cabin?",
        "where have I been on trips this year?",
        "remind me of the gift ideas for my sister",
        "what needs fixing on the bike?",
    ],
)
def test_a_question_asking_for_several_things_without_a_plural_is_a_list_question(question: str) -> None:
    assert is_list_question(question)


@pytest.mark.parametrize(
    "question",
    ["what dose of sertraline do I take?", "where do I live now?", "what do I need to bring my passport for?"],
)
def test_a_question_for_one_thing_is_no_list_question(question: str) -> None:
    assert not is_list_question(question)


def test_a_note_going_on_with_a_list_item_is_an_item_though_it_holds_no_word_of_the_question() -> None:
    notes = _notes(
        ("cabin packing list: hiking boots, headlamp", 6, 1),
        ("oh and the bear spray, it's in the garage", 6, 4),
        ("call the vet about Rex's jab", 6, 5),
    )
    cited = _cited("what do we need to pack for the cabin?", notes, [0.6, 0.1, 0.05])
    assert cited == {notes[0].id, notes[1].id}


def test_a_note_going_on_long_after_the_list_is_not_one_of_its_items() -> None:
    notes = _notes(
        ("cabin packing list: hiking boots, headlamp", 2, 1),
        ("also a new doormat", 6, 4),
    )
    cited = _cited("what do we need to pack for the cabin?", notes, [0.6, 0.1])
    assert notes[1].id not in cited


def test_a_chinese_note_saying_not_to_forget_is_an_item_of_the_list_it_follows() -> None:
    notes = _notes(
        ("搬家要买：电饭煲", 3, 1),
        ("周五和小吴打羽毛球", 3, 3),
        ("别忘了量尺寸订窗帘", 3, 6),
    )
    cited = _cited("搬家还要买哪些东西？", notes, [0.7, 0.5, 0.3])
    assert {notes[0].id, notes[2].id} <= cited
    assert notes[1].id not in cited


def test_a_later_note_adding_an_item_is_quoted_as_an_item_not_as_the_latest_word() -> None:
    notes = _notes(
        ("小李推荐了家火锅 蜀大侠", 3, 1),
        ("朋友说南京大牌档不错，排队久", 3, 20),
        ("部门聚餐可以考虑外婆家", 3, 10),
    )
    found = answer(
        "大家给我推荐过哪些饭店来着？", notes, "sam", NOW, {notes[0].id: 0.59, notes[1].id: 0.64, notes[2].id: 0.61}
    )
    assert set(found.cited) == {m.id for m in notes}
    assert "最近一条" not in found.text


def test_a_note_going_on_with_another_question_than_a_list_does_not_join_a_single_answer() -> None:
    notes = _notes(
        ("I take sertraline 50mg every morning", 3, 1),
        ("also bought a new kettle", 3, 3),
    )
    cited = _cited("what dose of sertraline do I take?", notes, [0.7, 0.1])
    assert cited == {notes[0].id}


def test_a_note_saying_only_again_does_not_go_on_with_a_list() -> None:
    notes = _notes(
        ("周末要买：拖把", 3, 1),
        ("又加班到十点，累", 3, 3),
    )
    cited = _cited("周末要买哪些东西？", notes, [0.7, 0.2])
    assert notes[1].id not in cited
