"""Consolidation for a person who mostly uses ``remember`` (issue 33 item 6): notes are read
with the turns of their day for its event summary and portrait (MemoryBank's daily memory),
on both paths, and an event summary tells what happened, not what was asked."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

import pytest
from test_consolidate import day_turns, make_memcli, stored

from memcli.consolidation.shared import make_plan
from memcli.memory import Kind, Memory, stable_id

USER = "Sam"
DAY = "2026-11-20"
NOTES = [
    "I signed up at PureGym in Manchester today and I feel proud of it.",
    "I love cycling to work on my Brompton every morning.",
    "I moved to Lisbon with my husband Rui in 2019.",
]
REQUESTS = [
    (USER, "Tell me a long story about my trip to Lisbon."),
    ("assistant", "Lisbon is a city of seven hills and yellow trams."),
    (USER, "Can you suggest a good stretching routine for after the gym?"),
    ("assistant", "Try five minutes of hamstring stretches after each session."),
    (USER, "请给我讲一个关于猫的故事。"),
    ("assistant", "从前有一只小猫，它每天在窗台上晒太阳。"),
    (USER, "What should I cook for dinner tonight after the gym?"),
]


def notes(texts: list[str], day: str = DAY) -> list[Memory]:
    at = datetime.fromisoformat(f"{day}T08:00:00").timestamp()
    return [
        Memory(
            id=stable_id("note", USER, text),
            user=USER,
            kind=Kind.NOTE.value,
            text=text,
            created_at=at + i,
            day=day,
            source="remember",
        )
        for i, text in enumerate(texts)
    ]


def texts(engine: Any, kind: Kind) -> str:
    return "\n".join(m.text for m in stored(engine, kind, USER))


def test_a_notes_only_users_portrait_and_summary_are_made_of_their_notes(fake_model: Any) -> None:
    engine = make_memcli(consolidation="extractive")
    engine.add_memories(notes(NOTES))
    report = engine.consolidate(USER)
    assert report.days == 1
    portrait = texts(engine, Kind.PORTRAIT_DAILY)
    assert "Sam loves cycling to work on Sam's Brompton every morning." in portrait
    assert "Sam: I moved to Lisbon with my husband Rui in 2019." in texts(engine, Kind.EVENT_DAILY)
    assert texts(engine, Kind.PORTRAIT_GLOBAL) and engine.consolidate(USER).nothing_to_do


def test_an_event_summary_tells_what_happened_not_what_was_asked(fake_model: Any) -> None:
    engine = make_memcli(consolidation="extractive")
    engine.add_memories(day_turns(REQUESTS, DAY, "s1", USER) + notes(NOTES[:2]))
    engine.consolidate(USER)
    summary = texts(engine, Kind.EVENT_DAILY)
    for asked in ("Tell me a long story", "stretching routine", "请给我讲", "What should I cook"):
        assert asked not in summary
    assert "PureGym in Manchester" in summary


def test_the_model_reads_notes_for_the_portrait_and_no_request_for_the_summary(fake_model: Any) -> None:
    sent: dict[str, list[str]] = {}

    def respond(task: str, content: str) -> str:
        sent.setdefault(task, []).append(content)
        if task == "summary":
            return json.dumps({"summary": "Sam signed up at PureGym in Manchester."})
        if task == "portrait":
            return json.dumps({"portrait": "Sam is proud and loves cycling to work."})
        return json.dumps({task: []})

    fake_model.responder = respond
    engine = make_memcli(consolidation="llm")
    engine.add_memories(day_turns(REQUESTS, DAY, "s1", USER) + notes(NOTES))
    engine.consolidate(USER)
    assert any("I love cycling to work on my Brompton" in c for c in sent["portrait"])
    assert any("PureGym in Manchester" in c for c in sent["summary"])
    assert not any("Tell me a long story" in c or "请给我讲" in c for c in sent["summary"])
    assert "Sam is proud and loves cycling to work." in texts(engine, Kind.PORTRAIT_DAILY)


@pytest.mark.parametrize("done", [False, True])
def test_a_day_of_notes_alone_is_a_day_to_consolidate_and_no_session(done: bool) -> None:
    written = notes(NOTES)
    progress: dict[str, dict[str, str]] = {"day": {}, "session": {}, "fact": {}, "global": {}}
    if done:
        progress["day"] = {n.id: "done" for n in written}
    plan = make_plan(USER, [], progress, notes=written)
    assert list(plan.days) == ([] if done else [DAY])
    assert plan.sessions == [] and plan.pairs == []
