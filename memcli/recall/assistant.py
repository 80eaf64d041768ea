"""The assistant: what a chat or ask prompt carries from memory, and the answers built
from it (MemoryBank §2.2: relevant memories, the global portrait and the global event
summary in the prompt; Landwehr et al. 2023: the query creator, and answers that cite the
memories they used).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from pydantic import BaseModel, Field

from memcli.dates import spoken_date
from memcli.errors import BadInputError, InvalidOutputError, ModelError
from memcli.memory import Kind, Memory, singleton_id
from memcli.models import prompts
from memcli.models.llm import CHARS_PER_TOKEN, ChatModel, Message, complete, structured_output
from memcli.recall import answers
from memcli.recall.retrieval import Ranking, Recalled, Recaller

if TYPE_CHECKING:
    from memcli.config import Settings
    from memcli.store.store import MemoryStore


class MemoryOwner(Protocol):
    """What the assistant needs of the library object (``memcli.library.engine.Engine`` is one)."""

    store: MemoryStore
    settings: Settings
    clock: Callable[[], float]

    @property
    def chat_model(self) -> ChatModel: ...

    @property
    def recaller(self) -> Recaller: ...

    def flush_pending(self) -> set[str]: ...

    def reinforce(self, memories: Sequence[Memory], now: float | None = None) -> None: ...


class SearchQuery(BaseModel):
    """What the query creator returns."""

    query: str = Field(min_length=3, max_length=200)


SEARCH_QUERY_TOKENS = 90


def question_chars(n_ctx: int) -> int:
    """The longest question (``ask``) or chat message, in characters, for a chat model of
    ``n_ctx`` tokens of context: half the window at ``CHARS_PER_TOKEN`` characters a token
    (6,144 characters for the default 4,096), the other half left for the memories, the
    summaries, the conversation and the reply. A longer one is refused before anything is
    recalled or stored (``check_question``)."""
    return CHARS_PER_TOKEN * n_ctx // 2


def check_question(text: str, n_ctx: int, what: str = "question") -> None:
    """Refuse a ``what`` ("question", "message") longer than ``question_chars(n_ctx)``:
    BadInputError saying both lengths and what to do."""
    limit = question_chars(n_ctx)
    if len(text) > limit:
        raise BadInputError(
            f"the {what} is {len(text):,} characters; with the chat model's context of {n_ctx:,} tokens (n_ctx) a {what} "
            f"takes at most {limit:,}: shorten it, or store a long text with memcli remember -"
        )


@dataclass
class Context:
    """What a chat or ask prompt carries besides the conversation: recalled memories, and
    the global portrait, global event summary and running memory ("" until consolidated)."""

    recalled: list[Recalled]
    portrait: str = ""
    events: str = ""
    running: str = ""

    @property
    def memories(self) -> list[Memory]:
        """The recalled memories themselves."""
        return [r.memory for r in self.recalled]


@dataclass
class Answer:
    """An answer to ``ask``: its text, the memories placed in the prompt (or quoted from),
    the ids it cited, what wrote it (``answered_by``: "llm" or "extractive"), and whether
    it answers (``answered``: False for "I don't find that in your memories", or a model's
    reply that says it does not know: ``says_not_found``)."""

    answer: str
    memories: list[Recalled]
    cited: list[str] = field(default_factory=list)
    answered_by: str = "llm"
    answered: bool = True


_NOT_FOUND = re.compile(
    r"\b(I\s+(don't|do not|can't|cannot)\s+(find|know|see|tell|recall)|no\s+(information|memory|memories|record)|"
    r"not\s+(mentioned|in your memories|sure))\b|没有找到|不知道|没有提到|没有相关",
    re.IGNORECASE,
)


def says_not_found(text: str) -> bool:
    """Whether a chat model's answer says that it does not find or know the answer."""
    return bool(_NOT_FOUND.search(text))


def cited_ids(text: str, memories: Sequence[Memory]) -> list[str]:
    """Ids of ``memories`` that ``text`` cites as ``[abcd1234]`` (prefix of the id), in order."""
    wanted = {prompts.cite(m): m.id for m in memories}
    out: list[str] = []
    for token in re.findall(r"\[([0-9a-f]{4,16})\]", text):
        for short, full in wanted.items():
            if (full.startswith(token) or short.startswith(token)) and full not in out:
                out.append(full)
    return out


