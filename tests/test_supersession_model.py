"""Supersession at write time with a capable chat model (issue 31): ``remember`` asks a model
server (``fakes.model_server``) for Mem0's update decision against the most similar memories;
an UPDATE marks the older note superseded as the rules would, an invented or ungrounded
decision is refused, and a model that does not answer within ``model_timeout`` leaves the
decision to the rules. The embedded base model keeps the rules."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from cli_checks import ok
from fakes import model_server
from typer.testing import CliRunner

from memcli.cli import app
from memcli.config import Settings
from memcli.library.supersession import model_decides

OLD_DOSE = "I drive a grey Volvo estate to work every day"
NEW_DOSE = "I sold the grey Volvo estate, I drive a Tesla to work every day now"
"""A change the rules do not read (which car one drives is none of their attributes); the
fake embedder finds the two similar (shared words)."""


@pytest.fixture(scope="module")
def fake_server() -> Iterator[str]:
    with model_server.serving() as url:
        yield url


@pytest.fixture
def served(fake_server: str, fake_embedder: object, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("MEMCLI_MODEL_NAME", "fake")
    monkeypatch.setenv("MEMCLI_MODEL_REQUEST_TIMEOUT", "10")
    return fake_server


def _remember(runner: CliRunner, monkeypatch: pytest.MonkeyPatch, when: str, text: str) -> tuple[str, str]:
    """``memcli remember -q TEXT`` at ``when``: (the note's id, what went to stderr)."""
    monkeypatch.setenv("MEMCLI_NOW", when)
    result = ok(runner.invoke(app, ["remember", text]))
    return result.stdout.strip(), result.stderr


def _show(runner: CliRunner, memory_id: str) -> dict[str, Any]:
    return json.loads(ok(runner.invoke(app, ["show", memory_id, "--json"])).stdout)


def _decisions_asked(before: int, mode: str) -> list[str]:
    """The contents of the update decisions the fake server was asked for, in ``mode``, since ``before``."""
    return [
        body["messages"][-1]["content"]
        for m, path, body in model_server.requests[before:]
        if m == mode and "response_format" in body
    ]


def _reply(event: str, target: int, text: str = "") -> str:
    return json.dumps({"events": [{"event": event, "target": target, "text": text}]})


def test_the_rules_alone_do_not_see_this_change(
    runner: CliRunner, fake_embedder: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    older, _ = _remember(runner, monkeypatch, "2025-02-10T09:00:00", OLD_DOSE)
    _remember(runner, monkeypatch, "2025-06-10T09:00:00", NEW_DOSE)
    assert _show(runner, older)["superseded_by"] is None


def test_the_models_update_supersedes_what_the_rules_miss_and_stores_nothing_it_wrote(
    runner: CliRunner, served: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    model_server.structured_replies["update"] = _reply("UPDATE", 0, "I drive a Tesla to work every day")
    monkeypatch.setenv("MEMCLI_MODEL_URL", f"{served}/update/v1")
    older, _ = _remember(runner, monkeypatch, "2025-02-10T09:00:00", OLD_DOSE)
    before = len(model_server.requests)
    newer, stderr = _remember(runner, monkeypatch, "2025-06-10T09:00:00", NEW_DOSE)
    (asked,) = _decisions_asked(before, "update")
    assert f"0. {OLD_DOSE}" in asked and f"- {NEW_DOSE}" in asked
    shown = _show(runner, older)
    assert shown["superseded_by"] == newer and shown["valid_to"] and shown["text"] == OLD_DOSE
    events = json.loads(ok(runner.invoke(app, ["history", older, "--json"])).stdout)
    assert [(e["event"], e["related_id"]) for e in events][-1] == ("UPDATE", newer)
    # The model's own words are checked, then dropped: the memories are what the person said.
    texts = {m["text"] for m in json.loads(ok(runner.invoke(app, ["list", "-n", "0", "--json"])).stdout)}
    assert texts == {NEW_DOSE} and "update decision" not in stderr


@pytest.mark.parametrize(
    ("reply", "why"),
    [
        (_reply("UPDATE", 0, "I drive a 2019 Tesla to work every day"), "'2019' is not in its source"),
        (_reply("DELETE", 3), "target 3 is not one of the memories shown"),
    ],
    ids=["invented-dose", "unknown-target"],
)
def test_an_ungrounded_or_invented_decision_is_refused_and_the_rules_decide(
    runner: CliRunner, served: str, monkeypatch: pytest.MonkeyPatch, reply: str, why: str
) -> None:
    model_server.structured_replies["refused"] = reply
    monkeypatch.setenv("MEMCLI_MODEL_URL", f"{served}/refused/v1")
    older, _ = _remember(runner, monkeypatch, "2025-02-10T09:00:00", OLD_DOSE)
    before = len(model_server.requests)
    _, stderr = _remember(runner, monkeypatch, "2025-06-10T09:00:00", NEW_DOSE)
    assert len(_decisions_asked(before, "refused")) == 2  # asked, refused, asked again, refused
    assert "the chat model's update decision was not used: its decision was refused" in stderr and why in stderr
    assert _show(runner, older)["superseded_by"] is None  # the rules, which do not read a car


def test_a_model_that_does_not_decide_within_model_timeout_leaves_it_to_the_rules(
    runner: CliRunner, served: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Had it answered in time, its NOOP would have kept the older dose current.
    model_server.structured_replies["noop"] = _reply("NOOP", 0)
    monkeypatch.setenv("MEMCLI_MODEL_URL", f"{served}/slow-noop/v1")
    monkeypatch.setenv("MEMCLI_MODEL_TIMEOUT", "1")
    older, _ = _remember(runner, monkeypatch, "2025-02-10T09:00:00", "I take lisinopril 10 mg once a day")
    newer, stderr = _remember(runner, monkeypatch, "2025-06-10T09:00:00", "I take lisinopril 20 mg once a day now")
    assert "the model did not decide within 1 s (model_timeout); the rules decided" in stderr
    assert _show(runner, older)["superseded_by"] == newer


def test_the_embedded_base_model_keeps_the_rules() -> None:
    assert not model_decides(Settings(), lambda: False)
    assert not model_decides(Settings(), lambda: None)
    assert model_decides(Settings(), lambda: True)
    assert model_decides(Settings(model_url="http://127.0.0.1:1/v1"), lambda: False)
    assert not model_decides(Settings(model_url="http://127.0.0.1:1/v1", consolidation="extractive"), lambda: True)
    assert not model_decides(Settings(model_url="http://127.0.0.1:1/v1", model_timeout=0), lambda: True)
