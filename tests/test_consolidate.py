"""Consolidation in the library (``memcli.consolidation.consolidate``, ``Engine.consolidate``), with the fake
embedder and a scripted model that answers each structured request from the material it was
sent: day and global summaries and portraits, the running memory, Mem0's facts with
ADD/UPDATE/DELETE/NOOP, retries and skips of invalid output, grounding, deduplication,
resumption after a kill, incremental runs, the locks, ``structured_output``, and property
tests of the plan and of grounding."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from conftest import given_models
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, Field

from memcli.config import Paths, load_settings, resolve_paths
from memcli.consolidation.consolidate import MAX_FACTS, RELATED_SIMILARITY, WINDOW_PAIRS, make_plan
from memcli.consolidation.grounding import Grounding, SourceTurn, fact_problem, mentions, statement_problem
from memcli.consolidation.model_output import RUNNING_SENTENCES, WINDOW_FACTS
from memcli.consolidation.shared import told
from memcli.errors import InvalidOutputError, StoreLockedError
from memcli.library.engine import Engine
from memcli.memory import Kind, Memory, singleton_id, stable_id
from memcli.models.llm import RETRY_TEMPERATURE, Message, structured_output
from memcli.store.store import MemoryStore

USER = "ana"
NOW = datetime(2023, 6, 1, 9, 0).timestamp()
DAY1, DAY2, DAY3 = "2023-05-08", "2023-05-09", "2023-05-10"

# The conversation ------------------------------------------------------------------------
# Day 1 (session s1) has three turns, so two message pairs, the last a pair of one; day 2
# (session s2) has one pair. Each says one thing the scripted model knows how to summarise.

DAY1_TURNS = [
    ("Ana", "I adopted a puppy named Rex last spring in Lyon."),
    ("assistant", "What a lovely name! How old is Rex now?"),
    ("Ana", "Rex is four months old and loves the park."),
]
DAY2_TURNS = [
    ("Ana", "I took the train to Lisbon this morning."),
    ("assistant", "Enjoy Lisbon! Are you travelling alone?"),
]
DAY3_TURNS = [
    ("Ana", "I started painting watercolours of the harbour in Porto."),
    ("assistant", "Watercolours are hard. What do you paint first?"),
]


def turn(speaker: str, text: str, day: str, index: int, session: str, user: str = USER) -> Memory:
    """A dialogue turn as an import stores it: speaker, day, session, created_at, source."""
    when = datetime.fromisoformat(f"{day}T10:00:00").timestamp() + 60 * index
    return Memory(
        id=stable_id("test", user, day, str(index), text),
        user=user,
        kind=Kind.TURN.value,
        text=text,
        created_at=when,
        day=day,
        session=session,
        speaker=speaker,
        source=f"{session}:{index}",
    )


def day_turns(lines: Sequence[tuple[str, str]], day: str, session: str, user: str = USER) -> list[Memory]:
    return [turn(speaker, text, day, i, session, user) for i, (speaker, text) in enumerate(lines)]


def day1(user: str = USER) -> list[Memory]:
    return day_turns(DAY1_TURNS, DAY1, "s1", user)


def day2(user: str = USER) -> list[Memory]:
    return day_turns(DAY2_TURNS, DAY2, "s2", user)


def day3(user: str = USER) -> list[Memory]:
    return day_turns(DAY3_TURNS, DAY3, "s3", user)


# The scripted model ------------------------------------------------------------------------


class Script:
    """A well-behaved model. Each answer is made of the sentences whose key occurs in the
    material it was sent (a fact extraction: in its new messages). A key is in both the turn
    and its sentence, so every answer is grounded in its material, and a global summary,
    built from the daily ones, has the sentence of every day folded into it.

    ``decision``: the reply to Mem0's update decision of each new fact ("events" requests).
    """

    SUMMARIES = {
        "puppy named Rex": "Ana adopted a puppy named Rex.",
        "train to Lisbon": "Ana took the train to Lisbon.",
        "watercolours": "Ana started painting watercolours in Porto.",
        "live in Lisbon": "Ana said she and Rex now live in Lisbon.",
        "charity race": "Mel ran a charity race.",
        "live in Lyon": "Ana said she and Rex live in Lyon.",
    }
    PORTRAITS = {
        "puppy named Rex": "Ana is caring and proud of her puppy named Rex.",
        "train to Lisbon": "Ana is adventurous and took the train to Lisbon.",
        "watercolours": "Ana is creative and patient with watercolours.",
        "live in Lisbon": "Ana is happy to live in Lisbon.",
        "charity race": "Mel is proud of the charity race.",
        "live in Lyon": "Ana is settled and happy to live in Lyon.",
    }
    FACTS = {
        "puppy named Rex last spring": ["Ana adopted a puppy named Rex."],
        "four months": ["Rex is four months old."],
        "train to Lisbon": ["Ana took the train to Lisbon."],
        "harbour in Porto": ["Ana paints watercolours of the harbour in Porto."],
        "live in Lisbon with my puppy": ["Ana now lives in Lisbon with her puppy Rex."],
        "live in Lyon with my puppy": ["Ana lives in Lyon with her puppy Rex."],
    }

    def __init__(self) -> None:
        self.decision: dict[str, Any] = {"event": "ADD", "target": 0, "text": ""}

    @staticmethod
    def matching(table: dict[str, Any], content: str) -> list[Any]:
        return [value for key, value in table.items() if key in content]

    def __call__(self, task: str, content: str) -> str:
        if task == "summary":
            return json.dumps({"summary": " ".join(self.matching(self.SUMMARIES, content))})
        if task == "portrait":
            return json.dumps({"portrait": " ".join(self.matching(self.PORTRAITS, content))})
        if task == "memory":
            return json.dumps({"memory": self.matching(self.SUMMARIES, content)})
        if task == "facts":
            new = content.split("New messages")[-1]
            return json.dumps({"facts": [f for facts in self.matching(self.FACTS, new) for f in facts]})
        if task == "events":
            new_facts = content.split("New facts:\n")[-1].split("\n")
            return json.dumps({"events": [self.decision for _ in new_facts]})
        pytest.fail(f"unexpected structured request {task!r}")


def make_memcli(paths: Paths | None = None, **overrides: Any) -> Engine:
    paths = paths or resolve_paths()
    return Engine(load_settings(paths, **overrides), paths, clock=lambda: NOW, **given_models())


@pytest.fixture
def script(fake_model: Any) -> Script:
    script = Script()
    fake_model.responder = script
    return script


@pytest.fixture
def engine(fake_model: Any) -> Engine:
    return make_memcli()


def stored(engine: Engine, kind: Kind | None = None, user: str = USER) -> list[Memory]:
    with engine.store.transaction():
        return engine.store.memories(user=user, kind=kind.value if kind else None)


def one(engine: Engine, kind: Kind, user: str = USER) -> Memory:
    found = engine.store.get_many([singleton_id(kind, user)])
    assert len(found) == 1, f"no {kind.value} stored"
    return found[0]


def history(engine: Engine, memory_id: str | None = None) -> list[Any]:
    return engine.history(memory_id, USER, limit=0)


def tasks(fake_model: Any) -> list[str]:
    return [call[0] for call in fake_model.structured_calls]


def progress(engine: Engine, stage: str, status: str) -> set[str]:
    """Ids through ``stage`` with ``status`` (done, or skipped when the model stayed invalid)."""
    with engine.store.transaction():
        return {i for i, s in engine.store.sidecar.consolidated(USER, stage).items() if s == status}


def done(engine: Engine, stage: str) -> set[str]:
    return progress(engine, stage, "done")


def skipped(engine: Engine, stage: str) -> set[str]:
    return progress(engine, stage, "skipped")


def add_fact(engine: Engine, text: str, key: str = "stored") -> Memory:
    """A fact as an earlier consolidation left it."""
    fact = Memory(
        id=stable_id("fact", USER, key, text),
        user=USER,
        kind=Kind.FACT.value,
        text=text,
        created_at=NOW - 90 * 86400,
        day="2023-03-03",
        source="earlier",
        valid_from=NOW - 90 * 86400,
    )
    engine.add_memories([fact])
    return fact


def cosine(engine: Engine, a: str, b: str) -> float:
    u, v = engine.embedder.embed([a, b])
    return sum(x * y for x, y in zip(u, v))


def active_facts(engine: Engine) -> list[Memory]:
    return [m for m in stored(engine, Kind.FACT) if not m.valid_to]


# 1. good output ------------------------------------------------------------------------


def test_good_run_writes_daily_and_global_summaries_running_memory_and_facts(
    engine: Engine, script: Script, fake_model: Any
) -> None:
    first, second = day1(), day2()
    engine.add_memories(first + second)
    steps: list[tuple[int, int]] = []

    report = engine.consolidate(USER, progress=lambda d, t: steps.append((d, t)))

    for day, turns in ((DAY1, first), (DAY2, second)):
        for kind in (Kind.EVENT_DAILY, Kind.PORTRAIT_DAILY):
            [daily] = [m for m in stored(engine, kind) if m.day == day]
            assert daily.source == f"consolidate:{day}"
            assert daily.source_ids == [t.id for t in turns]
            assert daily.text
    assert [m.text for m in stored(engine, Kind.EVENT_DAILY)] == [
        Script.SUMMARIES["puppy named Rex"],
        Script.SUMMARIES["train to Lisbon"],
    ]
    events = one(engine, Kind.EVENT_GLOBAL)
    assert Script.SUMMARIES["puppy named Rex"] in events.text and Script.SUMMARIES["train to Lisbon"] in events.text
    assert Script.PORTRAITS["train to Lisbon"] in one(engine, Kind.PORTRAIT_GLOBAL).text
    running = one(engine, Kind.RUNNING_SUMMARY).text.split("\n")
    assert 1 <= len(running) <= RUNNING_SENTENCES
    assert Script.SUMMARIES["puppy named Rex"] in running and Script.SUMMARIES["train to Lisbon"] in running

    pairs = [first[:2], first[2:], second]
    facts = {m.text: m for m in stored(engine, Kind.FACT)}
    expected = ["Ana adopted a puppy named Rex.", "Rex is four months old.", "Ana took the train to Lisbon."]
    assert sorted(facts) == sorted(expected)
    for text, pair in zip(expected, pairs):
        assert facts[text].source_ids == [t.id for t in pair]
        assert facts[text].valid_from == pair[0].created_at
        assert facts[text].valid_to == 0
        assert facts[text].day == pair[-1].day

    consolidated = [m for m in stored(engine) if m.kind != Kind.TURN.value]
    adds = {e.memory_id for e in history(engine) if e.event == "ADD"}
    assert adds == {m.id for m in consolidated}
    assert "events" not in tasks(fake_model)
    assert (report.days, report.sessions, report.pairs) == (2, 2, 3)
    assert report.summaries == 2 * 2 + 2 + 2  # dailies, globals, one running memory per session
    assert (report.facts_added, report.facts_rejected, report.facts_deduplicated, report.invalid) == (3, 0, 0, 0)
    assert report.warnings == []
    assert steps[-1] == (8, 8) and [d for d, _ in steps] == list(range(1, 9))  # 2 days, the fold, 2 sessions, 3 pairs


def test_the_report_is_the_documented_schema(engine: Engine, script: Script) -> None:
    """What consolidate answers to every front end is ``schema.ConsolidateResult``, whole."""
    from memcli import schema
    from memcli.library import api, verbs
    from memcli.library.library import Memcli

    engine.add_memories(day1())
    result = api.run(Memcli(engine), "consolidate", {"user": USER})
    assert isinstance(result, schema.ConsolidateResult)
    data = verbs.dump(result)
    assert set(data) == set(schema.ConsolidateResult.model_fields)
    assert set(data["facts"]) == set(schema.FactCounts.model_fields)
    assert (data["days"], data["sessions"], data["message_pairs"], data["facts"]["added"]) == (1, 1, 2, 2)
    assert schema.ConsolidateResult.model_validate(data).model_dump(mode="json") == json.loads(json.dumps(data))


# 2. invalid output: one retry, then the unit is skipped and stays to do ---------------------

BAD_REPLIES = {
    "junk": lambda good: "Sure! Here is the summary you asked for.",
    "truncated": lambda good: good[: len(good) // 2],
    "schema-invalid": lambda good: json.dumps({"summary": 42, "portrait": ["x"], "memory": "x", "facts": "x"}),
}


def failing(script: Script, task: str, marker: str, bad: Callable[[str], str]) -> Callable[[str, str], str]:
    """The script, except that ``task`` requests whose material contains ``marker`` get ``bad``."""

    def respond(asked: str, content: str) -> str:
        good = script(asked, content)
        return bad(good) if asked == task and marker in content else good

    return respond


# task, the material that marks the unit, what the warning names, the unit's stage, its turns
UNITS = {
    "day summary": ("summary", "Conversation of Monday 8 May 2023", DAY1, "day", day1),
    "day portrait": ("portrait", "I adopted a puppy", DAY1, "day", day1),
    "session memory": ("memory", "New conversation of Monday 8 May 2023", "session s1", "session", day1),
    "pair facts": (
        "facts",
        "New messages (Monday 8 May 2023):\nAna: I adopted",
        "facts of s1:0",
        "fact",
        lambda: day1()[:2],
    ),
}


@pytest.mark.parametrize("reply", sorted(BAD_REPLIES))
@pytest.mark.parametrize("unit", sorted(UNITS))
def test_invalid_output_is_retried_once_then_the_extractive_one_is_written(
    engine: Engine, script: Script, fake_model: Any, unit: str, reply: str
) -> None:
    """No hole: a unit whose model output stays invalid gets the extractive result, said
    word for word (or put in the third person by rule), and is done."""
    task, marker, named, stage, unit_turns = UNITS[unit]
    engine.add_memories(day1() + day2())
    fake_model.responder = failing(script, task, marker, BAD_REPLIES[reply])
    warnings: list[str] = []

    report = engine.consolidate(USER, warn=warnings.append)

    tries = [c for c in fake_model.structured_calls if c[0] == task and marker in c[1]]
    assert len(tries) == 2
    assert tries[0][4] == 0.0 and tries[1][4] > 0.0
    assert report.invalid == 1 and report.written_by["fallback"] == 1 and report.path == "llm"
    assert len(warnings) == 1 and named in warnings[0] and "extractive" in warnings[0] and report.warnings == warnings
    unit_ids = {t.id for t in unit_turns()}
    assert unit_ids <= done(engine, stage) and not unit_ids & skipped(engine, stage)
    said = [text for _, text in DAY1_TURNS]
    if stage == "day":
        assert sorted(m.day for m in stored(engine, Kind.EVENT_DAILY)) == [DAY1, DAY2]
        [summary] = [m for m in stored(engine, Kind.EVENT_DAILY) if m.day == DAY1]
        assert summary.text and all(line.split(": ", 1)[1] in " ".join(said) for line in summary.text.split("\n"))
    if stage == "session":  # session s2 folded the extractive memory of s1 with the model
        assert one(engine, Kind.RUNNING_SUMMARY).text
    if stage == "fact":
        assert "Ana adopted a puppy named Rex last spring in Lyon." in [m.text for m in stored(engine, Kind.FACT)]

    fake_model.responder = script
    fake_model.structured_calls.clear()
    assert engine.consolidate(USER).nothing_to_do
    assert engine.consolidate(USER, retry=True).nothing_to_do


def test_a_first_fold_of_one_day_is_that_day_without_a_model_call(
    engine: Engine, script: Script, fake_model: Any
) -> None:
    engine.add_memories(day1())

    engine.consolidate(USER)

    assert not any(c[1].startswith("Summaries of the days") or DAY1 + ": " in c[1] for c in fake_model.structured_calls)
    [daily_summary], [daily_portrait] = stored(engine, Kind.EVENT_DAILY), stored(engine, Kind.PORTRAIT_DAILY)
    assert one(engine, Kind.EVENT_GLOBAL).text == daily_summary.text
    assert one(engine, Kind.PORTRAIT_GLOBAL).text == daily_portrait.text


@pytest.mark.parametrize("kind", [Kind.EVENT_GLOBAL, Kind.PORTRAIT_GLOBAL])
def test_a_global_fold_with_invalid_output_is_folded_by_extraction(
    engine: Engine, script: Script, fake_model: Any, kind: Kind
) -> None:
    engine.add_memories(day1() + day2())
    task = "summary" if kind is Kind.EVENT_GLOBAL else "portrait"
    fake_model.responder = failing(script, task, f"{DAY1}: ", BAD_REPLIES["junk"])
    report = engine.consolidate(USER)
    assert report.invalid == 1 and report.written_by["fallback"] == 1
    daily = [m for m in stored(engine, Kind.EVENT_DAILY if kind is Kind.EVENT_GLOBAL else Kind.PORTRAIT_DAILY)]
    # the daily ones' own lines, chosen: nothing the model wrote for the fold
    assert one(engine, kind).text and set(one(engine, kind).text.split("\n")) <= {
        line for d in daily for line in d.text.split("\n")
    }

    fake_model.responder = script
    assert engine.consolidate(USER).nothing_to_do
    assert engine.consolidate(USER, retry=True).nothing_to_do


# 3. grounding: facts not in their source turn are rejected ---------------------------------


def source_turn(speaker: str, text: str, day: str = DAY1) -> SourceTurn:
    """A source turn as fact extraction builds it: ``speaker: text`` and the day's date words."""
    return SourceTurn(speaker, text, Grounding(f"{speaker}: {text} {date_words_of(day)}"))


