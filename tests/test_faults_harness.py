"""The fault harness (scripts/faults.py): its quick mode holds every invariant on this
tree, with the test fakes (``python tests/fakes cli``); and its checks see what they look for
(a lost or duplicated write, a marker left in a file, a wrong exit code, a changed store)."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from collections import Counter
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


CRASH_AT_EXIT = """\
import atexit, os, sys


def crash():
    sys.stderr.write("Traceback (most recent call last):\\n  at exit\\n")
    sys.stderr.flush()
    os._exit(3)


atexit.register(crash)
"""


def test_a_snapshot_whose_process_crashes_at_exit_fails(tmp_path: Path) -> None:
    # The snapshot's process prints every command's result before it ends: a crash after that
    # (a sitecustomize's exit handler here) is still a store that does not open.
    harness = faults.Harness(fake=True, quick=True, workdir=tmp_path)
    home = tmp_path / "home"
    fine = faults.Check(faults.Row("fine"))
    assert faults.snapshot(harness, home, fine) is not None and fine.row.ok, fine.row.failures
    (tmp_path / "site").mkdir()
    (tmp_path / "site" / "sitecustomize.py").write_text(CRASH_AT_EXIT)
    crashed = faults.Check(faults.Row("crashed"))
    assert faults.snapshot(harness, home, crashed, PYTHONPATH=str(tmp_path / "site")) is None
    assert crashed.row.tracebacks == 1 and "exit 3" in crashed.row.failures[0]
    assert crashed.row.failures[1:] == ["the store does not open after the fault"]


def test_a_snapshot_command_ended_by_a_message_reports_it(monkeypatch: pytest.MonkeyPatch) -> None:
    def app(*args: object, **kwargs: object) -> None:
        raise SystemExit("no store here")

    monkeypatch.setattr("memcli.cli.app", app)
    results = faults.snapshot_inside(fake=False)
    assert [(r["code"], r["err"]) for r in results] == [(1, "no store here\n")] * len(faults.SNAPSHOT_ARGV)


def test_kill_trials_are_spread_over_every_case() -> None:
    counts = faults.distribute(100, faults.KILL_SHARES)
    assert sum(counts.values()) == 100 and min(counts.values()) >= 10
    assert sum(faults.distribute(6, faults.KILL_SHARES).values()) == 6


REACH_OUT = """\
import socket

try:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.connect(("192.0.2.1", 9))  # TEST-NET-1: a UDP connect names the address and sends nothing
except OSError:
    pass
