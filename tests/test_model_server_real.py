"""memcli against a real OpenAI-compatible server: llama-cpp-python's own
(``python -m llama_cpp.server``, the ``[server]`` extra) serving the embedded Gemma 3 270M
GGUF on 127.0.0.1, started once per test session (per xdist worker) and always stopped
(``fakes.llama_server``).
``chat`` (streamed, and interrupted), ``ask`` and a consolidation on the LLM path run end
to end through the CLI with ``MEMCLI_MODEL_URL``. The failure cases are in
tests/test_model_server.py (a fake server)."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_checks import ok
from fakes import llama_server
from fakes.models import FakeEmbedder
from typer.testing import CliRunner

from memcli.cli import app
from memcli.config import load_settings, resolve_paths
from memcli.errors import Interrupted
from memcli.library.chat import ChatSession
from memcli.library.engine import Engine
from memcli.models.llm import default_model_path

pytestmark = pytest.mark.integration

ALIAS = "gemma-3-270m"


@pytest.fixture(scope="session")
def server_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where ``real_server`` writes what the server prints (its requests, a client's disconnect)."""
    return tmp_path_factory.mktemp("server") / "server.log"


@pytest.fixture(scope="session")
def real_server(tmp_path_factory: pytest.TempPathFactory, server_log: Path) -> Iterator[str]:
    """The base URL of llama-cpp-python's server over the embedded GGUF (chatml chat format)."""
    pytest.importorskip("llama_cpp.server", reason="the llama-cpp-python[server] extra is not installed")
    model = default_model_path(tmp_path_factory.mktemp("models"))
    with llama_server.serving(model, ALIAS, server_log, "--chat_format", "chatml", "--n_ctx", "4096") as url:
        yield url


@pytest.fixture
def served(real_server: str, fake_embedder: FakeEmbedder, monkeypatch: pytest.MonkeyPatch) -> str:
    """Commands use the real server's model (and the fake embedder: recall is not what these test)."""
    monkeypatch.setenv("MEMCLI_MODEL_URL", real_server)
    monkeypatch.setenv("MEMCLI_MODEL_REQUEST_TIMEOUT", "120")
    monkeypatch.setenv("MEMCLI_MAX_TOKENS", "32")
    return real_server


def _memories(runner: CliRunner) -> list[dict]:
    return json.loads(ok(runner.invoke(app, ["list", "--json", "-n", "0"])).stdout)


def test_chat_streams_a_reply_from_the_server(runner: CliRunner, served: str) -> None:
    result = ok(runner.invoke(app, ["chat"], input="Hello! My cat is called Miso.\n"))
    assert f"({ALIAS})" in result.stderr
    turns = _memories(runner)
    assert [t["speaker"] for t in reversed(turns)] == ["tester", "assistant"]
    assert turns[0]["text"].strip() and turns[0]["text"] in result.stdout


DISCONNECTED = "Disconnected from client"
"""What llama-cpp-python's server prints when the client of a streamed reply closed it."""
FINISHED = "llama_perf_context_print:        eval time"
"""What it prints when a reply was generated to its end (its tokens counted)."""


def _end_of_request(log: Path, start: int) -> str:
    """How the server's first request after byte ``start`` of its ``log`` ended: the first of
    ``DISCONNECTED`` (its client closed the stream) and ``FINISHED`` (generated to the end)
    printed after it. Waits for as long as a busy machine needs (nothing is timed: the
    server ends a request one way or the other, at most 400 tokens later)."""
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline:
        text = log.read_text(encoding="utf-8", errors="replace")[start:]
        ends = [(text.index(mark), mark) for mark in (DISCONNECTED, FINISHED) if mark in text]
        if ends:
            return min(ends)[1]
        time.sleep(0.2)
    raise AssertionError(f"the server neither finished nor closed the request; see {log}")


def test_an_interrupted_reply_closes_the_request_and_keeps_what_was_written(
    served: str, server_log: Path, fake_embedder: FakeEmbedder
) -> None:
    paths = resolve_paths()
    engine = Engine(load_settings(paths, max_tokens=400, temperature=0.0), paths, embedder=fake_embedder)
    session = ChatSession(engine)
    pieces: list[str] = []

    def on_piece(piece: str) -> None:
        pieces.append(piece)
        if len(pieces) == 2:
            raise Interrupted("stopped")

    start = len(server_log.read_text(encoding="utf-8", errors="replace"))
    reply = session.respond("Tell me a long story about a lighthouse keeper.", on_piece)
    assert reply.interrupted and reply.text == pieces[0].strip()  # the piece the client never got is not kept
    # The request was closed, not left open or read to its end: the server saw its client
    # go (no other request is sent meanwhile: the server also cuts a streamed reply short
    # when another request waits, and would print the same).
    assert _end_of_request(server_log, start) == DISCONNECTED
    # and the server takes the next request (the base model may answer with nothing)
    assert not session.respond("Thanks.", lambda piece: None).interrupted


def test_ask_answers_through_the_server_and_stores_nothing(runner: CliRunner, served: str) -> None:
    ok(runner.invoke(app, ["remember", "My sister Ana lives in Lisbon."]))
    result = ok(runner.invoke(app, ["ask", "Where does my sister live?"]))
    assert result.stdout.strip()
    assert len(_memories(runner)) == 1


def test_consolidation_on_the_llm_path_through_the_server(
    runner: CliRunner, served: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One day of two messages consolidated by the server's model: "auto" takes the LLM
    path for a server model; the structured replies go through llama-cpp-python's
    json_object form; each unit is written by the model or, its reply rejected, by
    extraction, and none is left not done."""
    monkeypatch.setenv("MEMCLI_MODEL_TIMEOUT", "300")
    for text in ("I adopted a dog named Rex today.", "Rex is a brown labrador and he loves the beach."):
        ok(runner.invoke(app, ["chat", "--now", "2023-05-08T10:00"], input=f"{text}\n"))
    report = json.loads(ok(runner.invoke(app, ["consolidate", "--json"])).stdout)
    assert report["path"] == "llm" and report["failed"] == 0 and report["days"] == 1
    assert set(report["written_by"]) <= {"llm", "fallback"} and sum(report["written_by"].values()) >= 3
    daily = [m for m in _memories(runner) if m["kind"] == "event_daily"]
    assert len(daily) == 1 and daily[0]["day"] == "2023-05-08"


def test_doctor_and_version_name_the_server(runner: CliRunner, served: str) -> None:
    out = ok(runner.invoke(app, ["doctor"])).stdout
    assert f"ok\tmodel listed\t{ALIAS}" in out and f"ok\tcompletion\t{ALIAS} answered a one-token completion" in out
    version = json.loads(ok(runner.invoke(app, ["version", "--json"])).stdout)
    assert version["model_server"] == served
