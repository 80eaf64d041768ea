"""The review of round 44's rules: no false supersession from a note that changes nothing
(someone else's proposal, a trip said as "we're in X now", a name in passing), and a deleted
or edited newer note reopens every older one it superseded."""

from __future__ import annotations

from typing import Any

import pytest
from cli_checks import ok, remember_at, show_json
from typer.testing import CliRunner

from memcli.cli import app
from memcli.text.updates import statements, updates


def _supersedes(older: str, newer: str) -> bool:
    """Whether any statement of ``newer`` replaces any of ``older`` (as remember decides)."""
    return any(updates(n, o) for n in statements(newer) for o in statements(older))


def _superseded(runner: CliRunner, monkeypatch: pytest.MonkeyPatch, notes: list[str]) -> list[bool]:
    """Whether each of ``notes``, remembered a month apart in order, ends superseded."""
    ids = [remember_at(runner, monkeypatch, f"2024-{i + 1:02d}-01T09:00:00", text) for i, text in enumerate(notes)]
    return [show_json(runner, memory_id)["superseded_by"] is not None for memory_id in ids]


@pytest.mark.parametrize(
    ("older", "newer"),
    [
        ("I've been dating Alex for a year", "he proposed a new plan at work"),
        ("I've been dating Alex for a year", "Jake proposed to Emma last night! she said yes 💍"),
        ("I've been dating Alex for a year", "My best friend Sara got engaged! he proposed at the beach"),
        ("I've been dating Alex for a year", "Went to Kate's engagement party, he proposed in Paris"),
        ("I've been dating Alex for a year", "he proposed a new plan at work, and she said yes, so we signed it"),
        ("I'm married to Sam", "he proposed a new plan at work"),
        ("I'm married to Sam", "she said yes to the dress 💍 so happy for Anna"),
        ("I'm married to Sam", "The ring came back from repair. she said yes to dinner"),
        ("dating Priya", "my brother got engaged, she said yes 💍"),
        ("dating Priya", "Tom finally proposed to his girlfriend, she said yes!"),
        ("I live in Portland", "Landed. We're in Denver now."),
        ("I live in Portland", "we're in Berlin now, kids loving the zoo"),
        ("I live in Portland", "we're in Paris now"),
        ("I live in Portland", "We're in Seattle now, the conference starts tomorrow"),
        ("我住在北京", "我们现在在上海了，出差三天"),
        ("我住在北京", "我们现在在三亚了，度假一周"),
    ],
)
def test_a_note_that_changes_nothing_supersedes_nothing(older: str, newer: str) -> None:
    assert not _supersedes(older, newer)


@pytest.mark.parametrize(
    ("older", "newer"),
    [
        ("I've been dating Alex", "Alex and I got engaged!"),
        ("I've been dating Priya", "I got engaged to Priya"),
        ("dating Sam", "we got engaged!!"),
        ("I live in Austin", "I'm in Denver for good"),
        ("I live in Portland", "we moved to Seattle last week"),
        ("我住在北京", "我搬到上海了"),
    ],
)
def test_a_change_of_ones_own_is_still_read(older: str, newer: str) -> None:
    assert _supersedes(older, newer)


@pytest.mark.parametrize(
    ("old", "mention", "change"),
    [
        ("I've been dating Alex", "worked with Alex on the slides", "broke up with Alex"),
        ("I've been dating Alex", "Alex from work and I are presenting together", "broke up with Alex"),
        ("我和小李在一起三年了", "小李给我发了报告", "我和小李分手了"),
        ("我和小李在一起三年了", "我们组和小李一起开会", "我和小李分手了"),
        ("I live in Paris", "watched Emily in Paris tonight", "we moved to Lyon last week"),
        ("我住在北京", "今天在北京路吃火锅", "我搬到上海了"),
        ("我住在北京", "我在北京烤鸭店吃了饭", "我搬到上海了"),
        ("I work at Deloitte", "Deloitte is our biggest client this quarter", "started at Accenture today"),
        ("I work at Deloitte", "meeting with deloitte folks tomorrow, client review at work", "started at KPMG today"),
        ("I work at Amazon", "ordered a new desk on Amazon for work", "started at Google today"),
        ("我在腾讯工作", "腾讯会议又卡了", "我入职字节了"),
        ("I'm a barista at Starbucks", "grabbed coffee at Starbucks", "started at Blue Bottle today"),
    ],
)
def test_a_name_in_passing_is_not_superseded_by_the_change(
    runner: CliRunner, fake_embedder: Any, monkeypatch: pytest.MonkeyPatch, old: str, mention: str, change: str
) -> None:
    assert _superseded(runner, monkeypatch, [old, mention, change])[1:] == [False, False]


