"""The query creator (Landwehr et al. 2023): with ``query_creator = true`` the chat model
rewrites the conversation into a search query before recall; off by default."""

from __future__ import annotations

import json
from typing import Any

from cli_checks import ok

from memcli.cli import app


def _remember(runner: Any, *notes: str) -> None:
    for note in notes:
        ok(runner.invoke(app, ["remember", note]))


def test_ask_without_the_setting_makes_no_query_call(runner: Any, fake_model: Any) -> None:
    _remember(runner, "The garage door code is 4172.")
    ok(runner.invoke(app, ["ask", "What is the code?"]))
    assert [call[0] for call in fake_model.structured_calls] == []


def test_ask_recalls_with_the_query_the_model_wrote(runner: Any, fake_model: Any, monkeypatch: Any) -> None:
    monkeypatch.setenv("MEMCLI_QUERY_CREATOR", "true")
    monkeypatch.setenv("MEMCLI_RECALL_K", "1")
    _remember(runner, "The garage door code is 4172.", "Tomatoes need sun and water every day.")
    fake_model.responder = lambda task, content: json.dumps({"query": "garage door code"})

    answer = json.loads(ok(runner.invoke(app, ["ask", "--json", "And how do I get in?"])).stdout)

    [(task, content, *_)] = fake_model.structured_calls
    assert task == "query" and "And how do I get in?" in content
    assert [m["text"] for m in answer["memories"]] == ["The garage door code is 4172."]


def test_invalid_query_falls_back_to_the_question(runner: Any, fake_model: Any, monkeypatch: Any) -> None:
    monkeypatch.setenv("MEMCLI_QUERY_CREATOR", "true")
    monkeypatch.setenv("MEMCLI_RECALL_K", "1")
    _remember(runner, "The garage door code is 4172.", "Tomatoes need sun and water every day.")
    fake_model.responder = lambda task, content: "not JSON"

    answer = json.loads(ok(runner.invoke(app, ["ask", "--json", "How much sun do tomatoes need?"])).stdout)

    assert [call[0] for call in fake_model.structured_calls] == ["query", "query"]  # one retry, then given up
    assert [m["text"] for m in answer["memories"]] == ["Tomatoes need sun and water every day."]


def test_chat_query_sees_the_conversation_so_far(runner: Any, fake_model: Any, monkeypatch: Any) -> None:
    monkeypatch.setenv("MEMCLI_QUERY_CREATOR", "true")
    fake_model.responder = lambda task, content: json.dumps({"query": "anything at all"})

    ok(runner.invoke(app, ["chat", "--user", "ana"], input="My sister Lena lives in Graz.\nWhere does she live?\n"))

    contents = [content for task, content, *_ in fake_model.structured_calls if task == "query"]
    assert len(contents) == 2
    assert "ana: My sister Lena lives in Graz." in contents[1] and "ana: Where does she live?" in contents[1]
