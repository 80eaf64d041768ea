"""``memcli eval memorybank HISTORY PROBES``: hit@1/5/10 per probe type over a MemoryBank
history imported into a temporary store, with the fake embedder. A tiny history (two
users, a few days) and probes built so that each probe's outcome is settled by the
lexical and grammatical-person signals: the evidence ranks first, or (for a question
whose words are everywhere but in its evidence) not in the top 10; ``--details`` shows
the ranks, ``--json`` follows ``schema.ProbeEvalResult``, ``--user`` filters, malformed
probes exit 5 naming the file and the line or probe, and the user's own store is never
touched. Also checks the repository's probe sets against the MemoryBank data beside the
repository."""

from __future__ import annotations

import json
import statistics
from collections import defaultdict
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from cli_checks import assert_error, ok
from conftest import MEMORYBANK, data_missing
from typer.testing import CliRunner

from memcli.cli import app
from memcli.errors import BadInputError, ExitCode
from memcli.formats.importers import parse_memorybank, read_text
from memcli.library.evaluation import HIT_KS, _turn_reference, read_probes
from memcli.paths import resolve_paths
from memcli.schema import ProbeEvalResult

REPOSITORY = Path(__file__).resolve().parents[1]
SHARED = MEMORYBANK
PROBE_SETS = [
    (REPOSITORY / "tests" / "data" / "memorybank" / "probes_en.jsonl", SHARED / "memory_bank_en.json"),
    (REPOSITORY / "tests" / "data" / "memorybank" / "probes_zh.jsonl", SHARED / "memory_bank_cn.json"),
]

CELLO_DAY = [
    ("My cello practice went well this morning.", "Great cello practice makes progress."),
    ("I practice the cello scales every day.", "Daily cello practice of scales pays off."),
    ("My cello teacher liked my practice.", "Your cello teacher must be proud of your practice."),
    ("Cello practice tires my arms.", "Rest your arms between cello practice sessions."),
    ("I will practice the cello concerto next.", "A cello concerto is a fine practice goal."),
]
HISTORY = {
    "Ann Lee": {
        "name": "Ann Lee",
        "history": {
            "2023-05-01": [
                {
                    "query": "I play the cello in a small orchestra on Fridays.",
                    "response": "How lovely! How long have you been playing?",
                },
                {
                    "query": "Since I was ten. Could you recommend a good book about whales?",
                    "response": "I recommend the book Moby Dick, a classic about whales.",
                },
            ],
            "2023-05-02": [
                {"query": "The weather was grey and rainy today.", "response": "Rainy days are good for staying in."},
                {"query": "I went hiking near the lake.", "response": "Hiking by a lake sounds refreshing."},
            ],
            "2023-05-03": [{"query": query, "response": response} for query, response in CELLO_DAY],
        },
    },
    "Bo": {
        "history": {
            "2023-05-01": [{"query": "I bake sourdough bread every weekend.", "response": "Sourdough takes patience!"}],
            "2023-05-02": [{"query": "My cat is named Pixel.", "response": "Pixel is a cute name for a cat."}],
        }
    },
}

# Each probe, and where its first evidence turn ranks (None: not in the top 10), by construction.
PROBES: list[tuple[dict[str, Any], int | None]] = [
    # the only turn with cello and orchestra, said by the user ("I")
    (
        {
            "user": "Ann Lee",
            "question": "Which orchestra do I play the cello in?",
            "type": "self",
            "evidence": ["2023-05-01:1:query"],
        },
        1,
    ),
    # the user's question and the assistant's answer share "book" and "whales": "you" points to the answer
    (
        {
            "user": "Ann Lee",
            "question": "What book about whales did you recommend to me?",
            "type": "recommend",
            "evidence": ["2023-05-01:2:response"],
        },
        1,
    ),
    # ... and "I" to the question
    (
        {
            "user": "Ann Lee",
            "question": "What book about whales did I ask you for?",
            "type": "self",
            "evidence": ["2023-05-01:2:query"],
        },
        1,
    ),
    # twelve turns say cello or practice; the evidence (the weather) says neither
    (
        {
            "user": "Ann Lee",
            "question": "What did I tell you about my cello practice?",
            "type": "self",
            "evidence": ["2023-05-02:1:query"],
        },
        None,
    ),
    (
        {
            "user": "Bo",
            "question": "What is my cat called?",
            "type": "self",
            "evidence": ["2023-05-02:1:query", "2023-05-02:1:response"],
            "now": "2023-05-06T20:00:00",
        },
        1,
    ),
]


# helpers ------------------------------------------------------------------------------------


