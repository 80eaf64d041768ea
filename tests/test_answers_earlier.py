"""How the extractive answer follows a life over time without a supersession mark (issue 31):
the earlier note for a question about the past, a later note of the person's that answers a
question whose words the first holds only in part, and kinds of value an answer must state."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime

from memcli.memory import Memory
from memcli.recall.answers import answer, asks_earlier, must_state

NOW = datetime(2025, 9, 1, 9).timestamp()


def _note(letter: str, text: str, day: datetime) -> Memory:
    return Memory(letter * 16, "sam", "note", text, day.timestamp(), f"{day:%Y-%m-%d}")


def test_a_question_about_before_something_is_told_apart_from_the_present() -> None:
    assert asks_earlier("where did I live before I moved to Harrogate?")
    assert asks_earlier("what was my previous employer?")
    assert asks_earlier("what ramipril dose was I on last winter?")
    assert asks_earlier("what was my old phone number?")
    assert asks_earlier("我搬到成都之前住哪？")
    assert asks_earlier("我原来在哪家公司上班")
    assert not asks_earlier("what do I take before breakfast?")  # a habit of the present
    assert not asks_earlier("how old was Mia at the wedding?")
    assert not asks_earlier("where do I live now?")


def test_the_note_before_the_one_a_question_names_answers_it() -> None:
    """The question "before I moved to Harrogate": the note naming Harrogate is the anchor, the close
    note before it the answer, quoted first with the anchor after it, both cited."""
    old = _note("o", "flat share on Hawthorne Rd in Leeds, cheap but damp", datetime(2019, 4, 2))
    new = _note("n", "got the keys! new place on Fenwick Lane, Harrogate", datetime(2024, 5, 6))
    other = _note("x", "renew the car tax", datetime(2024, 5, 9))
    similarity = {new.id: 0.62, old.id: 0.41, other.id: 0.05}
    found = answer("Where did I live before I moved to Harrogate?", [new, old, other], "sam", NOW, similarity)
    assert found.cited == [old.id, new.id]
    assert found.text.index("Hawthorne") < found.text.index("Fenwick")


def test_a_chinese_question_about_before_a_change_quotes_the_earlier_note() -> None:
    old = _note("o", "在华为做测试工程师", datetime(2019, 7, 1))
    new = _note("n", "跳到字节了，做后端开发", datetime(2023, 3, 1))
    similarity = {new.id: 0.7, old.id: 0.6}
    found = answer("我跳到字节之前在哪上班", [new, old], "sam", NOW, similarity)
    assert found.cited[0] == old.id
    assert "华为" in found.text


def test_an_old_value_is_the_close_note_before_the_latest() -> None:
    """No anchor named ("last winter", "old"): the best note is the latest close one, and the
    close note before it answers; an unrelated note does not count."""
    old = _note("o", "ramipril 5mg in the mornings", datetime(2024, 12, 3))
    new = _note("n", "GP put ramipril up to 10mg", datetime(2025, 4, 20))
    other = _note("x", "pay the window cleaner", datetime(2025, 4, 22))
    similarity = {new.id: 0.66, old.id: 0.58, other.id: 0.02}
    for question in ("what ramipril dose was I on last winter?", "what was my old ramipril dose?"):
        found = answer(question, [new, old, other], "sam", NOW, similarity)
        assert found.cited[0] == old.id, question
        assert "5mg" in found.text


def test_an_earlier_best_note_answers_the_past_as_it_is() -> None:
    """The best note is already the earlier one (a later close note is an unrelated trip):
    it is not swapped for the note before the latest (a guard of ``_earlier_word``: the
    answer was this before it too)."""
    old = _note("o", "living in Bristol, Stokes Croft", datetime(2019, 3, 1))
    new = _note("n", "moved to Glasgow for the new job", datetime(2022, 5, 20))
    trip = _note("t", "weekend at the coast", datetime(2022, 5, 28))
    similarity = {old.id: 0.8, new.id: 0.45, trip.id: 0.5}
    found = answer("where did I live in Bristol before?", [old, new, trip], "sam", NOW, similarity)
    assert found.cited[0] == old.id


def test_a_later_note_answers_where_the_first_holds_the_question_in_part() -> None:
    """For "How much wine do I drink in a week?", "wine most nights" holds a part of its words,
    too little alone; the person's later note on it, close by recall, answers, quoted first
    (on the subject by a word it shares: a later note sharing none, stating no value and
    further off is no more on it than an errand, ``_on_subject``)."""
    old = _note("o", "wine most nights, a bottle every three days or so", datetime(2025, 1, 5))
    new = _note("n", "dry since the party, not touching wine at all", datetime(2025, 5, 2))
    other = _note("x", "book the boiler service", datetime(2025, 5, 4))
    similarity = {old.id: 0.6, new.id: 0.38, other.id: 0.03}
    found = answer("How much wine do I drink in a week?", [old, new, other], "sam", NOW, similarity)
    assert found.cited[:1] == [new.id]
    assert "not touching wine" in found.text


def test_a_note_that_replaced_one_answers_where_it_holds_the_question_in_part() -> None:
    engaged = _note("e", "Dana said yes!! engaged", datetime(2024, 2, 14))
    married = _note("m", "married Dana on the beach today", datetime(2025, 6, 7))
    engaged = replace(engaged, superseded_by=married.id)
    similarity = {engaged.id: 0.55, married.id: 0.4}
    found = answer("what is my status with Dana?", [engaged, married], "sam", NOW, similarity)
    assert found.cited[:1] == [married.id]


def test_a_later_note_stating_no_date_is_not_the_answer_to_when() -> None:
    """A note quoted for being the latest word states what is asked as well: a date for
    "when does…", a day for "what date is…"."""
    letter = _note("f", "gym contract renewal letter came", datetime(2025, 2, 1))
    renewed = _note("t", "renewed it", datetime(2025, 3, 1))
    similarity = {letter.id: 0.6, renewed.id: 0.4}
    found = answer("when does my gym contract end?", [letter, renewed], "sam", NOW, similarity)
    assert renewed.id not in found.cited
    vague = _note("v", "brother graduates next summer!", datetime(2025, 2, 1))
    suit = _note("s", "need a suit for the graduation", datetime(2025, 3, 1))
    similarity = {vague.id: 0.6, suit.id: 0.5}
    assert not answer("What date is my brother's graduation?", [vague, suit], "sam", NOW, similarity).answered


def test_a_later_note_does_not_answer_a_kind_of_value_it_cannot_state() -> None:
    """The relaxed gate of a later note (``LATER_COVERAGE``) does not open for a question
    whose unheld word is the kind of value asked ("brand"), nor for a name no note gives
    (a guard of that gate: nothing was found before it either)."""
    first = _note("f", "laptop battery dying fast", datetime(2025, 2, 1))
    then = _note("t", "laptop back from the repair shop", datetime(2025, 3, 1))
    similarity = {first.id: 0.6, then.id: 0.45}
    assert not answer("what brand is my laptop?", [first, then], "sam", NOW, similarity).answered
    coach = _note("f", "started swimming lessons with a coach", datetime(2025, 2, 1))
    better = _note("t", "coach says my breathing is better", datetime(2025, 3, 1))
    similarity = {coach.id: 0.6, better.id: 0.5}
    assert not answer("what's my swim coach's name?", [coach, better], "sam", NOW, similarity).answered


def test_a_question_for_a_day_is_not_answered_by_a_year_or_nothing_of_a_day() -> None:
    assert must_state("What date is the bake sale?") == "day"
    assert must_state("家长会是几号？") == "day"
    vague = _note("v", "bake sale at school sometime next year", datetime(2025, 8, 1))
    assert not answer("What date is the bake sale?", [vague], "sam", NOW).answered
    fixed = _note("f", "bake sale moved to thurs 18 sept", datetime(2025, 8, 20))
    assert answer("What date is the bake sale?", [vague, fixed], "sam", NOW).cited == [fixed.id]
    later = _note("l", "家长会下学期开", datetime(2025, 8, 1))
    assert not answer("家长会是几号？", [later], "sam", NOW).answered


def test_a_name_asked_is_not_answered_by_a_note_naming_only_what_the_question_does() -> None:
    says = _note("s", "Ollie's swim teacher says he is ready for level 2", datetime(2025, 6, 1))
    assert not answer("what's the name of Ollie's swim teacher?", [says], "sam", NOW).answered
    named = _note("n", "Ollie's swim teacher is Mrs Okafor", datetime(2025, 6, 2))
    assert answer("what's the name of Ollie's swim teacher?", [says, named], "sam", NOW).cited == [named.id]


def test_a_later_chinese_note_shares_a_word_with_the_best_one() -> None:
    """The embedder's cosine misleads for Chinese: the latest close note that shares no word
    with the best ("买了新拖鞋") is not the latest word on swimming."""
    old = _note("o", "每周日早上去游泳", datetime(2025, 1, 5))
    stop = _note("s", "游泳卡到期了，周日改去爬山", datetime(2025, 5, 2))
    other = _note("x", "买了新拖鞋", datetime(2025, 5, 9))
    similarity = {old.id: 0.8, stop.id: 0.6, other.id: 0.62}
    found = answer("我周日还去游泳吗？", [old, stop, other], "sam", NOW, similarity)
    assert found.cited[:1] == [stop.id]


def test_the_note_a_change_replaced_answers_what_held_before_it() -> None:
    """The best note is the change, read as one at write time (it superseded the old note):
    for "before …", the note it replaced answers, quoted first and told against the change;
    a question of the present still quotes the change first."""
    new = _note("n", "moving day! new place is on Valencia St in the Mission", datetime(2023, 6, 15))
    old = replace(
        _note("o", "Moved into 88 Linden St, Oakland", datetime(2020, 2, 1)),
        superseded_by=new.id,
        valid_to=new.created_at,
    )
    other = _note("x", "set up autopay for PG&E", datetime(2023, 6, 20))
    similarity = {new.id: 0.46, old.id: 0.34, other.id: 0.0}
    found = answer("Where was I living before I moved to the Mission?", [new, old, other], "sam", NOW, similarity)
    assert found.cited == [old.id, new.id]
    assert found.text.index("Linden") < found.text.index("Valencia")
    now = answer("Where do I live?", [new, old, other], "sam", NOW, similarity)
    assert now.cited[0] == new.id


def test_the_previous_one_in_chinese_asks_before_a_change() -> None:
    """ "上一个" is the previous one; "上一次" the latest time, and "上个月" a month."""
    assert asks_earlier("我上一个住的地方是哪个区？")
    assert asks_earlier("我上一任私教叫什么？")
    assert not asks_earlier("我上一次体检是哪天？")
    assert not asks_earlier("我上个月花了多少钱？")
    assert asks_earlier("我跳槽前是在哪家公司？")
    assert not asks_earlier("我睡前吃什么药？")
    new = _note("n", "搬到番禺了，房子大了一倍", datetime(2024, 12, 1))
    old = replace(_note("o", "住在天河区，上班很方便", datetime(2023, 5, 1)), superseded_by=new.id)
    found = answer("我上一个住的地方是哪个区？", [new, old], "sam", NOW, {new.id: 0.51, old.id: 0.7})
    assert found.cited[0] == old.id


def test_a_chinese_question_placing_itself_in_time_is_held_by_its_subject() -> None:
    """ "以前" and "来着" only place "我以前的私教叫什么来着？" in time: their characters are no
    words a note must hold, so the note naming the trainer holds the question."""
    old = _note("o", "私教是小刘，每周二四", datetime(2023, 3, 5))
    new = _note("n", "换了个教练，叫阿杰，更专业一点", datetime(2024, 2, 1))
    other = _note("x", "蛋白粉快喝完了", datetime(2024, 2, 3))
    similarity = {other.id: 0.52, old.id: 0.44, new.id: 0.44}
    found = answer("我以前的私教叫什么来着？", [other, old, new], "sam", NOW, similarity)
    assert found.cited[:1] == [old.id]


def test_a_change_answers_before_itself_only_when_the_question_names_no_time_and_no_other_anchor() -> None:
    """The note a change replaced is not what held "last year" (the year after the change),
    nor "before the wedding" when the wedding is not the change: the change's reading of
    "before" is for a question whose "before …" is the change itself."""
    new = _note("n", "ramipril went up to 10mg", datetime(2024, 3, 1))
    old = replace(_note("o", "started ramipril 5mg once a day", datetime(2023, 2, 1)), superseded_by=new.id)
    similarity = {new.id: 0.7, old.id: 0.6}
    found = answer(
        "what ramipril dose was I on last year?", [new, old], "sam", datetime(2025, 6, 1).timestamp(), similarity
    )
    assert found.cited[:1] == [new.id]
    eggs = _note("e", "switched to eggs on toast for breakfast", datetime(2024, 1, 10))
    porridge = replace(_note("p", "porridge every morning for breakfast", datetime(2023, 1, 5)), superseded_by=eggs.id)
    wedding = _note("w", "the wedding was perfect, danced all night", datetime(2024, 9, 7))
    similarity = {eggs.id: 0.6, porridge.id: 0.55, wedding.id: 0.3}
    found = answer(
        "what did I have for breakfast before the wedding?", [eggs, porridge, wedding], "sam", NOW, similarity
    )
    assert found.cited[:1] != [porridge.id]


def test_a_plan_before_a_change_and_the_last_weekend_are_no_questions_about_before() -> None:
    """ "搬家前要做什么？" plans what comes before a move; "上一个周末" is a weekend, not the previous one."""
    assert not asks_earlier("搬家前要做什么？")
    assert not asks_earlier("我退休前想去哪旅游？")
    assert not asks_earlier("我离职前还得办什么手续？")
    assert not asks_earlier("我上一个周末去哪了？")
    assert asks_earlier("我结婚前在哪上班？")


def test_a_before_naming_the_present_value_is_the_change() -> None:
    """ "before my current job" names no word of the change ("started at Home Depot"), but the
    present value it names is what the change made."""
    new = _note("n", "started at Home Depot as dept supervisor, put in notice at the old place", datetime(2024, 3, 4))
    old = replace(
        _note("o", "got shift lead at Target!", datetime(2023, 1, 15)), superseded_by=new.id, valid_to=new.created_at
    )
    other = _note("x", "bbq at Carl's", datetime(2023, 7, 4))
    similarity = {new.id: 0.44, old.id: 0.15, other.id: 0.16}
    found = answer("where was I working before my current job?", [new, old, other], "sam", NOW, similarity)
    assert found.cited[:1] == [old.id]
