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
