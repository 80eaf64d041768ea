"""A note telling of someone else is no answer about the asker (issue 31): "dad still
smoking on the balcony" for "am I still a smoker?", "同事小李也搬家了" for "我现在住哪儿？";
it still answers a question naming that person, and a note where the asker appears too
("my sister and I signed up for the gym", "我和老公搬到了杭州") stays the asker's."""

from __future__ import annotations

from datetime import datetime

from memcli.memory import Memory
from memcli.recall.answers import answer
from memcli.text.whose import people_named, told_of

NOW = datetime(2025, 9, 1, 9).timestamp()


def _note(letter: str, text: str, day: datetime) -> Memory:
    return Memory(letter * 16, "sam", "note", text, day.timestamp(), f"{day:%Y-%m-%d}")


def _closeness(*memories: Memory) -> dict[str, float]:
    # recall's cosines: the later note as close as the earlier one (so recency may choose)
    return {m.id: 0.5 for m in memories}


def test_another_persons_habit_is_not_the_askers_latest_word() -> None:
    quit_ = _note("a", "3 months smoke free, bought myself headphones w the money saved", datetime(2025, 5, 15))
    dad = _note("b", "dad still smoking on the balcony, ugh", datetime(2025, 6, 1))
    found = answer("am I still smoking?", [dad, quit_], "sam", NOW, _closeness(dad, quit_))
    assert found.cited == [quit_.id]


def test_a_chinese_note_of_someone_else_is_not_the_askers_latest_word() -> None:
    before = _note("e", "每周游三次泳，办了年卡", datetime(2025, 3, 1))
    own = _note("a", "耳朵好了，又开始游了，现在一周去两次", datetime(2025, 7, 20))
    dad = _note("b", "老爸说他也想学游泳", datetime(2025, 8, 1))
    found = answer("我最近还去游泳吗？", [dad, own, before], "sam", NOW, _closeness(dad, own, before))
    assert dad.id not in found.cited and own.id in found.cited
    moved = _note("c", "终于搬完了！新家在回龙观", datetime(2025, 8, 10))
    colleague = _note("d", "同事小李也搬家了，搬去通州", datetime(2025, 8, 25))
    found = answer("我现在住哪儿？", [colleague, moved], "sam", NOW, _closeness(colleague, moved))
    assert found.cited == [moved.id]


def test_a_note_of_someone_else_answers_a_question_naming_them() -> None:
    sister = _note("a", "sister says her a1c is 5.4 show off", datetime(2025, 7, 1))
    assert answer("what did my sister say her a1c was?", [sister], "sam", NOW).cited == [sister.id]
    mum = _note("b", "我妈现在天天刷抖音哈哈", datetime(2025, 5, 15))
    assert answer("我妈现在还刷抖音吗？", [mum], "sam", NOW).cited == [mum.id]
    assert answer("我现在还刷抖音吗？", [mum], "sam", NOW).cited == []


def test_a_note_where_the_asker_appears_too_stays_the_askers() -> None:
    with_me = _note("a", "my sister and I signed up for the gym", datetime(2025, 7, 1))
    assert answer("did I sign up for the gym?", [with_me], "sam", NOW).cited == [with_me.id]
    without_me = _note("b", "my sister signed up for the gym", datetime(2025, 7, 1))
    assert answer("did I sign up for the gym?", [without_me], "sam", NOW).cited == []
    flat = _note("c", "mom drove me to my new flat in leeds", datetime(2025, 7, 2))
    assert answer("where is my new flat?", [flat], "sam", NOW).cited == [flat.id]
    hers = _note("d", "mom got a new flat in leeds", datetime(2025, 7, 2))
    assert answer("where is my new flat?", [hers], "sam", NOW).cited == []
    together = _note("e", "我和老公搬到了杭州", datetime(2025, 7, 3))
    assert answer("我搬到了哪里？", [together], "sam", NOW).cited == [together.id]
    his = _note("f", "老公搬到了杭州", datetime(2025, 7, 3))
    assert answer("我搬到了哪里？", [his], "sam", NOW).cited == []
    job = _note("g", "朋友介绍我去了新公司", datetime(2025, 7, 4))
    assert answer("我去了新公司吗？", [job], "sam", NOW).cited == [job.id]


def test_whose_reads_the_subject_at_a_sentences_head() -> None:
    assert told_of("dad still smoking on the balcony, ugh", "am I still a smoker?") == ("father", "")
    assert told_of("同事小李也搬家了，搬去通州") == ("colleague", "小李")
    assert told_of("邻居家孩子在学钢琴，一节课三百") == ("neighbour", "")
    # the asker in it, as company, as the one told of, or no one at its head
    for sentence in (
        "my sister and I signed up for the gym",
        "dad says I should quit",
        "my wife and I are vegan now",
        "bella (my dog) is on the new food",
        "dr lowered it to 500 2x/day",
        "开始吃素了，跟着妈妈一起",
        "我和老公搬到了杭州",
        "朋友介绍我去了新公司",
        "朋友介绍认识了陈屿 人挺靠谱",
    ):
        assert told_of(sentence) is None, sentence
    assert people_named("what did my sister say her a1c was?") == {"sister"}
    assert people_named("朵朵现在都上哪些兴趣班？") == frozenset()
    assert people_named("What are my children called?") == {"child", "son", "daughter"}


