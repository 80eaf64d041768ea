"""Shared fixtures: a temporary MEMCLI_HOME for every test, and fakes for the models.

The fakes stand in for the real models in unit tests only: ``FakeEmbedder`` hashes words
into a fixed-size bag-of-words vector (texts sharing words are close), ``FakeChatModel``
replies from a script and records every prompt it was given.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import pytest
from typer.testing import CliRunner

from memcli import local
from memcli.llm import Message

LOCOMO = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "locomo" / "locomo10.json"


class FakeEmbedder:
    """Bag-of-words hashed into 128 dimensions, unit length. Deterministic and instant."""

    name = "fake-embedder"
    dimension = 128

    def __init__(self) -> None:
        self.calls = 0

    def embed(self, texts: Sequence[str], batch_size: int = 64, progress=None) -> list[list[float]]:
        self.calls += 1
        out = []
        for text in texts:
            vector = [0.0] * self.dimension
            for word in re.findall(r"\w+", text.lower()):
                vector[int(hashlib.md5(word.encode()).hexdigest(), 16) % self.dimension] += 1.0
            norm = math.sqrt(sum(v * v for v in vector)) or 1.0
            out.append([v / norm for v in vector])
        if progress is not None:
            progress(len(texts), len(texts))
        return out

    def embed_one(self, text: str) -> list[float]:
        return self.embed([text])[0]


class FakeChatModel:
    """Replies with the scripted texts in turn (the last one repeats); records prompts.

    Structured (JSON) requests go to ``responder(task, content)`` instead, where ``task``
    names the requested JSON (its first property: summary, portrait, memory, facts, event)
    and ``content`` is the last user message; each call is recorded in ``structured_calls``
    as (task, content, schema, max_tokens, temperature).
    """

    name = "fake-model"

    def __init__(self, replies: Sequence[str] = ("OK.",)) -> None:
        self.replies = list(replies)
        self.prompts: list[list[Message]] = []
        self.responder: Callable[[str, str], str] = lambda task, content: pytest.fail(f"unexpected structured call: {task}")
        self.structured_calls: list[tuple[str, str, dict, int, float]] = []

    def stream(self, messages: Sequence[Message], max_tokens: int, temperature: float) -> Iterator[str]:
        self.prompts.append(list(messages))
        reply = self.replies.pop(0) if len(self.replies) > 1 else self.replies[0]
        for word in reply.split(" "):
            yield word + " "

    def structured(self, messages: Sequence[Message], schema: dict, max_tokens: int, temperature: float = 0.0, seed: int = 0) -> str:
        task = next(iter(schema["properties"]))
        content = messages[-1].content
        self.structured_calls.append((task, content, schema, max_tokens, temperature))
        return self.responder(task, content)


LOGIN = "tester"
"""The login name of every test, hence its default user."""


@pytest.fixture(autouse=True)
def memcli_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test gets its own empty MEMCLI_HOME and no MEMCLI_* settings from outside.
    Commands run in-process (MEMCLI_SERVICE=off), where the fakes are; the service has
    its own tests (tests/test_service.py)."""
    import os

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