@pytest.mark.parametrize("how", ["delete", "edit"])
def test_the_newer_note_deleted_or_edited_reopens_every_older_one(
    runner: CliRunner, fake_embedder: Any, monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    # two older notes superseded by one newer: the second ADD row of the newer is the same
    # text as the first and is not recorded; the older ones' UPDATE rows name it
    second = "We live in Portland with the cat."
    first_id = remember_at(runner, monkeypatch, "2024-01-01T09:00:00", "I live in Portland.")
    second_id = remember_at(runner, monkeypatch, "2024-02-01T09:00:00", second)
    newer = remember_at(runner, monkeypatch, "2024-03-01T09:00:00", "We moved to Seattle last week.")
    assert [show_json(runner, i)["superseded_by"] for i in (first_id, second_id)] == [newer, newer]
    if how == "delete":
        ok(runner.invoke(app, ["delete", newer, "--yes"]))
    else:
        ok(runner.invoke(app, ["edit", newer, "--text", "We visited Seattle last week."]))
    assert [show_json(runner, i)["superseded_by"] for i in (first_id, second_id)] == [None, None]
    assert [show_json(runner, i)["valid_to"] for i in (first_id, second_id)] == [None, None]


@pytest.mark.parametrize(
    ("older", "newer"),
    [
        # someone else's wedding
        ("I've been dating Alex for a year", "Tom and Priya got married today"),
        ("I've been dating Alex for a year", "my best friend is getting married to Rob in June"),
        ("I've been dating Alex for a year", "my sister got married to Rob last weekend"),
        ("I've been dating Alex for a year", "went to Priya's wedding, she married Tom"),
        # "engaged" as busy
        ("I've been dating Alex for a year", "I'm engaged in a lawsuit with the landlord"),
        ("I've been dating Alex for a year", "got engaged in a heated argument on twitter"),
        ("I've been dating Alex for a year", "we were engaged in a long debate about pizza"),
        ("I've been dating Alex for a year", "I'm engaged to be the best man at Rob's wedding"),
        # others' moves, things moved
        ("I live in Portland", "my parents moved to Phoenix"),
        ("I live in Portland", "our neighbours are moving to Leeds"),
        ("I live in Portland", "my best friend just moved to Chicago"),
        ("I live in Portland", "we moved the meeting to Seattle"),
        ("I live in Portland", "moved my car to the garage in Seattle"),
        ("I live in Portland", "they moved our appointment to Tuesday in Boston"),
        # two others as a couple
        ("我和小李在一起三年了", "阿杰和小美在一起了"),
        ("我和小李在一起三年了", "小张和小美在一起了"),
        ("我和小李在一起三年了", "阿杰和小美结婚了"),
        ("我和小李在一起三年了", "我朋友阿杰跟小美结婚了"),
        # a workplace's move, a hotel
        ("我住在北京", "我们公司搬到上海了"),
        ("我住在北京", "我们单位下个月搬到深圳"),
        ("我住在北京", "这周住在上海的酒店"),
        ("我住在北京", "出差住在杭州的宾馆"),
    ],
)
def test_someone_elses_wedding_move_or_couple_supersedes_nothing(older: str, newer: str) -> None:
    assert not _supersedes(older, newer)


@pytest.mark.parametrize(
    ("older", "newer"),
    [
        ("I've been dating Alex for a year", "I married Alex today"),
        ("I've been dating Alex for a year", "Alex and I got married!"),
        ("I've been dating Alex for a year", "Got married today!"),
        ("I've been dating Alex for a year", "we got engaged in June"),
        ("I've been dating Alex for a year", "I'm engaged to be married to Sam"),
        ("I live in Portland", "we moved to Phoenix"),
        ("I live in Portland", "We're now in Denver for good."),
        ("我和小李在一起三年了", "我和小美在一起了"),
        ("我和小李在一起三年了", "我和小美结婚了"),
        ("我住在北京", "我搬到上海了"),
        ("我住在北京", "我们搬到深圳了"),
    ],
)
def test_ones_own_wedding_move_or_couple_still_supersedes(older: str, newer: str) -> None:
    assert _supersedes(older, newer)


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("I've been dating Alex for a year", "Tom and Priya got married today"),
        ("I've been dating Alex for a year", "I'm engaged in a lawsuit with the landlord"),
        ("I live in Portland", "my parents moved to Phoenix"),
        ("I live in Portland", "we moved the meeting to Seattle"),
        ("我和小李在一起三年了", "阿杰和小美在一起了"),
        ("我住在北京", "我们公司搬到上海了"),
        ("我住在北京", "这周住在上海的酒店"),
    ],
)
def test_remember_leaves_the_current_memory_current(
    runner: CliRunner, fake_embedder: Any, monkeypatch: pytest.MonkeyPatch, old: str, new: str
) -> None:
    assert _superseded(runner, monkeypatch, [old, new]) == [False, False]


def test_deleting_the_newer_note_after_an_import_without_history_reopens_the_older(
    runner: CliRunner, fake_embedder: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Any
) -> None:
    first_id = remember_at(runner, monkeypatch, "2024-01-01T09:00:00", "I live in Portland.")
    second_id = remember_at(runner, monkeypatch, "2024-01-15T09:00:00", "We live in Portland with the cat.")
    newer = remember_at(runner, monkeypatch, "2024-02-01T09:00:00", "We moved to Seattle last week.")
    exported = tmp_path / "export.jsonl"
    ok(runner.invoke(app, ["export", "-o", str(exported)]))
    monkeypatch.setenv("MEMCLI_HOME", str(tmp_path / "imported"))
    ok(runner.invoke(app, ["import", str(exported), "--format", "memcli"]))
    assert [show_json(runner, i)["superseded_by"] for i in (first_id, second_id)] == [newer, newer]
    ok(runner.invoke(app, ["delete", newer, "--yes"]))
    assert [show_json(runner, i)["superseded_by"] for i in (first_id, second_id)] == [None, None]
    assert [show_json(runner, i)["valid_to"] for i in (first_id, second_id)] == [None, None]