_DATED_HEADER = re.compile(
    r"[ \t*]*(?:\[[0-9a-fA-F]{4,16}\][ \t]*)?\d{4}-\d{1,2}-\d{1,2}(?:[ T]\d{1,2}:\d{2}(?::\d{2})?)?[ \t]+"
    r"(?:([^\n:\[\]]{1,40}):[ \t]*)?"
)
"""The head of a transcript or memory line as the prompt lists memories (``[id] 2018-03-09
demo: ...``), which a base model copies ("2018-3-9 demo: I was working in a small studio.")."""
_CITATION = re.compile(r"\[([0-9a-fA-F]{4,16})\]")
ASSISTANT_NAMES = ("assistant", "memcli", "ai", "bot")
"""Speaker labels that name the assistant itself: a copied header with one of them is cut
off and the line kept; with any other speaker (the user, someone they spoke of) the model
is writing someone else's line, not its reply, and the line goes."""


class ReplyCleaner:
    """What a chat model writes, cleaned as it streams (``feed`` each piece, then
    ``finish``): a line copied in the shape of a transcript or memory line (a date and a
    speaker, ``2018-3-9 demo: ...``) is not shown, its header alone when the speaker is the
    assistant; a cited id ``[abcd1234]`` that is not among ``memories`` (the recalled memories
    in the prompt) is dropped, never shown. Text is held back only while it may still turn
    out to be one of those (the start of a line, an open bracket). ``ended``: a later line
    began a transcript line, so the reply is over; ``dropped``: what was not shown and why."""

    def __init__(self, memories: Sequence[Memory]) -> None:
        self.known = [m.id for m in memories]
        self.buffer = ""
        self.line_start = True
        self.dropping_line = False
        self.ended = False
        self.shown = False
        self.trim = False
        self.spaces = ""  # spaces held back: they go with a citation that is dropped
        self.dropped: list[str] = []

    def _known(self, token: str) -> bool:
        token = token.lower()
        return any(full.startswith(token) for full in self.known)

    def feed(self, piece: str) -> str:
        """The part of the text so far that can be shown now (may be empty)."""
        if self.ended:
            return ""
        self.buffer += piece
        return self._drain(final=False)

    def finish(self) -> str:
        """The rest, once the model has stopped."""
        if self.ended:
            return ""
        return self._drain(final=True)

    def _drain(self, final: bool) -> str:
        out: list[str] = []
        while self.buffer and not self.ended:
            if self.dropping_line:
                newline = self.buffer.find("\n")
                if newline < 0:
                    if final:
                        self.buffer = ""
                    break
                self.buffer = self.buffer[newline + 1 :]
                self.dropping_line, self.line_start = False, True
                continue
            if self.line_start:
                newline = self.buffer.find("\n")
                head = self.buffer if newline < 0 else self.buffer[:newline]
                found = _DATED_HEADER.match(head)
                if found and (newline >= 0 or final or (found.group(1) is not None and len(head) > found.end())):
                    speaker = (found.group(1) or "").strip().lower()
                    if speaker in ASSISTANT_NAMES:
                        self.dropped.append("a transcript header")
                        self.buffer = self.buffer[found.end() :]
                        self.line_start = False
                        continue
                    if self.shown or "".join(out).strip():
                        self.ended = True  # a later line starts the next turn of a transcript
                        break
                    self.dropped.append("a transcript line")
                    self.dropping_line = True
                    continue
                if not found and (newline >= 0 or final or not _could_be_header(head)):
                    self.line_start = False
                    continue
                break  # wait: the line may still become a dated header
            bracket = self.buffer.find("[")
            newline = self.buffer.find("\n")
            stop = min(i for i in (bracket, newline, len(self.buffer)) if i >= 0)
            if self.trim:
                self.trim = False
                if self.buffer[0] in " .,;:!?\n":
                    self.spaces = ""
            if stop:
                text = self.buffer[:stop]
                kept = text.rstrip(" ")
                if kept:
                    out.append(self.spaces + kept)
                    self.spaces = ""
                self.spaces += text[len(kept) :]
                self.buffer = self.buffer[stop:]
                continue
            if self.buffer[0] == "\n":
                out.append(self.spaces + "\n")
                self.spaces = ""
                self.buffer = self.buffer[1:]
                self.line_start = True
                continue
            found = _CITATION.match(self.buffer)
            if found:
                if self._known(found.group(1)):
                    out.append(self.spaces + found.group(0))
                    self.spaces = ""
                else:
                    self.dropped.append(f"a citation of no recalled memory {found.group(0)}")
                    self.trim = True  # "in May [52a64b1]." shows "in May."
                self.buffer = self.buffer[found.end() :]
                continue
            if not final and re.fullmatch(r"\[[0-9a-fA-F]{0,16}", self.buffer):
                break  # wait: may still close as a citation
            out.append(self.spaces + "[")
            self.spaces = ""
            self.buffer = self.buffer[1:]
        text = "".join(out)
        self.shown = self.shown or bool(text.strip())
        return text