def date_words_of(day: str) -> str:
    from memcli.consolidation.consolidate import date_words

    return date_words(datetime.fromisoformat(f"{day}T10:00:00").timestamp())


ADOPTION = source_turn("Ana", "I adopted a puppy named Rex last spring in Lyon.")


@pytest.mark.parametrize(
    "fact",
    [
        "Ana adopted a puppy named Rex.",
        "Ana adopted a puppy in Lyon last spring.",
        "Rex is a puppy that Ana adopted.",
        "Ana adopted a puppy on 8 May 2023.",
    ],
)
def test_fact_said_by_its_speaker_is_grounded(fact: str) -> None:
    assert fact_problem(fact, [ADOPTION], 0.6) is None


@pytest.mark.parametrize(
    ("fact", "why"),
    [
        ("Ana adopted a puppy named Max.", "'Max' is not in its source"),
        ("Ana adopted 3 puppies named Rex.", "'3' is not in its source"),
        ("Ana adopted a puppy named Rex in Paris.", "'Paris' is not in its source"),
        ("Ana adopted a puppy in 2021.", "'2021' is not in its source"),
        ("Ana enjoys sailing, skiing, climbing and painting with Rex.", "of its words are in its source"),
        ("Did Ana adopt a puppy named Rex?", "question"),
        ("Ana: I adopted a puppy named Rex.", "transcript line"),
        ("I adopted a puppy named Rex last spring.", "third person"),
        ("You adopted a puppy named Rex.", "third person"),
        ("The puppy was adopted last spring.", "names nobody"),
    ],
)
def test_fact_not_in_its_source_is_rejected(fact: str, why: str) -> None:
    problem = fact_problem(fact, [ADOPTION], 0.6)
    assert problem is not None and why in problem


