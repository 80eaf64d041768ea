"""A question asking for several things gathers them from every note that holds one (issue 31
§4): read in more words, one more item noted as such ("also…", "…too", "又领养了…"), the
later note of a list, and items that name something when names are asked."""

from __future__ import annotations

from datetime import datetime

import pytest

from memcli.memory import Memory
from memcli.recall.answers import adds_one_more, answer, is_list_question


def _note(letter: str, text: str, day: datetime) -> Memory:
    return Memory(letter * 16, "sam", "note", text, day.timestamp(), f"{day:%Y-%m-%d}")


@pytest.mark.parametrize(
    "question",
    [
        "what all did I plant in the raised beds?",
        "remind me of everything I promised to bring to the picnic",
        "which of my records did Tom borrow?",
        "what sports is Noor doing this term?",
        "remind me of the present ideas for my brother",
        "what do I still need to pack for Lisbon?",
        "what still needs doing before the move?",
    ],
)
def test_a_question_asking_for_everything_or_which_of_several_is_a_list_question(question: str) -> None:
    assert is_list_question(question)


def test_a_question_asking_for_one_thing_is_not_a_list_question() -> None:
    for question in (
        "which class is it on Tuesdays?",
        "what bus is it to the office?",
        "what food do I need to buy for the cat?",
        "Which gym am I a member of?",
        "what is my dentist called?",
    ):
        assert not is_list_question(question), question


def test_a_note_says_it_adds_one_more_not_that_something_happened_again() -> None:
    for text in (
        "also the hiking boots, add to list",
        "Passed the Spanish B1 exam too.",
        "another idea for Dad - a bird feeder",
        "oh and a spare phone charger!!",
        "又领养了一只小狗，叫豆包",
        "再加一个：晾衣架",
    ):
        assert adds_one_more(text), text
    for text in (
        "renewed the lease for another year",
        "that's too much for a doormat.",
        "大橘又胖了 12斤",
        "房租又涨了",
        "今天也加班到十点",
        "又加班到十点",
        "还要早起",
        "packing list: passport, charger, sunscreen",
    ):
        assert not adds_one_more(text), text


def test_a_note_that_adds_one_more_joins_the_list_that_recall_finds_it_close_to() -> None:
    """ "also my hiking boots, don't forget" holds no word of the question and recall finds it
    less close than the list; that it adds one more is the second sign that it is an item. A
    chore as close that adds nothing is not one."""
    now = datetime(2025, 7, 1, 9).timestamp()
    notes = [
        _note("l", "packing list for the trip: passport, charger, sunscreen", datetime(2025, 6, 1)),
        _note("b", "also my hiking boots, don't forget", datetime(2025, 6, 8)),
        _note("t", "booked the airport taxi for 6am", datetime(2025, 6, 9)),
    ]
    similarity = {"l" * 16: 0.52, "b" * 16: 0.2, "t" * 16: 0.2}
    found = answer("What are the things on my packing list?", notes, "sam", now, similarity)
    assert found.cited == ["l" * 16, "b" * 16]


def test_a_list_questions_later_note_is_one_more_item_with_those_added_after_it() -> None:
    """The later note of a list question is one more item, not the latest word that replaces
    the earlier: the note after it that adds one more ("oh and a baby monitor!!") joins both."""
    now = datetime(2025, 10, 1, 9).timestamp()
    notes = [
        _note("n", "nursery needs: blackout blind, night light", datetime(2025, 9, 2)),
        _note("a", "also for the nursery — a changing mat and a laundry basket", datetime(2025, 9, 8)),
        _note("m", "oh and a baby monitor!! the old one died", datetime(2025, 9, 12)),
        _note("d", "dentist moved to weds", datetime(2025, 9, 14)),
    ]
    similarity = {"n" * 16: 0.27, "a" * 16: 0.33, "m" * 16: 0.22, "d" * 16: 0.05}
    found = answer("what do I still need to buy for the nursery?", notes, "sam", now, similarity)
    assert found.cited == ["n" * 16, "a" * 16, "m" * 16]


def test_a_best_note_that_says_too_is_quoted_with_the_other_notes_that_answer() -> None:
    """ "…on Sundays too" says the person sings in more than one choir: the other current note
    that answers as fully is quoted with it; one it superseded is not."""
    now = datetime(2024, 3, 1, 9).timestamp()
    hackney = _note("h", "Singing in the Hackney community choir on Tuesdays", datetime(2023, 5, 3))
    church = _note("c", "joined the St Mary's choir, singing on Sundays too", datetime(2023, 10, 15))
    found = answer("Which choir do I sing in?", [church, hackney], "sam", now, {church.id: 0.57, hackney.id: 0.63})
    assert found.cited == [hackney.id, church.id]
    old = _note("o", "Singing in the Hackney community choir on Tuesdays", datetime(2023, 5, 3))
    old.superseded_by = church.id
    found = answer("Which choir do I sing in?", [church, old], "sam", now, {church.id: 0.57, old.id: 0.63})
    assert found.cited == [church.id]
    # in a conversation "too" joins any two turns: another speaker's are not the person's notes
    said = [Memory(m.id, "sam", "turn", m.text, m.created_at, m.day, speaker="Mel") for m in (church, hackney)]
    found = answer("Which choir does Mel sing in?", said, "sam", now, {church.id: 0.57, hackney.id: 0.63})
    assert len(found.cited) == 1


def test_a_list_asking_names_quotes_the_notes_that_name_one() -> None:
    """ "cat litter x2 bags" holds "cat" but names no cat; a day ("Tuesday") is no name."""
    now = datetime(2025, 5, 1, 9).timestamp()
    notes = [
        _note("m", "Miso came home today, 9 week old tabby", datetime(2024, 2, 3)),
        _note("t", "adopted a second kitten, we call her Tofu", datetime(2024, 9, 1)),
        _note("l", "grocery: cat litter x2 bags", datetime(2025, 4, 20)),
    ]
    similarity = {"m" * 16: 0.3, "t" * 16: 0.35, "l" * 16: 0.33}
    found = answer("what are my cats' names?", notes, "sam", now, similarity)
    assert found.cited == ["m" * 16, "t" * 16]
    kids = [
        _note("a", "Our daughter Ada was born at 3:12am, 3.4 kg.", datetime(2024, 12, 19)),
        _note("n", "Noah started nursery and didn't even look back.", datetime(2022, 8, 11)),
        _note("v", "Health visitor coming Tuesday.", datetime(2025, 1, 5)),
    ]
    similarity = {"a" * 16: 0.22, "n" * 16: 0.24, "v" * 16: -0.03}
    assert answer("What are my kids' names?", kids, "sam", now, similarity).cited == ["n" * 16, "a" * 16]
