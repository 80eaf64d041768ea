"""Whose a statement or a question is (issue 31): another person's state is not the writer's
statement, and a question about another person is not answered with the writer's state."""

from __future__ import annotations

from memcli.text.updates import DIET, PARTNER, Statement, answers_asked, statements, updates
from memcli.text.whose import PARTNERS, asks_of_another, relations_written


def _values(text: str, key: str) -> list[str]:
    return [s.value for s in statements(text) if s.key == key]


def test_another_persons_diet_or_partner_is_no_statement_of_the_writer() -> None:
    """A note telling of someone else's diet or partner, English or Chinese, states neither of
    its writer: a sister's keto, a husband's fasting, a roommate still single."""
    for note in (
        "my sister is doing keto now",
        "sister doing keto now, we cannot share a meal lol",
        "bro went keto",
        "mum's doing keto now",
        "husband still doing intermittent fasting 16:8",
        "husband still doing 16:8",
        "Dan went vegan",
        "Sarah is vegan now",
        "我姐姐在吃素",
        "姐姐最近在吃素",
        "老公开始吃素了",
    ):
        assert _values(note, DIET) == [], note
    for note in ("sister is dating Tom now", "roommate still single and complaining lol"):
        assert _values(note, PARTNER) == [], note


def test_the_writers_own_diet_is_read_beside_someone_elses() -> None:
    """The writer's diet stays theirs where someone else is named too: as the one followed
    ("I'm doing keto now, like my sister", "开始吃素了，跟着妈妈一起"), as company ("my sister
    and I went vegan"), or in a clause of the writer's after another's."""
    assert _values("I'm doing keto now, like my sister", DIET) == ["keto"]
    assert _values("my sister and I went vegan", DIET) == ["vegan"]
    assert _values("开始吃素了，跟着妈妈一起", DIET) == ["vegetarian"]
    assert _values("mum started keto, I went vegan", DIET) == ["vegan"]
    assert _values("Finally went vegan", DIET) == ["vegan"]
    assert _values("Yesterday went vegan", DIET) == ["vegan"]
    assert _values("Started keto today", DIET) == ["keto"]
    assert not relations_written("the kids call me mum")


def test_another_persons_diet_supersedes_none_of_the_writers() -> None:
    """ "sister doing keto now" does not replace the writer's vegan diet noted before it."""
    own = Statement(DIET, "vegan")
    assert not any(updates(s, own) for s in statements("sister doing keto now, we cannot share a meal lol"))


def test_a_question_about_another_person_is_no_question_about_the_asker() -> None:
    """A diet or partner question asks of the asker only when no one else is its subject:
    "what diet is my sister on?" and "who is my sister dating?" are not answered by the
    writer's own diet or partner; "am I vegan like my sister?" and "what's my husband's
    name?" are the asker's."""
    assert asks_of_another("what diet is my sister on?")
    assert asks_of_another("what's my sister's diet?")
    assert asks_of_another("我姐姐现在吃素吗？")
    assert asks_of_another("who is my sister dating?", but=frozenset({"husband", "boyfriend"}))
    assert not asks_of_another("am I vegan like my sister?")
    assert not asks_of_another("what do the kids call me?")
    assert not asks_of_another("can I eat meat at my mum's?")
    assert not asks_of_another("我现在还吃素吗？")
    assert not asks_of_another("what's my husband's name?", but=frozenset({"husband"}))
    vegan = "Went vegan today"
    assert answers_asked("what diet am I on?", vegan)
    assert not answers_asked("what diet is my sister on?", vegan)
    assert not answers_asked("我姐姐现在吃素吗？", "我开始吃素了")
    assert answers_asked("我现在吃素吗？", "我开始吃素了")
    dating = "I'm dating Tom"
    assert answers_asked("who am I dating?", dating)
    assert not answers_asked("who is my sister dating?", dating)


