"""Supersession at write time (issue 31): a newer statement of a single-valued attribute
closes the older one when ``remember`` returns; recall and ask prefer the current memory;
the older one stays reachable (``show``, ``history``, ``recall --at``, past questions), and
comes back when the newer one is edited or deleted."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from cli_checks import ok, remember_at, show_json
from typer.testing import CliRunner

from memcli.cli import app
from memcli.text.updates import asks, same_key, statements, states_habit, updates


@pytest.mark.parametrize(
    ("older", "newer"),
    [
        ("I take lisinopril 10 mg once a day.", "The GP raised my lisinopril dose to 20 mg."),
        ("I live in Leeds.", "I moved from Leeds to York last month."),
        ("I work as a nurse at St Mary's hospital.", "I started a new job as a paramedic with the ambulance service."),
        ("I'm vegetarian.", "I went vegan in January."),
        ("I'm vegetarian.", "I went from vegetarian to vegan."),
        ("I'm a member of the Riverside climbing gym.", "I cancelled my Riverside climbing gym membership."),
        ("我住在杭州。", "我上个月搬到了苏州。"),
        ("我每天吃二甲双胍500毫克。", "医生把我的二甲双胍加到了1000毫克。"),
    ],
)
def test_a_newer_statement_of_a_single_valued_attribute_updates_the_older(older: str, newer: str) -> None:
    (old,) = statements(older)
    (new,) = statements(newer)
    assert updates(new, old)


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("I ran 5 km this morning.", "I ran 10 km today."),
        ("My dog Biscuit loves the beach.", "We adopted a second dog called Pepper."),
        ("I play the guitar.", "I started learning the piano."),
        ("Where do I live?", "I live in Glasgow."),
    ],
)
def test_runs_additive_facts_and_questions_state_no_value_to_replace(first: str, second: str) -> None:
    assert not statements(first) or not statements(second) or not updates(statements(second)[0], statements(first)[0])


def test_the_same_value_again_is_a_restatement_not_an_update() -> None:
    (old,) = statements("I live in York.")
    (new,) = statements("We moved to York last month.")
    assert not updates(new, old)


@pytest.mark.parametrize(
    "text", ["Where do I live?", "tell me a story about dragons", "我住在哪里？", "请帮我写一首诗"]
)
def test_questions_and_requests_ask(text: str) -> None:
    assert asks(text)
    assert not statements(text)


def test_remember_supersedes_the_older_dose_before_it_returns(
    runner: CliRunner, fake_embedder: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    older = remember_at(runner, monkeypatch, "2025-02-10T09:00:00", "I take atorvastatin 20 mg every evening")
    newer = remember_at(runner, monkeypatch, "2025-06-10T09:00:00", "The cardiologist raised my atorvastatin to 40 mg")
    shown = show_json(runner, older)
    assert shown["superseded_by"] == newer
    assert shown["valid_to"] is not None and shown["valid_to"].startswith("2025-06-10")
    assert show_json(runner, newer)["superseded_by"] is None
    events = json.loads(ok(runner.invoke(app, ["history", older, "--json"])).stdout)
    assert [(e["event"], e["related_id"]) for e in events] == [("UPDATE", newer)]
    recalled = json.loads(ok(runner.invoke(app, ["recall", "How much atorvastatin do I take?", "--json"])).stdout)
    ids = [m["id"] for m in recalled]
    assert ids.index(newer) < ids.index(older)
    assert recalled[ids.index(older)]["score"]["signals"]["superseded"] < 0
    then = json.loads(
        ok(runner.invoke(app, ["recall", "How much atorvastatin do I take?", "--at", "2025-03-01", "--json"])).stdout
    )
    assert [m["id"] for m in then] == [older]


def test_two_runs_are_not_an_update(runner: CliRunner, fake_embedder: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    first = remember_at(runner, monkeypatch, "2025-03-01T09:00:00", "I ran 5 km this morning.")
    remember_at(runner, monkeypatch, "2025-03-08T09:00:00", "I ran 10 km today.")
    assert show_json(runner, first)["valid_to"] is None


def test_a_stopped_habit_supersedes_the_habit_and_ask_quotes_the_change(
    runner: CliRunner, fake_embedder: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    older = remember_at(runner, monkeypatch, "2025-01-10T09:00:00", "I drink two cups of coffee every morning.")
    newer = remember_at(runner, monkeypatch, "2025-03-15T09:00:00", "I stopped drinking coffee.")
    assert show_json(runner, older)["superseded_by"] == newer
    monkeypatch.setenv("MEMCLI_NOW", "2025-03-20T09:00:00")
    answer = json.loads(
        ok(runner.invoke(app, ["ask", "Do I drink coffee?", "--json"], env={"MEMCLI_ANSWERS": "extractive"})).stdout
    )
    assert answer["answered"] is True
    assert answer["cited"] == [newer]
    assert "stopped drinking coffee" in answer["answer"]
    assert 'before: "I drink two cups' in answer["answer"]


def test_deleting_or_editing_the_newer_memory_reopens_the_older(
    runner: CliRunner, fake_embedder: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    older = remember_at(runner, monkeypatch, "2024-01-01T09:00:00", "I live in Bristol.")
    newer = remember_at(runner, monkeypatch, "2025-01-01T09:00:00", "We moved to Cardiff last weekend.")
    assert show_json(runner, older)["superseded_by"] == newer
    ok(runner.invoke(app, ["edit", newer, "--text", "We visited Cardiff last weekend."]))
    assert show_json(runner, older)["superseded_by"] is None
    assert show_json(runner, older)["valid_to"] is None
    events = json.loads(ok(runner.invoke(app, ["history", older, "--json"])).stdout)
    assert [e["event"] for e in events] == ["UPDATE", "REOPEN"]
    again = remember_at(runner, monkeypatch, "2025-02-01T09:00:00", "I moved to Swansea.")
    assert show_json(runner, older)["superseded_by"] == again
    ok(runner.invoke(app, ["delete", again, "--yes"]))
    assert show_json(runner, older)["superseded_by"] is None


def test_an_export_round_trip_keeps_the_links(
    runner: CliRunner, fake_embedder: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    older = remember_at(runner, monkeypatch, "2024-01-01T09:00:00", "I'm vegetarian.")
    newer = remember_at(runner, monkeypatch, "2025-01-01T09:00:00", "I went vegan in January.")
    exported = tmp_path / "out.jsonl"
    ok(runner.invoke(app, ["export", "--history", "-o", str(exported)]))
    monkeypatch.setenv("MEMCLI_HOME", str(tmp_path / "other"))
    ok(runner.invoke(app, ["import", str(exported)]))
    shown = show_json(runner, older)
    assert shown["superseded_by"] == newer
    assert shown["valid_to"] is not None


def test_an_imported_older_statement_is_the_one_superseded(
    runner: CliRunner, fake_embedder: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    newer = remember_at(runner, monkeypatch, "2025-01-01T09:00:00", "I live in York.")
    log = tmp_path / "chat.jsonl"
    log.write_text(
        json.dumps({"role": "user", "content": "I live in Leeds.", "timestamp": "2022-05-01T10:00:00"}) + "\n",
        encoding="utf-8",
    )
    ok(runner.invoke(app, ["import", str(log)]))
    assert show_json(runner, newer)["superseded_by"] is None
    listed = json.loads(ok(runner.invoke(app, ["history", "--json"])).stdout)
    assert any(e["event"] == "UPDATE" and e["related_id"] == newer for e in listed)


def test_ask_says_whether_it_answered_and_never_quotes_a_question(
    runner: CliRunner, fake_embedder: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    remember_at(runner, monkeypatch, "2025-01-01T09:00:00", "I live in Glasgow.")
    remember_at(runner, monkeypatch, "2025-01-02T09:00:00", "Where do I live?")
    remember_at(runner, monkeypatch, "2025-01-02T10:00:00", "My neighbour at number 14 has a new cat.")
    env = {"MEMCLI_ANSWERS": "extractive"}
    answer = json.loads(ok(runner.invoke(app, ["ask", "Where do I live?", "--json"], env=env)).stdout)
    assert answer["answered"] is True
    assert "Glasgow" in answer["answer"]
    missing = runner.invoke(app, ["ask", "What is my passport number?", "--json"], env=env)
    assert missing.exit_code == 0
    assert json.loads(missing.stdout)["answered"] is False
    assert json.loads(missing.stdout)["cited"] == []


def test_a_list_question_gathers_every_memory_and_a_dated_question_the_day(
    runner: CliRunner, fake_embedder: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = remember_at(runner, monkeypatch, "2024-04-01T09:00:00", "My dog Biscuit loves the beach.")
    second = remember_at(runner, monkeypatch, "2025-01-01T09:00:00", "We adopted a second dog called Pepper.")
    env = {"MEMCLI_ANSWERS": "extractive"}
    answer = json.loads(ok(runner.invoke(app, ["ask", "What are my dogs called?", "--json"], env=env)).stdout)
    assert sorted(answer["cited"]) == sorted([first, second])
    bought = remember_at(
        runner, monkeypatch, "2025-03-09T09:00:00", "Bought sourdough and two jars of honey at the market."
    )
    monkeypatch.setenv("MEMCLI_NOW", "2025-03-20T09:00:00")
    answer = json.loads(ok(runner.invoke(app, ["ask", "What did I buy on March 9th?", "--json"], env=env)).stdout)
    assert answer["cited"] == [bought]


def test_eval_changes_first_right_wants_the_gold_in_the_first_memory_quoted(
    runner: CliRunner, fake_embedder: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An answer that quotes an unrelated note first and the right one after is right (the
    gold words are in it) and not first_right."""
    from memcli.recall import assistant

    scenario = {
        "id": "w",
        "type": "commute",
        "notes": [
            {"text": "I take the 38 bus to the office.", "date": "2025-01-05"},
            {"text": "Book the vet for the cat on Tuesday.", "date": "2025-03-02"},
        ],
        "question": "How do I get to the office?",
        "now": "2025-03-10T09:00:00",
        "gold": ["38 bus"],
    }
    path = tmp_path / "changes.jsonl"
    path.write_text(json.dumps(scenario) + "\n", encoding="utf-8")
    asked = assistant.Assistant.ask

    def unrelated_first(self: Any, question: str, user: str, reinforce: bool = True) -> Any:
        found = asked(self, question, user, reinforce)
        by_text = {r.memory.text: r.memory for r in found.memories}
        vet, bus = by_text["Book the vet for the cat on Tuesday."], by_text["I take the 38 bus to the office."]
        found.answer = f'You noted: "{vet.text}" [the latest; earlier: "{bus.text}"]'
        found.cited, found.answered = [vet.id, bus.id], True
        return found

    monkeypatch.setattr(assistant.Assistant, "ask", unrelated_first)
    report = json.loads(
        ok(runner.invoke(app, ["eval", "changes", str(path), "--answers", "extractive", "--json", "--details"])).stdout
    )
    assert report["overall"]["right"] == 1.0
    assert report["overall"]["first_right"] == 0.0
    assert report["details"][0]["first_right"] == 0.0


