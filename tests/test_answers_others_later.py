"""A later note telling of someone else, its writer not its subject ("brother says his a1c
is 6.1"), is no latest word of the asker's on their own dose (issue 31: an old fact must not
win, and neither must another's); the asker's own later note still is ("GP doubled my
amlodipine to 10mg")."""

from __future__ import annotations

from datetime import datetime

from memcli.memory import Memory
from memcli.recall.answers import answer

NOW = datetime(2025, 9, 1, 12).timestamp()


def _notes(*texts: str) -> list[Memory]:
    return [
        Memory(chr(97 + i) * 16, "sam", "note", text, datetime(2025, 3 + 2 * i, 2, 12).timestamp(), "")
        for i, text in enumerate(texts)
    ]


def test_a_later_sentence_telling_of_another_is_not_quoted_as_the_askers_latest_word() -> None:
    notes = _notes("metformin 500 twice a day with meals", "a1c check booked for oct. brother says his a1c is 6.1 smug")
    found = answer("what's my current diabetes pill dosing?", notes, "sam", NOW, {notes[0].id: 0.6, notes[1].id: 0.5})
    assert found.cited == [notes[0].id]


def test_the_askers_own_later_note_is_still_the_latest_word() -> None:
    notes = _notes("amlodipine 5mg every morning", "GP doubled my amlodipine to 10mg, bp still high")
    found = answer("what's my amlodipine dose now?", notes, "sam", NOW, {notes[0].id: 0.6, notes[1].id: 0.55})
    assert found.cited[:1] == [notes[1].id]
    assert "10mg" in found.text


def test_a_later_note_naming_another_but_of_the_writer_is_still_the_latest_word() -> None:
    """Chinese leaves its subject out ("和老公商量好了…" is the writer's), and an English note
    may name others without being about them ("moving in w/ my aunt in Bath")."""
    for question, old_text, new_text, gold in (
        (
            "孩子最后上的是哪个幼儿园？",
            "幼儿园学费太贵了，还在比较",
            "和老公商量好了，就上小区里的公立幼儿园",
            "公立幼儿园",
        ),
        (
            "where am i living these days?",
            "rent on the Leeds flat goes up again in May, ugh",
            "decided: leaving the Leeds flat and moving in w/ aunt Jo in Bath to save up",
            "Bath",
        ),
    ):
        notes = _notes(old_text, new_text)
        found = answer(question, notes, "sam", NOW, {notes[0].id: 0.6, notes[1].id: 0.55})
        assert found.cited[:1] == [notes[1].id], (question, found.text)
        assert gold in found.text
