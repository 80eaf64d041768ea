"""What consolidation's steps share: the report of a run, its plan, the owner of the memories it
reads and writes (``MemoryOwner``), the bounds on what a model may write, and the transcript
lines a prompt is made of (``memcli.consolidation.consolidate.Consolidator``)."""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Protocol

from memcli.consolidation.graph_memory import GraphReport
from memcli.consolidation.model_output import (
    FACT_CHARS,
    PORTRAIT_CHARS,
    RUNNING_SENTENCES,
    SENTENCE_CHARS,
    SUMMARY_CHARS,
)
from memcli.dates import day_of, spoken_date
from memcli.memory import ASSISTANT, Kind, Memory
from memcli.models.llm import CHARS_PER_TOKEN, ChatModel
from memcli.store.sidecar import SKIPPED
from memcli.text import extractive

if TYPE_CHECKING:
    from memcli.config import Settings
    from memcli.models.embedding import Embedder
    from memcli.store.store import MemoryStore


class MemoryOwner(Protocol):
    """What consolidation needs of the library object (``memcli.library.engine.Engine`` is one): the
    store, the settings, the models, the clock, and the journal to store first."""

    store: MemoryStore
    settings: Settings
    clock: Callable[[], float]

    @property
    def embedder(self) -> Embedder: ...

    @property
    def chat_model(self) -> ChatModel: ...

    def flush_pending(self) -> set[str]: ...

    def initial_strength(self, memory: Memory) -> float: ...


STAGES = ("day", "session", "fact", "global")
"""Consolidation progress is kept per turn for the first three stages, and per daily
summary or portrait for "global" (folded into the global summary and portrait)."""


GLOBAL_LINES = 20
"""Lines an extractive global event summary or portrait keeps."""


GLOBAL_TOPICS = 6
"""Topics on an extractive global portrait's "Interests:" line."""


CONTEXT_MESSAGES = 10
"""Mem0's m: the last 10 messages are the context of fact extraction."""


SIMILAR_FACTS = 10
"""Mem0's s: the 10 most similar facts are shown when deciding ADD/UPDATE/DELETE/NOOP."""


RELATED_SIMILARITY = 0.5
"""Cosine similarity from which an existing fact is shown to the model as possibly
affected. Below it a new fact is simply added: a weak model must not get the chance to
UPDATE or DELETE a fact that has nothing to do with what was said."""


MAX_FACTS = 2
"""Facts the model may extract per message pair of a window (Mem0 finds one or two in a
message pair; a cap of four let a rambling model fill its reply for 14 s)."""


WINDOW_PAIRS = 5
"""Message pairs one fact-extraction call reads at most (a session window, Mem0's
extraction batched): one call per window instead of one per pair."""


SUMMARY_TOKENS = SUMMARY_CHARS // CHARS_PER_TOKEN + 24


PORTRAIT_TOKENS = PORTRAIT_CHARS // CHARS_PER_TOKEN + 24


