"""The fallback passes find the note that answers in other words (issue 31): the kind of
place a question names ("what city") is what a note naming a place holds; a name written in
capitals with a possessive ("BJ's") is a name, not another's thing; for "which …?", the
person's later close note naming something answers when the closest names nothing. And
what must not answer still does not: a note naming no place, a note of another subject."""

from __future__ import annotations

from datetime import datetime

from memcli.memory import Memory
from memcli.recall.answers import answer, expected_types

NOW = datetime(2025, 9, 1, 9).timestamp()


def _note(letter: str, text: str, day: datetime) -> Memory:
    return Memory(letter * 16, "sam", "note", text, day.timestamp(), f"{day:%Y-%m-%d}")


def test_what_city_asks_for_a_place() -> None:
    """ "remind me what city I'm based in": "we're in Denver now", though it holds none of
    the question's words and recall finds it hardly closer than the note before it."""
    assert expected_types("remind me what city I'm based in") == frozenset({"place"})
    assert expected_types("what should I cook tonight?") == frozenset()
    moved = _note("a", "we're in Denver now. boxes everywhere, dog hiding under the bed", datetime(2025, 7, 22))
    before = _note("b", "boston winters are long but at least I can walk everywhere", datetime(2025, 1, 20))
    license_ = _note("c", "need to switch my drivers license within 30 days", datetime(2025, 7, 30))
    similarity = {moved.id: 0.237, before.id: 0.23, license_.id: 0.12}
    found = answer("remind me what city I'm based in", [moved, before, license_], "sam", NOW, similarity)
    assert found.cited[:1] == [moved.id]
    assert "Denver" in found.text
    # a note naming no place does not answer
    unnamed = _note("d", "we're in the new flat now. boxes everywhere", datetime(2025, 7, 22))
    similarity = {unnamed.id: 0.237, before.id: 0.23, license_.id: 0.12}
    found = answer("remind me what city I'm based in", [unnamed, before, license_], "sam", NOW, similarity)
    assert not found.answered
    # nor, in Chinese, whose cosines mislead, a close note sharing no word of the question
    lamp = _note("e", "买了个落地灯", datetime(2025, 8, 4))
    noise = _note("f", "楼上天天半夜蹦迪", datetime(2025, 6, 1))
    found = answer("我现在住哪个城市？", [lamp, noise], "sam", NOW, {lamp.id: 0.53, noise.id: 0.48})
    assert not found.answered


def test_a_name_in_capitals_with_a_possessive_is_a_name() -> None:
    """ "signed up at BJ's instead" names a club, not something of BJ's."""
    joined = _note(
        "a",
        "no costco near the new house, got the membership refunded, signed up at BJ's instead",
        datetime(2025, 3, 1),
    )
    run = _note("b", "costco run: paper towels, rotisserie chicken", datetime(2025, 1, 2))
    gas = _note("c", "gas is 30c cheaper there", datetime(2025, 4, 1))
    similarity = {joined.id: 0.37, run.id: 0.24, gas.id: 0.13}
    found = answer("which warehouse club do I belong to these days?", [joined, run, gas], "sam", NOW, similarity)
    assert found.cited[:1] == [joined.id]
    assert "BJ's" in found.text


def test_a_later_close_note_naming_the_thing_answers_which() -> None:
    """ "anytime fitness $25 a month" names nothing in capitals; the person's later close note
    "dropped AF, joined the YMCA" does, and answers, not the later one naming nothing."""
    first = _note("a", "anytime fitness $25 a month, fine for now", datetime(2025, 1, 5))
    joined = _note("b", "dropped AF, joined the YMCA downtown for the pool", datetime(2025, 6, 20))
    lessons = _note("c", "swim lessons at the Y on thursdays 7pm", datetime(2025, 7, 1))
    similarity = {first.id: 0.45, joined.id: 0.38, lessons.id: 0.35}
    found = answer("which gym am I a member of?", [first, joined, lessons], "sam", NOW, similarity)
    assert found.cited[:1] == [joined.id]
    assert "YMCA" in found.text
    # a question about the past is not answered so
    found = answer("which gym was I a member of last year?", [first, joined, lessons], "sam", NOW, similarity)
    assert joined.id not in found.cited[:1]
