"""The ``memcli`` command line, driven through typer's CliRunner with the fake embedder and
the scripted fake chat model. Checks stdout (data), stderr (one line per error) and exit codes."""

from __future__ import annotations

import json
import os
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from cli_checks import assert_error, ok
from conftest import list_json
from typer.testing import CliRunner

from memcli import __version__
from memcli.cli import app
from memcli.errors import ExitCode

# helpers --------------------------------------------------------------------------


def remember(runner: CliRunner, text: str, *args: str) -> str:
    return ok(runner.invoke(app, ["remember", text, *args])).stdout.strip()


def recall_json(runner: CliRunner, *args: str) -> list[dict[str, Any]]:
    return json.loads(ok(runner.invoke(app, ["recall", *args, "--json"])).stdout)


def locomo_sample_file(tmp_path: Path, name: str = "locomo.json", bad_second: bool = False) -> Path:
    """A small LoCoMo-shaped file of two conversations (``bad_second``: the second has a
    turn without text); the benchmark's own file is the ``locomo_file`` fixture."""
    second_turns: list[Any] = [{"speaker": "Cy", "dia_id": "D1:1", "text": "I run marathons."}]
    if bad_second:
        second_turns.append({"speaker": "Di", "dia_id": "D1:2"})  # no text
    data = [
        {
            "sample_id": "conv-a",
            "conversation": {
                "speaker_a": "Ann",
                "speaker_b": "Bob",
                "session_1_date_time": "1:56 pm on 8 May, 2023",
                "session_1": [
                    {"speaker": "Ann", "dia_id": "D1:1", "text": "I adopted a puppy named Rex."},
                    {"speaker": "Bob", "dia_id": "D1:2", "text": "What breed is Rex?"},
                    {"speaker": "Ann", "dia_id": "D1:3", "text": "A beagle.", "blip_caption": "a photo of a beagle"},
                ],
                "session_2_date_time": "10:00 am on 25 May, 2023",
                "session_2": [{"speaker": "Bob", "dia_id": "D2:1", "text": "I started pottery classes."}],
            },
        },
        {
            "sample_id": "conv-b",
            "conversation": {"session_1_date_time": "9:00 am on 1 June, 2023", "session_1": second_turns},
        },
    ]
    path = tmp_path / name
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")
    return path


# version, help, usage --------------------------------------------------------------------


def test_version_prints_the_package_version(runner: CliRunner) -> None:
    result = ok(runner.invoke(app, ["--version"]))
    assert result.stdout.strip() == f"memcli {__version__}"


def test_no_arguments_shows_usage_with_the_commands(runner: CliRunner) -> None:
    """The help of the root (and of a group) given no arguments goes to stdout, as ``--help``
    does (``memcli | less`` shows it), with the usage error's exit code."""
    result = runner.invoke(app, [])
    assert result.exit_code == int(ExitCode.USAGE)
    assert "Traceback" not in result.stdout + result.stderr
    assert "Usage" in result.stdout and "Usage" not in result.stderr
    for command in ("chat", "ask", "remember", "recall", "import", "list", "show", "delete", "stats", "paths"):
        assert command in result.stdout
    result = runner.invoke(app, ["config"])
    assert result.exit_code == int(ExitCode.USAGE)
    assert "Usage: memcli config" in result.stdout and "Usage" not in result.stderr


def test_unknown_command_is_a_usage_error(runner: CliRunner) -> None:
    line = assert_error(runner.invoke(app, ["memorize", "x"]), ExitCode.USAGE)
    assert "memorize" in line


def test_invalid_option_value_is_a_usage_error(runner: CliRunner, fake_embedder: Any) -> None:
    assert_error(runner.invoke(app, ["remember", "x", "--importance", "high"]), ExitCode.USAGE)
    assert list_json(runner) == []


# remember -------------------------------------------------------------------------------


def test_remember_prints_the_id_of_the_stored_note(runner: CliRunner, fake_embedder: Any) -> None:
    memory_id = remember(runner, "My sister Ana lives in Porto")
    [stored] = list_json(runner)
    assert stored["id"] == memory_id
    assert stored["text"] == "My sister Ana lives in Porto"
    assert stored["kind"] == "note" and stored["user"] == "tester"


def test_remember_reads_the_note_from_stdin(runner: CliRunner, fake_embedder: Any) -> None:
    result = ok(runner.invoke(app, ["remember", "-"], input="The wifi password is on the fridge\n"))
    memory_id = result.stdout.strip()
    shown = json.loads(ok(runner.invoke(app, ["show", memory_id, "--json"])).stdout)
    assert shown["text"] == "The wifi password is on the fridge"