@pytest.mark.parametrize(
    ("gold", "quoted", "first_right"),
    [
        (["Biscuit", "Pepper"], ["Biscuit is our beagle.", "We adopted Pepper today."], True),
        (["Biscuit", "Pepper"], ["Biscuit and Pepper at the park."], True),
        (["Biscuit", "Pepper"], ["Bought dog food.", "Biscuit is our beagle.", "Pepper too."], False),
        (["Biscuit", "Pepper"], ["Biscuit is our beagle.", "Biscuit again."], False),
        (["38 bus"], ["Book the vet.", "I take the 38 bus."], False),
        (["pothos"], [], False),
    ],
)
def test_a_list_gathered_from_the_notes_that_each_name_an_item_is_right_from_its_first_quote(
    gold: list[str], quoted: list[str], first_right: bool
) -> None:
    """``eval changes``'s first_right credits a list answered from several memories only when
    every memory quoted holds one of its items and together they hold all of them."""
    from memcli.library.evaluation import quotes_gold_first

    assert quotes_gold_first(gold, quoted) is first_right


def test_eval_changes_scores_right_superseded_first_and_abstentions(
    runner: CliRunner, fake_embedder: Any, tmp_path: Path
) -> None:
    scenarios = [
        {
            "id": "a",
            "type": "dose",
            "notes": [
                {"text": "I take lisinopril 10 mg once a day.", "date": "2025-01-05"},
                {"text": "The GP raised my lisinopril dose to 20 mg.", "date": "2025-03-02"},
            ],
            "question": "What dose of lisinopril do I take?",
            "now": "2025-03-10T09:00:00",
            "gold": ["20 mg"],
            "superseded": "10 mg",
        },
        {
            "id": "b",
            "type": "abstain",
            "notes": [{"text": "My car is a blue Honda Civic.", "date": "2025-01-05"}],
            "question": "What is my blood type?",
            "now": "2025-01-10T09:00:00",
            "gold": [],
            "abstain": True,
        },
    ]
    path = tmp_path / "changes.jsonl"
    path.write_text("".join(json.dumps(s) + "\n" for s in scenarios), encoding="utf-8")
    report = json.loads(
        ok(runner.invoke(app, ["eval", "changes", str(path), "--answers", "extractive", "--json"])).stdout
    )
    assert report["questions"] == 2
    assert report["per_type"]["dose"] == {
        "n": 1,
        "right": 1.0,
        "first_right": 1.0,
        "superseded_first": 0.0,
        "abstained_rightly": 0.0,
    }
    assert report["per_type"]["abstain"]["first_right"] == 1.0
    assert report["per_type"]["abstain"]["abstained_rightly"] == 1.0
    detailed = json.loads(
        ok(runner.invoke(app, ["eval", "changes", str(path), "--answers", "extractive", "--json", "--details"])).stdout
    )
    dose = next(row for row in detailed["details"] if row["id"] == "a")
    recalled = {r["text"]: r for r in dose["recalled"]}
    assert [r["rank"] for r in dose["recalled"]] == list(range(1, len(dose["recalled"]) + 1))
    assert recalled["I take lisinopril 10 mg once a day."]["superseded"] is True
    assert recalled["The GP raised my lisinopril dose to 20 mg."]["cited"] is True
    assert all(-1.0 <= r["similarity"] <= 1.0 for r in dose["recalled"])
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"question": "x"}\n', encoding="utf-8")
    refused = runner.invoke(app, ["eval", "changes", str(bad)])
    assert refused.exit_code != 0
    assert "line 1" in refused.stderr


