"""What a chat model writes is shown cleaned (``memcli.recall.assistant.ReplyCleaner``): a line
copied in the shape of the prompt's memory lines (a date and a speaker) is never a reply, a
cited id that is not among the recalled memories is dropped, and an empty reply says why."""

from __future__ import annotations

from typing import Any

import pytest
from cli_checks import ok
from conftest import list_json
from typer.testing import CliRunner

from memcli.cli import app
from memcli.memory import Memory
from memcli.recall.assistant import ReplyCleaner, clean_reply


def _memory(memory_id: str) -> Memory:
    return Memory(id=memory_id, user="tester", kind="note", text="x", created_at=0.0, day="2023-05-08")


def _streamed(text: str, size: int, memories: list[Memory]) -> str:
    cleaner, out = ReplyCleaner(memories), ""
    for start in range(0, len(text), size):
        out += cleaner.feed(text[start : start + size])
        if cleaner.ended:
            return out.strip()
    return (out + cleaner.finish()).strip()


@pytest.mark.parametrize(
    ("written", "shown"),
    [
        ("2018-3-9 demo: I was working in a small studio.", ""),
        ("[3fa2b1c9] 2023-05-08 assistant: It was in May.", "It was in May."),
        ("2023-05-08 Maya: hi\nIt was in May.", "It was in May."),
        ("It was in May.\n2023-05-09 demo: and then what?", "It was in May."),
        ("You began in May [3fa2b1c9], then stopped [52a64b1].", "You began in May [3fa2b1c9], then stopped."),
        ("See [3fa2] and [12ab] or [not an id].", "See [3fa2] and or [not an id]."),
        ("On 2023-05-08 you said so.", "On 2023-05-08 you said so."),
    ],
)
def test_a_reply_is_shown_without_transcript_lines_or_unknown_citations(written: str, shown: str) -> None:
    memories = [_memory("3fa2b1c9d0e1f2a3")]
    assert clean_reply(written, memories) == shown
    for size in (1, 2, 5):  # streamed in pieces of any size, the same
        assert _streamed(written, size, memories) == shown


def test_chat_never_shows_a_copied_transcript_line_and_says_why_the_reply_is_empty(
    runner: CliRunner, fake_model: Any
) -> None:
    fake_model.replies = ["2018-3-9 tester: I was working in a small studio."]
    result = ok(runner.invoke(app, ["chat"], input="Where did I work?\n/exit\n"))
    assert "2018-3-9" not in result.stdout and "small studio" not in result.stdout
    assert "no reply:" in result.stderr and "transcript line" in result.stderr
    assert [t["speaker"] for t in list_json(runner, "--kind", "turn")] == ["tester"]


def test_an_empty_reply_says_why(runner: CliRunner, fake_model: Any) -> None:
    fake_model.replies = [""]
    result = ok(runner.invoke(app, ["chat"], input="hello\n/exit\n"))
    assert "no reply:" in result.stderr and "empty reply" in result.stderr


def test_chat_drops_a_cited_id_that_is_not_a_recalled_memory(runner: CliRunner, fake_model: Any) -> None:
    note = ok(runner.invoke(app, ["remember", "My dog is called Rex"])).stdout.strip()
    fake_model.replies = [f"Your dog is Rex [{note[:8]}] and your cat is Tom [52a64b1]."]
    result = ok(runner.invoke(app, ["chat"], input="What is my dog called?\n/exit\n"))
    assert f"[{note[:8]}]" in result.stdout
    assert "52a64b1" not in result.stdout
    stored = [t["text"] for t in list_json(runner, "--kind", "turn") if t["speaker"] == "assistant"]
    assert stored == [f"Your dog is Rex [{note[:8]}] and your cat is Tom."]


def test_a_sampled_reply_that_comes_out_empty_is_sampled_once_more(runner: CliRunner, fake_model: Any) -> None:
    """The model's first draw ended its turn at once (an empty reply): the reply is drawn
    again from the same prompt, and the second draw is shown and stored, with no "no reply"."""
    fake_model.replies = ["", "I remember the pottery class.", "Fine."]
    result = ok(runner.invoke(app, ["chat"], input="Do you remember my class?\n/exit\n"))
    assert "I remember the pottery class." in result.stdout and "no reply" not in result.stderr
    assert len(fake_model.prompts) == 2 and fake_model.prompts[0] == fake_model.prompts[1]
    stored = [t["text"] for t in list_json(runner, "--kind", "turn") if t["speaker"] == "assistant"]
    assert stored == ["I remember the pottery class."]


def test_a_reply_empty_twice_says_so_and_a_greedy_one_is_not_drawn_again(
    runner: CliRunner, fake_model: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two empty draws: the person is told the reply was empty twice and why; at
    temperature 0 a second draw would repeat the first, so there is one."""
    fake_model.replies = [""]
    result = ok(runner.invoke(app, ["chat"], input="hello\n/exit\n"))
    assert "no reply:" in result.stderr and "empty reply twice" in result.stderr
    assert len(fake_model.prompts) == 2
    monkeypatch.setenv("MEMCLI_TEMPERATURE", "0")
    fake_model.prompts.clear()
    result = ok(runner.invoke(app, ["chat"], input="hello again\n/exit\n"))
    assert "no reply:" in result.stderr and "empty reply (" in result.stderr
    assert len(fake_model.prompts) == 1
