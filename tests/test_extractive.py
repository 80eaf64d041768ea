"""Extractive consolidation (``memcli.text.extractive``) on hand-made days, with the fake
bag-of-words embedder: the central sentence is chosen, repeats are not, speakers are
named, the order is the order said, a running memory keeps at most its limit."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest
from conftest import FakeEmbedder

from memcli.text.extractive import (
    Sentence,
    centrality,
    fold,
    is_request_or_question,
    select,
    sentences_of,
    split_sentences,
    summarize,
)

EMBED = FakeEmbedder().embed


@dataclass
class Turn:
    id: str
    speaker: str
    text: str
    created_at: float


def day(*lines: tuple[str, str]) -> list[Turn]:
    return [Turn(f"t{i}", speaker, text, 1000.0 + i) for i, (speaker, text) in enumerate(lines)]


PAINTING_DAY = day(
    ("Mel", "I finished the lake painting at the pottery class today."),
    ("Ana", "The lake painting from your class sounds lovely."),
    ("Mel", "The class teacher liked the lake painting a lot."),
    ("Ana", "My cat knocked over a glass of water yesterday."),
    ("Mel", "Wow!"),
    ("Ana", "I want to take the painting class at the lake too."),
)


def test_the_most_central_sentence_is_the_one_the_others_echo() -> None:
    [chosen] = summarize(PAINTING_DAY, EMBED, limit=1)
    assert "painting" in chosen.text and "cat" not in chosen.text


def test_a_summary_names_speakers_and_keeps_the_order_said() -> None:
    summary = summarize(PAINTING_DAY, EMBED, limit=3)
    assert len(summary) == 3
    assert [s.at for s in summary] == sorted(s.at for s in summary)
    assert all(s.line().startswith(f"{s.speaker}: ") for s in summary)
    assert all(s.text in {t.text for t in PAINTING_DAY} for s in summary)  # said, word for word


def test_fragments_without_content_are_never_chosen() -> None:
    assert all(s.text != "Wow!" for s in summarize(PAINTING_DAY, EMBED, limit=10))
    assert summarize(day(("Mel", "Wow!"), ("Ana", "Haha, cool.")), EMBED) == []


def test_a_repeated_sentence_is_chosen_once() -> None:
    repeated = day(
        ("Mel", "I adopted a puppy named Rex today."),
        ("Mel", "I adopted a puppy named Rex today."),
        ("Ana", "Rex the puppy sounds adorable, congratulations."),
        ("Ana", "I will visit the museum on Sunday."),
    )
    summary = summarize(repeated, EMBED, limit=4)
    texts = [s.text for s in summary]
    assert texts.count("I adopted a puppy named Rex today.") == 1


def test_select_skips_what_is_redundant_with_a_chosen_row() -> None:
    vectors = np.array([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0]])
    assert select(np.array([0.5, 0.4, 0.1]), vectors, k=3) == [0, 2]


def test_centrality_sums_to_one_and_ranks_the_hub_first() -> None:
    vectors = np.array([[1.0, 0.0, 0.0], [0.8, 0.6, 0.0], [0.8, 0.0, 0.6], [0.0, 0.0, 1.0]])
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    scores = centrality(vectors)
    assert scores.sum() == pytest.approx(1.0)
    assert int(np.argmax(scores)) in (0, 2)  # linked to the most others
    assert centrality(np.zeros((0, 3))).size == 0


def test_a_running_memory_keeps_at_most_its_limit_and_lets_new_events_in() -> None:
    first = day(*[("Mel", f"I visited city number {i} with my sister and we walked a lot.") for i in range(30)])
    memory = fold([], first, EMBED, limit=20)
    assert len(memory) <= 20
    later = [
        Turn(f"n{i}", "Mel", text, 5000.0 + i)
        for i, text in enumerate(
            [
                "I started learning the violin with a new teacher today.",
                "The violin teacher gave me three new songs to practise.",
            ]
        )
    ]
    folded = fold(memory, later, EMBED, limit=20)
    assert len(folded) <= 20
    assert any("violin" in s.text for s in folded)
    assert [s.at for s in folded] == sorted(s.at for s in folded)


def test_a_session_that_repeats_the_memory_adds_nothing() -> None:
    memory = fold([], PAINTING_DAY, EMBED, limit=20)
    again = fold(memory, PAINTING_DAY, EMBED, limit=20)
    assert [s.text for s in again] == [s.text for s in memory]


def test_sentences_are_split_in_english_and_chinese() -> None:
    assert split_sentences("Hey Mel! I went to the support group yesterday. Dr. Smith was there.") == [
        "Hey Mel!",
        "I went to the support group yesterday.",
        "Dr. Smith was there.",
    ]
    assert split_sentences("你好，我是你的AI伴侣。我很喜欢绘画！有什么能帮到你的吗？") == [
        "你好，我是你的AI伴侣。",
        "我很喜欢绘画！",
        "有什么能帮到你的吗？",
    ]


def test_sentences_of_keeps_their_turns_source_speaker_and_time() -> None:
    [first, second] = sentences_of(day(("Mel", "I painted the lake today. Then I went swimming with the kids.")))
    assert (first.source, first.speaker, first.at, first.position) == ("t0", "Mel", 1000.0, 0)
    assert second.position == 1 and isinstance(second, Sentence)


def test_statements_about_oneself_are_first_person_declaratives_not_about_the_listener() -> None:
    from memcli.text.extractive import is_statement_about_oneself

    assert is_statement_about_oneself("I started playing acoustic guitar five years ago.")
    assert is_statement_about_oneself("我最近开始学习弹钢琴了。")
    for sentence in [
        "I'm so happy for you, Caroline.",
        "Do I need a new guitar for the class?",
        "Thanks, I will try it tonight.",
        "Melanie went camping with her kids.",
        "I see.",
        "It made me even more determined to adopt.",
        "But they give me the strength to keep going.",
        "That's why I love painting so much.",
        "I feel the same way about it!",
        "Wish I was that resilient too.",
        "这让我更加坚定了领养的决心。",
    ]:
        assert not is_statement_about_oneself(sentence), sentence
    assert is_statement_about_oneself("And I finally adopted a guinea pig named Oscar.")
    for sentence in [
        "This weekend I went hiking with my kids.",
        "These days I paint every morning before work.",
        "Here in Boston I have found my community.",
        "这个周末我去了博物馆看展览。",
    ]:
        assert is_statement_about_oneself(sentence), sentence  # a determiner, not a pronoun


@pytest.mark.parametrize(
    ("sentence", "expected"),
    [
        ("I love hiking with my dog.", "Ana loves hiking with Ana's dog."),
        ("I'm keen on counseling.", "Ana is keen on counseling."),
        ("I've been painting a lot lately.", "Ana has been painting a lot lately."),
        ("I went to the lake and I watch the birds.", "Ana went to the lake and Ana watches the birds."),
        ("I study Spanish at night.", "Ana studies Spanish at night."),
        ("I don't like spicy food.", "Ana doesn't like spicy food."),
        ("I really enjoy chess and I always lose.", "Ana really enjoys chess and Ana always loses."),
        ("I wanna help make a difference.", "Ana wants to help make a difference."),
        ("I'm gonna keep painting.", "Ana is gonna keep painting."),
        ("I gotta go to the store.", "Ana has got to go to the store."),
        ("I haven't done pottery yet.", "Ana hasn't done pottery yet."),
        ("我很喜欢绘画。", "Ana很喜欢绘画。"),
        ("We went camping last week.", None),
        ("I adopted a dog for myself.", None),
    ],
)
def test_first_person_statements_go_to_the_third_person_by_rule(sentence: str, expected: str | None) -> None:
    from memcli.text.extractive import third_person

    assert third_person(sentence, "Ana") == expected


def test_interests_leave_out_the_names_of_those_talking() -> None:
    from memcli.text.extractive import interests

    topics = interests(
        ["I love painting lakes, Mel!", "Caroline, painting relaxes me.", "Pottery class with Mel is fun."],
        names=["Caroline", "Melanie"],
    )
    assert any("painting" in t for t in topics)
    assert not {t.lower() for t in topics} & {"mel", "melanie", "caroline"}


def test_interests_name_each_topic_once_and_not_the_talk_with_the_assistant() -> None:
    from memcli.text.extractive import interests

    texts = [
        "My companion gave me advice about the Piano.",
        "I practice piano scales and jazz piano every evening.",
        "The piano recital is on Sunday, I need some recommendations.",
    ]
    topics = interests(texts, names=["Emily"])
    assert topics and len({t.lower() for t in topics}) == len(topics)
    assert not {w for t in topics for w in t.lower().split()} & {"companion", "advice", "recommendations"}
    assert any("piano" in t.lower() for t in topics)


def test_an_assistants_advice_weighs_less_than_what_happened_to_the_person() -> None:
    from memcli.text.extractive import ASSISTANT_WEIGHT, Sentence, salience

    text = "Taking a short walk every evening can really help you sleep better at night."
    pool = [Sentence(text, "assistant", "a", 1.0), Sentence(text.replace("you sleep", "me sleep"), "Gary", "b", 2.0)]
    vectors = np.asarray([[1.0, 0.0], [1.0, 0.0]], dtype=np.float32)
    scores = salience(pool, vectors)
    assert scores[0] == pytest.approx(ASSISTANT_WEIGHT * scores[1])


def test_chinese_interests_are_things_not_adverbs_or_the_assistant() -> None:
    from memcli.text.extractive import interests

    texts = [
        "你好啊AI伴侣，今天我去了博物馆，非常喜欢那里的展览。",
        "我最近在看一部非常好看的电影，也在读小说。",
        "周末我又去了博物馆，看到了很多古代的瓷器。",
    ]
    topics = interests(texts, names=["张曼婷"])
    assert "博物馆" in topics
    assert not {"非常", "伴侣", "看到", "今天"} & set(topics)


def test_interests_keep_the_keyword_order_with_one_case_of_each() -> None:
    from unittest import mock

    from memcli.text import extractive

    found = [("Painting", 0.01), ("dogs", 0.02), ("painting", 0.03), ("hiking", 0.04)]
    with mock.patch("yake.KeywordExtractor") as extractor:
        extractor.return_value.extract_keywords.return_value = found
        assert extractive.interests(["I paint and hike with my dogs."]) == ["Painting", "dogs", "hiking"]


def test_centrality_is_lexranks_pagerank_without_a_graph_of_n_squared_objects(monkeypatch: pytest.MonkeyPatch) -> None:
    import networkx as nx  # local: the reference the test compares against

    rng = np.random.default_rng(7)
    cases = []
    for n in (3, 12, 60):
        vectors = rng.normal(size=(n, 8))
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        vectors[-1] = -vectors[0]  # a sentence linked to little: dangling rows are handled
        similarity = np.clip(vectors @ vectors.T, 0.0, 1.0)
        np.fill_diagonal(similarity, 0.0)
        similarity[similarity < 0.1] = 0.0
        ranks = nx.pagerank(nx.from_numpy_array(similarity), alpha=0.85, weight="weight")
        cases.append((vectors, np.array([ranks[i] for i in range(n)])))

    def no_graph(*args: object, **kwargs: object) -> None:
        raise AssertionError("centrality built a networkx graph of the similarity matrix")

    monkeypatch.setattr(nx, "from_numpy_array", no_graph)
    for vectors, expected in cases:
        assert np.abs(centrality(vectors) - expected).max() < 1e-5


def test_a_long_text_reaches_the_sentence_splitter_in_pieces(monkeypatch: pytest.MonkeyPatch) -> None:
    from memcli.text import extractive  # local: the module whose splitter is watched

    seen: list[int] = []
    real = extractive._SEGMENTERS.get("en")
    if real is None:
        split_sentences("Warm the segmenter up. Now.")
        real = extractive._SEGMENTERS["en"]

    class Watched:
        def segment(self, text: str) -> list[str]:
            seen.append(len(text))
            return real.segment(text)

    monkeypatch.setitem(extractive._SEGMENTERS, "en", Watched())
    extractive._split.cache_clear()
    sentence = "We walked to the allotment and picked the last of the tomatoes."
    text = " ".join(f"{sentence[:-1]} number {i}." for i in range(3000))  # about 200,000 characters
    found = split_sentences(text)
    assert len(found) == 3000
    assert found[1234] == f"{sentence[:-1]} number 1234."
    assert max(seen) <= extractive.SPLIT_PIECE


def test_a_summary_reads_at_most_the_start_of_a_very_long_memory() -> None:
    from memcli.text.extractive import SUMMARY_READ  # local: the bound under test

    @dataclass
    class Turn:
        text: str
        speaker: str = "sam"
        id: str = "t1"
        created_at: float = 0.0
        tags: tuple[str, ...] = ()

    sentence = "We walked to the allotment and picked the last of the tomatoes number {}."
    text = " ".join(sentence.format(i) for i in range(4000))
    found = sentences_of([Turn(text)])
    assert sum(len(s.text) + 1 for s in found) <= SUMMARY_READ + len(sentence) + 10
    assert found[0].text.startswith("We walked to the allotment")
    assert len(found) < 4000


@pytest.mark.parametrize(
    "text",
    [
        "Second date with Priya went great, I think we're a thing now?",
        "I'm pretty sure I left my umbrella at the office?",
        "Finally moved in with Jo, I guess it's official?",
        "我们这算正式在一起了吧？",
        "我应该算是升职了？",
    ],
)
def test_a_statement_ending_in_doubt_tells(text: str) -> None:
    assert not is_request_or_question(text)


@pytest.mark.parametrize("text", ["Got the keys to the new house today?!", "今天终于拿到驾照了？！"])
def test_a_statement_ending_in_surprise_tells(text: str) -> None:
    assert not is_request_or_question(text)


@pytest.mark.parametrize(
    "text",
    [
        "should I take the job in Leeds?",
        "can you remind me when the boiler was serviced?",
        "ok so where do I park?",
        "I baked a new loaf - want to try some?",
        "Sam's phone number?",
        "you're coming on Friday?",
        "remind me to renew the passport",
        "要不要搬去上海？",
        "帮我查一下明天的天气",
        "今天降温了吗？",
        "房租交了没有？",
    ],
)
def test_a_true_question_or_request_still_asks(text: str) -> None:
    assert is_request_or_question(text)


@pytest.mark.parametrize(
    "text",
    [
        "Signed the lease on the flat in Hove. we're finally settled I guess?",
        "今天去面试了。我们算是定下来了吧？",
    ],
)
def test_the_mark_is_read_with_the_sentence_it_ends(text: str) -> None:
    assert not is_request_or_question(text)
    assert is_request_or_question(
        text.replace("we're finally settled I guess?", "Ana's new number?").replace(
            "我们算是定下来了吧？", "结果怎么样？"
        )
    )


@pytest.mark.parametrize(
    "text",
    [
        "I can't remember my bike lock code?",
        "I forget the gate code at the allotment?",
        "I don't know my library card number?",
        "I'm not sure my passport expires in May?",
        "我忘了储物柜号码？",
        "不记得wifi密码了？",
        "我不知道护照放在抽屉里？",
    ],
)
def test_a_sentence_about_not_knowing_asks(text: str) -> None:
    assert is_request_or_question(text)


@pytest.mark.parametrize(
    "text",
    [
        "I moved to Denver?",
        "my sister is in Porto now?",
        "we got a cat?",
        "我搬到成都了？",
        "我们的新家在三楼了吧？",
    ],
)
def test_a_bare_statement_in_doubt_asks(text: str) -> None:
    assert is_request_or_question(text)


@pytest.mark.parametrize(
    ("hedged", "bare"),
    [
        ("third date with Sam, we're official now I guess?", "third date with Sam, we're official now?"),
        ("moved into the new flat today, finally?!", "we moved into the new flat today?"),
        ("Mia said yes, we're engaged lol?", "Mia said yes, we're engaged?"),
        ("我们这算是同居了吧？", "我们同居了吧？"),
        ("搬进新家了，终于？！", "搬进新家了？"),
    ],
)
def test_only_a_hedge_or_surprise_makes_a_statement_in_doubt_tell(hedged: str, bare: str) -> None:
    assert not is_request_or_question(hedged)
    assert is_request_or_question(bare)
