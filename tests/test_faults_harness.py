"""The fault harness (scripts/faults.py): its quick mode holds every invariant on this
tree, with the test fakes (``python tests/fakes cli``); and its checks see what they look for
(a lost or duplicated write, a marker left in a file, a wrong exit code, a changed store)."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "faults.py"


def _faults():
    spec = importlib.util.spec_from_file_location("faults", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules["faults"] = module
    spec.loader.exec_module(module)
    return module


faults = _faults()


def _memory(text: str, memory_id: str, kind: str = "note", day: str = "2026-03-01") -> dict:
    return {"id": memory_id, "text": text, "kind": kind, "user": "default", "day": day, "archived": False}


def test_a_lost_write_and_a_duplicate_are_counted() -> None:
    row = faults.Row("case")
    check = faults.Check(row)
    stored = [_memory("kept fx1", "a1"), _memory("twice fx1", "b1"), _memory("twice fx1", "b2")]
    check.present_once(stored, {"kept fx1": "a1", "gone fx1": "c1", "twice fx1": None})
    assert (row.acknowledged, row.lost, row.duplicates) == (3, 1, 1)
    assert not row.ok


def test_two_daily_summaries_of_one_day_are_a_duplicate() -> None:
    row = faults.Row("case")
    faults.Check(row).duplicates(
        [
            _memory("a", "1", "event_daily"),
            _memory("b", "2", "event_daily"),
            _memory("c", "3", "event_daily", day="2026-03-02"),
        ]
    )
    assert row.duplicates == 1


def test_the_purge_grep_finds_a_marker_in_any_file(tmp_path: Path) -> None:
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "blob.bin").write_bytes(b"\x00\x01 zqmarker \xff")
    (tmp_path / "other.txt").write_text("nothing here")
    assert faults.grep_home(tmp_path, b"zqmarker") == ["data/blob.bin"]


def test_a_wrong_exit_code_and_two_stderr_lines_fail_a_bad_input_case() -> None:
    row = faults.Row("bad")
    faults._judge(row, faults.Result(["import", "x"], 1, "", "memcli: error: unexpected\nmore\n"), 5)
    assert row.trials == 1 and len(row.failures) == 2
    fine = faults.Row("bad")
    faults._judge(fine, faults.Result(["import", "x"], 5, "", "memcli: error: x: file is empty\n"), 5)
    assert fine.ok


def test_kill_trials_are_spread_over_every_case() -> None:
    counts = faults.distribute(100, faults.KILL_SHARES)
    assert sum(counts.values()) == 100 and min(counts.values()) >= 10
    assert sum(faults.distribute(6, faults.KILL_SHARES).values()) == 6


@pytest.mark.slow
def test_the_quick_fault_run_holds_every_invariant(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--quick", "--fake-models", "--json", "--trials", "6", "--seed", "14"],
        capture_output=True,
        text=True,
        timeout=1500,  # the probe cases of issue 34 add about 4 minutes
        cwd=tmp_path,
    )
    assert "Traceback (most recent call last)" not in done.stderr, done.stderr
    report = json.loads(done.stdout)
    cases = {row["case"] for row in report["rows"]}
    for expected in (
        "kill: import",
        "kill: chat",
        "kill: consolidate",
        "kill: forget",
        "kill: forget --purge",
        "kill: service",
        "concurrency (service)",
        "concurrency (no service)",
        "bad: malformed JSON",
        "bad: empty file",
        "bad: read-only store",
        "bad: full disk",
        "full disk: read, delete, restart",
        "purge grep: delete",
        "purge grep: forget --purge",
        "bad: stdin not UTF-8 (remember -)",
        "bad: closed stdin (chat)",
        "bad: 1 MB question (ask -)",
        "bad: home writable by others (0777)",
        "service: held by clients",
        "kill: service mid-command",
        "probe: export -o FIFO, folder, symlink, stale temp",
        "probe: long note (chunked, consolidates, edit refused)",
        "probe: server ignores max_tokens (chat)",
        "probe: server trickles past model_timeout (ask)",
        "probe: server reply not UTF-8 (ask)",
        "probe: server stream line not JSON (ask)",
        "probe: server echoes the API key (ask, service on)",
        "probe: MCP stdio malformed requests",
    ):
        assert expected in cases
    # --trials shares out the kill trials; a service killed mid-command and a service killed
    # while recall reinforces have counts of their own (6 and 3 in --quick)
    own = ("kill: service mid-command", "kill: service while recall reinforces")
    assert "kill: service while recall reinforces" in cases
    assert (
        sum(row["trials"] for row in report["rows"] if row["case"].startswith("kill:") and row["case"] not in own) == 6
    )
    failing = {row["case"]: row["failures"][:3] for row in report["rows"] if not row["ok"]}
    assert failing == {}, json.dumps(failing, indent=1)
    assert done.returncode == 0