def test_fact_about_the_person_addressed_is_rejected() -> None:
    said = source_turn("Mel", "Hey Caroline! I ran a charity race last Saturday.")
    assert "Caroline" in fact_problem("Caroline ran a charity race last Saturday.", [said], 0.6)
    assert fact_problem("Mel ran a charity race last Saturday.", [said], 0.6) is None


def test_fact_pieced_together_from_two_turns_is_rejected() -> None:
    turns = [source_turn("Ana", "I adopted a puppy named Rex."), source_turn("Ana", "We moved to Lisbon in June.")]
    assert fact_problem("Ana adopted a puppy named Rex.", turns, 0.6) is None
    assert fact_problem("Ana moved to Lisbon in June.", turns, 0.6) is None
    assert fact_problem("Ana adopted a puppy named Rex in Lisbon.", turns, 0.6) is not None


@pytest.mark.parametrize(
    ("text", "name", "spoken_of"),
    [
        ("Hey Caroline! I ran a race.", "Caroline", False),
        ("Thanks, Caroline, that helps.", "Caroline", False),
        ("Caroline, did you see it?", "Caroline", False),
        ("Hi Caroline how are you", "Caroline", False),
        ("Congrats Mel!", "Mel", False),
        ("I ran a race with Caroline on Sunday.", "Caroline", True),
        ("Caroline's sister ran too.", "Caroline", True),
        ("Hey Mel! Caroline ran too.", "Caroline", True),
        ("Hey Mel! I saw Mel's painting.", "Mel", True),
        ("Nobody else ran.", "Caroline", False),
    ],
)
def test_mentions_tells_a_person_spoken_of_from_the_person_addressed(text: str, name: str, spoken_of: bool) -> None:
    assert mentions(text, name) is spoken_of


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("Ana adopted a puppy named Rex.", None),
        ("Mel: I ran a race.", "transcript line"),
        # what the embedded model wrote on LoCoMo conv-26, and the guard once let through
        ("Melanie:", "transcript line"),
        ("Melanie]: Wow!", "transcript line"),
        ("(Caroline): Mel ran a race.", "transcript line"),
        ("Melanie ran.", None),
        ("Melanie!", "fewer than 2 words"),
        ("Ana asked whether Rex likes parks?", "question"),
        ("We adopted a puppy.", "third person"),
        ("Ana told me about Rex.", "third person"),
        ("Ana thanked you for the advice.", "third person"),
    ],
)
def test_statement_problem_accepts_only_third_person_statements(text: str, problem: str | None) -> None:
    found = statement_problem(text)
    assert found is None if problem is None else problem in found


MEL_TURNS = [
    ("Mel", "Hey Caroline! I ran a charity race last Saturday."),
    ("Caroline", "Wow Mel, congrats on the race!"),
]


def test_consolidation_rejects_and_counts_ungrounded_facts(engine: Engine, script: Script, fake_model: Any) -> None:
    # two message pairs, so that the window may return the four candidates (MAX_FACTS a pair)
    engine.add_memories(
        day_turns(MEL_TURNS + [("Mel", "It was for mental health."), ("Caroline", "Amazing.")], DAY1, "s1")
    )
    candidates = [
        "Caroline ran a charity race.",
        "Mel ran a charity race in Paris.",
        "Did Mel run a charity race?",
        "Mel ran a charity race.",
    ]

    def respond(task: str, content: str) -> str:
        return json.dumps({"facts": candidates}) if task == "facts" else script(task, content)

    fake_model.responder = respond
    report = engine.consolidate(USER)

    assert [m.text for m in stored(engine, Kind.FACT)] == ["Mel ran a charity race."]
    assert (report.facts_added, report.facts_rejected, report.invalid) == (1, 3, 0)


def test_a_window_whose_every_fact_is_rejected_gets_the_extractive_facts(
    engine: Engine, script: Script, fake_model: Any
) -> None:
    engine.add_memories(day_turns(MEL_TURNS, DAY1, "s1"))

    def respond(task: str, content: str) -> str:
        return json.dumps({"facts": ["Caroline ran a charity race."]}) if task == "facts" else script(task, content)

    fake_model.responder = respond
    warnings: list[str] = []
    report = engine.consolidate(USER, warn=warnings.append)

    assert [m.text for m in stored(engine, Kind.FACT)] == ["Mel ran a charity race last Saturday."]
    assert report.facts_rejected == 1 and report.facts_added == 1
    assert any("every fact rejected" in w and "Caroline ran" in w for w in warnings)
    assert report.written_by.get("fallback", 0) >= 1


# 4. duplicates ---------------------------------------------------------------------------------


def test_same_fact_twice_in_one_reply_is_stored_once(engine: Engine, script: Script, fake_model: Any) -> None:
    engine.add_memories(day1()[:2])

    def respond(task: str, content: str) -> str:
        twice = ["Ana adopted a puppy named Rex.", "ana adopted a puppy named Rex!"]
        return json.dumps({"facts": twice}) if task == "facts" else script(task, content)

    fake_model.responder = respond
    report = engine.consolidate(USER)

    assert [m.text for m in stored(engine, Kind.FACT)] == ["Ana adopted a puppy named Rex."]
    assert (report.facts_added, report.facts_deduplicated) == (1, 1)


NEW_FACT = "Ana adopted a puppy named Rex last spring in Lyon."