@pytest.mark.parametrize("importance", ["1.5", "-0.1"])
def test_remember_importance_out_of_range_is_a_usage_error(
    runner: CliRunner, fake_embedder: Any, importance: str
) -> None:
    line = assert_error(
        runner.invoke(app, ["remember", "x", "--importance", importance]), ExitCode.USAGE
    )  # an invalid option value, as docs/errors.md says
    assert "importance" in line
    assert list_json(runner) == []


def test_remember_stores_importance_and_tags(runner: CliRunner, fake_embedder: Any) -> None:
    memory_id = remember(runner, "Mum's birthday is 4 March", "--tag", "family", "-t", "dates", "--importance", "0.9")
    shown = json.loads(ok(runner.invoke(app, ["show", memory_id, "--json"])).stdout)
    assert sorted(shown["tags"]) == ["dates", "family"]
    assert shown["importance"] == pytest.approx(0.9)


def test_a_tag_with_a_comma_is_kept_as_given(runner: CliRunner, fake_embedder: Any) -> None:
    reported = json.loads(
        ok(runner.invoke(app, ["remember", "Trip notes", "--tag", "new york, usa", "--json"])).stdout
    )["memory"]
    assert reported["tags"] == ["new york, usa"]
    shown = json.loads(ok(runner.invoke(app, ["show", reported["id"], "--json"])).stdout)
    assert shown["tags"] == reported["tags"]


def test_remember_same_note_twice_is_stored_once(runner: CliRunner, fake_embedder: Any) -> None:
    first = ok(runner.invoke(app, ["remember", "I like green tea"]))
    second = ok(runner.invoke(app, ["remember", "I like green tea"]))
    assert first.stdout == second.stdout
    assert "already" in second.stderr and "already" not in first.stderr
    assert len(list_json(runner)) == 1


def test_remember_empty_text_is_bad_input(runner: CliRunner, fake_embedder: Any) -> None:
    assert_error(runner.invoke(app, ["remember", "   "]), ExitCode.BAD_INPUT)
    assert_error(runner.invoke(app, ["remember", "-"], input=""), ExitCode.BAD_INPUT)
    assert list_json(runner) == []


def test_remember_json_reports_the_note(runner: CliRunner, fake_embedder: Any) -> None:
    data = json.loads(ok(runner.invoke(app, ["remember", "I play chess", "--json"])).stdout)
    assert set(data) == {"memory", "added", "ids"}
    assert data["memory"]["text"] == "I play chess" and data["added"] is True and data["ids"] == [data["memory"]["id"]]
    again = json.loads(ok(runner.invoke(app, ["remember", "I play chess", "--json"])).stdout)
    assert again["memory"]["id"] == data["memory"]["id"] and again["added"] is False


def test_user_option_keeps_memories_apart(runner: CliRunner, fake_embedder: Any) -> None:
    remember(runner, "Alice's secret", "--user", "alice")
    remember(runner, "Bob's secret", "--user", "bob")
    assert [m["text"] for m in list_json(runner, "--user", "alice")] == ["Alice's secret"]
    assert [m["text"] for m in recall_json(runner, "secret", "--user", "bob")] == ["Bob's secret"]
    assert list_json(runner) == []


# recall ----------------------------------------------------------------------------------


def test_recall_ranks_the_matching_memory_first(runner: CliRunner, fake_embedder: Any) -> None:
    remember(runner, "The printer on the second floor needs toner")
    dog = remember(runner, "My dog Rex loves the beach")
    remember(runner, "Quarterly taxes are due in April")
    hits = recall_json(runner, "where does my dog Rex like to go")
    assert hits[0]["id"] == dog
    scores = [h["score"]["score"] for h in hits]
    assert scores == sorted(scores, reverse=True)


