"""The model-server backend (``memcli.models.llm_server``) against a fake OpenAI-compatible server
(``fakes.model_server``): replies stream through it, and every way a server fails gives
exit 3 and one line naming the URL and the cause. The real server's tests are in
tests/test_model_server_real.py."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator

import pytest
from cli_checks import assert_error, ok
from fakes import model_server
from typer.testing import CliRunner

from memcli.cli import app
from memcli.errors import ExitCode, ModelServerError
from memcli.models.llm import Message
from memcli.models.llm_server import CHARS_PER_TOKEN, ServerChatModel
from memcli.transport import service

KEY = "sk-very-secret-key"


@pytest.fixture(scope="module")
def fake_server() -> Iterator[str]:
    with model_server.serving() as url:
        yield url


@pytest.fixture
def served(fake_server: str, fake_embedder: object, monkeypatch: pytest.MonkeyPatch) -> str:
    """The fake server's base URL; commands use the fake embedder and a short timeout."""
    monkeypatch.setenv("MEMCLI_MODEL_REQUEST_TIMEOUT", "1")
    monkeypatch.setenv("MEMCLI_MODEL_API_KEY_ENV", "FAKE_SERVER_KEY")
    monkeypatch.setenv("FAKE_SERVER_KEY", KEY)
    return fake_server


