"""What a person reads first (issue 31): recall puts what was told above the questions
people asked and the base model's replies, the history of a note reopened by a delete keeps
its own text and says why it holds again, ``recall --explain`` names the memory that
replaced one, an answer says since when the current value holds, and "not found" is
documented as exit 0 with ``answered`` false."""

from __future__ import annotations

import json
from typing import Any

import pytest
from cli_checks import ask_at, ok, remember_at, show_json
from typer.testing import CliRunner

from memcli.cli import app
from memcli.errors import EXIT_CODE_MEANINGS, ExitCode
from memcli.memory import ASSISTANT, BASE_MODEL, Kind, Memory
from memcli.recall.retrieval import Recalled, after_statements


def _memory(text: str, n: int, kind: Kind = Kind.NOTE, speaker: str = "", tags: tuple[str, ...] = ()) -> Memory:
    return Memory(
        id=f"m{n}",
        user="ana",
        kind=kind.value,
        text=text,
        created_at=1000.0 + n,
        day="2026-11-27",
        speaker=speaker,
        tags=list(tags),
    )


def _hits(*memories: Memory) -> list[Recalled]:
    return [Recalled(m, 1.0 - i / 10, 1.0 - i / 10, 0.5) for i, m in enumerate(memories)]


def _texts(hits: list[Recalled]) -> list[str]:
    return [h.memory.text for h in hits]


# Recall: what was told first ----------------------------------------------------------------

QUESTION = _memory("Where do I live?", 1, Kind.TURN, "ana")
REPLY = _memory("You live in a lovely place by the sea.", 2, Kind.TURN, ASSISTANT, (BASE_MODEL,))
REQUEST = _memory("tell me a story about my home town", 3)
TOLD = _memory("I moved from Leeds to York last month.", 4)
ASKED_ZH = _memory("我住在哪里？", 5, Kind.TURN, "ana")
TOLD_ZH = _memory("搬家搞定了，现在住苏州。", 6)


def test_questions_requests_and_base_model_replies_go_below_what_was_told() -> None:
    ordered = after_statements(_hits(QUESTION, REPLY, REQUEST, TOLD), "Where do I live?", set())
    assert _texts(ordered) == [TOLD.text, QUESTION.text, REQUEST.text, REPLY.text]


def test_a_chinese_question_goes_below_the_chinese_statement() -> None:
    ordered = after_statements(_hits(ASKED_ZH, TOLD_ZH), "我住在哪里", set())
    assert _texts(ordered) == [TOLD_ZH.text, ASKED_ZH.text]


def test_the_same_memories_come_back_none_dropped() -> None:
    hits = _hits(REPLY, QUESTION, TOLD, REQUEST)
    assert sorted(_texts(after_statements(hits, "home", set()))) == sorted(_texts(hits))


def test_a_question_about_what_was_asked_keeps_the_questions_in_place() -> None:
    ordered = after_statements(_hits(QUESTION, TOLD), "What did I ask you about where I live?", set())
    assert _texts(ordered) == [QUESTION.text, TOLD.text]


def test_a_question_pointing_to_the_assistant_keeps_its_replies_in_place() -> None:
    ordered = after_statements(_hits(REPLY, TOLD), "What did you say about my home?", {ASSISTANT})
    assert _texts(ordered) == [REPLY.text, TOLD.text]


def test_an_assistant_turn_that_asks_is_no_person_asking() -> None:
    asked = _memory("Where would you like to go next?", 7, Kind.TURN, ASSISTANT)
    ordered = after_statements(_hits(asked, TOLD), "where", set())
    assert _texts(ordered) == [asked.text, TOLD.text]