@pytest.mark.parametrize(
    "known",
    [
        NEW_FACT,
        "ANA adopted a puppy named Rex, last spring, in Lyon",
        "In Lyon last spring Ana adopted a puppy named Rex.",
        "Last spring in Lyon Ana adopted a puppy she named Rex.",
    ],
    ids=["exact", "same words other case", "same words other order", "one word more"],
)
def test_fact_already_stored_is_not_stored_again(engine: Engine, script: Script, fake_model: Any, known: str) -> None:
    engine.add_memories(day1()[:2])
    old = add_fact(engine, known)
    assert cosine(engine, known, NEW_FACT) >= engine.settings.fact_dedup

    def respond(task: str, content: str) -> str:
        return json.dumps({"facts": [NEW_FACT]}) if task == "facts" else script(task, content)

    fake_model.responder = respond
    report = engine.consolidate(USER)

    assert [(m.id, m.text, m.valid_to) for m in stored(engine, Kind.FACT)] == [(old.id, known, 0.0)]
    assert (report.facts_added, report.facts_deduplicated, report.facts_updated) == (0, 1, 0)
    assert "events" not in tasks(fake_model)
    assert [e for e in history(engine) if e.kind == Kind.FACT.value] == []


# 5. contradictions: Mem0's UPDATE, DELETE, NOOP ------------------------------------------------

MOVE_TURNS = [
    ("Ana", "I now live in Lisbon with my puppy Rex, we moved there last week."),
    ("assistant", "How exciting! Do you like the city?"),
]
OLD_FACT = "Ana lives in Lyon with her puppy Rex."
MOVED_FACT = "Ana now lives in Lisbon with her puppy Rex."
UPDATED_FACT = "Ana moved from Lyon to Lisbon with her puppy Rex."


@pytest.fixture
def moved(engine: Engine, script: Script) -> tuple[Memory, list[Memory]]:
    """A stored fact (Ana lives in Lyon) and a day on which Ana says she moved to Lisbon."""
    old = add_fact(engine, OLD_FACT)
    turns = day_turns(MOVE_TURNS, DAY2, "s2")
    engine.add_memories(turns)
    similarity = cosine(engine, OLD_FACT, MOVED_FACT)
    assert RELATED_SIMILARITY <= similarity < engine.settings.fact_dedup
    return old, turns


def recalled_ids(engine: Engine, query: str, kind: str | None = None) -> list[str]:
    return [hit.memory.id for hit in engine.recall(query, USER, k=20, kind=kind, reinforce=False)]


def test_update_ends_the_old_fact_and_adds_the_new_one(
    engine: Engine, script: Script, fake_model: Any, moved: tuple[Memory, list[Memory]]
) -> None:
    old, turns = moved
    script.decision = {"event": "UPDATE", "target": 0, "text": UPDATED_FACT}

    report = engine.consolidate(USER)

    [decision] = [c for c in fake_model.structured_calls if c[0] == "events"]
    assert f"0. {OLD_FACT}" in decision[1] and MOVED_FACT in decision[1]
    ended = engine.get(old.id)
    assert ended.text == OLD_FACT and ended.valid_to == turns[0].created_at
    [new] = active_facts(engine)
    assert new.text == UPDATED_FACT and new.id != old.id
    assert new.source_ids == [t.id for t in turns] and new.valid_from == turns[0].created_at
    assert old.id not in recalled_ids(engine, OLD_FACT)
    assert old.id not in recalled_ids(engine, OLD_FACT, kind="fact")
    assert recalled_ids(engine, UPDATED_FACT, kind="fact")[0] == new.id
    assert [m.id for m in engine.list_memories(USER, kind="fact", limit=0)] == [new.id]
    [update] = history(engine, old.id)
    assert (update.event, update.old_text, update.new_text, update.related_id) == (
        "UPDATE",
        OLD_FACT,
        UPDATED_FACT,
        new.id,
    )
    assert update.source_ids == [t.id for t in turns]
    [add] = history(engine, new.id)
    assert (add.event, add.old_text, add.new_text, add.related_id) == ("ADD", "", UPDATED_FACT, old.id)
    assert (report.facts_updated, report.facts_added, report.facts_deleted, report.invalid) == (1, 0, 0, 0)


def test_delete_ends_the_old_fact_and_adds_nothing(
    engine: Engine, script: Script, moved: tuple[Memory, list[Memory]]
) -> None:
    old, turns = moved
    script.decision = {"event": "DELETE", "target": 0, "text": ""}

    report = engine.consolidate(USER)

    assert engine.get(old.id).valid_to == turns[0].created_at
    assert active_facts(engine) == []
    assert old.id not in recalled_ids(engine, OLD_FACT, kind="fact")
    [delete] = history(engine, old.id)
    assert (delete.event, delete.old_text, delete.new_text, delete.related_id) == ("DELETE", OLD_FACT, "", "")
    assert (report.facts_deleted, report.facts_added, report.facts_updated) == (1, 0, 0)


def test_noop_changes_no_fact(engine: Engine, script: Script, moved: tuple[Memory, list[Memory]]) -> None:
    old, _ = moved
    script.decision = {"event": "NOOP", "target": 0, "text": ""}

    report = engine.consolidate(USER)

    assert [(m.id, m.text, m.valid_to) for m in stored(engine, Kind.FACT)] == [(old.id, OLD_FACT, 0.0)]
    assert history(engine, old.id) == []
    assert (report.facts_noop, report.facts_added, report.facts_updated, report.facts_deleted) == (1, 0, 0, 0)


PAINT_TURNS = [
    ("Ana", "I now live in Lisbon with my puppy Rex, we moved there last week."),
    ("assistant", "How exciting! Do you like the city?"),
    ("Ana", "I sketch boats at the harbour on Sundays."),
    ("assistant", "That sounds peaceful."),
]
OLD_PAINT_FACT = "Ana sketches boats at the harbour."
PAINT_FACT = "Ana sketches boats at the harbour on Sundays."


@pytest.fixture
def two_related(engine: Engine, script: Script, fake_model: Any) -> tuple[list[Memory], list[Memory]]:
    """Two stored facts and a session window of two pairs whose two new facts each relate to
    one of them (and not to the other)."""
    old = [add_fact(engine, OLD_FACT), add_fact(engine, OLD_PAINT_FACT, "paint")]
    turns = day_turns(PAINT_TURNS, DAY2, "s2")
    engine.add_memories(turns)
    for new, mine, other in ((MOVED_FACT, OLD_FACT, OLD_PAINT_FACT), (PAINT_FACT, OLD_PAINT_FACT, OLD_FACT)):
        assert RELATED_SIMILARITY <= cosine(engine, new, mine) < engine.settings.fact_dedup
        assert cosine(engine, new, other) < RELATED_SIMILARITY

    def respond(task: str, content: str) -> str:
        return json.dumps({"facts": [MOVED_FACT, PAINT_FACT]}) if task == "facts" else script(task, content)

    fake_model.responder = respond
    return old, turns


def test_the_new_facts_of_a_window_are_decided_in_one_call(
    engine: Engine, script: Script, fake_model: Any, two_related: tuple[list[Memory], list[Memory]]
) -> None:
    old, turns = two_related
    script.decision = {"event": "NOOP", "target": 0, "text": ""}

    report = engine.consolidate(USER)

    [facts_call] = [c for c in fake_model.structured_calls if c[0] == "facts"]
    [call] = [c for c in fake_model.structured_calls if c[0] == "events"]
    assert all(f"{t.speaker}: {t.text}" in facts_call[1] for t in turns)
    assert f"- {MOVED_FACT}\n- {PAINT_FACT}" in call[1] and OLD_FACT in call[1] and OLD_PAINT_FACT in call[1]
    assert call[2]["properties"]["events"]["minItems"] == call[2]["properties"]["events"]["maxItems"] == 2
    assert (report.facts_noop, report.facts_added, report.invalid) == (2, 0, 0), report.warnings
    assert sorted(m.id for m in active_facts(engine)) == sorted(m.id for m in old)
    assert {t.id for t in turns} <= done(engine, "fact")


def test_a_pair_whose_fact_stays_undecided_is_skipped_and_the_others_are_done(
    engine: Engine, script: Script, fake_model: Any
) -> None:
    add_fact(engine, OLD_FACT)
    turns = day_turns(PAINT_TURNS, DAY2, "s2")  # two pairs: the move (related to the stored fact), the sketching (new)
    engine.add_memories(turns)

    def respond(task: str, content: str) -> str:
        if task == "events":
            return "not JSON"
        return json.dumps({"facts": [MOVED_FACT, PAINT_FACT]}) if task == "facts" else script(task, content)

    fake_model.responder = respond
    report = engine.consolidate(USER)

    assert [m.text for m in active_facts(engine) if m.text != OLD_FACT] == [PAINT_FACT]
    assert {t.id for t in turns[:2]} <= skipped(engine, "fact") and {t.id for t in turns[2:]} <= done(engine, "fact")
    assert report.invalid == 1


