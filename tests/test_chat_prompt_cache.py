"""A chat reply starts fast on a local model: each prompt starts with the whole previous one
(the memories an earlier message brought stay with it), so llama.cpp evaluates only the
previous reply and the new message; a prompt of another kind between two turns (the
session summary, a structured task) does not throw the conversation's evaluated state
away; and a Ctrl-C while the service waits for the model or streams stops the reply."""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from cli_checks import handled
from conftest import Given, list_json
from fakes.models import FakeChatModel
from typer.testing import CliRunner

from memcli.cli import app
from memcli.errors import Interrupted
from memcli.models.llm import Message, complete, load_chat_model, render_completion_prompt
from memcli.transport.resources import ModelGate, SharedChatModel


def chat_prompts(model: Any) -> list[list[Message]]:
    """The chat prompts ``model`` was given (not the summaries or structured tasks)."""
    return [p for p in model.prompts if p[0].role == "system" and "memcli" in p[0].content]


def test_each_chat_prompt_starts_with_the_whole_previous_prompt(runner: CliRunner, fake_model: Any) -> None:
    """The previous prompt, its last message and that message's memories included, is the
    start of the next one, as text the model reads (so as tokens too)."""
    assert runner.invoke(app, ["remember", "My dog Rex was born in Lyon"]).exit_code == 0
    assert runner.invoke(app, ["remember", "Rex likes the beach at Cassis"]).exit_code == 0
    fake_model.replies = ["Lyon, I think.", "He likes the beach.", "Rex."]
    said = "Where was Rex born?\nWhere does Rex like to go?\nWhat is my dog Rex called?\n"
    done = runner.invoke(app, ["chat"], input=said)
    assert done.exit_code == 0, done.output
    chats = chat_prompts(fake_model)
    assert len(chats) == 3
    for before, after in zip(chats, chats[1:]):
        assert after[: len(before)] == before
        start = render_completion_prompt(before).removesuffix("Assistant:")
        assert render_completion_prompt(after).startswith(start)
    # a memory is given once in a conversation: with the first message that recalled it
    assert sum(m.content.count("Rex was born in Lyon") for m in chats[-1]) == 1
    assert "Rex was born in Lyon" in chats[0][-1].content


def test_a_memory_given_earlier_is_cited_in_a_later_reply(runner: CliRunner, fake_model: Any) -> None:
    """A memory that came with an earlier message is in the prompt still: a later reply may
    cite it (the reply's cleaner drops only citations of memories not in the prompt)."""
    assert runner.invoke(app, ["remember", "My dog Rex was born in Lyon"]).exit_code == 0
    rex = [line.split("\t")[0] for line in runner.invoke(app, ["list"]).stdout.splitlines() if "Lyon" in line][0]
    fake_model.replies = ["Lyon.", f"In Lyon [{rex[:8]}]."]
    done = runner.invoke(app, ["chat"], input="Where was Rex born?\nAnd Rex again?\n")
    assert done.exit_code == 0, done.output
    assert f"In Lyon [{rex[:8]}]." in done.stdout


