"""Consolidation through the command line (CliRunner, fake embedder, and the scripted model of
``test_consolidate``): ``memcli consolidate`` and its options and output, the lock, and the
commands that show what it wrote: ``portrait``, ``summary``, ``history``; and the consolidated
memories in the ``ask`` prompt. Turns come in through ``memcli import`` of a JSONL log."""

from __future__ import annotations

import json
import re
import time
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from cli_checks import assert_error, ok
from test_consolidate import (
    DAY1,
    DAY1_TURNS,
    DAY2,
    DAY2_TURNS,
    DAY3,
    DAY3_TURNS,
    MOVE_TURNS,
    OLD_FACT,
    UPDATED_FACT,
    Script,
)
from typer.testing import CliRunner

from memcli.cli import app
from memcli.errors import ExitCode

REPORT_KEYS = {
    "dry_run",
    "users",
    "days",
    "sessions",
    "message_pairs",
    "global_folds",
    "summaries_written",
    "facts",
    "invalid_outputs",
    "duration_seconds",
    "warnings",
    "path",
    "written_by",
    "failed",
    "failures",
    "graph",
}
FACT_KEYS = {"added", "updated", "deleted", "unchanged", "rejected", "deduplicated"}
SUMMARY_LINE = re.compile(
    r"^consolidated (\d+) days?, (\d+) sessions? and (\d+) message pairs? in [\d.]+ s: (\d+) summaries written; "
    r"facts (\d+) added, (\d+) updated, (\d+) deleted, (\d+) unchanged, (\d+) rejected as ungrounded, "
    r"(\d+) duplicates; (\d+) invalid model outputs \((\d+) replaced by extraction\); written by (llm|extractive|no one)$"
)

GRAPH_LINE = re.compile(
    r"^graph: \d+ memor(y|ies) read, \d+ mentions?, \d+ relations? \(\d+ closed by a newer one\), \d+ relation memories written$"
)


@pytest.fixture
def script(fake_model: Any) -> Script:
    script = Script()
    fake_model.responder = script
    return script


def import_days(
    runner: CliRunner, tmp_path: Path, *days: tuple[str, str, list[tuple[str, str]]], user: str | None = None
) -> None:
    """Import a JSONL log of (day, session, turns) through ``memcli import``."""
    log = tmp_path / f"log-{'-'.join(d for d, _, _ in days)}-{user}.jsonl"
    lines = [
        json.dumps({"role": speaker, "content": text, "timestamp": f"{day}T10:{i:02d}:00", "session": session})
        for day, session, turns in days
        for i, (speaker, text) in enumerate(turns)
    ]
    log.write_text("\n".join(lines) + "\n")
    ok(runner.invoke(app, ["import", str(log), "--quiet", *(["--user", user] if user else [])]))


def two_days(runner: CliRunner, tmp_path: Path, user: str | None = None) -> None:
    import_days(runner, tmp_path, (DAY1, "s1", DAY1_TURNS), (DAY2, "s2", DAY2_TURNS), user=user)


def consolidate_json(runner: CliRunner, *args: str) -> dict[str, Any]:
    return json.loads(ok(runner.invoke(app, ["consolidate", "--json", *args])).stdout)


def listed(runner: CliRunner, *args: str) -> list[dict[str, Any]]:
    return json.loads(ok(runner.invoke(app, ["list", "-n", "0", "--json", *args])).stdout)


def texts(runner: CliRunner, command: str, *args: str) -> Any:
    """The --json of a show command: one memory or None (portrait, summary), or a list (portrait --daily, history)."""
    return json.loads(ok(runner.invoke(app, [command, "--json", *args])).stdout)


# consolidate -----------------------------------------------------------------------------------


