"""Shared fixtures: a temporary MEMCLI_HOME for every test, the fake models (defined in
``fakes.models``: ``FakeEmbedder`` hashes words into a fixed-size bag-of-words vector, texts
sharing words are close; ``FakeChatModel`` replies from a script and records every prompt
it was given), and helpers the CLI tests share.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cli_checks import ok
from fakes.models import FakeChatModel, FakeEmbedder
from typer.testing import CliRunner

from memcli import local
from memcli.cli import app

LOCOMO = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "locomo" / "locomo10.json"


if os.environ.get("PYTEST_XDIST_WORKER"):
    # One worker a core (see pyproject's addopts): torch in a worker takes one thread, as
    # two threads a worker on two cores would make its OpenMP threads wait on each other.
    os.environ.setdefault("OMP_NUM_THREADS", "1")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The longest tests run first (``slow``, then ``integration``): started last, one of
    them would keep a worker busy long after the others are done."""
    items.sort(key=lambda item: (item.get_closest_marker("slow") is None, item.get_closest_marker("integration") is None))


LOGIN = "tester"
"""The login name of every test, hence its default user."""


@pytest.fixture(autouse=True)
def memcli_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test gets its own empty MEMCLI_HOME and no MEMCLI_* settings from outside.
    Commands run in-process (MEMCLI_SERVICE=off), where the fakes are; the service has
    its own tests (tests/test_service.py)."""
    for key in list(os.environ):
        if key.startswith("MEMCLI_"):
            monkeypatch.delenv(key)
    home = tmp_path / "home"
    monkeypatch.setenv("MEMCLI_HOME", str(home))
    monkeypatch.setenv("MEMCLI_LOCK_TIMEOUT", "5")
    monkeypatch.setenv("MEMCLI_SERVICE", "off")
    monkeypatch.setenv("LOGNAME", LOGIN)  # the default user (getpass.getuser() reads LOGNAME first)
    return home


class Given:
    """The fakes the running test asked for (None: the real models), passed in wherever
    memcli is built: ``memcli.local.use_models`` for the CLI's in-process runs, ``given_models()``
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
    """The LoCoMo benchmark file in ../shared/data/locomo/ beside the repository."""
    if not LOCOMO.is_file():
        pytest.fail(f"LoCoMo data not found at {LOCOMO}: the benchmark tests need ../shared/data/locomo/")
    return LOCOMO


def list_json(runner: CliRunner, *args: str) -> list[dict[str, Any]]:
    """``memcli list -n 0 --json ARGS`` run in-process: every memory it lists, newest first."""
    return json.loads(ok(runner.invoke(app, ["list", "-n", "0", "--json", *args])).stdout)