def test_a_decision_may_only_end_a_fact_related_to_its_new_fact(
    engine: Engine, script: Script, fake_model: Any, two_related: tuple[list[Memory], list[Memory]]
) -> None:
    old, turns = two_related
    [call_shown] = [[]]
    original = script.__call__

    def respond(task: str, content: str) -> str:
        if task != "events":
            return json.dumps({"facts": [MOVED_FACT, PAINT_FACT]}) if task == "facts" else original(task, content)
        shown = content.split("Existing facts:\n")[1].split("\n\n")[0].split("\n")
        call_shown.append(shown)
        painting = next(i for i, line in enumerate(shown) if OLD_PAINT_FACT in line)
        return json.dumps(
            {
                "events": [
                    {"event": "DELETE", "target": painting, "text": ""},
                    {"event": "NOOP", "target": 0, "text": ""},
                ]
            }
        )

    fake_model.responder = respond
    warnings: list[str] = []
    report = engine.consolidate(USER, warn=warnings.append)

    assert len(call_shown) == 2  # the reply and its retry
    assert report.invalid == 1 and (report.facts_deleted, report.facts_added) == (0, 0), report.warnings
    assert all(engine.get(m.id).valid_to == 0.0 for m in old)
    assert {t.id for t in turns} <= skipped(engine, "fact")
    assert "not related" in warnings[0] and "Ana now lives" in warnings[0] and "Ana sketches" in warnings[0]


def test_an_update_to_the_old_facts_own_words_changes_nothing(
    engine: Engine, script: Script, moved: tuple[Memory, list[Memory]]
) -> None:
    old, _ = moved
    script.decision = {"event": "UPDATE", "target": 0, "text": OLD_FACT}

    report = engine.consolidate(USER)

    assert [(m.id, m.text, m.valid_to) for m in stored(engine, Kind.FACT)] == [(old.id, OLD_FACT, 0.0)]
    assert (report.facts_noop, report.facts_updated, report.facts_added) == (1, 0, 0)


def test_two_updates_of_one_pair_to_the_same_words_store_one_fact_and_end_both(
    engine: Engine, script: Script, fake_model: Any
) -> None:
    old = [add_fact(engine, OLD_FACT), add_fact(engine, OLD_PAINT_FACT, "paint")]
    turns = day_turns(
        [
            ("Ana", "I now live in Lisbon with my puppy Rex. I sketch boats at the harbour on Sundays."),
            ("assistant", "Lovely!"),
        ],
        DAY2,
        "s2",
    )
    engine.add_memories(turns)
    merged = "Ana sketches boats at the harbour in Lisbon on Sundays with her puppy Rex."

    def respond(task: str, content: str) -> str:
        if task == "events":  # each new fact updates its own old fact, both to the same words
            shown = content.split("Existing facts:\n")[1].split("\n\n")[0].split("\n")
            target = {
                fact: next(i for i, line in enumerate(shown) if fact in line) for fact in (OLD_FACT, OLD_PAINT_FACT)
            }
            return json.dumps(
                {
                    "events": [
                        {"event": "UPDATE", "target": target[OLD_FACT], "text": merged},
                        {"event": "UPDATE", "target": target[OLD_PAINT_FACT], "text": merged},
                    ]
                }
            )
        return json.dumps({"facts": [MOVED_FACT, PAINT_FACT]}) if task == "facts" else script(task, content)

    fake_model.responder = respond
    report = engine.consolidate(USER)

    assert report.invalid == 0, report.warnings
    [new] = active_facts(engine)
    assert new.text == merged and all(engine.get(m.id).valid_to == turns[0].created_at for m in old)
    assert (report.facts_updated, report.facts_deduplicated) == (2, 1)
    assert (
        sorted((e.event, e.related_id) for e in history(engine) if e.memory_id in {m.id for m in old})
        == [("UPDATE", new.id)] * 2
    )


@pytest.mark.parametrize(
    "decision",
    [
        {"event": "UPDATE", "target": 0, "text": "Ana moved from Lyon to Paris with her puppy Rex."},
        {"event": "UPDATE", "target": 0, "text": "Ana moved to Lisbon and bought a sailing boat and a bicycle."},
        {"event": "UPDATE", "target": 0, "text": ""},
        {"event": "UPDATE", "target": 0, "text": "I moved from Lyon to Lisbon with Rex."},
        {"event": "DELETE", "target": 1, "text": ""},
        {"event": "UPDATE", "target": 3, "text": UPDATED_FACT},
        {"event": "DELETE", "target": -1, "text": ""},
    ],
    ids=[
        "ungrounded place",
        "too few words",
        "empty text",
        "first person",
        "target past the facts",
        "far target",
        "negative target",
    ],
)
def test_invalid_decision_is_retried_then_the_fact_is_skipped(
    engine: Engine, script: Script, fake_model: Any, moved: tuple[Memory, list[Memory]], decision: dict[str, Any]
) -> None:
    old, _ = moved
    script.decision = decision
    warnings: list[str] = []

    report = engine.consolidate(USER, warn=warnings.append)

    assert [c[4] > 0 for c in fake_model.structured_calls if c[0] == "events"] == [False, True]
    assert [(m.id, m.valid_to) for m in stored(engine, Kind.FACT)] == [(old.id, 0.0)]
    assert history(engine, old.id) == []
    assert report.invalid == 1 and (report.facts_added, report.facts_updated, report.facts_deleted) == (0, 0, 0)
    assert len(warnings) == 1 and "fact" in warnings[0] and "Ana now lives" in warnings[0]


def test_unrelated_stored_fact_is_never_shown_to_the_model(engine: Engine, script: Script, fake_model: Any) -> None:
    unrelated = add_fact(engine, "Ana collects old stamps from Norway.")
    engine.add_memories(day1()[:2])
    assert cosine(engine, unrelated.text, "Ana adopted a puppy named Rex.") < RELATED_SIMILARITY
    script.decision = {"event": "DELETE", "target": 0, "text": ""}

    report = engine.consolidate(USER)

    assert "events" not in tasks(fake_model)
    assert engine.get(unrelated.id).valid_to == 0.0
    assert sorted(m.text for m in active_facts(engine)) == ["Ana adopted a puppy named Rex.", unrelated.text]
    assert (report.facts_added, report.facts_deleted) == (1, 0)


# 6. killed midway, then resumed -----------------------------------------------------------------


def snapshot(engine: Engine) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    """Every memory (id, kind, day, text, sources, validity) and every history row of the store."""
    with engine.store.transaction():
        memories = engine.store.memories()
        rows = engine.store.sidecar.history(user=USER)
    return (
        sorted((m.id, m.kind, m.day, m.text, tuple(m.source_ids), m.valid_from, m.valid_to) for m in memories),
        sorted(
            (e.memory_id, e.kind, e.event, e.old_text, e.new_text, e.at, tuple(e.source_ids), e.related_id)
            for e in rows
        ),
    )


def conversation_with_an_update(engine: Engine, script: Script) -> None:
    """Three days, three sessions, four message pairs, and a stored fact that the fourth pair updates."""
    add_fact(engine, OLD_FACT)
    engine.add_memories(day1() + day2() + day_turns(MOVE_TURNS, "2023-05-12", "s5"))
    script.decision = {"event": "UPDATE", "target": 0, "text": UPDATED_FACT}


CALLS = 15
"""Structured calls of an uninterrupted run of ``conversation_with_an_update``: 3 days x
(summary, portrait), the global summary and portrait, 3 running memories, 3 fact
extractions (one per session window: the first session's two pairs are one) and 1 decision."""


KILL_POINTS = [
    1,  # the first day's summary
    2,  # its portrait, the summary made
    4,  # the second day's portrait, the first day written
    7,  # the global summary, every day written
    8,  # the global portrait
    10,  # the second session's running memory
    13,  # the second window's facts
    CALLS,  # the decision on the last window's fact
]


