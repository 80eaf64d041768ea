"""Round 45 of the rules path of supersession (issue 31): moves and jobs said in other words
are read ("we're in Seattle now. boxes everywhere", "终于在苏州安顿下来了", "今晚开始睡五道口",
"first week driving for UPS", "下个月起正式做区域主管"), while a trip, a hotel, a sofa or an
intention stays no change; someone else's diet is not the writer's, and the place of an
engagement is not the partner."""

from __future__ import annotations

import pytest

from memcli.text.updates import statements, updates


def _supersedes(older: str, newer: str) -> bool:
    """Whether any statement of ``newer`` replaces any of ``older`` (as remember decides)."""
    return any(updates(n, o) for n in statements(newer) for o in statements(older))


@pytest.mark.parametrize(
    ("older", "move", "no_moves"),
    [
        (
            "I live in Portland",
            "we're in Seattle now. boxes everywhere, cat hiding under the bed",
            [
                "we're in Seattle now",
                "we're in Rome now, the hotel is lovely",
                "we're in Lisbon now, unpacked at the airbnb",
                "I'm in Denver now, unpacking at my sister's",
            ],
        ),
        (
            "I live in Leeds",
            "We're now in York! boxes everywhere",
            ["We're now in York for the conference, boxes of swag everywhere", "I'm in London now, moved the meeting"],
        ),
        (
            "杭州这边房东又要涨租，烦死",
            "终于在苏州安顿下来了，新小区离地铁就五分钟",
            ["这周在苏州出差，住在酒店", "想在苏州安顿下来"],
        ),
        (
            "我住在望京",
            "钥匙拿到了！今晚开始睡五道口🎉 那边押金还没退",
            ["今晚开始睡沙发了，搬家前最后一周", "今天开始住酒店", "今天开始住公司了，项目太赶"],
        ),
        (
            "我住在成都",
            "我们现在在苏州了，箱子还没拆完",
            ["我们现在在苏州了", "我们现在在上海了，出差三天，箱子都没拆", "我现在在星巴克了，刚搬完家"],
        ),
    ],
)
def test_a_move_said_in_other_words_is_read_and_a_stay_is_not(older: str, move: str, no_moves: list[str]) -> None:
    assert [_supersedes(older, newer) for newer in [move, *no_moves]] == [True] + [False] * len(no_moves)


@pytest.mark.parametrize(
    ("older", "job", "no_jobs"),
    [
        (
            "I work at Amazon",
            "first week driving for UPS, the brown uniform is growing on me",
            ["first week driving my kids to school for the new term", "UPS called back, interview next week"],
        ),
        (
            "我在公司做销售",
            "任命邮件发了，下个月起正式做区域主管，不用自己跑单了",
            ["老板找我聊，说想提我当华东区域主管", "下个月起正式开始装修"],
        ),
    ],
)
def test_a_new_job_said_in_other_words_is_read_and_a_wish_is_not(older: str, job: str, no_jobs: list[str]) -> None:
    assert [_supersedes(older, newer) for newer in [job, *no_jobs]] == [True] + [False] * len(no_jobs)


@pytest.mark.parametrize(
    "newer",
    [
        "My sister is vegan now",
        "Tom has gone vegan, so dinners are tricky",
        "my wife went keto last month",
        "Zoe is pescatarian now",
    ],
)
def test_someone_elses_diet_is_not_the_writers(newer: str) -> None:
    assert not _supersedes("I'm vegetarian", newer)
    assert _supersedes("I'm vegetarian", "I went vegan last month")


def _partners(text: str) -> list[tuple[str, str]]:
    return [(s.value, s.state) for s in statements(text) if s.key == "partner"]


@pytest.mark.parametrize("text", ["We got engaged in Paris!", "we got engaged in Paris last night"])
def test_the_place_of_an_engagement_is_not_the_partner(text: str) -> None:
    assert _partners(text) == [("", "engaged")]
    assert _partners("Alex and I got engaged in Paris") == [("alex", "engaged")]
