"""A kin word of the question is held by another word for the same relation (issue 31):
"mother" by "mum", "father" by "dad" (``entities.kin_relation``). What must not answer still
does not: another relation's thing, a near miss of the same topic, something never noted,
a boyfriend for a girlfriend."""

from __future__ import annotations

from datetime import datetime

from memcli.memory import Memory
from memcli.recall.answers import answer
from memcli.text.entities import kin_relation

NOW = datetime(2024, 6, 1, 9).timestamp()


def _note(letter: str, text: str, day: datetime) -> Memory:
    return Memory(letter * 16, "sam", "note", text, day.timestamp(), f"{day:%Y-%m-%d}")


ASKED = _note("a", "whats the wifi password at mum's again?", datetime(2024, 5, 5))
PASSWORD = _note("b", "mum's wifi pw: tulip2019", datetime(2024, 5, 12))
ERRAND = _note("c", "pick up prescription", datetime(2024, 5, 13))
SIMILARITY = {ASKED.id: 0.9, PASSWORD.id: 0.65, ERRAND.id: 0.0}


def test_kin_words_name_their_relation() -> None:
    assert kin_relation("mum") == kin_relation("Mom") == kin_relation("mother") == "mother"
    assert kin_relation("dad") == "father"
    assert kin_relation("lamp") == ""


def test_a_note_saying_mum_answers_a_question_about_the_mother() -> None:
    """ "What's the wifi password at my mother's house?": "mum's wifi pw: tulip2019"."""
    found = answer("What's the wifi password at my mother's house?", [ASKED, PASSWORD, ERRAND], "sam", NOW, SIMILARITY)
    assert found.cited[:1] == [PASSWORD.id]
    assert "tulip2019" in found.text
    found = answer("What's the wifi password at my mom's place?", [ASKED, PASSWORD, ERRAND], "sam", NOW, SIMILARITY)
    assert "tulip2019" in found.text


def test_another_relation_or_thing_is_not_found() -> None:
    """The father's wifi, the mother's phone number: nothing noted answers."""
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
    """Two words for a partner may be two people: only "partner" itself is either."""
    note = _note("d", "my boyfriend's birthday dinner is at Luigi's", datetime(2024, 5, 2))
    other = _note("e", "book the car service", datetime(2024, 5, 3))
    similarity = {note.id: 0.2, other.id: 0.1}
    assert not answer("Where is my girlfriend's birthday dinner?", [note, other], "sam", NOW, similarity).answered
    found = answer("Where is my partner's birthday dinner?", [note, other], "sam", NOW, similarity)
    assert "Luigi" in found.text
