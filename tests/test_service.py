"""The memcli service: start, auto-start, idle exit, stop, fallback to in-process, version
mismatch, concurrency, kill -9, socket modes and peers.

Most tests run the real service code in a subprocess with the fake models
(``python tests/fakes serve``); the auto-start and version tests let the client start the
real service (``python -m memcli.transport.serve``), whose embedder loads in the background while the test only lists
and asks for status. Every service a test starts is stopped (killed if need be).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import select
import signal
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from memcli.cli import app
from memcli.errors import ServiceError
from memcli.paths import Paths, resolve_paths
from memcli.transport import client as client_module
from memcli.transport.client import Handlers, ServiceClient, client_env

TESTS = Path(__file__).resolve().parent
HEAVY = (
    "numpy",
    "torch",
    "sentence_transformers",
    "chromadb",
    "llama_cpp",
    "transformers",
    "onnxruntime",
    "scipy",
    "bm25s",
    "jieba",
    "dateparser",
    "jionlp",
    "openai",
)
"""Not on the client path. (Typer itself imports pydantic to parse options, so that one is.)"""


@pytest.fixture
def paths(memcli_home: Path, monkeypatch: pytest.MonkeyPatch) -> Paths:
    """The test's MEMCLI_HOME with the service allowed (conftest turns it off)."""
    monkeypatch.delenv("MEMCLI_SERVICE")
    return resolve_paths()


def _wait(condition: Any, seconds: float = 60.0, what: str = "condition") -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


