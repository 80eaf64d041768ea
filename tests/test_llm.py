"""The llama.cpp backend's checks and prompt rendering (no model is loaded here)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memcli.cli import app
from memcli.errors import ExitCode, Interrupted, ModelError
from memcli.models.llm import (
    COMPLETION_STOPS,
    EVAL_STEP,
    TEMPLATES_MEMO,
    Message,
    chat_template_known,
    check_gguf,
    complete,
    load_chat_model,
    render_completion_prompt,
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
def test_a_stop_ends_the_prompt_evaluation_between_two_steps(tmp_path: Path) -> None:
    """Ctrl-C through the service: the model asks its stop test between steps of the
    prompt's evaluation, so a long prompt stops before its first token, and the model
    answers the next prompt as usual."""
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
