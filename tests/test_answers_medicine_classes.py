"""A question may name a medicine by its class ("my steroid dose", "my thyroid tablet",
"降压药"): a note naming one of that class, generic or brand, answers it (issue 31), and a
later note of another medicine ("the cat's gabapentin") is not its latest word."""

from __future__ import annotations

from datetime import datetime

import pytest

from memcli.memory import Memory
from memcli.recall.answers import answer
from memcli.text.updates import statements

NOW = datetime(2026, 7, 1, 12).timestamp()


def _note(key: str, text: str, year: int, month: int, day: int) -> Memory:
    said = datetime(year, month, day, 12).timestamp()
    return Memory(key * 16, "sam", "note", text, said, f"{year}-{month:02d}-{day:02d}")


def _cited(question: str, notes: list[Memory]) -> list[str]:
    """The ids ``answer`` cites, as ``memcli ask`` calls it (the first note recalled closest)."""
    return answer(question, notes, "sam", NOW, {m.id: 0.5 - 0.1 * i for i, m in enumerate(notes)}).cited


@pytest.mark.parametrize(
    ("question", "texts"),
    [
        ("what's my steroid dose?", ["prednisolone 30mg a day for the asthma flare", "hay fever tablets from boots"]),
        ("what strength is my thyroid tablet?", ["euthyrox 100mcg each morning before breakfast", "bought tissues"]),
        (
            "how much of my beta blocker do I take?",
            ["started propranolol 40mg for the palpitations", "mum's blood pressure is fine now", "beta app is out"],
        ),
        ("what dose is my beta blocker?", ["atenolol 50mg every morning", "gym: bench press 50kg"]),
        ("我的降糖药现在吃多少？", ["医生开了二甲双胍，每次500mg", "我爸也在吃药，他是850mg"]),
        ("我的降糖药现在吃多少？", ["二甲双胍加到每次1000mg了", "体检血糖偏高"]),
    ],
)
def test_a_medicine_named_by_its_class_is_answered_by_the_note_naming_one(question: str, texts: list[str]) -> None:
    notes = [_note(chr(ord("a") + i), text, 2026, 3, 2 + i) for i, text in enumerate(texts)]
    assert _cited(question, notes) == [notes[0].id]


def test_a_later_note_of_another_medicine_is_not_the_latest_word_on_the_class_asked() -> None:
    dose = _note("a", "apixaban 5mg twice a day from now on", 2026, 2, 1)
    cat = _note("b", "cat's gabapentin 50mg before the vet visit", 2026, 3, 1)
    assert _cited("what dose of blood thinner am I on now?", [dose, cat]) == [dose.id]


@pytest.mark.parametrize(("text", "value"), [("down to 5mg, last week of it", "5 mg"), ("now down to 10mg", "10 mg")])
def test_a_note_opening_on_its_new_dose_is_a_dose_change(text: str, value: str) -> None:
    [(key, found)] = [(s.key, s.value) for s in statements(text)]
    assert (key.partition(":")[0], found) == ("dose", value)


def test_down_to_a_distance_is_no_dose() -> None:
    assert not statements("down to 5 km a day this week")