def test_a_sisters_later_diet_is_not_the_askers_way_of_eating() -> None:
    """The writer's plant-based diet answers "the way I eat" though the sister's keto is
    noted after it and recall finds it as close (b12-diet-en-1's notes)."""
    from datetime import datetime

    from memcli.memory import Memory
    from memcli.recall.answers import answer

    def note(letter: str, text: str, day: datetime) -> Memory:
        return Memory(letter * 16, "sam", "note", text, day.timestamp(), f"{day:%Y-%m-%d}")

    before = note("a", "6 months vegetarian, still eating cheese like crazy", datetime(2023, 4, 1))
    vegan = note("b", "done with cheese + eggs too, fully vegan from today", datetime(2023, 7, 10))
    sister = note("c", "sister doing keto now, we cannot share a meal lol", datetime(2023, 8, 10))
    notes = [sister, vegan, before]
    found = answer("what diet am I on these days?", notes, "sam", datetime(2023, 9, 1).timestamp())
    assert found.cited[:1] == [vegan.id]


def test_a_way_of_eating_and_whom_one_is_seeing_are_asked_in_other_words() -> None:
    """A diet is asked as the asker's way of eating named as such ("what eating plan am I
    following", "the way I eat"), a partner as "who am I seeing" with nothing after it but a
    word of now; a plan alone, another person's eating plan and an appointment are not asked."""
    diet = "back on whole grains + lots of olive oil, fish 2x/wk. mediterranean it is"
    date = "third date with elena. she's so funny"
    assert answers_asked("what eating plan am I following right now?", diet)
    assert answers_asked("how would you describe the way I eat now?", diet)
    assert answers_asked("what's my eating schedule these days?", "IF 16:8, eating window noon-8pm")
    assert answers_asked("who am I seeing right now?", date)
    assert answers_asked("who am i seeing these days?", date)
    for question in (
        "what plan am I on?",
        "what's my phone plan?",
        "what eating plan is my sister following?",
        "what's my sister's eating plan?",
    ):
        assert not answers_asked(question, diet), question
    for question in ("who am I seeing on Friday?", "who am I seeing for my knee?", "who am I seeing at 3pm?"):
        assert not answers_asked(question, date), question
    assert not answers_asked(
        "how would you describe the way I eat now?", "sister doing keto now, we cannot share a meal"
    )


def test_a_note_opening_on_the_value_it_states_is_the_writers() -> None:
    # a capitalised diet or medicine at a note's head is what it states, no one's name
    for note, key, value in (
        ("Keto going great, down 3kg", DIET, "keto"),
        ("Keto has been easy so far", DIET, "keto"),
        ("Keto is going well, down 3kg", DIET, "keto"),
        ("Vegan has been easy", DIET, "vegan"),
        ("Metformin went up to 1000mg", "dose:metformin", "1000 mg"),
        ("Lisinopril went up to 20mg", "dose:lisinopril", "20 mg"),
        ("Ozempic got bumped to 1 mg", "dose:", "1 mg"),
        ("Ozempic is now 1 mg weekly", "dose:ozempic", "1 mg"),
    ):
        assert (key, value) in {(s.key, s.value) for s in statements(note)}, note
    assert statements("Dan went vegan") == []


def test_the_writers_clause_after_another_persons_is_read_in_any_case() -> None:
    for note in (
        "Sarah went vegan, started keto myself",
        "Dan went vegan, i'm doing keto",
        "Dan went vegan, me doing keto lol",
    ):
        assert [(s.key, s.value) for s in statements(note)] == [(DIET, "keto")], note
    assert {s.value for s in statements("dad's been on metformin 500mg, mine went up to 1000mg")} == {"1000 mg"}


def test_the_later_diet_note_opening_on_its_diet_answers() -> None:
    notes = ["started going vegan this week", "Keto going great, down 3kg"]
    assert [s.value for s in statements(notes[1])] == ["keto"]
    assert any(updates(new, old) for new in statements(notes[1]) for old in statements(notes[0]))


def test_a_question_naming_the_askers_partner_is_the_askers() -> None:
    assert not asks_of_another("did my mum meet my boyfriend?", PARTNERS)
    assert not asks_of_another("我妈见过我男朋友吗？", PARTNERS)
    assert asks_of_another("who is my sister's boyfriend?", PARTNERS)
    assert asks_of_another("who is my sister dating?", PARTNERS)


def test_a_relatives_move_beside_the_writers_is_no_home_of_the_writers() -> None:
    assert [(s.key, s.value) for s in statements("sis moved to Leeds, i moved to York")] == [("residence", "york")]
    assert statements("my bf's moved to Bristol") == []
