"""``memcli eval qa LOCOMO``: a tiny LoCoMo-shaped conversation is imported into a temporary
store with the fake embedder, and its questions answered by the scripted fake model (or
extractively): a right answer scores 1 and a wrong one 0 by LoCoMo's metric, an adversarial
question is right when the answer says it is not mentioned, the baselines put the whole
conversation or nothing in the prompt, ``--json`` follows ``schema.QaEvalResult``, the table
has a row per category and overall, and the user's own store is never touched."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_checks import assert_error, ok
from typer.testing import CliRunner

from memcli.cli import app
from memcli.config import Settings
from memcli.errors import ExitCode
from memcli.library.evaluation import eval_qa, locomo_questions, without_citations
from memcli.models.llm import Message
from memcli.paths import resolve_paths
from memcli.schema import QaEvalResult

SESSION_1 = [
    ("Ana", "I adopted a puppy named Rex in Lyon last spring."),
    ("Bo", "That is wonderful news, what breed is the puppy?"),
    ("Ana", "Rex is a small beagle who loves long walks in the park."),
]
SESSION_2 = [
    ("Bo", "I finished the city marathon in four hours yesterday."),
    ("Ana", "Congratulations, that is a great time for a first marathon!"),
]
QUESTIONS = [
    {"question": "What breed is Ana's puppy Rex?", "answer": "beagle", "evidence": ["D1:3"], "category": 4},
    {
        "question": "How long did Bo take to finish the city marathon?",
        "answer": "four hours",
        "evidence": ["D2:1"],
        "category": 2,
    },
    {"question": "What did Bo adopt in Lyon?", "adversarial_answer": "a puppy", "evidence": ["D1:1"], "category": 5},
]


def locomo(tmp_path: Path) -> Path:
    def turns(lines: list[tuple[str, str]], session: int) -> list[dict[str, Any]]:
        return [{"speaker": s, "dia_id": f"D{session}:{i + 1}", "text": t} for i, (s, t) in enumerate(lines)]

    sample = {
        "sample_id": "tiny-1",
        "conversation": {
            "speaker_a": "Ana",
            "speaker_b": "Bo",
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": turns(SESSION_1, 1),
            "session_2_date_time": "10:00 am on 9 May, 2023",
            "session_2": turns(SESSION_2, 2),
        },
        "qa": QUESTIONS,
    }
    path = tmp_path / "tiny_locomo.json"
    path.write_text(json.dumps([sample]), encoding="utf-8")
    return path


def test_a_right_answer_scores_one_a_wrong_one_zero(tmp_path: Path, fake_embedder: Any, fake_model: Any) -> None:
    fake_model.replies = ["A beagle.", "Two days.", "That is not mentioned in our conversations."]
    report = eval_qa(locomo(tmp_path), Settings(answers="llm"), fake_embedder, chat_model=fake_model, details=True)
    assert [row["score"] for row in report.details] == [1.0, 0.0, 1.0]
    assert report.per_category["4 single-hop"]["F1"] == 1.0 and report.per_category["2 temporal"]["F1"] == 0.0
    assert report.per_category["5 adversarial"] == {"n": 1, "F1": 1.0}
    assert report.overall["F1"] == pytest.approx(2 / 3, abs=1e-4) and report.overall_1_4 == {"n": 2, "F1": 0.5}
    assert (report.answers, report.model, report.context) == ("llm", "fake-model", "memory")
    # The prompt is ask's: its recalled memories, the day after the conversation as today.
    system = fake_model.prompts[0][0].content
    assert "Rex is a small beagle" in system and "Tuesday 9 May 2023" in system


def test_recall_of_the_evidence_is_measured_beside_the_answers(
    tmp_path: Path, fake_embedder: Any, fake_model: Any
) -> None:
    report = eval_qa(locomo(tmp_path), Settings(answers="llm"), fake_embedder, chat_model=fake_model)
    for name in ("4 single-hop", "2 temporal"):
        assert set(report.per_category[name]) == {"n", "F1", "R@5", "R@10", "R@20"}
        assert report.per_category[name]["R@5"] == 1.0  # five turns in all: every one is recalled
    assert set(report.latency_seconds) == {"p50", "p95"}


def test_the_baselines_give_the_whole_conversation_or_the_question_alone(
    tmp_path: Path, fake_embedder: Any, fake_model: Any
) -> None:
    path = locomo(tmp_path)
    eval_qa(path, Settings(answers="llm"), fake_embedder, context="full", chat_model=fake_model)
    system = fake_model.prompts[-1][0].content
    assert all(text in system for _, text in SESSION_1 + SESSION_2)
    fake_model.prompts.clear()
    report = eval_qa(path, Settings(answers="llm"), fake_embedder, context="none", chat_model=fake_model)
    assert fake_model.prompts[-1] == [Message("user", QUESTIONS[-1]["question"])]
    assert "R@5" not in report.overall


def test_the_full_context_keeps_the_most_recent_turns_that_fit(
    tmp_path: Path, fake_embedder: Any, fake_model: Any
) -> None:
    # A window of 512 tokens less 256 for the reply and the prompt's own text leaves room for
    # a few turns only (three characters a token: the fake model cannot count them).
    turns = [
        ("Ana" if i % 2 else "Bo", f"Turn {i} says something about the weather in town number {i}.") for i in range(60)
    ]
    sample = json.loads(locomo(tmp_path).read_text())
    sample[0]["conversation"]["session_2"] = [
        {"speaker": s, "dia_id": f"D2:{i + 1}", "text": t} for i, (s, t) in enumerate(turns)
    ]
    path = tmp_path / "long.json"
    path.write_text(json.dumps(sample), encoding="utf-8")
    eval_qa(path, Settings(answers="llm", n_ctx=512), fake_embedder, context="full", chat_model=fake_model)
    system = fake_model.prompts[-1][0].content
    assert "Turn 59 says" in system and "Turn 0 says" not in system and "adopted a puppy" not in system
    assert len(system) / 3 <= 512 - 256


def test_extractive_answers_quote_the_turn_that_answers(tmp_path: Path, fake_embedder: Any) -> None:
    report = eval_qa(locomo(tmp_path), Settings(), fake_embedder, answers="extractive", details=True)
    marathon = report.details[1]
    assert report.answers == "extractive" and report.model == ""
    assert "four hours" in marathon["answer"] and 0 < marathon["score"] < 1  # right, in a quoted sentence


def test_an_answer_is_scored_without_its_citations() -> None:
    assert without_citations("A beagle [1a2b3c4d].", ["1a2b3c4d9f8e7d6c"]) == "A beagle."
    assert without_citations("In [2023] [1a2b].", ["1a2b3c4d9f8e7d6c"]) == "In [2023]."  # not a memory it cites


def test_limit_spreads_the_questions_over_the_file() -> None:
    sample = {"qa": [{"question": str(i), "answer": "x", "category": 1 + i // 10} for i in range(40)]}
    assert [q["question"] for q in locomo_questions(sample, 4)] == ["0", "10", "20", "30"]
    assert len(locomo_questions(sample)) == 40 and len(locomo_questions(sample, 99)) == 40


def test_json_follows_the_schema_and_the_own_store_is_untouched(
    runner: CliRunner, fake_model: Any, tmp_path: Path
) -> None:
    fake_model.replies = ["beagle"]
    args = ["eval", "qa", str(locomo(tmp_path)), "--answers", "llm", "--json"]
    for extra in ((), ("--details",)):
        data = json.loads(ok(runner.invoke(app, [*args, *extra])).stdout)
        assert set(data) == set(QaEvalResult.model_fields)
        assert QaEvalResult.model_validate(data).model_dump(mode="json") == data
        assert bool(data["details"]) == bool(extra)
        assert data["per_category"]["4 single-hop"]["F1"] == 1.0 and data["per_category"]["2 temporal"]["F1"] == 0.0
    assert not resolve_paths().database.exists()


def test_the_table_has_a_row_per_category_and_overall(runner: CliRunner, fake_model: Any, tmp_path: Path) -> None:
    fake_model.replies = ["beagle"]
    result = ok(runner.invoke(app, ["eval", "qa", str(locomo(tmp_path)), "--answers", "llm", "--limit", "2"]))
    header, *rows, footer = result.stdout.splitlines()
    assert header.split() == ["category", "n", "F1", "R@5", "R@10", "R@20"]
    assert [row.rsplit(maxsplit=5)[0] for row in rows] == ["2 temporal", "4 single-hop", "overall", "overall 1-4"]
    assert rows[1].split()[2:4] == ["1", "1.000"] and rows[3].split()[-3:] == ["-", "-", "-"]
    assert footer.startswith("llm answers by fake-model from memory; answer latency p50")


def test_bad_options_are_one_error_line(runner: CliRunner, fake_model: Any, tmp_path: Path) -> None:
    path = str(locomo(tmp_path))
    assert "conv-99" in assert_error(
        runner.invoke(app, ["eval", "qa", path, "--conversation", "conv-99"]), ExitCode.BAD_INPUT
    )
    assert "'context'" in assert_error(runner.invoke(app, ["eval", "qa", path, "--context", "some"]), ExitCode.USAGE)
    assert "'answers'" in assert_error(runner.invoke(app, ["eval", "qa", path, "--answers", "bogus"]), ExitCode.USAGE)


def test_an_evaluation_question_does_not_reinforce_what_it_recalls(
    tmp_path: Path, fake_embedder: Any, fake_model: Any
) -> None:
    from memcli.config import home_paths
    from memcli.formats.importers import parse_locomo
    from memcli.library.engine import Engine

    path = locomo(tmp_path)
    engine = Engine(
        Settings(answers="llm"), home_paths(tmp_path / "eval-home"), embedder=fake_embedder, chat_model=fake_model
    )
    with engine.store.transaction():
        engine.add_memories(parse_locomo(path, path.read_text(), "tiny-1"))

    def recalled() -> int:
        with engine.store.transaction():
            return sum(m.recall_count for m in engine.store.memories(user="tiny-1"))

    engine.assistant.ask(QUESTIONS[0]["question"], "tiny-1", reinforce=False)
    assert recalled() == 0
    engine.assistant.ask(QUESTIONS[0]["question"], "tiny-1")
    assert recalled() == 5


def test_eval_locomo_imported_reads_a_copy_of_the_store_that_holds_the_conversation(
    runner: CliRunner, fake_embedder: Any, tmp_path: Path
) -> None:
    """``eval locomo --imported``: the conversation as ``memcli import`` put it in the store,
    evaluated on a copy (its graph step writes there), with the figures of an import into
    a temporary store; the store is not changed."""
    path = str(locomo(tmp_path))
    fresh = json.loads(ok(runner.invoke(app, ["eval", "locomo", path, "--json"])).stdout)
    ok(runner.invoke(app, ["import", path, "--quiet"]))
    before = json.loads(ok(runner.invoke(app, ["list", "-u", "tiny-1", "-n", "0", "--json"])).stdout)
    imported = json.loads(ok(runner.invoke(app, ["eval", "locomo", path, "--imported", "--json"])).stdout)
    assert (imported["conversations"], imported["questions"]) == (["tiny-1"], 2)
    assert imported["per_category"] == fresh["per_category"] and imported["overall"] == fresh["overall"]
    assert json.loads(ok(runner.invoke(app, ["list", "-u", "tiny-1", "-n", "0", "--json"])).stdout) == before
    assert json.loads(ok(runner.invoke(app, ["graph", "list", "-u", "tiny-1", "--json"])).stdout) == []


def test_eval_locomo_imported_names_a_conversation_the_store_has_not(
    runner: CliRunner, fake_embedder: Any, tmp_path: Path
) -> None:
    ok(runner.invoke(app, ["remember", "my own note about pottery"]))
    line = assert_error(runner.invoke(app, ["eval", "locomo", str(locomo(tmp_path)), "--imported"]), ExitCode.BAD_INPUT)
    assert "tiny-1" in line and "memcli import" in line
    assert len(json.loads(ok(runner.invoke(app, ["list", "-n", "0", "--json"])).stdout)) == 1
