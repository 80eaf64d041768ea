"""The person's own closest note (issue 31, stop 43): a value labelled in lower case names
what a "what's X called?" question asks; Chinese questions are heard when the note shares the
question's subject or day; an amount asked (a temperature, a price, a count) is stated by a
number of its kind; of two notes about as close, the later is the current word; the later
note names what "which …?" asks when the closest does not."""

from __future__ import annotations

from datetime import datetime

from memcli.memory import Memory
from memcli.recall.answers import answer, asks_amount, labelled_value, states_amount

NOW = datetime(2025, 9, 1, 9).timestamp()


def _note(letter: str, text: str, day: datetime, speaker: str = "") -> Memory:
    return Memory(letter * 16, "sam", "note", text, day.timestamp(), f"{day:%Y-%m-%d}", speaker=speaker)


def test_a_lower_case_labelled_value_names_what_is_asked() -> None:
    """ "dentist: maria gonzalez" states the dentist's name though no capital says so."""
    for question, text, gold in (
        ("what's my dentist called?", "dentist: maria gonzalez, only does fillings on tuesdays", "maria gonzalez"),
        ("what's the name of my accountant?", "accountant = bob fenwick, 0161 555 0199", "bob fenwick"),
        ("what is my piano teacher called?", "piano teacher is mrs okoro, lessons at hers", "mrs okoro"),
    ):
        note = _note("a", text, datetime(2025, 3, 1))
        asked = _note("b", "remind me of the name again", datetime(2025, 8, 1))
        other = _note("c", "bins out tuesday night", datetime(2025, 8, 2))
        found = answer(question, [asked, note, other], "sam", NOW, {asked.id: 0.7, note.id: 0.55, other.id: 0.1})
        assert found.cited == [note.id], question
        assert gold in found.text, question


def test_a_label_of_another_thing_names_nothing_asked() -> None:
    assert not labelled_value("what's my dentist called?", "car: oil change overdue")
    assert not labelled_value("what's my dentist called?", "dentist appointment moved to friday")


def test_a_chinese_question_is_answered_by_the_closest_note_sharing_its_subject() -> None:
    """A note sharing the question's subject answers in other words; the person's own
    question on it is no rival."""
    for question, text, gold in (
        ("单元楼进门的密码是多少？", "物业通知：门禁密码改成 4417#", "4417#"),
        ("车库遥控器放哪了", "遥控器在玄关抽屉里", "玄关"),
        ("快递柜的取件码是多少", "菜鸟驿站取件码 5-2-3011", "5-2-3011"),
    ):
        note = _note("a", text, datetime(2025, 5, 1))
        other = _note("b", "周末带孩子去游泳", datetime(2025, 4, 1))
        asked = _note("c", "进门密码是多少？快递员问", datetime(2025, 6, 2))
        similarity = {other.id: 0.5, asked.id: 0.6, note.id: 0.42}
        found = answer(question, [other, asked, note], "sam", NOW, similarity)
        assert found.cited == [note.id], question
        assert gold in found.text, question


def test_a_dated_chinese_question_is_answered_by_that_days_note() -> None:
    """ "3月8号我跟谁见面了？": the note of that day, though it shares no word."""
    day = _note("a", "晚上和老马撸串，喝多了", datetime(2025, 3, 8, 21))
    before = _note("b", "交了物业费", datetime(2025, 3, 6))
    found = answer("3月8号那天我见了谁？", [day, before], "sam", NOW, {day.id: 0.5, before.id: 0.4})
    assert found.cited == [day.id]
    assert "老马" in found.text


def test_a_chinese_closest_note_of_another_subject_does_not_answer() -> None:
    """Chinese cosines mislead: a close note that shares no word of the question is no answer,
    nor a note naming no place for "where"."""
    unrelated = _note("a", "蛋白粉快喝完了", datetime(2025, 5, 1))
    found = answer("我的游泳教练叫什么？", [unrelated], "sam", NOW, {unrelated.id: 0.6})
    assert not found.answered
    visit = _note("b", "周日去老王家吃饭，带了水果", datetime(2025, 5, 1))
    found = answer("老王住在哪个小区？", [visit], "sam", NOW, {visit.id: 0.6})
    assert not found.answered