@pytest.mark.parametrize("kill_at", KILL_POINTS)
def test_run_killed_midway_resumes_to_the_same_store_as_an_uninterrupted_run(
    tmp_path: Path, script: Script, fake_model: Any, kill_at: int
) -> None:
    reference = make_memcli(resolve_paths({"MEMCLI_HOME": str(tmp_path / "uninterrupted")}))
    conversation_with_an_update(reference, script)
    reference.consolidate(USER)
    assert len(fake_model.structured_calls) == CALLS
    assert tasks(fake_model)[-1] == "events"

    engine = make_memcli()
    conversation_with_an_update(engine, script)
    calls = 0

    def killed(task: str, content: str) -> str:
        nonlocal calls
        calls += 1
        if calls == kill_at:
            raise KeyboardInterrupt
        return script(task, content)

    fake_model.responder = killed
    with pytest.raises(KeyboardInterrupt):
        engine.consolidate(USER)

    fake_model.responder = script
    resumed = make_memcli()
    report = resumed.consolidate(USER)

    assert report.invalid == 0
    (memories, rows), (expected_memories, expected_rows) = snapshot(resumed), snapshot(reference)
    assert [m for m in expected_memories if m not in memories] == []  # missing
    assert [m for m in memories if m not in expected_memories] == []  # extra or different
    assert rows == expected_rows
    texts = [m.text for m in active_facts(resumed)]
    assert len(texts) == len(set(texts)) == 4
    assert resumed.consolidate(USER).nothing_to_do


# 7. idempotent and incremental ----------------------------------------------------------------------


def test_second_run_with_nothing_new_calls_no_model(engine: Engine, script: Script, fake_model: Any) -> None:
    engine.add_memories(day1() + day2())
    engine.consolidate(USER)
    before = snapshot(engine)
    calls = len(fake_model.structured_calls)

    again = engine.consolidate(USER)

    assert again.nothing_to_do and (again.days, again.sessions, again.pairs, again.summaries) == (0, 0, 0, 0)
    assert len(fake_model.structured_calls) == calls
    assert snapshot(engine) == before


def test_new_day_is_consolidated_alone_and_updates_the_global_summary(
    engine: Engine, script: Script, fake_model: Any
) -> None:
    engine.add_memories(day1())
    engine.consolidate(USER)
    first_global = one(engine, Kind.EVENT_GLOBAL)
    first_running = one(engine, Kind.RUNNING_SUMMARY)
    fake_model.structured_calls.clear()
    engine.add_memories(day2())

    report = engine.consolidate(USER)

    assert (report.days, report.sessions, report.pairs) == (1, 1, 1)
    assert sorted(tasks(fake_model)) == sorted(["summary", "portrait", "summary", "portrait", "memory", "facts"])
    assert all("I adopted a puppy" not in c[1] for c in fake_model.structured_calls if c[0] != "facts")
    [facts_call] = [c for c in fake_model.structured_calls if c[0] == "facts"]
    assert "New messages (Tuesday 9 May 2023):\nAna: I took the train" in facts_call[1]
    assert "Earlier messages:" in facts_call[1] and "I adopted a puppy" in facts_call[1]  # context, not new
    events = one(engine, Kind.EVENT_GLOBAL)
    assert events.text != first_global.text
    assert Script.SUMMARIES["puppy named Rex"] in events.text and Script.SUMMARIES["train to Lisbon"] in events.text
    assert [(e.event, e.old_text, e.new_text) for e in history(engine, events.id)] == [
        ("ADD", "", first_global.text),
        ("UPDATE", first_global.text, events.text),
    ]
    running = one(engine, Kind.RUNNING_SUMMARY)
    assert running.text.split("\n") == [Script.SUMMARIES["puppy named Rex"], Script.SUMMARIES["train to Lisbon"]]
    assert [e.event for e in history(engine, first_running.id)] == ["ADD", "UPDATE"]
    assert [m.day for m in stored(engine, Kind.EVENT_DAILY)] == [DAY1, DAY2]


def test_turn_added_to_a_consolidated_day_resummarises_the_whole_day(
    engine: Engine, script: Script, fake_model: Any
) -> None:
    turns = day1()
    engine.add_memories(turns[:2])
    engine.consolidate(USER)
    fake_model.structured_calls.clear()
    engine.add_memories(turns[2:])

    report = engine.consolidate(USER)

    assert (report.days, report.sessions, report.pairs) == (1, 1, 1)
    [daily] = stored(engine, Kind.EVENT_DAILY)
    assert daily.source_ids == [t.id for t in turns]
    [summary_call] = [c for c in fake_model.structured_calls if c[0] == "summary" and "Conversation of" in c[1]]
    # every turn is read again, for what it tells: the assistant's question is no event (issue 33)
    assert all(t.text in summary_call[1] for t in told(turns)) and len(told(turns)) == len(turns)
    assert "How old is Rex now?" not in summary_call[1]
    [memory_call] = [c for c in fake_model.structured_calls if c[0] == "memory"]
    assert turns[2].text in memory_call[1] and turns[0].text not in memory_call[1].split("New conversation")[1]


@pytest.mark.parametrize(
    ("task", "reply"),
    [
        ("summary", {"summary": "Ana adopted a puppy named Rex in Paris."}),
        ("summary", {"summary": "Ana adopted a puppy named Rex and bought a red sailing boat, skis and a violin."}),
        ("summary", {"summary": "I adopted a puppy named Rex last spring."}),
        ("summary", {"summary": "Ana: I adopted a puppy named Rex."}),
        ("portrait", {"portrait": "Ana and Quentin are caring people."}),
        ("portrait", {"portrait": "You are caring and proud of Rex."}),
        ("portrait", {"portrait": "A is determined and proud of the achievement despite the pain."}),
    ],
    ids=[
        "unknown place",
        "too few words",
        "first person",
        "transcript line",
        "unknown person",
        "second person",
        "worked example copied",
    ],
)
def test_ungrounded_daily_summary_or_portrait_is_invalid(
    engine: Engine, script: Script, fake_model: Any, task: str, reply: dict[str, str]
) -> None:
    engine.add_memories(day1())
    marker = (
        "Conversation of Monday 8 May 2023" if task == "summary" else "I adopted a puppy"
    )  # the day's, not the fold's
    fake_model.responder = failing(script, task, marker, lambda good: json.dumps(reply))

    report = engine.consolidate(USER)

    assert [c[0] for c in fake_model.structured_calls if marker in c[1]].count(task) == 2
    assert report.invalid == 1 and report.written_by["fallback"] == 1
    [summary] = stored(engine, Kind.EVENT_DAILY)
    assert "summary" not in reply or reply["summary"] not in summary.text
    assert all(line.split(": ", 1)[1] in " ".join(t for _, t in DAY1_TURNS) for line in summary.text.split("\n"))
    assert "portrait" not in reply or all(reply["portrait"] not in m.text for m in stored(engine, Kind.PORTRAIT_DAILY))
    assert done(engine, "day") == {t.id for t in day1()} and not skipped(engine, "day")


def test_running_memory_keeps_only_grounded_sentences(engine: Engine, script: Script, fake_model: Any) -> None:
    engine.add_memories(day1())
    kept = "Ana adopted a puppy named Rex in Lyon."
    reply = {
        "memory": [kept, "Ana moved to Paris in 2019.", "I adopted a puppy named Rex.", "Did Ana adopt Rex?", kept]
    }
    fake_model.responder = lambda task, content: json.dumps(reply) if task == "memory" else script(task, content)

    report = engine.consolidate(USER)

    assert one(engine, Kind.RUNNING_SUMMARY).text == kept
    assert report.invalid == 0 and [t for t in tasks(fake_model) if t == "memory"] == ["memory"]


def test_running_memory_with_no_grounded_sentence_is_invalid(engine: Engine, script: Script, fake_model: Any) -> None:
    engine.add_memories(day1())
    reply = {"memory": ["Ana moved to Paris in 2019.", "Quentin sold the bakery."]}
    fake_model.responder = lambda task, content: json.dumps(reply) if task == "memory" else script(task, content)

    report = engine.consolidate(USER)

    assert [t for t in tasks(fake_model) if t == "memory"] == ["memory", "memory"]
    assert report.invalid == 1
    memory = one(engine, Kind.RUNNING_SUMMARY).text  # the extractive one: said that day
    assert "Paris" not in memory and "Quentin" not in memory and "Rex" in memory
    assert done(engine, "session") == {t.id for t in day1()}


GARDEN = {
    "summary": {"summary": "Ana planted the garden beds."},
    "portrait": {"portrait": "Ana is patient."},
    "memory": {"memory": ["Ana planted the garden beds."]},
    "facts": {"facts": []},
}


