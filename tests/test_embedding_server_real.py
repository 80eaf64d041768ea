"""Embeddings from a real OpenAI-compatible server: llama-cpp-python's own
(``python -m llama_cpp.server --embedding true``, the ``[server]`` extra) serving the
packaged Gemma 3 270M GGUF's mean-pooled embeddings (``fakes.llama_server``, ``pooled``)
on 127.0.0.1, started once per test session (per xdist worker) and always stopped.
``remember``, ``recall`` and ``reindex`` run end to end through the CLI with
``MEMCLI_EMBEDDER_URL``. The failure cases are in tests/test_embedding_server.py (a fake
server)."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from cli_checks import assert_error, ok
from conftest import Given
from fakes import llama_server
from fakes.models import FakeEmbedder
from typer.testing import CliRunner

from memcli.cli import app
from memcli.errors import ExitCode
from memcli.models.llm import default_model_path

pytestmark = pytest.mark.integration

ALIAS = "gemma-embed"
DIMENSION = 640
"""Gemma 3 270M's hidden size: the length of its pooled embeddings."""
IDENTITY = f"server:{ALIAS}@{DIMENSION}"
NOTES = ("My sister Ana lives in Lisbon.", "I bought a red bicycle yesterday.")


@pytest.fixture(scope="session")
def embedding_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The base URL of llama-cpp-python's server embedding with the packaged GGUF."""
    pytest.importorskip("llama_cpp.server", reason="the llama-cpp-python[server] extra is not installed")
    model = default_model_path(tmp_path_factory.mktemp("models"))
    log = tmp_path_factory.mktemp("embedding-server") / "server.log"
    with llama_server.serving(model, ALIAS, log, "--embedding", "true", "--n_ctx", "2048", pooled=True) as url:
        yield url


def _recalled(runner: CliRunner, query: str) -> list[str]:
    return [m["text"] for m in json.loads(ok(runner.invoke(app, ["recall", query, "--json"])).stdout)]


def test_remember_recall_and_reindex_through_the_server(
    runner: CliRunner, embedding_server: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A store made by another embedder is refused (exit 8) until reindexed through the
    server; then notes are embedded and queries answered through it. (The server embeds
    about 25 tokens a second on a busy 2-core machine: few and short texts; switching back
    is tests/test_embedding_server.py's.)"""
    Given.set(FakeEmbedder(), None)  # the store is first made by another embedder
    ok(runner.invoke(app, ["remember", NOTES[0]]))
    Given.set(None, None)
    monkeypatch.setenv("MEMCLI_EMBEDDER_URL", embedding_server)
    monkeypatch.setenv("MEMCLI_EMBEDDER_REQUEST_TIMEOUT", "120")
    line = assert_error(runner.invoke(app, ["recall", "sister"]), ExitCode.EMBEDDER_CHANGED)
    assert (
        f"embedded by FakeEmbedder, but the embedder settings (embedder, embedder_url) name {IDENTITY}: run memcli reindex"
        in line
    )
    assert (
        f"re-embedded 1 memories of 1 users with {IDENTITY} (was FakeEmbedder)"
        in ok(runner.invoke(app, ["reindex"])).stdout
    )
    ok(runner.invoke(app, ["remember", NOTES[1]]))
    assert _recalled(runner, "sister Ana")[0] == NOTES[0]
    stats = json.loads(ok(runner.invoke(app, ["stats", "--json"])).stdout)
    assert stats["embedder"] == stats["embedder_configured"] == IDENTITY and stats["memories"] == 2


def test_doctor_checks_the_embedding_server(
    runner: CliRunner, embedding_server: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMCLI_EMBEDDER_URL", embedding_server)
    out = ok(runner.invoke(app, ["doctor"])).stdout
    assert f"ok\tembedder listed\t{ALIAS}" in out
    assert f"ok\tembedding\t{ALIAS} embedded a text in {DIMENSION} dimensions (identity {IDENTITY})" in out