def test_the_amount_asked_is_stated_by_a_number_of_its_kind() -> None:
    assert asks_amount("what temperature do I roast the chicken at?") == "temperature"
    assert asks_amount("how much do I pay for the gym?") == "money"
    assert asks_amount("烤箱要开多少度？") == "temperature"
    assert not states_amount("temperature", "brine it overnight, rests 40 min")
    assert states_amount("temperature", "roast at 220C for 50 minutes")
    assert states_amount("temperature", "oven 200 for the roast")
    assert not states_amount("money", "membership renews on aug 3")
    assert states_amount("money", "membership is £32/mo")
    assert not states_amount("count", "体检约在5月10号")


def test_the_closest_note_does_not_answer_an_amount_it_does_not_state() -> None:
    for question, text in (
        ("what temperature do I roast the chicken at?", "roast chicken recipe from nana, lemon and thyme"),
        ("how much do I pay for the gym?", "gym membership renewed, love the sauna"),
        ("烤箱要开多少度？", "烤箱买了三年了，还挺好用"),
    ):
        note = _note("a", text, datetime(2025, 4, 1))
        other = _note("b", "call the bank", datetime(2025, 4, 2))
        found = answer(question, [note, other], "sam", NOW, {note.id: 0.45, other.id: 0.05})
        assert not found.answered, question


def test_of_two_notes_about_as_close_the_later_answers() -> None:
    """Two of the person's notes on one subject (they share a word), as close as each other:
    the later is the current word, whichever recall ranks first."""
    for question, old_text, new_text, gold in (
        (
            "what bedtime routine am I on?",
            "sleep: lights out at 10, no phones",
            "ditched early nights, doing split sleep now",
            "split sleep",
        ),
        (
            "what workout split do I follow?",
            "lifting push pull legs, 6 days",
            "switched to lifting full body three times a week",
            "full body",
        ),
    ):
        old = _note("a", old_text, datetime(2025, 2, 1))
        new = _note("b", new_text, datetime(2025, 5, 1))
        other = _note("c", "water the tomatoes", datetime(2025, 6, 1))
        for first, second in ((0.41, 0.40), (0.40, 0.41)):
            found = answer(question, [old, new, other], "sam", NOW, {old.id: first, new.id: second, other.id: 0.05})
            assert found.cited[:1] == [new.id], (question, first)
            assert gold in found.text, question


def test_the_later_note_names_what_which_asks() -> None:
    """ "signed up at anytime fitness" names no gym in capitals; the later note, that left it
    for the JCC, does, and is quoted first."""
    old = _note("a", "signed up at anytime fitness, $25/mo", datetime(2025, 1, 5))
    new = _note("b", "quit AF, going to the JCC by work now", datetime(2025, 6, 5))
    found = answer("which gym do I belong to now?", [old, new], "sam", NOW, {old.id: 0.5, new.id: 0.35})
    assert found.cited[:1] == [new.id]
    assert "JCC" in found.text


def test_a_later_note_further_off_sharing_the_best_notes_subject_is_the_current_word() -> None:
    """Recall finds the later note at well under half the best one's closeness; it names what
    the best note names ("canal path", "Movement"), so it is the person's latest word on it."""
    for question, old_text, new_text, gold in (
        (
            "how do I get to work?",
            "cycling to work along the canal path",
            "canal path closed, taking the 42 bus now",
            "42 bus",
        ),
        (
            "what kind of pass do I have at the pool?",
            "bought a 10-swim card at Kings pool",
            "Kings has a monthly unlimited deal for £35, took it",
            "monthly unlimited",
        ),
        ("我每天几点吃早饭？", "早饭七点吃，燕麦加鸡蛋", "改成八点半吃燕麦了，起得晚", "八点半"),
    ):
        old = _note("a", old_text, datetime(2025, 2, 1))
        new = _note("b", new_text, datetime(2025, 6, 1))
        found = answer(question, [old, new], "sam", NOW, {old.id: 0.6, new.id: 0.2})
        assert found.cited[:1] == [new.id], (question, found.text)
        assert gold in found.text, question


def test_a_label_naming_someone_does_not_state_their_number() -> None:
    """ "Dr Osei — new GP, surgery on Mill Rd" labels Dr Osei; it states no phone number,
    nor a Chinese clause a child's name."""
    note = _note("a", "Dr Osei — new GP, surgery on Mill Rd", datetime(2025, 2, 1))
    later = _note("b", "Osei appt: bloods fine, see you in a year", datetime(2025, 5, 1))
    found = answer("what's Dr Osei's phone number?", [note, later], "sam", NOW, {note.id: 0.65, later.id: 0.42})
    assert not found.answered
    born = _note("c", "小王家老二生了 是个女孩 六斤八两", datetime(2025, 3, 1))
    gift = _note("d", "给小王转了红包 500", datetime(2025, 3, 2))
    found = answer("小王家孩子叫啥名字", [born, gift], "sam", NOW, {born.id: 0.62, gift.id: 0.26})
    assert not found.answered


