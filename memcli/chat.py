"""A chat session: context assembly, streamed generation, and turn logging.

Before each reply the session recalls memories relevant to the user's message and the
previous one, and builds the prompt from them (with their dates), the global portrait
and global event summary when consolidation has written them, a short summary of this
session's older turns, and the last ``history_turns`` turns verbatim (Landwehr et al.
2023: last k messages + a summary of older ones). Every user and assistant turn is stored
as a memory, the user's before the reply is generated.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from memcli import prompts
from memcli.assistant import Context
from memcli.core import Memcli
from memcli.errors import Interrupted, StoreLockedError
from memcli.llm import Message
from memcli.memory import Kind, Memory, day_of, new_id
from memcli.retrieval import Recalled
from memcli.schema import iso_time


@dataclass
class Reply:
    """One assistant reply: its text, the memories placed in the prompt, and whether the
    user interrupted it (Ctrl-C) before it finished."""

    text: str
    memories: list[Recalled]
    interrupted: bool = False


class ChatSession:
    """One ``memcli chat`` session for one user.

    ``on_warning`` receives status messages (for example: the store was locked and a
    turn stays journaled until the next memcli stores it).
    """

    def __init__(self, memcli: Memcli, user: str | None = None, on_warning: Callable[[str], None] | None = None) -> None:
        self.memcli = memcli
        self.user = memcli.user(user)
        self.session_id = f"chat-{day_of(memcli.clock())}-{new_id()[:8]}"
        self.history: list[Message] = []
        self.history_ids: list[str] = []
        self.summary = ""
        self.on_warning = on_warning or (lambda message: None)
        self._last_turn_at = 0.0

    def state(self) -> dict[str, object]:
        """The session as ``schema.ChatState`` data: what a client keeps between replies."""
        return {
            "user": self.user,
            "session_id": self.session_id,
            "model": self.memcli.chat_model.name,
            "history": [{"role": m.role, "content": m.content, "id": i} for m, i in zip(self.history, self.history_ids)],
            "summary": self.summary,
            "last_turn_at": iso_time(self._last_turn_at, "microseconds"),
        }

    @classmethod
    def restore(cls, memcli: Memcli, state: dict[str, object], on_warning: Callable[[str], None] | None = None) -> ChatSession:
        """The session that ``state()`` described, over ``memcli`` (for the next reply)."""
        session = cls(memcli, str(state["user"]), on_warning)
        session.session_id = str(state["session_id"])
        history = list(state.get("history") or [])  # type: ignore[call-overload]
        session.history = [Message(str(h["role"]), str(h["content"])) for h in history]
        session.history_ids = [str(h["id"]) for h in history]
        session.summary = str(state.get("summary") or "")
        last = state.get("last_turn_at")
        session._last_turn_at = datetime.fromisoformat(str(last)).timestamp() if last else 0.0
        return session

    def _store_turn(self, role: str, text: str, tags: list[str] | None = None) -> Memory:
        # Turns keep their order even when the clock stands still (--now): a millisecond apart.
        now = max(self.memcli.clock(), self._last_turn_at + 0.001)
        self._last_turn_at = now
        turn = Memory(
            id=new_id(),
            user=self.user,
            kind=Kind.TURN.value,
            text=text,
            created_at=now,
            day=day_of(now),
            session=self.session_id,
            speaker=self.user if role == "user" else "assistant",
            source=f"chat:{self.session_id}",
            tags=tags or [],
        )
        try:
            self.memcli.write([turn])
        except StoreLockedError as exc:
            self.on_warning(f"{exc.message}; the turn is journaled and will be stored later")
        return turn

    def respond(self, text: str, on_piece: Callable[[str], None]) -> Reply:
        """Store the user's turn, recall, stream the reply through ``on_piece``, store it.

        A KeyboardInterrupt (or ``Interrupted``: the client went away) during generation
        stores the partial reply (tagged ``interrupted``) and is re-raised.
        """
        user_turn = self._store_turn("user", text)
        previous = next((m.content for m in reversed(self.history) if m.role == "user"), "")
        query = f"{previous}\n{text}" if previous else text
        try:
            context = self.memcli.context(
                query, self.user, exclude={*self.history_ids, user_turn.id}, conversation=[*self.history, Message("user", text)]
            )
        except StoreLockedError as exc:
            self.on_warning(f"{exc.message}; replying without recalled memories")
            context = Context([])
        system = prompts.system_prompt(
            self.user, self.memcli.today(), context.memories, context.portrait, context.events, self.summary, context.running
        )
        messages = prompts.chat_messages(system, self.history, text)
        settings = self.memcli.settings
        pieces: list[str] = []
        interrupted = False
        try:
            for piece in self.memcli.chat_model.stream(messages, settings.max_tokens, settings.temperature):
                if not pieces:
                    piece = piece.lstrip()
                    if not piece:
                        continue
                pieces.append(piece)
                on_piece(piece)
        except (KeyboardInterrupt, Interrupted):
            interrupted = True
            raise
        finally:
            reply = "".join(pieces).strip()
            self.history.append(Message("user", text))
            self.history_ids.append(user_turn.id)
            if reply:
                turn = self._store_turn("assistant", reply, ["interrupted"] if interrupted else None)
                self.history.append(Message("assistant", reply))
                self.history_ids.append(turn.id)
        self._fold_history()
        return Reply(reply, context.recalled, interrupted)

    def _fold_history(self) -> None:
        """Keep ``history_turns`` turns verbatim; fold older ones into the session summary."""
        keep = self.memcli.settings.history_turns
        if len(self.history) <= keep:
            return
        cut = len(self.history) - keep
        dropped = self.history[:cut]
        self.history, self.history_ids = self.history[cut:], self.history_ids[cut:]
        self.summary = self.memcli.summarize(self.summary, dropped)
