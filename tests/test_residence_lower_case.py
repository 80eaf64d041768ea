"""A home written in lower case, as people type notes ("first night in the denver apt!",
"got the keys!! walthamstow place is ours"), is a residence the rules read (issue 31), and
the answer to "which city am I living in now?" quotes it, not a later note that states no
home."""

from __future__ import annotations

from datetime import datetime

import pytest

from memcli.memory import Memory
from memcli.recall.answers import answer
from memcli.text.updates import RESIDENCE, statements

NOW = datetime(2026, 7, 1, 12).timestamp()


def _note(key: str, text: str, year: int, month: int, day: int) -> Memory:
    said = datetime(year, month, day, 12).timestamp()
    return Memory(key * 16, "sam", "note", text, said, f"{year}-{month:02d}-{day:02d}")


def _homes(text: str) -> list[str]:
    return [s.value for s in statements(text) if s.key == RESIDENCE]


@pytest.mark.parametrize(
    ("text", "home"),
    [
        ("first night in the denver apt! boxes everywhere", "denver"),
        ("got the keys!! walthamstow place is ours from today", "walthamstow"),
        ("last box unpacked in the jersey city place. PATH to WTC is 20 min", "jersey city"),
        ("offer accepted on the little house in eugene", "eugene"),
        ("signed lease in portland, 2br off ne alberta st", "portland"),
        ("finally moved to leeds, loving it", "leeds"),
        ("I moved to york last month", "york"),
        ("rent going up AGAIN at the leeds flat. landlord is a joke", "leeds"),
    ],
)
def test_a_home_written_in_lower_case_is_read(text: str, home: str) -> None:
    assert _homes(text) == [home]


@pytest.mark.parametrize(
    "text",
    [
        "jess moved to jersey city, we should do dinner halfway",  # hers
        "my sister moved to leeds",
        "moved into the green house on the corner",  # a colour, no place
        "first night sleeping in the new place",
        "moved the meeting to friday",
        "lease in the city ends in june",
        "moved to the park for the afternoon",
    ],
)
def test_no_home_is_read_where_none_of_the_writers_is_named(text: str) -> None:
    assert _homes(text) == []


def test_the_latest_home_answers_and_a_later_note_stating_none_is_not_quoted_first() -> None:
    old = _note("a", "signed lease in portland, 2br off ne alberta st", 2025, 8, 1)
    new = _note("b", "first night in the denver apt! boxes everywhere", 2026, 6, 4)
    later = _note("c", "dentist aug 28 3pm", 2026, 6, 15)
    notes = [new, later, old]
    found = answer("which city am I living in now?", notes, "sam", NOW, {new.id: 0.5, later.id: 0.5, old.id: 0.4})
    assert found.cited[:1] == [new.id], found.text
