"""Your own name (issue 22, item 4): the default user is the login name (a store whose only
user is "default" goes on with it); summaries, facts and the portrait call the user by the
``name`` setting or the name they gave in chat, else "the user"; chat and JSONL imports name
the user alike; ``portrait`` says why there is none; ``config set user`` warns of a user
without memories."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_checks import ok
from conftest import LOGIN
from test_consolidate import DAY1, DAY2, day_turns, make_memcli, stored
from typer.testing import CliRunner

from memcli.cli import app
from memcli.config import login_name
from memcli.memory import Kind, Memory


def list_json(runner: CliRunner, *args: str) -> list[dict[str, Any]]:
    return json.loads(ok(runner.invoke(app, ["list", "-n", "0", "--json", *args])).stdout)


@pytest.mark.parametrize(
    ("login", "user"), [("sam", "sam"), ("Jane Doe", "jane-doe"), ("  ", "default"), ("ana.m_2", "ana.m_2")]
)
def test_the_default_user_is_the_login_name_sanitised(monkeypatch: pytest.MonkeyPatch, login: str, user: str) -> None:
    monkeypatch.setenv("LOGNAME", login)
    assert login_name() == user


def test_memories_go_to_the_login_name_by_default(runner: CliRunner, fake_embedder: Any) -> None:
    ok(runner.invoke(app, ["remember", "Buy oat milk"]))
    assert [m["user"] for m in list_json(runner)] == [LOGIN]


def test_a_store_whose_only_user_is_default_goes_on_with_it_with_a_notice(
    runner: CliRunner, fake_embedder: Any
) -> None:
    ok(runner.invoke(app, ["remember", "Buy oat milk", "--user", "default"]))
    result = ok(runner.invoke(app, ["list", "--json"]))
    assert [m["user"] for m in json.loads(result.stdout)] == ["default"]
    assert "using user 'default', the only user of this store" in result.stderr
    ok(runner.invoke(app, ["config", "set", "user", "default"]))
    assert "only user" not in ok(runner.invoke(app, ["list"])).stderr  # set on purpose: no notice


def test_a_store_with_another_user_besides_default_uses_the_login_name(runner: CliRunner, fake_embedder: Any) -> None:
    ok(runner.invoke(app, ["remember", "Buy oat milk", "--user", "default"]))
    ok(runner.invoke(app, ["remember", "Call the plumber", "--user", "bob"]))
    assert list_json(runner) == []


SISTER = [("u", "My sister Ana lives in Porto with her two cats."), ("assistant", "How nice.")]


def facts(engine: Any, user: str) -> list[str]:
    return [m.text for m in stored(engine, Kind.FACT, user)]


def own_turns(user: str, lines: list[tuple[str, str]], day: str = DAY1, session: str = "s1") -> list[Memory]:
    return day_turns([(user if who == "u" else who, text) for who, text in lines], day, session, user)


def test_facts_and_summaries_use_the_name_setting(fake_model: Any) -> None:
    engine = make_memcli(consolidation="extractive", user=LOGIN, name="Sam")
    engine.add_memories(own_turns(LOGIN, SISTER))
    engine.consolidate(LOGIN)
    assert facts(engine, LOGIN) == ["Sam's sister Ana lives in Porto with her two cats."]
    summary = next(m.text for m in stored(engine, Kind.EVENT_DAILY, LOGIN))
    assert summary.startswith("Sam: ") and LOGIN not in summary


def test_without_a_name_the_user_is_the_user(fake_model: Any) -> None:
    engine = make_memcli(consolidation="extractive")
    engine.add_memories(own_turns("default", SISTER))
    engine.consolidate("default")
    assert facts(engine, "default") == ["The user's sister Ana lives in Porto with her two cats."]


def test_my_name_is_said_in_chat_is_a_fact_and_names_the_user_from_then_on(fake_model: Any) -> None:
    engine = make_memcli(consolidation="extractive")
    engine.add_memories(own_turns(LOGIN, [("u", "Hi, my name is Sam."), ("assistant", "Hello Sam.")]))
    engine.consolidate(LOGIN)
    assert facts(engine, LOGIN) == ["The user's name is Sam."]
    engine.add_memories(own_turns(LOGIN, SISTER, DAY2, "s2"))  # the naming turn may be forgotten: the fact remembers
    with engine.store.transaction():
        first = [
            m for m in engine.store.memories(user=LOGIN, kind=Kind.TURN.value) if "Sam" in m.text and m.speaker == LOGIN
        ]
        for m in first:
            m.archived = True
        engine.store.update(first)
    engine.consolidate(LOGIN)
    assert "Sam's sister Ana lives in Porto with her two cats." in facts(engine, LOGIN)


def test_a_memorybank_users_own_name_stays(fake_model: Any) -> None:
    engine = make_memcli(consolidation="extractive")
    engine.add_memories(own_turns("Emily", SISTER))
    engine.consolidate("Emily")
    assert facts(engine, "Emily") == ["Emily's sister Ana lives in Porto with her two cats."]


def test_chat_and_a_jsonl_import_name_the_user_alike(runner: CliRunner, fake_model: Any, tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"
    log.write_text(
        json.dumps({"role": "user", "content": "I moved to Lyon", "timestamp": "2024-01-02T10:00:00"})
        + "\n"
        + json.dumps({"role": "assistant", "content": "Welcome to Lyon", "timestamp": "2024-01-02T10:00:05"})
        + "\n"
    )
    ok(runner.invoke(app, ["import", str(log)]))
    # Not another move: "I moved to Porto" would supersede the imported move (issue 31), and
    # list shows current memories only, so the imported turn would not be there to compare.
    ok(runner.invoke(app, ["chat"], input="I bought a bike today\n"))
    speakers = {(m["source"].startswith("chat:"), m["speaker"]) for m in list_json(runner, "--kind", "turn")}
    assert speakers == {(False, LOGIN), (False, "assistant"), (True, LOGIN), (True, "assistant")}


def test_portrait_says_why_there_is_none_and_what_makes_one(runner: CliRunner, fake_model: Any, tmp_path: Path) -> None:
    first = ok(runner.invoke(app, ["portrait"])).stderr
    assert "from your conversation turns and notes" in first and f"{LOGIN} has none" in first
    ok(runner.invoke(app, ["chat"], input="Lovely weather today, the sun is out\n"))
    waiting = ok(runner.invoke(app, ["portrait"])).stderr
    assert "1 day of them not consolidated yet: run memcli consolidate" in waiting
    ok(runner.invoke(app, ["config", "set", "consolidation", "extractive"]))
    ok(runner.invoke(app, ["consolidate"]))
    assert "found nothing you said of yourself in your 2 turns" in ok(runner.invoke(app, ["portrait"])).stderr
    ok(runner.invoke(app, ["remember", "The boiler was serviced on Tuesday"]))
    ok(runner.invoke(app, ["consolidate"]))
    assert "in your 2 turns and 1 note" in ok(runner.invoke(app, ["portrait"])).stderr
    assert ok(runner.invoke(app, ["portrait", "--json"])).stdout.strip() == "null"


def test_config_set_user_warns_when_the_new_user_has_no_memories(runner: CliRunner, fake_embedder: Any) -> None:
    ok(runner.invoke(app, ["remember", "Buy oat milk"]))
    ok(runner.invoke(app, ["remember", "Call the plumber", "--user", "bob"]))
    warned = ok(runner.invoke(app, ["config", "set", "user", "sam"])).stderr
    assert f"user 'sam' has no memories; '{LOGIN}' has 1" in warned
    assert "no memories" not in ok(runner.invoke(app, ["config", "set", "user", "bob"])).stderr
    assert [m["text"] for m in list_json(runner, "--user", LOGIN)] == ["Buy oat milk"]
