"""The answer that follows a life as it changes quotes the right, current memory first (issue
31, stop 44): a word written on a stop word's stem is a word of its own ("dating"); a label
of another thing of the kind asked names nothing asked ("home wifi" for the office's); a
question naming no one asks about the asker, not about another's thing ("爸爸的"); "before X"
is answered by a note before the first naming X, not by one naming it."""

from __future__ import annotations

from datetime import datetime

from memcli.memory import Memory
from memcli.recall.answers import answer, content_words, labelled_value

NOW = datetime(2025, 9, 1, 9).timestamp()


def _note(letter: str, text: str, day: datetime, speaker: str = "") -> Memory:
    return Memory(letter * 16, "sam", "note", text, day.timestamp(), f"{day:%Y-%m-%d}", speaker=speaker)


def test_a_verb_on_a_stop_words_stem_is_a_word_of_the_question() -> None:
    assert "date" in content_words("who am I dating these days?")
    assert "date" in content_words("who is she dating now?")
    assert "time" in content_words("what's the timing of my infusions?")
    assert "date" not in content_words("what date is the wedding?")
    assert "date" not in content_words("what are the dates of the trip?")
    assert "dai" not in content_words("how many days is the course?")


def test_who_the_person_is_dating_is_the_note_of_the_date() -> None:
    split = _note("a", "Tom and I called it off last night", datetime(2025, 3, 1))
    dentist = _note("b", "dentist moved to thursday 4pm", datetime(2025, 5, 1))
    new = _note("c", "second date with Priya, she is lovely, we're a thing now", datetime(2025, 7, 1))
    similarity = {split.id: 0.42, dentist.id: 0.12, new.id: 0.4}
    for question in ("who am I dating right now?", "who am I dating these days?"):
        found = answer(question, [split, new, dentist], "sam", NOW, similarity)
        assert found.cited[:1] == [new.id], question
        assert "Priya" in found.text, question


def test_a_label_of_another_place_names_nothing_asked() -> None:
    """The label's words and the question's qualifier disagree ("home" and "office"): another
    thing of the kind asked; a label saying less or more than the question still names it."""
    assert not labelled_value("what is the wifi password at the office?", "home wifi: Heron_5G / pw on fridge", True)
    assert not labelled_value("what's my work email password?", "personal email pw: otter2291", True)
    assert labelled_value("what is the office wifi password?", "wifi pw: sunflower42", True)
    assert labelled_value("what is my wifi password?", "home wifi: Heron_5G", True)
    assert labelled_value("what is my locker number?", "gym locker: 117", True)


def test_a_code_of_another_place_does_not_answer() -> None:
    for question, notes in (
        (
            "what's the wifi password at work?",
            ("home wifi: Heron_5G / pw on the fridge", "work moved to the 3rd floor", "ask IT about the new laptop"),
        ),
        (
            "the gym's wifi password, what was it?",
            ("home wifi - Otter_24G", "gym closes at 9 on sundays now", "renew the car tax"),
        ),
    ):
        memories = [_note(chr(97 + i), text, datetime(2025, 4, 1 + i)) for i, text in enumerate(notes)]
        similarity = {memories[0].id: 0.62, memories[1].id: 0.3, memories[2].id: 0.2}
        found = answer(question, memories, "sam", NOW, similarity)
        assert not found.answered, question


def test_a_question_naming_no_one_is_not_answered_by_anothers_thing() -> None:
    """The asker's own note answers, though a later note of another's thing ("Dad's", "妈妈的")
    holds the question's words and is closer."""
    for question, own_text, theirs_text in (
        (
            "how much metformin am I taking now?",
            "metformin 500mg twice a day with meals",
            "Dad's metformin went up to 1000mg",
        ),
        ("胰岛素现在每天打几个单位？", "胰岛素每天打12个单位，睡前打", "妈妈的胰岛素现在每天打20个单位"),
        ("我现在每天打几个单位胰岛素？", "胰岛素每天打12个单位，睡前打", "妈妈的胰岛素现在每天打20个单位"),
    ):
        own = _note("a", own_text, datetime(2025, 3, 1))
        theirs = _note("b", theirs_text, datetime(2025, 6, 1))
        other = _note("c", "bins out tuesday night", datetime(2025, 7, 1))
        similarity = {own.id: 0.55, theirs.id: 0.6, other.id: 0.05}
        found = answer(question, [theirs, own, other], "sam", NOW, similarity)
        assert found.cited[:1] == [own.id], question