def test_a_note_of_someone_named_answers_a_question_naming_them_by_name() -> None:
    leo = _note("a", "My son Leo loves dinosaurs", datetime(2025, 7, 1))
    assert answer("What does Leo love?", [leo], "sam", NOW).cited == [leo.id]
    assert answer("What do I love?", [leo], "sam", NOW).cited == []


def test_news_someone_reported_is_news_of_its_own_subject() -> None:
    # "X says …" tells of X only when what X says is about X ("sister says her a1c is 5.4")
    for note, question in (
        ("Dad says Bella can lose the cone on friday", "when can Bella lose the cone?"),
        ("colleague says Monzo is cutting the bonus this year", "is Monzo cutting the bonus?"),
        ("coworker said the standup moved to 9:30", "what time is standup?"),
        ("同事说公司年会定在1月18号", "公司年会是哪天？"),
        ("老公说旺财的疫苗下周三到期", "旺财的疫苗什么时候到期？"),
    ):
        told = _note("a", note, datetime(2025, 7, 1))
        assert answer(question, [told], "sam", NOW).cited == [told.id], note
    for note, question in (
        ("老爸说他也想学游泳", "我还去游泳吗？"),
        ("sister says she quit smoking", "did I quit smoking?"),
        ("mum told me she moved to leeds", "where did I move?"),
    ):
        told = _note("b", note, datetime(2025, 7, 1))
        assert answer(question, [told], "sam", NOW).cited == [], note


def test_only_a_question_about_the_asker_leaves_out_news_of_others() -> None:
    sister = _note("a", "sister moved to leeds last week", datetime(2025, 7, 1))
    assert answer("who moved to leeds?", [sister], "sam", NOW).cited == [sister.id]
    assert answer("where did I move?", [sister], "sam", NOW).cited == []


def test_the_writers_own_matter_told_through_someone_stays_the_writers() -> None:
    # the writer implied ("our family", "the kids" at home), acted on or helped ("proposed",
    # "drove down to help w the move"), or a compound that is no person ("family doctor", "朋友圈")
    for note, question in (
        ("our family moved to leeds in june", "where do I live?"),
        ("boyfriend proposed last night, said yes!!", "am I engaged?"),
        ("sister drove down to help w the move to york", "where did I move to?"),
        ("The kids are loving the new house in York", "where do I live?"),
        ("Family doctor upped the metformin to 1000mg", "what's my metformin dose?"),
        ("朋友圈刷到一家新开的火锅店，在国贸", "那家新开的火锅店在哪？"),
    ):
        told = _note("a", note, datetime(2025, 7, 1))
        assert answer(question, [told], "sam", NOW).cited == [told.id], note
    for note, question in (
        ("dad still smoking on the balcony, ugh", "am I still smoking?"),
        ("sister moved to york last week", "where did I move to?"),
        ("my neighbour's kids are loving the new house in York", "where do I live?"),
    ):
        told = _note("b", note, datetime(2025, 7, 1))
        assert answer(question, [told], "sam", NOW).cited == [], note


def test_a_lowercase_name_the_question_names_is_a_name() -> None:
    sam = _note("a", "coworker sam moved to austin", datetime(2025, 7, 1))
    assert answer("where did sam move?", [sam], "sam", NOW).cited == [sam.id]
    assert answer("did sam move to austin before me?", [sam], "sam", NOW).cited == [sam.id]
    assert answer("did I move to austin?", [sam], "sam", NOW).cited == []
    # a word after the one for someone is no name unless it is one
    dad = _note("b", "dad still smoking on the balcony, ugh", datetime(2025, 6, 1))
    assert answer("am I still smoking?", [dad], "sam", NOW).cited == []
    assert told_of("coworker sam moved to austin", "did sam move to austin before me?") == ("colleague", "sam")
    assert told_of("coworker sam moved to austin") == ("colleague", "")
    assert told_of("coworker moved to austin", "where did I move?") == ("colleague", "")


def test_a_capitalised_name_is_a_name_whatever_word_it_also_is() -> None:
    # "Will", "Fred", "Emily": a name, though "will" is a function word and the others end as
    # an inflected verb or adverb would
    for name in ("Will", "Fred", "Emily"):
        moved = _note("a", f"coworker {name} moved to austin", datetime(2025, 7, 1))
        assert answer(f"did {name} move to austin before me?", [moved], "sam", NOW).cited == [moved.id]


def test_a_place_opening_on_a_kin_character_is_no_person() -> None:
    # 哥伦比亚 opens on 哥 ("brother"): one character names kin only as a word of its own
    offer = _note("a", "哥伦比亚大学的录取通知到了！", datetime(2025, 4, 1))
    assert told_of(offer.text) is None
    assert answer("我被哪所大学录取了？", [offer], "sam", NOW).cited == [offer.id]
    assert told_of("妈祖庙逛了一圈") is None
    for mine in ("我哥换了新工作，去了腾讯", "妈说想要条羊绒围巾"):
        assert told_of(mine) is not None