def test_consolidate_json_has_every_count(runner: CliRunner, tmp_path: Path, script: Script) -> None:
    two_days(runner, tmp_path)
    report = consolidate_json(runner)
    assert set(report) == REPORT_KEYS
    assert set(report["facts"]) == FACT_KEYS
    counts = {k: v for k, v in report.items() if k not in {"duration_seconds", "global_folds", "written_by", "graph"}}
    assert counts == {
        "dry_run": False,
        "users": ["tester"],
        "days": 2,
        "sessions": 2,
        "message_pairs": 3,
        "summaries_written": 8,
        "facts": {"added": 3, "updated": 0, "deleted": 0, "unchanged": 0, "rejected": 0, "deduplicated": 0},
        "invalid_outputs": 0,
        "warnings": [],
        "path": "llm",
        "failed": 0,
        "failures": [],
    }
    assert set(report["written_by"]) == {"llm"} and report["written_by"]["llm"] >= 2 + 2 + 3
    assert report["graph"]["scanned"] == 5 + 3 + 2  # the turns, the facts and the two days' event summaries
    assert isinstance(report["global_folds"], int) and report["global_folds"] >= 0
    assert isinstance(report["duration_seconds"], float) and report["duration_seconds"] >= 0
    kinds = sorted(m["kind"] for m in listed(runner) if m["kind"] not in ("turn", "relation"))
    assert kinds == sorted(
        ["event_daily"] * 2
        + ["portrait_daily"] * 2
        + ["event_global", "portrait_global", "running_summary"]
        + ["fact"] * 3
    )


def test_consolidate_prints_one_summary_line_then_nothing_new(
    runner: CliRunner, tmp_path: Path, script: Script, fake_model: Any
) -> None:
    two_days(runner, tmp_path)
    result = ok(runner.invoke(app, ["consolidate"]))
    line, graph = result.stdout.splitlines()
    assert GRAPH_LINE.match(graph), graph
    match = SUMMARY_LINE.match(line)
    assert match, line
    assert [int(g) for g in match.groups()[:-1]] == [2, 2, 3, 8, 3, 0, 0, 0, 0, 0, 0, 0] and match.group(13) == "llm"
    calls = len(fake_model.structured_calls)

    again = ok(runner.invoke(app, ["consolidate"]))

    assert again.stdout == "nothing new to consolidate\n"
    assert len(fake_model.structured_calls) == calls
    assert consolidate_json(runner)["days"] == 0


def test_since_and_until_restrict_the_days(runner: CliRunner, tmp_path: Path, script: Script) -> None:
    import_days(runner, tmp_path, (DAY1, "s1", DAY1_TURNS), (DAY2, "s2", DAY2_TURNS), (DAY3, "s3", DAY3_TURNS))

    middle = consolidate_json(runner, "--since", DAY2, "--until", DAY2)
    assert (middle["days"], middle["sessions"], middle["message_pairs"]) == (1, 1, 1)
    assert [m["day"] for m in texts(runner, "portrait", "--daily")] == [DAY2]
    assert texts(runner, "summary", "--day", DAY1) is None

    later = consolidate_json(runner, "--since", "May 10, 2023")
    assert (later["days"], later["message_pairs"]) == (1, 1)
    earlier = consolidate_json(runner, "--until", DAY1)
    assert (earlier["days"], earlier["message_pairs"]) == (1, 2)
    assert texts(runner, "summary", "--day", DAY1)["day"] == DAY1
    assert consolidate_json(runner)["days"] == 0


@pytest.mark.parametrize(
    "args",
    [
        ["--since", DAY3, "--until", DAY1],
        ["--since", "the day after tomorrow-ish"],
        ["--until", "2023-13-45"],
    ],
    ids=["since after until", "unreadable since", "unreadable until"],
)
def test_bad_date_range_is_a_usage_error(
    runner: CliRunner, tmp_path: Path, script: Script, fake_model: Any, args: list[str]
) -> None:
    two_days(runner, tmp_path)
    line = assert_error(runner.invoke(app, ["consolidate", *args]), ExitCode.USAGE)
    assert "--since" in line or "--until" in line
    assert fake_model.structured_calls == []
    assert [m for m in listed(runner) if m["kind"] != "turn"] == []


def test_dry_run_counts_the_work_and_changes_nothing(
    runner: CliRunner, tmp_path: Path, script: Script, fake_model: Any
) -> None:
    two_days(runner, tmp_path)
    before = listed(runner)

    text = ok(runner.invoke(app, ["consolidate", "--dry-run"])).stdout
    report = consolidate_json(runner, "--dry-run")

    assert text == "would consolidate 2 days, 2 sessions and 3 message pairs; 5 memories to read for the graph\n"
    assert report["dry_run"] is True
    assert (report["days"], report["sessions"], report["message_pairs"]) == (2, 2, 3)
    assert (report["summaries_written"], report["facts"]["added"]) == (0, 0)
    assert fake_model.structured_calls == []
    assert listed(runner) == before
    assert texts(runner, "history") == []
    assert consolidate_json(runner)["days"] == 2


