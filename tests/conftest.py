"""Shared fixtures: a temporary MEMCLI_HOME for every test, the fake models (defined in
``fakes.models``: ``FakeEmbedder`` hashes words into a fixed-size bag-of-words vector, texts
sharing words are close; ``FakeChatModel`` replies from a script and records every prompt
it was given), and helpers the CLI tests share.
"""

from __future__ import annotations

import compileall
import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import typer.main
import typer.testing
from cli_checks import ok
from fakes.models import FakeChatModel, FakeEmbedder
from typer.testing import CliRunner

from memcli.cli import app
from memcli.transport import local

DATA_VARIABLE = "MEMCLI_TEST_DATA"
DATA = Path(os.environ.get(DATA_VARIABLE) or Path(__file__).resolve().parents[1].parent / "shared" / "data")
"""The benchmark data: a folder holding ``locomo/locomo10.json`` (LoCoMo, snap-research/locomo,
data/locomo10.json) and ``memorybank/memory_bank_{en,cn}.json`` (MemoryBank,
zhongwanjun/MemoryBank-SiliconFriend, eval_data/). ``MEMCLI_TEST_DATA`` names it; by default
``../shared/data`` beside the repository (where CI keeps it). Never in the repository: a
fresh clone has none, and the tests that need it skip, saying so in one line."""
LOCOMO = DATA / "locomo" / "locomo10.json"
MEMORYBANK = DATA / "memorybank"


def data_missing(path: Path, what: str, source: str) -> str:
    """The one line a test that needs benchmark data at ``path`` skips with: where the data
    comes from and how to point the tests at it."""
    return (
        f"{what} not found at {path} (it comes from {source}; CI keeps it in ../shared/data beside "
        f"the repository): set {DATA_VARIABLE} to the folder that holds {path.relative_to(DATA)}"
    )


ROOT = Path(__file__).resolve().parents[1]


def pytest_configure(config: pytest.Config) -> None:
    """memcli's modules and the fakes compiled once, in the first process (before any
    worker starts), for the hundreds of memcli processes the tests start (the fault
    harness alone starts ~300). Where the environment sets PYTHONDONTWRITEBYTECODE, no
    process keeps what it compiles, so each compiled again every memcli module it imports
    (~0.45 CPU-s of a cold ``list``'s 3.3); compileall writes the bytecode all the same, and
    Python reads it either way. It is what a person's memcli has: its ``__pycache__``."""
    if os.environ.get("PYTEST_XDIST_WORKER"):
        return
    for folder in (ROOT / "memcli", ROOT / "tests" / "fakes"):
        # a checkout that cannot be written keeps none: each process compiles then, as before
        compileall.compile_dir(folder, quiet=2)


def _registrations(instance: typer.Typer) -> tuple[Any, ...]:
    """What ``typer.main.get_command`` builds a Typer app's Click command from: its callback
    and the commands and groups registered on it (a command module imported later, or a test
    that patches ``registered_commands``, changes it). The objects themselves, kept alive by
    the key and compared by identity (Typer's infos define no equality)."""
    groups = tuple((group, _registrations(group.typer_instance)) for group in instance.registered_groups)
    return instance.registered_callback, tuple(instance.registered_commands), groups


_BUILT: dict[typer.Typer, tuple[tuple[Any, ...], Any]] = {}


def _command_of(instance: typer.Typer) -> Any:
    """``typer.main.get_command`` of ``instance``, built again only when its registrations
    changed. Typer's CliRunner builds the whole Click tree at every ``invoke`` (every command
    module the test process imported: ~0.1 s a call, thousands of calls in the suite), where
    the ``memcli`` program builds it once a process. Each invocation has its own Context, but
    what a command keeps on itself (a parameter's conversion, built on first use) carries over
    to the next invocation, as in one process running commands in turn: a command must not
    leave there what one invocation's values made of it (``root.PlainValue``)."""
    key = _registrations(instance)
    built = _BUILT.get(instance)
    if built is None or built[0] != key:
        built = _BUILT[instance] = (key, typer.main.get_command(instance))
    return built[1]


