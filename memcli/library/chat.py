"""A chat session: context assembly, streamed generation, and turn logging.

Before each reply the session recalls memories relevant to the user's message and the
previous one, and builds the prompt from them (with their dates), the global portrait
and global event summary when consolidation has written them, a short summary of this
session's older turns, the last ``history_turns`` turns verbatim (Landwehr et al.
2023: last k messages + a summary of older ones), and the session's own instruction
(``memcli chat --system``) last. Each prompt starts with the whole previous one, so that
llama.cpp evaluates only the new turns: the turns folded into the summary stay in the
prompt, verbatim, until it would not fit the context (then the summary takes their place),
and the start of the next prompt is evaluated while the person types (``ChatSession.prime``). Every user and assistant turn is stored as a memory, the
user's before the reply is generated, so a cancelled reply loses nothing the user typed.
A session can be resumed (``memcli chat --continue``) from the turns it stored. A reply
of a base model is tagged ``base-model`` (``memory.BASE_MODEL``): consolidation makes
nothing of it and recall ranks it below what the user said.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Callable, Generator, Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime

from memcli.dates import day_of
from memcli.errors import Interrupted, StoreLockedError
from memcli.library.engine import Engine
from memcli.library.interrupts import deferred_interrupt
from memcli.memory import BASE_MODEL, Kind, Memory, new_id
from memcli.models import prompts
from memcli.models.llm import CHARS_PER_TOKEN, Message, is_base_model
from memcli.recall.assistant import Context, ReplyCleaner, check_question
from memcli.recall.retrieval import Recalled
from memcli.schema import iso_time
from memcli.text.chunking import chunks

log = logging.getLogger("memcli.service.chat")
"""The service's log (``memcli.transport.service``)."""

CHECK_EVERY = 0.1
"""Seconds between two checks for a Ctrl-C while the memories of a reply are recalled in a
service (``ChatSession._recalled``): a cancel is heeded within about this, whatever the
recall costs on a busy machine."""
EMPTY_RETRIES = 1
"""Times a sampled reply that came out empty is sampled again before the person is told
why it is empty (``ChatSession.respond``)."""
INTERRUPTED_MARK = "[interrupted]"
"""How a reply the user stopped (Ctrl-C) ends in the next prompts' history: stored as what
was shown, tagged ``interrupted``, it is no finished turn."""


def open_store_ahead(engine: Engine) -> threading.Thread | None:
    """Open Chroma in a thread of its own when a chat opens in a service whose store opened
    without it (``memcli.store.store_open``: it opens at the first write, or once the
    service is quiet): the chat's first turn stores the person's message, and that write
    would otherwise pay chromadb's import and Chroma's opening (a second or more on a
    quiet machine) before its reply can start. Started once the chat model is loaded, it
    runs while the person types: alongside the model's load (at load 10 on 2 cores) it
    made the chat open 1.4-3 s later, as much as it spared the first turn (store and
    recall 1.7-1.8 s before, 0.2-0.3 s after). Returns the thread; None for a store that is not a service's (opened
    whole in this process) or is open already. Nothing is raised: the first write meets
    the same fault, with its own message."""
    store = engine.store
    if not getattr(store, "resident", False) or not getattr(store, "chroma_deferred", False):
        return None

    def run() -> None:
        try:
            store.open_chroma()
        except Exception as exc:
            log.info("opening Chroma ahead of a chat's first turn failed: %s", exc)

    thread = threading.Thread(target=run, name="chat-store-ahead", daemon=True)
    thread.start()
    return thread


@dataclass
class Reply:
    """One assistant reply: its text, the memories placed in the prompt, and whether the
    user interrupted it (Ctrl-C) before it finished."""

    text: str
    memories: list[Recalled]
    interrupted: bool = False
    empty_reason: str = ""