def test_a_statement_found_by_its_rules_is_found_in_the_store_too(
    runner: CliRunner, fake_embedder: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    older = remember_at(runner, monkeypatch, "2024-01-01T09:00:00", "I'm living in Leeds.")
    newer = remember_at(runner, monkeypatch, "2025-01-01T09:00:00", "I moved to York.")
    assert show_json(runner, older)["superseded_by"] == newer


@pytest.mark.parametrize(
    ("older", "newer"),
    [
        ("I take sertraline 50 mg every morning.", "The psychiatrist bumped up my sertraline to 100 mg."),
        ("I take metformin 500 mg twice a day.", "My doctor increased my metformin to 1000 mg."),
        ("I inject Ozempic 0.25 mg once a week.", "Doctor upped my Ozempic to 0.5 mg."),
        ("I'm on 5 mg of ramipril.", "Ramipril upped to 10 mg today."),
        ("我每天吃阿托伐他汀20毫克。", "医生把阿托伐他汀加到了40毫克。"),
        ("I live in Bristol.", "We got the keys to our new flat in Bath."),
        ("My flat is in Glasgow.", "I'm now based in Edinburgh."),
        ("我住在北京。", "我现在定居在深圳。"),
        ("I work at Tesco.", "I was hired by Lidl as a shift manager."),
        ("I'm a teacher at Hillside School.", "I was promoted to deputy head."),
        ("I work as an accountant.", "I retired last month."),
        ("I work as a chef.", "I quit my job in March."),
        ("我在银行工作。", "我去年退休了。"),
        ("我是一名会计。", "我换工作了，现在是律师。"),
        ("I'm vegetarian.", "I started eating meat again."),
        ("我吃素。", "我不吃素了。"),
        ("I joined the Ramblers walking club.", "I let my Ramblers membership lapse."),
        ("我加入了羽毛球俱乐部。", "我退出了羽毛球俱乐部。"),
        ("My boyfriend is called Tom.", "Tom and I broke up."),
        ("我男朋友叫小李。", "我和小李分手了。"),
        ("I work for Acme.", "My new job is at Initech."),
        ("I work as a nurse.", "I work in marketing now."),
        ("I'm married to Sam.", "Sam and I got divorced."),
    ],
)
def test_changes_phrased_in_other_words_update_the_older_statement(older: str, newer: str) -> None:
    (old,) = statements(older)
    (new,) = [s for s in statements(newer) if s.key == old.key]
    assert updates(new, old)


@pytest.mark.parametrize(
    "text",
    [
        "My mum takes atenolol 25 mg.",
        "Gave the dog 5 mg of Metacam.",
        "The cake has 200 mg of sugar per slice.",
        "My sister moved to York.",
        "I'm seeing Sam tomorrow for lunch.",
        "We broke up the ice on the pond.",
        "I left work early today.",
        "I started at 9 today.",
        "我妈妈吃阿司匹林100毫克。",
        "我不去了。",
        "We separated the laundry.",
        "I work in London.",
        "I joined Contoso last week.",
        "Last week I dropped off the bake sale stuff at the school.",
    ],
)
def test_what_someone_else_does_or_a_passing_event_states_nothing_of_the_speaker(text: str) -> None:
    assert statements(text) == []


def test_a_second_pet_and_a_longer_run_supersede_nothing_through_remember(
    runner: CliRunner, fake_embedder: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    dog = remember_at(runner, monkeypatch, "2024-03-01T09:00:00", "I have a dog called Rex.")
    remember_at(runner, monkeypatch, "2025-03-01T09:00:00", "I adopted a second dog called Bella.")
    run = remember_at(runner, monkeypatch, "2025-05-01T09:00:00", "I ran 5 km in the park.")
    remember_at(runner, monkeypatch, "2025-05-04T09:00:00", "I ran 10 km along the river.")
    assert show_json(runner, dog)["superseded_by"] is None
    assert show_json(runner, run)["superseded_by"] is None


def test_a_raise_phrased_as_bumped_up_is_superseded_at_remember_and_asked_in_other_words(
    runner: CliRunner, fake_embedder: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    older = remember_at(runner, monkeypatch, "2025-01-05T09:00:00", "I take sertraline 50 mg every morning.")
    newer = remember_at(
        runner, monkeypatch, "2025-04-02T09:00:00", "The psychiatrist bumped up my sertraline to 100 mg."
    )
    assert show_json(runner, older)["superseded_by"] == newer
    monkeypatch.setenv("MEMCLI_NOW", "2025-04-10T09:00:00")
    env = {"MEMCLI_ANSWERS": "extractive"}
    answer = json.loads(ok(runner.invoke(app, ["ask", "What dose of sertraline am I on?", "--json"], env=env)).stdout)
    assert answer["cited"] == [newer]
    home = remember_at(runner, monkeypatch, "2025-04-11T09:00:00", "We got the keys to our new flat in Bath.")
    monkeypatch.setenv("MEMCLI_NOW", "2025-04-20T09:00:00")
    answer = json.loads(ok(runner.invoke(app, ["ask", "Which town do I live in?", "--json"], env=env)).stdout)
    assert answer["answered"] is True
    assert answer["cited"] == [home]


def test_losing_a_job_is_not_read_as_holding_it() -> None:
    (said,) = statements("I lost my job as a banker yesterday.")
    assert said.key == "job"
    assert said.ended


@pytest.mark.parametrize(
    ("older", "newer"),
    [
        ("Citalopram 20mg each morning with breakfast", "GP cut the cital back to 10mg"),
        ("she doubled nothing yet: amlodipine 5 mg daily", "she upped the amlodipine to 10 mg"),
        ("晚上打门冬胰岛素 8个单位", "复诊后门冬改成10个单位"),
        ("医生给开了硝苯地平，每天一片10毫克", "硝苯地平加到20毫克了"),
        ("rent on the Leeds flat is due Friday", "got the keys!!! 4 Harbour Row, Whitby. unreal"),
        ("landlord in Hull still hasn't fixed the heating", "relocated to Norwich for the new role"),
        ("上海的房子租约到六月底", "回老家西安了，先住父母那儿"),
        ("first day at Aldi, shift supervisor. long day", "started as store manager at Asda today"),
        ("junior designer at Canva, review in May", "PROMOTED!! senior designer from June"),
        ("在腾讯做设计师，下周出差", "考上公务员了，今天去税务局报到"),
        ("veggie for a month now, still eating fish tho", "going fully vegan from Monday"),
        ("开始生酮，不吃米饭", "生酮先停，改成低碳饮食"),
        ("joined TrueGym, £20 a month", "switched gyms -> Elm Street Leisure Centre, it has a sauna"),
        ("sang w/ the Riverside community choir tonight", "auditioned for the Abbey Singers and got in!!"),
        ("anniversary w/ Oscar - 3 yrs", "second date w/ Lena, nice evening"),
        ("engaged!!! Ravi proposed at the castle", "married Ravi today, best day ever"),
        ("和小王在一起三个月了", "和阿明正式确定关系了"),
    ],
)
def test_diary_notes_without_a_subject_update_the_older_statement(older: str, newer: str) -> None:
    (old,) = statements(older)
    (new,) = [s for s in statements(newer) if same_key(s.key, old.key)]
    assert updates(new, old)


@pytest.mark.parametrize(
    "text",
    [
        "Priya moved her flat to Bath.",
        "Marcus is moving in with me next month!",
        "met a nurse at Tesco, lovely chat",
        "The vegan cake at the cafe was great.",
        "played with the kids at the gym",
        "He takes 20 mg of citalopram.",
        "adopted a cat!! named her Miso",
        "brought home a rescue greyhound, Biscuit",
        "我妈妈搬到了成都。",
    ],
)
def test_someone_elses_move_a_passing_word_or_a_second_pet_state_nothing(text: str) -> None:
    assert statements(text) == []


def test_a_cancelled_subscription_ends_what_an_older_note_said_of_it() -> None:
    stated = statements("cancelled spotify, never use it. keeping the radio")
    (said,) = [s for s in stated if s.key.startswith("habit:")]
    (membership,) = [s for s in stated if s.key.startswith("membership:")]
    assert said.ended
    assert membership.ended and membership.key == "membership:spotifi"
    assert states_habit("Spotify £11.99 goes out on the 1st", said.words)
    (stopped,) = statements("膝盖疼，医生让停了游泳，改散步")
    assert states_habit("每天早上游泳一公里", stopped.words)


def test_a_home_named_with_another_place_of_the_same_city_is_no_move() -> None:
    (old,) = statements("company relocating me to the Leith office, they found me a flat in Dalry")
    (new,) = statements("I live in Dalry now, near the park.")
    assert not updates(new, old)


def test_diary_notes_supersede_through_remember(
    runner: CliRunner, fake_embedder: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    older = remember_at(runner, monkeypatch, "2024-01-05T09:00:00", "rent on the Leeds flat is due Friday")
    newer = remember_at(runner, monkeypatch, "2024-06-01T09:00:00", "got the keys!!! 4 Harbour Row, Whitby.")
    dose = remember_at(runner, monkeypatch, "2024-02-01T09:00:00", "Citalopram 20mg each morning")
    cut = remember_at(runner, monkeypatch, "2024-03-01T09:00:00", "GP cut the cital back to 10mg")
    habit = remember_at(runner, monkeypatch, "2024-02-01T09:00:00", "Spotify £11.99 goes out on the 1st")
    ended = remember_at(runner, monkeypatch, "2024-04-01T09:00:00", "cancelled spotify, never use it")
    assert show_json(runner, older)["superseded_by"] == newer
    assert show_json(runner, dose)["superseded_by"] == cut
    assert show_json(runner, habit)["superseded_by"] == ended


def test_a_note_opening_with_its_verb_and_a_possessive_still_speaks_for_its_writer() -> None:
    (joined,) = statements("Joined TrueGym by the station, £20 a month.")
    (cancelled,) = statements("Cancelled my gym membership — haven't been since March, waste of money.")
    assert cancelled.key == joined.key and cancelled.ended
    assert updates(cancelled, joined)


@pytest.mark.parametrize(
    ("older", "newer"),
    [
        ("morning run 5k, 28 min, legs heavy", "knees are done. no more running for me, gonna try swimming"),
        ("3rd coffee today, need to cut down", "day 20 no caffeine, gave up coffee completely. headaches gone"),
        ("gaming till 2am again lol", "deleted my PSN account, quit gaming for good"),
        ("3 espressos before lunch, too many", "gave up caffeine completely - headaches are brutal"),
        ("writing in my diary every night before bed", "stopped journaling, it felt like a chore"),
        ("今天又抽了一包烟，咳嗽", "戒烟三个月了，这次是真的戒了"),
        ("每天晚上熬夜刷视频到一点多", "卸载了抖音，以后不再熬夜刷视频了"),
    ],
)
def test_a_habit_stopped_in_a_diarys_own_words_ends_the_habit(older: str, newer: str) -> None:
    """A clause that opens on the stopping ("no more …ing", "gave up …", "quit …", "以后不再…",
    "戒烟三个月了") ends the habit it names, and words naming the same habit (caffeine and
    an espresso, a journal and a diary) are one; "no more milk" stops no habit."""
    (ended,) = [s for s in statements(newer) if s.ended]
    assert ended.key.startswith("habit:")
    assert states_habit(older, ended.words)
    assert statements("No more milk, need to buy some.") == []


@pytest.mark.parametrize(
    ("older", "newer"),
    [
        ("Marco and I broke up. for the best i think", "Leo asked me to be his gf!!"),
        ("25th anniversary dinner with Gary at the Ivy", "divorce finalised. single again at 52"),
        ("和小王分手了，不想说了", "相亲认识的陈浩，挺聊得来，已经确定关系了"),
        ("我和阿杰订婚了", "今天领证了！"),
        ("10th anniversary with Greg, Napa", "been seeing Lena from pottery class for a couple months, it's nice"),
        ("10th anniversary with Greg, Napa", "divorce papers signed. Greg keeps the house, I keep the dog"),
    ],
)
def test_a_new_partner_after_a_break_up_or_a_divorce_in_a_diarys_words_is_the_current_state(
    older: str, newer: str
) -> None:
    """A new partner after a break-up is the current one (a break-up with someone else
    still ends no one else); someone else's divorce or a best man is no change."""
    (old,) = statements(older)
    (new,) = statements(newer)
    assert old.key == new.key == "partner" and updates(new, old)
    for text in (
        "My sister's divorce was finalised.",
        "He asked me to be his best man.",
        "single malt tonight",
        "been seeing Mum every Sunday",
        "moved in with Dad for the summer",
        "I've been seeing Dr Okafor for the knee",
    ):
        assert statements(text) == [], text
    assert not updates(statements("Tom and I broke up.")[0], statements("I'm married to Sam.")[0])


def test_a_request_to_remember_something_states_what_it_keeps() -> None:
    """A request such as "帮我记一下车停在B2" is a note to keep, not a request; a request to remember a
    question still asks."""
    for text in ("帮我记一下车停在B2", "remember that my locker is 112", "note: car on level 3"):
        assert not asks(text), text
    for text in ("remember what my PIN is?", "提醒我一下房东电话是多少", "tell me a story about dragons"):
        assert asks(text), text


def test_a_long_stopped_habit_is_the_same_habit_in_every_process() -> None:
    """A habit of more than four words is kept as its first four, in the order written: the
    same in every process (a set's order depends on the process's hash seed), so the key a
    memory's statements were kept under is the key a later process looks up."""
    code = (
        "from memcli.text.updates import statements;"
        "print(statements('I stopped drinking strong black coffee with sugar')[0].key)"
    )
    keys = {
        subprocess.run(
            [sys.executable, "-c", code],
            env={**os.environ, "PYTHONHASHSEED": str(seed)},
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        for seed in range(1, 5)
    }
    assert keys == {"habit:black coffe drink strong"}


@pytest.mark.parametrize(
    ("older", "newer"),
    [
        # a district by its short name, a parents' home one moves back to, a street of a move
        ("我住在杭州。", "搬到滨江了，离公司近"),
        ("北京的房子退租了", "回西安了 先住父母家 雁塔区这边"),
        ("租的房子在天河", "搬去了南山 通勤一小时"),
        ("rent on the Leeds flat is due Friday", "moving into 41 Queens Road next week"),
        ("new flat!! 3 Mill Lane, Hebden Bridge", "got the keys to 22 Birch Close, Hebden Bridge"),
        ("We live in Leith.", "We're renting in Portobello now"),
        # a title announced, an offer taken, a living by a doing, a move inside a company
        ("I work as a buyer at Tesco.", "Starting Monday I'm the new Head of Buying"),
        ("I work at Tesco.", "accepted the offer from Monzo, start in May"),
        ("I work as a teacher.", "freelancing as a designer since March"),
        ("我在银行工作。", "调岗到财务部，当会计"),
        ("我在招行上班", "新工作第一天 在一家小公司做运营 公司叫蓝鲸科技"),
        # one medicine for another
        ("atorvastatin 20mg every night", "switched from atorvastatin to rosuvastatin 10 mg"),
        ("I take sertraline 50 mg.", "came off sertraline, now on fluoxetine 20mg"),
        ("我每天吃阿托伐他汀20毫克。", "医生让停掉阿托伐他汀，换成瑞舒伐他汀10毫克"),
        # a couple's later state; a partner called by a familiar name
        ("My boyfriend Tom cooked dinner", "Tom proposed last night, we are engaged!"),
        ("和小王分手了", "小李约我看电影，我们在一起了"),
        # a membership renewed, then ended; a pass to a place for another; a service's membership lapsed
        ("renewed my Costco membership, $65", "cancelled my Costco membership"),
        ("在威尔士办了张年卡", "威尔士到期不续了，办了游泳馆的月卡"),
        ("充了个B站大会员", "B站大会员到期了，不续了"),
        # a diet a doctor orders by what it limits
        ("开始生酮，不吃米饭", "医生说要低盐饮食"),
    ],
)
def test_moves_titles_switches_and_passes_in_everyday_words_update_the_older(older: str, newer: str) -> None:
    (old,) = statements(older)
    (new,) = [s for s in statements(newer) if same_key(s.key, old.key)]
    assert updates(new, old)


@pytest.mark.parametrize(
    ("older", "newer"),
    [
        ("TikTok till 1am again, need to stop", "uninstalled TikTok, too much doomscrolling"),
        ("scrolling instagram every night in bed", "deleted my Instagram account"),
        ("今天又抽了一包烟，咳嗽", "烟终于戒掉了"),
        ("每天三杯咖啡，心慌", "咖啡也戒了，改喝茶"),
    ],
)
def test_an_app_uninstalled_or_a_habit_named_before_its_end_is_stopped(older: str, newer: str) -> None:
    (ended,) = [s for s in statements(newer) if s.ended]
    assert ended.key.startswith("habit:") and ended.words
    assert states_habit(older, ended.words)


def test_a_street_a_time_or_a_parents_home_alone_states_no_home_nor_job() -> None:
    """A street without a move, someone's home, something moved that is no home, an
    appointment and a superlative state nothing."""
    for text in (
        "boiler at our house on Harcourt Rd broke again",
        "我爸妈家在朝阳",
        "moved us all to a new phone plan",
        "dentist at Smile Dental 4pm",
        "vet for Pepper 10:30",
        "I'm the worst cook",
        "deleted the photos from the trip",
        "和老王他们吃饭，我们在一起了一晚上",
        "taking ibuprofen 400mg with my omeprazole, day off",
    ):
        assert not [s for s in statements(text) if not s.key.startswith("dose:")], text
    assert not updates(statements("engaged to Ravi!!")[0], statements("married Ravi today, best day ever")[0])


def test_questions_in_other_words_ask_about_the_home_and_the_diet() -> None:
    from memcli.text.updates import answers_asked

    assert answers_asked("what's my current address?", "moving into 41 Queens Road next week")
    assert answers_asked("which area are we renting in?", "We're renting in Portobello now")
    assert answers_asked("can I eat bread?", "coeliac, so strictly gluten-free from now on")
    assert answers_asked("医生让我怎么吃", "医生说要低盐饮食")
    assert answers_asked("我目前在哪个单位工作", "调岗到财务部，当会计")
    assert answers_asked("我现在做的是什么岗位？", "新工作第一天 在一家小公司做运营 公司叫蓝鲸科技")


def test_a_bare_note_of_a_habits_end_ends_the_habit_noted_just_before(
    runner: CliRunner, fake_embedder: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A note of "quit." or "戒了！" alone ends the latest habit its writer noted (a frequency,
    "again", "still") in the 90 days before it; not a note that states something else, not an
    older habit."""
    old_habit = remember_at(runner, monkeypatch, "2023-01-01T09:00:00", "biting my nails again")
    vaping = remember_at(runner, monkeypatch, "2024-03-01T09:00:00", "vaping every evening, need to stop")
    job = remember_at(runner, monkeypatch, "2024-03-05T09:00:00", "I work as a nurse, three nights a week")
    trip = remember_at(runner, monkeypatch, "2024-03-10T09:00:00", "booked the train to Leeds")
    quit = remember_at(runner, monkeypatch, "2024-03-20T09:00:00", "Quit. For good this time.")
    assert show_json(runner, vaping)["superseded_by"] == quit
    for other in (old_habit, job, trip):
        assert show_json(runner, other)["superseded_by"] in (None, ""), other


def test_a_dose_changed_without_the_medicines_name_changes_the_dose_noted_before(
    runner: CliRunner, fake_embedder: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A note of "dose went up to 20mg" (no medicine named) changes the latest dose its writer noted in
    the same unit; a dose in another unit, or the same value again, is left."""
    vitamin = remember_at(runner, monkeypatch, "2024-01-01T09:00:00", "vitamin D 25 mcg with breakfast")
    ramipril = remember_at(runner, monkeypatch, "2024-02-01T09:00:00", "I take ramipril 5 mg every morning")
    same = remember_at(runner, monkeypatch, "2024-02-10T09:00:00", "nurse said stay as we are, kept it at 5mg")
    upped = remember_at(runner, monkeypatch, "2024-04-01T09:00:00", "BP still high, dose went up to 10mg")
    assert show_json(runner, ramipril)["superseded_by"] == upped
    assert show_json(runner, vitamin)["superseded_by"] in (None, "")
    assert show_json(runner, same)["superseded_by"] in (None, "")
    assert [s.value for s in statements("GP bumped me to 88 mcg")] == ["88 mcg"]
    assert statements("my mum's dose went up to 20mg") == []
