"""A base model cannot pollute memory (issue 22, item 3): its replies end with its turn,
are stored marked ``base-model``, never become facts, summary lines or portraits, and are
recalled below what the user said unless the question is about what the assistant said.
Requests and questions are never facts."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from cli_checks import ok
from test_consolidate import DAY1, USER, day_turns, make_memcli, stored
from typer.testing import CliRunner

from memcli.cli import app
from memcli.memory import BASE_MODEL, Kind, Memory
from memcli.models.llm import LlamaCppModel, Message, cut_at_turn_end
from memcli.text.extractive import facts_of, is_request_or_question


def cut(*pieces: str) -> str:
    return "".join(cut_at_turn_end(iter(pieces)))


@pytest.mark.parametrize(
    ("pieces", "reply"),
    [
        (("When am I flying", " to Tokyo?\n", "default", ": On 14 February."), "When am I flying to Tokyo?"),
        (("On 14 February.\n", "Sam:", " and then"), "On 14 February."),
        (("Sure.", "\n\n", "More rambling"), "Sure."),
        (("Sure.\n", "  \n", "More"), "Sure."),
        (("User :", " hello"), "User : hello"),  # the first line is the reply itself
        (
            ("One line.\nA second line that goes on and on, well past any name", " and ends."),
            "One line.\nA second line that goes on and on, well past any name and ends.",
        ),
    ],
)
def test_a_reply_ends_at_the_next_speaker_line_or_a_blank_line(pieces: tuple[str, ...], reply: str) -> None:
    assert cut(*pieces) == reply


def test_a_line_that_may_be_a_speaker_is_held_back_until_it_is_known() -> None:
    stream = cut_at_turn_end(iter(["Hello there", " friend.\n", "Sa", "m", ": hi", " more"]))
    assert list(stream) == ["Hello there", " friend."]


class _Llama:
    """A llama.cpp stand-in whose completion stream records how far it was read."""

    metadata: dict[str, str] = {}

    def __init__(self, pieces: list[str]) -> None:
        self.pieces = pieces
        self.read = 0
        self.closed = False
        self.stop: list[str] = []

    def create_completion(self, prompt: str, stop: list[str], **kwargs: Any) -> Iterator[dict[str, Any]]:
        self.stop = stop
        try:
            for piece in self.pieces:
                self.read += 1
                yield {"choices": [{"text": piece}]}
        finally:
            self.closed = True


def test_generation_stops_when_the_turn_ends_not_at_max_tokens() -> None:
    model = LlamaCppModel.__new__(LlamaCppModel)
    model.uses_chat_template = False
    model._llama = _Llama(["On 14 February.", "\n", "default", ": When", " am I", *["x"] * 200])
    model._enders = []  # the stand-in has no vocabulary: no token is kept from being the first
    reply = "".join(model.stream([Message("user", "When am I flying to Tokyo?")], 256, 0.7))
    assert reply == "On 14 February."
    assert model._llama.read == 4 and model._llama.closed  # nothing generated past the speaker line
    assert "\n\n" in model._llama.stop and "\nUser:" in model._llama.stop


def test_chat_on_a_base_model_says_so_once_and_marks_its_replies(runner: CliRunner, fake_model: Any) -> None:
    fake_model.uses_chat_template = False
    fake_model.replies = ["I know you have a birthday on the 31st."]
    result = ok(runner.invoke(app, ["chat"], input="Hello\nMy sister's birthday is on 4 March\n"))
    assert result.stderr.count("small base model") == 1 and "Using a better GGUF" in result.stderr
    turns = json.loads(ok(runner.invoke(app, ["list", "--kind", "turn", "--json"])).stdout)
    assert {tuple(t["tags"]) for t in turns if t["speaker"] == "assistant"} == {(BASE_MODEL,)}
    assert all(t["tags"] == [] for t in turns if t["speaker"] != "assistant")


def test_chat_on_a_chat_model_neither_warns_nor_marks(runner: CliRunner, fake_model: Any) -> None:
    result = ok(runner.invoke(app, ["chat"], input="Hello\n"))
    assert "base model" not in result.stderr
    turns = json.loads(ok(runner.invoke(app, ["list", "--kind", "turn", "--json"])).stdout)
    assert all(t["tags"] == [] for t in turns)


INVENTED = "I know you have a wonderful birthday on the 31st of October every single year."


def marked(turns: list[Memory]) -> list[Memory]:
    for t in turns:
        if t.speaker == "assistant":
            t.tags = [BASE_MODEL]
    return turns


def test_a_base_models_reply_is_never_a_fact_a_summary_line_or_a_portrait(fake_model: Any) -> None:
    fake_model.responder = lambda task, content: pytest.fail("the model consolidates nothing here")
    engine = make_memcli(consolidation="extractive")
    engine.add_memories(
        marked(
            day_turns(
                [
                    ("Ana", "I love hiking in the mountains near Lyon every weekend."),
                    ("assistant", INVENTED),
                    ("Ana", "My sister Mila has her birthday on the 4th of March."),
                    ("assistant", "I love telling long stories about the sea and about my own birthday parties."),
                ],
                DAY1,
                "s1",
            )
        )
    )
    engine.consolidate(USER)
    written = [m for m in stored(engine) if m.kind != Kind.TURN.value]
    assert written and any("Mila" in m.text for m in written)
    for memory in written:
        assert "31st" not in memory.text and "sea" not in memory.text, (memory.kind, memory.text)


def test_the_model_never_summarises_a_base_models_reply(fake_model: Any) -> None:
    contents: list[str] = []

    def responder(task: str, content: str) -> str:
        contents.append(content)
        return json.dumps(
            {"summary": "Ana loves hiking near Lyon."}
            if task == "summary"
            else {"portrait": "Ana loves hiking near Lyon."}
            if task == "portrait"
            else {"memory": ["Ana loves hiking near Lyon."]}
            if task == "memory"
            else {"facts": []}
        )

    fake_model.responder = responder
    engine = make_memcli(consolidation="llm")
    engine.add_memories(
        marked(day_turns([("Ana", "I love hiking near Lyon every weekend."), ("assistant", INVENTED)], DAY1, "s1"))
    )
    engine.consolidate(USER)
    material = [c for c in contents if "Earlier messages" not in c and "New messages" not in c]
    assert material and all("31st" not in c for c in material)


def test_a_base_models_reply_ranks_below_what_the_user_said_unless_asked_what_it_said(fake_model: Any) -> None:
    engine = make_memcli()
    engine.remember("Sister's birthday: 4 March", USER)
    engine.add_memories(
        marked(
            day_turns(
                [
                    ("Ana", "Hello there, how are things today?"),
                    ("assistant", "I know you have a birthday on the 31st."),
                ],
                DAY1,
                "s1",
            )
        )
    )
    assert engine.recall("birthday", USER, k=2)[0].memory.text == "Sister's birthday: 4 March"
    assert engine.recall("What did you say about my birthday?", USER, k=2)[0].memory.speaker == "assistant"


@pytest.mark.parametrize(
    "sentence",
    [
        "Tell me a long story about it.",
        "Please remind me to call my sister Ana tomorrow.",
        "Give me three tips for sleeping better.",
        "Can you recommend a good book for my trip",
        "When am I flying to Tokyo with my team",
        "Do you remember my sister's birthday",
        "请帮我写一首关于我家小狗的诗。",
        "告诉我我的狗叫什么名字。",
        "我的狗叫什么名字呢",
        "我明天要去上海出差吗",
        "提醒我一下房东电话是多少",
        "我的车停在哪了",
    ],
)
def test_requests_and_questions_are_never_facts(sentence: str) -> None:
    assert is_request_or_question(sentence)
    turn = Memory(id="t1", user=USER, kind="turn", text=sentence, created_at=0.0, day=DAY1, speaker="Ana")
    assert facts_of([turn], {"Ana"}) == []


@pytest.mark.parametrize(
    "sentence",
    [
        "When I was young I loved hiking with my dad.",
        "I love hiking in the mountains on weekends.",
        "Will and I went hiking last week.",
        "我最近开始学习弹钢琴了。",
        "今天吃了什么都忘了",
        "车停在B2层C区45号",
    ],
)
def test_statements_that_look_like_questions_or_requests_are_still_statements(sentence: str) -> None:
    assert not is_request_or_question(sentence)