typer.testing._get_command = _command_of  # what typer.testing.CliRunner.invoke calls

if os.environ.get("PYTEST_XDIST_WORKER"):
    # One worker a core (see pyproject's addopts): torch in a worker takes one thread, as
    # two threads a worker on two cores would make its OpenMP threads wait on each other.
    os.environ.setdefault("OMP_NUM_THREADS", "1")


def _first_shares(count: int, workers: int) -> list[int]:
    """How many of ``count`` tests pytest-xdist's worksteal scheduler hands each of
    ``workers`` workers at the start: contiguous runs of the collection order, the first
    ``count // workers`` to one worker, then the rest shared the same way (its
    ``check_schedule``). An idle worker later steals from the end of another's run."""
    shares = []
    for index in range(workers):
        share = (count - sum(shares)) // (workers - index)
        shares.append(share)
    return shares


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The longest tests run first (``slow``, then ``integration``), dealt out a group a
    worker in turn: each worker's first run of tests (``_first_shares``) starts with its share
    of them. Started last, one of them would keep a worker busy long after the others are
    done; sorted to the front of the collection alone, every one of them would fall in the
    first worker's run, and that worker would run them one after the other (the slow fault
    harness after the slow bench) while the other had the quick tests. A ``slow`` test is a
    group of its own; a module's ``integration`` tests are one group, as they share what
    their module or session builds once a worker (an ONNX export, a model server): dealt one
    a worker, each worker built it again (the export's 25-30 s)."""
    slow = [item for item in items if item.get_closest_marker("slow")]
    modules: dict[str, list[pytest.Item]] = {}
    for item in items:
        if item.get_closest_marker("integration") and not item.get_closest_marker("slow"):
            modules.setdefault(str(item.path), []).append(item)
    groups = [[item] for item in slow] + list(modules.values())
    chosen = {item for group in groups for item in group}
    rest = [item for item in items if item not in chosen]
    workers = max(1, int(os.environ.get("PYTEST_XDIST_WORKER_COUNT") or 1))
    runs: list[list[pytest.Item]] = [[] for _ in range(workers)]
    for index, group in enumerate(groups):
        runs[index % workers] += group
    for run, share in zip(runs, _first_shares(len(items), workers)):
        take = max(0, share - len(run))
        run += rest[:take]
        rest = rest[take:]
    items[:] = [item for run in runs for item in run] + rest


LOGIN = "tester"
"""The login name of every test, hence its default user."""


@pytest.fixture(autouse=True)
def memcli_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test gets its own empty MEMCLI_HOME and no MEMCLI_* settings from outside.
    Commands run in-process (MEMCLI_SERVICE=off), where the fakes are; the service has
    its own tests (tests/test_service.py)."""
    return isolate(tmp_path, monkeypatch)


def isolate(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The environment of ``memcli_home`` over ``tmp_path`` (its ``home`` folder, returned,
    not made), set through ``monkeypatch``: also for a fixture of a wider scope that builds a
    store once, for its tests to copy (``pytest.MonkeyPatch.context()``)."""
    for key in list(os.environ):
        if key.startswith("MEMCLI_"):
            monkeypatch.delenv(key)
    home = tmp_path / "home"
    monkeypatch.setenv("MEMCLI_HOME", str(home))
    monkeypatch.setenv("MEMCLI_LOCK_TIMEOUT", "5")
    monkeypatch.setenv("MEMCLI_SERVICE", "off")
    # No test home makes the embedder's ONNX export in the background (8 s of CPU each, and a
    # file appearing in the cache at any moment); tests/test_embedding_export.py tests it.
    monkeypatch.setenv("MEMCLI_EMBEDDER_ONNX", "false")
    # nor reads or writes the user's own cache shared by every home (memcli.paths.shared_cache_dir)
    monkeypatch.setenv("MEMCLI_SHARED_CACHE", str(tmp_path / "shared-cache"))
    monkeypatch.setenv("LOGNAME", LOGIN)  # the default user (getpass.getuser() reads LOGNAME first)
    return home


class ChromaServer:
    """A real ``chroma run`` on 127.0.0.1 (the executable chromadb installs beside Python),
    over a temporary folder; ``stop``/``start`` take it down and up again on the same
    port and folder (the failure tests)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        chroma = Path(sys.executable).with_name("chroma")
        self.process = subprocess.Popen(
            [str(chroma), "run", "--path", str(self.path), "--host", "127.0.0.1", "--port", str(self.port)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"chroma run exited with {self.process.returncode}")
            try:
                with urllib.request.urlopen(f"{self.url}/api/v2/heartbeat", timeout=1):
                    return
            except OSError:
                time.sleep(0.2)
        self.stop()
        raise RuntimeError("chroma run did not answer within 60 s")

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.process = None


@pytest.fixture(scope="session")
def chroma_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ChromaServer]:
    """One Chroma server for the test session (a worker's), always stopped at the end."""
    server = ChromaServer(tmp_path_factory.mktemp("chroma-server"))
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(params=["folder", "server"])
def store_mode(request: pytest.FixtureRequest, memcli_home: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """Runs the test twice: the memories in the folder, then on the session's Chroma
    server (MEMCLI_STORE_URL; each test's home has its own collection there)."""
    if request.param == "server":
        server: ChromaServer = request.getfixturevalue("chroma_server")
        if server.process is None:
            server.start()  # a failure test stopped it and failed before starting it again
        monkeypatch.setenv("MEMCLI_STORE_URL", server.url)
    return str(request.param)


def open_store(paths: Any, **kwargs: Any) -> Any:
    """A MemoryStore on ``paths`` where the settings (MEMCLI_STORE_URL) put it."""
    from memcli.config import load_settings
    from memcli.store.store import MemoryStore, Server

    return MemoryStore(paths, server=Server.of(load_settings(paths)), **kwargs)


class Given:
    """The fakes the running test asked for (None: the real models), passed in wherever
    memcli is built: ``memcli.transport.local.use_models`` for the CLI's in-process runs, ``given_models()``
    for a ``Engine`` a test builds itself."""

    embedder: FakeEmbedder | None = None
    chat_model: FakeChatModel | None = None

    @classmethod
    def set(cls, embedder: FakeEmbedder | None, chat_model: FakeChatModel | None) -> None:
        cls.embedder, cls.chat_model = embedder, chat_model
        local.use_models(embedder, chat_model)


def given_models() -> dict[str, object]:
    """``Engine`` keyword arguments: the fake models of the running test."""
    return {"embedder": Given.embedder, "chat_model": Given.chat_model}


@pytest.fixture(autouse=True)
def _no_given_models() -> Iterator[None]:
    """No test sees another test's fakes."""
    Given.set(None, None)
    yield
    Given.set(None, None)


@pytest.fixture
def fake_embedder() -> FakeEmbedder:
    """The fake embedder, in every memcli the test builds or runs in-process."""
    embedder = FakeEmbedder()
    Given.set(embedder, Given.chat_model)
    return embedder


@pytest.fixture
def fake_model(fake_embedder: FakeEmbedder) -> FakeChatModel:
    """A scripted chat model (and the fake embedder); set ``.replies`` to script it."""
    model = FakeChatModel()
    Given.set(fake_embedder, model)
    return model


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


@pytest.fixture
def locomo_file() -> Path:
    """The LoCoMo benchmark file (``DATA``/locomo/locomo10.json); the test skips in one line without it."""
    if not LOCOMO.is_file():
        pytest.skip(data_missing(LOCOMO, "the LoCoMo data", "github.com/snap-research/locomo, data/locomo10.json"))
    return LOCOMO


def list_json(runner: CliRunner, *args: str) -> list[dict[str, Any]]:
    """``memcli list -n 0 --json ARGS`` run in-process: every memory it lists, newest first."""
    return json.loads(ok(runner.invoke(app, ["list", "-n", "0", "--json", *args])).stdout)
