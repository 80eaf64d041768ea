"""A kin word of the question is held by another word for the same relation (issue 31):
"mother" by "mum", "father" by "dad" (``whose.relation``). What must not answer still
does not: another relation's thing, a near miss of the same topic, something never noted,
a boyfriend for a girlfriend."""

from __future__ import annotations

from datetime import datetime

import pytest

from memcli.memory import Memory
from memcli.recall.answers import answer
from memcli.text.whose import relation

NOW = datetime(2024, 6, 1, 9).timestamp()


def _note(letter: str, text: str, day: datetime) -> Memory:
    return Memory(letter * 16, "sam", "note", text, day.timestamp(), f"{day:%Y-%m-%d}")


ASKED = _note("a", "whats the wifi password at mum's again?", datetime(2024, 5, 5))
PASSWORD = _note("b", "mum's wifi pw: tulip2019", datetime(2024, 5, 12))
ERRAND = _note("c", "pick up prescription", datetime(2024, 5, 13))
SIMILARITY = {ASKED.id: 0.9, PASSWORD.id: 0.65, ERRAND.id: 0.0}


def test_kin_words_name_their_relation() -> None:
    assert relation("mum") == relation("Mom") == relation("mother") == "mother"
    assert relation("dad") == relation("老爸") == "father"
    assert relation("lamp") == relation("buddy") == relation("manager") == ""


def test_a_note_saying_mum_answers_a_question_about_the_mother() -> None:
    """ "What's the wifi password at my mother's house?": "mum's wifi pw: tulip2019"."""
    found = answer("What's the wifi password at my mother's house?", [ASKED, PASSWORD, ERRAND], "sam", NOW, SIMILARITY)
    assert found.cited[:1] == [PASSWORD.id]
    assert "tulip2019" in found.text
    found = answer("What's the wifi password at my mom's place?", [ASKED, PASSWORD, ERRAND], "sam", NOW, SIMILARITY)
    assert "tulip2019" in found.text


def test_another_relation_or_thing_is_not_found() -> None:
    """The father's wifi, the mother's phone number: nothing noted answers (a guard: main
    answers these 'not found' too)."""
    memories = [ASKED, PASSWORD, ERRAND]
    assert not answer("What's the wifi password at my father's house?", memories, "sam", NOW, SIMILARITY).answered
    assert not answer("What's my mother's phone number?", memories, "sam", NOW, SIMILARITY).answered
    assert not answer("What's my sister's wifi password?", memories, "sam", NOW, SIMILARITY).answered


def test_a_possessive_of_the_same_relation_is_the_one_asked_about() -> None:
    """ "dad's birthday" is the father's of "my father's birthday dinner", not someone else's;
    the mother's and the asker's own are not found."""
    dinner = _note("d", "booked dinner for dad's birthday at Luigi's", datetime(2024, 5, 2))
    other = _note("e", "book the car service", datetime(2024, 5, 3))
    similarity = {dinner.id: 0.2, other.id: 0.1}
    found = answer("Where is my father's birthday dinner?", [dinner, other], "sam", NOW, similarity)
    assert "Luigi" in found.text
    assert not answer("Where is my mother's birthday dinner?", [dinner, other], "sam", NOW, similarity).answered
    assert not answer("Where is my birthday dinner?", [dinner, other], "sam", NOW, similarity).answered


def test_a_boyfriend_is_no_girlfriend() -> None:
    """Two words for a partner may be two people: "boyfriend" is neither "girlfriend" nor a
    business "partner"."""
    note = _note("d", "my boyfriend's birthday dinner is at Luigi's", datetime(2024, 5, 2))
    other = _note("e", "book the car service", datetime(2024, 5, 3))
    similarity = {note.id: 0.2, other.id: 0.1}
    assert not answer("Where is my girlfriend's birthday dinner?", [note, other], "sam", NOW, similarity).answered


@pytest.mark.parametrize(
    ("question", "text"),
    [
        ("When is my father's birthday?", "Tom's dad's birthday is 12 June"),
        ("What's the wifi password at my mum's?", "Tom's mother's wifi pw: tulip2019"),
        ("What did my mum say about the roof?", "Jake's mother said the roof needs redoing"),
        ("When is my friend's birthday?", "Buddy's birthday is 3 May"),
        ("When is my boss's birthday?", "the building manager's birthday is 3 May"),
        ("What's my boyfriend's phone number?", "business partner's new number 07700 900123"),
        ("What's my father's phone number?", "grand-dad's new number 07700 900123"),
        ("What's my mum's phone number?", "step-mom's new number 07700 900123"),
        ("What did my mother say about the house?", "Jake's kids call me mum now, the house is loud"),
    ],
)
def test_another_persons_kin_or_another_relation_is_not_found(question: str, text: str) -> None:
    """Someone else's father, another relation (a buddy, a building manager, a business
    partner, a grand-dad, a step-mom), the writer called "mum": none is the kin asked about."""
    note = _note("d", text, datetime(2024, 5, 12))
    other = _note("e", "book the car service", datetime(2024, 5, 3))
    assert not answer(question, [note, other], "sam", NOW, {note.id: 0.6, other.id: 0.1}).answered


def test_a_chinese_kin_word_is_held_by_another_for_the_same_relation() -> None:
    """ "我爸的生日是哪天？": "父亲的生日是6月12日"."""
    note = _note("d", "父亲的生日是6月12日", datetime(2024, 5, 12))
    other = _note("e", "book the car service", datetime(2024, 5, 3))
    found = answer("我爸的生日是哪天？", [note, other], "sam", NOW, {note.id: 0.6, other.id: 0.1})
    assert "6月12日" in found.text