def test_quiet_prints_no_warning_on_stderr(
    runner: CliRunner, tmp_path: Path, script: Script, fake_model: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    def junk_for_day1(task: str, content: str) -> str:
        return "no JSON here" if task == "summary" and "Monday 8 May 2023" in content else script(task, content)

    fake_model.responder = junk_for_day1
    two_days(runner, tmp_path)
    quiet = ok(runner.invoke(app, ["consolidate", "--quiet"]))
    assert (quiet.stdout, quiet.stderr) == ("", "")  # cron mails nothing on a night that worked
    assert consolidate_json(runner, "--dry-run")["days"] == 0  # it did the work

    monkeypatch.setenv("MEMCLI_HOME", str(tmp_path / "loud"))  # the same run, not quiet
    two_days(runner, tmp_path)
    loud = ok(runner.invoke(app, ["consolidate"]))
    assert SUMMARY_LINE.match(loud.stdout.splitlines()[0]).group(11) == "1"
    [warning] = loud.stderr.splitlines()
    assert warning.startswith("memcli: warning: ") and DAY1 in warning and "extractive one was written" in warning
    assert "not JSON" in warning


def test_all_users_consolidates_every_user(runner: CliRunner, tmp_path: Path, script: Script) -> None:
    two_days(runner, tmp_path, user="ana")
    import_days(runner, tmp_path, (DAY3, "s3", DAY3_TURNS), user="bob")

    report = consolidate_json(runner, "--all-users")

    assert report["users"] == ["ana", "bob"]
    assert (report["days"], report["sessions"], report["message_pairs"]) == (3, 3, 4)
    bob = texts(runner, "summary", "--user", "bob")
    assert bob["user"] == "bob" and bob["text"] == Script.SUMMARIES["watercolours"]
    ana = texts(runner, "portrait", "--user", "ana")
    assert ana["user"] == "ana" and "Porto" not in ana["text"] and "Rex" in ana["text"]
    assert consolidate_json(runner, "--all-users")["days"] == 0


def test_default_user_only_without_all_users(runner: CliRunner, tmp_path: Path, script: Script) -> None:
    two_days(runner, tmp_path, user="ana")
    import_days(runner, tmp_path, (DAY3, "s3", DAY3_TURNS), user="bob")
    report = consolidate_json(runner, "--user", "bob")
    assert (report["users"], report["days"]) == (["bob"], 1)
    assert texts(runner, "summary", "--user", "ana") is None


def test_second_consolidation_exits_4_while_one_runs(
    runner: CliRunner, tmp_path: Path, script: Script, fake_model: Any
) -> None:
    two_days(runner, tmp_path)
    seen: list[tuple[Any, float]] = []

    def respond(task: str, content: str) -> str:
        if not seen:
            started = time.monotonic()
            seen.append(
                (runner.invoke(app, ["consolidate"], env={"MEMCLI_LOCK_TIMEOUT": "0.3"}), time.monotonic() - started)
            )
        return script(task, content)

    fake_model.responder = respond
    first = consolidate_json(runner)

    [(second, waited)] = seen
    line = assert_error(second, ExitCode.STORE_LOCKED)
    assert "consolidate" in line and waited >= 0.3
    assert first["days"] == 2 and first["invalid_outputs"] == 0


def test_contradicted_fact_leaves_recall_and_list_and_stays_in_history(
    runner: CliRunner, tmp_path: Path, script: Script
) -> None:
    import_days(runner, tmp_path, (DAY1, "s1", [("Ana", "I live in Lyon with my puppy Rex.")]))
    assert consolidate_json(runner)["invalid_outputs"] == 0
    [old] = listed(runner, "--kind", "fact")
    assert old["text"] == OLD_FACT
    import_days(runner, tmp_path, (DAY2, "s2", MOVE_TURNS))
    script.decision = {"event": "UPDATE", "target": 0, "text": UPDATED_FACT}

    report = consolidate_json(runner)

    assert (report["facts"]["updated"], report["facts"]["added"], report["invalid_outputs"]) == (1, 0, 0)
    [new] = listed(runner, "--kind", "fact")
    assert new["text"] == UPDATED_FACT
    assert old["id"] not in [m["id"] for m in listed(runner)]
    hits = json.loads(
        ok(runner.invoke(app, ["recall", "Ana lives in Lyon with her puppy Rex", "--kind", "fact", "--json"])).stdout
    )
    assert [h["id"] for h in hits] == [new["id"]]
    shown = json.loads(ok(runner.invoke(app, ["show", old["id"], "--json"])).stdout)
    assert shown["text"] == OLD_FACT and old["valid_to"] is None and new["valid_to"] is None
    ended, started = datetime.fromisoformat(shown["valid_to"]), datetime.fromisoformat(new["valid_from"])
    assert ended == started  # the update ends the old fact when the new one starts: at the first turn of DAY2
    assert ended.date().isoformat() == DAY2 and datetime.fromisoformat(old["valid_from"]) < ended
    lines = ok(runner.invoke(app, ["history", old["id"][:6]])).stdout.splitlines()
    assert [line.split("\t")[1] for line in lines] == ["ADD", "UPDATE"]
    assert f"{OLD_FACT} -> {UPDATED_FACT} (replaced by {new['id']})" in lines[1]


# portrait, summary, history --------------------------------------------------------------------

SHOW_COMMANDS = [
    ["portrait"],
    ["portrait", "--daily"],
    ["summary"],
    ["summary", "--day", DAY1],
    ["summary", "--running"],
    ["history"],
]
LIST_COMMANDS = (["portrait", "--daily"], ["history"])
"""The show commands whose --json is a list; the others print one memory, or null before there is one."""


@pytest.mark.parametrize("command", SHOW_COMMANDS, ids=" ".join)
def test_before_consolidation_show_commands_print_only_a_status_line(
    runner: CliRunner, tmp_path: Path, fake_embedder: Any, command: list[str]
) -> None:
    two_days(runner, tmp_path)
    result = ok(runner.invoke(app, command))
    assert result.stdout == ""
    [status] = result.stderr.splitlines()
    assert status.strip()
    empty = [] if command in LIST_COMMANDS else None
    assert json.loads(ok(runner.invoke(app, [*command, "--json"])).stdout) == empty


@pytest.mark.parametrize("command", SHOW_COMMANDS, ids=" ".join)
def test_before_consolidation_show_commands_are_silent_with_quiet(
    runner: CliRunner, fake_embedder: Any, command: list[str]
) -> None:
    result = ok(runner.invoke(app, [*command, "--quiet"]))
    assert result.stdout == "" and result.stderr == ""


@pytest.fixture
def consolidated(runner: CliRunner, tmp_path: Path, script: Script) -> dict[str, Any]:
    two_days(runner, tmp_path)
    return consolidate_json(runner)


def test_portrait_prints_the_global_portrait_and_daily_ones_by_day(
    runner: CliRunner, consolidated: dict[str, Any]
) -> None:
    portrait = texts(runner, "portrait")
    assert portrait["kind"] == "portrait_global"
    assert ok(runner.invoke(app, ["portrait"])).stdout == portrait["text"] + "\n"
    assert (
        Script.PORTRAITS["puppy named Rex"] in portrait["text"]
        and Script.PORTRAITS["train to Lisbon"] in portrait["text"]
    )
    daily = ok(runner.invoke(app, ["portrait", "--daily"])).stdout.splitlines()
    assert daily == [f"{DAY1}\t{Script.PORTRAITS['puppy named Rex']}", f"{DAY2}\t{Script.PORTRAITS['train to Lisbon']}"]
    assert [(m["kind"], m["day"]) for m in texts(runner, "portrait", "--daily")] == [
        ("portrait_daily", DAY1),
        ("portrait_daily", DAY2),
    ]


def test_summary_prints_the_global_daily_and_running_summaries(runner: CliRunner, consolidated: dict[str, Any]) -> None:
    events = texts(runner, "summary")
    assert events["kind"] == "event_global"
    assert ok(runner.invoke(app, ["summary"])).stdout == events["text"] + "\n"
    assert (
        Script.SUMMARIES["puppy named Rex"] in events["text"] and Script.SUMMARIES["train to Lisbon"] in events["text"]
    )
    assert ok(runner.invoke(app, ["summary", "--day", DAY2])).stdout == Script.SUMMARIES["train to Lisbon"] + "\n"
    assert (
        ok(runner.invoke(app, ["summary", "--day", "9 May 2023"])).stdout == Script.SUMMARIES["train to Lisbon"] + "\n"
    )
    daily = texts(runner, "summary", "--day", DAY1)
    assert (daily["kind"], daily["day"], daily["source"]) == ("event_daily", DAY1, f"consolidate:{DAY1}")
    running = ok(runner.invoke(app, ["summary", "--running"])).stdout.splitlines()
    assert running == [Script.SUMMARIES["puppy named Rex"], Script.SUMMARIES["train to Lisbon"]]
    assert texts(runner, "summary", "--running")["kind"] == "running_summary"


@pytest.mark.parametrize(
    "args", [["--day", DAY1, "--running"], ["--day", "not a day"]], ids=["day and running", "unreadable day"]
)
def test_summary_bad_options_are_usage_errors(runner: CliRunner, consolidated: dict[str, Any], args: list[str]) -> None:
    assert_error(runner.invoke(app, ["summary", *args]), ExitCode.USAGE)


def test_history_of_a_memory_by_id_prefix(runner: CliRunner, consolidated: dict[str, Any]) -> None:
    events = texts(runner, "summary")
    [line] = ok(runner.invoke(app, ["history", events["id"][:6]])).stdout.splitlines()
    when, event, memory_id, change, sources = line.split("\t")
    assert (event, memory_id, change) == ("ADD", events["id"], events["text"])
    assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d", when)
    assert sources.split(",") == events["source_ids"]
    [entry] = texts(runner, "history", events["id"])
    assert (entry["memory_id"], entry["event"], entry["old_text"], entry["new_text"]) == (
        events["id"],
        "ADD",
        "",
        events["text"],
    )
    at = datetime.fromisoformat(entry["at"])
    assert at.utcoffset() is not None
    assert at.strftime("%Y-%m-%d %H:%M") == when


def test_history_of_a_deleted_memory_still_shows(runner: CliRunner, consolidated: dict[str, Any]) -> None:
    fact = next(m for m in listed(runner, "--kind", "fact") if m["text"] == "Rex is four months old.")
    ok(runner.invoke(app, ["delete", fact["id"]]))
    assert_error(runner.invoke(app, ["show", fact["id"]]), ExitCode.NOT_FOUND)

    added, purged = texts(runner, "history", fact["id"][:5])

    # the events stay, without the deleted text (deleted means gone: tests/test_purge.py)
    assert (added["memory_id"], added["event"], added["new_text"]) == (fact["id"], "ADD", "")
    assert (purged["memory_id"], purged["event"], purged["old_text"], purged["new_text"]) == (
        fact["id"],
        "PURGE",
        "",
        "",
    )
    assert_error(runner.invoke(app, ["history", "0000ffff"]), ExitCode.NOT_FOUND)


def test_history_without_id_lists_the_newest_events_first(runner: CliRunner, consolidated: dict[str, Any]) -> None:
    entries = texts(runner, "history", "-n", "0")
    consolidated_ids = {m["id"] for m in listed(runner) if m["kind"] != "turn"}
    assert {e["memory_id"] for e in entries} == consolidated_ids
    assert [e["seq"] for e in entries] == sorted((e["seq"] for e in entries), reverse=True)
    # ADD of each daily and global one, ADD and UPDATE of the running memory, 3 facts, a relation
    assert len(entries) == 4 + 2 + 2 + 3 + 1
    assert [e["event"] for e in entries].count("UPDATE") == 1
    lines = ok(runner.invoke(app, ["history", "-n", "3"])).stdout.splitlines()
    assert [line.split("\t")[2] for line in lines] == [e["memory_id"] for e in entries[:3]]
    assert texts(runner, "history", "--user", "nobody") == []


# ask -----------------------------------------------------------------------------------------------


def test_ask_prompt_carries_the_portrait_the_event_summary_and_the_running_memory(
    runner: CliRunner, consolidated: dict[str, Any], fake_model: Any
) -> None:
    portrait = texts(runner, "portrait")
    events = texts(runner, "summary")
    running = texts(runner, "summary", "--running")

    ok(runner.invoke(app, ["ask", "Where did I travel?"]))

    system = fake_model.prompts[-1][0].content
    assert portrait["text"] in system and events["text"] in system and running["text"] in system


def test_ask_prompt_before_consolidation_has_no_consolidated_memory(
    runner: CliRunner, tmp_path: Path, fake_model: Any
) -> None:
    two_days(runner, tmp_path)
    ok(runner.invoke(app, ["ask", "Where did I travel?"]))
    system = fake_model.prompts[-1][0].content
    assert "What you know of" not in system and "What has happened so far" not in system
    assert "Your memory of past conversations" not in system
