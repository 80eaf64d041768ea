"""Output fit for a terminal: ``recall``, ``list`` and ``history`` print an aligned table when
stdout is a terminal (faked by replacing ``memcli.cli.root._terminal``) and tab-separated
lines when piped; ``--help`` shows no ``<bool>`` on flags and no ``{query}`` in usage lines;
a too-short id prefix says how long a prefix must be."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

import pytest
from cli_checks import assert_error, ok
from typer.testing import CliRunner

from memcli.cli import app, root
from memcli.errors import ExitCode

NOTES = ["My sister Ana lives in Porto and teaches piano", "The spare key hides under the frog by the door"]


def remember(runner: CliRunner, text: str) -> str:
    return ok(runner.invoke(app, ["remember", text])).stdout.strip()


@pytest.fixture
def two_notes(runner: CliRunner, fake_embedder: Any) -> list[str]:
    return [remember(runner, text) for text in NOTES]


def on_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(root, "_terminal", lambda: True)
    monkeypatch.setenv("COLUMNS", "100")


def assert_aligned(lines: list[str], header: list[str], memory_ids: list[str]) -> None:
    """A table: the header's words, no tabs, each id on its own row under the id column."""
    assert "\t" not in "\n".join(lines)
    assert lines[0].split() == header
    column = lines[0].index("id")
    for memory_id in memory_ids:
        [row] = [line for line in lines if memory_id in line]
        assert row.index(memory_id) == column


@pytest.mark.parametrize("command", [["list"], ["recall", "where does Ana live", "--no-reinforce"]])
def test_list_and_recall_print_tab_separated_lines_when_piped(
    runner: CliRunner, two_notes: list[str], command: list[str]
) -> None:
    lines = ok(runner.invoke(app, command)).stdout.splitlines()
    assert len(lines) == 2 and all(len(line.split("\t")) == (6 if command[0] == "recall" else 5) for line in lines)
    assert {line.split("\t")[0] for line in lines} == set(two_notes)
    assert {line.split("\t")[-1] for line in lines} == set(NOTES)


def test_list_prints_an_aligned_table_on_a_terminal(
    runner: CliRunner, two_notes: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    on_a_terminal(monkeypatch)
    lines = ok(runner.invoke(app, ["list"])).stdout.splitlines()
    assert_aligned(lines, ["id", "day", "kind", "source", "text"], two_notes)
    assert "My sister Ana lives in Porto" in "\n".join(lines)


def test_recall_prints_an_aligned_table_with_scores_on_a_terminal(
    runner: CliRunner, two_notes: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    piped = ok(runner.invoke(app, ["recall", "where does Ana live", "--no-reinforce"])).stdout.splitlines()
    on_a_terminal(monkeypatch)
    lines = ok(runner.invoke(app, ["recall", "where does Ana live", "--no-reinforce"])).stdout.splitlines()
    assert_aligned(lines, ["id", "day", "kind", "score", "source", "text"], two_notes)
    # the same memories in the same order, with the same scores
    assert [line.split("\t")[0] for line in piped] == [
        line.split()[0] for line in lines[1:] if line.split() and len(line.split()[0]) == 16
    ]
    assert [line.split("\t")[3] for line in piped] == [
        line.split()[3] for line in lines[1:] if line.split() and len(line.split()[0]) == 16
    ]
    explained = ok(runner.invoke(app, ["recall", "where does Ana live", "--no-reinforce", "--explain"])).stdout
    assert "relevance" in explained and "retention" in explained and "\t" not in explained


def test_history_is_a_table_on_a_terminal_and_tab_separated_when_piped(
    runner: CliRunner, two_notes: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    ok(runner.invoke(app, ["edit", two_notes[0], "--text", "My sister Ana lives in Lisbon now"]))
    [piped] = ok(runner.invoke(app, ["history", two_notes[0]])).stdout.splitlines()
    assert piped.split("\t")[1:4] == ["EDIT", two_notes[0], f"{NOTES[0]} -> My sister Ana lives in Lisbon now"]
    on_a_terminal(monkeypatch)
    lines = ok(runner.invoke(app, ["history", two_notes[0]])).stdout.splitlines()
    assert "\t" not in "\n".join(lines)
    assert lines[0].split() == ["time", "event", "id", "change", "sources"]
    assert lines[1].index(two_notes[0]) == lines[0].index("id")


def test_json_output_is_the_same_on_a_terminal(
    runner: CliRunner, two_notes: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    piped = json.loads(ok(runner.invoke(app, ["list", "--json"])).stdout)
    on_a_terminal(monkeypatch)
    assert json.loads(ok(runner.invoke(app, ["list", "--json"])).stdout) == piped


@pytest.mark.parametrize("command", [[], ["recall"], ["forget"], ["history"], ["config", "set"], ["service", "status"]])
def test_help_shows_no_bool_type_and_plain_argument_names(runner: CliRunner, command: list[str]) -> None:
    text = ok(runner.invoke(app, [*command, "--help"], env={"COLUMNS": "120"})).stdout
    assert "<bool>" not in text
    assert "{" not in text.split("Usage:")[1].splitlines()[0]
    assert "--help" in text


def test_usage_lines_name_arguments_in_capitals(runner: CliRunner) -> None:
    def usage(*command: str) -> str:
        text = ok(runner.invoke(app, [*command, "--help"], env={"COLUMNS": "120"})).stdout
        return text.split("Usage:")[1].splitlines()[0].strip()

    assert usage("recall") == "memcli recall [OPTIONS] QUERY"
    assert usage("history") == "memcli history [OPTIONS] [ID]"
    assert usage("config", "set") == "memcli config set [OPTIONS] KEY VALUE"
    assert usage() == "memcli [OPTIONS] COMMAND [ARGS]..."


def test_a_short_id_prefix_says_prefixes_need_4_characters(runner: CliRunner, two_notes: list[str]) -> None:
    short = two_notes[0][:3]
    line = assert_error(runner.invoke(app, ["show", short]), ExitCode.NOT_FOUND)
    assert line == f"memcli: error: no memory with id {short!r} (a prefix needs at least 4 characters)"
    line = assert_error(runner.invoke(app, ["history", short]), ExitCode.NOT_FOUND)
    assert "(a prefix needs at least 4 characters)" in line
    # a prefix long enough that matches nothing does not talk about the length
    line = assert_error(runner.invoke(app, ["show", "ffffffffffffffff"]), ExitCode.NOT_FOUND)
    assert "prefix needs" not in line
    assert json.loads(ok(runner.invoke(app, ["show", two_notes[0][:4], "--json"])).stdout)["text"] == NOTES[0]


def test_help_wraps_at_the_terminals_width() -> None:
    # a process of its own: Click's test runner lays help out 80 columns wide whatever COLUMNS says
    shown = subprocess.run(
        [sys.executable, "-m", "memcli", "import", "--help"],
        env={**os.environ, "COLUMNS": "200"},
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout
    lines = [line.strip() for line in shown.splitlines()]
    # one sentence of the docstring, which Click's default of 80 columns (and its source) breaks
    assert any("sample_id. Imported memories keep" in line for line in lines)
    assert not any(line.strip() == "memories" for line in lines)
