"""Consolidation without a generative model (``consolidation = "extractive"``, or "auto"
with a base model that has no chat template): every day summarized from its own
sentences, the running memory folded, the user's own statements kept as facts, a question
never a fact, and the model never asked."""

from __future__ import annotations

from typing import Any

import pytest
from fakes.models import TemplatelessModel
from test_consolidate import DAY1, DAY2, USER, day_turns, make_memcli, stored

from memcli.consolidation.consolidate import Consolidator
from memcli.library.engine import Engine
from memcli.memory import Kind, singleton_id

GARDEN_TURNS = [
    ("Ana", "I planted tomatoes and basil in my garden this morning."),
    ("assistant", "Lovely! What else grows in your garden?"),
    ("Ana", "Do you think tomatoes need full sun?"),
    ("assistant", "Tomatoes need at least six hours of full sun every day."),
    ("Ana", "I love working in the garden after a long week at the hospital."),
]
TRAIN_TURNS = [
    ("Ana", "I took the night train to Lisbon with my sister Mila."),
    ("assistant", "How was the night train to Lisbon?"),
    ("Ana", "The night train was slow but we slept well."),
]


def days() -> list[Any]:
    return day_turns(GARDEN_TURNS, DAY1, "s1") + day_turns(TRAIN_TURNS, DAY2, "s2")


@pytest.fixture
def extractive(fake_model: Any) -> Engine:
    engine = make_memcli(consolidation="extractive")
    engine.add_memories(days())
    return engine


def said(turns: list[tuple[str, str]]) -> str:
    return " ".join(text for _, text in turns)


def test_every_day_gets_a_summary_of_its_own_sentences_with_speakers(extractive: Engine, fake_model: Any) -> None:
    report = extractive.consolidate(USER)
    assert fake_model.structured_calls == [] and report.path == "extractive" and report.invalid == 0
    summaries = {m.day: m.text for m in stored(extractive, Kind.EVENT_DAILY)}
    assert set(summaries) == {DAY1, DAY2}
    for day, turns in ((DAY1, GARDEN_TURNS), (DAY2, TRAIN_TURNS)):
        for line in summaries[day].split("\n"):
            speaker, text = line.split(": ", 1)
            assert speaker in ("Ana", "assistant") and text in said(turns)
    assert set(report.written_by) == {"extractive"}
    assert (
        report.days
        <= report.written_by["extractive"]
        <= report.days + 2 * report.folds + report.sessions + report.pairs
    )


def test_facts_are_the_users_own_statements_in_the_third_person_and_never_a_question(extractive: Engine) -> None:
    extractive.consolidate(USER)
    facts = [m.text for m in stored(extractive, Kind.FACT)]
    assert "Ana planted tomatoes and basil in Ana's garden this morning." in facts
    assert "Ana loves working in the garden after a long week at the hospital." in facts
    assert not any("?" in f or "full sun" in f for f in facts)  # her question, the assistant's answer
    assert not any(f.startswith("assistant") for f in facts)
    assert "Ana took the night train to Lisbon with Ana's sister Mila." in facts


def test_the_running_memory_and_global_summaries_are_written(extractive: Engine) -> None:
    extractive.consolidate(USER)
    running = extractive.store.get_many([singleton_id(Kind.RUNNING_SUMMARY, USER)])
    assert running and 0 < len(running[0].text.split("\n")) <= 20
    assert extractive.store.get_many([singleton_id(Kind.EVENT_GLOBAL, USER)])


def test_a_second_run_has_nothing_to_do(extractive: Engine) -> None:
    extractive.consolidate(USER)
    assert extractive.consolidate(USER).nothing_to_do


def test_the_portrait_holds_what_the_user_says_of_herself(extractive: Engine) -> None:
    extractive.consolidate(USER)
    portraits = " ".join(m.text for m in stored(extractive, Kind.PORTRAIT_DAILY))
    assert "Ana loves working in the garden" in portraits


@pytest.mark.parametrize(
    ("setting", "template", "path"),
    [("auto", False, "extractive"), ("auto", True, "llm"), ("llm", False, "llm"), ("extractive", True, "extractive")],
)
def test_the_path_follows_the_setting_and_for_auto_the_chat_template(
    fake_model: Any, setting: str, template: bool, path: str
) -> None:
    engine = make_memcli(consolidation=setting)
    if not template:
        engine._chat_model = TemplatelessModel(fake_model)  # the embedded default: a base model
    consolidator = Consolidator(engine)
    assert consolidator.extractive == (path == "extractive")
    assert consolidator.report.path == path


def test_a_statement_too_long_for_a_fact_is_rejected_not_a_crash(fake_model: Any) -> None:
    story = (
        "I spent the whole afternoon at the harbour watching the fishing boats come in, talking with the old sailors "
        "about storms, nets, engines, the prices at the market and the summers of their childhood by the sea."
    )
    engine = make_memcli(consolidation="extractive")
    engine.add_memories(
        day_turns([("Ana", story), ("assistant", "That sounds like a wonderful afternoon.")], DAY1, "s1")
    )
    report = engine.consolidate(USER)
    assert report.facts_rejected == 1 and report.facts_added == 0
    assert not any("harbour" in m.text for m in stored(engine, Kind.FACT))