def test_recall_json_lists_id_kind_day_score_text_source(
    runner: CliRunner, fake_embedder: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMCLI_NOW", "2023-05-08T10:00:00")
    memory_id = remember(runner, "My dog Rex loves the beach")
    hits = recall_json(runner, "dog")
    assert isinstance(hits, list) and len(hits) == 1
    hit = hits[0]
    for key in ("id", "kind", "day", "created_at", "score", "text", "source"):
        assert key in hit
    assert hit["id"] == memory_id
    assert hit["kind"] == "note"
    assert hit["day"] == "2023-05-08"
    created = datetime.fromisoformat(hit["created_at"])
    assert created.utcoffset() is not None
    assert created == datetime(2023, 5, 8, 10).astimezone()
    assert hit["text"] == "My dog Rex loves the beach"
    score = hit["score"]
    assert set(score) == {"score", "relevance", "similarity", "signals", "components"}
    assert isinstance(score["score"], float) and score["score"] > 0
    # recall lists the memory as show does, plus its score block
    shown = json.loads(ok(runner.invoke(app, ["show", memory_id, "--json"])).stdout)
    assert set(hit) - set(shown) == {"score"}


def test_recall_text_output_has_one_line_per_memory(runner: CliRunner, fake_embedder: Any) -> None:
    first = remember(runner, "apples are red")
    second = remember(runner, "apples are green sometimes")
    lines = ok(runner.invoke(app, ["recall", "apples"])).stdout.splitlines()
    assert len(lines) == 2
    assert {line.split("\t")[0] for line in lines} == {first, second}


def test_recall_k_limits_the_number_of_memories(runner: CliRunner, fake_embedder: Any) -> None:
    for i in range(5):
        remember(runner, f"note number {i} about gardening")
    assert len(recall_json(runner, "gardening", "-k", "2")) == 2
    assert len(recall_json(runner, "gardening", "-k", "10")) == 5


def test_recall_k_below_one_is_a_usage_error(runner: CliRunner, fake_embedder: Any) -> None:
    assert_error(runner.invoke(app, ["recall", "x", "-k", "0"]), ExitCode.USAGE)


def test_recall_kind_keeps_one_kind(runner: CliRunner, fake_embedder: Any, tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"
    log.write_text(
        json.dumps({"role": "user", "content": "We talked about hiking", "timestamp": "2023-01-01T10:00:00"}) + "\n"
    )
    ok(runner.invoke(app, ["import", str(log)]))
    note = remember(runner, "hiking boots are in the cellar")
    assert {h["kind"] for h in recall_json(runner, "hiking")} == {"turn", "note"}
    notes = recall_json(runner, "hiking", "--kind", "note")
    assert [h["id"] for h in notes] == [note]
    assert [h["kind"] for h in recall_json(runner, "hiking", "--kind", "turn")] == ["turn"]


def test_recall_unknown_kind_is_a_usage_error(runner: CliRunner, fake_embedder: Any) -> None:
    line = assert_error(runner.invoke(app, ["recall", "x", "--kind", "diary"]), ExitCode.USAGE)
    assert "diary" in line


def test_recall_since_keeps_memories_learned_on_or_after_the_date(
    runner: CliRunner, fake_embedder: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMCLI_NOW", "2023-01-15T12:00:00")
    remember(runner, "the old plan for the garden")
    monkeypatch.setenv("MEMCLI_NOW", "2023-06-01T12:00:00")
    new = remember(runner, "the new plan for the garden")
    assert len(recall_json(runner, "garden plan")) == 2
    hits = recall_json(runner, "garden plan", "--since", "2023-03-01")
    assert [h["id"] for h in hits] == [new]
    assert recall_json(runner, "garden plan", "--since", "2023-07-01") == []


def test_recall_unreadable_since_is_a_usage_error(runner: CliRunner, fake_embedder: Any) -> None:
    assert_error(runner.invoke(app, ["recall", "x", "--since", "the other day"]), ExitCode.USAGE)


def test_recall_on_an_empty_store_finds_nothing(runner: CliRunner, fake_embedder: Any) -> None:
    result = ok(runner.invoke(app, ["recall", "anything"]))
    assert result.stdout == ""
    assert recall_json(runner, "anything") == []


# list, show, delete, stats, paths ------------------------------------------------------------


def test_list_shows_newest_first_and_limit(
    runner: CliRunner, fake_embedder: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    ids = []
    for day in ("01", "02", "03"):
        monkeypatch.setenv("MEMCLI_NOW", f"2023-03-{day}T09:00:00")
        ids.append(remember(runner, f"entry of March {day}"))
    assert [m["id"] for m in list_json(runner)] == ids[::-1]
    limited = json.loads(ok(runner.invoke(app, ["list", "-n", "2", "--json"])).stdout)
    assert [m["id"] for m in limited] == ids[:0:-1]
    lines = ok(runner.invoke(app, ["list"])).stdout.splitlines()
    assert [line.split("\t")[0] for line in lines] == ids[::-1]


def test_list_unknown_kind_or_negative_limit_is_a_usage_error(runner: CliRunner, fake_embedder: Any) -> None:
    assert_error(runner.invoke(app, ["list", "--kind", "diary"]), ExitCode.USAGE)
    assert_error(runner.invoke(app, ["list", "-n", "-1"]), ExitCode.USAGE)


def test_show_accepts_the_full_id_or_a_unique_prefix(runner: CliRunner, fake_embedder: Any) -> None:
    memory_id = remember(runner, "The spare key is under the blue pot")
    remember(runner, "Something else entirely")
    full = json.loads(ok(runner.invoke(app, ["show", memory_id, "--json"])).stdout)
    prefix = json.loads(ok(runner.invoke(app, ["show", memory_id[:8], "--json"])).stdout)
    assert full == prefix
    assert full["id"] == memory_id and full["text"] == "The spare key is under the blue pot"
    text = ok(runner.invoke(app, ["show", memory_id[:6]])).stdout
    assert f"id: {memory_id}" in text and "The spare key is under the blue pot" in text
    # the text shows every field of the JSON, one `key: value` line each, times as ISO 8601
    fields = dict(line.split(": ", 1) for line in text.splitlines())
    assert list(fields) == list(full)
    assert datetime.fromisoformat(fields["created_at"]) == datetime.fromisoformat(full["created_at"])


def test_show_ambiguous_or_short_prefix_is_not_found(runner: CliRunner, fake_embedder: Any) -> None:
    from memcli.memory import stable_id

    seen: dict[str, str] = {}
    for i in range(5000):
        text = f"note {i}"
        prefix = stable_id("note", "tester", text)[:4]
        if prefix in seen:
            pair = (seen[prefix], text)
            break
        seen[prefix] = text
    first, second = remember(runner, pair[0]), remember(runner, pair[1])
    assert first[:4] == second[:4]
    line = assert_error(runner.invoke(app, ["show", first[:4]]), ExitCode.NOT_FOUND)
    assert "ambiguous" in line
    assert json.loads(ok(runner.invoke(app, ["show", first[:12], "--json"])).stdout)["text"] == pair[0]
    assert_error(runner.invoke(app, ["show", first[:3]]), ExitCode.NOT_FOUND)


def test_show_unknown_id_is_not_found(runner: CliRunner, fake_embedder: Any) -> None:
    remember(runner, "something")
    line = assert_error(runner.invoke(app, ["show", "ffffffffffffffff"]), ExitCode.NOT_FOUND)
    assert "ffffffffffffffff" in line


def test_delete_removes_the_memory_for_good(runner: CliRunner, fake_embedder: Any) -> None:
    gone = remember(runner, "The old door code is 1234")
    kept = remember(runner, "The new door code is 9876")
    result = ok(runner.invoke(app, ["delete", gone[:8]]))
    assert result.stdout.strip() == gone
    assert_error(runner.invoke(app, ["show", gone]), ExitCode.NOT_FOUND)
    assert [m["id"] for m in list_json(runner)] == [kept]
    assert [h["id"] for h in recall_json(runner, "old door code 1234")] == [kept]


def test_delete_json_prints_the_deleted_memory(runner: CliRunner, fake_embedder: Any) -> None:
    gone = remember(runner, "The old door code is 1234")
    shown = json.loads(ok(runner.invoke(app, ["show", gone, "--json"])).stdout)
    result = ok(runner.invoke(app, ["delete", gone[:8], "--json"]))
    assert json.loads(result.stdout) == shown
    assert_error(runner.invoke(app, ["show", gone]), ExitCode.NOT_FOUND)


def test_delete_unknown_id_is_not_found(runner: CliRunner, fake_embedder: Any) -> None:
    kept = remember(runner, "keep me")
    assert_error(runner.invoke(app, ["delete", "0000000000000000"]), ExitCode.NOT_FOUND)
    assert [m["id"] for m in list_json(runner)] == [kept]


def test_stats_json_counts_memories_by_kind_and_user(
    runner: CliRunner, fake_embedder: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("MEMCLI_NOW", "2023-02-01T10:00:00")
    remember(runner, "note one")
    monkeypatch.setenv("MEMCLI_NOW", "2023-02-03T10:00:00")
    remember(runner, "note two")
    remember(runner, "carol's note", "--user", "carol")
    log = tmp_path / "log.jsonl"
    log.write_text(
        "\n".join(
            json.dumps({"role": r, "content": c, "timestamp": "2023-01-20T10:00:00", "session": "s1"})
            for r, c in (("user", "hello"), ("assistant", "hi"))
        )
    )
    ok(runner.invoke(app, ["import", str(log)]))
    data = json.loads(ok(runner.invoke(app, ["stats", "--json"])).stdout)
    assert data["user"] == "tester"
    assert data["memories"] == 4
    assert data["by_kind"] == {"note": 2, "turn": 2}
    assert data["first_day"] == "2023-01-20" and data["last_day"] == "2023-02-03"
    assert data["sessions"] == 1
    assert data["all_users"] == {"tester": 4, "carol": 1}
    assert data["pending"] == 0


def test_paths_are_all_under_memcli_home_but_the_cache_every_home_shares(runner: CliRunner, memcli_home: Path) -> None:
    data = json.loads(ok(runner.invoke(app, ["paths", "--json"])).stdout)
    assert {"config_file", "data_dir", "store_dir", "lock_file", "cache_dir", "pending_dir"} <= set(data)
    # the embedder's exports are every home's (MEMCLI_SHARED_CACHE, set by the fixture), not under one
    shared = Path(os.environ["MEMCLI_SHARED_CACHE"])
    assert Path(data["embedder_exports_dir"]).is_relative_to(shared)
    for name, path in data.items():
        if name != "embedder_exports_dir":
            assert Path(path).is_relative_to(memcli_home), name
    lines = ok(runner.invoke(app, ["paths"])).stdout.splitlines()
    assert {line.split("\t")[0] for line in lines} == set(data)


def test_every_file_the_man_page_says_memcli_paths_shows_is_shown(runner: CliRunner, memcli_home: Path) -> None:
    """The man page's FILES section names, for each file, what ``memcli paths`` shows it
    as: each of them is there (the chat prompt's history was not)."""
    import re

    data = json.loads(ok(runner.invoke(app, ["paths", "--json"])).stdout)
    man = (Path(__file__).resolve().parents[1] / "man" / "memcli.1").read_text(encoding="utf-8")
    shown = set(re.findall(r"Shown as \\fB(\w+)\\fR by \\fBmemcli paths", man))
    assert {"chat_history", "log_file"} <= shown
    assert shown <= set(data)
    assert data["chat_history"] == str(memcli_home / "state" / "chat_history")


# import ------------------------------------------------------------------------------------


def test_import_locomo_stores_each_turn_for_its_conversation(
    runner: CliRunner, fake_embedder: Any, tmp_path: Path
) -> None:
    report = json.loads(ok(runner.invoke(app, ["import", str(locomo_sample_file(tmp_path)), "--json"])).stdout)
    assert report["format"] == "locomo"
    assert report["added"] == 5 and report["found"] == 5
    assert report["users"] == {"conv-a": 4, "conv-b": 1}
    turns = list_json(runner, "--user", "conv-a")
    assert {t["source"] for t in turns} == {"D1:1", "D1:2", "D1:3", "D2:1"}
    beagle = next(t for t in turns if t["source"] == "D1:3")
    assert beagle["caption"] == "a photo of a beagle" and beagle["day"] == "2023-05-08"
    hits = recall_json(runner, "pottery", "--user", "conv-a")
    assert hits[0]["source"] == "D2:1" and hits[0]["day"] == "2023-05-25"


def test_import_twice_adds_nothing(runner: CliRunner, fake_embedder: Any, tmp_path: Path) -> None:
    path = locomo_sample_file(tmp_path)
    first = json.loads(ok(runner.invoke(app, ["import", str(path), "--json"])).stdout)
    before = list_json(runner, "--user", "conv-a")
    second = json.loads(ok(runner.invoke(app, ["import", str(path), "--json"])).stdout)
    assert first["added"] == 5
    assert second["added"] == 0 and second["skipped"] == 5
    assert list_json(runner, "--user", "conv-a") == before
    text = ok(runner.invoke(app, ["import", str(path)])).stdout
    assert "imported 0 new memories" in text


def test_import_conversation_option_imports_one_sample(runner: CliRunner, fake_embedder: Any, tmp_path: Path) -> None:
    report = json.loads(
        ok(
            runner.invoke(app, ["import", str(locomo_sample_file(tmp_path)), "--conversation", "conv-b", "--json"])
        ).stdout
    )
    assert report["users"] == {"conv-b": 1}
    assert list_json(runner, "--user", "conv-a") == []


def test_import_malformed_file_adds_nothing(runner: CliRunner, fake_embedder: Any, tmp_path: Path) -> None:
    remember(runner, "a note that was here before")
    ok(runner.invoke(app, ["import", str(locomo_sample_file(tmp_path, "good.json"))]))
    before = {user: list_json(runner, "--user", user) for user in ("tester", "conv-a", "conv-b")}
    bad = locomo_sample_file(tmp_path, "bad.json", bad_second=True)
    # the first conversation is fine and new under another name; the second has a bad turn
    data = json.loads(bad.read_text())
    data[0]["sample_id"] = "conv-new"
    bad.write_text(json.dumps(data, indent=2))
    line = assert_error(runner.invoke(app, ["import", str(bad)]), ExitCode.BAD_INPUT)
    assert str(bad) in line and "turn 2" in line
    after = {user: list_json(runner, "--user", user) for user in ("tester", "conv-a", "conv-b")}
    assert after == before
    assert list_json(runner, "--user", "conv-new") == []


def test_import_unknown_format_is_a_usage_error(runner: CliRunner, fake_embedder: Any, tmp_path: Path) -> None:
    line = assert_error(
        runner.invoke(app, ["import", str(locomo_sample_file(tmp_path)), "--format", "bogus"]), ExitCode.USAGE
    )
    assert "bogus" in line
    assert list_json(runner, "--user", "conv-a") == []


@pytest.mark.parametrize(
    ("name", "content"),
    [
        ("empty.json", b""),
        ("picture.json", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x01\x00"),
        ("notjson.json", b"this is not json at all\n"),
        ("truncated.json", b'[{"sample_id": "conv-1", "conversation": {'),
        ("unknown.json", b'{"some": "object"}'),
    ],
)
def test_import_unreadable_file_is_bad_input(
    runner: CliRunner, fake_embedder: Any, tmp_path: Path, name: str, content: bytes
) -> None:
    path = tmp_path / name
    path.write_bytes(content)
    line = assert_error(runner.invoke(app, ["import", str(path)]), ExitCode.BAD_INPUT)
    assert name in line
    assert json.loads(ok(runner.invoke(app, ["stats", "--json"])).stdout)["all_users"] == {}


def test_import_conversation_option_on_a_text_file_is_a_usage_error(
    runner: CliRunner, fake_embedder: Any, tmp_path: Path
) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("a note\n", encoding="utf-8")
    assert_error(runner.invoke(app, ["import", str(path), "--conversation", "conv-1"]), ExitCode.USAGE)
    assert list_json(runner) == []


def test_import_missing_file_is_bad_input(runner: CliRunner, fake_embedder: Any, tmp_path: Path) -> None:
    assert_error(runner.invoke(app, ["import", str(tmp_path / "nowhere.json")]), ExitCode.BAD_INPUT)


def test_import_markdown_notes(runner: CliRunner, fake_embedder: Any, tmp_path: Path) -> None:
    path = tmp_path / "notes.md"
    path.write_text("# Garden\n\nTomatoes need sun.\n\nBasil hates cold nights.\n", encoding="utf-8")
    report = json.loads(ok(runner.invoke(app, ["import", str(path), "--json"])).stdout)
    assert report["format"] == "text" and report["added"] == 2
    hits = recall_json(runner, "tomatoes")
    assert "Tomatoes need sun." in hits[0]["text"] and hits[0]["kind"] == "note"


# ask -----------------------------------------------------------------------------------------


def test_ask_json_returns_the_answer_and_the_memories_in_the_prompt(
    runner: CliRunner, fake_model: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMCLI_NOW", "2023-05-08T10:00:00")
    dog = remember(runner, "My dog Rex was born in Lyon")
    monkeypatch.setenv("MEMCLI_NOW", "2023-06-01T10:00:00")
    remember(runner, "The printer needs toner")
    monkeypatch.setenv("MEMCLI_NOW", "2024-01-10T10:00:00")
    fake_model.replies = ["Rex was born in Lyon."]
    data = json.loads(ok(runner.invoke(app, ["ask", "Where was my dog born?", "--json"])).stdout)
    assert data["answer"] == "Rex was born in Lyon."
    assert data["memories"] and data["memories"][0]["id"] == dog
    system = fake_model.prompts[-1][0]
    assert system.role == "system"
    for memory in data["memories"]:
        assert f"[{memory['id'][:8]}]" in system.content
        assert memory["text"] in system.content
    assert fake_model.prompts[-1][-1].content == "Where was my dog born?"


def test_ask_prompt_carries_the_recalled_memory_and_its_date(
    runner: CliRunner, fake_model: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMCLI_NOW", "2023-05-08T10:00:00")
    remember(runner, "I moved to Lyon with my cat Mimi")
    monkeypatch.setenv("MEMCLI_NOW", "2024-02-20T10:00:00")
    ok(runner.invoke(app, ["ask", "Which city did I move to?"]))
    system = fake_model.prompts[-1][0].content
    line = next(l for l in system.splitlines() if "I moved to Lyon with my cat Mimi" in l)
    assert "2023-05-08" in line


def test_ask_cited_lists_the_ids_the_answer_cites(runner: CliRunner, fake_model: Any) -> None:
    dog = remember(runner, "My dog Rex was born in Lyon")
    cat = remember(runner, "My cat Mimi was born in Paris")
    fake_model.replies = [f"Rex was born in Lyon [{dog[:8]}] and Mimi in Paris [{cat[:8]}]; see also [deadbeef]."]
    data = json.loads(ok(runner.invoke(app, ["ask", "Where were my dog and cat born?", "--json"])).stdout)
    assert data["cited"] == [dog, cat]
    fake_model.replies = ["I do not remember."]
    assert json.loads(ok(runner.invoke(app, ["ask", "Where?", "--json"])).stdout)["cited"] == []


def test_ask_reads_the_question_from_stdin(runner: CliRunner, fake_model: Any) -> None:
    remember(runner, "Grandma's recipe uses cardamom")
    result = ok(runner.invoke(app, ["ask", "-"], input="What spice does grandma use?\n"))
    assert fake_model.prompts[-1][-1].content == "What spice does grandma use?"
    assert "OK." in result.stdout
    assert "Grandma's recipe uses cardamom" in result.stdout  # the memories are listed under the answer


@pytest.mark.parametrize("command", [["ask", "anything?"], ["chat"]])
def test_missing_or_invalid_model_is_a_model_error(
    runner: CliRunner, fake_embedder: Any, tmp_path: Path, command: list[str]
) -> None:
    not_gguf = tmp_path / "model.gguf"
    not_gguf.write_text("not a model", encoding="utf-8")
    for model in (str(tmp_path / "missing.gguf"), str(not_gguf)):
        line = assert_error(runner.invoke(app, [*command, "--model", model], input="hello\n"), ExitCode.MODEL)
        assert model in line


def test_ask_empty_question_is_bad_input(runner: CliRunner, fake_model: Any) -> None:
    assert_error(runner.invoke(app, ["ask", "  "]), ExitCode.BAD_INPUT)
    assert fake_model.prompts == []


# chat ----------------------------------------------------------------------------------------


def test_chat_stores_user_and_assistant_turns_and_runs_slash_commands(runner: CliRunner, fake_model: Any) -> None:
    fake_model.replies = ["Rex is a lovely name."]
    result = ok(runner.invoke(app, ["chat"], input="My dog is Rex\n/recall dog\n/remember I like tea\n/exit\n"))
    assert "Rex is a lovely name." in result.stdout
    turns = list_json(runner, "--kind", "turn")
    assert sorted((t["speaker"], t["text"]) for t in turns) == [
        ("assistant", "Rex is a lovely name."),
        ("tester", "My dog is Rex"),
    ]
    sessions = {t["session"] for t in turns}
    assert len(sessions) == 1 and sessions.pop() in result.stderr
    # /recall printed the stored turn
    recall_lines = [line for line in result.stdout.splitlines() if "\t" in line]
    assert any("My dog is Rex" in line for line in recall_lines)
    # /remember stored a note
    notes = list_json(runner, "--kind", "note")
    assert [n["text"] for n in notes] == ["I like tea"]
    assert f"remembered {notes[0]['id']}" in result.stdout
    assert len(fake_model.prompts) == 1  # slash commands do not go to the model


def test_chat_does_not_repeat_the_current_message_as_a_memory(runner: CliRunner, fake_model: Any) -> None:
    ok(runner.invoke(app, ["chat"], input="My dog is Rex\n/exit\n"))
    system, *rest = fake_model.prompts[0]
    assert "My dog is Rex" not in system.content
    memories, _, message = rest[-1].content.rpartition("\n\n")
    assert message == "My dog is Rex" and "My dog is Rex" not in memories


def test_second_chat_recalls_the_first_session(
    runner: CliRunner, fake_model: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMCLI_NOW", "2023-05-08T10:00:00")
    ok(runner.invoke(app, ["chat"], input="My dog is Rex\n/exit\n"))
    monkeypatch.setenv("MEMCLI_NOW", "2023-05-09T10:00:00")
    ok(runner.invoke(app, ["chat"], input="What is my dog called?\n/exit\n"))
    memories = fake_model.prompts[-1][-1].content  # they come with the message, after the conversation
    line = next(l for l in memories.splitlines() if "My dog is Rex" in l)
    assert "2023-05-08" in line
    sessions = {t["session"] for t in list_json(runner, "--kind", "turn")}
    assert len(sessions) == 2


def test_chat_ended_by_end_of_input_loses_no_turn(runner: CliRunner, fake_model: Any) -> None:
    fake_model.replies = ["first reply", "second reply"]
    ok(runner.invoke(app, ["chat"], input="hello there\nhow are you"))
    texts = sorted(t["text"] for t in list_json(runner, "--kind", "turn"))
    assert texts == sorted(["hello there", "first reply", "how are you", "second reply"])
    assert json.loads(ok(runner.invoke(app, ["stats", "--json"])).stdout)["pending"] == 0


def test_chat_folds_older_turns_into_a_summary_and_keeps_them_while_they_fit(
    runner: CliRunner, fake_model: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMCLI_HISTORY_TURNS", "4")
    fake_model.replies = ["reply one", "reply two", "reply three", "Summary: we said one and two.", "reply four"]
    ok(runner.invoke(app, ["chat"], input="message one\nmessage two\nmessage three\nmessage four\n/exit\n"))
    # calls: reply one, two and three, then (6 turns > 4) the summary of the four oldest, so
    # that half the window is left, then reply four: no summary after reply two or four
    assert len(fake_model.prompts) == 5
    summary_prompt = "\n".join(m.content for m in fake_model.prompts[3])
    assert "message one" in summary_prompt and "reply two" in summary_prompt
    assert "message three" not in summary_prompt
    # The folded turns stay in the prompt word for word while it fits the context (the
    # summary takes their place only when it would not), and the system text never changes:
    # the next prompt starts with the whole previous one, whose evaluation is kept (issue 32).
    fourth = fake_model.prompts[4]
    assert fourth[0].content == fake_model.prompts[0][0].content
    assert not any("Summary: we said" in m.content for m in fourth)
    assert [(m.role, m.content) for m in fourth[1:-1]] == [
        ("user", "Memories: none found.\n\nmessage one"),  # a message keeps the memories it came with
        ("assistant", "reply one"),
        ("user", "Memories: none found.\n\nmessage two"),
        ("assistant", "reply two"),
        ("user", "Memories: none found.\n\nmessage three"),
        ("assistant", "reply three"),
    ]
    assert fourth[-1].content.endswith("message four")


def test_chat_with_history_within_the_window_calls_no_summary(runner: CliRunner, fake_model: Any) -> None:
    ok(runner.invoke(app, ["chat"], input="message one\nmessage two\n/exit\n"))
    assert len(fake_model.prompts) == 2  # default window (6 turns) holds both exchanges
    assert [m.content for m in fake_model.prompts[1][1:-1]] == ["Memories: none found.\n\nmessage one", "OK."]
    assert fake_model.prompts[1][-1].content.endswith("\n\nmessage two")


def test_chat_unknown_slash_command_is_reported_and_chat_goes_on(runner: CliRunner, fake_model: Any) -> None:
    result = ok(runner.invoke(app, ["chat"], input="/frobnicate\nhello\n/exit\n"))
    assert "/frobnicate" in result.stderr
    assert [t["text"] for t in list_json(runner, "--kind", "turn", "--user", "tester") if t["speaker"] == "tester"] == [
        "hello"
    ]


def test_chat_interrupted_reply_is_kept_and_tagged(
    runner: CliRunner, fake_model: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    def interrupted_stream(messages: Any, max_tokens: int, temperature: float) -> Any:
        fake_model.prompts.append(list(messages))
        yield "Once upon "
        yield "a time "
        raise KeyboardInterrupt

    monkeypatch.setattr(fake_model, "stream", interrupted_stream)
    result = ok(runner.invoke(app, ["chat"], input="tell me a story\nnever read\n"))
    assert "Once upon a time" in result.stdout
    turns = {t["text"]: t for t in list_json(runner, "--kind", "turn")}
    assert set(turns) == {"tell me a story", "Once upon a time"}
    assert turns["Once upon a time"]["tags"] == ["interrupted"]
    assert turns["Once upon a time"]["speaker"] == "assistant"
    listed = ok(runner.invoke(app, ["list", "--kind", "turn"])).stdout
    assert "assistant: Once upon a time [interrupted]" in listed  # never shown as a finished turn


def test_the_next_prompt_shows_an_interrupted_reply_cut_short(
    fake_model: Any, fake_embedder: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memcli.config import load_settings
    from memcli.library.chat import INTERRUPTED_MARK, ChatSession
    from memcli.paths import resolve_paths
    from memcli.transport.resources import Resources

    paths = resolve_paths()
    resources = Resources(paths, load_settings(paths, env={}), fake_embedder, fake_model)
    engine = resources.engine({"verb": "chat.respond"})
    session = ChatSession(engine)
    real_stream = fake_model.stream

    def interrupted_stream(messages: Any, max_tokens: int, temperature: float) -> Any:
        yield "She"
        raise KeyboardInterrupt

    monkeypatch.setattr(fake_model, "stream", interrupted_stream)
    shown: list[str] = []
    reply = session.respond("tell me about Ana", shown.append)
    assert (reply.text, reply.interrupted, shown) == ("She", True, ["She"])
    monkeypatch.setattr(fake_model, "stream", real_stream)
    fake_model.replies = ["Ana is your sister."]
    session.respond("go on", shown.append)
    history = [(m.role, m.content) for m in fake_model.prompts[-1][1:-1]]
    assert history == [("user", "Memories: none found.\n\ntell me about Ana"), ("assistant", f"She {INTERRUPTED_MARK}")]


def test_every_command_takes_quiet_and_every_data_command_takes_json() -> None:
    import typer

    def leaves(command: Any, path: str) -> list[tuple[str, Any]]:
        children = getattr(command, "commands", None)
        if not children:
            return [(path, command)]
        return [leaf for name, sub in children.items() for leaf in leaves(sub, f"{path} {name}")]

    for path, command in leaves(typer.main.get_command(app), "memcli"):
        options = {opt for param in command.params for opt in param.opts}
        assert "--quiet" in options, path
        if path in ("memcli chat", "memcli serve", "memcli mcp"):  # not data commands: a session, and servers
            assert "--json" not in options, path
        else:
            assert "--json" in options, path


def test_recall_for_a_user_nobody_has_is_not_found_as_ask_says(runner: CliRunner, fake_embedder: Any) -> None:
    assert runner.invoke(app, ["remember", "Bob's secret", "--user", "bob"]).exit_code == 0
    result = runner.invoke(app, ["recall", "secret", "--user", "nosuchuser"])
    assert result.exit_code == 6 and "no user 'nosuchuser'" in result.stderr
