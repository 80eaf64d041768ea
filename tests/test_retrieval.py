"""Recall (``memcli.recall.retrieval``) with the fake embedder: the ranking of what matches, the
filters, the context column, the speaker, date and when signals, the query terms, the
levers of ``Signals``, ``recall --explain`` / ``--json`` and ``memcli eval locomo`` on a
tiny LoCoMo-shaped file."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from cli_checks import assert_error, ok
from conftest import given_models
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from memcli.cli import app
from memcli.config import load_settings, resolve_paths
from memcli.dates import says_when
from memcli.errors import BadInputError, ExitCode, NotFoundError, UsageError
from memcli.library.engine import Engine
from memcli.library.evaluation import clean_evidence
from memcli.memory import Kind, Memory, stable_id
from memcli.recall.retrieval import (
    DATE_AFTER_WEIGHT,
    Recalled,
    Recaller,
    Signals,
    _query_stopwords,
    asks_when,
    date_hits,
    named_speakers,
    person_speakers,
    query_dates,
    query_stems,
    without_repeated_lines,
)

USER = "ana"
NOW = datetime(2023, 6, 1, 9, 0).timestamp()
SIGNAL_NAMES = {"lexical", "window", "turn", "speaker", "person", "date", "when", "graph", "prior", "superseded"}
AFTER = DATE_AFTER_WEIGHT
ORDINAL = {1: "st", 2: "nd", 3: "rd"}
MONTHS = (
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
)


# helpers ------------------------------------------------------------------------------------


def make_memcli(notices: list[str] | None = None) -> Engine:
    paths = resolve_paths()
    return Engine(
        load_settings(paths),
        paths,
        clock=lambda: NOW,
        notice=notices.append if notices is not None else None,
        **given_models(),
    )


def at(day: str, minute: int = 0) -> float:
    """10:00 on ``day`` (YYYY-MM-DD) plus ``minute`` minutes, local time."""
    return datetime.fromisoformat(f"{day}T10:00:00").timestamp() + 60 * minute


def note(text: str, day: str = "2023-05-08", user: str = USER, kind: str = Kind.NOTE.value, minute: int = 0) -> Memory:
    return Memory(
        id=stable_id(user, kind, day, text),
        user=user,
        kind=kind,
        text=text,
        created_at=at(day, minute),
        day=day,
        source="test",
    )


def session(name: str, lines: Sequence[tuple[str, str]], day: str = "2023-05-08", user: str = USER) -> list[Memory]:
    """The turns of one session, a minute apart, as an import stores them."""
    return [
        Memory(
            id=stable_id(user, name, str(i), text),
            user=user,
            kind=Kind.TURN.value,
            text=text,
            created_at=at(day, i),
            day=day,
            session=name,
            speaker=speaker,
            source=f"{name}:{i}",
        )
        for i, (speaker, text) in enumerate(lines)
    ]


def ranked(
    engine: Engine, query: str, signals: Signals | None = None, user: str = USER, **filters: Any
) -> list[Recalled]:
    """Every memory recall returns for ``query`` by relevance alone, best first."""
    recaller = Recaller(engine.store, engine.embedder, signals)
    with engine.store.transaction():
        return recaller.recall(query, user, k=100, **filters)


def texts(hits: Sequence[Recalled]) -> list[str]:
    return [h.memory.text for h in hits]


def recalled(engine: Engine, query: str, **options: Any) -> list[str]:
    return texts(engine.recall(query, USER, reinforce=False, **options))


# 1. recall basics -------------------------------------------------------------------------


def test_memory_sharing_the_query_words_ranks_first(fake_embedder) -> None:
    engine = make_memcli()
    engine.add_memories(
        [
            note("The weather in Lyon was rainy all week", minute=1),
            note("I adopted a puppy named Rex last spring", minute=2),
            note("My sister plays the cello in an orchestra", minute=3),
            note("We booked a table at the new sushi place", minute=4),
        ]
    )
    assert recalled(engine, "puppy named Rex")[0] == "I adopted a puppy named Rex last spring"
    assert recalled(engine, "sister cello orchestra")[0] == "My sister plays the cello in an orchestra"


def test_recall_keeps_to_the_user_the_kind_and_since(fake_embedder) -> None:
    engine = make_memcli()
    engine.add_memories(
        [
            note("green tea with grandma", day="2023-05-01"),
            note("green tea in Kyoto", day="2023-05-10", kind=Kind.FACT.value),
            note("green tea green tea at work", day="2023-05-10", user="bob"),
        ]
    )
    assert sorted(recalled(engine, "green tea")) == ["green tea in Kyoto", "green tea with grandma"]
    assert recalled(engine, "green tea", kind="fact") == ["green tea in Kyoto"]
    assert recalled(engine, "green tea", since="2023-05-05") == ["green tea in Kyoto"]
    assert recalled(engine, "green tea", since=at("2023-05-01")) == recalled(engine, "green tea")
    assert texts(engine.recall("green tea", "bob", reinforce=False)) == ["green tea green tea at work"]


def test_recall_leaves_out_what_every_prompt_carries_unless_its_kind_is_asked_for(fake_embedder) -> None:
    """Portraits, the global event summary and the running memory are not recalled by
    default (each prompt has the global ones whole); turns, notes, facts and daily event
    summaries are; asking for a kind recalls that kind."""
    engine = make_memcli()
    recalled_kinds = {Kind.TURN, Kind.NOTE, Kind.FACT, Kind.EVENT_DAILY}
    memories = [note(f"green tea ceremony ({kind.value})", kind=kind.value, minute=i) for i, kind in enumerate(Kind)]
    engine.add_memories(memories)
    by_default = {h.memory.kind for h in engine.recall("green tea ceremony", USER, reinforce=False)}
    assert by_default == {kind.value for kind in recalled_kinds}
    for kind in set(Kind) - recalled_kinds:
        assert recalled(engine, "green tea ceremony", kind=kind.value) == [f"green tea ceremony ({kind.value})"]


def test_recall_returns_at_most_k_best_first(fake_embedder) -> None:
    engine = make_memcli()
    engine.add_memories(
        [note(f"note number {i} about gardening and {'roses' if i % 3 else 'tulips'}", minute=i) for i in range(30)]
    )

    hits = engine.recall("gardening tulips", USER, k=7, reinforce=False)
    assert len(hits) == 7
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    assert all("tulips" in h.memory.text for h in hits[:5])  # the ten tulip notes come first
    by_relevance = ranked(engine, "gardening tulips")
    assert len(by_relevance) == 30
    assert [h.relevance for h in by_relevance] == sorted((h.relevance for h in by_relevance), reverse=True)
    assert len(engine.recall("gardening", USER, k=50, reinforce=False)) == 30


def test_archived_memories_and_ended_facts_are_never_recalled(fake_embedder) -> None:
    engine = make_memcli()
    zeppelin = note("zeppelin ride over the lake")
    fact = note("Ana flies a zeppelin", kind=Kind.FACT.value)
    other = note("a boat trip on the river")
    engine.add_memories([zeppelin, fact, other])
    assert {zeppelin.text, fact.text} <= set(recalled(engine, "zeppelin"))

    zeppelin.archived, zeppelin.archived_at = True, NOW
    fact.valid_to = NOW
    engine.store.update([zeppelin, fact])

    assert recalled(engine, "zeppelin", k=10) == [other.text]
    assert recalled(engine, "zeppelin", kind="fact") == []
    assert texts(ranked(engine, "Ana flies a zeppelin")) == [other.text]
    engine.restore(zeppelin.id)
    assert recalled(engine, "zeppelin")[0] == zeppelin.text


def test_empty_query_and_k_below_one_return_nothing_or_fail_as_recall_does(fake_embedder) -> None:
    engine = make_memcli()
    engine.add_memories([note("a memory about anything")])
    with pytest.raises(BadInputError):
        engine.recall("   ", USER)
    with pytest.raises(UsageError):
        engine.recall("anything", USER, k=0)
    with pytest.raises(UsageError):
        engine.recall("anything", USER, kind="bogus")
    recaller = Recaller(engine.store, engine.embedder)
    with engine.store.transaction():
        assert recaller.recall("", USER) == []
        assert recaller.recall(" \n", USER) == []
        assert recaller.recall("anything", USER, k=0) == []
        assert recaller.recall("anything", USER, k=-3) == []
        assert len(recaller.recall("anything", USER, k=1)) == 1


def test_recall_of_a_user_without_memories_is_not_found(fake_embedder) -> None:
    """As ``ask``: a user with no memories, in a store where others have some, is
    NotFoundError (exit 6) naming those users, never an empty answer."""
    engine = make_memcli()
    engine.add_memories([note("bob's memory", user="bob")])
    with pytest.raises(NotFoundError, match="the users with memories are bob"):
        engine.recall("anything", USER)


# 2. the context column ------------------------------------------------------------------

DOG_QUERY = "What is the name of Ana's dog?"
DOG_SESSIONS = [
    (
        "s1",
        [
            ("Bob", "What is your dog called, Ana?"),
            ("Ana", "Rex."),
            ("Bob", "Lovely. I spent the whole weekend repairing the roof of our old barn before the storm arrived."),
        ],
    ),
    (
        "s2",
        [
            ("Ana", "The garden is full of roses this year."),
            ("Bob", "Bright colours suit a kitchen."),
            ("Ana", "The kitchen is the heart of the house."),
        ],
    ),
    (
        "s3",
        [
            ("Bob", "I started learning the guitar."),
            ("Ana", "The price of lessons is high."),
            ("Bob", "True, but worth it."),
        ],
    ),
    ("s4", [("Ana", "The end of the film is sad."), ("Bob", "I cried at the end of it too.")]),
]


def test_short_answer_is_recalled_through_its_question_in_the_context_column(fake_embedder) -> None:
    engine = make_memcli()
    engine.add_memories([t for name, lines in DOG_SESSIONS for t in session(name, lines)])
    unrelated = {t for _, lines in DOG_SESSIONS for _, t in lines} - {"Rex.", "What is your dog called, Ana?"}

    def above_rex(hits: list[Recalled]) -> set[str]:
        order = texts(hits)
        return set(order[: order.index("Rex.")]) & unrelated

    assert above_rex(engine.recall(DOG_QUERY, USER, k=20, reinforce=False)) == set()
    with_context = ranked(engine, DOG_QUERY)
    assert above_rex(with_context) == set()
    assert next(h for h in with_context if h.memory.text == "Rex.").signals["lexical"] > 0

    without_context = ranked(engine, DOG_QUERY, Signals().without("context"))
    assert above_rex(without_context), "without its context, 'Rex.' shares no word with the query"


# 3. the speaker signal --------------------------------------------------------------------


def test_query_naming_one_speaker_ranks_that_speakers_turn_first(fake_embedder) -> None:
    engine = make_memcli()
    engine.add_memories(
        session("s1", [("Ana", "Hiking is fun."), ("Bob", "I love hiking in the mountains every summer.")])
    )

    query = "What did Ana say about hiking in the mountains?"
    hits = ranked(engine, query)
    assert texts(hits)[0] == "Hiking is fun."
    assert {h.memory.speaker: h.signals["speaker"] for h in hits} == {"Ana": Signals().speaker, "Bob": 0.0}
    assert (
        texts(ranked(engine, query, Signals().without("speaker")))[0] == "I love hiking in the mountains every summer."
    )
    assert texts(ranked(engine, "What did Bob say about hiking?"))[0] == "I love hiking in the mountains every summer."


def test_first_person_query_favours_the_users_own_turns(fake_embedder) -> None:
    engine = make_memcli()
    engine.add_memories(
        session(
            "chat-1",
            [
                (USER, "Hiking is fun."),
                ("assistant", "I love hiking in the mountains every summer."),
                (USER, "My sister is visiting next month."),
                ("assistant", "That sounds lovely, enjoy the visit."),
            ],
        )
    )

    query = "What did I say about hiking in the mountains?"
    hits = ranked(engine, query)
    assert texts(hits)[0] == "Hiking is fun."
    by_text = {h.memory.text: h.signals for h in hits}
    assert by_text["My sister is visiting next month."]["person"] == Signals().person
    assert by_text["That sounds lovely, enjoy the visit."]["person"] == 0.0
    assert all(signals["speaker"] == 0.0 for signals in by_text.values())  # a pronoun is not a name
    assert (
        texts(ranked(engine, query, Signals().without("person")))[0] == "I love hiking in the mountains every summer."
    )


def test_second_person_query_favours_the_assistants_turns(fake_embedder) -> None:
    engine = make_memcli()
    engine.add_memories(
        session(
            "chat-1",
            [
                (USER, "Can you recommend a book about painting?"),
                ("assistant", "I recommend The Story of Art by Gombrich, a book about painting."),
                (USER, "I read a book about painting last year and loved it."),
            ],
        )
    )
    query = "What book about painting did you recommend to me?"
    hits = ranked(engine, query)
    assert texts(hits)[0] == "I recommend The Story of Art by Gombrich, a book about painting."
    assert {h.memory.speaker for h in hits if h.signals["person"]} == {"assistant"}
    # without the person signal the reply is not the most relevant (recall's order puts the
    # question below what was told, so the order alone would not show it)
    unpointed = ranked(engine, query, Signals().without("person"))
    assert max(unpointed, key=lambda h: h.relevance).memory.text != texts(hits)[0]


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("What did you recommend to me?", {"assistant"}),
        ("What was your advice about sleep?", {"assistant"}),
        ("What hobbies did I tell you about?", {"Emily"}),
        ("Do you remember what my dog is called?", {"Emily"}),
        ("Can you tell me what I said about Paris?", {"Emily"}),
        ("Yesterday I told you I felt lost. What did you suggest?", {"assistant"}),
        ("What did we talk about?", set()),
        ("What did we decide about my trip?", set()),  # "we" first: both of us
        ("What is the capital of France?", set()),
        ("你给我推荐过哪些书？", {"assistant"}),
        ("我说过我会弹什么乐器？", {"Emily"}),
        ("你还记得我喜欢什么吗", {"Emily"}),
        ("朋友过生日我不知道送什么，你给我出了哪些主意？", {"assistant"}),
        ("我们聊了什么", set()),
    ],
)
def test_person_speakers_follow_the_grammatical_person_of_the_question(query: str, expected: set[str]) -> None:
    assert person_speakers(query, {"Emily", "assistant", ""}, "Emily") == expected


def test_person_speakers_know_the_user_by_name_without_spaces_or_as_the_chat_log_role() -> None:
    assert person_speakers("what did I say?", {"John Zhang", "assistant"}, "JohnZhang") == {"John Zhang"}
    assert person_speakers("what did I say?", {"user", "assistant"}, "zoe") == {"user"}
    assert person_speakers("what did you say?", {"Ana", "Bob"}, "conv-1") == set()  # no assistant: no signal


@pytest.mark.parametrize(
    "query",
    ["What did Ana and Bob say about hiking?", "What was said about hiking?", "What did I say about hiking?"],
    ids=["every speaker", "no speaker", "first person, user not a speaker"],
)
def test_speaker_signal_is_off_when_the_query_names_every_speaker_or_none(fake_embedder, query: str) -> None:
    engine = make_memcli()
    engine.add_memories(session("s1", [("Ana", "Hiking is fun."), ("Bob", "I love hiking in the mountains.")]))
    hits = ranked(engine, query)
    assert len(hits) == 2
    assert [h.signals["speaker"] for h in hits] == [0.0, 0.0]


def test_speaker_signal_is_off_when_every_speaker_is_named_beside_a_note(fake_embedder) -> None:
    engine = make_memcli()
    engine.add_memories(session("s1", [("Ana", "Hiking is fun."), ("Bob", "I love hiking in the mountains.")]))
    engine.add_memories([note("Hiking boots are on sale in town.")])
    hits = ranked(engine, "What did Ana and Bob say about hiking?")
    assert [h.signals["speaker"] for h in hits] == [0.0, 0.0, 0.0]


def test_named_speakers_matches_whole_names_in_any_case() -> None:
    speakers = {"Ana", "Bob", "zoe", ""}
    assert named_speakers("what did ANA tell bob?", speakers) == {"Ana", "Bob"}
    assert named_speakers("What did Anastasia and Bobby say?", speakers) == set()
    assert named_speakers("what did I say?", speakers) == set()
    assert named_speakers("what did it say?", speakers) == set()


# 4. query_stems ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("What is the name of Ana's dog?", ["what", "name", "ana", "dog"]),
        ("Dog dog DOG dogs", ["dog"]),
        ("I x a go to Lyon", ["go", "lyon"]),
        ("When did she start painting?", ["when", "did", "she", "start", "paint"]),
        ("is it the", []),
        ("?!", []),
    ],
)
def test_query_stems_drop_stop_words_short_words_and_repeats(query: str, expected: list[str]) -> None:
    assert query_stems(query) == expected


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=80))
def test_query_stems_are_lower_case_tokens_without_stop_words(query: str) -> None:
    stems = query_stems(query)
    assert len(set(stems)) == len(stems)
    assert not set(stems) & _query_stopwords()
    assert all(s and s == s.lower() and re.fullmatch(r"[^\W_]+", s) for s in stems)


def test_query_of_stop_words_only_still_recalls(fake_embedder) -> None:
    engine = make_memcli()
    engine.add_memories([note("it is what it is"), note("a puppy named Rex")])
    hits = engine.recall("is it the", USER, reinforce=False)
    assert texts(hits)[0] == "it is what it is"
    assert all(h.signals["lexical"] == 0.0 for h in hits)


# 5. dates in queries ----------------------------------------------------------------------


def day(year: int, month: int, dom: int, hour: int = 0) -> float:
    return datetime(year, month, dom, hour).timestamp()


@pytest.mark.parametrize(
    "query",
    ["What did Ana do on 8 May 2023?", "What happened on May 8, 2023?", "the 8th of May, 2023", "on 8 may 2023"],
)
def test_query_dates_reads_a_day(query: str) -> None:
    [found] = query_dates(query)
    assert (found.granularity, found.start, found.end) == ("day", day(2023, 5, 8), day(2023, 5, 9) - 1)


def test_query_dates_reads_a_month_a_year_and_a_month_alone() -> None:
    [month] = query_dates("What did Ana do in May 2023?")
    assert (month.granularity, month.start, month.end) == ("month", day(2023, 5, 1), day(2023, 6, 1) - 1)
    [december] = query_dates("in December, 2022")
    assert (december.start, december.end) == (day(2022, 12, 1), day(2023, 1, 1) - 1)
    [year] = query_dates("Where did Ana travel in 2023?")
    assert (year.granularity, year.start, year.end) == ("year", day(2023, 1, 1), day(2024, 1, 1) - 1)
    [june] = query_dates("What did Ana paint in June?")
    assert (june.granularity, june.month) == ("month alone", 6)
    [may] = query_dates("What did Ana do in May?")
    assert (may.granularity, may.month) == ("month alone", 5)
    assert query_dates("What did Ana do at the lake?") == []


@pytest.mark.parametrize("query", ["What may Ana do next?", "May I ask what Rex eats?", "Ana may adopt a cat"])
def test_may_as_a_verb_is_not_the_month(query: str) -> None:
    assert query_dates(query) == []


def test_a_day_counts_whole_from_the_day_before_and_half_for_fourteen_days_after() -> None:
    [when] = query_dates("8 May 2023")
    times = [
        day(2023, 5, 6, 12),
        day(2023, 5, 7, 12),
        day(2023, 5, 8, 9),
        day(2023, 5, 9, 9),
        day(2023, 5, 22, 12),
        day(2023, 5, 23, 12),
    ]
    assert date_hits([when], np.array(times)).tolist() == [0.0, 1.0, 1.0, AFTER, AFTER, 0.0]


def test_a_month_counts_whole_and_half_for_fourteen_days_after_its_end() -> None:
    [when] = query_dates("May 2023")
    times = [
        day(2023, 4, 29, 12),
        day(2023, 4, 30, 12),
        day(2023, 5, 20),
        day(2023, 6, 14, 12),
        day(2023, 6, 15, 12),
        day(2022, 5, 20),
    ]
    assert date_hits([when], np.array(times)).tolist() == [0.0, 1.0, 1.0, AFTER, 0.0, 0.0]


def test_a_year_counts_whole_and_half_for_thirty_days_after_its_end() -> None:
    [when] = query_dates("2023")
    times = [day(2022, 12, 30, 12), day(2022, 12, 31, 12), day(2023, 7, 1), day(2024, 1, 30, 12), day(2024, 1, 31, 12)]
    assert date_hits([when], np.array(times)).tolist() == [0.0, 1.0, 1.0, AFTER, 0.0]


def test_month_alone_matches_that_month_of_any_year_or_two_weeks_into_the_next() -> None:
    dates = query_dates("in June")
    times = [day(2021, 6, 3), day(2024, 6, 30, 12), day(2023, 7, 10), day(2023, 7, 20), day(2023, 5, 31, 12)]
    assert date_hits(dates, np.array(times)).tolist() == [1.0, 1.0, AFTER, 0.0, 0.0]
    assert date_hits([], np.array(times)).tolist() == [0.0] * 5


@settings(max_examples=100, deadline=None)
@given(
    moment=st.dates(min_value=datetime(1990, 1, 1).date(), max_value=datetime(2030, 12, 31).date()),
    style=st.sampled_from(
        ["{d} {M} {y}", "{M} {d}, {y}", "{d}{th} of {M}, {y}", "on the {d}{th} of {m}. {y}", "{m} {d} {y}"]
    ),
    offset_days=st.floats(min_value=-0.99, max_value=0.99),
)
def test_every_way_of_writing_a_day_reads_the_same_day_and_window(moment: Any, style: str, offset_days: float) -> None:
    month = MONTHS[moment.month - 1]
    query = style.format(
        d=moment.day,
        th=ORDINAL.get(moment.day % 10 if moment.day not in (11, 12, 13) else 0, "th"),
        M=month.capitalize(),
        m=month[:3],
        y=moment.year,
    )
    [found] = query_dates(f"What happened {query}?", now=datetime(2031, 1, 1).timestamp())
    start = datetime(moment.year, moment.month, moment.day).timestamp()
    assert (found.granularity, found.start, found.yearless) == ("day", start, False)
    inside = start + offset_days * 86400
    outside = [start - 2 * 86400, (datetime(moment.year, moment.month, moment.day) + timedelta(days=16)).timestamp()]
    assert date_hits([found], np.array([inside, *outside])).tolist() == [1.0, 0.0, 0.0]


def test_query_naming_a_date_ranks_what_was_learned_then_first(fake_embedder) -> None:
    engine = make_memcli()
    engine.add_memories(
        [note("We went to the beach.", day="2023-03-02"), note("We went to the beach.", day="2023-05-08", minute=1)]
    )
    hits = ranked(engine, "Where did we go on 8 May 2023?")
    assert [h.memory.day for h in hits] == ["2023-05-08", "2023-03-02"]
    assert [h.signals["date"] for h in hits] == [Signals().date, 0.0]
    assert [h.signals["date"] for h in ranked(engine, "Where did we go?")] == [0.0, 0.0]


@pytest.mark.parametrize(
    "query",
    [
        "When did Ana adopt Rex?",
        "what year did Bob move?",
        "What month was the race?",
        "Which week did she call?",
        "How long ago did Ana paint?",
        "In which year did they meet?",
        "  When was it?",
        "我什么时候去的厦门？",
        "你哪天推荐的这本书？",
    ],
)
def test_asks_when_on_questions_about_time(query: str) -> None:
    assert asks_when(query)


@pytest.mark.parametrize(
    "query", ["What did Ana adopt?", "Which city does Bob live in?", "Where did they go when it rained?", "Who won?"]
)
def test_asks_when_not_on_other_questions(query: str) -> None:
    assert not asks_when(query)


@pytest.mark.parametrize(
    "text",
    [
        "I went there yesterday.",
        "We met last week.",
        "On Monday I ran.",
        "It happened in June.",
        "Back in 2019 I lived there.",
        "A few days ago.",
        "I have been busy lately.",
        "See you next weekend!",
        "我昨天去了公园。",
        "上周我开始学画画",
        "三天前我买了新衣服",
    ],
)
def test_says_when_on_texts_that_place_something_in_time(text: str) -> None:
    assert says_when(text)


@pytest.mark.parametrize(
    "text", ["I love dogs.", "I may go.", "The price of lessons is high.", "Rex.", "我很喜欢弹钢琴。"]
)
def test_says_when_not_on_timeless_texts(text: str) -> None:
    assert not says_when(text)


def test_when_signal_favours_turns_that_say_when_on_when_questions(fake_embedder) -> None:
    engine = make_memcli()
    engine.add_memories(
        [note("I went hiking in the hills yesterday."), note("I went hiking in the hills with Rex.", minute=1)]
    )
    hits = ranked(engine, "When did Ana go hiking in the hills?")
    assert [(h.memory.text, h.signals["when"]) for h in hits] == [
        ("I went hiking in the hills yesterday.", Signals().when),
        ("I went hiking in the hills with Rex.", 0.0),
    ]
    assert [h.signals["when"] for h in ranked(engine, "Where did Ana go hiking?")] == [0.0, 0.0]


def test_when_signal_sees_memories_written_after_an_earlier_when_question(fake_embedder) -> None:
    """What each memory says about time is worked out once per loaded index; a write loads
    the index again, so the memory it adds is scored too."""
    engine = make_memcli()
    recaller = Recaller(engine.store, engine.embedder)
    engine.add_memories([note("I went hiking in the hills yesterday.")])
    question = "When did Ana go hiking in the hills?"
    with engine.store.transaction():
        assert [h.signals["when"] for h in recaller.recall(question, USER, k=10)] == [Signals().when]
    engine.add_memories([note("I went hiking in the hills last week.", minute=1)])
    with engine.store.transaction():
        hits = recaller.recall(question, USER, k=10)
    assert sorted((h.memory.text, h.signals["when"]) for h in hits) == [
        ("I went hiking in the hills last week.", Signals().when),
        ("I went hiking in the hills yesterday.", Signals().when),
    ]


# 8. Signals.without -----------------------------------------------------------------------

PRIORS = ("length", "question", "first", "caption")


@pytest.mark.parametrize("lever", [lever for lever in Signals.LEVERS if lever != "priors"])
def test_without_a_lever_zeroes_its_weight_only(lever: str) -> None:
    full, off = Signals(), Signals().without(lever)
    assert getattr(full, lever) != 0 and getattr(off, lever) == 0
    assert {n: v for n, v in vars(off).items() if n != lever} == {n: v for n, v in vars(full).items() if n != lever}


def test_without_priors_zeroes_the_four_priors() -> None:
    full, off = Signals(), Signals().without("priors")
    assert all(getattr(full, n) != 0 and getattr(off, n) == 0 for n in PRIORS)
    assert {n: v for n, v in vars(off).items() if n not in PRIORS} == {
        n: v for n, v in vars(full).items() if n not in PRIORS
    }


@settings(max_examples=50, deadline=None)
@given(st.sets(st.sampled_from(Signals.LEVERS)))
def test_without_several_levers_zeroes_exactly_theirs(levers: set[str]) -> None:
    off = Signals().without(*levers)
    names = {n for lever in levers for n in (PRIORS if lever == "priors" else (lever,))}
    assert {n for n, v in vars(off).items() if v == 0} == names


@pytest.mark.parametrize("lever", ["bogus", "Speaker", "length", ""])
def test_without_an_unknown_lever_raises_value_error(lever: str) -> None:
    with pytest.raises(ValueError, match="unknown lever"):
        Signals().without("speaker", lever)


def test_a_lever_turned_off_contributes_nothing_to_recall(fake_embedder) -> None:
    engine = make_memcli()
    engine.add_memories(
        session(
            "s1",
            [
                ("Ana", "Hiking is fun yesterday?"),
                ("Bob", "I love hiking in the mountains."),
                ("Ana", "My sister plays the cello."),
            ],
        )
    )
    query = "When did Ana go hiking on 8 May 2023?"
    for lever in Signals.LEVERS:
        signal = "prior" if lever in ("priors",) else lever
        if lever == "context":
            continue  # a column weight of the lexical signal, not a signal of its own
        for hit in ranked(engine, query, Signals().without(lever)):
            assert hit.signals[signal] == 0.0, (lever, hit.signals)
    hits = ranked(engine, query) + ranked(engine, "When did I go hiking on 8 May 2023?")  # a name, then the user's "I"
    # The graph is built by consolidation (tests/test_graph_memory.py shows its signal at work),
    # and nothing here supersedes anything (tests/test_supersession.py shows that signal).
    assert all(any(h.signals[s] != 0.0 for h in hits) for s in SIGNAL_NAMES - {"graph", "superseded"})


# 10. recall --explain and --json ----------------------------------------------------------


def test_recall_explain_prints_the_relevance_and_every_signal_under_each_result(
    runner: CliRunner, fake_embedder
) -> None:
    for text in ("I adopted a puppy named Rex", "Rex loves the park", "The weather was rainy"):
        ok(runner.invoke(app, ["remember", text]))
    lines = ok(runner.invoke(app, ["recall", "puppy Rex", "--explain", "--no-reinforce"])).stdout.splitlines()
    results = [i for i, line in enumerate(lines) if not line.startswith("\t")]
    assert len(results) == 3
    for i in results:
        explanation = lines[i + 1]
        assert explanation.startswith("\trelevance ")
        for name in SIGNAL_NAMES:
            assert re.search(rf"\b{name} [+-]\d+\.\d\d\b", explanation), (name, explanation)
        assert " = " in explanation
        assert all(
            f"{name} " in lines[i + 2] for name in ("importance", "retention", "use", "recent_penalty", "feedback")
        )
    plain = ok(runner.invoke(app, ["recall", "puppy Rex", "--no-reinforce"])).stdout.splitlines()
    assert len(plain) == 3 and not any(line.startswith("\t") for line in plain)


def test_recall_json_has_relevance_similarity_signals_and_components(runner: CliRunner, fake_embedder) -> None:
    for text in ("I adopted a puppy named Rex", "The weather was rainy"):
        ok(runner.invoke(app, ["remember", text]))
    hits = json.loads(ok(runner.invoke(app, ["recall", "puppy Rex", "--json", "--no-reinforce"])).stdout)
    assert [h["text"] for h in hits][0] == "I adopted a puppy named Rex"
    scores = [hit["score"] for hit in hits]
    for score in scores:
        assert isinstance(score["relevance"], float) and -1.0 <= score["similarity"] <= 1.0
        assert set(score["signals"]) == SIGNAL_NAMES
        assert set(score["components"]) == {"relevance", "importance", "retention", "use", "recent_penalty", "feedback"}
        assert 0.0 <= score["components"]["relevance"] <= 1.0
    assert scores[0]["similarity"] > scores[1]["similarity"]


# 9. memcli eval locomo --------------------------------------------------------------------


def locomo(tmp_path: Path) -> Path:
    """Two conversations: conv-a (two sessions, three usable questions of five) and conv-b
    (one session, two usable questions)."""
    data = [
        {
            "sample_id": "conv-a",
            "conversation": {
                "speaker_a": "Ann",
                "speaker_b": "Bob",
                "session_1_date_time": "1:56 pm on 8 May, 2023",
                "session_1": [
                    {"speaker": "Ann", "dia_id": "D1:1", "text": "I adopted a puppy named Rex."},
                    {"speaker": "Bob", "dia_id": "D1:2", "text": "What breed is Rex?"},
                    {"speaker": "Ann", "dia_id": "D1:3", "text": "A beagle.", "blip_caption": "a photo of a beagle"},
                ],
                "session_2_date_time": "10:00 am on 25 May, 2023",
                "session_2": [
                    {"speaker": "Bob", "dia_id": "D2:1", "text": "I started pottery classes."},
                    {"speaker": "Ann", "dia_id": "D2:2", "text": "Pottery sounds relaxing."},
                ],
            },
            "qa": [
                {"question": "What breed is Ann's puppy?", "answer": "beagle", "evidence": ["D1:3"], "category": 4},
                {"question": "When did Bob start pottery?", "answer": "May 2023", "evidence": ["D2:1"], "category": 2},
                {
                    "question": "What did Ann adopt and what breed?",
                    "answer": "a beagle",
                    "evidence": ["D1:1; D1:3"],
                    "category": 1,
                },
                {"question": "What is Rex?", "answer": "a dog", "evidence": ["D:1", "D9:9", None, "D1"], "category": 4},
                {"question": "What did Ann adopt?", "answer": "a puppy", "evidence": ["D1:1"], "category": 5},
            ],
        },
        {
            "sample_id": "conv-b",
            "conversation": {
                "session_1_date_time": "9:00 am on 1 June, 2023",
                "session_1": [
                    {"speaker": "Cy", "dia_id": "D1:1", "text": "I run marathons."},
                    {"speaker": "Di", "dia_id": "D1:2", "text": "I prefer swimming in the lake."},
                ],
            },
            "qa": [
                {"question": "What does Cy run?", "answer": "marathons", "evidence": ["D1:1"], "category": 4},
                {"question": "Where does Di swim?", "answer": "the lake", "evidence": ["D1:2 D1:1"], "category": 3},
            ],
        },
    ]
    path = tmp_path / "locomo.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def eval_json(runner: CliRunner, path: Path, *args: str) -> dict[str, Any]:
    return json.loads(ok(runner.invoke(app, ["eval", "locomo", str(path), "--json", *args])).stdout)


def test_clean_evidence_splits_combined_entries_and_drops_malformed_and_unknown_ids() -> None:
    known = {"D1:1", "D1:3", "D2:1"}
    assert clean_evidence(["D1:1; D1:3", "D2:1 D1:1", "D:1", "D9:9", None, "D1", "", 3], known) == [
        "D1:1",
        "D1:3",
        "D2:1",
    ]


def test_eval_locomo_selects_conversations_with_a_repeatable_option(
    runner: CliRunner, fake_embedder, tmp_path: Path
) -> None:
    path = locomo(tmp_path)
    one = eval_json(runner, path, "--conversation", "conv-a")
    assert (one["conversations"], one["questions"]) == (["conv-a"], 3)
    assert set(one["per_category"]) == {"1 multi-hop", "2 temporal", "4 single-hop"}
    both = eval_json(runner, path, "--conversation", "conv-b", "--conversation", "conv-a")
    assert (sorted(both["conversations"]), both["questions"]) == (["conv-a", "conv-b"], 5)
    everything = eval_json(runner, path)
    assert (everything["questions"], everything["without"]) == (5, [])
    for report in (one, both, everything):
        for row in [*report["per_category"].values(), report["overall"]]:
            assert 0.0 <= row["R@5"] <= row["R@10"] <= row["R@20"] <= 1.0
    # every conversation has at most 5 turns: all the evidence is in the top 5
    assert everything["overall"]["R@5"] == 1.0


def test_eval_locomo_rejects_an_unknown_conversation_and_lever(
    runner: CliRunner, fake_embedder, tmp_path: Path
) -> None:
    path = locomo(tmp_path)
    line = assert_error(
        runner.invoke(app, ["eval", "locomo", str(path), "--conversation", "conv-a", "--conversation", "conv-z"]),
        ExitCode.BAD_INPUT,
    )
    assert "conv-z" in line
    line = assert_error(runner.invoke(app, ["eval", "locomo", str(path), "--without", "bogus"]), ExitCode.USAGE)
    assert "bogus" in line


def test_eval_locomo_without_a_lever_reports_it(runner: CliRunner, fake_embedder, tmp_path: Path) -> None:
    report = eval_json(runner, locomo(tmp_path), "--without", "speaker", "--without", "priors", "--quiet")
    assert report["without"] == ["speaker", "priors"]
    assert report["questions"] == 5
    assert 0.0 <= report["overall"]["R@5"] <= report["overall"]["R@10"] <= report["overall"]["R@20"] <= 1.0
    table = ok(runner.invoke(app, ["eval", "locomo", str(locomo(tmp_path)), "--without", "speaker"])).stdout
    assert "R@5" in table and "overall" in table


def test_eval_locomo_leaves_the_users_own_store_untouched(runner: CliRunner, fake_embedder, tmp_path: Path) -> None:
    ok(runner.invoke(app, ["remember", "my own note about pottery"]))
    before = json.loads(ok(runner.invoke(app, ["list", "-n", "0", "--json"])).stdout)
    stats = json.loads(ok(runner.invoke(app, ["stats", "--json"])).stdout)

    eval_json(runner, locomo(tmp_path))

    assert json.loads(ok(runner.invoke(app, ["list", "-n", "0", "--json"])).stdout) == before
    assert (
        json.loads(ok(runner.invoke(app, ["stats", "--json"])).stdout)["all_users"]
        == stats["all_users"]
        == {"tester": 1}
    )
    assert json.loads(ok(runner.invoke(app, ["list", "-u", "conv-a", "--json"])).stdout) == []


def test_a_first_person_query_does_not_push_notes_below_the_users_turns(fake_embedder) -> None:
    engine = make_memcli()
    engine.add_memories(session("chat-1", [(USER, "The weather is grey today."), ("assistant", "Grey days are calm.")]))
    engine.add_memories([note("Sister's name: Mila.")])
    hits = {h.memory.text: h for h in ranked(engine, "what is my sister's name?")}
    assert hits["The weather is grey today."].signals["person"] > 0
    assert hits["Sister's name: Mila."].signals["person"] == hits["The weather is grey today."].signals["person"]
    assert hits["Grey days are calm."].signals["person"] == 0.0


# An extractive daily summary recalled beside its own turns -------------------------------------


def _memory(kind: Kind, text: str, speaker: str = "", n: int = 0) -> Memory:
    return Memory(
        id=f"{kind.value}-{n}",
        user="ana",
        kind=kind.value,
        text=text,
        created_at=1000.0 + n,
        day="2023-05-08",
        speaker=speaker,
    )


def _hits(*memories: Memory) -> list[Recalled]:
    return [Recalled(m, 1.0 - i / 10, 1.0 - i / 10, 0.5) for i, m in enumerate(memories)]


def test_a_summary_line_whose_turn_is_recalled_is_left_out() -> None:
    rex = _memory(Kind.TURN, "Guess what! I adopted a puppy named Rex in Lyon.", "Ana", 1)
    summary = _memory(
        Kind.EVENT_DAILY, "Ana: I adopted a puppy named Rex in Lyon.\nMel: I ran a charity race for mental health.", n=2
    )
    other = _memory(Kind.TURN, "I ran a charity race for mental health.", "Bo", 3)

    hits = without_repeated_lines(_hits(summary, rex, other), 3)

    assert [h.memory.id for h in hits] == [summary.id, rex.id, other.id]
    assert hits[0].memory.text == "Mel: I ran a charity race for mental health."  # Bo said it, not Mel: kept
    assert summary.text.startswith("Ana: I adopted")  # the stored memory is not changed


def test_a_summary_made_only_of_recalled_turns_gives_its_slot_to_the_next_hit() -> None:
    rex = _memory(Kind.TURN, "I adopted a puppy named Rex in Lyon.", "Ana", 1)
    summary = _memory(Kind.EVENT_DAILY, "Ana: I adopted a puppy named Rex in Lyon.", n=2)
    fact = _memory(Kind.FACT, "Ana adopted a puppy named Rex.", n=3)
    note = _memory(Kind.NOTE, "Rex's vet is on Rue Garibaldi.", n=4)

    assert [h.memory.id for h in without_repeated_lines(_hits(rex, summary, fact, note), 3)] == [
        rex.id,
        fact.id,
        note.id,
    ]
    assert [h.memory.id for h in without_repeated_lines(_hits(summary, fact, note, rex), 3)] == [
        summary.id,
        fact.id,
        note.id,
    ]
