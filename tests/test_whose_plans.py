"""A plan, a wish or a maybe is no state (issue 31): "thinking about going vegan" is no
diet, "打算下个月搬去杭州" no home, so neither replaces the value the writer holds; a change
said as done or as announced ("went vegan last month", "下个月搬去杭州") still is one."""

from __future__ import annotations

import pytest

from memcli.text.updates import statements, updates


def _supersedes(older: str, newer: str) -> bool:
    """Whether any statement of ``newer`` replaces any of ``older`` (as remember decides)."""
    return any(updates(n, o) for n in statements(newer) for o in statements(older))


@pytest.mark.parametrize(
    ("older", "newer"),
    [
        ("I'm vegetarian", "thinking about going vegan"),
        ("I'm vegetarian", "might go vegan in the new year"),
        ("I'm vegetarian", "would love to go vegan one day"),
        ("I live in Leeds", "a flat in Denver someday"),
        ("I live in Leeds", "thinking about moving to Denver"),
        ("I live in Leeds", "if the job comes through, moving to Denver"),
        ("我住在北京", "打算下个月搬去杭州"),
        ("我住在北京", "我想搬去杭州"),
        ("我住在北京", "还在考虑要不要搬到杭州"),
        ("我住在北京", "如果面试过了，就搬去深圳"),
        ("办了乐刻的月卡", "我在考虑办威尔仕的年卡"),
    ],
)
def test_a_plan_or_a_wish_replaces_nothing(older: str, newer: str) -> None:
    assert not _supersedes(older, newer)


def test_a_change_said_as_done_or_announced_still_replaces_a_plan_beside_it_does_not() -> None:
    # the plan beside the change is set aside, the change is read
    assert not _supersedes("I'm vegetarian", "thinking about going vegan, went to the steakhouse")
    said = {s.key: s.value for s in statements("might get a dog, anyway I moved to Denver last week")}
    assert said.get("residence") == "denver"
    for older, newer in (
        ("I'm vegetarian", "went vegan last month"),
        ("I'm vegetarian", "decided: going vegan from monday"),
        ("I'm vegetarian", "thought about it for ages, I'm vegan now"),
        ("I live in Leeds", "I moved to Denver because I wanted to be near my sister"),
        ("I live in Leeds", "moving to Denver next week"),
        ("我住在北京", "下个月搬去杭州"),
        ("我住在北京", "想了很久，我搬到了杭州"),
    ):
        assert _supersedes(older, newer), newer
    assert not statements("planning to quit my job at Google")
