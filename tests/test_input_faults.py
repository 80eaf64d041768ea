"""Input and concurrency faults get named errors (issue 14, item 4): a config path that is
not a readable TOML file, ``--now`` vs ``MEMCLI_NOW``, dates out of range, "already
remembered" only for a note stored before, and no model load under the store lock."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import filelock
import pytest
from cli_checks import ok
from conftest import FakeChatModel, FakeEmbedder, given_models, list_json
from typer.testing import CliRunner

from memcli.cli import app
from memcli.config import Paths, load_settings, resolve_paths
from memcli.dates import clock_from_env, parse_day, parse_since
from memcli.errors import BadInputError, ExitCode, UsageError
from memcli.formats.importers import parse_time
from memcli.library.engine import Engine
from memcli.store.store import MemoryStore
from memcli.transport.client import service_mode
from memcli.transport.resources import clock_for

RANGE = "1900-01-01 to 2200-12-31"


def one_error_line(result: Any, code: ExitCode) -> str:
    """The one stderr line of a failed command, after checking its exit code."""
    assert result.exit_code == int(code), (result.exit_code, result.stdout, result.stderr)
    assert "Traceback" not in result.stdout + result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1, lines
    return lines[0]


# 1. the config path ------------------------------------------------------------------


def config_path() -> Paths:
    paths = resolve_paths()
    paths.config_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    return paths


def test_config_path_that_is_a_directory_is_named(runner: CliRunner, fake_embedder: FakeEmbedder) -> None:
    paths = config_path()
    paths.config_file.mkdir()
    with pytest.raises(BadInputError, match="is a directory, not a file"):
        load_settings(paths, env={})
    line = one_error_line(runner.invoke(app, ["stats"]), ExitCode.BAD_INPUT)
    assert str(paths.config_file) in line and "directory" in line
    assert not paths.data_dir.exists()  # nothing was made or written


def test_config_path_that_is_a_fifo_does_not_hang() -> None:
    paths = config_path()
    os.mkfifo(paths.config_file)
    with pytest.raises(BadInputError, match="not a regular file"):
        load_settings(paths, env={})


def test_config_symlink_to_nothing_is_named() -> None:
    paths = config_path()
    paths.config_file.symlink_to(paths.config_dir / "gone.toml")
    with pytest.raises(BadInputError, match="symbolic link to nothing"):
        load_settings(paths, env={})


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads a file of mode 000")
def test_unreadable_config_file_is_named() -> None:
    paths = config_path()
    paths.config_file.write_text('user = "alice"\n')
    paths.config_file.chmod(0)
    with pytest.raises(BadInputError, match="cannot be read"):
        load_settings(paths, env={})


@pytest.mark.parametrize(
    ("content", "words"),
    [
        (b"user = [\n", "not valid TOML"),
        (b'user = "caf\xe9"\n', "not UTF-8"),
        (b"recall_k = 99\n", "recall_k"),
        (b"no_such_key = 1\n", "no_such_key: unknown setting"),
    ],
)
def test_bad_config_file_content_names_the_file(content: bytes, words: str) -> None:
    paths = config_path()
    paths.config_file.write_bytes(content)
    with pytest.raises(BadInputError) as caught:
        load_settings(paths, env={})
    assert str(paths.config_file) in caught.value.message and words in caught.value.message


def test_an_invalid_value_names_the_layer_it_came_from() -> None:
    paths = config_path()
    paths.config_file.write_text("lock_timeout = 5\n")
    with pytest.raises(BadInputError) as caught:
        load_settings(paths, env={"MEMCLI_LOCK_TIMEOUT": "-1"})
    assert caught.value.message.startswith("MEMCLI_LOCK_TIMEOUT='-1'")
    assert str(paths.config_file) not in caught.value.message


@pytest.mark.parametrize("kind", ["directory", "bad toml", "fifo", "symlink to nothing"])
def test_the_thin_client_runs_in_process_when_the_config_cannot_be_read(kind: str) -> None:
    paths = config_path()
    if kind == "directory":
        paths.config_file.mkdir()
    elif kind == "fifo":
        os.mkfifo(paths.config_file)
    elif kind == "symlink to nothing":
        paths.config_file.symlink_to(paths.config_dir / "gone.toml")
    else:
        paths.config_file.write_text("service = [\n")
    # "off": the in-process run reports the config file in one line; no service is started to refuse it
    assert service_mode(paths, {}) == "off"
    with pytest.raises(BadInputError, match=str(paths.config_file)):
        load_settings(paths, env={})


def test_invalid_settings_with_the_service_on_give_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    """The service refuses to start on an invalid value (exit 5); the client then says
    nothing of the service, and the in-process run names the config file, in one line."""
    monkeypatch.delenv("MEMCLI_SERVICE")
    paths = config_path()
    paths.config_file.write_text("recall_k = 99\n")
    try:
        done = subprocess.run(
            [sys.executable, "-m", "memcli", "stats"],
            capture_output=True,
            text=True,
            timeout=120,
            stdin=subprocess.DEVNULL,
        )
    finally:
        paths.config_file.unlink()
        subprocess.run(
            [sys.executable, "-m", "memcli", "service", "stop"],
            capture_output=True,
            timeout=60,
            stdin=subprocess.DEVNULL,
        )
    assert done.returncode == int(ExitCode.BAD_INPUT), done.stderr
    assert done.stderr.splitlines() == [
        f"memcli: error: config file {paths.config_file}: recall_k: Input should be less than or equal to 50"
    ]
    assert not paths.service_file.exists(), "no service should be left running"


def test_the_thin_client_reads_the_service_key() -> None:
    paths = config_path()
    assert service_mode(paths, {}) == "auto"
    paths.config_file.write_text('service = "off"\n')
    assert service_mode(paths, {}) == "off"


# 2. --now vs MEMCLI_NOW -----------------------------------------------------------------


def test_a_bad_now_option_is_named_as_the_option(
    runner: CliRunner, fake_embedder: FakeEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    line = one_error_line(runner.invoke(app, ["stats", "--now", "garbage"]), ExitCode.USAGE)
    assert line.startswith("memcli: error: --now:") and "MEMCLI_NOW" not in line
    monkeypatch.setenv("MEMCLI_NOW", "garbage")
    line = one_error_line(runner.invoke(app, ["stats"]), ExitCode.USAGE)
    assert "MEMCLI_NOW:" in line and "--now" not in line
    # the option wins over the variable: a good --now is used, the bad variable is not read
    assert runner.invoke(app, ["stats", "--now", "2024-05-01T10:00:00"]).exit_code == 0


def test_the_service_names_where_the_time_came_from() -> None:
    with pytest.raises(UsageError, match="^--now:"):
        clock_for({"MEMCLI_NOW": "2024-01-01"}, "garbage")
    with pytest.raises(UsageError, match="^MEMCLI_NOW:"):
        clock_for({"MEMCLI_NOW": "garbage"}, None)
    assert (
        clock_for({"MEMCLI_NOW": "garbage"}, "2024-01-01T00:00:00")()
        == clock_from_env({"MEMCLI_NOW": "2024-01-01T00:00:00"})()
    )


# 3. dates out of range ----------------------------------------------------------------


@pytest.mark.parametrize(
    "value", ["0001-01-01", "0000-01-01", "1899-12-31", "2201-01-01", "9999-12-31T23:59:59", "10000-01-01"]
)
def test_now_out_of_range_says_so(value: str, runner: CliRunner, fake_embedder: FakeEmbedder) -> None:
    with pytest.raises(UsageError, match=f"out of range.*{RANGE}"):
        clock_from_env({"MEMCLI_NOW": value}, option="--now")
    line = one_error_line(runner.invoke(app, ["remember", "a note", "--now", value]), ExitCode.USAGE)
    assert "--now" in line and "out of range" in line and RANGE in line


def test_the_range_edges_are_taken() -> None:
    assert clock_from_env({"MEMCLI_NOW": "1900-01-01T00:00:00"})() < 0
    assert clock_from_env({"MEMCLI_NOW": "2200-12-31T23:59:59"})() > 7e9


@pytest.mark.parametrize("value", ["0001-01-01", "10000-01-01", "2201-06-01"])
def test_since_and_day_out_of_range_say_so(value: str, runner: CliRunner, fake_embedder: FakeEmbedder) -> None:
    with pytest.raises(UsageError, match=f"^--since: .*out of range.*{RANGE}"):
        parse_since(value, 1.7e9)
    with pytest.raises(UsageError, match=f"^--until: .*out of range.*{RANGE}"):
        parse_day(value, "--until")
    runner.invoke(app, ["remember", "the tea is green"])
    line = one_error_line(runner.invoke(app, ["recall", "tea", "--since", value]), ExitCode.USAGE)
    assert "--since" in line and "out of range" in line
    line = one_error_line(runner.invoke(app, ["consolidate", "--since", value]), ExitCode.USAGE)
    assert "--since" in line and "out of range" in line


@pytest.mark.parametrize(
    "value", [-1e12, 1e12, 1e20, float("nan"), float("inf"), "0001-01-01T00:00:00", "10000-01-01", "1850-03-01"]
)
def test_import_timestamp_out_of_range_names_the_line(
    value: Any, tmp_path: Path, runner: CliRunner, fake_embedder: FakeEmbedder
) -> None:
    with pytest.raises(BadInputError, match=f"here: .*out of range.*{RANGE}"):
        parse_time(value, "here")
    path = tmp_path / "log.jsonl"
    good = {"role": "user", "content": "first", "timestamp": "2024-03-01T10:00:00"}
    bad = {"role": "user", "content": "second", "timestamp": value}
    path.write_text(json.dumps(good) + "\n" + json.dumps(bad) + "\n")
    line = one_error_line(runner.invoke(app, ["import", str(path)]), ExitCode.BAD_INPUT)
    assert f"{path}:2" in line and "out of range" in line and RANGE in line
    listed = runner.invoke(app, ["list", "--json"])
    assert json.loads(listed.stdout) == []  # the file is refused whole: nothing stored


def test_negative_unix_seconds_inside_the_range_are_a_time() -> None:
    assert parse_time(-86400, "here").year == 1969


# 4. "already remembered" only for a note stored before this call --------------------


def test_parallel_writers_each_store_their_new_notes(fake_embedder: FakeEmbedder) -> None:
    """Three request threads, each its own Engine over one store (as the service runs
    them; the journal tells this process's writes in flight from those left behind),
    remember distinct notes at once: each call says added."""
    paths = resolve_paths()
    settings = load_settings(paths, env={"MEMCLI_LOCK_TIMEOUT": "120"})
    store = MemoryStore(paths, settings.lock_timeout)
    results: list[tuple[str, bool]] = []
    errors: list[BaseException] = []
    start = threading.Barrier(3)

    def writer(n: int) -> None:
        engine = Engine(settings, paths, store=store, **given_models())  # type: ignore[arg-type]
        start.wait()
        try:
            for i in range(10):
                note, added = engine.remember(f"note {n}-{i}")
                results.append((note.text, added))
        except BaseException as exc:  # noqa: BLE001 -- reported by the assertion below
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    assert errors == []
    assert sorted(results) == sorted((f"note {n}-{i}", True) for n in range(3) for i in range(10))
    again = Engine(settings, paths, **given_models())  # type: ignore[arg-type]
    assert again.remember("note 1-4")[1] is False  # stored before this call: already remembered
    assert len(again.list_memories(limit=0)) == 30


PROCESS_WRITER = """
import sys
sys.path.insert(0, sys.argv[2])
from fakes.models import FakeEmbedder
from memcli.transport import local
from memcli.cli import app
local.use_models(FakeEmbedder(), None)
for i in range(10):
    try:
        app(["remember", "--json", f"note {sys.argv[1]}-{i}"])
    except SystemExit as exc:
        assert not exc.code, exc.code
"""


def test_parallel_processes_each_store_their_new_notes(memcli_home: Path) -> None:
    """Three processes (in-process mode, the fake embedder) each remember ten new notes in
    a loop, at once, through the journal and the file lock: none is "already remembered"."""
    tests = str(Path(__file__).resolve().parent)
    env = {**os.environ, "MEMCLI_LOCK_TIMEOUT": "120"}  # a busy machine is no lock fault
    processes = [
        subprocess.Popen(
            [sys.executable, "-c", PROCESS_WRITER, str(n), tests],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for n in range(3)
    ]
    added: list[bool] = []
    for process in processes:
        out, err = process.communicate(timeout=300)
        assert process.returncode == 0, err
        decoder, at = json.JSONDecoder(), 0
        while at < len(out.strip()):
            value, end = decoder.raw_decode(out, at)
            added.append(value["added"])
            at = end + 1
    assert added == [True] * 30


# 5. models load before the store is taken --------------------------------------------


def store_is_free(paths: Paths) -> bool:
    """Whether another process could take the store now (a second lock on the file)."""
    other = filelock.FileLock(str(paths.lock_file), timeout=0, is_singleton=False)
    try:
        other.acquire()
    except filelock.Timeout:
        return False
    other.release()
    return True


class LoadingEmbedder(FakeEmbedder):
    """Records whether the store was free each time it was used (a real one loads then)."""

    def __init__(self, paths: Paths) -> None:
        super().__init__()
        self.paths = paths
        self.free: list[bool] = []

    def embed(self, texts: Any, batch_size: int = 64, progress: Any = None) -> list[list[float]]:
        self.free.append(store_is_free(self.paths))
        return super().embed(texts, batch_size, progress)


class LoadingModel(FakeChatModel):
    def __init__(self, paths: Paths) -> None:
        super().__init__(["An answer."])
        self.paths = paths
        self.free: list[bool] = []

    def stream(self, messages: Any, max_tokens: int, temperature: float) -> Any:
        self.free.append(store_is_free(self.paths))
        yield from super().stream(messages, max_tokens, temperature)


def test_recall_and_ask_use_the_models_with_the_store_free() -> None:
    paths = resolve_paths()
    settings = load_settings(paths)
    embedder, model = LoadingEmbedder(paths), LoadingModel(paths)
    engine = Engine(settings, paths, embedder=embedder, chat_model=model)  # type: ignore[arg-type]
    engine.remember("I drink green tea every morning")
    engine.remember("The spare key is under the blue pot")
    assert engine.recall("what tea do I drink?", k=1)[0].memory.text.startswith("I drink green tea")
    assert engine.ask("what tea do I drink?").answer
    assert embedder.free and all(embedder.free), embedder.free
    assert model.free == [True]


# issue 25 §4: bad input is a named line with its documented code, the store unchanged ------

NOT_TEXT = [
    ("a byte that is not UTF-8", "caf\udce9 au lait", "is not valid UTF-8 (the byte 0xe9 at character 4)"),
    ("a lone surrogate", "tea \ud800", "holds a lone surrogate U+D800 (at character 5)"),
    ("a NUL", "tea\x00time", "holds a NUL character (at character 4)"),
]


@pytest.mark.parametrize(("name", "bad", "reason"), NOT_TEXT, ids=[case[0] for case in NOT_TEXT])
@pytest.mark.parametrize(
    "argv",
    [
        ["remember", "{}"],
        ["recall", "{}"],
        ["ask", "{}"],
        ["list", "--user", "{}"],
        ["edit", "0123456789abcdef", "--text", "{}"],
    ],
    ids=["remember", "recall", "ask", "--user", "edit --text"],
)
def test_text_that_is_not_text_is_bad_input_naming_the_argument(
    argv: list[str], name: str, bad: str, reason: str, runner: CliRunner, fake_model: FakeChatModel
) -> None:
    ok_id = runner.invoke(app, ["remember", "Known note"]).stdout.strip()
    argv = [a.replace("{}", bad) for a in argv]
    line = one_error_line(runner.invoke(app, argv), ExitCode.BAD_INPUT)
    assert line.startswith("memcli: error: argument '") and reason.split(" (")[0] in line
    assert [m["id"] for m in json.loads(runner.invoke(app, ["list", "--json"]).stdout)] == [ok_id]


def test_an_import_path_that_is_not_utf8_is_bad_input(
    tmp_path: Path, runner: CliRunner, fake_embedder: FakeEmbedder
) -> None:
    """A file name with a byte that is not UTF-8 (as a command line hands it over) is refused by name, existing or not."""
    path = tmp_path / "caf\udce9.txt"
    path.write_text("A note.\n")
    line = one_error_line(runner.invoke(app, ["import", str(path)]), ExitCode.BAD_INPUT)
    assert "argument 'path' is not valid UTF-8 (the byte 0xe9" in line
    assert list_json(runner) == []


def fake_cli(
    *argv: str, stdin: Any = subprocess.DEVNULL, input: bytes | None = None, close_stdin: bool = False
) -> subprocess.CompletedProcess[bytes]:
    """The real memcli command line with the fake models, in a subprocess (``close_stdin``:
    started with fd 0 closed, as ``<&-`` does)."""
    return subprocess.run(
        [sys.executable, str(Path(__file__).parent / "fakes"), "cli", "--", *argv],
        capture_output=True,
        timeout=120,
        check=False,
        stdin=None if close_stdin or input is not None else stdin,
        input=input,
        preexec_fn=(lambda: os.close(0)) if close_stdin else None,
    )


def error_lines(done: subprocess.CompletedProcess[bytes], code: ExitCode) -> str:
    """The one stderr line of a failed subprocess, after checking its exit code."""
    err = done.stderr.decode()
    assert done.returncode == int(code), (done.returncode, err)
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    return err.strip()


@pytest.mark.parametrize(
    ("argv", "stdin"),
    [
        (["remember", "-"], b"bad \xed\xa0\x80 text\n"),
        (["chat", "--quiet"], b"hi \xe9\n"),
        (["ask", "-"], b"what \xff?\n"),
    ],
    ids=["remember -", "chat", "ask -"],
)
def test_stdin_that_is_not_utf8_is_bad_input(argv: list[str], stdin: bytes, runner: CliRunner) -> None:
    assert "is not valid UTF-8" in error_lines(fake_cli(*argv, input=stdin), ExitCode.BAD_INPUT)
    # read in-process (the same home): nothing stored, not even the chat turn
    assert list_json(runner) == []


@pytest.mark.parametrize(
    "argv", [["remember", "-"], ["ask", "-"], ["chat"], ["edit", "0123456789abcdef", "--text", "-"]]
)
def test_a_closed_stdin_is_a_usage_error(argv: list[str]) -> None:
    line = error_lines(fake_cli(*argv, close_stdin=True), ExitCode.USAGE)
    assert "standard input is closed" in line


@pytest.mark.parametrize(
    ("content", "words"),
    [
        ('"a \\ud800 b"', "'content' holds a lone surrogate U+D800"),
        ('"a \\u0000 b"', "'content' holds a NUL character"),
    ],
    ids=["\\ud800", "\\u0000"],
)
def test_a_jsonl_string_that_is_not_text_names_its_line(
    content: str, words: str, tmp_path: Path, runner: CliRunner, fake_embedder: FakeEmbedder
) -> None:
    path = tmp_path / "chat.jsonl"
    good = '{"role": "user", "content": "fine", "timestamp": "2026-03-01T10:00:00"}'
    path.write_text(f'{good}\n{{"role": "user", "content": {content}, "timestamp": "2026-03-01T10:01:00"}}\n')
    line = one_error_line(runner.invoke(app, ["import", str(path)]), ExitCode.BAD_INPUT)
    assert f"{path}:2: {words}" in line
    assert list_json(runner) == []


def test_a_nul_byte_anywhere_in_a_text_file_is_binary(
    tmp_path: Path, runner: CliRunner, fake_embedder: FakeEmbedder
) -> None:
    """One NUL rule: a NUL byte past the 8 KiB the importer sniffs is refused as the one in them is."""
    path = tmp_path / "notes.txt"
    path.write_bytes(b"A first note.\n\n" + b"filler line\n" * 1000 + b"\nnul \x00 here\n")
    line = one_error_line(runner.invoke(app, ["import", str(path)]), ExitCode.BAD_INPUT)
    assert "binary file, not text" in line and f"{path}:" in line
    assert list_json(runner) == []


def test_an_export_string_that_is_not_text_is_refused(
    tmp_path: Path, runner: CliRunner, fake_embedder: FakeEmbedder
) -> None:
    ok(runner.invoke(app, ["remember", "Known note"]))
    path = tmp_path / "out.jsonl"
    ok(runner.invoke(app, ["export", "--output", str(path)]))
    lines = path.read_text().splitlines()
    record = json.loads(lines[1])
    record["text"] = "lone \ud800"
    lines[1] = json.dumps(record)
    path.write_text("\n".join(lines) + "\n")
    ok(runner.invoke(app, ["delete", record["id"], "--yes"]))
    line = one_error_line(runner.invoke(app, ["import", str(path)]), ExitCode.BAD_INPUT)
    assert "'text' holds a lone surrogate U+D800" in line


def list_json(runner: CliRunner) -> list[dict[str, Any]]:
    done = runner.invoke(app, ["list", "--json", "-n", "0"])
    assert done.exit_code == 0, done.stderr
    return json.loads(done.stdout)


def strengths(runner: CliRunner) -> dict[str, float]:
    return {m["id"]: m["strength"] for m in list_json(runner)}


def test_an_over_long_question_is_refused_before_recall(
    runner: CliRunner, fake_model: FakeChatModel, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memcli.recall.assistant import question_chars

    monkeypatch.setenv("MEMCLI_ANSWERS", "llm")
    ok(runner.invoke(app, ["remember", "I drink tea in the morning"]))
    before = strengths(runner)
    long = "what do I drink " * (question_chars(4096) // 16 + 1)
    line = one_error_line(runner.invoke(app, ["ask", "-"], input=long), ExitCode.BAD_INPUT)
    assert f"takes at most {question_chars(4096):,}" in line
    assert strengths(runner) == before and fake_model.prompts == []
    line = one_error_line(runner.invoke(app, ["chat", "--quiet"], input=long + "\n"), ExitCode.BAD_INPUT)
    assert "the message is" in line
    assert strengths(runner) == before and len(list_json(runner)) == 1  # no turn stored


def test_a_failed_answer_reinforces_nothing_and_a_good_one_does(
    runner: CliRunner, fake_model: FakeChatModel, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMCLI_ANSWERS", "llm")
    ok(runner.invoke(app, ["remember", "I drink tea in the morning"]))
    before = strengths(runner)
    fake_model.replies = ["  "]  # an empty reply is a ModelError
    one_error_line(runner.invoke(app, ["ask", "what do I drink in the morning?"]), ExitCode.MODEL)
    assert strengths(runner) == before
    fake_model.replies = ["Tea."]
    ok(runner.invoke(app, ["ask", "what do I drink in the morning?"]))
    assert all(strengths(runner)[i] > s for i, s in before.items())


def test_a_prompt_over_the_context_window_is_bad_input() -> None:
    """llama.cpp's ValueError "Requested tokens (N) exceed context window of M" becomes a BadInputError."""
    from memcli.models.llm import LlamaCppModel, Message

    class Llama:
        def create_chat_completion(self, **_: Any) -> Any:
            raise ValueError("Requested tokens (180233) exceed context window of 4096")

    model = LlamaCppModel.__new__(LlamaCppModel)
    model.uses_chat_template, model._llama = True, Llama()
    model._enders = []  # the stand-in has no vocabulary: no token is kept from being the first
    with pytest.raises(BadInputError, match="does not fit the chat model's context: Requested tokens"):
        list(model.stream([Message("user", "x")], 8, 0.0))


def _raw_request(paths: Paths, verb: str, args: dict[str, Any]) -> dict[str, Any]:
    """One request to the service as any socket client may send it (JSON with \\u escapes),
    and its last event (result or error)."""
    from memcli import __version__
    from memcli.transport.client import PROTOCOL, ServiceClient

    connection = ServiceClient(paths).connect()
    assert connection is not None
    with connection:
        connection.send_bytes(
            json.dumps({"verb": verb, "args": args, "env": {}, "version": __version__, "protocol": PROTOCOL}).encode()
        )
        while True:
            event = json.loads(connection.recv_bytes())
            if event.get("event") in ("result", "error"):
                return event


def test_the_service_validates_every_request_before_it_runs(memcli_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Over the socket: wrong types, ``tags: "abc"`` and text that is not text are each one
    error of the documented code (2 usage, 5 bad input), and nothing is stored."""
    from test_service import FakeService

    monkeypatch.delenv("MEMCLI_SERVICE")
    paths = resolve_paths()
    service = FakeService(paths)
    try:
        cases = [
            ({"text": "x", "tags": "abc"}, ExitCode.USAGE, "argument 'tags'"),
            ({"text": 5}, ExitCode.USAGE, "argument 'text'"),
            ({"text": "x", "importance": "high"}, ExitCode.USAGE, "argument 'importance'"),
            ({"text": "x", "importance": 7}, ExitCode.USAGE, "--importance must be between 0 and 1"),
            ({"text": "x", "user": ["a"]}, ExitCode.USAGE, "argument 'user'"),
            ({"text": "lone \ud800"}, ExitCode.BAD_INPUT, "argument 'text' holds a lone surrogate U+D800"),
            ({"text": "nul \x00"}, ExitCode.BAD_INPUT, "argument 'text' holds a NUL character"),
        ]
        for args, code, words in cases:
            event = _raw_request(paths, "remember", args)
            assert event["event"] == "error" and event["code"] == int(code) and words in event["message"], (args, event)
        assert _raw_request(paths, "list", {})["data"] == []
    finally:
        service.close()
