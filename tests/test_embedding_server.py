"""Embeddings from a server (``memcli.models.embedding_server``) against the fake OpenAI-compatible
server (``fakes.model_server``): memories and queries are embedded through it in batches,
as unit vectors; the store's embedder identity covers it (exit 8 until ``memcli reindex``,
both ways); every way the server fails gives exit 3 and one line naming the URL and the
cause. The real server's test is tests/test_embedding_server_real.py."""

from __future__ import annotations

import json
import math
from collections.abc import Iterator

import pytest
from cli_checks import assert_error, ok
from conftest import Given, list_json
from fakes import model_server
from fakes.models import FakeEmbedder
from typer.testing import CliRunner

from memcli.cli import app
from memcli.errors import ExitCode, ModelServerError
from memcli.models.embedding import same_embedder
from memcli.models.embedding_server import ServerEmbedder, server_identity

KEY = "sk-very-secret-embedding-key"


@pytest.fixture(scope="module")
def fake_server() -> Iterator[str]:
    with model_server.serving() as url:
        yield url


@pytest.fixture
def served(fake_server: str, monkeypatch: pytest.MonkeyPatch) -> str:
    """The fake server's base URL; commands embed through it with a short timeout and a key."""
    monkeypatch.setenv("MEMCLI_EMBEDDER_REQUEST_TIMEOUT", "0.5")
    monkeypatch.setenv("MEMCLI_EMBEDDER_API_KEY_ENV", "FAKE_EMBEDDING_KEY")
    monkeypatch.setenv("FAKE_EMBEDDING_KEY", KEY)
    return fake_server


def _recalled(runner: CliRunner, query: str) -> list[str]:
    return [m["text"] for m in json.loads(ok(runner.invoke(app, ["recall", query, "--json"])).stdout)]


