"""Which note answers, and how much of it is quoted (issue 31): a note of the person's own that
recall finds closest answers where its words differ from the question's; a list question
gathers the person's close notes of one subject; an earlier or later note told against the
anchor is about the same thing; a short note's short afterword is quoted with it."""

from __future__ import annotations

from datetime import datetime

from memcli.memory import Memory
from memcli.recall.answers import answer

NOW = datetime(2025, 9, 1, 9).timestamp()


def _note(letter: str, text: str, day: datetime, speaker: str = "") -> Memory:
    return Memory(letter * 16, "sam", "note", text, day.timestamp(), f"{day:%Y-%m-%d}", speaker=speaker)


# a short note's afterword -------------------------------------------------------------------


def test_a_short_notes_short_afterword_is_quoted_with_it() -> None:
    """ "…no tennis this season. gave up." quoted without "gave up." says nothing of whether
    the person still plays."""
    for question, text, tail in (
        ("do I still play tennis?", "elbow is shot, physio says no playing tennis this season. gave up.", "gave up"),
        ("am I still in the choir?", "told Maria I'm leaving the choir after the concert. done.", "done"),
        ("我还在跑步吗？", "医生说膝盖不能再跑步了。停了。", "停了"),
    ):
        note = _note("a", text, datetime(2025, 6, 1))
        other = _note("b", "pay the window cleaner", datetime(2025, 6, 3))
        found = answer(question, [note, other], "sam", NOW, {note.id: 0.6, other.id: 0.05})
        assert found.cited == [note.id], question
        assert tail in found.text, question


def test_someone_elses_long_turn_is_not_extended() -> None:
    """A turn of another speaker: its next sentence is another thought, not an afterword."""
    turn = _note(
        "c",
        "I have been playing tennis at the club every weekend since the spring and the coach says my serve "
        "has come on a lot. Love it.",
        datetime(2025, 6, 1),
        speaker="Caroline",
    )
    found = answer("Does Caroline play tennis at the club?", [turn], "sam", NOW, {turn.id: 0.6})
    assert found.cited == [turn.id]
    assert "Love it" not in found.text


# the earlier note is about the same thing -------------------------------------------------


def test_a_chinese_earlier_note_is_about_what_the_question_asks() -> None:
    """ "换工作之前": of the notes before the change, the one about work answers, not a holiday
    note noted between them that recall finds close too."""
    for question, old_text, new_text, gold in (
        ("换工作之前我在哪个单位？", "在腾讯做产品，天天开会", "换工作了，去了阿里做产品", "腾讯"),
        ("辞职以前我在哪家公司上班？", "在京东做运营，通勤一小时", "辞职了，下个月去美团做运营", "京东"),
    ):
        old = _note("o", old_text, datetime(2022, 3, 1))
        trip = _note("t", "中秋去看了外婆", datetime(2023, 9, 29))
        new = _note("n", new_text, datetime(2024, 7, 8))
        similarity = {new.id: 0.6, trip.id: 0.5, old.id: 0.45}
        found = answer(question, [new, trip, old], "sam", NOW, similarity)
        assert found.cited and found.cited[0] == old.id, question
        assert gold in found.text
        assert trip.id not in found.cited


def test_a_chinese_question_for_a_card_number_is_not_answered_without_one() -> None:
    """ "我的社保卡号是多少？" asks a number: a note about the card that states none does not
    answer, nor a later note about the errand."""
    for question, card, errand in (
        ("我的社保卡号是多少？", "社保卡要去银行激活", "周二请半天假去银行"),
        ("我的身份证号是多少？", "身份证快过期了，要去派出所换", "周三下午请假去派出所"),
    ):
        first = _note("a", card, datetime(2024, 3, 4))
        later = _note("b", errand, datetime(2024, 3, 12))
        found = answer(question, [first, later], "sam", NOW, {first.id: 0.55, later.id: 0.4})
        assert not found.answered, (question, found.text)


# the person's own closest note answers ----------------------------------------------------


def _ask(question: str, notes: list[tuple[str, float, datetime]]) -> tuple[object, list[Memory]]:
    memories = [_note(chr(ord("a") + i), text, day) for i, (text, _, day) in enumerate(notes)]
    similarity = {m.id: close for m, (_, close, _) in zip(memories, notes)}
    ranked = sorted(memories, key=lambda m: -similarity[m.id])
    return answer(question, ranked, "sam", NOW, similarity), memories