"""


def test_the_no_network_probe_sees_a_connection_outside_loopback(tmp_path: Path) -> None:
    # every Python process of the run (the driver, the CLI, the service) connects a UDP
    # socket to a documentation address at its start, as a library reaching out would
    harness = faults.Harness(fake=True, quick=True, workdir=tmp_path)
    (tmp_path / "site").mkdir()
    (tmp_path / "site" / "sitecustomize.py").write_text(REACH_OUT)
    row = faults.traced_case(harness, tmp_path, PYTHONPATH=str(tmp_path / "site"))
    if row.skipped:
        pytest.skip(f"the probe cannot trace here: {row.skipped}")
    assert [f for f in row.failures if "192.0.2.1:9" in f], row.failures
    assert row.trials == len(faults.OFFLINE_STEPS)


def test_a_name_lookup_counts_as_reaching_outside_even_through_a_local_resolver() -> None:
    trace = (
        '12 connect(5, {sa_family=AF_UNIX, sun_path="/tmp/s"}, 110) = 0\n'
        '13 connect(31, {sa_family=AF_INET, sin_port=htons(8080), sin_addr=inet_addr("127.0.0.1")}, 16) = 0\n'
        '14 connect(31, {sa_family=AF_INET, sin_port=htons(53), sin_addr=inet_addr("127.0.0.53")}, 16) = 0\n'
        '15 sendto(3, "x", 1, 0, {sa_family=AF_INET6, sin6_port=htons(443), sin6_flowinfo=htonl(0), '
        'inet_pton(AF_INET6, "2001:db8::1", &sin6_addr), sin6_scope_id=0}, 28) = 1\n'
    )
    assert faults.outside_loopback(trace) == ["connect 127.0.0.53:53 (pid 14)", "sendto 2001:db8::1:443 (pid 15)"]


PIECES = (
    # (--only values, --trials: the kill trials of KILL_SHARES among them, the rows the run must hold);
    # each an xdist worker's test of its own, a minute or two each on a quiet 2-core machine
    (
        ("kill: import", "kill: chat", "kill: consolidate", "kill: forget", "kill: forget --purge"),
        5,
        ("kill: import", "kill: chat", "kill: consolidate", "kill: forget", "kill: forget --purge"),
    ),
    (
        ("kill: service", "concurrency (service)", "concurrency (no service)"),
        1,
        ("kill: service", "concurrency (service)", "concurrency (no service)"),
    ),
    (
        ("bad: ",),
        0,
        (
            "bad: malformed JSON",
            "bad: empty file",
            "bad: read-only store",
            "bad: full disk",
            "bad: stdin not UTF-8 (remember -)",
            "bad: closed stdin (chat)",
            "bad: 1 MB question (ask -)",
            "bad: home writable by others (0777)",
        ),
    ),
    (("full disk: read, delete, restart",), 0, ("full disk: read, delete, restart",)),
    (
        ("graph: backup, purge, restore", "service: held by clients", "service: a folder named memcli here"),
        0,
        ("graph: backup, purge, restore", "service: held by clients", "service: a folder named memcli here"),
    ),
    (("kill: service mid-command",), 0, ("kill: service mid-command",)),
    (
        ("kill: service while recall reinforces", "chat: transcript and citations"),
        0,
        ("kill: service while recall reinforces", "chat: transcript and citations"),
    ),
    (
        ("purge grep: ", "probe: export -o FIFO, folder, symlink, stale temp"),
        0,
        ("purge grep: delete", "purge grep: forget --purge", "probe: export -o FIFO, folder, symlink, stale temp"),
    ),
    (
        ("probe: server ", "probe: Chroma server killed mid-import, remember while down"),  # the last: full runs only
        0,
        (
            "probe: server ignores max_tokens (chat)",
            "probe: server trickles past model_timeout (ask)",
            "probe: server reply not UTF-8 (ask)",
            "probe: server stream line not JSON (ask)",
            "probe: server echoes the API key (ask, service on)",
        ),
    ),
    (
        ("probe: long note (chunked, consolidates, edit refused)", "probe: MCP stdio malformed requests"),
        0,
        ("probe: long note (chunked, consolidates, edit refused)", "probe: MCP stdio malformed requests"),
    ),
    (
        ("probe: no network ",),
        0,
        (
            "probe: no network (strace: no address outside loopback)",
            "probe: no network (unshare -rn: works with loopback only)",
        ),
    ),
)


def test_the_pieces_of_the_quick_run_run_every_case_once() -> None:
    names = [*faults.KILL_SHARES, *faults.CASES]
    chosen = Counter(name for only, _, _ in PIECES for name in names if faults.chosen(name, list(only)))
    assert chosen == Counter(names)
    assert sum(trials for _, trials, _ in PIECES) == 6  # one kill trial of each case of KILL_SHARES
    for only, trials, _ in PIECES:
        assert trials == sum(faults.chosen(case, list(only)) for case in faults.KILL_SHARES)


@pytest.mark.slow
@pytest.mark.parametrize(("only", "trials", "expected"), PIECES, ids=[piece[0][0].strip(": ") for piece in PIECES])
def test_the_quick_fault_run_holds_every_invariant(
    tmp_path: Path, only: tuple[str, ...], trials: int, expected: tuple[str, ...]
) -> None:
    """``faults.py --quick`` in pieces (``--only``), each a test xdist deals to a worker: the
    whole run took one worker ~9 minutes while the other ran the rest of the suite."""
    argv = [sys.executable, str(SCRIPT), "--quick", "--fake-models", "--json", "--trials", str(trials), "--seed", "14"]
    for value in only:
        argv += ["--only", value]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=1500, cwd=tmp_path)
    assert "Traceback (most recent call last)" not in done.stderr, done.stderr
    report = json.loads(done.stdout)
    cases = {row["case"] for row in report["rows"]}
    assert set(expected) <= cases, sorted(cases)
    # --trials shares out the kill trials of KILL_SHARES; a service killed mid-command and a
    # service killed while recall reinforces have counts of their own (3 and 3 in --quick)
    assert sum(row["trials"] for row in report["rows"] if row["case"] in faults.KILL_SHARES) == trials
    failing = {row["case"]: row["failures"][:3] for row in report["rows"] if not row["ok"]}
    assert failing == {}, json.dumps(failing, indent=1)
    assert done.returncode == 0
    skipped = [f"{row['case']}: {row['skipped']}" for row in report["rows"] if row.get("skipped")]
    if skipped and len(skipped) == len(report["rows"]):
        # a piece whose every case could not run here (no unshare, no tmpfs) tested nothing: say so
        pytest.skip("; ".join(skipped))