class ChatSession:
    """One ``memcli chat`` session for one user.

    ``on_warning`` receives status messages (for example: the store was locked and a
    turn stays journaled until the next memcli stores it). ``system`` is an instruction of
    this session's own (``memcli chat --system``), placed at the end of every system
    prompt; it is kept in the session's state, not in the store.
    """

    def __init__(
        self, engine: Engine, user: str | None = None, on_warning: Callable[[str], None] | None = None, system: str = ""
    ) -> None:
        self.engine = engine
        self.user = engine.user(user)
        self.session_id = f"chat-{day_of(engine.clock())}-{new_id()[:8]}"
        self.history: list[Message] = []
        self.history_ids: list[str] = []
        # a user message's recalled memories as its prompt gave them, and their ids ("" and
        # none for a reply): they stay in the next prompts, which start as the previous did
        self.history_memories: list[tuple[str, list[str]]] = []
        self.summary = ""
        # Older turns folded into ``summary`` but still given verbatim in the prompt (before
        # ``history``), with ``earlier_summary``, the summary of what came before them: the
        # prompt keeps its start, whose evaluated state is reused, until it would not fit
        # (``_swap``). Each is (message, turn id, (memories block, memory ids)).
        self.earlier: list[tuple[Message, str, tuple[str, list[str]]]] = []
        self.earlier_summary = ""
        self.system = system.strip()
        self.resumed = False
        self.on_warning = on_warning or (lambda message: None)
        self._last_turn_at = 0.0
        self._chunk_ids: set[str] = set()
        self._said_ids: list[str] = []  # the last user message's turns (``state``'s said_ids)

    @classmethod
    def resume(
        cls, engine: Engine, user: str | None = None, on_warning: Callable[[str], None] | None = None, system: str = ""
    ) -> ChatSession:
        """The user's most recent chat session, to go on with (``memcli chat --continue``):
        its id, and its last ``history_turns`` stored turns as the verbatim history (its
        older turns come back through recall, as any memory does). A new session (with
        ``resumed`` False) when the user has no chat turn in the store; forgotten
        (archived) turns do not count."""
        session = cls(engine, user, on_warning, system)
        turns = [
            t
            for t in engine.list_memories(session.user, Kind.TURN.value, limit=0)
            if t.source.startswith("chat:") and t.session
        ]
        if not turns:
            return session
        last = turns[0].session  # newest first
        mine = [t for t in reversed(turns) if t.session == last][-engine.settings.history_turns :]
        session.session_id = last
        session.history = [
            Message(
                "assistant" if t.speaker == "assistant" else "user",
                f"{t.text} {INTERRUPTED_MARK}" if "interrupted" in t.tags else t.text,
            )
            for t in mine
        ]
        session.history_ids = [t.id for t in mine]
        session.history_memories = [("", []) for _ in mine]
        session._last_turn_at = max(t.created_at for t in mine)
        session.resumed = True
        return session

    def state(self) -> dict[str, object]:
        """The session as ``schema.ChatState`` data: what a client keeps between replies."""
        return {
            "user": self.user,
            "session_id": self.session_id,
            "model": self.engine.chat_model.name,
            "history": [
                {"role": m.role, "content": m.content, "id": i, "memories": block, "memory_ids": ids}
                for m, i, (block, ids) in zip(self.history, self.history_ids, self.history_memories)
            ],
            "summary": self.summary,
            "earlier": [
                {"role": m.role, "content": m.content, "id": i, "memories": block, "memory_ids": ids}
                for m, i, (block, ids) in self.earlier
            ],
            "earlier_summary": self.earlier_summary,
            "last_turn_at": iso_time(self._last_turn_at, "microseconds"),
            "said_ids": list(self._said_ids),
            "system": self.system,
            "resumed": self.resumed,
            "base_model": is_base_model(self.engine.chat_model),
        }

    @classmethod
    def restore(
        cls, engine: Engine, state: dict[str, object], on_warning: Callable[[str], None] | None = None
    ) -> ChatSession:
        """The session that ``state()`` described, over ``engine`` (for the next reply)."""
        session = cls(engine, str(state["user"]), on_warning, str(state.get("system") or ""))
        session.session_id = str(state["session_id"])
        session.resumed = bool(state.get("resumed"))
        history = list(state.get("history") or [])  # type: ignore[call-overload]
        session.history = [Message(str(h["role"]), str(h["content"])) for h in history]
        session.history_ids = [str(h["id"]) for h in history]
        session.history_memories = [
            (str(h.get("memories") or ""), [str(i) for i in h.get("memory_ids") or []]) for h in history
        ]
        session.summary = str(state.get("summary") or "")
        session.earlier = [
            (
                Message(str(h["role"]), str(h["content"])),
                str(h["id"]),
                (str(h.get("memories") or ""), [str(i) for i in h.get("memory_ids") or []]),
            )
            for h in list(state.get("earlier") or [])  # type: ignore[call-overload]
        ]
        session.earlier_summary = str(state.get("earlier_summary") or "")
        last = state.get("last_turn_at")
        session._last_turn_at = datetime.fromisoformat(str(last)).timestamp() if last else 0.0
        return session

    def _store_turn(self, role: str, text: str, tags: list[str] | None = None) -> Memory:
        """Store one turn: a text longer than ``MAX_CHARS`` as one turn a chunk, in order (as
        ``remember`` stores a long note), so that no memory is longer than a chunk; returns
        the first, whose id stands for the turn in the history (the others are excluded
        from this session's recall with it). The ids of a user's turn are its ``said_ids``."""
        turns = []
        for part in list(chunks(text)) or [text]:
            # Turns keep their order even when the clock stands still (--now): a millisecond apart.
            now = max(self.engine.clock(), self._last_turn_at + 0.001)
            self._last_turn_at = now
            turns.append(
                Memory(
                    id=new_id(),
                    user=self.user,
                    kind=Kind.TURN.value,
                    text=part,
                    created_at=now,
                    day=day_of(now),
                    session=self.session_id,
                    speaker=self.user if role == "user" else "assistant",
                    source=f"chat:{self.session_id}",
                    tags=tags or [],
                )
            )
        self._chunk_ids.update(t.id for t in turns[1:])
        if role == "user":
            self._said_ids = [t.id for t in turns]
        try:
            self.engine.write(turns)
        except StoreLockedError as exc:
            self.on_warning(f"{exc.message}; the turn is journaled and will be stored later")
        return turns[0]

    def respond(self, text: str, on_piece: Callable[[str], None], check: Callable[[], None] = lambda: None) -> Reply:
        """Store the user's turn, recall, stream the reply through ``on_piece``, store it.

        A KeyboardInterrupt (Ctrl-C in this process) or ``Interrupted`` (raised by
        ``on_piece``, or by ``check``, when the client cancelled or went away) at any
        point of the turn ends it there: while the user's turn is stored, that write ends
        first (a Ctrl-C is held back for it: ``deferred_interrupt``); while the memories
        are recalled, the recall is left to end on its own and nothing of it is used
        (``_recalled``); while the reply is generated, generation stops (the model's
        stream is closed). The partial reply, if any, is stored tagged ``interrupted`` and
        kept in the history, and the Reply says ``interrupted``.

        The user's turn is stored whole either way, before anything else, and kept in the
        history: what the person typed and sent is something they said (a stopped reply
        does not take it back), and it is journaled before the store has it, so no kill
        loses it either. The recalled memories are reinforced once the model has answered
        (or was stopped while answering), not when the turn was stopped before, nor when
        the reply failed.

        ``check``: raises Interrupted when the client cancelled (``memcli.transport.service``
        asks it by an event the client ignores); asked after the user's turn is stored and
        about every ``CHECK_EVERY`` seconds while the memories are recalled.

        Raises BadInputError, before anything is stored, for a message longer than
        ``memcli.recall.assistant.question_chars``."""
        check_question(text, self.engine.settings.n_ctx, "message")
        pieces: list[str] = []
        context = Context([])
        interrupted = False
        written = False
        cleaner = ReplyCleaner([])
        block, fresh = "", []
        attempts = 0
        user_turn: Memory | None = None
        try:
            with deferred_interrupt():
                settle = getattr(self.engine.chat_model, "settle", None)
                if settle is not None:
                    # the prompt's start evaluated ahead, if still going on, stops (within
                    # about llama.cpp's abort check), not to run at once with the turn's
                    # embedding and recall; a Ctrl-C meanwhile comes once the turn is stored
                    settle(heed_stop=False)
                user_turn = self._store_turn("user", text)
            check()
            context = self._recalled(text, user_turn.id, check)
            check()
            # Memories an earlier message of the conversation brought are in the prompt
            # already, with that message: only the others come with this one.
            shown = {i for _, ids in self.history_memories for i in ids} | {
                i for *_, (_, ids) in self.earlier for i in ids
            }
            fresh = [m for m in context.memories if m.id not in shown]
            block = prompts.memories_block(fresh) if fresh or not context.memories else ""
            # A sampled reply that shows nothing (all it wrote was a copied transcript line,
            # or a model server's first token ended its turn: a GGUF's cannot,
            # ``LlamaCppModel._first_token_shows``) is sampled once more: the next draw
            # differs, and the prompt is evaluated already. Greedy decoding would only
            # repeat it.
            draws = EMPTY_RETRIES + 1 if self.engine.settings.temperature > 0 else 1
            while attempts < draws:
                attempts += 1
                # What the model writes is shown through the cleaner: no copied transcript line,
                # no citation of a memory that is not in the prompt.
                cleaner = ReplyCleaner(context.memories)
                cleaner.known += sorted(shown)
                with contextlib.closing(self._generate(text, context, block)) as stream:
                    for piece in self._cleaned(stream, cleaner):
                        written = True
                        if not pieces:
                            piece = piece.lstrip()
                            if not piece:
                                continue
                        on_piece(piece)
                        pieces.append(piece)  # after on_piece: a piece the client never got is not stored
                if "".join(pieces).strip():
                    break
                check()
        except (KeyboardInterrupt, Interrupted):
            if user_turn is None:  # a Ctrl-C before the write began (a few instructions): nothing was stored
                raise
            interrupted = True
        assert user_turn is not None  # stored, or the Ctrl-C was raised again above
        try:
            self.engine.reinforce_recalled(context.recalled)
        except StoreLockedError as exc:
            self.on_warning(f"{exc.message}; the memories recalled for this reply are not reinforced")
        reply = "".join(pieces).strip()
        self.history.append(Message("user", text))
        self.history_ids.append(user_turn.id)
        self.history_memories.append((block, [m.id for m in fresh]))
        if reply:
            tags = (["interrupted"] if interrupted else []) + (
                [BASE_MODEL] if is_base_model(self.engine.chat_model) else []
            )
            turn = self._store_turn("assistant", reply, tags)
            # the next prompts show it cut short, not as a finished turn to continue from
            self.history.append(Message("assistant", f"{reply} {INTERRUPTED_MARK}" if interrupted else reply))
            self.history_ids.append(turn.id)
            self.history_memories.append(("", []))
        if not interrupted:  # the prompt comes back at once after a Ctrl-C: the next whole reply folds
            self._fold_history()
        return Reply(
            reply,
            context.recalled,
            interrupted,
            "" if reply or interrupted else self._why_empty(written, cleaner, attempts),
        )

    def _cleaned(self, stream: Iterable[str], cleaner: ReplyCleaner) -> Iterator[str]:
        """``stream``'s pieces as ``cleaner`` shows them; the model's stream is left once the reply is over."""
        for piece in stream:
            shown = cleaner.feed(piece)
            if shown:
                yield shown
            if cleaner.ended:
                return
        rest = cleaner.finish()
        if rest:
            yield rest

    def _why_empty(self, written: bool, cleaner: ReplyCleaner, tried: int) -> str:
        """Why a reply came out empty after ``tried`` draws, in one line for the person."""
        model = "the embedded 270M base model" if is_base_model(self.engine.chat_model) else "the model"
        if cleaner.dropped:
            return (
                f"{model} wrote only {cleaner.dropped[0]}, which is not shown; a base model continues a transcript "
                "rather than answering: point the model setting at an instruction-tuned GGUF (memcli config set model FILE)"
            )
        why = (
            "a base model served through a chat template often does"
            if getattr(self.engine.chat_model, "uses_chat_template", False)
            else "its first words ended its turn: a blank line or the next speaker's name"
        )
        twice = " twice" if tried > 1 else ""
        return (
            f"{model} returned an empty reply{twice} ({why}); "
            "point the model setting at an instruction-tuned GGUF (memcli config set model FILE)"
        )

    def _recalled(self, text: str, user_turn_id: str, check: Callable[[], None]) -> Context:
        """``_context``, stopped by a Ctrl-C within about ``CHECK_EVERY`` seconds.

        In the main thread (a chat in this process) a Ctrl-C raises KeyboardInterrupt
        wherever the recall is, which stops it (it only reads). Elsewhere (a service's
        request thread) no signal comes, and the client's cancel can only be asked: the
        recall then runs in a thread of its own while this one asks ``check`` every
        ``CHECK_EVERY`` seconds, and a cancel leaves that recall to end by itself, unused
        (it holds the store only as a read does; the next request waits for it)."""
        if threading.current_thread() is threading.main_thread():
            return self._context(text, user_turn_id)
        found: list[Context] = []
        failed: list[BaseException] = []

        def recall() -> None:
            try:
                found.append(self._context(text, user_turn_id))
            except BaseException as exc:  # given to the waiting thread, which raises it
                failed.append(exc)

        worker = threading.Thread(target=recall, name="chat-recall", daemon=True)
        worker.start()
        while True:
            worker.join(CHECK_EVERY)
            if not worker.is_alive():
                break
            check()
        if failed:
            raise failed[0]
        return found[0]

    def _context(self, text: str, user_turn_id: str) -> Context:
        """The memories for the reply to ``text``: recalled for it and the user's previous
        message, but none the prompt gives verbatim already (this session's turns in its
        history and its earlier turns: ``_in_prompt``); none (with a warning) when the
        store is locked."""
        previous = next((m.content for m in reversed(self.history) if m.role == "user"), "")
        query = f"{previous}\n{text}" if previous else text
        try:
            context = self.engine.context(
                query,
                self.user,
                exclude={*self.history_ids, *(i for _, i, _ in self.earlier), *self._chunk_ids, user_turn_id},
                conversation=[*self.history, Message("user", text)],
            )
        except StoreLockedError as exc:
            self.on_warning(f"{exc.message}; replying without recalled memories")
            return Context([])
        context.recalled = [r for r in context.recalled if not self._in_prompt(r.memory)]
        return context

    def _in_prompt(self, memory: Memory) -> bool:
        """Whether ``memory`` is a turn of this session that the prompt gives verbatim
        already, in its history or its earlier (folded) turns: a chunk of a long turn (whose
        id only the request that stored it knew) or a turn of a resumed session. Recalled as
        a memory too, it would be in the prompt twice, taking its room twice; the turns the
        session knows by id are excluded from recall (``_context``), this finds the others
        by text."""
        text = memory.text.strip()
        if memory.session != self.session_id or memory.kind != Kind.TURN.value or not text:
            return False
        return any(text in m.content for m in [*self.history, *(m for m, _, _ in self.earlier)])

    def _generate(self, text: str, context: Context, block: str) -> Generator[str, None, None]:
        """The reply's pieces as the model streams them (``block``: the recalled memories
        given with ``text``); closing this generator closes the model's stream, which stops
        generation and frees the model for the next request (``resources.SharedChatModel``).

        The prompt starts as the previous turn's did, and that whole previous prompt is
        its start: the system text, then each earlier message with the memories it was
        given, then this message with its memories (``prompts.chat_messages``); llama.cpp
        evaluates only what follows the previous prompt (the reply and this message). Turns
        folded into the session summary stay in the prompt verbatim (``earlier``) until
        it would not fit; then the summary takes their place (``_swap``), opening the first
        message after the system text, which stays the same for the whole session. When the
        whole would still not fit the context, the oldest messages' memories are left out
        (``_fitting``)."""
        system = self._system(context)
        self._swap(system, text, block)
        messages = self._messages(system, text, block)
        settings = self.engine.settings
        yield from self.engine.chat_model.stream(messages, settings.max_tokens, settings.temperature)

    def _system(self, context: Context) -> str:
        """The system text of this session's prompts (``prompts.system_prompt``, the
        recalled memories apart): the same from turn to turn while the consolidated
        memories and the day are."""
        system = prompts.system_prompt(
            self.user,
            self.engine.today(),
            context.memories,
            context.portrait,
            context.events,
            running=context.running,
            memories_apart=True,
        )
        if self.system:
            system += f"\n\nInstruction from {self.user} for this conversation: {self.system}"
        return system

    def _messages(self, system: str, text: str, block: str) -> list[Message]:
        """The chat prompt of ``text`` (with ``block``, its recalled memories) after
        ``system``, the summary the prompt gives (``earlier_summary``), the earlier turns
        and the history, each user message with its memories (``prompts.chat_messages``)."""
        settings = self.engine.settings
        history = self._fitting(system, text, block, settings.n_ctx - settings.max_tokens)
        return prompts.chat_messages(system, history, text, block, self.earlier_summary)

    def _size(self, system: str, text: str, block: str) -> int:
        """The characters of the prompt (``_messages``) with every message's memories."""
        summary = self.earlier_summary.strip()
        turns = [*self.earlier, *zip(self.history, self.history_ids, self.history_memories)]
        return (
            len(system)
            + (len(prompts.EARLIER.format(summary=summary)) + 2 if summary else 0)
            + len(block)
            + len(text)
            + sum(len(m.content) + 16 + len(b) + 2 for m, _, (b, _) in turns)
        )

    def _swap(self, system: str, text: str, block: str) -> None:
        """When the prompt would not fit the context (``n_ctx`` less ``max_tokens``, at
        ``CHARS_PER_TOKEN`` characters a token) with the earlier turns, give the summary
        instead: the turns go, ``earlier_summary`` becomes ``summary``. The prompt's
        start changes only then, where its evaluated state could not be kept anyway
        (a fold that swapped the summary in at once, as before, made a turn evaluate the
        whole prompt again every few turns)."""
        settings = self.engine.settings
        if self.earlier and self._size(system, text, block) > (settings.n_ctx - settings.max_tokens) * CHARS_PER_TOKEN:
            self.earlier, self.earlier_summary = [], self.summary

    def next_prompt_start(self) -> list[Message]:
        """The messages the next turn's prompt starts with: the system text and the history
        (with the session summary), as ``_generate`` will give them, without the next
        message. The model can evaluate them before that message comes (``prime``)."""
        system = self._system(self.engine.consolidated(self.user))
        earlier, summary = self.earlier, self.earlier_summary
        try:
            self._swap(system, "", "")  # as the next turn will, at the least
            return self._messages(system, "", "")[:-1]
        finally:
            self.earlier, self.earlier_summary = earlier, summary

    def prime(self, stop: Callable[[], bool] | None = None) -> threading.Thread | None:
        """Have the chat model evaluate the start of the next turn's prompt
        (``next_prompt_start``) in a thread of its own, while the person types: when the
        session opens (the system text) and after each reply (the reply as the next prompt
        gives it; after the summary took the place of older turns, the conversation after
        the system text). The next turn then evaluates only what follows. A session's
        opening (the system text, before any turn) is kept by the model for the first turn
        of the next chats that open with the same text. ``stop()`` True ends it (it is also
        ended when the process exits). Returns the thread; None when the model evaluates
        nothing ahead (a model server, a test's stand-in)."""
        model = self.engine.chat_model
        start = getattr(model, "start_prime", None)  # ``resources.SharedChatModel``'s
        if start is None or not getattr(model, "primes", False):
            return None
        main = threading.main_thread()

        def stopped() -> bool:
            # a process that exits (its main thread done) does not wait for the evaluation
            return not main.is_alive() or (stop is not None and stop())

        opening = not self.history and not self.earlier  # the system text alone: kept for the next chats
        return start(self.next_prompt_start(), stopped, opening=opening)  # type: ignore[no-any-return]

    def _fitting(self, system: str, text: str, block: str, tokens: int) -> list[Message]:
        """The earlier turns and the history with the memories each user message was given,
        as long as the prompt (``_size``) is estimated to fit ``tokens``
        (``CHARS_PER_TOKEN`` characters a token); past that, the oldest messages go
        without theirs."""
        turns = [*self.earlier, *zip(self.history, self.history_ids, self.history_memories)]
        blocks = [b for _, _, (b, _) in turns]
        size = self._size(system, text, block) - sum(len(b) + 2 for b in blocks)
        for i in range(len(blocks)):
            if size + sum(len(b) + 2 for b in blocks[i:]) <= tokens * CHARS_PER_TOKEN:
                break
            blocks[i] = ""
        return [Message(m.role, prompts.with_memories(b, m.content)) for (m, _, _), b in zip(turns, blocks)]

    def _fold_history(self) -> None:
        """Keep at most ``history_turns`` turns in the history: past that, the older ones fold
        into the session summary until about half of them are left (whole exchanges), and
        calls the model to summarize every few turns only. The folded turns stay in the
        prompt, verbatim, as ``earlier`` turns, until it would not fit (``_swap``): the
        prompt's start stays the same, and the model evaluates only the new turns."""
        keep = self.engine.settings.history_turns
        if len(self.history) <= keep:
            return
        cut = len(self.history) - (keep // 2 - keep // 2 % 2)  # whole exchanges left
        dropped = self.history[:cut]
        self.earlier += list(zip(dropped, self.history_ids[:cut], self.history_memories[:cut]))
        self.history, self.history_ids = self.history[cut:], self.history_ids[cut:]
        self.history_memories = self.history_memories[cut:]
        self.summary = self.engine.summarize(self.summary, dropped)
