"""The verbs that read memory for a person: recall, ask, shell completion and chat
(``memcli.library.library.Memcli``)."""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from typing import Optional

from memcli import schema
from memcli.errors import Interrupted, ModelServerError
from memcli.library.engine import Engine
from memcli.library.outputs import Emit, recalled_out


class RecallVerbs:
    """The recall, answer and chat verbs of ``Memcli``."""

    engine: Engine
    emit: Emit

    def recall(
        self,
        query: str,
        user: Optional[str] = None,
        k: Optional[int] = 10,
        kind: Optional[str] = None,
        since: Optional[str] = None,
        reinforce: bool = True,
        sample: bool = False,
        seed: Optional[int] = None,
        tags: Sequence[str] = (),
        at: Optional[str] = None,
    ) -> list[schema.RecalledMemory]:
        """The ``k`` memories most relevant to ``query``, ranked (``Engine.recall``); ``k``
        None: as many as a chat prompt carries (the ``recall_k`` setting); ``at``: as of a date."""
        k = (self.engine.settings.recall_k or 5) if k is None else k
        hits = self.engine.recall(
            query, user, k=k, kind=kind, since=since, reinforce=reinforce, sample=sample, seed=seed, tags=tags, at=at
        )
        return [recalled_out(h) for h in hits]

    def ask(self, question: str, user: Optional[str] = None) -> schema.Answer:
        """One answer grounded in recalled memories, citing their ids (``Assistant.ask``: by
        the chat model or extractive, the ``answers`` setting). Raises NotFoundError for a
        user without memories when others have some (``Engine.ask``)."""
        answer = self.engine.ask(question, user)
        return schema.Answer(
            answer=answer.answer,
            cited=answer.cited,
            memories=[recalled_out(h) for h in answer.memories],
            answered_by=answer.answered_by,
            answered=answer.answered,
        )

    def complete(self, what: str, prefix: str = "", user: Optional[str] = None) -> list[schema.Completion]:
        """Shell completions of ``prefix`` (``what``: id, user or kind), from the recall index
        alone: no model is touched. Raises UsageError for another ``what``."""
        return [
            schema.Completion(value=value, help=help) for value, help in self.engine.completions(what, prefix, user)
        ]

    def chat_open(self, user: Optional[str] = None, system: str = "", resume: bool = False) -> schema.ChatState:
        """A new chat session's state (``resume``: going on from the user's last session).
        Building it names the model, which loads it: a bad model fails here, before the
        first prompt. The model then evaluates the session's system text in the background
        (``ChatSession.prime``)."""
        # heavy: a chat reads names, dates and answers (memcli.recall, memcli.text), whose patterns compile at import
        from memcli.library.chat import ChatSession, open_store_ahead

        engine = self.engine
        session = (
            ChatSession.resume(engine, user, system=system) if resume else ChatSession(engine, user, system=system)
        )
        state = schema.ChatState(**session.state())
        session.prime()  # the system text is evaluated while the person types the first message
        open_store_ahead(engine)  # ... and Chroma opened, so that the first turn's write does not wait for it
        return state

    def chat_respond(self, state: schema.ChatState, text: str) -> schema.ChatReply:
        """Store the user's ``text``, recall, and stream a reply (``piece`` events); the reply
        and the session's next state. A reply the caller cancels (``Interrupted`` from
        ``emit``) ends there, its partial text stored. The model then evaluates the start
        of the next prompt in the background (``ChatSession.prime``)."""
        # heavy: a chat reads names, dates and answers (memcli.recall, memcli.text), whose patterns compile at import
        from memcli.library.chat import ChatSession

        def warn(message: str) -> None:
            with contextlib.suppress(Interrupted):  # a reply the client cancelled still stores its turns
                self.emit("warning", message=message)

        session = ChatSession.restore(self.engine, state.model_dump(mode="json"), warn)
        try:
            # "recalling" events, which a client ignores, are where a cancel is heeded before the model runs
            reply = session.respond(text, lambda piece: self.emit("piece", text=piece), lambda: self.emit("recalling"))
        except ModelServerError as exc:
            raise ModelServerError(f"the reply failed (your message is stored): {exc.message}", exc.status) from None
        session.prime()  # the next prompt's start (after a fold: the whole conversation) while the person reads
        return schema.ChatReply(
            reply=reply.text,
            interrupted=reply.interrupted,
            empty_reason=reply.empty_reason,
            memories=[recalled_out(h) for h in reply.memories],
            state=schema.ChatState(**session.state()),
        )
