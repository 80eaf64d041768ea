"""The ``memcli`` command starts the service before it imports its command line (Typer),
so that the two overlap on a cold command, and ends a service it started early and never
used (``memcli.cli.start_service_early``, ``memcli.transport.client.start_early``); and a
listing on a terminal loads its table while it waits for the answer (``memcli.cli.root._load_table``)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import filelock
import pytest

from memcli.paths import resolve_paths
from memcli.processes import running
from memcli.transport import client

EARLY_START = """
import json, os, subprocess, sys

started = []
spawn = subprocess.Popen

def popen(args, **kwargs):
    # a stand-in for the service: the test watches when it starts and whether it is ended
    started.append({"args": list(args), "typer_loaded": "typer" in sys.modules})
    return spawn([sys.executable, "-c", "import time; time.sleep(60)"], **kwargs)

subprocess.Popen = popen
sys.argv = [os.path.join(os.path.dirname(sys.executable), "memcli"), *json.loads(sys.argv[1])]
from memcli.transport import client

import memcli.cli

report = {"started": started, "pids": [process.pid for _, process in client._EARLY.values()]}
print(json.dumps(report), flush=True)
memcli.cli.app(prog_name="memcli")
"""


def _command(args: list[str]) -> tuple[dict, subprocess.CompletedProcess]:
    """Run ``memcli args`` in a process of its own with the service on; what it started
    early (``started``: each spawn's arguments and whether Typer was loaded then; ``pids``)."""
    done = subprocess.run(
        [sys.executable, "-P", "-c", EARLY_START, json.dumps(args)], capture_output=True, text=True, timeout=120
    )
    return json.loads(done.stdout.splitlines()[0]), done


def test_a_cold_list_starts_the_service_before_typer_loads(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MEMCLI_SERVICE")
    report, done = _command(["list", "--bogus-option"])
    assert [spawn["typer_loaded"] for spawn in report["started"]] == [False]
    assert report["started"][0]["args"][-2:] == ["-m", "memcli.transport.serve"]
    assert done.returncode != 0  # a usage error: the command never asked the service ...
    assert not running(report["pids"][0])  # ... and ended the one it started


def test_only_a_command_that_asks_the_service_starts_it_early(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MEMCLI_SERVICE")
    started = {}
    for args in (
        ["stats", "--bogus-option"],
        ["list", "--help"],
        ["--no-service", "list", "--bogus-option"],
        ["config", "show"],
        ["--version"],
    ):
        report, _ = _command(args)
        started[" ".join(args)] = len(report["started"])
    monkeypatch.setenv("MEMCLI_SERVICE", "off")
    report, _ = _command(["list", "--bogus-option"])
    started["list, the service off"] = len(report["started"])
    assert started == {
        "stats --bogus-option": 1,
        "list --help": 0,
        "--no-service list --bogus-option": 0,
        "config show": 0,
        "--version": 0,
        "list, the service off": 0,
    }


TABLE_WHILE_WAITING = """
import json, sys, time
import memcli.cli
from memcli.cli import root
from memcli.transport import entry

seen = []

def call(paths, verb, args, handlers, **_):
    # the service's answer takes a moment: what the command imported meanwhile
    deadline = time.monotonic() + 10
    while "rich.table" not in sys.modules and time.monotonic() < deadline:
        time.sleep(0.01)
    seen.append("rich.table" in sys.modules)
    return []

entry.call = call
root._terminal = lambda: True
try:
    memcli.cli.app(["recall", "pottery"], prog_name="memcli")
except SystemExit:
    pass
print(json.dumps(seen))
"""


def test_a_recall_on_a_terminal_loads_its_table_while_it_waits_for_the_answer() -> None:
    done = subprocess.run(
        [sys.executable, "-P", "-c", TABLE_WHILE_WAITING], capture_output=True, text=True, timeout=120
    )
    assert json.loads(done.stdout.splitlines()[-1]) == [True], done.stderr


def test_a_service_started_early_that_stopped_idle_is_started_again(tmp_path: Path) -> None:
    """A ``remember`` that read its text from the keyboard for longer than ``service_idle``
    finds the service it started early gone (exit 0): it starts another rather than
    falling back to running in-process."""
    paths = resolve_paths()
    lock = filelock.FileLock(str(tmp_path / "start.lock"))
    lock.acquire()
    stopped = subprocess.Popen([sys.executable, "-c", "pass"])
    stopped.wait()
    client._EARLY[str(paths.socket)] = (lock, stopped)
    assert client.ServiceClient(paths)._adopt_early() is None
    assert not lock.is_locked