def test_the_oldest_messages_lose_their_memories_when_the_prompt_would_not_fit(
    runner: CliRunner, fake_model: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMCLI_N_CTX", "512")
    monkeypatch.setenv("MEMCLI_MAX_TOKENS", "64")
    for i in range(5):
        assert runner.invoke(app, ["remember", f"Rex fact {i}: " + "walks by the river " * 8]).exit_code == 0
    fake_model.replies = ["Yes."]
    done = runner.invoke(app, ["chat"], input="Tell me about Rex\nMore about Rex walks\nRex and the river?\n")
    assert done.exit_code == 0, done.output
    last = chat_prompts(fake_model)[-1]
    assert sum(len(m.content) for m in last) <= (512 - 64) * 3
    assert last[1].role == "user" and not last[1].content.startswith("Memories:")


def test_folded_turns_stay_in_the_prompt_and_its_start_stays_the_same(
    runner: CliRunner, fake_model: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past ``history_turns``, older turns fold into the session summary (a model call), but
    the prompt keeps giving them verbatim while it fits: every prompt starts with the whole
    previous one across the folds, so no turn evaluates the whole prompt again."""
    monkeypatch.setenv("MEMCLI_HISTORY_TURNS", "2")
    fake_model.replies = ["One.", "Two.", "Summary A.", "Three.", "Four.", "Summary B.", "Five."]
    said = "First message\nSecond message\nThird message\nFourth message\nFifth message\n"
    done = runner.invoke(app, ["chat"], input=said)
    assert done.exit_code == 0, done.output
    chats = chat_prompts(fake_model)
    assert len(chats) == 5
    assert len(fake_model.prompts) == 7  # two summaries were made
    for before, after in zip(chats, chats[1:]):
        assert after[: len(before)] == before
    assert [m.content for m in chats[-1][1:] if m.role == "assistant"] == ["One.", "Two.", "Three.", "Four."]


def test_the_summary_replaces_the_folded_turns_when_the_prompt_would_not_fit(
    runner: CliRunner, fake_model: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """When the earlier turns no longer fit the context, the prompt gives the summary of
    them instead, opening its first message after the system text; the system text stays
    the same for the whole session (its evaluated state is reused even then)."""
    monkeypatch.setenv("MEMCLI_HISTORY_TURNS", "2")
    monkeypatch.setenv("MEMCLI_N_CTX", "512")
    monkeypatch.setenv("MEMCLI_MAX_TOKENS", "64")
    long = "about the garden and the long walk by the river " * 5
    fake_model.replies = ["One " + long, "Two " + long, "Summary A.", "Three."]
    said = f"First {long}\nSecond {long}\nThird message\n"
    done = runner.invoke(app, ["chat"], input=said)
    assert done.exit_code == 0, done.output
    chats = chat_prompts(fake_model)
    assert len(chats) == 3
    assert {c[0].content for c in chats} == {chats[0][0].content}
    last = chats[-1]
    assert [m.role for m in last] == ["system", "user"]
    assert last[1].content.startswith("Earlier in this conversation: Summary A.")
    assert last[1].content.endswith("Third message")


def test_a_folded_turn_in_the_prompt_is_not_recalled_into_it_again(
    runner: CliRunner, fake_model: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A turn folded out of the history stays in the prompt verbatim (an earlier turn): a
    later message about it does not bring it again as a recalled memory; a note the first
    message recalled is in the prompt still, once."""
    monkeypatch.setenv("MEMCLI_HISTORY_TURNS", "2")
    assert runner.invoke(app, ["remember", "Ann teaches the violin at the Lyon conservatory"]).exit_code == 0
    fake_model.replies = ["Nice.", "Good.", "Summary A.", "Yes."]
    said = "My sister Ann moved to Lyon in March\nI had tea today\nWhen did my sister Ann move to Lyon?\n"
    done = runner.invoke(app, ["chat"], input=said)
    assert done.exit_code == 0, done.output
    last = chat_prompts(fake_model)[-1]
    assert [m.content for m in last if m.role == "assistant"] == ["Nice.", "Good."]  # folded, kept verbatim
    assert sum(m.content.count("Ann moved to Lyon in March") for m in last) == 1
    assert sum(m.content.count("Ann teaches the violin") for m in last) == 1  # recalled, with the first message


def test_a_chunk_of_a_long_turn_in_the_prompt_is_not_recalled_into_it(runner: CliRunner, fake_model: Any) -> None:
    """A long message is stored as several chunks, whose ids only the request that stored it
    knew: a later message about its second chunk does not bring that chunk again, the
    message being in the prompt whole."""
    first = "I spent the morning sorting papers at my desk. " * 20
    second = "The orchard behind the mill has seven pear trees and a blue gate."
    fake_model.replies = ["Busy day.", "Yes."]
    done = runner.invoke(app, ["chat"], input=f"{first}{second}\nHow many pear trees are behind the mill?\n")
    assert done.exit_code == 0, done.output
    turns = [m for m in list_json(runner, "--kind", "turn") if "seven pear trees" in m["text"]]
    assert len(turns) == 1 and not turns[0]["text"].startswith("I spent")  # a chunk of its own
    last = chat_prompts(fake_model)[-1]
    assert sum(m.content.count("seven pear trees") for m in last) == 1


class PrimingModel(FakeChatModel):
    """The scripted model, which also records the prompt starts it is asked to evaluate ahead."""

    primes = True

    def __init__(self) -> None:
        super().__init__(["Fine."])
        self.primed: list[list[Message]] = []
        self.openings: list[bool] = []

    def prime(self, messages: Sequence[Message], opening: bool = False) -> int:
        self.primed.append(list(messages))
        self.openings.append(opening)
        return 0

    @contextlib.contextmanager
    def stopping(self, stop: Any) -> Iterator[None]:
        yield


class SlowPrimingModel(PrimingModel):
    """A model whose prime takes 30 s unless stopped: ``started`` is set when it begins,
    ``stopped_at`` records what ``on_stop`` returns when it is stopped."""

    def __init__(self, on_stop: Any = lambda: None) -> None:
        super().__init__()
        self.started = threading.Event()
        self.on_stop = on_stop
        self.stopped_at: list[Any] = []
        self.stop: Any = lambda: False

    def prime(self, messages: Sequence[Message], opening: bool = False) -> int:
        self.started.set()
        for _ in range(600):  # 30 s, unless stopped
            if self.stop():
                self.stopped_at.append(self.on_stop())
                return 0
            time.sleep(0.05)
        return super().prime(messages, opening)

    @contextlib.contextmanager
    def stopping(self, stop: Any) -> Iterator[None]:
        self.stop = stop
        yield


def test_the_next_prompts_start_is_evaluated_ahead(
    runner: CliRunner, fake_embedder: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """When a chat opens, the model evaluates its system text while the person types; after
    each reply (a fold included), the start of the next prompt: the next turn evaluates
    only its message and memories."""
    monkeypatch.setenv("MEMCLI_HISTORY_TURNS", "2")
    model = PrimingModel()
    Given.set(fake_embedder, model)
    done = runner.invoke(app, ["chat"], input="First message\nSecond message\nThird message\n")
    for thread in threading.enumerate():
        if thread.name == "chat-prime":
            thread.join(30)
    assert done.exit_code == 0, done.output
    chats = chat_prompts(model)
    assert len(chats) == 3
    for chat in chats:
        assert chat[:-1] in model.primed
    assert [m.role for m in model.primed[0]] == ["system"]
    assert model.openings == [True] + [False] * (len(model.primed) - 1)  # the system text alone opens the chat


# --- the evaluated state kept across other prompts (the real model) --------------------------


@pytest.mark.integration
def test_a_primed_start_is_not_evaluated_again(tmp_path: Path) -> None:
    """A prompt's start evaluated ahead (``prime``: the system text, when a chat opens) is
    not evaluated again by the prompt that starts with it, short as it is, and the reply is
    a fresh model's."""
    model = load_chat_model("", tmp_path, n_ctx=2048)
    evaluated: list[int] = []
    inner = model._eval
    model._eval = lambda tokens: (evaluated.append(len(tokens)), inner(tokens))[1]
    system = Message("system", "You are memcli, the assistant of Ann. Answer briefly and truthfully. " * 2)
    assert model.prime([system]) > 20
    evaluated.clear()
    turn = [system, Message("user", "When did I start the pottery class?")]
    reply = complete(model, turn, 6, 0.0)
    whole = model.count_tokens(render_completion_prompt(turn))
    assert sum(evaluated) - 6 < whole - 20  # the message, not the system text again
    assert reply == complete(load_chat_model("", tmp_path, n_ctx=2048), turn, 6, 0.0)


def counted(model: Any) -> list[int]:
    """The sizes of the batches ``model`` (a ``LlamaCppModel``) evaluates from now on."""
    evaluated: list[int] = []
    inner = model._eval
    model._eval = lambda tokens: (evaluated.append(len(tokens)), inner(tokens))[1]
    return evaluated


SYSTEM_TEXT = Message(
    "system",
    "You are memcli, the personal assistant of Ann, with a long-term memory of your conversations. "
    "Answer briefly and truthfully, and cite the memories you use.",
)
"""A chat's system text shorter than ``KEEP_AT_LEAST`` tokens, as memcli's own is before
consolidation has written anything."""


@pytest.mark.integration
def test_a_model_with_a_chat_template_evaluates_a_prompts_start_ahead(tmp_path: Path) -> None:
    """A model that chats through a chat template (here the embedded model given
    llama.cpp's chatml format) evaluates the start of a prompt ahead too: the prompt that
    goes on from it evaluates only its new message, and replies as a fresh model does."""
    model = load_chat_model("", tmp_path, chat_format="chatml", n_ctx=2048)
    assert model.uses_chat_template
    evaluated = counted(model)
    assert model.prime([SYSTEM_TEXT]) > 20
    evaluated.clear()
    turn = [SYSTEM_TEXT, Message("user", "When did I start the pottery class?")]
    reply = complete(model, turn, 6, 0.0)
    whole = len(model._chat_tokens(turn))
    assert sum(evaluated) - 6 < whole - 20  # the message, not the system text again
    fresh = load_chat_model("", tmp_path, chat_format="chatml", n_ctx=2048)
    assert reply == complete(fresh, turn, 6, 0.0)


@pytest.mark.integration
def test_the_next_chat_starts_from_the_system_text_the_last_one_evaluated(tmp_path: Path) -> None:
    """A new chat's first turn, its system text the same as the previous chat's (one user,
    one day), does not evaluate that text again, short as it is: the previous chat's
    state holds it; and the opening kept apart (``prime(opening=True)``) holds it still
    after other prompts took the model's state."""
    model = load_chat_model("", tmp_path, n_ctx=2048)
    evaluated = counted(model)
    first = [SYSTEM_TEXT, Message("user", "Hi, I am back from the pottery class.")]
    complete(model, first, 6, 0.0)
    evaluated.clear()
    second = [SYSTEM_TEXT, Message("user", "Do you remember my sister's name?")]
    reply = complete(model, second, 6, 0.0)
    system = model.count_tokens(render_completion_prompt([SYSTEM_TEXT]))
    assert 20 < system < 128
    assert sum(evaluated) - 6 < model.count_tokens(render_completion_prompt(second)) - system + 4
    fresh = load_chat_model("", tmp_path, n_ctx=2048)
    assert reply == complete(fresh, second, 6, 0.0)

    model.prime([SYSTEM_TEXT], opening=True)
    for i in range(3):  # other prompts (a consolidation's), each pushing out a kept state
        complete(model, [Message("user", f"Summarize: the cat {i} sat on the mat. " * 20)], 2, 0.0)
    evaluated.clear()
    assert complete(model, second, 6, 0.0) == reply
    assert sum(evaluated) - 6 < model.count_tokens(render_completion_prompt(second)) - system + 4


@pytest.mark.integration
def test_a_prompt_of_another_kind_between_two_turns_keeps_the_conversations_state(tmp_path: Path) -> None:
    """A summary's prompt between two chat turns: the next turn brings the conversation's
    evaluated state back and evaluates only its new tokens, and replies as a model that
    evaluated the whole prompt does."""
    model = load_chat_model("", tmp_path, n_ctx=2048)
    evaluated: list[int] = []
    inner = model._eval
    model._eval = lambda tokens: (evaluated.append(len(tokens)), inner(tokens))[1]
    system = Message("system", " ".join(f"Fact {i}: the sky was clear on day {i}." for i in range(40)))
    turn = [system, Message("user", "Hi there.")]
    complete(model, turn, 6, 0.0)
    complete(model, [Message("user", "Summarize: the cat sat on the mat. " * 10)], 6, 0.0)
    evaluated.clear()
    later = [*turn, Message("assistant", "Hello."), Message("user", "How are you?")]
    reply = complete(model, later, 6, 0.0)
    assert model.count_tokens(render_completion_prompt(later)) > 300
    assert sum(evaluated) < 60  # the new turn and the reply's few tokens, not the whole prompt
    assert reply == complete(load_chat_model("", tmp_path, n_ctx=2048), later, 6, 0.0)


def test_a_prompt_after_another_kind_of_prompt_is_evaluated_on_an_empty_state(tmp_path: Path) -> None:
    """A chat's first turn after a structured task (a consolidation) shares a token or
    two with it: its prompt is evaluated from its start on an empty state, as on a fresh
    model, not onto the task's state cut after those tokens (Gemma 3 then often wrote an
    empty first reply)."""
    model = load_chat_model("", tmp_path, n_ctx=2048)
    complete(model, [Message("user", "Summarize: the cat sat on the mat. " * 20)], 4, 0.0)
    llama = model._llama
    assert llama.n_tokens > 128
    turn = [Message("system", "You are memcli."), Message("user", "Hi there.")]
    tokens = llama.tokenize(render_completion_prompt(turn).encode("utf-8"), special=True)
    seen: list[int] = []
    generate = model._generate
    model._generate = lambda tokens, *a, **k: (seen.append(llama.n_tokens), generate(tokens, *a, **k))[1]
    complete(model, turn, 2, 0.0)
    assert tokens[0] == llama.input_ids[0] and seen == [0]


# --- Ctrl-C through the service: waiting for the model, and at every piece ------------------


class Pieces:
    """A chat model that streams ``count`` pieces and records how many it gave."""

    name = "pieces"

    def __init__(self, count: int = 50) -> None:
        self.count = count
        self.given = 0

    def stream(self, messages: Sequence[Message], max_tokens: int, temperature: float) -> Iterator[str]:
        for i in range(self.count):
            self.given += 1
            yield f"w{i} "

    def structured(self, *args: Any, **kwargs: Any) -> str:
        return "{}"


def test_a_stop_ends_a_reply_at_the_next_piece() -> None:
    """The client's cancel is asked at every piece the model streams, shown or not, not
    only when a piece reaches the client."""
    model = Pieces()
    asked: list[int] = []

    def stop() -> bool:
        asked.append(1)
        return len(asked) > 3

    shared = SharedChatModel(lambda: model, ModelGate(), True, stop=stop)
    with pytest.raises(Interrupted):
        list(shared.stream([Message("user", "hi")], 8, 0.0))
    assert model.given < model.count


def test_a_stop_ends_the_wait_for_a_busy_model() -> None:
    """A reply waiting for the model (a consolidation holds it) ends when its client
    cancels, without waiting for the model to be free."""
    gate = ModelGate()
    stopped = threading.Event()
    outcome: list[str] = []

    def waiting() -> None:
        shared = SharedChatModel(lambda: Pieces(), gate, True, stop=stopped.is_set)
        try:
            list(shared.stream([Message("user", "hi")], 8, 0.0))
            outcome.append("replied")
        except Interrupted:
            outcome.append("interrupted")

    with gate.hold(False):
        thread = threading.Thread(target=waiting, daemon=True)
        thread.start()
        stopped.set()
        thread.join(timeout=30)
        assert outcome == ["interrupted"]


def test_an_interrupted_reply_folds_no_history(
    fake_model: Any, fake_embedder: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past ``history_turns``, the older turns fold into the session summary, a model call:
    not after a reply the user stopped (the prompt comes back at once), after the next one."""
    from memcli.config import load_settings
    from memcli.library.chat import ChatSession
    from memcli.paths import resolve_paths
    from memcli.transport.resources import Resources

    paths = resolve_paths()
    env = {"MEMCLI_HISTORY_TURNS": "2"}
    resources = Resources(paths, load_settings(paths, env=env), fake_embedder, fake_model)
    session = ChatSession(resources.engine({"verb": "chat.respond", "env": env}))
    fake_model.replies = ["Hello.", "A summary.", "Fine."]
    session.respond("hi", lambda piece: None)

    def stop(piece: str) -> None:
        raise Interrupted("interrupted")

    assert session.respond("tell me a story", stop).interrupted
    assert len(fake_model.prompts) == 2  # the two replies, no summary
    assert len(session.history) == 3 and not session.summary
    session.respond("how are you?", lambda piece: None)
    assert len(fake_model.prompts) == 4
    assert session.summary  # the next whole reply folded the older turns


def test_a_slow_prompt_evaluation_is_checked_for_a_stop_in_smaller_steps() -> None:
    """Where llama.cpp takes no abort callback, and on a busy machine, where a step of
    EVAL_STEP tokens takes seconds, the next steps take fewer tokens, so a Ctrl-C is heeded
    as soon on a slow machine as on a quiet one."""
    import time

    from memcli.models.llm import EVAL_STEP, MIN_EVAL_STEP, LlamaCppModel

    model = LlamaCppModel.__new__(LlamaCppModel)
    model._stop = None
    batches: list[int] = []

    def slow(tokens: Sequence[int]) -> None:
        batches.append(len(tokens))
        time.sleep(0.01 * len(tokens))  # 10 ms a token: 64 take 0.64 s

    model._eval = slow
    model._eval_in_steps(list(range(200)))
    assert sum(batches) == 200 and batches[0] == EVAL_STEP
    assert all(MIN_EVAL_STEP <= n < EVAL_STEP for n in batches[1:-1])


def test_a_warning_sent_after_a_cancel_does_not_use_it_up(fake_embedder: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """A Ctrl-C that comes before a warning of the reply (the store is locked, say) is not
    used up by it (``chat_respond``'s warning goes on, so the turns are stored): the reply
    still stops at the next piece the model streams, not when it is written out."""
    from multiprocessing.connection import Pipe

    from memcli.config import load_settings
    from memcli.library.chat import ChatSession
    from memcli.paths import resolve_paths
    from memcli.transport import service as service_module

    paths = resolve_paths()
    model = Pieces(50)
    service = service_module.Service(paths, load_settings(paths), embedder=fake_embedder, chat_model=model)
    ours, theirs = Pipe()

    def ask(verb: str, args: dict[str, Any]) -> list[dict[str, Any]]:
        return handled(service, ours, theirs, verb, args)

    try:
        state = ask("chat.open", {"user": "ann"})[-1]["data"]
        context = ChatSession._context

        def cancelled_then_warned(self: ChatSession, text: str, turn_id: str) -> Any:
            ours.send_bytes(b'{"event": "cancel"}')  # the user's Ctrl-C
            self.on_warning("the store is locked")
            return context(self, text, turn_id)

        monkeypatch.setattr(ChatSession, "_context", cancelled_then_warned)
        events = ask("chat.respond", {"state": state, "text": "tell me a story"})
    finally:
        service.stop()
    reply = events[-1]["data"]
    assert reply["interrupted"] is True and reply["state"]["history"][0]["content"] == "tell me a story"
    assert model.given < model.count


def test_a_turn_stops_the_prompts_start_evaluated_ahead_before_it_recalls() -> None:
    """A chat turn stops a prime still going on and waits for it to end before it recalls
    (``settle``): on 2 cores, llama.cpp's evaluation and the recall at once slow each
    other down several times over, and the turn's own evaluation takes the rest in the
    same call. A Ctrl-C ends that wait."""
    gate = ModelGate()
    model = SlowPrimingModel()
    shared = SharedChatModel(lambda: model, gate, True)
    prime = shared.start_prime([Message("system", "You are memcli.")])
    assert model.started.wait(30)
    shared.settle()
    assert model.stopped_at and not model.primed
    prime.join(30)
    gate.priming(+1)  # a prime asked for, not yet ended
    with pytest.raises(Interrupted):
        SharedChatModel(lambda: model, gate, True, stop=lambda: True).settle()
    gate.priming(-1)


def test_a_prime_stopped_while_it_waits_for_the_model_is_not_logged_as_a_failure(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A prime waiting behind a reply (the gate held) that the next turn stops ends quietly:
    being stopped is what a prime is for, and the service's log (which the bench scans for
    failures) says nothing of a failure."""
    gate = ModelGate()
    model = PrimingModel()
    shared = SharedChatModel(lambda: model, gate, True)
    with caplog.at_level(logging.DEBUG, logger="memcli"), gate.hold(False):
        prime = shared.start_prime([Message("system", "You are memcli.")])
        shared.settle()
        prime.join(30)
    assert not prime.is_alive() and model.primed == []
    assert not [r for r in caplog.records if "fail" in r.getMessage()]


def test_a_turn_stops_the_prime_before_it_embeds_anything(fake_embedder: Any) -> None:
    """The prime of a chat's system text still going on when the first message comes is
    stopped before the message is stored (embedded) and recalled, not alongside."""
    from memcli.config import load_settings
    from memcli.library.chat import ChatSession
    from memcli.paths import resolve_paths
    from memcli.transport.resources import Resources

    model = SlowPrimingModel(lambda: fake_embedder.calls)
    paths = resolve_paths()
    resources = Resources(paths, load_settings(paths), fake_embedder, model)
    session = ChatSession(resources.engine({"verb": "chat.respond", "env": {}}))
    session.prime().join(0.2)  # type: ignore[union-attr]
    before = fake_embedder.calls
    session.respond("hi", lambda piece: None)
    assert model.stopped_at == [before]


@pytest.mark.integration
def test_a_chats_opening_evaluated_once_is_loaded_from_disk_by_the_next_run(tmp_path: Path) -> None:
    """The opening of a chat (``prime(opening=True)``) evaluated by one run of the model is
    kept on disk: the next run (a service started again after its idle exit) loads it and
    evaluates none of it, and its reply is a fresh model's; an opening that changed (a new
    running memory) is evaluated, and a kept file that is damaged is not used."""
    from memcli.models.llm import OPENING_STATES, LlamaCppModel, default_model_path

    def run() -> Any:
        model = load_chat_model("", tmp_path, n_ctx=2048)
        return model, counted(model)

    first, _ = run()
    assert first.prime([SYSTEM_TEXT], opening=True) > 20
    first._writing.join()
    kept = list((tmp_path / OPENING_STATES).glob("*.state"))
    assert len(kept) == 1 and kept[0].stat().st_mode & 0o077 == 0
    turn = [SYSTEM_TEXT, Message("user", "When did I start the pottery class?")]

    again, evaluated = run()
    assert again.prime([SYSTEM_TEXT], opening=True) == 0
    assert sum(evaluated) == 0
    reply = complete(again, turn, 6, 0.0)
    assert sum(evaluated) - 6 < again.count_tokens(render_completion_prompt(turn)) - 20  # the message alone
    fresh = LlamaCppModel(default_model_path(tmp_path), n_ctx=2048)  # keeps nothing on disk
    assert reply == complete(fresh, turn, 6, 0.0)

    # a first turn that comes before its opening was evaluated ahead loads it all the same
    direct, evaluated = run()
    assert complete(direct, turn, 6, 0.0) == reply
    assert sum(evaluated) - 6 < direct.count_tokens(render_completion_prompt(turn)) - 20

    changed = Message("system", SYSTEM_TEXT.content.replace("Ann", "Bob"))  # another user's
    other, evaluated = run()
    assert other.prime([changed], opening=True) > 20
    other._writing.join()

    kept[0].write_bytes(kept[0].read_bytes()[:200])  # cut short, as by a full disk
    damaged, evaluated = run()
    assert damaged.prime([SYSTEM_TEXT], opening=True) > 20
    assert complete(damaged, turn, 6, 0.0) == reply


@pytest.mark.integration
def test_a_first_turn_that_stops_its_openings_evaluation_keeps_the_openings_state(tmp_path: Path) -> None:
    """A chat's first turn sent before its opening was evaluated ahead (the prime stopped
    before it had evaluated anything: a person who types fast on a busy machine) evaluates
    the opening itself, and the opening's state is kept from that evaluation (before the
    next prompt, the conversation's state left whole), on disk too: the next run (a
    service started again) evaluates none of it, and replies as a fresh model does."""
    from memcli.models.llm import OPENING_STATES, LlamaCppModel, default_model_path

    model = load_chat_model("", tmp_path, n_ctx=2048)
    with model.stopping(lambda: True):
        assert model.prime([SYSTEM_TEXT], opening=True) == 0
    assert not list((tmp_path / OPENING_STATES).glob("*.state"))
    turn = [SYSTEM_TEXT, Message("user", "When did I start the pottery class?")]
    evaluated = counted(model)
    reply = complete(model, turn, 6, 0.0)
    whole = model.count_tokens(render_completion_prompt(turn))
    assert sum(evaluated) - 6 >= whole - 1  # the opening with the message, in the turn's own evaluation
    evaluated.clear()
    # the next turn's start, evaluated ahead after the reply: the turn's state is kept whole
    model.prime([*turn, Message("assistant", reply)])
    assert 0 < sum(evaluated) < 20
    assert model._writing is not None
    model._writing.join()
    assert len(list((tmp_path / OPENING_STATES).glob("*.state"))) == 1

    again = load_chat_model("", tmp_path, n_ctx=2048)
    evaluated = counted(again)
    assert again.prime([SYSTEM_TEXT], opening=True) == 0
    assert sum(evaluated) == 0
    assert complete(again, turn, 6, 0.0) == reply
    assert complete(LlamaCppModel(default_model_path(tmp_path), n_ctx=2048), turn, 6, 0.0) == reply
