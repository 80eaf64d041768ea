"""Whose a sentence is (``memcli.text.whose.told_of``, issue 31), and that supersession reads
it the same way: a note of someone else never replaces the writer's own value, whatever
words open it ("mum's been vegan for years", "last night my sister got engaged!!", "kayla
got hired at st mary's ER"), while a note where the writer appears too stays the writer's."""

from __future__ import annotations

import pytest

from memcli.text.updates import statements, updates
from memcli.text.whose import SOMEONE, people_named, told_of


def _supersedes(older: str, newer: str) -> bool:
    """Whether any statement of ``newer`` replaces any of ``older`` (as remember decides)."""
    return any(updates(n, o) for n in statements(newer) for o in statements(older))


@pytest.mark.parametrize(
    ("sentence", "who"),
    [
        ("mum's been vegan for years", "mother"),
        ("dad's still smoking", "father"),
        ("brother-in-law moved to leeds", "in-law"),
        ("last night my sister got engaged!!", "sister"),
        ("yesterday my boss quit", "boss"),
        ("my manager quit today", "boss"),
        ("上周老公升职了", "husband"),
        ("宝宝今天打了疫苗", "child"),
        ("The kids both have strep", "child"),
        ("parents still have netflix, i can use theirs lol", "parents"),
        ("sister visiting her in-laws in leeds", "sister"),
        ("dad drove to leeds for the match", "father"),
    ],
)
def test_someone_else_at_the_head_is_whom_it_tells_of(sentence: str, who: str) -> None:
    subject = told_of(sentence)
    assert subject is not None and subject.who == who, sentence


def test_someone_named_by_name_before_news_only_a_person_has() -> None:
    assert told_of("kayla got hired at st mary's ER, my old unit lol") == (SOMEONE, "kayla")
    assert told_of("update: Jen is pregnant!!") == (SOMEONE, "Jen")
    assert SOMEONE in people_named("did anyone get hired recently?")
    # a word at the head that is no name, or news that is no person's own
    for sentence in (
        "finally quit smoking",
        "lol quit smoking",
        "officially quit",
        "office moved to austin",
        "class started at 9",
    ):
        assert told_of(sentence) is None, sentence


def test_the_writer_beside_a_name_is_not_in_it_but_in_its_own_matter_it_is() -> None:
    # the writer only in a remark beside the name: the sentence is still theirs
    assert told_of("kayla got hired at st mary's ER, my old unit lol") == (SOMEONE, "kayla")
    # the writer in the sentence's own matter, as company, acted for, or at home: the writer's
    for sentence in (
        "my sister and I signed up for the gym",
        "mom drove me to my new flat in leeds",
        "我和老公搬到了杭州",
        "朋友介绍我去了新公司",
        "kayla (my manager) approved my transfer to the austin office",
        "decided: going vegan from monday",
        "bella (my dog) is on the new food",
        "The kids are loving the new house in York",
        "manager at tesco now!",
        "boss approved the transfer to austin",
        "领导批了调岗，下个月去深圳",
        "跟星河的领导提了离职",
        "sister drove down to help w the move to york",
        "dad's car broke down",
        "mother's day brunch at The Greenhouse",
    ):
        assert told_of(sentence) is None, sentence


def test_a_note_of_someone_else_replaces_nothing_of_the_writers() -> None:
    for older, newer in (
        ("I'm vegetarian", "mum's been vegan for years"),
        ("I live in Leeds", "brother-in-law moved to York"),
        ("I'm vegetarian", "husband still doing keto for now"),
        ("I work at Stripe as an engineer", "last night my sister got the job at Monzo"),
        ("I work at Stripe as an engineer", "yesterday my boss quit"),
        ("I work at Stripe as an engineer", "boss gave notice today"),
        ("我住在北京", "上周老公搬到了杭州"),
    ):
        assert not _supersedes(older, newer), newer
    # the partner's name is the writer's partner still
    assert [(s.key, s.value) for s in statements("My boyfriend is called Tom.")] == [("partner", "tom")]


def test_a_note_where_the_writer_appears_too_still_replaces() -> None:
    for older, newer in (
        ("我住在北京", "我和老公搬到了杭州"),
        ("I live in Leeds", "mom drove me to my new flat in York"),
        ("I'm vegetarian", "my wife and I are vegan now"),
    ):
        assert _supersedes(older, newer), newer
