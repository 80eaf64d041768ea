"""``memcli eval consolidation LOCOMO``: a tiny LoCoMo-shaped conversation is consolidated by
extraction in a temporary store, with the fake embedder, and measured against its own
session summaries and observations: every day summarized, ROUGE-L of a summary made of
the reference's own words, coverage of an observation that a fact repeats and of one
nothing repeats, ``--json`` following ``schema.ConsolidationEvalResult``, ``--details``,
the table, and one error line for an unknown conversation. The user's own store is never
touched."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_checks import assert_error, ok
from typer.testing import CliRunner

from memcli.cli import app
from memcli.config import Settings
from memcli.errors import BadInputError, ExitCode
from memcli.library.evaluation import eval_consolidation
from memcli.paths import resolve_paths
from memcli.schema import ConsolidationEvalResult

SESSION_1 = [
    ("Ana", "I adopted a puppy named Rex in Lyon last spring."),
    ("Bo", "That is wonderful news, what breed is the puppy?"),
    ("Ana", "Rex is a small beagle who loves long walks in the park."),
    ("Bo", "I have been training for the city marathon every morning."),
]
SESSION_2 = [
    ("Bo", "I finished the city marathon in four hours yesterday."),
    ("Ana", "Congratulations, that is a great time for a first marathon!"),
]
OBSERVED = "Ana adopted a puppy named Rex in Lyon last spring."
"""What extraction makes of Ana's first sentence: it covers this observation exactly."""
UNRELATED = "Zebras migrate across the Serengeti plains annually."


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
        "session_summary": {
            "session_1_summary": " ".join(text for _, text in SESSION_1),
            "session_2_summary": "Bo finished the city marathon in four hours.",
        },
        "observation": {
            "session_1_observation": {"Ana": [[OBSERVED, "D1:1"]], "Bo": []},
            "session_2_observation": {"Bo": [[UNRELATED, "D2:1"]]},
        },
        "qa": [],
    }
    path = tmp_path / "tiny_locomo.json"
    path.write_text(json.dumps([sample]), encoding="utf-8")
    return path


@pytest.fixture
def report(tmp_path: Path, fake_embedder: Any) -> Any:
    return eval_consolidation(locomo(tmp_path), Settings(consolidation="extractive"), fake_embedder, details=True)


def test_every_day_is_summarized_and_measured(report: Any) -> None:
    [row] = report.conversations
    assert report.path == "extractive"
    assert (row["conversation"], row["turns"], row["days"], row["days_summarized"]) == ("tiny-1", 6, 2, 2)
    assert sorted(row["summaries"]) == ["2023-05-08", "2023-05-09"]
    assert row["facts"] == len(row["fact_texts"]) > 0 and OBSERVED in row["fact_texts"]
    assert row["written_by"] == {"extractive": sum(row["written_by"].values())}
    # seconds are reported to 0.01 s and turns/s from the unrounded time: equal within that rounding
    assert (
        row["seconds"] > 0
        and 6 / (row["seconds"] + 0.005) - 0.01
        <= row["turns_per_second"]
        <= 6 / max(row["seconds"] - 0.005, 1e-9) + 0.01
    )


def test_rouge_l_is_high_for_a_summary_made_of_the_reference_words(report: Any) -> None:
    [row] = report.conversations
    # Day 1's reference is the day's own text; day 2's summary ("Bo: I finished ...") shares most of its words.
    assert 0.5 < row["rougeL_f"] <= 1.0 and 0 < row["rougeL_p"] <= 1.0 and 0 < row["rougeL_r"] <= 1.0


def test_coverage_counts_the_observations_matched(report: Any) -> None:
    [row] = report.conversations
    assert (row["observations"], row["coverage"], row["coverage_facts"], row["coverage_turns"]) == (2, 0.5, 0.5, 0.5)
    assert row["coverage_summaries"] in (0.0, 0.5)


def test_an_unknown_conversation_is_bad_input(tmp_path: Path, fake_embedder: Any) -> None:
    with pytest.raises(BadInputError, match="no conversation conv-99"):
        eval_consolidation(locomo(tmp_path), Settings(consolidation="extractive"), fake_embedder, ["conv-99"])


def test_json_follows_the_schema_and_the_own_store_is_untouched(
    runner: CliRunner, fake_embedder: Any, tmp_path: Path
) -> None:
    args = ["eval", "consolidation", str(locomo(tmp_path)), "--consolidation", "extractive", "--json"]
    for extra in ((), ("--details",)):
        data = json.loads(ok(runner.invoke(app, [*args, *extra])).stdout)
        assert set(data) == set(ConsolidationEvalResult.model_fields)
        assert ConsolidationEvalResult.model_validate(data).model_dump(mode="json") == data
        assert ("summaries" in data["conversations"][0]) == bool(extra)
        assert data["overall"]["turns"] == 6 and data["overall"]["coverage"] == 0.5
    assert not resolve_paths().database.exists()


def test_the_table_has_a_row_per_conversation_and_overall(
    runner: CliRunner, fake_embedder: Any, tmp_path: Path
) -> None:
    result = ok(runner.invoke(app, ["eval", "consolidation", str(locomo(tmp_path)), "--consolidation", "extractive"]))
    header, *rows, footer = result.stdout.splitlines()
    assert header.split()[:3] == ["conversation", "turns", "s"]
    assert [row.split()[0] for row in rows] == ["tiny-1", "overall"]
    assert rows[0].split()[1] == "6" and footer.startswith("extractive consolidation of 1 conversations")


def test_unknown_conversation_and_path_are_one_error_line(
    runner: CliRunner, fake_embedder: Any, tmp_path: Path
) -> None:
    path = str(locomo(tmp_path))
    result = runner.invoke(
        app, ["eval", "consolidation", path, "--conversation", "conv-99", "--consolidation", "extractive"]
    )
    assert "conv-99" in assert_error(result, ExitCode.BAD_INPUT)
    result = runner.invoke(app, ["eval", "consolidation", path, "--consolidation", "bogus"])
    assert "'consolidation'" in assert_error(result, ExitCode.USAGE)
