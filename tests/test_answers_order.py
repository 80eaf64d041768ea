"""The answer that follows a life as it changes quotes the right, current value first (issue
31): a later note leads only when it tells what is asked, not as an aside that recall finds
close or that names something new after a note stating the value ("tofu from whole foods"
after "vegetarian now"), nor by a time word it shares ("周末" and "这周"); the note an answer says was
replaced is the one that held the replaced value, not the one that ended it."""

from __future__ import annotations

from datetime import datetime

from memcli.memory import Memory
from memcli.recall.answers import answer

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


def test_a_password_written_without_a_digit_or_changed_is_answered_by_its_latest_note() -> None:
    first = _note("a", "wifi password is maple77", datetime(2025, 1, 1))
    changed = _note("b", "changed wifi pw to bluefish", datetime(2025, 4, 1))
    router = _note("c", "router keeps dropping again", datetime(2025, 5, 1))
    similarity = {first.id: 0.5, changed.id: 0.45, router.id: 0.3}
    found = answer("what is the wifi pw now?", [first, changed, router], "sam", NOW, similarity)
    assert "bluefish" in found.text
    coded = _note("d", "I mostly code in Rust these days", datetime(2025, 2, 1))
    assert "Rust" in answer("what language do I code in?", [coded], "sam", NOW, {coded.id: 0.5}).text


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
    held = _note("a", "在阿里做产品经理，又加班到十点，心累", datetime(2024, 6, 10), superseded_by="c")
    offer = _note("b", "美团hr打电话了，说终面过了", datetime(2024, 7, 25))
    ended = _note("c", "离职手续办完了，工牌交了", datetime(2024, 8, 20), superseded_by="d")
    new = _note("d", "今天去美团报到，园区好大", datetime(2024, 8, 30))
    notes = [new, offer, ended, held]
    similarity = {new.id: 0.45, offer.id: 0.35, ended.id: 0.3, held.id: 0.3}
    found = answer("我现在在哪家公司上班？", notes, "sam", NOW, similarity)
    assert found.cited[:1] == [new.id]
    assert "之前：“在阿里" in found.text


def test_a_later_note_recall_finds_closer_still_names_the_person_asked_after_a_stated_one() -> None:
    dated = _note("a", "second date with Tomas, bowling", datetime(2024, 3, 2))
    ended = _note("b", "Tomas and I called it off. fine really", datetime(2024, 8, 30))
    matched = _note("c", "bumble match w/ Priya, drinks fri", datetime(2025, 1, 10))
    met = _note("d", "Priya met my sister. she approves", datetime(2025, 5, 4))
    similarity = {met.id: 0.25, dated.id: 0.19, ended.id: 0.17, matched.id: 0.15}
    found = answer("who am I seeing these days?", [met, dated, ended, matched], "sam", NOW, similarity)
    assert found.cited[:1] == [met.id]


def test_a_note_of_another_subject_is_never_named_as_the_value_replaced() -> None:
    dentist = _note("a", "dentist cleaning done, no cavities", datetime(2025, 2, 20))
    ended = _note("b", "last day at work today, handed in badge", datetime(2025, 3, 1), superseded_by="c")
    new = _note("c", "started at Stripe on payments", datetime(2025, 4, 1))
    similarity = {new.id: 0.5, dentist.id: 0.3, ended.id: 0.35}
    found = answer("where do I work now?", [new, ended, dentist], "sam", NOW, similarity)
    assert found.cited[:1] == [new.id]
    assert "dentist" not in found.text


def test_a_chinese_later_note_of_the_change_in_its_own_words_still_leads() -> None:
    veg = _note("a", "开始吃素，两周了", datetime(2025, 1, 5))
    changed = _note("b", "医生说缺铁，改成只吃鸡肉和鱼，不吃红肉", datetime(2025, 3, 20))
    similarity = {veg.id: 0.5, changed.id: 0.45}
    found = answer("我现在的饮食是怎样的？", [veg, changed], "sam", NOW, similarity)
    assert found.cited[:1] == [changed.id]