class FakeService:
    """A ``python tests/fakes serve`` process; ``kill()`` is kill -9."""

    def __init__(self, paths: Paths, *options: str) -> None:
        self.paths = paths
        self.process = subprocess.Popen(
            [sys.executable, str(TESTS / "fakes"), "serve", *options],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        # Ready once it says so: its socket may accept a moment before its service file is written.
        assert self.process.stderr is not None
        if select.select([self.process.stderr], [], [], 60)[0]:
            line = self.process.stderr.readline().decode()
        else:
            line = "(nothing within 60 s)"
        if "listening" not in line:
            self.process.kill()
            raise AssertionError(f"the fake service did not start: {line}{self.process.stderr.read().decode()}")

    def kill(self) -> None:
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(30)

    def close(self) -> None:
        if self.process.poll() is None:
            ServiceClient(self.paths).stop()
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(30)
        self.process.stderr.close()


@pytest.fixture
def start_service(paths: Paths) -> Iterator[Any]:
    started: list[FakeService] = []

    def start(*options: str) -> FakeService:
        service = FakeService(paths, *options)
        started.append(service)
        return service

    yield start
    for service in started:
        service.close()
    ServiceClient(paths).stop()  # a service a client started on its own


def request(paths: Paths, verb: str, handlers: Handlers | None = None, **args: Any) -> Any:
    """One request to the running service, as the CLI sends it (never starts one)."""
    return ServiceClient(paths).request(
        {"verb": verb, "args": args, "env": client_env()}, handlers or Handlers(), start=False
    )


def memcli(paths: Paths, *argv: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """The real ``memcli`` command in a subprocess."""
    return subprocess.run(
        [sys.executable, "-m", "memcli", *argv],
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )


def test_the_service_answers_commands_and_stops(start_service: Any, paths: Paths) -> None:
    service = start_service()
    done = memcli(paths, "remember", "The spare key is under the blue pot", "--json")
    assert done.returncode == 0, done.stderr
    note = json.loads(done.stdout)["memory"]
    listed = memcli(paths, "list", "--json")
    assert [m["id"] for m in json.loads(listed.stdout)] == [note["id"]]
    status = json.loads(memcli(paths, "service", "status", "--json").stdout)
    assert status["pid"] == service.process.pid and status["requests_served"] >= 2
    stopped = memcli(paths, "service", "stop")
    assert stopped.returncode == 0 and f"pid {service.process.pid}" in stopped.stderr
    assert service.process.wait(30) == 0
    assert not paths.socket.exists() and not paths.service_file.exists()
    gone = memcli(paths, "service", "status")
    assert gone.returncode == 7 and "not running" in gone.stderr


def test_a_command_starts_the_service_when_none_runs(paths: Paths) -> None:
    try:
        listed = memcli(paths, "list", "--json")
        assert listed.returncode == 0, listed.stderr
        assert json.loads(listed.stdout) == []
        status = ServiceClient(paths).status()
        assert status["version"] and status["pid"] != os.getpid()
        assert ServiceClient(paths).pid() == status["pid"]
    finally:
        ServiceClient(paths).stop()
    assert ServiceClient(paths).pid() is None


def test_a_folder_named_memcli_in_the_current_directory_does_not_stop_the_service(
    paths: Paths, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A folder named memcli where the command runs (cron runs from $HOME): with an
    # __init__.py it shadows any install; an empty one shadows an editable install's finder.
    (tmp_path / "work" / "memcli").mkdir(parents=True)
    (tmp_path / "work" / "memcli" / "__init__.py").write_text("", encoding="utf-8")
    monkeypatch.chdir(tmp_path / "work")
    client = ServiceClient(paths)
    try:
        client.start().close()
        assert client.status()["pid"] != os.getpid()
    finally:
        client.stop()
    assert "ImportError" not in paths.log_file.read_text(encoding="utf-8", errors="replace")


def test_the_service_exits_after_its_idle_time(start_service: Any, paths: Paths) -> None:
    service = start_service("--idle", "0.5")
    assert service.process.wait(60) == 0
    assert ServiceClient(paths).connect() is None and not paths.socket.exists()


def test_a_command_runs_in_process_when_the_service_cannot_start(paths: Paths, runner: Any, fake_embedder: Any) -> None:
    paths.state_dir.mkdir(parents=True)
    (paths.state_dir / "run").write_text("not a directory")  # the service cannot make its socket there
    result = runner.invoke(app, ["remember", "Dentist on Friday at nine"])
    assert result.exit_code == 0, result.stderr
    assert "running in this process instead" in result.stderr
    listed = runner.invoke(app, ["--no-service", "list", "--json"])
    assert [m["text"] for m in json.loads(listed.stdout)] == ["Dentist on Friday at nine"]


def test_a_service_of_another_version_is_restarted(start_service: Any, paths: Paths) -> None:
    old = start_service("--version", "0.0.1-old")
    assert ServiceClient(paths).status()["version"] == "0.0.1-old"
    listed = memcli(paths, "list")
    assert listed.returncode == 0, listed.stderr
    assert "restarting it" in listed.stderr
    assert old.process.wait(30) == 0
    status = ServiceClient(paths).status()
    import memcli as package

    assert status["version"] == package.__version__ and status["pid"] != old.process.pid


def test_a_service_of_an_older_protocol_is_restarted(start_service: Any, paths: Paths) -> None:
    import memcli as package

    old = start_service("--protocol", str(package.PROTOCOL - 1))
    assert ServiceClient(paths).status()["protocol"] == package.PROTOCOL - 1
    listed = memcli(paths, "list")
    assert listed.returncode == 0 and "restarting it" in listed.stderr, listed.stderr
    assert old.process.wait(30) == 0
    assert ServiceClient(paths).status()["protocol"] == package.PROTOCOL


def test_a_service_newer_than_the_client_is_left_running(start_service: Any, paths: Paths) -> None:
    """A command that ran across an upgrade (its code older than the service) must not
    stop the new service, nor start its own old one: it says so and exits 7."""
    newer = start_service("--version", "99.0.0")
    listed = memcli(paths, "list")
    assert listed.returncode == 7 and "upgraded to 99.0.0" in listed.stderr, listed.stderr
    assert newer.process.poll() is None and ServiceClient(paths).status()["version"] == "99.0.0"


def test_a_request_the_service_did_not_accept_goes_to_a_new_service(paths: Paths) -> None:
    """A service that closes a connection without accepting its request (it was stopping:
    idle, or asked to) leaves the client to start another and ask it."""
    from multiprocessing.connection import Listener

    paths.run_dir.mkdir(parents=True)
    os.chmod(paths.run_dir, 0o700)
    stopping = Listener(str(paths.socket), family="AF_UNIX")

    def close_one_unanswered() -> None:
        stopping.accept().close()
        stopping.close()  # and the socket goes, as a stopped service's does

    thread = threading.Thread(target=close_one_unanswered, daemon=True)
    thread.start()
    try:
        found = ServiceClient(paths).request({"verb": "list", "args": {}, "env": client_env()}, Handlers())
        assert found == []
        assert ServiceClient(paths).pid() not in (None, os.getpid())
    finally:
        ServiceClient(paths).stop()
        thread.join(10)


def test_a_failed_first_command_leaves_the_service_to_a_client_that_has_connected(
    start_service: Any, paths: Paths
) -> None:
    """The client that started the service and failed stops it only when no one else uses
    it: another command that has connected and not yet sent its request keeps it, and is
    answered by it (stopped, it would get no answer and start a service of its own)."""
    from memcli import PROTOCOL, __version__

    service = start_service()
    mine = ServiceClient(paths)
    mine.started = True
    other = ServiceClient(paths)
    connection = other.connect()
    assert connection is not None
    with connection:
        mine.stop_if_alone()
        outcome, value = other._exchange(
            connection,
            {"verb": "list", "args": {}, "env": client_env(), "version": __version__, "protocol": PROTOCOL},
            Handlers(),
        )
    assert (outcome, value) == ("result", [])
    assert service.process.poll() is None
    assert ServiceClient(paths).status()["requests_served"] == 3


def test_a_failed_first_command_leaves_an_older_service_that_served_another_client(
    start_service: Any, paths: Paths
) -> None:
    """A service of protocol 5 stopped at any ``service.stop``, ``if_alone`` or not: the
    client reads the protocol in its service file and asks it its request count first, as
    it did; another client's request keeps it running."""
    service = start_service("--protocol", "5")
    ServiceClient(paths).status()  # another client's request
    mine = ServiceClient(paths)
    mine.started = True
    mine.stop_if_alone(own=0)
    assert service.process.poll() is None
    assert ServiceClient(paths).status()["requests_served"] == 3


def test_a_socket_directory_open_to_others_is_not_used(paths: Paths, runner: Any, fake_embedder: Any) -> None:
    paths.run_dir.mkdir(parents=True)
    os.chmod(paths.run_dir, 0o777)
    result = runner.invoke(app, ["remember", "Dentist on Friday at nine"])
    assert result.exit_code == 0, result.stderr
    assert "is not a private directory" in result.stderr and "running in this process instead" in result.stderr
    assert not paths.socket.exists()


def test_a_pid_reused_after_a_killed_service_is_not_signalled(paths: Paths) -> None:
    """A service killed without cleaning up leaves its service file; if its pid now
    belongs to another process, memcli neither names nor stops that process."""
    bystander = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        paths.run_dir.mkdir(parents=True)
        os.chmod(paths.run_dir, 0o700)
        paths.service_file.write_text(json.dumps({"pid": bystander.pid, "process_start": 1, "version": "0.1.0"}))
        assert ServiceClient(paths).pid() is None
        stopped = memcli(paths, "service", "stop")
        assert stopped.returncode == 0, stopped.stderr
        assert bystander.poll() is None
    finally:
        bystander.kill()
        bystander.wait()


REMEMBER_25 = """
import sys
from memcli.transport.client import Handlers, ServiceClient, client_env
from memcli.paths import resolve_paths
n = sys.argv[1]
for i in range(25):
    done = ServiceClient(resolve_paths()).request(
        {"verb": "remember", "args": {"text": f"client {n} note {i}", "user": "crowd"}, "env": client_env()}, Handlers(), start=False)
    assert done["added"], done
"""


def test_eight_clients_in_parallel_each_store_25_notes(start_service: Any, paths: Paths) -> None:
    """Eight client processes at once, each storing 25 new notes in a loop."""
    start_service()
    clients = [
        subprocess.Popen([sys.executable, "-c", REMEMBER_25, str(n)], stderr=subprocess.PIPE, text=True)
        for n in range(8)
    ]
    failures = []
    for client in clients:
        _, stderr = client.communicate(timeout=180)
        if client.returncode:
            failures.append(stderr)
    assert failures == []
    texts = {m["text"] for m in request(paths, "list", user="crowd", limit=0)}
    assert texts == {f"client {n} note {i}" for n in range(8) for i in range(25)}


def _turns_file(tmp_path: Path, days: int, per_day: int) -> Path:
    lines = []
    for d in range(days):
        for t in range(per_day):
            role = "user" if t % 2 == 0 else "assistant"
            lines.append(
                json.dumps(
                    {
                        "role": role,
                        "content": f"day {d} turn {t}: the garden needs water and the tomatoes grow",
                        "timestamp": f"2024-03-{d + 1:02d}T10:{t:02d}:00",
                    }
                )
            )
    path = tmp_path / "turns.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_recall_answers_while_a_consolidation_waits_on_the_model(
    start_service: Any, paths: Paths, tmp_path: Path
) -> None:
    start_service("--slow-model", "1.0")
    request(paths, "import", path=str(_turns_file(tmp_path, 2, 4)))
    consolidation: dict[str, Any] = {}
    first_unit_done = threading.Event()

    def consolidating() -> None:
        try:
            consolidation["result"] = request(
                paths, "consolidate", Handlers(warning=lambda line: first_unit_done.set())
            )
        except BaseException as exc:  # reported below
            consolidation["error"] = exc

    worker = threading.Thread(target=consolidating)
    worker.start()
    assert first_unit_done.wait(60), consolidation  # one unit fell back; more model calls of a second or two each to go
    hits = request(paths, "recall", query="tomatoes", k=3)
    assert worker.is_alive(), "recall waited for the consolidation"
    assert hits and all("tomatoes" in h["text"] for h in hits)
    worker.join(120)
    result = consolidation["result"]  # the slow model answers nothing valid: every unit gets the extractive result
    assert result["invalid_outputs"] == result["written_by"]["fallback"] >= 6 and "llm" not in result["written_by"]


def test_recall_and_remember_answer_while_an_import_embeds(start_service: Any, paths: Paths, tmp_path: Path) -> None:
    start_service("--slow-embed", "0.3")
    request(paths, "remember", text="The spare key is under the blue pot")
    # recall once first: what a service loads for its first recall (recall's code, the warm-up
    # beside it) is not what this test is about, and would race the import's few seconds
    request(paths, "recall", query="spare key", k=1)
    big = _turns_file(tmp_path, 10, 40)  # 800 texts with their windows: 13 batches, about 4 s
    progressed = threading.Event()
    imported: dict[str, Any] = {}

    def importing() -> None:
        try:
            imported["result"] = request(
                paths, "import", Handlers(progress=lambda done, total: progressed.set()), path=str(big)
            )
        except BaseException as exc:  # reported below
            imported["error"] = exc

    worker = threading.Thread(target=importing)
    worker.start()
    assert progressed.wait(60)
    hits = request(paths, "recall", query="spare key blue pot", k=1)
    note = request(paths, "remember", text="The bike lock code is 4711")
    assert worker.is_alive(), "recall and remember waited for the whole import to be embedded"
    assert hits[0]["text"] == "The spare key is under the blue pot" and note["added"]
    worker.join(120)
    assert imported["result"]["added"] == 400, imported


def test_kill_9_during_an_import_loses_nothing_acknowledged(start_service: Any, paths: Paths, tmp_path: Path) -> None:
    service = start_service("--slow-embed", "0.5")
    acknowledged = [request(paths, "remember", text=f"acknowledged note {i}")["memory"]["id"] for i in range(3)]
    big = _turns_file(tmp_path, 10, 40)
    progressed = threading.Event()
    failure: dict[str, BaseException] = {}

    def importing() -> None:
        try:
            request(paths, "import", Handlers(progress=lambda done, total: progressed.set()), path=str(big))
        except BaseException as exc:  # the service dies under it
            failure["error"] = exc

    worker = threading.Thread(target=importing)
    worker.start()
    assert progressed.wait(60)
    service.kill()
    worker.join(60)
    assert isinstance(failure.get("error"), ServiceError)
    assert paths.socket.exists(), "the killed service left its socket (a stale one the next start must replace)"
    start_service()
    ids = {m["id"] for m in request(paths, "list", limit=0)}
    assert set(acknowledged) <= ids
    again = request(paths, "import", path=str(big))
    assert again["found"] == 400
    assert len({m["id"] for m in request(paths, "list", limit=0)}) == 403


def test_kill_9_during_a_chat_reply_keeps_the_users_turn(start_service: Any, paths: Paths) -> None:
    service = start_service("--slow-model", "0.2")
    state = request(paths, "chat.open", user="ana")
    pieces = threading.Event()
    failure: dict[str, BaseException] = {}

    def replying() -> None:
        try:
            request(
                paths,
                "chat.respond",
                Handlers(piece=lambda text: pieces.set()),
                state=state,
                text="My bike is the red one by the door",
            )
        except BaseException as exc:
            failure["error"] = exc

    worker = threading.Thread(target=replying)
    worker.start()
    assert pieces.wait(60)
    service.kill()
    worker.join(60)
    assert isinstance(failure.get("error"), ServiceError)
    start_service()
    texts = [m["text"] for m in request(paths, "list", user="ana", limit=0)]
    assert "My bike is the red one by the door" in texts


def test_socket_and_its_directory_are_private(start_service: Any, paths: Paths) -> None:
    start_service()
    assert stat.S_IMODE(paths.run_dir.stat().st_mode) == 0o700
    assert stat.S_IMODE(paths.socket.stat().st_mode) == 0o600
    assert stat.S_IMODE(paths.service_file.stat().st_mode) == 0o600
    assert stat.S_IMODE(paths.log_file.stat().st_mode) == 0o600


def test_a_peer_of_another_uid_is_refused(paths: Paths, monkeypatch: pytest.MonkeyPatch) -> None:
    from conftest import FakeEmbedder

    from memcli.config import load_settings
    from memcli.transport import service as service_module

    assert service_module.peer_allowed(os.getuid())
    assert not service_module.peer_allowed(os.getuid() + 1)
    service = service_module.Service(paths, load_settings(paths), embedder=FakeEmbedder())
    thread = threading.Thread(target=service.serve, daemon=True)
    thread.start()
    try:
        _wait(lambda: ServiceClient(paths).connect() is not None, what="the service")
        with ServiceClient(paths).connect() as connection:
            assert service_module.peer_uid(connection) == os.getuid()
        monkeypatch.setattr(
            service_module, "peer_allowed", lambda uid, own=None: uid is not None and uid != os.getuid()
        )
        with pytest.raises(ServiceError):
            request(paths, "list")
        monkeypatch.undo()
        assert request(paths, "list") == []
    finally:
        service.stop()
        thread.join(30)
    assert not thread.is_alive()


def test_an_in_process_command_names_the_running_service(
    start_service: Any, paths: Paths, runner: Any, fake_embedder: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    service = start_service()
    monkeypatch.setenv("MEMCLI_LOCK_TIMEOUT", "0.5")
    result = runner.invoke(app, ["--no-service", "list"])
    assert result.exit_code == 4
    assert f"memcli service (pid {service.process.pid})" in result.stderr and "memcli service stop" in result.stderr


def test_a_second_service_waits_then_exits_4(start_service: Any, paths: Paths) -> None:
    start_service()
    env = {**os.environ, "MEMCLI_LOCK_TIMEOUT": "0.5"}
    second = subprocess.run(
        [sys.executable, "-m", "memcli", "serve"], capture_output=True, text=True, timeout=60, env=env
    )
    assert second.returncode == 4 and "memcli service stop" in second.stderr


def test_the_client_path_imports_nothing_heavy(start_service: Any, paths: Paths) -> None:
    start_service()
    request(paths, "remember", text="light client")
    probe = (
        "import json, sys\n"
        "from memcli.cli import app\n"
        "try:\n"
        "    app(['recall', 'light', '--json'])\n"
        "except SystemExit as exit:\n"
        "    assert exit.code == 0, exit.code\n"
        f"print(json.dumps(sorted(m for m in {HEAVY!r} if m in sys.modules)))\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    *printed, heavy = done.stdout.strip().splitlines()
    assert json.loads(heavy) == []
    assert json.loads("\n".join(printed))[0]["text"] == "light client"


def test_a_remember_cut_by_a_dead_service_says_the_note_was_saved(start_service: Any, paths: Paths) -> None:
    service = start_service("--slow-embed", "30")
    done: list[subprocess.CompletedProcess[str]] = []
    worker = threading.Thread(
        target=lambda: done.append(memcli(paths, "remember", "The spare key is under the blue pot"))
    )
    worker.start()
    _wait(lambda: any(paths.pending_dir.glob("*.json")), what="the note journaled")
    time.sleep(0.5)  # the service tells the client right after the journal's fsync
    service.kill()
    worker.join(60)
    assert done[0].returncode == 7
    assert done[0].stderr == (
        "memcli: error: the memcli service stopped; your note was saved and will be stored when it starts "
        "again (run the same command to check — it will not duplicate)\n"
    )
    start_service()
    assert [m["text"] for m in request(paths, "list", limit=0)] == ["The spare key is under the blue pot"]
    again = memcli(paths, "remember", "The spare key is under the blue pot")
    assert again.returncode == 0 and "already remembered" in again.stderr + again.stdout
    assert len(request(paths, "list", limit=0)) == 1


def test_an_import_cut_by_a_dead_service_says_how_many_it_stored(
    start_service: Any, paths: Paths, tmp_path: Path
) -> None:
    service = start_service("--slow-embed", "0.5")
    big = _turns_file(tmp_path, 10, 40)
    done: list[subprocess.CompletedProcess[str]] = []
    worker = threading.Thread(target=lambda: done.append(memcli(paths, "import", str(big))))
    worker.start()
    _wait(lambda: len(request(paths, "list", limit=0)) >= 64, what="a first batch stored")
    service.kill()
    worker.join(60)
    assert done[0].returncode == 7
    said = re.fullmatch(
        r"memcli: error: the memcli service stopped during the import; it had stored at least (\d+) new "
        r"memories of the 400 found \(run the same command to store the rest — it will not duplicate\); see .*\n",
        done[0].stderr,
    )
    assert said, done[0].stderr
    start_service()
    assert 64 <= int(said[1]) <= len(request(paths, "list", limit=0))
    assert request(paths, "import", path=str(big))["found"] == 400
    assert len(request(paths, "list", limit=0)) == 400


def test_what_a_dead_service_had_not_said_is_not_claimed() -> None:
    from memcli.transport.client import stopped_message

    assert stopped_message("remember", {}, "LOG") == (
        "the memcli service stopped before it said your note was saved; run the same "
        "command again (it will not duplicate); see LOG"
    )
    assert stopped_message("remember", {"journaled": 512, "total": 700}, "LOG").startswith(
        "the memcli service stopped; 512 of the 700 parts of your note were saved"
    )
    assert stopped_message("import", {}, "LOG").startswith(
        "the memcli service stopped during the import, before it stored a first batch"
    )
    assert stopped_message("recall", {}, "LOG") == "the memcli service stopped while answering; see LOG"


def test_a_stopped_service_leaves_no_native_abort_in_its_log(
    paths: Paths, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The real ``memcli serve`` (torch, Chroma), stopped while its embedder loads and while
    an import embeds: it exits by itself (not signalled after STOP_TIMEOUT), and its log,
    which also has its stderr, has no "terminate called" of a C++ std::terminate."""
    # the client signals a service still running after STOP_TIMEOUT: here it waits as long as
    # a busy machine may need, and records a signal instead of sending it
    signalled: list[int] = []
    monkeypatch.setattr(client_module, "STOP_TIMEOUT", 120.0)
    monkeypatch.setattr(client_module, "_terminate", signalled.append)
    notes = tmp_path / "notes.txt"
    notes.write_text(
        "\n\n".join(f"Paragraph {i}: the garden, tomato number {i} and the spring weather." for i in range(2000))
    )
    client = ServiceClient(paths)
    progressed = threading.Event()

    def run() -> None:
        with contextlib.suppress(ServiceError):  # the stop cuts it
            request(paths, "import", Handlers(progress=lambda done, total: progressed.set()), path=str(notes))

    def recall() -> None:
        with contextlib.suppress(ServiceError):  # the stop cuts it
            request(paths, "recall", query="tomatoes", k=1)

    for during in ("warm-up", "import"):
        assert memcli(paths, "stats", "--json").returncode == 0  # starts it
        importing = None
        if during == "warm-up":
            # a recall starts loading the embedder as it arrives (LOADS_AT_ONCE), and waits for
            # it: the stop below comes while it loads (the warm-up's own load comes after its
            # imports of what reads texts, which a stop right after the stats would cut)
            importing = threading.Thread(target=recall)
            importing.start()
            time.sleep(0.5)
        if during == "import":
            importing = threading.Thread(target=run)
            importing.start()
            assert progressed.wait(120)
        assert client.stop() is not None
        assert signalled == [], "the service did not exit by itself after service stop"
        if importing is not None:
            importing.join(60)
    log = paths.log_file.read_text(encoding="utf-8", errors="replace")
    assert log.count("stopped after") == 2
    assert "terminate called" not in log and "Traceback" not in log


def test_the_warm_up_waits_for_a_quiet_service_before_importing_chroma(paths: Paths) -> None:
    """chromadb's import (a second of Python under the GIL) waits until no request has run
    for ``CHROMA_AFTER_QUIET`` seconds: not while one runs, not right after one ended; a
    service that stops meanwhile does not import it at all."""
    from conftest import FakeEmbedder

    from memcli.config import load_settings
    from memcli.transport import service as service_module

    service = service_module.Service(paths, load_settings(paths), embedder=FakeEmbedder())
    waited: list[bool] = []
    service._active = 1  # a request running
    thread = threading.Thread(target=lambda: waited.append(service._quiet(0.05)), daemon=True)
    thread.start()
    thread.join(0.5)
    assert thread.is_alive(), "the warm-up went on while a request ran"
    with service._counter:
        service._active = 0
        service._last = time.monotonic()
    thread.join(5)
    assert waited == [True]
    stopping = threading.Thread(target=lambda: waited.append(service._quiet(30)), daemon=True)
    stopping.start()
    service._stopping.set()
    stopping.join(5)
    assert waited == [True, False]


@contextlib.contextmanager
def _service_noting_the_embedders_load(
    paths: Paths, monkeypatch: pytest.MonkeyPatch, owner: Any, name: str
) -> Iterator[list[bool]]:
    """A real service (with the fake embedder) serving on a thread, its warm-up held back;
    each call of ``owner.name`` that a request makes first notes in the list yielded whether
    the service's "embedder" thread has embedded by then (waiting for it up to 10 s)."""
    from conftest import FakeEmbedder

    from memcli.config import load_settings
    from memcli.transport import service as service_module

    warmed = threading.Event()

    class Watched(FakeEmbedder):
        def embed_one(self, text: str) -> list[float]:
            if threading.current_thread().name == "embedder":
                warmed.set()
            return super().embed_one(text)

    seen: list[bool] = []
    original = getattr(owner, name)

    def noting(*args: Any, **kwargs: Any) -> Any:
        seen.append(warmed.wait(10))  # the embedder loads meanwhile, or not
        return original(*args, **kwargs)

    monkeypatch.setattr(owner, name, noting)
    monkeypatch.setattr(service_module, "WARM_UP_AFTER", 60.0)
    service = service_module.Service(paths, load_settings(paths), embedder=Watched())
    thread = threading.Thread(target=service.serve, daemon=True)
    thread.start()
    try:
        _wait(lambda: ServiceClient(paths).connect() is not None, what="the service")
        yield seen
    finally:
        service.stop()
        thread.join(30)


def test_an_import_starts_loading_the_embedder_as_it_arrives(
    paths: Paths, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The service started by ``memcli import`` loads its embedder beside the import's
    reading of the file, not after the file is read (nor only once it is answered)."""
    from memcli.library import engine_files

    notes = tmp_path / "notes.txt"
    notes.write_text("The allotment needs watering.\n\nMy sister moved to Porto.\n")
    with _service_noting_the_embedders_load(paths, monkeypatch, engine_files, "open_records") as seen:
        assert request(paths, "import", path=str(notes))["added"] == 2
        assert seen == [True], "the embedder began to load only after the file was read"


def test_an_ask_starts_loading_the_embedder_as_it_arrives(paths: Paths, monkeypatch: pytest.MonkeyPatch) -> None:
    """A cold ``ask`` loads the embedder in a thread of its own from its arrival, beside the
    request's reading of the question (ONNX Runtime builds its session without the GIL), not
    when the request first embeds, nor once it is answered."""
    from memcli.library.engine_recall import RecallWork

    with _service_noting_the_embedders_load(paths, monkeypatch, RecallWork, "ask") as seen:
        request(paths, "ask", question="Where did my sister move?")
        assert seen == [True], "the embedder began to load only when the ask embedded"


def test_a_service_a_client_starts_does_not_import_the_command_line(
    paths: Paths, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The service a command starts in the background imports neither Typer nor memcli's
    command line (a tenth of a CPU-second of every cold command), and still ends on bad
    settings as ``memcli serve`` does: one ``memcli: error:`` line in its log and exit 5 (``BAD_INPUT``),
    which the client takes for bad settings. Its imports are read from its log, where
    ``python -X importtime`` writes them."""
    from memcli.transport import client as client_module
    from memcli.transport.client import ServiceUnavailable

    paths.config_file.parent.mkdir(parents=True, exist_ok=True)
    paths.config_file.write_text("no_such_setting = 1\n", encoding="utf-8")
    started = subprocess.Popen

    def popen(args: list[str], *rest: Any, **options: Any) -> Any:
        return started([args[0], "-X", "importtime", *args[1:]], *rest, **options)

    monkeypatch.setattr(client_module.subprocess, "Popen", popen)
    with pytest.raises(ServiceUnavailable) as failed:
        ServiceClient(paths).start()
    assert failed.value.bad_settings
    log = paths.log_file.read_text(encoding="utf-8")
    imported = {line.rsplit("|", 1)[-1].strip() for line in log.splitlines() if line.startswith("import time:")}
    assert "memcli.config" in imported  # it got as far as reading the settings
    assert not {"typer", "memcli.cli", "memcli.cli.root"} & imported
    assert "memcli: error: " in log and "no_such_setting" in log


def test_a_service_whose_socket_is_gone_exits_without_waiting_for_its_idle_time(
    start_service: Any, paths: Paths
) -> None:
    # its MEMCLI_HOME deleted under it, as a script's temporary home is: no client can reach it
    service = start_service()
    assert request(paths, "service.status")["pid"] == service.process.pid
    paths.socket.unlink()
    assert service.process.wait(120) == 0  # its idle time is the default 15 minutes