def test_ask_and_chat_stream_through_the_server(
    runner: CliRunner, served: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMCLI_MODEL_URL", f"{served}/ok/v1")
    assert "Hello there." in ok(runner.invoke(app, ["ask", "hi?"])).stdout
    result = ok(runner.invoke(app, ["chat"], input="hello\n"))
    assert "Hello there." in result.stdout and "(fake)" in result.stderr
    turns = [m["text"] for m in json.loads(ok(runner.invoke(app, ["list", "--json", "-n", "0"])).stdout)]
    assert "hello" in turns and "Hello there." in turns


def test_structured_asks_the_json_schema_form_first(served: str) -> None:
    model = ServerChatModel(f"{served}/ok/v1", json_format="auto")
    before = len(model_server.requests)  # the fake server is shared: other tests' requests are not this one's
    assert json.loads(model.structured([Message("user", "q")], {"type": "object"}, 16)) == {"query": "hello"}
    assert model.json_format == "json_schema"  # the fake takes either form: the first is kept
    sent = [
        body["response_format"]["type"]
        for mode, path, body in model_server.requests[before:]
        if "response_format" in body
    ]
    assert sent[-1] == "json_schema"


@pytest.mark.parametrize(
    ("mode", "cause"),
    [
        ("401", "401 unauthorized: the server refused the key (the key in $FAKE_SERVER_KEY)"),
        ("403", "403 forbidden"),
        ("404", "404 not found: the server has no model 'fake'"),
        ("500", "server error 500: fake 500"),
        ("slow", "no answer within 1 s (model_request_timeout, 2 tries)"),
        ("cut", "the connection was cut in the middle of the reply"),
        ("garbage", "its reply is not UTF-8"),
        ("badsse", "its reply is not the JSON of an OpenAI-compatible reply"),
        ("echo500", "server error 500: bad request with Authorization: Bearer [redacted]"),
    ],
)
def test_a_failing_server_gives_exit_3_and_one_line(
    runner: CliRunner, served: str, monkeypatch: pytest.MonkeyPatch, mode: str, cause: str
) -> None:
    url = f"{served}/{mode}/v1"
    monkeypatch.setenv("MEMCLI_MODEL_URL", url)
    monkeypatch.setenv("MEMCLI_MODEL_NAME", "fake")
    line = assert_error(runner.invoke(app, ["ask", "what is new?"]), ExitCode.MODEL)
    assert url in line and cause in line and KEY not in line
    stored = json.loads(ok(runner.invoke(app, ["list", "--json", "-n", "0"])).stdout)
    assert stored == []  # ask stores nothing


@pytest.mark.parametrize(
    ("url", "cause"),
    [
        ("http://127.0.0.1:{port}/v1", "connection refused"),
        ("http://memcli-no-such-host.invalid/v1", "cannot resolve the host 'memcli-no-such-host.invalid' (DNS)"),
    ],
)
def test_an_unreachable_server_gives_exit_3_and_one_line(
    runner: CliRunner, fake_embedder: object, monkeypatch: pytest.MonkeyPatch, url: str, cause: str
) -> None:
    url = url.format(port=model_server.free_port())
    monkeypatch.setenv("MEMCLI_MODEL_URL", url)
    line = assert_error(runner.invoke(app, ["ask", "what is new?"]), ExitCode.MODEL)
    assert line.startswith(f"memcli: error: model server {url}: {cause}"), line


def test_chat_keeps_the_users_turn_when_the_reply_fails(
    runner: CliRunner, served: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMCLI_MODEL_URL", f"{served}/cut/v1")
    monkeypatch.setenv("MEMCLI_MODEL_NAME", "fake")
    result = runner.invoke(app, ["chat"], input="remember the blue door\n")
    assert result.exit_code == int(ExitCode.MODEL) and "Traceback" not in result.stdout + result.stderr
    error = [line for line in result.stderr.splitlines() if line.startswith("memcli: error:")]
    assert error == [
        f"memcli: error: the reply failed (your message is stored): model server {served}/cut/v1: "
        "the connection was cut in the middle of the reply"
    ]
    texts = [m["text"] for m in json.loads(ok(runner.invoke(app, ["list", "--json", "-n", "0"])).stdout)]
    assert texts == ["remember the blue door"]


def test_consolidate_leaves_the_units_the_server_failed_not_done(
    runner: CliRunner, served: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    for day, text in (
        ("2023-05-01", "I adopted a dog named Rex today."),
        ("2023-05-02", "Rex learned to sit, I am proud of him."),
    ):
        ok(
            runner.invoke(
                app, ["chat", "--now", f"{day}T10:00"], input=f"{text}\n", env={"MEMCLI_MODEL_URL": f"{served}/ok/v1"}
            )
        )
    monkeypatch.setenv("MEMCLI_MODEL_URL", f"{served}/500/v1")
    monkeypatch.setenv("MEMCLI_MODEL_NAME", "fake")
    result = runner.invoke(app, ["consolidate", "--json"], env={"MEMCLI_CONSOLIDATION": "llm"})
    line = assert_error(result, ExitCode.MODEL)
    assert (
        f"model server {served}/500/v1: server error 500" in line
        and "not done, the next consolidate runs them again" in line
    )
    report = json.loads(result.stdout)
    assert report["failed"] >= 2 and report["summaries_written"] == 0
    assert all("server error 500" in f for f in report["failures"])
    monkeypatch.setenv("MEMCLI_MODEL_URL", f"{served}/ok/v1")
    again = json.loads(
        ok(runner.invoke(app, ["consolidate", "--json", "--dry-run"], env={"MEMCLI_CONSOLIDATION": "llm"})).stdout
    )
    assert again["days"] == 2  # not done: the next run does them


def test_the_key_is_not_shown_by_config_list_or_version(
    runner: CliRunner, served: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMCLI_MODEL_URL", f"{served}/ok/v1")
    monkeypatch.setenv("MEMCLI_MODEL_NAME", "fake")
    for args in (["config", "list"], ["config", "list", "--json"], ["version", "--json"], ["doctor", "--json"]):
        result = runner.invoke(app, args)
        assert KEY not in result.stdout + result.stderr
    version = json.loads(ok(runner.invoke(app, ["version", "--json"])).stdout)
    assert version["model_server"] == f"{served}/ok/v1" and version["chat_model"] == "fake"


def test_doctor_checks_the_server(runner: CliRunner, served: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMCLI_MODEL_URL", f"{served}/ok/v1")
    out = ok(runner.invoke(app, ["doctor"])).stdout
    assert f"ok\tserver reachable\t{served}/ok/v1: lists 1 model" in out
    assert "ok\tmodel listed\tfake" in out and "ok\tcompletion\tfake answered a one-token completion" in out
    monkeypatch.setenv("MEMCLI_MODEL_NAME", "other")
    result = ok(runner.invoke(app, ["doctor"]))
    assert "does not list 'other' (it lists: fake): set model_name to one of them" in result.stderr
    monkeypatch.setenv("MEMCLI_MODEL_URL", f"{served}/401/v1")
    assert "401 unauthorized" in ok(runner.invoke(app, ["doctor"])).stderr


def test_tls_to_a_plain_http_server_gives_exit_3_and_one_line(
    runner: CliRunner, served: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = served.replace("http:", "https:") + "/ok/v1"
    monkeypatch.setenv("MEMCLI_MODEL_URL", url)
    line = assert_error(runner.invoke(app, ["ask", "what is new?"]), ExitCode.MODEL)
    assert line.startswith(f"memcli: error: model server {url}: TLS error: "), line


def test_a_server_that_ignores_max_tokens_is_cut_at_the_reply_cap(
    runner: CliRunner, served: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMCLI_MODEL_URL", f"{served}/flood/v1")
    monkeypatch.setenv("MEMCLI_MODEL_NAME", "fake")
    monkeypatch.setenv("MEMCLI_MAX_TOKENS", "8")
    ok(runner.invoke(app, ["chat"], input="tell me everything\n"))
    stored = json.loads(ok(runner.invoke(app, ["list", "--json", "-n", "0", "--kind", "turn"])).stdout)
    replies = [m["text"] for m in stored if m["text"].startswith("word")]
    assert replies and sum(len(r) for r in replies) <= 8 * CHARS_PER_TOKEN


def test_a_reply_that_trickles_past_model_timeout_is_given_up(
    runner: CliRunner, served: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMCLI_MODEL_URL", f"{served}/trickle/v1")
    monkeypatch.setenv("MEMCLI_MODEL_NAME", "fake")
    monkeypatch.setenv("MEMCLI_MODEL_TIMEOUT", "1")
    monkeypatch.setenv("MEMCLI_MAX_TOKENS", "4096")
    line = assert_error(runner.invoke(app, ["ask", "what is new?"]), ExitCode.MODEL)
    assert f"model server {served}/trickle/v1: the reply had not finished after 1 s (model_timeout)" in line


def test_a_key_a_server_echoes_is_redacted_from_the_service_log(served: str, monkeypatch: pytest.MonkeyPatch) -> None:
    model = ServerChatModel(f"{served}/echo500/v1", "fake", "FAKE_SERVER_KEY")
    with pytest.raises(ModelServerError) as failed:
        list(model.stream([Message("user", "q")], 4, 0.0))
    assert KEY not in failed.value.message and "[redacted]" in failed.value.message
    record = logging.LogRecord("memcli.service", logging.INFO, "", 0, "ask error 3: %s", (f"x Bearer {KEY}",), None)
    assert KEY not in service._RedactingFormatter("%(message)s").format(record)