def test_fact_extraction_reads_a_window_of_pairs_and_the_ten_messages_before_it(
    engine: Engine, fake_model: Any
) -> None:
    turns = day_turns(
        [("Ana" if i % 2 == 0 else "assistant", f"Garden bed {i} is planted.") for i in range(16)], DAY1, "s1"
    )
    engine.add_memories(turns)
    fake_model.responder = lambda task, content: json.dumps(GARDEN[task])

    report = engine.consolidate(USER)

    extractions = [c for c in fake_model.structured_calls if c[0] == "facts"]
    assert len(extractions) == 2 and report.pairs == 8  # windows of WINDOW_PAIRS pairs: 5 + 3
    first, last = extractions[0][1], extractions[-1][1]
    window = [f"{t.speaker}: {t.text}" for t in turns[2 * WINDOW_PAIRS :]]
    assert last.split("\n", last.count("\n") - len(window) + 1)[-1] == "\n".join(window)
    earlier = last.split("Earlier messages:\n")[1].split("\n\nNew messages")[0].split("\n")
    assert earlier == [f"{t.speaker}: {t.text}" for t in turns[2 * WINDOW_PAIRS - 10 : 2 * WINDOW_PAIRS]]
    assert "Memory:\nAna planted the garden beds." in last
    assert "Earlier messages" not in first
    assert first.endswith("\n".join(f"{t.speaker}: {t.text}" for t in turns[: 2 * WINDOW_PAIRS]))
    assert [c[2]["properties"]["facts"]["maxItems"] for c in extractions] == [
        min(WINDOW_FACTS, MAX_FACTS * 5),
        min(WINDOW_FACTS, MAX_FACTS * 3),
    ]


def test_pair_of_assistant_turns_asks_for_no_facts_and_is_done(engine: Engine, fake_model: Any) -> None:
    turns = day_turns(
        [("Ana", "The garden beds are planted."), ("assistant", "Well done!"), ("assistant", "Water them tonight.")],
        DAY1,
        "s1",
    )
    engine.add_memories(turns)
    fake_model.responder = lambda task, content: json.dumps(GARDEN[task])

    report = engine.consolidate(USER)

    assert tasks(fake_model).count("facts") == 1 and report.pairs == 2
    assert {t.id for t in turns} <= done(engine, "fact")


# 8. locks -----------------------------------------------------------------------------------------


def test_store_lock_is_free_while_the_model_runs(engine: Engine, script: Script, fake_model: Any) -> None:
    engine.add_memories(day1())
    other = make_memcli(lock_timeout=0)
    with engine.store.transaction(), pytest.raises(StoreLockedError):
        other.remember("The store is locked inside a transaction.")  # the probe can fail
    written: list[str] = []

    def respond(task: str, content: str) -> str:
        with MemoryStore(engine.paths, lock_timeout=0).transaction() as store:
            store.count()
        note, _ = other.remember(f"Written during the {task} call number {len(written)}.", user=USER)
        written.append(note.id)
        return script(task, content)

    fake_model.responder = respond
    report = engine.consolidate(USER)

    assert (
        len(written) == len(fake_model.structured_calls) == 4
    )  # 2 daily, 1 running, 1 window of 2 pairs (one day: no global call)
    assert report.invalid == 0
    assert {m.id for m in stored(engine, Kind.NOTE)} == set(written)


def test_second_consolidation_fails_while_one_runs(engine: Engine, script: Script, fake_model: Any) -> None:
    engine.add_memories(day1())
    other = make_memcli(lock_timeout=0.3)
    failures: list[tuple[str, float]] = []

    def respond(task: str, content: str) -> str:
        if not failures:
            started = time.monotonic()
            with pytest.raises(StoreLockedError) as caught:
                other.consolidate(USER)
            failures.append((caught.value.message, time.monotonic() - started))
        return script(task, content)

    fake_model.responder = respond
    report = engine.consolidate(USER)

    [(message, waited)] = failures
    assert "consolidate" in message and waited >= 0.3
    assert report.invalid == 0 and report.days == 1
    assert other.consolidate(USER).nothing_to_do  # the lock is released after the run


def test_interrupted_run_releases_the_consolidation_lock(engine: Engine, script: Script, fake_model: Any) -> None:
    engine.add_memories(day1())

    def interrupted(task: str, content: str) -> str:
        raise KeyboardInterrupt

    fake_model.responder = interrupted
    with pytest.raises(KeyboardInterrupt):
        engine.consolidate(USER)
    fake_model.responder = script
    assert make_memcli(lock_timeout=0).consolidate(USER).days == 1


# 12. bounded schemas and token caps ----------------------------------------------------------------


def unbounded(schema: Any, where: str = "$") -> list[str]:
    """Paths in a JSON schema of strings without maxLength (or enum) and arrays without maxItems."""
    found: list[str] = []
    if isinstance(schema, dict):
        kind = schema.get("type")
        bounded = "enum" in schema or "const" in schema
        if kind == "string" and "maxLength" not in schema and not bounded:
            found.append(where)
        if kind == "array" and "maxItems" not in schema:
            found.append(where)
        for key, value in schema.items():
            found += unbounded(value, f"{where}.{key}")
    elif isinstance(schema, list):
        for i, value in enumerate(schema):
            found += unbounded(value, f"{where}[{i}]")
    return found


def test_unbounded_finds_an_unbounded_string_and_array() -> None:
    class Loose(BaseModel):
        name: str
        tags: list[str] = Field(max_length=3)

    assert unbounded(Loose.model_json_schema()) == ["$.properties.name", "$.properties.tags.items"]


def test_every_schema_sent_bounds_its_strings_and_lists_and_every_call_caps_tokens(
    engine: Engine, script: Script, fake_model: Any
) -> None:
    conversation_with_an_update(engine, script)
    engine.consolidate(USER)

    calls = fake_model.structured_calls
    assert {c[0] for c in calls} == {"summary", "portrait", "memory", "facts", "events"}
    for task, _, schema, max_tokens, _ in calls:
        assert unbounded(schema) == [], task
        assert isinstance(max_tokens, int) and 0 < max_tokens < engine.settings.n_ctx, task
    [decision] = [c[2] for c in calls if c[0] == "events"]
    assert decision["$defs"]["DecisionOutput"]["properties"]["target"]["enum"] == [0]
    assert decision["properties"]["events"]["minItems"] == decision["properties"]["events"]["maxItems"] == 1
    for schema in (c[2] for c in calls if c[0] == "facts"):
        assert schema["properties"]["facts"]["maxItems"] <= WINDOW_FACTS


# 13. structured_output -----------------------------------------------------------------------------


class Pet(BaseModel):
    name: str = Field(max_length=20)
    age: int


class Replies:
    """A model whose structured replies are scripted; records (temperature, seed) of each call."""

    name = "replies"

    def __init__(self, *replies: str) -> None:
        self.replies = list(replies)
        self.calls: list[tuple[float, int, int]] = []

    def structured(
        self, messages: Sequence[Message], schema: dict, max_tokens: int, temperature: float = 0.0, seed: int = 0
    ) -> str:
        self.calls.append((temperature, seed, max_tokens))
        return self.replies.pop(0)


ASK = [Message("user", "Describe the pet.")]


def test_structured_output_valid_at_once_makes_one_greedy_call() -> None:
    model = Replies('{"name": "Rex", "age": 2}')
    assert structured_output(model, ASK, Pet, 50) == Pet(name="Rex", age=2)
    assert [(t, m) for t, _, m in model.calls] == [(0.0, 50)]


@pytest.mark.parametrize(
    "bad", ["not JSON", '{"name": "Rex", "ag', '{"name": "Rex"}', '{"name": "Rexxxxxxxxxxxxxxxxxxxxxxx", "age": 2}', ""]
)
def test_structured_output_retries_an_invalid_reply_once_with_sampling(bad: str) -> None:
    model = Replies(bad, '{"name": "Rex", "age": 2}')
    assert structured_output(model, ASK, Pet, 50).name == "Rex"
    [(first, first_seed, _), (second, second_seed, _)] = model.calls
    assert first == 0.0 and second == RETRY_TEMPERATURE > 0 and first_seed != second_seed