def write_history(tmp_path: Path) -> Path:
    path = tmp_path / "history.json"
    path.write_text(json.dumps(HISTORY, indent=2), encoding="utf-8")
    return path


def write_probes(tmp_path: Path, lines: list[Any] | None = None, name: str = "probes.jsonl") -> Path:
    """A probe file: one line per item (a dict is written as JSON, a string as it is)."""
    lines = [probe for probe, _ in PROBES] if lines is None else lines
    path = tmp_path / name
    path.write_text(
        "\n".join(line if isinstance(line, str) else json.dumps(line) for line in lines) + "\n", encoding="utf-8"
    )
    return path


def eval_json(runner: CliRunner, tmp_path: Path, *args: str, probes: Path | None = None) -> dict[str, Any]:
    command = [
        "eval",
        "memorybank",
        str(write_history(tmp_path)),
        str(probes or write_probes(tmp_path)),
        "--json",
        *args,
    ]
    return json.loads(ok(runner.invoke(app, command)).stdout)


def eval_error(runner: CliRunner, tmp_path: Path, probes: Path, *args: str) -> str:
    result = runner.invoke(app, ["eval", "memorybank", str(write_history(tmp_path)), str(probes), *args])
    line = assert_error(result, ExitCode.BAD_INPUT)
    assert str(probes) in line, line
    return line


def expected_hits(outcomes: list[tuple[str, int | None]]) -> dict[str, float]:
    """{n, hit@k} of probes that rank their evidence at these ranks, rounded as the report rounds."""
    row: dict[str, float] = {"n": len(outcomes)}
    for k in HIT_KS:
        row[f"hit@{k}"] = round(statistics.fmean(float(rank is not None and rank <= k) for _, rank in outcomes), 4)
    return row


def turns_of(name: str) -> int:
    """How many turns ``name`` has in HISTORY (a query and a response per exchange)."""
    return sum(2 * len(pairs) for pairs in HISTORY[name]["history"].values())


