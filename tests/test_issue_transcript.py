"""The transcript of issue 31 with the real default embedder (all-MiniLM-L6-v2): a week of
everyday notes remembered at their dates, then the questions a new user asked. Each answer
quotes the current note, or says it finds nothing, as the issue wants; slow (the embedder
loads), so one home for every question."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from cli_checks import ask_at, ok
from conftest import isolate
from typer.testing import CliRunner

from memcli.cli import app

pytestmark = pytest.mark.integration

NOTES = [
    ("2026-02-10T09:00:00", "I take atorvastatin 20 mg every evening."),
    ("2026-03-09T17:00:00", "Bought sourdough and two jars of honey at the farmers' market."),
    ("2026-04-01T09:00:00", "Our dog Biscuit turned three today."),
    ("2026-06-10T09:00:00", "The cardiologist raised my atorvastatin to 40 mg."),
    ("2026-08-02T09:00:00", "We adopted a second dog, a greyhound called Pepper."),
    ("2026-11-20T09:00:00", "I take lisinopril 10 mg once a day."),
    ("2026-11-21T08:00:00", "I drink two cups of coffee every morning."),
    ("2026-11-22T09:00:00", "My neighbour at number 14 is moving out."),
    ("2026-11-23T09:00:00", "The GP raised my lisinopril dose to 20 mg."),
    ("2026-11-24T09:00:00", "I stopped drinking coffee."),
    ("2026-11-25T09:00:00", "I moved from Leeds to York last month."),
    ("2026-11-27T09:00:00", "Where do I live?"),  # a question noted (as a chat turn would be)
]


@pytest.fixture(scope="module")
def noted(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    """The notes remembered once a module at their dates with the real embedder, in the
    environment every test has: the home and the notes' ids by text. Each test asks in a
    copy (an ask reinforces what it recalls)."""
    ids = {}
    with pytest.MonkeyPatch.context() as monkeypatch:
        home = isolate(tmp_path_factory.mktemp("transcript"), monkeypatch)
        for when, text in NOTES:
            monkeypatch.setenv("MEMCLI_NOW", when)
            ids[text] = ok(CliRunner().invoke(app, ["remember", "-q", text])).stdout.strip()
    return home, ids


def _ask(
    noted: tuple[Path, dict[str, str]], memcli_home: Path, monkeypatch: pytest.MonkeyPatch, question: str
) -> dict[str, Any]:
    shutil.copytree(noted[0], memcli_home)
    return ask_at(CliRunner(), monkeypatch, "2026-11-27T10:00:00", question)


@pytest.mark.parametrize(
    ("question", "quoted", "says", "not_said"),
    [
        ("What dose of lisinopril do I take?", "The GP raised my lisinopril dose to 20 mg.", "20 mg", None),
        ("Do I drink coffee?", "I stopped drinking coffee.", "stopped", None),
        (
            "How much atorvastatin do I take?",
            "The cardiologist raised my atorvastatin to 40 mg.",
            "40 mg",
            "lisinopril",
        ),
        ("Where do I live?", "I moved from Leeds to York last month.", "York", "Where do I live?"),
        ("Where did I live before?", "I moved from Leeds to York last month.", "Leeds", "sourdough"),
        ("Where did I live before York?", "I moved from Leeds to York last month.", "Leeds", "sourdough"),
        (
            "What did I buy on March 9th?",
            "Bought sourdough and two jars of honey at the farmers' market.",
            "honey",
            None,
        ),
    ],
)
def test_each_answer_quotes_the_current_note_first(
    noted: tuple[Path, dict[str, str]],
    memcli_home: Path,
    monkeypatch: pytest.MonkeyPatch,
    question: str,
    quoted: str,
    says: str,
    not_said: str | None,
) -> None:
    answer = _ask(noted, memcli_home, monkeypatch, question)
    assert answer["answered"] is True
    assert answer["cited"][0] == noted[1][quoted]
    assert says in answer["answer"].split(" [since")[0]
    if not_said:
        assert not_said not in answer["answer"]


def test_a_list_question_gathers_both_dogs(
    noted: tuple[Path, dict[str, str]], memcli_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    answer = _ask(noted, memcli_home, monkeypatch, "What are my dogs called?")
    assert "Biscuit" in answer["answer"] and "Pepper" in answer["answer"]


def test_a_question_nothing_answers_says_so(
    noted: tuple[Path, dict[str, str]], memcli_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    answer = _ask(noted, memcli_home, monkeypatch, "What is my passport number?")
    assert answer["answered"] is False
    assert answer["cited"] == []
