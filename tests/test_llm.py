"""The llama.cpp backend's checks and prompt rendering (no model is loaded here)."""

from __future__ import annotations

from pathlib import Path

import pytest

from memcli.cli import app
from memcli.errors import ExitCode, ModelError
from memcli.models.llm import COMPLETION_STOPS, Message, check_gguf, complete, load_chat_model, render_completion_prompt


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