def _could_be_header(head: str) -> bool:
    """Whether ``head``, the start of a line, may still become a dated header once more
    text arrives: nothing yet, or a partial ``[id]``, then a partial date, then a speaker."""
    return bool(_PARTIAL_HEADER.fullmatch(head))


_PARTIAL_HEADER = re.compile(
    r"[ \t*]*(?:\[[0-9a-fA-F]{0,16}\]?[ \t]*)?"
    r"(?:\d{1,4}(?:-(?:\d{1,2}(?:-(?:\d{1,2}(?:[ T][\d:]{0,8})?(?:[ \t]+[^\n:\[\]]{0,40})?)?)?)?)?)?"
)


def clean_reply(text: str, memories: Sequence[Memory]) -> str:
    """``text`` as ``ReplyCleaner`` shows it, whole (an ``ask`` answer from the chat model)."""
    cleaner = ReplyCleaner(memories)
    return (cleaner.feed(text) + cleaner.finish()).strip()


class Assistant:
    """Builds chat and ask prompts from ``owner``'s memory and answers with its chat model."""

    def __init__(self, owner: MemoryOwner) -> None:
        self.owner = owner

    def consolidated(self, user: str) -> Context:
        """The consolidated memories every chat and ask prompt carries (empty until
        ``memcli consolidate`` has written them); ``recalled`` is left empty."""
        kinds = (Kind.PORTRAIT_GLOBAL, Kind.EVENT_GLOBAL, Kind.RUNNING_SUMMARY)
        with self.owner.store.transaction():
            found = {m.kind: m.text for m in self.owner.store.get_many([singleton_id(kind, user) for kind in kinds])}
        return Context([], *(found.get(kind.value, "") for kind in kinds))

    def search_query(self, conversation: Sequence[Message], user: str) -> str:
        """The query creator (Landwehr et al. 2023): a search query the chat model writes
        for the last message of ``conversation`` (``user``'s chat, the last 4 messages), or
        "" when its output stays invalid."""
        content = "\n".join(f"{user if m.role == 'user' else m.role}: {m.content}" for m in conversation[-4:])
        messages = prompts.consolidation_messages(prompts.QUERY_CREATOR, "query", content)
        try:
            return structured_output(self.owner.chat_model, messages, SearchQuery, SEARCH_QUERY_TOKENS).query
        except InvalidOutputError:
            return ""

    def context(
        self, query: str, user: str, exclude: set[str] | None = None, conversation: Sequence[Message] = ()
    ) -> Context:
        """What a chat or ask prompt carries: the memories recalled for ``query``, the
        global portrait, the global event summary and the running memory. The recalled
        memories are not counted as recalled here: the caller does it once its answer
        succeeded (``reinforce``), so that a command that fails strengthens nothing.

        ``exclude`` drops memories already in the prompt verbatim (this session's recent
        turns). With the ``query_creator`` setting, the chat model first turns
        ``conversation`` (or the query) into a search query that is added to ``query``.
        """
        exclude = exclude or set()
        k = self.owner.settings.recall_k
        if k:
            self.owner.check_embedder()  # before the chat model writes a search query for nothing
        if self.owner.settings.query_creator and k:
            query = f"{query}\n{self.search_query(conversation or [Message('user', query)], user)}".strip()
        vector = self.owner.recaller.encode(query) if k and query.strip() else None
        now = self.owner.clock()
        parsed = (
            self.owner.recaller.parse(query, now) if vector is not None else None
        )  # its first call loads dateparser
        self.owner.flush_pending()
        if k:
            self.owner.recaller.prepare(user)
        with self.owner.store.transaction():
            ranking = Ranking.from_settings(self.owner.settings, user)
            recalled = (
                []
                if k == 0
                else self.owner.recaller.recall(
                    query, user, k=k + len(exclude), ranking=ranking, now=now, vector=vector, parsed=parsed
                )
            )
            recalled = [r for r in recalled if r.memory.id not in exclude][:k]
            if k:
                recalled = self.with_day_summary(query, user, recalled, now)
            context = self.consolidated(user)
        context.recalled = recalled
        return context

    def with_day_summary(self, question: str, user: str, recalled: list[Recalled], now: float) -> list[Recalled]:
        """``recalled`` with the event summary of the day a whole-day question names ("What
        did we talk about on May 2nd?", ``answers.asks_whole_day``) put first when there is
        one (kind ``event_daily``, written by ``consolidate``): the day is what is asked, and
        recall, ranking single memories, may not bring its summary. The caller holds the
        store transaction."""
        if not answers.asks_whole_day(question):
            return recalled
        summaries = self.owner.store.memories(user=user, kind=Kind.EVENT_DAILY.value, archived=False)
        found = answers.day_summaries(question, summaries, now)
        if not found:
            return recalled
        first = found[0]
        rest = [r for r in recalled if r.memory.id != first.id]
        top = max((r.score for r in recalled), default=0.0)
        return [Recalled(first, top, top, 0.0, {"day": 1.0}), *rest][: max(len(recalled), 1)]

    def reinforce(self, recalled: Sequence[Recalled]) -> None:
        """Count the memories of a prompt that was answered as recalled, now (MemoryBank: a
        memory recalled into a prompt is strengthened). They are read again under the store
        lock, so that a change made meanwhile (an edit, a delete) is kept."""
        if not recalled:
            return
        with self.owner.store.transaction():
            self.owner.reinforce(self.owner.store.get_many([r.memory.id for r in recalled]), self.owner.clock())

    def today(self) -> str:
        """Today's date as the prompt shows it (``dates.spoken_date``), e.g. ``Monday 8 May 2023``."""
        return spoken_date(self.owner.clock())

    def answers(self) -> str:
        """How ``ask`` answers: the ``answers`` setting, or for "auto", "extractive" when the
        chat model has no chat template (a base model, such as the embedded Gemma 3 270M,
        cannot answer from a prompt of memories), else "llm" (the same test as the
        ``consolidation`` setting's "auto"; a model that does not say is taken for a chat
        model). "auto" loads the chat model."""
        setting = self.owner.settings.answers
        if setting == "auto":
            setting = "llm" if getattr(self.owner.chat_model, "uses_chat_template", True) else "extractive"
        return setting

    def ask(self, question: str, user: str, reinforce: bool = True) -> Answer:
        """Answer ``question`` from recalled memories, citing the ids of those it used: with
        the chat model, or extractively (``memcli.recall.answers``: the recalled sentence that
        answers, or that none does), as ``answers`` decides.

        With ``reinforce``, the recalled memories are counted as recalled once the answer is
        there (``Assistant.reinforce``), so that a command that fails strengthens nothing;
        an evaluation passes False, so that its questions do not change each other's recall.

        Raises BadInputError for an empty question or one longer than ``question_chars``
        (before anything is recalled), ModelError when the model cannot load or gives an
        empty answer.
        """
        question = question.strip()
        if not question:
            raise BadInputError("the question is empty")
        check_question(question, self.owner.settings.n_ctx)
        path = self.answers()
        context = self.context(question, user)
        found = self.answer(question, user, context, path)
        if not found.answer:
            raise ModelError(
                f"the chat model {self.owner.chat_model.name} gave no answer (an empty reply); try again or use a more capable model"
            )
        if reinforce:
            self.reinforce(context.recalled)
        return found

    def answer(self, question: str, user: str, context: Context, path: str) -> Answer:
        """The answer to ``question`` of ``user`` from ``context`` (what ``context`` gives, or
        any memories put in its ``recalled``): extractive (``path`` "extractive") or by the
        chat model from the ask prompt (``ask_messages``), at the ``max_tokens`` and
        ``temperature`` settings; its text may be empty (the model said nothing).

        Raises ModelError when the model cannot load or fails.
        """
        if path == "extractive":
            similarity = {r.memory.id: r.similarity for r in context.recalled}
            found = answers.answer(question, context.memories, user, self.owner.clock(), similarity)
            return Answer(found.text, context.recalled, found.cited, "extractive", found.answered)
        text = complete(
            self.owner.chat_model,
            self.ask_messages(question, user, context),
            self.owner.settings.max_tokens,
            self.owner.settings.temperature,
        )
        text = clean_reply(text, context.memories)
        return Answer(text, context.recalled, cited_ids(text, context.memories), answered=not says_not_found(text))

    def ask_messages(self, question: str, user: str, context: Context) -> list[Message]:
        """The ask prompt: the system text (instructions, today, ``context``) and the question."""
        system = prompts.system_prompt(
            user, self.today(), context.memories, context.portrait, context.events, running=context.running
        )
        return prompts.chat_messages(system, [], question)

    def summarize(self, previous: str, turns: Sequence[Message]) -> str:
        """Fold chat turns into a short session summary with the chat model (bounded length)."""
        return complete(self.owner.chat_model, prompts.summarize_messages(previous, turns), 96, 0.2)