def test_recall_puts_the_note_that_tells_above_the_same_question_asked_before(
    runner: CliRunner, fake_embedder: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    told = remember_at(runner, monkeypatch, "2026-11-20T09:00:00", "I moved from Leeds to York last month.")
    remember_at(runner, monkeypatch, "2026-11-27T09:00:00", "Where do I live?")
    hits = json.loads(ok(runner.invoke(app, ["recall", "Where do I live?", "--json"])).stdout)
    assert hits[0]["id"] == told
    assert len(hits) == 2


# History and explain ------------------------------------------------------------------------


def test_deleting_the_newer_note_keeps_the_older_notes_text_in_its_history(
    runner: CliRunner, fake_embedder: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    older = remember_at(runner, monkeypatch, "2024-01-01T09:00:00", "I live in Bristol.")
    newer = remember_at(runner, monkeypatch, "2025-01-01T09:00:00", "We moved to Cardiff last weekend.")
    ok(runner.invoke(app, ["delete", newer, "--yes"]))
    events = json.loads(ok(runner.invoke(app, ["history", older, "--json"])).stdout)
    assert [e["event"] for e in events] == ["UPDATE", "REOPEN"]
    assert events[0]["old_text"] == "I live in Bristol."
    assert "Cardiff" not in json.dumps(events)  # the deleted note's text is gone from every event
    assert show_json(runner, older)["superseded_by"] is None


def test_history_says_why_a_reopened_note_holds_again(
    runner: CliRunner, fake_embedder: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    older = remember_at(runner, monkeypatch, "2024-01-01T09:00:00", "I live in Bristol.")
    newer = remember_at(runner, monkeypatch, "2025-01-01T09:00:00", "We moved to Cardiff last weekend.")
    ok(runner.invoke(app, ["edit", newer, "--text", "We visited Cardiff last weekend."]))
    lines = ok(runner.invoke(app, ["history", older])).stdout.splitlines()
    reopen = next(line for line in lines if "\tREOPEN\t" in line)
    assert f"I live in Bristol. (holds again: {newer} was edited or deleted)" in reopen
    assert "->" not in reopen


def test_recall_explain_names_the_memory_that_replaced_one(
    runner: CliRunner, fake_embedder: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    older = remember_at(runner, monkeypatch, "2024-01-01T09:00:00", "I live in Bristol.")
    newer = remember_at(runner, monkeypatch, "2025-01-01T09:00:00", "We moved to Cardiff last weekend.")
    out = ok(runner.invoke(app, ["recall", "Where did I live before?", "--explain"])).stdout
    blocks: dict[str, list[str]] = {}
    current = ""
    for line in out.splitlines():
        if line.startswith("\t"):
            blocks[current].append(line)
        else:
            current = line.split("\t", 1)[0]
            blocks[current] = []
    assert f"\tsuperseded by {newer} on 2025-01-01" in blocks[older]
    assert not any("superseded by" in line for line in blocks[newer])


# Answers ------------------------------------------------------------------------------------


def test_the_answer_says_since_the_month_a_note_looks_back_to(
    runner: CliRunner, fake_embedder: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    remember_at(runner, monkeypatch, "2026-03-01T09:00:00", "I live in Leeds.")
    remember_at(runner, monkeypatch, "2026-11-20T09:00:00", "I moved from Leeds to York last month.")
    answer = ask_at(runner, monkeypatch, "2026-11-27T09:00:00", "Where do I live?")
    assert answer["answered"] is True
    assert "York" in answer["answer"]
    assert "[since October 2026; before:" in answer["answer"]


def test_the_answer_says_since_the_day_of_a_note_without_a_relative_date(
    runner: CliRunner, fake_embedder: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    remember_at(runner, monkeypatch, "2025-02-01T09:00:00", "I take atorvastatin 20 mg every evening.")
    remember_at(runner, monkeypatch, "2025-06-10T09:00:00", "The cardiologist raised my atorvastatin to 40 mg.")
    answer = ask_at(runner, monkeypatch, "2025-06-20T09:00:00", "How much atorvastatin do I take?")
    assert "40 mg" in answer["answer"].split("[since")[0]
    assert "[since Tuesday 10 June 2025; before:" in answer["answer"]


def test_not_found_is_documented_as_exit_0_with_answered_false(runner: CliRunner) -> None:
    assert "answered false" in EXIT_CODE_MEANINGS[ExitCode.OK]
    assert '"answered" is false' in ok(runner.invoke(app, ["ask", "--help"])).stdout.replace("\n", " ").replace(
        "  ", " "
    )


def test_a_list_in_the_present_leaves_out_the_value_a_change_replaced(
    runner: CliRunner, fake_embedder: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    older = remember_at(runner, monkeypatch, "2025-01-05T09:00:00", "I take lisinopril 10 mg once a day.")
    remember_at(runner, monkeypatch, "2025-01-08T09:00:00", "Started metformin 500mg with breakfast.")
    remember_at(runner, monkeypatch, "2025-01-10T09:00:00", "I drink two cups of coffee every morning.")
    newer = remember_at(runner, monkeypatch, "2025-03-02T09:00:00", "The GP raised my lisinopril dose to 20 mg.")
    assert show_json(runner, older)["superseded_by"] == newer
    answer = ask_at(runner, monkeypatch, "2025-03-10T09:00:00", "What medications do I take?")
    assert newer in answer["cited"] and len(answer["cited"]) >= 2
    assert older not in answer["cited"]
    assert "10 mg" not in answer["answer"]


def test_a_turn_that_tells_before_it_asks_stays_where_it_ranks() -> None:
    mixed = _memory("I went to the pride parade yesterday! Did you go?", 8, Kind.TURN, "ana")
    ordered = after_statements(_hits(mixed, TOLD), "pride parade", set())
    assert _texts(ordered) == [mixed.text, TOLD.text]


@pytest.mark.parametrize(
    ("later", "best", "another"),
    [
        ("The GP raised my lisinopril dose to 20 mg.", "The cardiologist raised my atorvastatin to 40 mg.", True),
        ("f/u appt — bumping zoloft up to 100mg starting monday", "started me on sertraline 50mg", False),
        ("levothyroxine going down to 50 mcg from monday", "thyroid bloods back, levo stays at 75 mcg", False),
        ("vit d low (18). doc wants 4000 IU/day now", "vit d 1000iu every morning w/ the fish oil", False),
        ("switched to rosuvastatin 10 mg", "atorvastatin 20 mg nightly", False),
    ],
)
def test_a_later_dose_is_of_another_medicine_only_when_surely_so(later: str, best: str, another: bool) -> None:
    from memcli.recall.answers import _another_medicine

    assert _another_medicine(later, best) is another


@pytest.mark.parametrize(
    "text",
    [
        'Last night I watched a great movie, "Looking Up" Have you seen it?',
        "我搬到苏州了，你去过吗？",
        "Good morning, my friend. The weather is really nice today. What kind of weather do you like?",
    ],
)
def test_a_turn_that_tells_before_a_question_without_its_own_sentence_keeps_its_place(text: str) -> None:
    told_first = _memory(text, 9, Kind.TURN, "ana")
    ordered = after_statements(_hits(told_first, TOLD), "movie", set())
    assert _texts(ordered) == [text, TOLD.text]


def test_a_question_opened_by_a_word_of_no_content_still_asks() -> None:
    asked = _memory("So, where do I live?", 10, Kind.TURN, "ana")
    asked_zh = _memory("嗯，我住在哪里？", 11, Kind.TURN, "ana")
    ordered = after_statements(_hits(asked, asked_zh, TOLD), "Where do I live?", set())
    assert _texts(ordered) == [TOLD.text, asked.text, asked_zh.text]