def test_before_x_is_the_note_before_the_first_naming_x() -> None:
    """Of notes naming X, the first tells when X began: the answer is the close note before
    it that names no X, told against that first note."""
    for question, notes, gold in (
        (
            "what phone did I have before the Pixel?",
            (
                ("iPhone 11 screen cracked again", datetime(2021, 3, 1)),
                ("traded in the iphone at the carrier store", datetime(2022, 5, 2)),
                ("got the Pixel 8, love the camera", datetime(2022, 5, 10)),
                ("Pixel case arrived, the green one", datetime(2023, 1, 8)),
            ),
            "iphone",
        ),
        (
            "where did I work before Stripe?",
            (
                ("three years at Monzo now, still on the payments team", datetime(2021, 3, 1)),
                ("Stripe offer accepted! start in June", datetime(2022, 4, 2)),
                ("first week at Stripe, onboarding is long", datetime(2022, 6, 10)),
                ("Stripe summer party on the roof", datetime(2023, 7, 8)),
            ),
            "monzo",
        ),
    ):
        memories = [_note(chr(97 + i), text, day) for i, (text, day) in enumerate(notes)]
        similarity = {m.id: 0.5 + 0.02 * i for i, m in enumerate(memories)}
        found = answer(question, list(reversed(memories)), "sam", NOW, similarity)
        assert found.cited[:1] and gold in next(m.text.lower() for m in memories if m.id == found.cited[0]), question


def test_a_later_note_on_the_subject_telling_nothing_asked_is_not_quoted_first() -> None:
    """The latest-word rule: a later note sharing the subject's word but stating no value of
    the kind asked (a day's hours, an errand, a card on Teachers' Day) is not the current
    word; the note that answers is quoted first."""
    for question, best_text, later_text, close in (
        (
            "what's my home address now?",
            "new address: 14 Quarry Rd, Leith",
            "Leith library book sale is Sundays 10-4",
            0.2,
        ),
        (
            "what tier is my spotify subscription?",
            "switched spotify to the family plan",
            "spotify wrapped came out lol",
            0.3,
        ),
        ("我现在住哪？", "搬到了望京，租了个两居室", "房租交了三个月", 0.5),
        ("我现在在哪家医院上班？", "入职协和医院，做护士", "护士节发了一束花", 0.45),
    ):
        best = _note("a", best_text, datetime(2025, 3, 1))
        later = _note("b", later_text, datetime(2025, 6, 1))
        other = _note("c", "bins out tuesday night", datetime(2025, 7, 1))
        similarity = {best.id: 0.55, later.id: close, other.id: 0.02}
        found = answer(question, [best, later, other], "sam", NOW, similarity)
        assert found.cited[:1] == [best.id], (question, found.text)


def test_a_later_note_stating_what_is_asked_is_still_the_latest_word() -> None:
    """A later note stating the kind asked (an amount, a place, a person, none at all) or a
    change of the person's is quoted first."""
    for question, best_text, later_text in (
        (
            "how many units of insulin do I take at night?",
            "insulin 14 units at night",
            "nurse says night insulin up to 18 units",
        ),
        ("how much coffee do I drink a day?", "coffee three cups a day", "not having coffee at all this month"),
        ("我现在的对象是谁？", "跟小林分手了", "跟同事阿峰在一起了"),
        (
            "which choir do I sing with these days?",
            "joined the thursday choir at st marks",
            "left st marks choir, singing with the docklands lot now",
        ),
    ):
        best = _note("a", best_text, datetime(2025, 3, 1))
        later = _note("b", later_text, datetime(2025, 6, 1))
        similarity = {best.id: 0.55, later.id: 0.45}
        found = answer(question, [best, later], "sam", NOW, similarity)
        assert found.cited[:1] == [later.id], (question, found.text)


def test_a_bare_chinese_where_asks_a_place() -> None:
    from memcli.recall.answers import question_type

    assert question_type("我现在住哪来着") == "where"
    assert question_type("车钥匙放哪了？") == "where"
    assert question_type("哪个牌子的？") != "where"


def test_a_note_with_a_question_after_it_still_tells() -> None:
    """ "second date with Priya. are we official now?": the note tells, the question is an
    afterthought; it is the latest word for "who am I seeing?"."""
    split = _note("a", "Tom and I broke up. it was time.", datetime(2025, 3, 1))
    new = _note("b", "second date with Priya, she's great. are we official now?", datetime(2025, 7, 1))
    for question in ("who am I dating right now?", "who am I dating now?"):
        found = answer(question, [split, new], "sam", NOW, {split.id: 0.36, new.id: 0.4})
        assert found.cited[:1] == [new.id], (question, found.text)


