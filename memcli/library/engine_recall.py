"""The engine's recall and answers: ranked recall with reinforcement (MemoryBank §2.3), the
context and answer of a question, and shell completions (``memcli.library.engine.Engine``)."""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import TYPE_CHECKING

from memcli.dates import parse_day, parse_since
from memcli.errors import (
    BadInputError,
    UsageError,
)
from memcli.memory import KIND_VALUES, Memory
from memcli.models.llm import Message
from memcli.store.candidates import WHAT
from memcli.store.space import ROOM_PER_MEMORY

if TYPE_CHECKING:
    from memcli.recall.assistant import Answer, Assistant, Context
    from memcli.recall.changes import Changes
    from memcli.recall.retrieval import Recalled


class RecallWork:
    """The recall and answer work of ``Engine``."""

    def recall(
        self,
        query: str,
        user: str | None = None,
        k: int = 10,
        kind: str | None = None,
        since: str | float | None = None,
        reinforce: bool = True,
        sample: bool = False,
        seed: int | None = None,
        tags: Sequence[str] = (),
        at: str | None = None,
    ) -> list[Recalled]:
        """The ``k`` memories most relevant to ``query``, ranked (see ``retrieval``).

        ``at``: a date (as ``--since`` takes them): recall as of that day, what was learned
        by its end and the graph's relations that held then (``Recaller.recall``).

        ``reinforce``: count the returned memories as recalled (strength up, clock reset).
        ``sample``: roulette-wheel selection among the top 3k candidates by score
        (``seed`` makes it reproducible). ``tags``: only memories that carry every one of
        them. Raises UsageError for an unknown kind, k < 1, or an unreadable ``since`` date;
        NotFoundError for a user without memories in a store where others have some
        (``known_user``, as ``ask``).
        """
        if kind is not None and kind not in KIND_VALUES:
            raise UsageError(f"unknown kind {kind!r}; choose one of {', '.join(KIND_VALUES)}")
        if k < 1:
            raise UsageError("-k must be at least 1")
        now = self.clock()
        # heavy: recall reads names and dates (memcli.text.entities compiles its patterns at import)
        from memcli.recall.retrieval import Ranking, roulette, without_repeated_lines

        since_ts = parse_since(since, now) if isinstance(since, str) else since
        as_of = parse_day(at, "--at", now)
        if not query.strip():
            raise BadInputError("the query is empty")
        user = self.known_user(user)  # a mistyped --user is not found, as ask says (exit 6)
        self.check_embedder()
        # What loads a model or embeds (the query and what it says, journaled memories,
        # windows left to fill) runs before the store is taken: other memcli processes wait on it.
        vector = self.recaller.encode(query)
        parsed = self.recaller.parse(query, now)
        self.flush_pending()
        self.recaller.prepare(user)
        with self.store.transaction():
            ranking = Ranking.from_settings(self.settings, user)
            hits = self.recaller.recall(
                query,
                user,
                k=3 * k if sample else k,
                kind=kind,
                since=since_ts,
                ranking=ranking,
                now=now,
                vector=vector,
                trim=not sample,
                tags=tags,
                parsed=parsed,
                at=as_of,
            )
            if sample:
                hits = without_repeated_lines(roulette(hits, k, random.Random(seed)), k)
            if reinforce:
                self.reinforce([hit.memory for hit in hits], now)
        return hits

    def reinforce(self, memories: Sequence[Memory], now: float | None = None) -> None:
        """See ``Changes.reinforce``. In a read-only store (``MemoryStore.read_only``), or
        on a device without room for it (``MemoryStore.room_error``, or a write that meets
        a full device), the memories are not reinforced, and the store's ``notice`` says so:
        a recall reads on."""
        if not memories:
            return
        if self.store.read_only and not self.store.full_reason:
            self.store.notice("read-only store: recall not reinforced")
            return
        with self.store.transaction():
            refused = self.store.room_error(ROOM_PER_MEMORY * len(memories))
            if refused is not None:
                self.store.notice(f"{refused.message.split(';')[0].split(': ')[0]}: recall not reinforced")
                return
            with self.store.optional_write("recall not reinforced"):
                self.changes.reinforce(memories, now)

    @property
    def changes(self) -> Changes:
        """What changes stored memories: reinforcement, pins, feedback, forgetting,
        restoring, deleting (``memcli.recall.changes``)."""
        # heavy: what a text states (memcli.text.updates compiles its patterns at import), which
        # a list, show or stats never reads
        from memcli.recall.changes import Changes

        return Changes(self.store, self.settings, self.clock)

    @property
    def assistant(self) -> Assistant:
        """What builds chat and ask prompts from memory and answers (``memcli.recall.assistant``)."""
        # heavy: the extractive answers (memcli.recall.answers compiles its patterns at import)
        from memcli.recall.assistant import Assistant

        return Assistant(self)

    def context(
        self, query: str, user: str, exclude: set[str] | None = None, conversation: Sequence[Message] = ()
    ) -> Context:
        """See ``Assistant.context``."""
        return self.assistant.context(query, user, exclude, conversation)

    def reinforce_recalled(self, recalled: Sequence[Recalled]) -> None:
        """See ``Assistant.reinforce``."""
        self.assistant.reinforce(recalled)

    def ask(self, question: str, user: str | None = None) -> Answer:
        """See ``Assistant.ask``; ``user`` must have memories (``known_user``: raises
        NotFoundError)."""
        return self.assistant.ask(question, self.known_user(user))

    def completions(self, what: str, prefix: str = "", user: str | None = None) -> list[tuple[str, str]]:
        """Shell completions of ``prefix`` as (value, help): memory ids, users or kinds
        (``what``), from the recall index alone (no model is touched). Raises UsageError
        for another ``what``."""
        if what not in WHAT:
            raise UsageError(f"cannot complete {what!r}; choose one of {', '.join(WHAT)}")
        with self.store.transaction():
            return self.store.sidecar.completions(what, prefix, user)