def test_a_chinese_question_naming_no_one_asks_the_persons_current_value() -> None:
    """Chinese leaves out the subject: "药现在每天吃几片？" is the asker's, and their later note
    that changed it comes first."""
    for question, old_text, new_text, gold in (
        ("二甲双胍现在每天吃几片？", "二甲双胍 每天早晚各一片", "复查后医生让二甲双胍改成每天三片", "三片"),
        ("降脂药现在吃多少毫克？", "降脂药阿托伐他汀 10mg 睡前吃", "血脂没降下来，阿托伐他汀加到20mg", "20mg"),
    ):
        old = _note("a", old_text, datetime(2025, 2, 1))
        new = _note("b", new_text, datetime(2025, 6, 1))
        other = _note("c", "给妈妈买了条围巾", datetime(2025, 3, 1))
        similarity = {old.id: 0.66, other.id: 0.6, new.id: 0.4}
        found = answer(question, [old, other, new], "sam", NOW, similarity)
        assert found.cited[:1] == [new.id], (question, found.text)
        assert gold in found.text, question


def test_a_labelled_code_states_the_code_asked() -> None:
    """ "router pw: hunter7" states the router's password though it never says "password"."""
    for question, text, gold in (
        ("what's my router password?", "router pw: hunter7, admin user is admin", "hunter7"),
        ("what's the code for the bike lock?", "bike lock = 4471, the blue one", "4471"),
    ):
        note = _note("a", text, datetime(2025, 2, 1))
        other = _note("b", "pick up dry cleaning", datetime(2025, 3, 1))
        found = answer(question, [note, other], "sam", NOW, {note.id: 0.5, other.id: 0.1})
        assert found.cited == [note.id], question
        assert gold in found.text, question


def test_a_note_writing_a_code_states_the_number_asked() -> None:
    """ "社保卡号 A87654321" states the card's number though it never writes "号码"; a date
    or a duration is no code."""
    for question, text, gold in (
        ("帮我看看我的社保卡号码", "社保卡号 A87654321，别弄丢", "A87654321"),
        ("找一下我的医保卡号码", "医保卡 3301-2298-77 在钱包夹层", "3301-2298-77"),
    ):
        note = _note("a", text, datetime(2025, 2, 1))
        asked = _note("b", "卡号是多少来着？", datetime(2025, 6, 1))
        found = answer(question, [asked, note], "sam", NOW, {asked.id: 0.7, note.id: 0.4})
        assert found.cited == [note.id], question
        assert gold in found.text, question
    sent = _note("c", "社保卡补办 2029年到期 三周后寄到", datetime(2025, 2, 1))
    found = answer("帮我看看我的社保卡号码", [sent], "sam", NOW, {sent.id: 0.5})
    assert not found.answered


def test_a_number_or_a_room_beside_the_thing_asked_is_not_its_code() -> None:
    """A labelled value is a code only when it is one ("pin = 4471"), not a count or an
    amount with words after it; a code written in a note is the number asked only when the
    thing asked labels it ("room 1204" is the room's, "快递单号" the parcel's)."""
    for question, text in (
        ("what's my wifi password?", "wifi: 5G band keeps dropping"),
        ("what's my gym locker number?", "gym: 45 min cardio today"),
        ("what's my vet's phone number?", "vet - 3 shots done for Milo"),
        ("what's the alarm code at the shop?", "shop: 2 hours overtime tonight"),
        ("what is my passport number?", "passport appointment Thursday, room 1204"),
        ("what's my library card number?", "library book due back, shelf 3321 had it"),
        ("我的护照号码是多少？", "护照要续签了，快递单号 SF1234567890"),
    ):
        note = _note("a", text, datetime(2025, 2, 1))
        found = answer(question, [note], "sam", NOW, {note.id: 0.5})
        assert not found.answered, (question, found.text)
    for question, text, gold in (
        ("what's my gym locker number?", "gym locker: 117", "117"),
        ("what is my passport number?", "renewed passport, passport no E7712093", "E7712093"),
    ):
        note = _note("a", text, datetime(2025, 2, 1))
        found = answer(question, [note], "sam", NOW, {note.id: 0.5})
        assert found.cited == [note.id] and gold in found.text, (question, found.text)