def test_the_closest_own_note_answers_in_other_words() -> None:
    """No note holds half of the question's words; the one recall finds clearly closest
    answers, each a phrasing a person would use."""
    for question, text in (
        ("what's my current gig?", "new job: night nurse at St Mary's, three shifts a week"),
        ("what am I cutting out of my meals these days?", "doc says strictly no sugar for 3 months"),
        ("how am I getting to the office now?", "sold the car. cycling in every day"),
        ("what broadband deal am I on?", "moved to the fibre 500 deal with vodafone"),
    ):
        found, notes = _ask(
            question,
            [
                (text, 0.45, datetime(2025, 5, 2)),
                ("pay the window cleaner", 0.12, datetime(2025, 5, 6)),
                ("Mum's birthday dinner sat 7pm", 0.08, datetime(2025, 5, 9)),
            ],
        )
        assert found.cited == [notes[0].id], (question, found.text)


def test_a_question_the_person_noted_is_no_rival_and_no_answer() -> None:
    """ "should I get the blue or the grey sofa??" is closest but asks; the note that
    settles it answers."""
    found, notes = _ask(
        "am I getting the blue couch or the grey one?",
        [
            ("should I get the blue or the grey sofa?? ask Jo", 0.86, datetime(2025, 3, 1)),
            ("went with the grey one in the end, arrives in june", 0.6, datetime(2025, 3, 9)),
            ("car wash", 0.01, datetime(2025, 3, 4)),
        ],
    )
    assert found.cited == [notes[1].id], found.text


def test_the_closest_note_does_not_answer_without_the_value_asked() -> None:
    """Abstaining stays: a note as close as another (no margin), a note lacking the kind of
    value asked (a blood type, a price, a name), one about someone else's thing."""
    cases = [
        # two notes about as close: recall does not single one out
        ("how's the renovation going?", ("tiler booked for the 12th", 0.50), ("new oven arrived, wrong colour", 0.48)),
        ("what's my blood type?", ("gave blood at the red cross, got a biscuit", 0.6), ("call the bank", 0.1)),
        ("how much did I pay for the bike?", ("picked up the bike from Evans on sat", 0.55), ("bin day", 0.1)),
        ("which gym do I go to?", ("legs day, knees sore after", 0.5), ("bin day", 0.1)),
        ("what's my car's make?", ("Tom's car is a Volvo", 0.6), ("bin day", 0.1)),
        # holds the kind of value asked ("number"), not what it is of
        ("what's my national insurance number?", ("our neighbour at number 14 has a cat", 0.6), ("bin day", 0.1)),
        ("我的血型是什么？", ("今天去献血了，送了一盒饼干", 0.6), ("交电费", 0.1)),
    ]
    for question, (first, c1), (second, c2) in cases:
        found, _ = _ask(question, [(first, c1, datetime(2025, 4, 1)), (second, c2, datetime(2025, 4, 3))])
        assert not found.answered, (question, found.text)


def test_a_model_reply_is_not_the_closest_own_note() -> None:
    """Only the person's own notes answer by closeness: the assistant's reply does not."""
    reply = Memory(
        "r" * 16,
        "sam",
        "turn",
        "You could try cycling, it is cheap and quick.",
        NOW - 86400,
        "2025-08-31",
        speaker="assistant",
    )
    other = _note("o", "pay the window cleaner", datetime(2025, 8, 20))
    found = answer("how do I commute these days?", [reply, other], "sam", NOW, {reply.id: 0.7, other.id: 0.1})
    assert not found.answered, found.text


# a list question gathers the person's close notes -----------------------------------------


def test_a_list_question_gathers_each_close_note_of_the_person() -> None:
    """ "what supplements am I on?": no note holds the word; the notes recall finds about as
    close as the closest are each an item, cited; an unrelated note is not."""
    for question in ("what supplements am I on?", "which vitamins do I take?"):
        found, notes = _ask(
            question,
            [
                ("started magnesium at bedtime", 0.40, datetime(2025, 1, 5)),
                ("added fish oil with breakfast", 0.41, datetime(2025, 2, 14)),
                ("GP put me on iron tablets for the anaemia", 0.30, datetime(2025, 3, 30)),
                ("dentist cleaning", 0.08, datetime(2025, 1, 19)),
            ],
        )
        assert set(found.cited) == {notes[0].id, notes[1].id, notes[2].id}, (question, found.text)


def test_a_chinese_list_gathers_the_notes_holding_its_word() -> None:
    """ "装修要买的东西有哪些？": "还要买个热水器" holds 买 and is an item; a note about paying the
    builder shares a character of a word ("东" of "东西" and "房东") and is not."""
    found, notes = _ask(
        "装修要买的东西有哪些？",
        [
            ("装修要买：地板", 0.62, datetime(2024, 8, 3)),
            ("还要买个热水器", 0.35, datetime(2024, 8, 5)),
            ("记得给房东转押金", 0.34, datetime(2024, 8, 6)),
        ],
    )
    assert set(found.cited) == {notes[0].id, notes[1].id}, found.text
