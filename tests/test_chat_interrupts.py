"""A Ctrl-C at any point of a chat turn stops it: while the user's turn is stored (the
write ends first, the turn whole in the store and the history), and while the memories
are recalled (through the service the turn is answered at once, the recall left to end by
itself); the model is never asked, and what the person typed stays stored."""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Iterator, Sequence
from multiprocessing.connection import Pipe
from typing import Any

import pytest
from cli_checks import handled

from memcli.config import load_settings
from memcli.library.chat import ChatSession
from memcli.models.llm import Message
from memcli.paths import resolve_paths
from memcli.transport import service as service_module
from memcli.transport.resources import Resources


class Counted:
    """A chat model that streams a few pieces and counts the prompts it was given."""

    name = "counted"

    def __init__(self) -> None:
        self.asked = 0

    def stream(self, messages: Sequence[Message], max_tokens: int, temperature: float) -> Iterator[str]:
        self.asked += 1
        yield from ("Hello ", "there.")

    def structured(self, *args: Any, **kwargs: Any) -> str:
        return "{}"


def test_a_cancel_while_the_memories_are_recalled_answers_the_turn_before_the_recall_ends(
    fake_embedder: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Through the service (a request thread, where no signal comes), a cancel that comes
    while the memories are recalled is answered while that recall still runs: the reply is
    interrupted and empty, the model never asked, the user's turn stored and in the
    session's history."""
    paths = resolve_paths()
    model = Counted()
    service = service_module.Service(paths, load_settings(paths), embedder=fake_embedder, chat_model=model)
    ours, theirs = Pipe()  # the connection of the turn, where the client's cancel comes

    def ask(verb: str, args: dict[str, Any]) -> list[dict[str, Any]]:
        return handled(service, ours, theirs, verb, args)

    recalling, release = threading.Event(), threading.Event()
    context = ChatSession._context

    def slow(self: ChatSession, text: str, turn_id: str) -> Any:
        recalling.set()
        release.wait(30)  # a recall on a very busy machine
        return context(self, text, turn_id)

    try:
        state = ask("chat.open", {"user": "ann"})[-1]["data"]
        monkeypatch.setattr(ChatSession, "_context", slow)
        events: list[dict[str, Any]] = []
        turn = threading.Thread(
            target=lambda: events.extend(ask("chat.respond", {"state": state, "text": "I planted tomatoes today"}))
        )
        turn.start()
        assert recalling.wait(30)
        ours.send_bytes(b'{"event": "cancel"}')  # the user's Ctrl-C
        turn.join(10)
        answered_while_recalling = not turn.is_alive()
        release.set()
        turn.join(30)
        monkeypatch.undo()
        ours, theirs = Pipe()
        listed = ask("list", {"user": "ann"})[-1]["data"]
    finally:
        release.set()
        service.stop()
    assert answered_while_recalling, "the cancel waited for the recall to end"
    reply = events[-1]["data"]
    assert reply["interrupted"] is True and reply["reply"] == ""
    assert [h["content"] for h in reply["state"]["history"]] == ["I planted tomatoes today"]
    assert model.asked == 0
    assert [m["text"] for m in listed] == ["I planted tomatoes today"]


def test_a_ctrl_c_while_the_users_turn_is_stored_ends_the_turn_once_it_is_stored(
    fake_embedder: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """In this process, a Ctrl-C (SIGINT) that comes while the user's turn is written is
    held back until the write is done, then ends the turn: respond returns an interrupted,
    empty reply (no KeyboardInterrupt out of it), the turn is stored once and kept in the
    history, nothing is recalled for it, and the model is never asked."""
    paths = resolve_paths()
    model = Counted()
    resources = Resources(paths, load_settings(paths), fake_embedder, model)
    engine = resources.engine({"verb": "chat.respond", "env": {}})
    session = ChatSession(engine, "ann")
    write = type(engine).write
    recalled: list[str] = []
    context = ChatSession._context

    def pressed_while_writing(self: Any, memories: Any, *args: Any, **kwargs: Any) -> Any:
        os.kill(os.getpid(), signal.SIGINT)  # the person's Ctrl-C, mid-write
        return write(self, memories, *args, **kwargs)

    def recall(self: ChatSession, text: str, turn_id: str) -> Any:
        recalled.append(text)
        return context(self, text, turn_id)

    monkeypatch.setattr(type(engine), "write", pressed_while_writing)
    monkeypatch.setattr(ChatSession, "_context", recall)
    reply = session.respond("I planted tomatoes today", lambda piece: None)
    monkeypatch.undo()
    assert reply.interrupted and reply.text == ""
    assert [m.content for m in session.history] == ["I planted tomatoes today"]
    assert recalled == [] and model.asked == 0
    stored = engine.list_memories("ann", "turn", limit=0)
    assert [m.text for m in stored] == ["I planted tomatoes today"] and stored[0].id == session.history_ids[0]
