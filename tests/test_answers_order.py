"""The answer that follows a life as it changes quotes the right, current value first (issue
31): a later note leads only when it tells what is asked, not as an aside that recall finds
close or that names something new after a note stating the value ("tofu from whole foods"
after "vegetarian now"), nor by a time word it shares ("周末" and "这周"); a password no note
writes out is not answered by the note saying where it is; the note an answer says was
replaced is the one that held the replaced value, not the one that ended it."""

from __future__ import annotations

from datetime import datetime

from memcli.memory import Memory
from memcli.recall.answers import NOT_FOUND, NOT_FOUND_ZH, answer

NOW = datetime(2025, 9, 1, 9).timestamp()


def _note(letter: str, text: str, day: datetime, superseded_by: str = "") -> Memory:
    memory = Memory(letter * 16, "sam", "note", text, day.timestamp(), f"{day:%Y-%m-%d}")
    if superseded_by:
        memory.superseded_by = superseded_by * 16
    return memory


def test_an_aside_after_a_note_stating_the_value_is_not_the_latest_word() -> None:
    old = _note("a", "trying paleo this month, lots of steak", datetime(2025, 1, 5))
    stated = _note("b", "cholesterol is high, doc wants me vegetarian now", datetime(2025, 4, 2))
    aside = _note("c", "tofu from whole foods, 3 blocks a week", datetime(2025, 4, 9))
    named = _note("d", "lentil soup recipe from Marta = amazing", datetime(2025, 4, 12))
    # recall finds the asides closer than the note that says it
    similarity = {old.id: 0.3, stated.id: 0.22, aside.id: 0.36, named.id: 0.36}
    found = answer("what kind of diet am I on these days?", [stated, aside, named, old], "sam", NOW, similarity)
    assert found.cited[:1] == [stated.id]
    assert "vegetarian" in found.text


def test_a_chinese_later_note_sharing_only_a_time_is_not_the_latest_word() -> None:
    drank = _note("a", "这周又喝了三罐可乐", datetime(2025, 5, 3))
    quit = _note("b", "戒了一个月了，居然没那么想喝", datetime(2025, 5, 20))
    errand = _note("c", "周末去商场买了台灯", datetime(2025, 6, 22))
    similarity = {drank.id: 0.37, quit.id: 0.52, errand.id: 0.55}
    found = answer("我现在还喝可乐吗", [errand, quit, drank], "sam", NOW, similarity)
    assert found.cited[:1] == [quit.id]


def test_a_note_saying_where_a_password_is_does_not_answer() -> None:
    router = _note("a", "new router from the cable company installed", datetime(2025, 3, 1))
    where = _note("b", "password sticker is under the modem", datetime(2025, 3, 2))
    similarity = {router.id: 0.4, where.id: 0.5}
    assert answer("what's the wifi password?", [where, router], "sam", NOW, similarity).text == NOT_FOUND
    zh_where = _note("c", "wifi密码贴在路由器背面了", datetime(2025, 3, 2))
    zh = answer("家里wifi密码是啥？", [zh_where, router], "sam", NOW, {router.id: 0.3, zh_where.id: 0.5})
    assert zh.text == NOT_FOUND_ZH
    # a password written out, or a code labelled, still answers
    written = _note("d", "new wifi password is maple77", datetime(2025, 3, 2))
    assert answer("what's the wifi password?", [written], "sam", NOW, {written.id: 0.5}).cited == [written.id]
    labelled = _note("e", "gala dress code: black tie", datetime(2025, 3, 2))
    found = answer("what's the dress code for the gala?", [labelled], "sam", NOW, {labelled.id: 0.5})
    assert found.cited == [labelled.id]


def test_the_note_replaced_is_the_one_that_held_the_value_not_its_end() -> None:
    held = _note("a", "been at Acme as an analyst for 3 yrs", datetime(2024, 3, 1))
    offer = _note("b", "Globex recruiter called, offer coming", datetime(2024, 6, 1))
    ended = _note("c", "quit my job today, so relieved", datetime(2024, 7, 1), superseded_by="d")
    new = _note("d", "first day at Globex!", datetime(2024, 7, 15))
    notes = [new, offer, ended, held]
    similarity = {new.id: 0.5, offer.id: 0.35, ended.id: 0.3, held.id: 0.4}
    found = answer("where do I work now?", notes, "sam", NOW, similarity)
    assert found.cited[:1] == [new.id]
    assert 'before: "been at Acme' in found.text


def test_the_chinese_note_replaced_is_the_one_that_held_the_value() -> None:
    held = _note("a", "阿里这边又加班到十点，心累", datetime(2024, 6, 10))
    offer = _note("b", "美团hr打电话了，说终面过了", datetime(2024, 7, 25))
    ended = _note("c", "离职手续办完了，工牌交了", datetime(2024, 8, 20), superseded_by="d")
    new = _note("d", "今天去美团报到，园区好大", datetime(2024, 8, 30))
    notes = [new, offer, ended, held]
    similarity = {new.id: 0.45, offer.id: 0.35, ended.id: 0.3, held.id: 0.3}
    found = answer("我现在在哪家公司上班？", notes, "sam", NOW, similarity)
    assert found.cited[:1] == [new.id]
    assert "之前：“阿里这边" in found.text