RUNNING_TOKENS = RUNNING_SENTENCES * (SENTENCE_CHARS // CHARS_PER_TOKEN + 6) + 24


FACT_TOKENS = FACT_CHARS // CHARS_PER_TOKEN + 6


DECISION_TOKENS = FACT_CHARS // CHARS_PER_TOKEN + 40


DAILY_KINDS = (Kind.EVENT_DAILY, Kind.PORTRAIT_DAILY)


def clean(text: str) -> str:
    """``text`` on one line, whitespace collapsed."""
    return " ".join(text.split())


def normalized(text: str) -> str:
    """Lower-case words only: the form in which two facts are exact duplicates."""
    return " ".join(re.findall(r"\w+", text.lower()))


def date_words(timestamp: float) -> str:
    """The ways a text may write the date of ``timestamp``, for grounding:
    ``2023-05-08 Monday 8 May 2023``."""
    return f"{day_of(timestamp)} {spoken_date(timestamp)}"


@dataclass
class Plan:
    """The work one run will do for one user: days, sessions and message pairs with turns
    that have not been through that stage, and whether the global summary and portrait
    have daily ones to fold in. ``turns``: every active turn of the user, oldest first
    (the context of fact extraction). A day's memories (``days``) are its turns and notes."""

    user: str
    turns: list[Memory]
    notes: list[Memory] = field(default_factory=list)
    """Every active note of the user (``memcli remember``), oldest first: read with the
    turns of their day for its event summary and portrait."""
    days: dict[str, list[Memory]] = field(default_factory=dict)
    sessions: list[tuple[str, list[Memory]]] = field(default_factory=list)
    pairs: list[list[Memory]] = field(default_factory=list)
    fold: bool = False

    @property
    def units(self) -> int:
        """Days + sessions + message pairs + the fold: one progress step each."""
        return len(self.days) + len(self.sessions) + len(self.pairs) + int(self.fold)


def make_plan(
    user: str,
    turns: Sequence[Memory],
    progress: dict[str, dict[str, str]],
    dailies: Sequence[Memory] = (),
    since: str | None = None,
    until: str | None = None,
    retry: bool = False,
    notes: Sequence[Memory] = (),
) -> Plan:
    """What consolidation has left to do for ``user``.

    ``turns``: the user's active turns; ``notes``: their active notes, which a day's event
    summary and portrait read with its turns (MemoryBank's daily memory is all that the
    user told that day; a person who mostly uses ``remember`` tells it in notes), but no
    session or message pair; ``dailies``: their active daily summaries and portraits. ``progress``: stage → item id → ``done`` or ``skipped`` (the model's output
    stayed invalid). An item is to do when it has no progress, or with ``retry`` when it
    was skipped. ``since`` / ``until``: ``YYYY-MM-DD`` bounds (inclusive) on the days
    considered. A day with a turn or a note to do is summarised again from all of them; a
    session's turns to do are folded into the running memory; turns to do are paired in
    order within their session for fact extraction (a lone last turn makes a pair of one).
    The global summary and portrait are folded forward when a day is to do, or a daily
    memory has not been folded in (skipped folds wait for ``retry`` or the next new day).
    """
    todo = lambda stage, item_id: (status := progress[stage].get(item_id)) is None or (retry and status == SKIPPED)  # noqa: E731
    in_range = lambda day: (since is None or day >= since) and (until is None or day <= until)  # noqa: E731
    ordered = sorted(turns, key=lambda m: (m.created_at, m.id))
    plan = Plan(user, ordered, sorted(notes, key=lambda m: (m.created_at, m.id)))
    by_day: dict[str, list[Memory]] = defaultdict(list)
    by_session: dict[str, list[Memory]] = defaultdict(list)
    for turn in ordered:
        by_session[turn.session or turn.day].append(turn)
    for memory in sorted([*ordered, *plan.notes], key=lambda m: (m.created_at, m.id)):
        by_day[memory.day].append(memory)
    for day, day_memories in sorted(by_day.items()):
        if in_range(day) and any(todo("day", m.id) for m in day_memories):
            plan.days[day] = day_memories
    for session, session_turns in by_session.items():
        fresh = [t for t in session_turns if in_range(t.day) and todo("session", t.id)]
        if fresh:
            plan.sessions.append((session, fresh))
        fresh = [t for t in session_turns if in_range(t.day) and todo("fact", t.id)]
        plan.pairs.extend(fresh[i : i + 2] for i in range(0, len(fresh), 2))
    plan.sessions.sort(key=lambda s: s[1][0].created_at)
    plan.pairs.sort(key=lambda p: p[0].created_at)
    plan.fold = bool(plan.days) or any(todo("global", d.id) for d in dailies)
    return plan


@dataclass
class ConsolidationReport:
    """What a consolidation run did (or, with ``dry_run``, would do).

    days / sessions / pairs: units processed (or to process). folds: global summaries and
    portraits folded forward. summaries: event summaries, portraits and running-memory
    versions written. facts_*: Mem0's events, plus the candidates rejected
    as ungrounded and those skipped as duplicates. invalid: model replies that were still
    invalid after a retry (that unit of work was skipped; ``warnings`` says which).
    """

    users: list[str] = field(default_factory=list)
    days: int = 0
    sessions: int = 0
    pairs: int = 0
    folds: int = 0
    summaries: int = 0
    facts_added: int = 0
    facts_updated: int = 0
    facts_deleted: int = 0
    facts_noop: int = 0
    facts_rejected: int = 0
    facts_deduplicated: int = 0
    invalid: int = 0
    failed: int = 0
    """Units left not done because the model server failed (``failures`` says which)."""
    failures: list[str] = field(default_factory=list)
    seconds: float = 0.0
    dry_run: bool = False
    warnings: list[str] = field(default_factory=list)
    path: str = ""
    written_by: dict[str, int] = field(default_factory=dict)
    """Units (a day, a global fold, a session, a window of message pairs) written by each
    path: "llm", "extractive", or "fallback" (the model's output was rejected; the
    extractive one was written instead). A first global fold of one day, a copy of it,
    counts under the run's path."""
    graph: GraphReport = field(default_factory=GraphReport)
    """The graph step: memories scanned (or, with ``dry_run``, to scan), relations stated
    and closed, relation memories written."""

    @property
    def nothing_to_do(self) -> bool:
        """Whether there was nothing new to consolidate."""
        return self.days == self.sessions == self.pairs == self.folds == self.graph.scanned == 0


Progress = Callable[[int, int], None]


def _transcript(turns: Sequence[Memory]) -> list[str]:
    return [clean(t.index_text()) for t in turns]


def _material(turns: Sequence[Memory]) -> list[str]:
    """The transcript a summary, a portrait or a running memory is written from: without the
    replies of a base model (``extractive.by_base_model``), which invent."""
    return _transcript([t for t in turns if not extractive.by_base_model(t)])


def told(memories: Sequence[Memory]) -> list[Memory]:
    """``memories`` (copies) with only what they tell: each sentence that asks a question or
    makes a request (``extractive.is_request_or_question``: "Tell me a long story about my
    trip to Lisbon", "What should I cook?", "请给我讲个故事") left out, and a memory left
    with nothing dropped. An event summary says what happened, not what was asked
    (MemoryBank's "events and key information")."""
    out = []
    for memory in memories:
        sentences = extractive.split_sentences(memory.text)
        kept = [s for s in sentences if not extractive.is_request_or_question(s)]
        if len(kept) == len(sentences):
            out.append(memory)
        elif kept:
            out.append(replace(memory, text=" ".join(kept)))
    return out


def _speakers(turns: Sequence[Memory]) -> list[str]:
    """The people who speak in ``turns`` (not the assistant), in the order they first do."""
    return list(dict.fromkeys(t.speaker for t in turns if t.speaker and t.speaker != ASSISTANT))


def _people(turns: Sequence[Memory]) -> str:
    names = _speakers(turns)
    if not names:
        return "the user"
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def _chunks(lines: Sequence[str], budget: int) -> list[list[str]]:
    """``lines`` in consecutive groups of at most ``budget`` characters (a longer line is cut)."""
    out: list[list[str]] = []
    current: list[str] = []
    size = 0
    for line in lines:
        line = line[:budget]
        if current and size + len(line) + 1 > budget:
            out.append(current)
            current, size = [], 0
        current.append(line)
        size += len(line) + 1
    if current:
        out.append(current)
    return out