def test_a_number_of_ones_own_thing_is_asked_with_a_possessive_between() -> None:
    from memcli.recall.answers import must_state

    assert must_state("what's my car's license plate number?") == "number"
    assert must_state("what is my kid's school ID number?") == "number"
    for question in ("what's my car's license plate number?", "what is my bike's frame number?"):
        notes = [
            _note("a", "car wash membership cancelled", datetime(2025, 5, 1)),
            _note("b", "tyre pressure 35 psi front and rear", datetime(2025, 4, 1)),
        ]
        found = answer(question, notes, "sam", NOW, {notes[0].id: 0.2, notes[1].id: 0.05})
        assert not found.answered, (question, found.text)


def test_before_x_reaches_a_note_further_off() -> None:
    """Recall finds the note before X further off than X's own notes ("sold the golf"): it is
    still the answer, not X's first note."""
    old = _note("a", "Golf needs new tyres", datetime(2021, 6, 1))
    sold = _note("b", "sold the golf to a neighbour, 4k", datetime(2022, 11, 19))
    new = _note("c", "picked up the Yaris!! silver, 2020", datetime(2022, 11, 26))
    card = _note("d", "insurance card for the yaris in the glovebox", datetime(2023, 1, 8))
    similarity = {new.id: 0.64, card.id: 0.48, sold.id: 0.28, old.id: 0.17}
    for question in ("what car did I drive before the Yaris?", "which car did I have before the Yaris?"):
        found = answer(question, [new, card, sold, old], "sam", NOW, similarity)
        assert found.cited[:1] == [sold.id], (question, found.text)


def test_remind_me_asks_nothing_a_memory_must_hold() -> None:
    items = [
        _note("a", "add Middlemarch to the reading pile", datetime(2025, 3, 1)),
        _note("b", "Orbital sounds great, put it on the list", datetime(2025, 4, 1)),
        _note("c", "book rec from Ana: Stoner", datetime(2025, 5, 1)),
        _note("d", "pick up dry cleaning thurs", datetime(2025, 5, 9)),
    ]
    similarity = {items[0].id: 0.44, items[1].id: 0.28, items[2].id: 0.26, items[3].id: 0.1}
    found = answer("remind me what's on my reading list", items, "sam", NOW, similarity)
    assert set(found.cited) == {items[0].id, items[1].id, items[2].id}


def test_a_chinese_list_item_within_the_items_closeness_is_one_of_them() -> None:
    """A note sharing no word of the question, that recall finds between the items that do,
    is an item too; one closer than every item is not (a distractor)."""
    for question, texts in (
        ("家里有哪些东西要修？", ("家里厨房水龙头漏水，要找人修", "热水器打不着火", "家里洗衣机坏了，报修")),
        ("搬家还要买哪些东西？", ("搬家还要买个电饭煲", "窗帘量好尺寸了，两米四", "搬家冰箱也得买")),
    ):
        first = _note("a", texts[0], datetime(2025, 3, 1))
        middle = _note("b", texts[1], datetime(2025, 3, 5))
        last = _note("c", texts[2], datetime(2025, 3, 9))
        other = _note("d", "同学聚会定在5月4号", datetime(2025, 3, 12))
        similarity = {first.id: 0.6, middle.id: 0.52, last.id: 0.5, other.id: 0.44}
        found = answer(question, [first, middle, last, other], "sam", NOW, similarity)
        assert set(found.cited) == {first.id, middle.id, last.id}, (question, found.text)


def test_a_later_turn_greeting_a_friend_or_asking_is_not_the_latest_word() -> None:
    """In a conversation, a later turn addressing "朋友" names no one kept company, and a
    turn with a question puts it to the other: neither is the latest word."""
    best = _note("a", "我喜欢巴赫的管弦乐组曲", datetime(2025, 3, 1), speaker="sam")
    hello = _note("b", "你好，朋友。今天我做了一道番茄炒蛋", datetime(2025, 4, 1), speaker="sam")
    found = answer("我喜欢谁的管弦乐组曲？", [best, hello], "sam", NOW, {best.id: 0.6, hello.id: 0.5})
    assert found.cited[:1] == [best.id], found.text
    gym = _note("c", "I mostly work out at the Y on Elm St.", datetime(2025, 3, 1), speaker="sam")
    asking = _note("d", "Thanks. Could you suggest a stretch for my back?", datetime(2025, 4, 1), speaker="sam")
    found = answer("where do I usually work out?", [gym, asking], "sam", NOW, {gym.id: 0.6, asking.id: 0.6})
    assert found.cited[:1] == [gym.id], found.text