def by_question(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {row["question"]: row for row in report["details"]}


# hit@k -----------------------------------------------------------------------------------------


def test_each_probe_ranks_its_evidence_where_it_was_built_to(
    runner: CliRunner, fake_embedder: Any, tmp_path: Path
) -> None:
    details = by_question(eval_json(runner, tmp_path, "--details"))
    assert len(details) == len(PROBES)
    for probe, rank in PROBES:
        row = details[probe["question"]]
        assert row["rank"] == rank, (probe["question"], row["recalled"])
        assert (row["user"], row["type"], row["evidence"]) == (
            probe["user"].replace(" ", ""),
            probe["type"],
            probe["evidence"],
        )
        assert len(row["recalled"]) == len(set(row["recalled"])) == min(10, turns_of(probe["user"]))
        if rank is None:
            assert not set(probe["evidence"]) & set(row["recalled"])
        else:
            assert row["recalled"][rank - 1] in probe["evidence"]


def test_hit_at_k_per_type_and_overall_follow_the_ranks(runner: CliRunner, fake_embedder: Any, tmp_path: Path) -> None:
    report = eval_json(runner, tmp_path)
    outcomes: dict[str, list[tuple[str, int | None]]] = defaultdict(list)
    for probe, rank in PROBES:
        outcomes[probe["type"]].append((probe["question"], rank))
    assert report["per_type"] == {name: expected_hits(rows) for name, rows in sorted(outcomes.items())}
    assert report["overall"] == expected_hits([row for rows in outcomes.values() for row in rows])
    assert report["questions"] == len(PROBES)
    assert report["users"] == ["AnnLee", "Bo"]
    assert report["details"] == []  # only with --details


def test_the_grammatical_person_decides_between_a_question_and_its_answer(
    runner: CliRunner, fake_embedder: Any, tmp_path: Path
) -> None:
    """Without the person signal, "what did I ask you" no longer finds the user's own question first."""
    asked = "What book about whales did I ask you for?"
    with_person = by_question(eval_json(runner, tmp_path, "--details"))[asked]
    without = eval_json(runner, tmp_path, "--details", "--without", "person")
    assert without["without"] == ["person"]
    row = by_question(without)[asked]
    assert with_person["rank"] == 1
    assert row["rank"] != 1 and row["recalled"][0] == "2023-05-01:2:response"


def test_user_option_keeps_only_those_users_probes(runner: CliRunner, fake_embedder: Any, tmp_path: Path) -> None:
    report = eval_json(runner, tmp_path, "--user", "Bo", "--details")
    assert (report["users"], report["questions"]) == (["Bo"], 1)
    assert [row["user"] for row in report["details"]] == ["Bo"]
    assert report["overall"] == expected_hits([(p["question"], rank) for p, rank in PROBES if p["user"] == "Bo"])
    spaced = eval_json(runner, tmp_path, "--user", "Ann Lee", "--user", "Bo")  # a name as MemoryBank writes it
    assert (spaced["users"], spaced["questions"]) == (["AnnLee", "Bo"], len(PROBES))
    line = eval_error(runner, tmp_path, write_probes(tmp_path), "--user", "Zed")
    assert "Zed" in line


def test_json_output_follows_the_schema(runner: CliRunner, fake_embedder: Any, tmp_path: Path) -> None:
    for args in ((), ("--details",)):
        data = eval_json(runner, tmp_path, *args)
        assert set(data) == set(ProbeEvalResult.model_fields)
        assert ProbeEvalResult.model_validate(data).model_dump(mode="json") == data
        assert set(data["latency_ms"]) == {"p50", "p95"} and data["duration_seconds"] >= 0
    for row in data["details"]:
        assert set(row) == {"user", "question", "type", "evidence", "rank", "recalled"}


def test_text_output_is_a_table_of_types(runner: CliRunner, fake_embedder: Any, tmp_path: Path) -> None:
    result = ok(runner.invoke(app, ["eval", "memorybank", str(write_history(tmp_path)), str(write_probes(tmp_path))]))
    header, *rows, latency = result.stdout.splitlines()
    assert header.split() == ["type", "n", "hit@1", "hit@5", "hit@10"]
    assert [row.split()[0] for row in rows] == ["recommend", "self", "overall"]
    assert rows[1].split()[1:] == ["4", "0.750", "0.750", "0.750"]  # three of the four self probes rank first
    assert latency.startswith("recall latency p50") and "2 users" in latency


def test_an_unknown_lever_is_a_usage_error(runner: CliRunner, fake_embedder: Any, tmp_path: Path) -> None:
    result = runner.invoke(
        app, ["eval", "memorybank", str(write_history(tmp_path)), str(write_probes(tmp_path)), "--without", "bogus"]
    )
    assert "bogus" in assert_error(result, ExitCode.USAGE)


# the user's own store ------------------------------------------------------------------------


def test_eval_writes_nothing_to_the_users_store(runner: CliRunner, fake_embedder: Any, tmp_path: Path) -> None:
    eval_json(runner, tmp_path)
    assert not resolve_paths().store_dir.exists()
    ok(runner.invoke(app, ["remember", "my own note about pottery"]))
    before = json.loads(ok(runner.invoke(app, ["list", "-n", "0", "--json"])).stdout)
    eval_json(runner, tmp_path, "--details")
    assert json.loads(ok(runner.invoke(app, ["list", "-n", "0", "--json"])).stdout) == before
    assert json.loads(ok(runner.invoke(app, ["stats", "--json"])).stdout)["all_users"] == {"tester": 1}


# malformed probes --------------------------------------------------------------------------------


GOOD = {"user": "Bo", "question": "What is my cat called?", "evidence": ["2023-05-02:1:query"]}


@pytest.mark.parametrize(
    ("bad", "words"),
    [
        ('{"user": "Bo", "question": "What', ["not JSON"]),
        ('["Bo", "What is my cat called?"]', ["object"]),
        ({"user": "Bo", "question": "What is my cat called?"}, ["evidence"]),
        ({"user": "Bo", "question": "What is my cat called?", "evidence": []}, ["evidence"]),
        ({"user": "Bo", "question": "What is my cat called?", "evidence": ["D1:3"]}, ["evidence"]),
        ({"user": "Bo", "question": "What is my cat called?", "evidence": "2023-05-02:1:query"}, ["evidence"]),
        ({"user": "Bo", "question": "  ", "evidence": ["2023-05-02:1:query"]}, ["question"]),
        ({"question": "What is my cat called?", "evidence": ["2023-05-02:1:query"]}, ["user"]),
        ({**GOOD, "now": "someday"}, ["now", "someday"]),
    ],
    ids=[
        "bad-json",
        "not-an-object",
        "no-evidence",
        "empty-evidence",
        "malformed-evidence",
        "evidence-not-a-list",
        "empty-question",
        "no-user",
        "bad-now",
    ],
)
def test_a_malformed_probe_line_exits_5_naming_the_file_and_line(
    runner: CliRunner, fake_embedder: Any, tmp_path: Path, bad: Any, words: list[str]
) -> None:
    probes = write_probes(tmp_path, [GOOD, "", bad, GOOD])  # the blank line 2 is skipped, and counted
    line = eval_error(runner, tmp_path, probes)
    assert "line 3" in line, line
    for word in words:
        assert word in line, line
    with pytest.raises(BadInputError, match="line 3"):
        read_probes(probes)


@pytest.mark.parametrize(
    ("bad", "words"),
    [
        (
            {"user": "Bo", "question": "What is my cat called?", "evidence": ["2023-05-02:7:query"]},
            ["2023-05-02:7:query", "Bo"],
        ),
        ({"user": "Bo", "question": "What did I bake?", "evidence": ["2023-05-03:1:query"]}, ["2023-05-03:1:query"]),
        (
            {
                "user": "Bo",
                "question": "What is my cat called?",
                "evidence": ["2023-05-02:1:query", "2023-05-01:2:response"],
            },
            ["2023-05-01:2:response"],
        ),
        ({"user": "Zed", "question": "What is my cat called?", "evidence": ["2023-05-02:1:query"]}, ["Zed"]),
    ],
    ids=["no-such-exchange", "no-such-day", "second-evidence-missing", "unknown-user"],
)
def test_a_probe_the_history_cannot_answer_exits_5_naming_the_probe(
    runner: CliRunner, fake_embedder: Any, tmp_path: Path, bad: Any, words: list[str]
) -> None:
    probes = write_probes(tmp_path, [GOOD, GOOD, bad])
    line = eval_error(runner, tmp_path, probes)
    assert "line 3" in line, line
    for word in words:
        assert word in line, line
    assert not resolve_paths().store_dir.exists()


def test_a_bad_probe_is_named_by_its_place_in_the_file_when_user_filters(
    runner: CliRunner, fake_embedder: Any, tmp_path: Path
) -> None:
    """With --user Bo, Bo's bad probe on line 3 is still named as the file's third, not as
    the first of Bo's."""
    ann = {"user": "Ann Lee", "question": "Which orchestra do I play the cello in?", "evidence": ["2023-05-01:1:query"]}
    probes = write_probes(tmp_path, [ann, ann, {**GOOD, "evidence": ["2023-05-02:7:query"]}])
    line = eval_error(runner, tmp_path, probes, "--user", "Bo")
    assert "line 3" in line, line


def test_an_empty_or_missing_probe_file_exits_5(runner: CliRunner, fake_embedder: Any, tmp_path: Path) -> None:
    blank = tmp_path / "blank.jsonl"
    blank.write_text("\n\n", encoding="utf-8")
    eval_error(runner, tmp_path, blank)
    eval_error(runner, tmp_path, tmp_path / "missing.jsonl")


def test_a_history_that_is_not_memorybank_exits_5(runner: CliRunner, fake_embedder: Any, tmp_path: Path) -> None:
    history = tmp_path / "locomo.json"
    history.write_text(json.dumps([{"sample_id": "conv-a", "conversation": {}}]), encoding="utf-8")
    result = runner.invoke(app, ["eval", "memorybank", str(history), str(write_probes(tmp_path))])
    assert str(history) in assert_error(result, ExitCode.BAD_INPUT)


def test_read_probes_reads_users_types_and_times(tmp_path: Path) -> None:
    probes = read_probes(
        write_probes(tmp_path, [GOOD, "", {**GOOD, "user": "Ann Lee", "type": "self", "now": "2023-05-06T20:00:00"}])
    )
    assert [(p.user, p.type, p.now) for p in probes] == [
        ("Bo", "question", None),
        ("AnnLee", "self", datetime(2023, 5, 6, 20, 0).timestamp()),
    ]
    assert probes[0].evidence == GOOD["evidence"] and probes[0].question == GOOD["question"]


# the repository's probe sets ---------------------------------------------------------------------


@pytest.mark.parametrize(("probes_path", "history_path"), PROBE_SETS, ids=["en", "zh"])
def test_the_repositorys_probe_sets_point_at_turns_the_history_holds(probes_path: Path, history_path: Path) -> None:
    if not history_path.is_file():
        pytest.skip(
            data_missing(
                history_path,
                "the MemoryBank data",
                "github.com/zhongwanjun/MemoryBank-SiliconFriend, eval_data/",
            )
        )
    probes = read_probes(probes_path)
    assert len(probes) >= 40
    assert len({p.user for p in probes}) >= 10
    turns = parse_memorybank(history_path, read_text(history_path))
    held = {(m.user, _turn_reference(m.source)) for m in turns}
    users = {m.user for m in turns}
    for number, probe in enumerate(probes, start=1):
        assert probe.user in users, (number, probe.user)
        for evidence in probe.evidence:
            assert (probe.user, evidence) in held, (number, probe.user, evidence)
            if probe.now is not None:  # asked after what it asks about
                assert evidence[:10] < datetime.fromtimestamp(probe.now).strftime("%Y-%m-%d"), (number, evidence)