def test_memories_and_queries_are_embedded_through_the_server(
    runner: CliRunner, served: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = f"{served}/ok/v1"
    monkeypatch.setenv("MEMCLI_EMBEDDER_URL", url)
    before = len(model_server.requests)  # the fake server is shared: other tests' requests are not this one's
    ok(runner.invoke(app, ["remember", "My sister Ana lives in Lisbon."]))
    ok(runner.invoke(app, ["remember", "The red bicycle has a flat tyre."]))
    assert _recalled(runner, "where does my sister Ana live")[0] == "My sister Ana lives in Lisbon."
    sent = [body for mode, path, body in model_server.requests[before:] if mode == "ok" and path == "/v1/embeddings"]
    assert sent and all(body["model"] == "fake" and body["encoding_format"] == "float" for body in sent)
    assert any(
        body["input"] == ["where does my sister Ana live"] for body in sent
    )  # the query, through the same endpoint
    stats = json.loads(ok(runner.invoke(app, ["stats", "--json"])).stdout)
    assert stats["embedder"] == stats["embedder_configured"] == f"server:fake@{model_server.DIMENSION}"


def test_texts_go_in_batches_and_come_back_unit_length_in_order(served: str) -> None:
    embedder = ServerEmbedder(f"{served}/ok/v1", "fake")
    before = len(model_server.requests)
    texts = [f"text number {i}" for i in range(7)]
    done: list[tuple[int, int]] = []
    vectors = embedder.embed(texts, batch_size=3, progress=lambda n, total: done.append((n, total)))
    assert [len(body["input"]) for _, path, body in model_server.requests[before:] if path == "/v1/embeddings"] == [
        3,
        3,
        1,
    ]
    assert done == [(3, 7), (6, 7), (7, 7)]
    assert all(math.isclose(sum(x * x for x in v), 1.0) for v in vectors)
    assert vectors[4] == embedder.embed_one("text number 4")
    assert embedder.identity == f"server:fake@{model_server.DIMENSION}"


def test_the_identity_names_the_model_and_dimension_not_the_url() -> None:
    assert server_identity("bge-m3:latest", 1024) == server_identity("bge-m3", 1024) == "server:bge-m3@1024"
    assert same_embedder("server:bge-m3@1024", "server:bge-m3@1024")
    assert not same_embedder("server:bge-m3@1024", "server:other@1024")  # the dimension alone is not the model
    assert not same_embedder("server:bge-m3@1024", "all-MiniLM-L6-v2@6a7116b844a2")


def test_switching_to_the_server_and_back_asks_for_a_reindex(
    runner: CliRunner, served: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    stand_in = FakeEmbedder()
    Given.set(stand_in, None)  # the store is made by another embedder
    ok(runner.invoke(app, ["remember", "My sister Ana lives in Lisbon."]))
    Given.set(None, None)
    monkeypatch.setenv("MEMCLI_EMBEDDER_URL", f"{served}/ok/v1")
    line = assert_error(runner.invoke(app, ["recall", "sister"]), ExitCode.EMBEDDER_CHANGED)
    assert (
        "embedded by FakeEmbedder" in line
        and f"server:fake@{model_server.DIMENSION}" in line
        and "memcli reindex" in line
    )
    assert (
        "re-embedded 1 memories of 1 users with server:fake@32 (was FakeEmbedder)"
        in ok(runner.invoke(app, ["reindex"])).stdout
    )
    assert _recalled(runner, "sister Ana") == ["My sister Ana lives in Lisbon."]
    monkeypatch.setenv("MEMCLI_EMBEDDER_NAME", "other")  # another model of the same dimension
    assert "server:other@32" in assert_error(runner.invoke(app, ["recall", "sister"]), ExitCode.EMBEDDER_CHANGED)
    monkeypatch.delenv("MEMCLI_EMBEDDER_NAME")
    monkeypatch.setenv(
        "MEMCLI_EMBEDDER_URL", f"{served.replace('127.0.0.1', 'localhost')}/ok/v1"
    )  # the same model elsewhere
    assert _recalled(runner, "sister Ana") == ["My sister Ana lives in Lisbon."]
    Given.set(stand_in, None)  # back
    assert "memcli reindex" in assert_error(runner.invoke(app, ["recall", "sister"]), ExitCode.EMBEDDER_CHANGED)
    assert "with FakeEmbedder (was server:fake@32)" in ok(runner.invoke(app, ["reindex"])).stdout
    assert _recalled(runner, "sister Ana") == ["My sister Ana lives in Lisbon."]


@pytest.mark.parametrize(
    ("mode", "cause"),
    [
        ("401", "401 unauthorized: the server refused the key (the key in $FAKE_EMBEDDING_KEY)"),
        ("403", "403 forbidden: the server refused the key (the key in $FAKE_EMBEDDING_KEY)"),
        (
            "404",
            "404 not found: the server has no model 'fake' (embedder_name), or the URL is not its OpenAI base URL (often ending in /v1)",
        ),
        ("500", "server error 500: fake 500"),
        ("slow", "no answer within 0.5 s (embedder_request_timeout, 3 tries)"),
        ("cut", "the connection was cut in the middle of the reply"),
        ("tokens", "fake did not answer one vector of numbers per text: set embedder_name to an embedding model"),
    ],
)
def test_a_failing_server_gives_exit_3_and_one_line(
    runner: CliRunner, served: str, monkeypatch: pytest.MonkeyPatch, mode: str, cause: str
) -> None:
    url = f"{served}/{mode}/v1"
    monkeypatch.setenv("MEMCLI_EMBEDDER_URL", url)
    monkeypatch.setenv("MEMCLI_EMBEDDER_NAME", "fake")
    line = assert_error(runner.invoke(app, ["remember", "The blue door is at number 4."]), ExitCode.MODEL)
    assert line == f"memcli: error: embedding server {url}: {cause}" and KEY not in line


def test_a_failed_note_waits_in_the_journal_and_is_stored_when_the_server_answers(
    runner: CliRunner, served: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMCLI_EMBEDDER_URL", f"{served}/401/v1")
    monkeypatch.setenv("MEMCLI_EMBEDDER_NAME", "fake")
    assert_error(runner.invoke(app, ["remember", "The blue door is at number 4."]), ExitCode.MODEL)
    assert "embedding server" in assert_error(
        runner.invoke(app, ["recall", "blue door"]), ExitCode.MODEL
    )  # the query too
    assert list_json(runner) == []  # list goes on without the note
    monkeypatch.setenv("MEMCLI_EMBEDDER_URL", f"{served}/ok/v1")
    assert _recalled(runner, "blue door") == ["The blue door is at number 4."]


@pytest.mark.parametrize(
    ("url", "cause"),
    [
        ("http://127.0.0.1:{port}/v1", "connection refused (is the server running?)"),
        ("http://memcli-no-such-host.invalid/v1", "cannot resolve the host 'memcli-no-such-host.invalid' (DNS)"),
        ("https://127.0.0.1:{served_port}/ok/v1", "TLS error: "),
    ],
)
def test_an_unreachable_server_gives_exit_3_and_one_line(
    runner: CliRunner, served: str, monkeypatch: pytest.MonkeyPatch, url: str, cause: str
) -> None:
    url = url.format(port=model_server.free_port(), served_port=served.rpartition(":")[2])
    monkeypatch.setenv("MEMCLI_EMBEDDER_URL", url)
    line = assert_error(runner.invoke(app, ["remember", "The blue door is at number 4."]), ExitCode.MODEL)
    assert line.startswith(f"memcli: error: embedding server {url}: {cause}"), line


def test_doctor_version_and_config_name_the_server_never_the_key(
    runner: CliRunner, served: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = f"{served}/ok/v1"
    monkeypatch.setenv("MEMCLI_EMBEDDER_URL", url)
    out = ok(runner.invoke(app, ["doctor"])).stdout
    assert f"ok\tembedding server reachable\t{url}: lists 1 model" in out and "ok\tembedder listed\tfake" in out
    assert (
        f"ok\tembedding\tfake embedded a text in {model_server.DIMENSION} dimensions (identity server:fake@32)" in out
    )
    version = json.loads(ok(runner.invoke(app, ["version", "--json"])).stdout)
    assert version["embedding_server"] == url and version["embedder"] == "" and version["embedder_package"] is None
    for args in (["config", "list"], ["config", "list", "--json"], ["version", "--json"], ["doctor", "--json"]):
        result = runner.invoke(app, args)
        assert KEY not in result.stdout + result.stderr
    monkeypatch.setenv("MEMCLI_EMBEDDER_NAME", "other")
    assert (
        "does not list 'other' (it lists: fake): set embedder_name to one of them"
        in ok(runner.invoke(app, ["doctor"])).stderr
    )
    monkeypatch.delenv("MEMCLI_EMBEDDER_NAME")
    monkeypatch.setenv("MEMCLI_EMBEDDER_URL", f"{served}/tokens/v1")
    assert "did not answer one vector of numbers per text" in ok(runner.invoke(app, ["doctor"])).stderr
    monkeypatch.setenv("MEMCLI_EMBEDDER_URL", f"{served}/401/v1")
    assert "401 unauthorized" in ok(runner.invoke(app, ["doctor"])).stderr


def test_a_reply_that_is_not_utf8_json_is_a_server_error_naming_it(served: str) -> None:
    embedder = ServerEmbedder(f"{served}/garbage/v1", "fake")
    with pytest.raises(ModelServerError, match=rf"embedding server {served}/garbage/v1: its reply is not UTF-8"):
        embedder.embed(["hello"])