def test_structured_output_invalid_twice_names_both_problems() -> None:
    model = Replies("not JSON", '{"name": "Rex"}')
    with pytest.raises(InvalidOutputError) as caught:
        structured_output(model, ASK, Pet, 50)
    assert "not JSON" in caught.value.message and "age" in caught.value.message
    assert len(model.calls) == 2


def test_structured_output_check_raising_value_error_counts_as_invalid() -> None:
    def adult(pet: Pet) -> None:
        if pet.age < 18:
            raise ValueError(f"{pet.name} is only {pet.age}")

    model = Replies('{"name": "Rex", "age": 2}', '{"name": "Ida", "age": 3}')
    with pytest.raises(InvalidOutputError) as caught:
        structured_output(model, ASK, Pet, 50, check=adult)
    assert "Rex is only 2" in caught.value.message and "Ida is only 3" in caught.value.message

    model = Replies('{"name": "Rex", "age": 2}', '{"name": "Ida", "age": 30}')
    assert structured_output(model, ASK, Pet, 50, check=adult).name == "Ida"


def test_a_model_that_times_out_is_not_asked_again() -> None:
    class Rambling(Replies):
        def structured(self, messages, schema, max_tokens, temperature=0.0, seed=0):  # type: ignore[override]
            self.calls.append((temperature, seed, max_tokens))
            raise TimeoutError("the model was still writing after 5 s (model_timeout)")

    model = Rambling()
    with pytest.raises(InvalidOutputError) as caught:
        structured_output(model, ASK, Pet, 50)
    assert "after 5 s" in caught.value.message and len(model.calls) == 1


def test_worked_examples_name_nobody_a_model_could_copy() -> None:
    from memcli.models.prompts import EXAMPLES

    for task, examples in EXAMPLES.items():
        for material, reply in examples:
            calendar = {f"{d:%A}" for d in (datetime(2024, 1, i) for i in range(1, 8))} | {
                f"{datetime(2024, m, 1):%B}" for m in range(1, 13)
            }
            names = set(re.findall(r"\b[A-Z][a-z]\w*", repr(json.loads(reply)))) - calendar
            assert names == set(), (task, names)
            assert set(re.findall(r"(?m)^(\w+):", material)) <= {"A", "B"}, task


def test_structured_output_sends_the_given_schema_or_the_models() -> None:
    sent: list[dict] = []

    class Recorder(Replies):
        def structured(self, messages, schema, max_tokens, temperature=0.0, seed=0):  # type: ignore[override]
            sent.append(schema)
            return super().structured(messages, schema, max_tokens, temperature, seed)

    structured_output(Recorder('{"name": "Rex", "age": 2}'), ASK, Pet, 50)
    custom = {"type": "object", "properties": {"name": {"enum": ["Rex"]}, "age": {"type": "integer"}}}
    structured_output(Recorder('{"name": "Rex", "age": 2}'), ASK, Pet, 50, schema=custom)
    assert sent == [Pet.model_json_schema(), custom]


# 14. properties of the plan and of grounding -------------------------------------------------------

PROPERTY = settings(deadline=None, max_examples=150)
PLAN_DAYS = ["2023-05-08", "2023-05-09", "2023-05-10", "2023-05-11"]


Case = tuple[list[Memory], dict[str, dict[str, str]], str | None, str | None, bool]
"""Turns, stage -> ids of turns through it, since, until."""


@st.composite
def histories(draw: st.DrawFn) -> Case:
    """Turns on a few days in a few sessions (or none: the day is the session), some of
    them already through some stages (done, or skipped as invalid), optional since / until
    bounds, and whether the run retries skipped work."""
    count = draw(st.integers(0, 14))
    turns = []
    for i in range(count):
        day = draw(st.sampled_from(PLAN_DAYS))
        session = draw(st.sampled_from(["", "a", "b"]))
        when = datetime.fromisoformat(f"{day}T10:00:00").timestamp() + draw(st.integers(0, 3000))
        turns.append(
            Memory(id=f"t{i:02d}", user=USER, kind="turn", text=f"turn {i}", created_at=when, day=day, session=session)
        )
    ids = [t.id for t in turns]
    statuses = st.sampled_from(["done", "skipped"])
    progress = {
        stage: {i: draw(statuses) for i in (draw(st.lists(st.sampled_from(ids), unique=True)) if ids else [])}
        for stage in ("day", "session", "fact")
    }
    progress["global"] = {}
    bounds = st.none() | st.sampled_from(PLAN_DAYS)
    return turns, progress, draw(bounds), draw(bounds), draw(st.booleans())


def to_do(progress: dict[str, dict[str, str]], stage: str, turn_id: str, retry: bool) -> bool:
    status = progress[stage].get(turn_id)
    return status is None or (retry and status == "skipped")


def in_range(day: str, since: str | None, until: str | None) -> bool:
    return (since is None or day >= since) and (until is None or day <= until)


@PROPERTY
@given(histories())
def test_plan_pairs_every_new_turn_once_in_session_order(case: Case) -> None:
    turns, progress, since, until, retry = case
    plan = make_plan(USER, turns, progress, (), since, until, retry)

    paired = [t.id for pair in plan.pairs for t in pair]
    wanted = {t.id for t in turns if in_range(t.day, since, until) and to_do(progress, "fact", t.id, retry)}
    assert sorted(paired) == sorted(wanted)
    assert all(1 <= len(pair) <= 2 for pair in plan.pairs)
    key = lambda t: t.session or t.day  # noqa: E731
    for pair in plan.pairs:
        assert len({key(t) for t in pair}) == 1
    for session in {key(t) for t in turns}:
        in_plan = [t for pair in plan.pairs for t in pair if key(t) == session]
        assert in_plan == sorted(in_plan, key=lambda t: (t.created_at, t.id))
        assert sum(len(p) == 1 for p in plan.pairs if key(p[0]) == session) <= 1
    firsts = [pair[0].created_at for pair in plan.pairs]
    assert firsts == sorted(firsts)


@PROPERTY
@given(histories())
def test_plan_redoes_every_day_and_session_with_a_new_turn(case: Case) -> None:
    turns, progress, since, until, retry = case
    plan = make_plan(USER, turns, progress, (), since, until, retry)

    days = {t.day for t in turns if in_range(t.day, since, until) and to_do(progress, "day", t.id, retry)}
    assert set(plan.days) == days
    for day, day_turns_ in plan.days.items():
        assert sorted(t.id for t in day_turns_) == sorted(t.id for t in turns if t.day == day)
    sessions = {}
    for t in sorted(turns, key=lambda t: (t.created_at, t.id)):
        if in_range(t.day, since, until) and to_do(progress, "session", t.id, retry):
            sessions.setdefault(t.session or t.day, []).append(t.id)
    assert {s: [t.id for t in ts] for s, ts in plan.sessions} == sessions
    assert len(plan.sessions) == len(sessions)
    assert plan.fold == bool(plan.days)  # no daily memory waits to be folded in
    assert plan.units == len(plan.days) + len(plan.sessions) + len(plan.pairs) + int(plan.fold)


@PROPERTY
@given(histories())
def test_plan_of_a_history_all_done_is_empty(case: Case) -> None:
    turns, _, since, until, retry = case
    everything = {t.id: "done" for t in turns}
    progress = {"day": everything, "session": everything, "fact": everything, "global": {}}
    plan = make_plan(USER, turns, progress, (), since, until, retry)
    assert plan.units == 0


words = st.text(alphabet="abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789", min_size=1, max_size=12)


@PROPERTY
@given(st.lists(words, min_size=1, max_size=30), st.data())
def test_text_made_only_of_source_words_is_grounded(source_words: list[str], data: st.DataObject) -> None:
    source = " ".join(source_words) + "."
    picked = data.draw(st.lists(st.sampled_from(source_words), min_size=1, max_size=20))
    text = " ".join(picked)
    assert Grounding(source).problem(text, 1.0) is None


@PROPERTY
@given(st.lists(words, min_size=1, max_size=30), st.sampled_from(["Zanzibar", "Quentin", "1987", "42nd"]))
def test_text_with_a_name_or_number_not_in_the_source_is_not_grounded(source_words: list[str], stranger: str) -> None:
    source = " ".join(
        w for w in source_words if not w.lower().startswith(stranger.lower()[:5]) and w.lower() != stranger.lower()
    )
    text = " ".join(source_words[:5] + [stranger])
    assert Grounding(source).problem(text, 0.0) is not None
