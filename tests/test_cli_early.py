"""The ``memcli`` command starts the service before it imports its command line (Typer),
so that the two overlap on a cold command whose whole input is on its command line, and
ends a service it started early and never used, unless another command uses it
(``memcli.cli.start_service_early``, ``memcli.transport.client.start_early``); and a
listing on a terminal loads its table while it waits for the answer (``memcli.cli.root._load_table``)."""

from __future__ import annotations

import inspect
import json
import os
import select
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import filelock
import pytest
import typer.main
from typer.testing import CliRunner

import memcli.cli
from memcli.paths import Paths, resolve_paths
from memcli.processes import running
from memcli.transport import client, entry

TESTS = Path(__file__).resolve().parent

EARLY_START = """
import json, os, signal, subprocess, sys

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

report = {"started": started, "pids": [process.pid for _, _, process in client._EARLY.values()]}
print(json.dumps(report), flush=True)
if sys.argv[-1] == "--signal":
    os.kill(os.getpid(), getattr(signal, os.environ["EARLY_SIGNAL"]))
memcli.cli.app(prog_name="memcli")
"""


def _command(args: list[str], signal_name: str | None = None) -> tuple[dict, subprocess.CompletedProcess]:
    """Run ``memcli args`` in a process of its own with the service on, its stdin a pipe
    that stays open (nothing typed yet); what it started early (``started``: each spawn's
    arguments and whether Typer was loaded then; ``pids``). ``signal_name``: the process
    sends itself that signal before its command line loads (``args`` end with --signal)."""
    env = {**os.environ, "EARLY_SIGNAL": signal_name or ""}
    with subprocess.Popen(
        [sys.executable, "-P", "-c", EARLY_START, json.dumps(args)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    ) as process:
        assert process.stdout is not None
        line = process.stdout.readline()
        try:
            report = json.loads(line)
        except ValueError:
            process.kill()
            raise AssertionError(f"no report: {line}{process.stderr.read() if process.stderr else ''}") from None
        STAND_INS.extend(report["pids"])
        try:
            out, err = process.communicate(timeout=120)  # stdin closed now: a command reading it ends
        finally:
            process.kill()
    return report, subprocess.CompletedProcess(process.args, process.returncode, out, err)


STAND_INS: list[int] = []
"""The stand-ins for the service ``_command`` started: killed after each test (``_stand_ins``)."""


@pytest.fixture(autouse=True)
def _stand_ins() -> Iterator[None]:
    yield
    while STAND_INS:
        pid = STAND_INS.pop()
        if running(pid):
            os.kill(pid, signal.SIGKILL)


def _poll(condition: Callable[[], bool], seconds: float = 10.0) -> bool:
    """Whether ``condition`` holds within ``seconds`` (polled)."""
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


@pytest.fixture
def service_on(memcli_home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The test's MEMCLI_HOME, made, with the service allowed (conftest turns it off)."""
    monkeypatch.delenv("MEMCLI_SERVICE")
    memcli_home.mkdir()
    return memcli_home


def test_a_cold_list_starts_the_service_before_typer_loads(service_on: Path) -> None:
    report, done = _command(["list", "--bogus-option"])
    assert [spawn["typer_loaded"] for spawn in report["started"]] == [False]
    assert report["started"][0]["args"][-2:] == ["-m", "memcli.transport.serve"]
    assert done.returncode != 0  # a usage error: the command never asked the service ...
    assert _poll(lambda: not running(report["pids"][0]))  # ... and ended the one it started


def test_only_a_command_whose_input_is_on_its_command_line_starts_it_early(
    service_on: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    started = {}
    for args in (
        ["stats", "--bogus-option"],
        ["remember", "pottery on Tuesdays", "--bogus-option"],
        ["ask", "when is pottery?", "--bogus-option"],
        ["remember", "--bogus-option"],
        ["remember", "--tag", "family", "--bogus-option"],
        ["remember", "-", "--bogus-option"],
        ["ask", "--bogus-option"],
        ["chat", "--bogus-option"],
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
        "remember pottery on Tuesdays --bogus-option": 1,
        "ask when is pottery? --bogus-option": 1,
        "remember --bogus-option": 0,
        "remember --tag family --bogus-option": 0,
        "remember - --bogus-option": 0,
        "ask --bogus-option": 0,
        "chat --bogus-option": 0,
        "list --help": 0,
        "--no-service list --bogus-option": 0,
        "config show": 0,
        "--version": 0,
        "list, the service off": 0,
    }


def test_a_usage_error_in_a_missing_home_makes_nothing(memcli_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MEMCLI_SERVICE")
    report, done = _command(["recall"])
    assert done.returncode != 0
    assert report["started"] == []
    assert not memcli_home.exists()


@pytest.mark.parametrize("signal_name", ["SIGTERM", "SIGHUP"])
def test_a_signal_before_the_command_line_loads_ends_the_service_started_early(
    service_on: Path, signal_name: str
) -> None:
    report, done = _command(["list", "--signal"], signal_name)
    assert done.returncode == -getattr(signal, signal_name)
    assert len(report["pids"]) == 1
    assert _poll(lambda: not running(report["pids"][0]))


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


class Watched:
    """A service's process whose ``terminate`` is recorded (``terminated``)."""

    def __init__(self, process: subprocess.Popen) -> None:
        self.process = process
        self.terminated = False

    def poll(self) -> int | None:
        return self.process.poll()

    def terminate(self) -> None:
        self.terminated = True
        self.process.terminate()


@pytest.fixture
def early(service_on: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[subprocess.Popen], Watched]]:
    """Make a process the service this test process started early (``client._EARLY``,
    holding the start lock); every service a test starts is stopped after it."""
    monkeypatch.setattr(client, "_EARLY", {})
    paths = resolve_paths()
    client._private_dir(paths.state_dir)
    processes: list[subprocess.Popen] = []

    def adopt(process: subprocess.Popen) -> Watched:
        processes.append(process)
        lock = filelock.FileLock(str(paths.start_lock), mode=0o600)
        lock.acquire()
        watched = Watched(process)
        client._EARLY[str(paths.socket)] = (paths, lock, watched)
        return watched

    yield adopt
    client.ServiceClient(paths).stop()
    for process in processes:
        if process.poll() is None:
            process.kill()
        process.wait(30)


def _fake_service(paths: Paths) -> subprocess.Popen:
    """A ``python tests/fakes serve`` process, once it listens."""
    process = subprocess.Popen(
        [sys.executable, str(TESTS / "fakes"), "serve"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    assert process.stderr is not None
    ready = select.select([process.stderr], [], [], 60)[0]
    line = process.stderr.readline().decode() if ready else "(nothing within 60 s)"
    process.stderr.close()
    if "listening" not in line:
        process.kill()
        raise AssertionError(f"the fake service did not start: {line}")
    return process


def test_a_service_started_early_that_another_command_uses_is_left_running(early: Any) -> None:
    """A ``memcli list`` started it early, a warm import of another terminal found it and
    uses it, and the list leaves (a usage error, Ctrl-C): the service goes on."""
    paths = resolve_paths()
    service = early(_fake_service(paths))
    other = (
        "from memcli.paths import resolve_paths; from memcli.transport.client import ServiceClient; "
        "ServiceClient(resolve_paths()).status()"
    )
    subprocess.run([sys.executable, "-P", "-c", other], check=True, timeout=120)  # another command's request
    client._end_early()
    assert not service.terminated
    assert service.poll() is None
    assert client.ServiceClient(paths).status()["requests_served"] == 3
    assert not client._EARLY


def test_a_service_started_early_that_served_no_one_is_stopped_when_it_listens(early: Any) -> None:
    paths = resolve_paths()
    service = early(_fake_service(paths))
    client._end_early()
    assert not service.terminated  # asked to stop, as stop_if_alone asks
    assert _poll(lambda: service.poll() is not None)
    assert not filelock.FileLock(str(paths.start_lock)).is_locked


def test_a_service_started_early_is_asked_to_stop_on_its_one_connection(
    early: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ending the service started early opens no connection but its stop request: a probe
    (is it listening?) closed before it counts, for the service, as another client's
    connection until its thread reads the end, and the stop then leaves the service to its
    idle exit (15 minutes of a 1 GB process)."""
    paths = resolve_paths()
    service = early(_fake_service(paths))
    connections: list[bool] = []
    connect = client.ServiceClient.connect

    def counted(self: client.ServiceClient) -> Any:
        connection = connect(self)
        connections.append(connection is not None)
        return connection

    monkeypatch.setattr(client.ServiceClient, "connect", counted)
    client._end_early()
    assert connections == [True]  # the stop request's
    assert not service.terminated
    assert _poll(lambda: service.poll() is not None)


def test_a_signal_leaves_a_listening_service_started_early_unasked(early: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """A SIGTERM while the service started early listens but is not adopted yet: the
    handler does not ask it (a status, a stop waiting up to STOP_TIMEOUT) before the
    process dies; it may serve another command, and exits when idle."""
    paths = resolve_paths()
    service = early(_fake_service(paths))
    died: list[int] = []
    with monkeypatch.context() as patch:
        patch.setattr(client.os, "kill", lambda pid, signum: died.append(signum))
        patch.setattr(client.signal, "signal", lambda signum, handler: None)
        client._on_signal(signal.SIGTERM, None)
    assert died == [signal.SIGTERM]
    assert not service.terminated
    assert service.poll() is None
    assert client.ServiceClient(paths).status()["requests_served"] == 1  # this status only
    assert not filelock.FileLock(str(paths.start_lock)).is_locked


def test_a_service_started_early_that_stopped_idle_is_started_again(
    early: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A command that adopts the service it started early only after the service stopped
    idle (exit 0) starts another rather than falling back to running in-process."""
    paths = resolve_paths()
    stopped = subprocess.Popen([sys.executable, "-c", "pass"])
    stopped.wait()
    early(stopped)
    spawned: list[subprocess.Popen] = []

    def spawn(paths: Paths) -> subprocess.Popen:
        spawned.append(_fake_service(paths))
        return spawned[-1]

    monkeypatch.setattr(client, "_spawn", spawn)
    try:
        status = client.ServiceClient(paths).request({"verb": "service.status", "args": {}}, client.Handlers())
        assert len(spawned) == 1
        assert status["pid"] == spawned[0].pid
    finally:
        client.ServiceClient(paths).stop()
        for process in spawned:
            process.wait(30)


def test_the_early_commands_are_those_whose_input_is_on_their_command_line(
    runner: CliRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every command that starts the service early is a real command that sends a request
    and reads nothing from stdin nor asks anything; an ``ask`` or ``remember`` reads its text
    from stdin only without it (its first argument, ``_read_text``)."""
    memcli.cli.load_all()
    commands = typer.main.get_command(memcli.cli.app).commands  # type: ignore[attr-defined]
    early = memcli.cli.EARLY_COMMANDS | memcli.cli.TEXT_COMMANDS
    assert early == {"ask", "import", "list", "recall", "remember", "show", "stats"}
    sent: list[str] = []

    class Sent(Exception):
        pass

    def call(paths: Paths, verb: str, args: dict[str, Any], handlers: Any, **_: Any) -> Any:
        sent.append(verb)
        raise Sent

    monkeypatch.setattr(entry, "call", call)
    notes = tmp_path / "notes.txt"
    notes.write_text("pottery on Tuesdays\n", encoding="utf-8")
    arguments = {
        "import": [str(notes)],
        "recall": ["pottery"],
        "show": ["3fa2b1c9"],
        "ask": ["when?"],
        "remember": ["pottery"],
    }
    for name in sorted(early):
        sent.clear()
        runner.invoke(memcli.cli.app, [name, *arguments.get(name, [])])
        assert sent, f"{name} sent no request"
        source = inspect.getsource(commands[name].callback)
        reads = [word for word in ("_read_text", "_stdin", "_confirm", "_interactive", "Repl") if word in source]
        assert reads == (["_read_text"] if name in memcli.cli.TEXT_COMMANDS else []), name
