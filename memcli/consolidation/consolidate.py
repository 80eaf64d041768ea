"""Consolidation (``memcli consolidate``): what each day and session leaves in memory.

Three stages, each incremental over the turns not yet through it (progress is kept per
turn in the sidecar database, so a run killed midway resumes without duplicates; work
whose model output stayed invalid is marked skipped and redone only with ``retry`` or,
for a day, when new turns arrive on it, so that a nightly run costs only what is new):

1. **day** (MemoryBank §2.1): for each (user, day) with new turns, a daily event summary
   and a daily portrait (personality traits and emotions shown that day); then the global
   event summary and global portrait are folded forward from the new daily ones.
2. **session** (Wang et al. 2023, recursive summarization): the running memory
   ``M_i = LLM(S_i, M_{i-1})`` is updated with each new session, at most 20 sentences.
3. **fact** (Mem0, Algorithm 1): from each new message pair, with the running memory and
   the last 10 messages as context, candidate facts are extracted; each is checked
   against its source turns (grounding) and the existing facts (deduplication), then the
   10 most similar facts are shown to the model, which chooses ADD, UPDATE, DELETE or
   NOOP. A fact is never rewritten in place: UPDATE ends the old fact (``valid_to``) and
   adds the new one, DELETE ends it (Mem0g marks conflicting relations invalid instead of
   deleting them), and the history table records every change with the old text.

4. **graph** (Mem0g, ``memcli.consolidation.graph_memory``): every turn, note and fact not yet scanned
   (the facts of this run too) is read for entities and relations, which go into the
   graph memory; relations a newer one contradicts are closed, not deleted.

Each unit is written by one of two paths (the ``consolidation`` setting; "auto" takes the
extractive one for a chat model without a chat template, such as the embedded base model):
the chat model, or extraction (``memcli.text.extractive``: the day's most salient sentences,
the user's own statements as facts, grounded by construction). ``ConsolidationReport.
written_by`` counts which path wrote each unit.

A weak local model must not poison memory, so every model call here is JSON-schema
constrained with bounded strings and lists and a token cap, validated with pydantic
(``memcli.consolidation.model_output``), retried once when invalid, and then the unit gets the
extractive result instead (an invalid fact decision skips that fact)
(``llm.structured_output``); and every text it writes is checked against its sources
(``memcli.consolidation.grounding``): words and names it did not read are rejected.

The model runs without the store lock; the lock is taken only to read the plan and to
write each finished unit, so an open ``memcli chat`` keeps working during a cron run.
"""

from __future__ import annotations

import re
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from memcli.config import LEGACY_USER, login_name
from memcli.consolidation.graph_memory import GraphBuilder, GraphReport
from memcli.consolidation.grounding import Grounding, SourceTurn, fact_problem, statement_problem
from memcli.consolidation.model_output import (
    DECISIONS_PER_CALL,
    FACT_CHARS,
    PORTRAIT_CHARS,
    RUNNING_SENTENCES,
    SENTENCE_CHARS,
    SUMMARY_CHARS,
    WINDOW_FACTS,
    DecisionOutput,
    DecisionsOutput,
    EventSummaryOutput,
    FactsOutput,
    PortraitOutput,
    RunningMemoryOutput,
)
from memcli.dates import day_of, spoken_date
from memcli.errors import InvalidOutputError, ModelServerError
from memcli.memory import ASSISTANT, Kind, Memory, singleton_id, stable_id
from memcli.models import prompts
from memcli.models.embedding import embedder_identity
from memcli.models.llm import CHARS_PER_TOKEN, ChatModel, is_base_model, structured_output
from memcli.store.sidecar import DONE, SKIPPED, HistoryEntry
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


# The plan -----------------------------------------------------------------------------


@dataclass
class Plan:
    """The work one run will do for one user: days, sessions and message pairs with turns
    that have not been through that stage, and whether the global summary and portrait
    have daily ones to fold in. ``turns``: every active turn of the user, oldest first
    (the context of fact extraction)."""

    user: str
    turns: list[Memory]
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
) -> Plan:
    """What consolidation has left to do for ``user``.

    ``turns``: the user's active turns; ``dailies``: their active daily summaries and
    portraits. ``progress``: stage → item id → ``done`` or ``skipped`` (the model's output
    stayed invalid). An item is to do when it has no progress, or with ``retry`` when it
    was skipped. ``since`` / ``until``: ``YYYY-MM-DD`` bounds (inclusive) on the days
    considered. A day with a turn to do is summarised again from all of its turns; a
    session's turns to do are folded into the running memory; turns to do are paired in
    order within their session for fact extraction (a lone last turn makes a pair of one).
    The global summary and portrait are folded forward when a day is to do, or a daily
    memory has not been folded in (skipped folds wait for ``retry`` or the next new day).
    """
    todo = lambda stage, item_id: (status := progress[stage].get(item_id)) is None or (retry and status == SKIPPED)  # noqa: E731
    in_range = lambda day: (since is None or day >= since) and (until is None or day <= until)  # noqa: E731
    ordered = sorted(turns, key=lambda m: (m.created_at, m.id))
    plan = Plan(user, ordered)
    by_day: dict[str, list[Memory]] = defaultdict(list)
    by_session: dict[str, list[Memory]] = defaultdict(list)
    for turn in ordered:
        by_day[turn.day].append(turn)
        by_session[turn.session or turn.day].append(turn)
    for day, day_turns in by_day.items():
        if in_range(day) and any(todo("day", t.id) for t in day_turns):
            plan.days[day] = day_turns
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


# The report ---------------------------------------------------------------------------


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


# The pass -----------------------------------------------------------------------------

Progress = Callable[[int, int], None]


def _transcript(turns: Sequence[Memory]) -> list[str]:
    return [clean(t.index_text()) for t in turns]


def _material(turns: Sequence[Memory]) -> list[str]:
    """The transcript a summary, a portrait or a running memory is written from: without the
    replies of a base model (``extractive.by_base_model``), which invent."""
    return _transcript([t for t in turns if not extractive.by_base_model(t)])


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


class Consolidator:
    """One consolidation run over an Engine's store (see the module docstring).

    ``warn`` receives one line per skipped unit of work; ``progress`` gets (done, total).
    """

    def __init__(
        self, engine: MemoryOwner, warn: Callable[[str], None] | None = None, progress: Progress | None = None
    ) -> None:
        self.engine = engine
        self.store = engine.store
        self.settings = engine.settings
        self.warn = warn or (lambda message: None)
        self.progress = progress
        self.report = ConsolidationReport()
        self._path: str | None = None
        self.budget = CHARS_PER_TOKEN * max(512, self.settings.n_ctx - 1024)
        """Characters of material one prompt may carry."""
        self._done = 0
        self._total = 0
        self._vectors: dict[str, np.ndarray] = {}
        self._own: set[str] = set()
        """Ids of the turns the user said (speaker: their id, or "user" of a chat log)."""

    def embed(self, texts: Sequence[str]) -> list[np.ndarray]:
        """The embedder's unit vectors of ``texts`` (float32 arrays), each text embedded once
        a run (the day summary, the portrait, the running memory and the facts read the
        same sentences), the missing ones in one batch."""
        missing = [t for t in dict.fromkeys(texts) if t not in self._vectors]
        if missing:
            self._vectors.update(zip(missing, np.asarray(self.engine.embedder.embed(missing), dtype=np.float32)))
        return [self._vectors[t] for t in texts]

    # planning ---------------------------------------------------------------------

    def plan(self, user: str, since: str | None = None, until: str | None = None, retry: bool = False) -> Plan:
        """Read ``user``'s turns, daily memories and progress under the store lock; see ``make_plan``."""
        self.engine.flush_pending()  # embeds: before the store is taken
        with self.store.transaction():
            turns = self.store.memories(user=user, kind=Kind.TURN.value, archived=False)
            dailies = self._dailies(user)
            progress = {stage: self.store.sidecar.consolidated(user, stage) for stage in STAGES}
        return make_plan(user, self.named(user, turns), progress, dailies, since, until, retry)

    def named(self, user: str, turns: Sequence[Memory]) -> list[Memory]:
        """``turns`` (copies) with the user's own speaker, their id or the role "user" of a
        chat log, renamed to what summaries, facts and portraits call them (``name_of``):
        "Sam's sister Ana", not "Default's sister Ana". With no name known, an id that is
        no name ("default", the login name) and "user" become ``extractive.UNNAMED``;
        another id (a MemoryBank user's, "Emily") stays."""
        own = [t for t in turns if t.speaker in (user, "user")]
        self._own.update(t.id for t in own)
        name = self.name_of(user, own)
        if not name:
            name = extractive.UNNAMED
            own = [t for t in own if t.speaker == "user" or user in (LEGACY_USER, login_name())]
        renamed = {t.id for t in own if t.speaker != name}
        return [replace(t, speaker=name) if t.id in renamed else t for t in turns]

    def name_of(self, user: str, own: Sequence[Memory]) -> str:
        """The name of ``user``: the ``name`` setting (for the configured user, or a store's
        "default"), else the last name they gave in ``own`` (their turns: "my name is Sam",
        ``extractive.stated_name``), else one a stored fact records (``extractive.named_in``);
        "" when none."""
        if self.settings.name and user in (self.settings.user, LEGACY_USER):
            return self.settings.name
        for turn in sorted(own, key=lambda t: -t.created_at):
            names = [n for n in map(extractive.stated_name, extractive.split_sentences(turn.text)) if n]
            if names:
                return names[-1]
        with self.store.transaction():
            facts = self.store.memories(user=user, kind=Kind.FACT.value, archived=False, ended=False)
        return next((n for f in sorted(facts, key=lambda f: -f.created_at) if (n := extractive.named_in(f.text))), "")

    def _dailies(self, user: str) -> list[Memory]:
        return [m for kind in DAILY_KINDS for m in self.store.memories(user=user, kind=kind.value, archived=False)]

    def run(
        self,
        users: Sequence[str],
        since: str | None = None,
        until: str | None = None,
        dry_run: bool = False,
        retry: bool = False,
    ) -> ConsolidationReport:
        """Consolidate ``users`` (days between ``since`` and ``until``, YYYY-MM-DD,
        inclusive); ``retry``: also redo the work whose model output was invalid before;
        with ``dry_run`` only count what would be done (the model is not loaded)."""
        started = time.perf_counter()
        plans = [self.plan(user, since, until, retry) for user in users]
        self.report.users = list(users)
        self.report.dry_run = dry_run
        self._total = sum(plan.units for plan in plans)
        for plan in plans:
            self.report.days += len(plan.days)
            self.report.sessions += len(plan.sessions)
            self.report.pairs += len(plan.pairs)
            self.report.folds += int(plan.fold)
            if plan.units and not dry_run:
                self.consolidate(plan)
            if dry_run:
                self.report.graph.scanned += len(self.graph_builder().unscanned(plan.user))
            else:
                self.build_graph(plan.user)
        self.report.seconds = time.perf_counter() - started
        return self.report

    def graph_builder(self) -> GraphBuilder:
        """The graph step's builder, writing into this run's report (``report.graph``); it
        reads with the chat model when the ``graph_extraction`` setting says llm and this
        run writes with the model."""
        engine = self.engine
        model = engine.chat_model if self.settings.graph_extraction == "llm" and not self.extractive else None
        builder = GraphBuilder(self.store, engine.embedder, engine.clock, engine.initial_strength, model, self.warn)
        builder.report = self.report.graph
        return builder

    def build_graph(self, user: str) -> None:
        """The graph step for ``user`` (``memcli.consolidation.graph_memory``): the turns, notes and facts
        not yet scanned, turns named as summaries name their speaker (``named``), I/me/my of
        notes and facts standing for the user's name."""
        builder = self.graph_builder()
        scannable = builder.scannable(user)  # read once: the step reads all of them, and scans the new ones
        todo = builder.unscanned(user, scannable)
        if not todo:
            builder.sync(user)
            return
        turns = [m for m in todo if m.kind == Kind.TURN.value]
        renamed = {t.id: t for t in self.named(user, turns)}
        with self.store.transaction():
            own = [
                t
                for t in self.store.memories(user=user, kind=Kind.TURN.value, archived=False)
                if t.speaker in (user, "user")
            ]
        name = self.name_of(user, own) or (extractive.UNNAMED if user in (LEGACY_USER, login_name()) else user)
        builder.build(user, name, [renamed.get(m.id, m) for m in todo], scannable)

    @property
    def extractive(self) -> bool:
        """Whether this run writes by extraction (``memcli.text.extractive``) rather than with the
        chat model: the ``consolidation`` setting, or for "auto", whether the chat model
        has no chat template (a base model, such as the embedded Gemma 3 270M, cannot
        write summaries; a model without the attribute, a server or a test's stand-in, is
        taken for a chat model). Decided once a run; "auto" loads the chat model."""
        if self._path is None:
            setting = self.settings.consolidation
            if setting == "auto":
                setting = "extractive" if is_base_model(self.engine.chat_model) else "llm"
            self._path = self.report.path = setting
        return self._path == "extractive"

    def _wrote(self, path: str) -> None:
        self.report.written_by[path] = self.report.written_by.get(path, 0) + 1

    def _fall_back(self, what: str, exc: InvalidOutputError) -> None:
        message = f"{what}: {exc.message}; the extractive one was written instead"
        self.report.invalid += 1
        self.report.warnings.append(message)
        self.warn(message)
        self._wrote("fallback")

    def _step(self) -> None:
        self._done += 1
        if self.progress is not None:
            self.progress(self._done, self._total)

    def _skip(self, what: str, exc: InvalidOutputError) -> None:
        self.report.invalid += 1
        message = f"{what}: {exc.message}; skipped"
        self.report.warnings.append(message)
        self.warn(message)

    def _unit(self, what: str, work: Callable[..., None], *args: Any) -> None:
        """Do one unit of work; when the model server fails, the unit is left not done (the
        next run does it), the failure is reported (``failures``, not warned: the command
        ends with one line for them all), and the run goes on."""
        try:
            work(*args)
        except ModelServerError as exc:
            self.report.failed += 1
            self.report.failures.append(f"{what}: {exc.message}")

    def consolidate(self, plan: Plan) -> None:
        """Carry out ``plan``: days, the global fold, sessions, then facts (a window of
        message pairs at a time). By extraction, every sentence the plan reads is embedded
        first, in one batch."""
        self._vectors.clear()
        if self.extractive:
            fresh = {
                t.id: t
                for turns in [*plan.days.values(), *(turns for _, turns in plan.sessions), *plan.pairs]
                for t in turns
            }
            self.embed([s.text for s in extractive.sentences_of(list(fresh.values()))])
        for day, turns in plan.days.items():
            self._unit(f"{plan.user} {day}", self.consolidate_day, plan.user, day, turns)
            self._step()
        if plan.fold:
            self._unit(f"{plan.user} global fold", self.update_globals, plan.user, _people(plan.turns))
            self._step()
        for session, turns in plan.sessions:
            self._unit(f"{plan.user} session {session}", self.fold_session, plan.user, session, turns)
            self._step()
        index = {turn.id: i for i, turn in enumerate(plan.turns)}
        # By extraction a window is a whole session; a model reads what fits half its prompt.
        most, chars = (len(plan.pairs), float("inf")) if self.extractive else (WINDOW_PAIRS, self.budget // 2)
        for window in self.windows(plan.pairs, most, chars):
            start = index[window[0][0].id]
            self._unit(
                f"{plan.user} facts of {window[0][0].source or window[0][0].id}",
                self.extract_facts,
                plan.user,
                window,
                plan.turns[max(0, start - CONTEXT_MESSAGES) : start],
            )
            for _ in window:
                self._step()

    # writing ----------------------------------------------------------------------

    def _memory(
        self, user: str, kind: Kind, key: str | None, text: str, when: Memory, source: str, source_ids: list[str]
    ) -> Memory:
        """A consolidated memory dated like ``when`` (its retention clock too: a fact from
        an imported turn starts fading at the import, as the turn); ``key`` None makes it
        the user's one memory of ``kind`` (``singleton_id``)."""
        memory = Memory(
            id=singleton_id(kind, user) if key is None else stable_id(kind.value, user, key),
            user=user,
            kind=kind.value,
            text=text,
            created_at=when.created_at,
            day=when.day,
            source=source,
            source_ids=source_ids,
            retained_from=when.retained_from,
        )
        memory.strength = self.engine.initial_strength(memory)
        return memory

    def _replace(self, memories: Sequence[Memory], at: float, stage: str, items: Sequence[str]) -> None:
        """Store regenerated memories (summaries, portraits, the running memory), keeping what
        an older version had earned (strength, recalls, pin, feedback); record the change in
        the history; mark ``items`` done in ``stage``. A daily memory that changed must be
        folded into the global ones again."""
        vectors = self.embed([m.index_text() for m in memories])
        with self.store.transaction():
            existing = {m.id: m for m in self.store.get_many([m.id for m in memories])}
            entries = []
            for memory in memories:
                old = existing.get(memory.id)
                if old is not None:
                    memory.strength, memory.last_recalled_at, memory.recall_count = (
                        old.strength,
                        old.last_recalled_at,
                        old.recall_count,
                    )
                    memory.feedback, memory.pinned, memory.archived = old.feedback, old.pinned, False
                if old is None or old.text != memory.text:
                    entries.append(
                        HistoryEntry(
                            memory.id,
                            memory.user,
                            memory.kind,
                            "ADD" if old is None else "UPDATE",
                            "" if old is None else old.text,
                            memory.text,
                            at,
                            memory.source_ids,
                        )
                    )
            self.store.sidecar.record(entries)
            self.store.upsert(memories, vectors, embedder=embedder_identity(self.engine.embedder))
            self.store.sidecar.unmark_consolidated([m.id for m in memories], "global")
            changed = [e.memory_id for e in entries if e.event == "UPDATE"]
            if changed:  # read again by the graph step, without what the old text said
                self.store.sidecar.graph.forget_memories(changed)
                self.store.sidecar.unmark_consolidated(changed, "graph")
            self.store.sidecar.mark_consolidated(memories[0].user, stage, items, at)
        self.report.summaries += len(memories)

    def _mark(self, user: str, stage: str, items: Sequence[str], status: str = DONE) -> None:
        with self.store.transaction():
            self.store.sidecar.mark_consolidated(user, stage, items, self.engine.clock(), status)

    def _ask(
        self,
        instruction: str,
        task: str,
        content: str,
        output: type[Any],
        max_tokens: int,
        check: Callable[[Any], None] | None = None,
        schema: dict[str, Any] | None = None,
    ) -> Any:
        return structured_output(
            self.engine.chat_model,
            prompts.consolidation_messages(instruction, task, content),
            output,
            max_tokens,
            schema,
            check,
        )

    # stage 1: days ----------------------------------------------------------------

    def summarize(self, lines: Sequence[str], header: str, grounding: Grounding) -> str:
        """A MemoryBank event summary of ``lines`` (dialogue or earlier summaries), in
        pieces that fit the context and then summarised together when there are several.

        Raises InvalidOutputError when the model fails twice or is not grounded."""

        def check(out: EventSummaryOutput) -> None:
            problem = statement_problem(out.summary) or grounding.problem(out.summary, self.settings.summary_grounding)
            if problem:
                raise ValueError(f"summary rejected: {problem}")

        pieces = [
            clean(
                self._ask(
                    prompts.EVENT_SUMMARY,
                    "summary",
                    f"{header}\n" + "\n".join(chunk),
                    EventSummaryOutput,
                    SUMMARY_TOKENS,
                    check,
                ).summary
            )
            for chunk in _chunks(lines, self.budget)
        ]
        if len(pieces) == 1:
            return pieces[0]
        return self.summarize(pieces, f"Summaries of parts of the {header[0].lower()}{header[1:]}", grounding)

    def portray(self, instruction: str, lines: Sequence[str], grounding: Grounding) -> str:
        """A MemoryBank portrait from ``lines`` (the first chunk that fits the context).
        Only names and numbers are checked: traits are abstractions of what was said.

        Raises InvalidOutputError when the model fails twice or names someone unseen."""

        def check(out: PortraitOutput) -> None:
            problem = statement_problem(out.portrait) or grounding.problem(out.portrait, 0.0)
            if problem is None and not grounding.names_someone(out.portrait):
                problem = "it names nobody of its source"
            if problem:
                raise ValueError(f"portrait rejected: {problem}")

        chunk = _chunks(lines, self.budget)[-1]
        return clean(
            self._ask(instruction, "portrait", "\n".join(chunk), PortraitOutput, PORTRAIT_TOKENS, check).portrait
        )

    def extract_day(self, turns: Sequence[Memory]) -> tuple[str, str]:
        """The extractive daily event summary (``extractive.summarize``: "Speaker: sentence"
        lines) and daily portrait (``extractive.portrait`` of each person who spoke) of a day."""
        embed = self.embed
        summary = "\n".join(s.line() for s in extractive.summarize(turns, embed))
        people = _speakers(turns)
        portrait = "\n".join(filter(None, (extractive.portrait(turns, who, embed) for who in people)))
        return summary, portrait

    def consolidate_day(self, user: str, day: str, turns: Sequence[Memory]) -> None:
        """Write the daily event summary and daily portrait of ``day`` from all its turns,
        with the chat model or by extraction (``extractive``); when the model fails on
        either, the extractive ones are written instead. A day with nothing of substance
        writes nothing (and is done)."""
        lines = _material(turns)
        ids = [t.id for t in turns]
        if not lines:
            self._mark(user, "day", ids)
            return
        if self.extractive:
            summary, portrait = self.extract_day(turns)
            self._wrote("extractive")
        else:
            grounding = Grounding("\n".join(lines) + " " + date_words(turns[0].created_at))
            try:
                summary = self.summarize(lines, f"Conversation of {spoken_date(turns[0].created_at)}:", grounding)
                portrait = self.portray(prompts.DAILY_PORTRAIT.format(who=_people(turns)), lines, grounding)
                self._wrote("llm")
            except InvalidOutputError as exc:
                self._fall_back(f"{user} {day}", exc)
                summary, portrait = self.extract_day(turns)
        if not summary:
            self._mark(user, "day", ids)
            return
        last = turns[-1]
        memories = (
            self._memory(user, Kind.EVENT_DAILY, day, summary, last, f"consolidate:{day}", ids),
            *(
                [self._memory(user, Kind.PORTRAIT_DAILY, day, portrait, last, f"consolidate:{day}", ids)]
                if portrait
                else []
            ),
        )
        self._replace(memories, self.engine.clock(), "day", ids)

    def update_globals(self, user: str, who: str) -> None:
        """Fold the daily summaries and portraits not yet folded in into the global event
        summary and the global portrait of ``who`` (MemoryBank), from their previous versions.
        A first fold of a single day is that day's memory (no model call); a fold the model
        fails is done by extraction (``fold_globally``)."""
        kinds = {Kind.EVENT_GLOBAL: Kind.EVENT_DAILY, Kind.PORTRAIT_GLOBAL: Kind.PORTRAIT_DAILY}
        with self.store.transaction():
            previous = {m.kind: m for m in self.store.get_many([singleton_id(k, user) for k in kinds])}
            dailies = self._dailies(user)
            folded = self.store.sidecar.consolidated(user, "global")
        now = self.engine.clock()
        for kind, daily_kind in kinds.items():
            fresh = sorted(
                (d for d in dailies if d.kind == daily_kind.value and folded.get(d.id) != DONE), key=lambda d: d.day
            )
            if not fresh:
                continue
            old = previous.get(kind.value)
            lines = ([f"Before: {old.text}"] if old else []) + [f"{d.day}: {d.text}" for d in fresh]
            grounding = Grounding("\n".join(lines))
            what = f"{user} global {'event summary' if kind is Kind.EVENT_GLOBAL else 'portrait'}"
            if self.extractive:
                text = self.fold_globally(kind, old, fresh)
                self._wrote("extractive")
            elif old is None and len(fresh) == 1:
                text = fresh[0].text  # one day folded into nothing is that day: no model call
                self._wrote("llm")
            else:
                try:
                    if kind is Kind.EVENT_GLOBAL:
                        text = self.summarize(lines, "Summaries of the days so far:", grounding)
                    else:
                        text = self.portray(prompts.GLOBAL_PORTRAIT.format(who=who), lines, grounding)
                    self._wrote("llm")
                except InvalidOutputError as exc:
                    self._fall_back(what, exc)
                    text = self.fold_globally(kind, old, fresh)
            if not text:
                self._mark(user, "global", [d.id for d in fresh])
                continue
            sources = list(dict.fromkeys([*(old.source_ids if old else []), *(d.id for d in fresh)]))
            memory = self._memory(user, kind, None, text, fresh[-1], "consolidate:global", sources)
            memory.created_at, memory.day = now, day_of(now)
            self._replace([memory], now, "global", [d.id for d in fresh])

    def fold_globally(self, kind: Kind, old: Memory | None, fresh: Sequence[Memory]) -> str:
        """The extractive global event summary or portrait: the lines of the previous one
        and of the new daily ones compete (``extractive.salience`` and MMR: what recurs
        and is central wins, repeats once), at most ``GLOBAL_LINES`` kept, in time order; a
        portrait's "Interests:" lines are merged, the most frequent topics first."""
        pool: list[extractive.Sentence] = []
        topics: list[str] = []
        for memory in ([old] if old else []) + list(fresh):
            for i, line in enumerate(memory.text.split("\n")):
                if line.startswith("Interests: "):
                    topics.extend(t.strip(" .") for t in line[len("Interests: ") :].split(","))
                elif line.strip():
                    # the whole line is kept; its speaker (an extractive line's "Name: ") only weighs it
                    speaker = extractive.parse_line(line)[0]
                    pool.append(extractive.Sentence(line.strip(), speaker, memory.id, memory.created_at, i))
        pool = list({s.text: s for s in pool}.values())
        chosen: list[extractive.Sentence] = []
        if pool:
            vectors = np.asarray(self.embed([s.text for s in pool]), dtype=np.float32)
            picked = extractive.select(extractive.salience(pool, vectors), vectors, GLOBAL_LINES)
            chosen = [pool[i] for i in sorted(picked, key=lambda i: (pool[i].at, pool[i].position))]
        lines = [s.text for s in chosen]
        if kind is Kind.PORTRAIT_GLOBAL and topics:
            lowered = [t.lower() for t in topics]
            first = {t.lower(): t for t in reversed(topics)}  # each topic as first written
            counted = [first[t] for t in sorted(dict.fromkeys(lowered), key=lambda t: -lowered.count(t))]
            lines.append(f"Interests: {', '.join(counted[:GLOBAL_TOPICS])}.")
        return "\n".join(lines)

    # stage 2: sessions ------------------------------------------------------------

    def fold_session(self, user: str, session: str, turns: Sequence[Memory]) -> None:
        """Update the running memory with a session's new turns (in pieces that fit the
        context). Sentences that are not grounded in the session or the previous memory are
        dropped; a reply with none left counts as invalid."""
        with self.store.transaction():
            found = self.store.get_many([singleton_id(Kind.RUNNING_SUMMARY, user)])
        sentences = found[0].text.split("\n") if found else []
        if self.extractive:
            self._wrote("extractive")
            sentences = self.fold_extractively(found[0] if found else None, turns)
        for chunk in [] if self.extractive else _chunks(_material(turns), self.budget // 2):
            grounding = Grounding("\n".join([*sentences, *chunk, date_words(turns[0].created_at)]))
            content = "Previous memory:\n" + ("\n".join(f"- {s}" for s in sentences) or "(empty)")
            content += f"\n\nNew conversation of {spoken_date(turns[0].created_at)}:\n" + "\n".join(chunk)

            def check(out: RunningMemoryOutput) -> None:
                if not any(self._sound(s, grounding) for s in out.memory):  # noqa: B023 (used at once)
                    raise ValueError("no sentence of the memory is grounded in the conversation")

            try:
                out = self._ask(
                    prompts.RUNNING_MEMORY.format(limit=RUNNING_SENTENCES),
                    "memory",
                    content,
                    RunningMemoryOutput,
                    RUNNING_TOKENS,
                    check,
                )
            except InvalidOutputError as exc:
                self._fall_back(f"{user} session {session}", exc)
                sentences = self.fold_extractively(found[0] if found else None, turns)
                break
            sentences = list(dict.fromkeys(clean(s) for s in out.memory if self._sound(s, grounding)))[
                :RUNNING_SENTENCES
            ]
        else:
            if not self.extractive:
                self._wrote("llm")
        if not sentences:
            self._mark(user, "session", [t.id for t in turns])
            return
        memory = self._memory(
            user,
            Kind.RUNNING_SUMMARY,
            None,
            "\n".join(sentences),
            turns[-1],
            f"consolidate:{session}",
            [t.id for t in turns],
        )
        self._replace([memory], self.engine.clock(), "session", [t.id for t in turns])

    def fold_extractively(self, previous: Memory | None, turns: Sequence[Memory]) -> list[str]:
        """The running memory after ``turns`` by extraction (``extractive.fold``): the
        previous memory's sentences ("Speaker: sentence" lines) compete with the session's."""
        kept: list[extractive.Sentence] = []
        if previous is not None:
            lines = [line for line in previous.text.split("\n") if line.strip()]
            for i, line in enumerate(lines):
                speaker, text = extractive.parse_line(line)
                kept.append(extractive.Sentence(text, speaker, previous.id, previous.created_at - len(lines) + i, i))
        return [s.line() for s in extractive.fold(kept, turns, self.embed, RUNNING_SENTENCES)]

    def _sound(self, sentence: str, grounding: Grounding) -> bool:
        """Whether a running-memory sentence is a grounded third-person statement."""
        return (
            statement_problem(sentence) is None and grounding.problem(sentence, self.settings.summary_grounding) is None
        )

    # stage 3: facts ---------------------------------------------------------------

    def windows(self, pairs: Sequence[list[Memory]], most: int, chars: float) -> list[list[list[Memory]]]:
        """``pairs`` in windows: consecutive message pairs of one session, at most ``most``
        pairs and ``chars`` characters of text (one pair always makes a window)."""
        out: list[list[list[Memory]]] = []
        used = 0
        for pair in pairs:
            size = sum(len(t.text) for t in pair)
            last = out[-1] if out else None
            if (
                last
                and (last[-1][0].session or last[-1][0].day) == (pair[0].session or pair[0].day)
                and len(last) < most
                and used + size <= chars
            ):
                last.append(pair)
                used += size
            else:
                out.append([pair])
                used = size
        return out

    def extract_facts(self, user: str, window: Sequence[list[Memory]], context: Sequence[Memory]) -> None:
        """Mem0's extraction and update phases for a window of message pairs (one model call
        for the window; see the module docstring), or by extraction."""
        turns = [t for pair in window for t in pair]
        ids = [t.id for t in turns]
        people = [t for t in turns if t.speaker != ASSISTANT]
        if not people:
            self._mark(user, "fact", ids)
            return
        if self.extractive:
            self._wrote("extractive")
            self.store_facts(user, self.extract_facts_of(window), ids, decide=False)
            return
        with self.store.transaction():
            running = self.store.get_many([singleton_id(Kind.RUNNING_SUMMARY, user)])
        content = ""
        if running:
            content += "Memory:\n" + running[0].text + "\n\n"
        if context:
            content += "Earlier messages:\n" + "\n".join(_transcript(context)) + "\n\n"
        content += f"New messages ({spoken_date(turns[0].created_at)}):\n" + "\n".join(_transcript(turns))
        limit = min(WINDOW_FACTS, MAX_FACTS * len(window))
        schema = FactsOutput.model_json_schema()
        schema["properties"]["facts"]["maxItems"] = limit
        try:
            out = self._ask(
                prompts.EXTRACT_FACTS,
                "facts",
                content[-self.budget :],
                FactsOutput,
                limit * FACT_TOKENS + 24,
                schema=schema,
            )
        except InvalidOutputError as exc:
            self._fall_back(f"{user} facts of {turns[0].source or turns[0].id}", exc)
            self.store_facts(user, self.extract_facts_of(window), ids, decide=False)
            return
        pair_of = {t.id: pair for pair in window for t in pair}
        sources = [
            SourceTurn(t.speaker, t.text, Grounding(f"{line} {date_words(t.created_at)}"))
            for t, line in zip(people, _transcript(people))
        ]
        candidates: dict[str, tuple[str, list[Memory]]] = {}
        problems: list[str] = []
        for fact in (clean(f) for f in out.facts[:limit]):
            source = next(
                (
                    t
                    for t, src in zip(people, sources)
                    if fact_problem(fact, [src], self.settings.fact_grounding) is None
                ),
                None,
            )
            if source is None:
                self.report.facts_rejected += 1
                problems.append(f"{fact[:40]!r}: {fact_problem(fact, sources, self.settings.fact_grounding)}")
            elif normalized(fact) in candidates:
                self.report.facts_deduplicated += 1
            else:
                candidates[normalized(fact)] = (fact, pair_of[source.id])
        if problems and not candidates:
            # Every fact the model wrote failed grounding: the window gets the extractive ones.
            self._fall_back(
                f"{user} facts of {turns[0].source or turns[0].id}",
                InvalidOutputError(f"every fact rejected ({problems[0]})"),
            )
            self.store_facts(user, self.extract_facts_of(window), ids, decide=False)
            return
        self._wrote("llm")
        self.store_facts(user, list(candidates.values()), ids)

    def extract_facts_of(self, window: Sequence[list[Memory]]) -> list[tuple[str, list[Memory]]]:
        """The extractive facts of each pair of ``window`` (``extractive.facts_of`` its
        people's turns, and the name the user gives themselves: ``extractive.name_fact``),
        with their pair; a statement longer than a fact may be (FACT_CHARS) is a story, not
        a fact: rejected."""
        out: list[tuple[str, list[Memory]]] = []
        for pair in window:
            people = {t.speaker for t in pair if t.speaker != ASSISTANT}
            names = [
                n
                for t in pair
                if t.id in self._own
                for s in extractive.split_sentences(t.text)
                if (n := extractive.stated_name(s))
            ]
            facts = [extractive.name_fact(n) for n in names] + [text for text, _ in extractive.facts_of(pair, people)]
            kept = [f for f in facts if len(f) <= FACT_CHARS]
            self.report.facts_rejected += len(facts) - len(kept)
            out.extend((f, pair) for f in kept)
        return out

    def store_facts(
        self, user: str, facts: Sequence[tuple[str, list[Memory]]], ids: Sequence[str], decide: bool = True
    ) -> None:
        """Reconcile ``facts`` ((text, the message pair it came from)) with the stored ones and
        mark the turns ``ids`` through the fact stage: done, or skipped for the pair of a fact
        whose decision stayed invalid (redone with ``retry``).

        Deduplication (Mem0): a fact whose normalized text is stored, or whose cosine
        similarity to a stored or an earlier new fact is at least ``fact_dedup``, is not
        stored again. The others are added, or with ``decide`` and stored facts at least
        RELATED_SIMILARITY similar, decided by the model (``decide``, a few facts a call,
        without the store lock). Every write of the window is one hold of the store."""
        unique: dict[str, tuple[str, list[Memory]]] = {}
        for fact, pair in facts:
            if normalized(fact) in unique:
                self.report.facts_deduplicated += 1
            else:
                unique.setdefault(normalized(fact), (fact, pair))
        items = list(unique.values())
        vectors = (
            np.asarray(self.embed([f for f, _ in items]), dtype=np.float32)
            if items
            else np.zeros((0, 0), dtype=np.float32)
        )
        with self.store.transaction():
            known, matrix = self.store.active_with_vectors(user, Kind.FACT.value)
        order = sorted(range(len(known)), key=lambda i: known[i].id)  # equal similarities rank the smaller id first
        known, matrix = [known[i] for i in order], matrix[order] if len(known) else matrix
        seen = {normalized(m.text) for m in known}
        new_vectors: list[np.ndarray] = []
        pending: list[tuple[str, list[Memory], np.ndarray, list[Memory]]] = []
        for (fact, pair), vector in zip(items, vectors):
            similarity = matrix @ vector if len(known) else np.zeros(0)
            closest_new = max((float(v @ vector) for v in new_vectors), default=-1.0)
            if (
                normalized(fact) in seen
                or closest_new >= self.settings.fact_dedup
                or (len(similarity) and similarity.max() >= self.settings.fact_dedup)
            ):
                self.report.facts_deduplicated += 1
                continue
            ranked = np.argsort(-similarity, kind="stable")[:SIMILAR_FACTS]
            related = [known[i] for i in ranked if similarity[i] >= RELATED_SIMILARITY]
            pending.append((fact, pair, vector, related))
            seen.add(normalized(fact))
            new_vectors.append(vector)
        add = DecisionOutput(event="ADD", target=0, text="")
        decisions: list[DecisionOutput | None] = [add] * len(pending)
        if decide:
            asked = [i for i, item in enumerate(pending) if item[3]]
            for batch in self._decision_batches([pending[i][3] for i in asked]):
                chosen = self.decide(
                    user,
                    [pending[asked[j]][0] for j in batch],
                    [pending[asked[j]][3] for j in batch],
                    [t for j in batch for t in pending[asked[j]][1]],
                )
                for j, decision in zip(batch, chosen):
                    decisions[asked[j]] = decision
        # A pair with a fact whose decision stayed invalid is skipped (redone with --retry); the others are done.
        undecided = {t.id for item, d in zip(pending, decisions) if d is None for t in item[1]}
        self.apply(
            user,
            [(item, d) for item, d in zip(pending, decisions) if d is not None],
            [i for i in ids if i not in undecided],
            sorted(undecided),
        )

    @staticmethod
    def _decision_batches(related: Sequence[Sequence[Memory]]) -> list[list[int]]:
        """Indexes of the new facts to decide, in groups of at most DECISIONS_PER_CALL whose
        related facts together number at most SIMILAR_FACTS (one call each)."""
        batches: list[list[int]] = []
        shown: set[str] = set()
        for i, facts in enumerate(related):
            ids = {m.id for m in facts}
            if batches and len(batches[-1]) < DECISIONS_PER_CALL and len(shown | ids) <= SIMILAR_FACTS:
                batches[-1].append(i)
                shown |= ids
            else:
                batches.append([i])
                shown = set(ids)
        return batches

    def decide(
        self, user: str, facts: Sequence[str], related: Sequence[Sequence[Memory]], turns: Sequence[Memory]
    ) -> list[DecisionOutput | None]:
        """Ask the model for Mem0's event of each of ``facts`` against the stored facts shown
        (those ``related`` to any of them), in one call; each fact may UPDATE or DELETE only
        a fact related to it. ``target`` in the replies indexes ``related[i]``. All None when
        the reply stayed invalid (those facts are skipped)."""
        shown = list({m.id: m for group in related for m in group}.values())
        schema = DecisionsOutput.model_json_schema()
        schema["properties"]["events"].update(minItems=len(facts), maxItems=len(facts))
        schema["$defs"]["DecisionOutput"]["properties"]["target"] = {"enum": list(range(len(shown))), "type": "integer"}
        content = "Existing facts:\n" + "\n".join(f"{i}. {m.text}" for i, m in enumerate(shown))
        content += "\n\nNew facts:\n" + "\n".join(f"- {fact}" for fact in facts)

        def check(out: DecisionsOutput) -> None:
            if len(out.events) != len(facts):
                raise ValueError(f"{len(out.events)} events for {len(facts)} new facts")
            for decision, fact, group in zip(out.events, facts, related):
                if not 0 <= decision.target < len(shown):
                    raise ValueError(f"target {decision.target} is not one of the facts shown")
                if decision.event in ("UPDATE", "DELETE") and shown[decision.target] not in group:
                    raise ValueError(f"target {decision.target} is not related to the new fact {fact!r}")
                if decision.event == "UPDATE":
                    merged = f"{shown[decision.target].text}\n{fact}\n" + "\n".join(_transcript(turns))
                    source = SourceTurn("", merged, Grounding(merged))
                    problem = (
                        fact_problem(decision.text, [source], self.settings.fact_grounding)
                        if decision.text.strip()
                        else "the text is empty"
                    )
                    if problem:
                        raise ValueError(f"updated fact rejected: {problem}")

        try:
            out = self._ask(
                prompts.DECIDE_FACTS,
                "decisions",
                content,
                DecisionsOutput,
                len(facts) * DECISION_TOKENS + 24,
                check,
                schema,
            )
        except InvalidOutputError as exc:
            self._skip(f"{user} facts {', '.join(repr(f[:40]) for f in facts)}", exc)
            return [None] * len(facts)
        return [
            d.model_copy(update={"target": group.index(shown[d.target]) if shown[d.target] in group else 0})
            for d, group in zip(out.events, related)
        ]

    def apply(
        self,
        user: str,
        decided: Sequence[tuple[tuple[str, list[Memory], np.ndarray, list[Memory]], DecisionOutput]],
        done: Sequence[str],
        skipped: Sequence[str] = (),
    ) -> None:
        """Carry out the decisions of a window (each: (fact, its pair, its vector, the related
        stored facts), the decision) and mark the window's turns through the fact stage
        (``done``, and ``skipped``: those of a pair with a fact left undecided), in one hold
        of the store: history first (it holds the old text), then the store. A stored fact
        already ended by an earlier decision of the window is not ended again: an UPDATE of
        it becomes an ADD, a DELETE a NOOP. An UPDATE to the old fact's own words is a NOOP,
        and a fact the window already adds (the same words from the same pair) is a
        duplicate."""
        at = self.engine.clock()
        entries: list[HistoryEntry] = []
        added: list[Memory] = []
        vectors: list[Any] = []
        ended: dict[str, Memory] = {}
        for (fact, pair, vector, related), decision in decided:
            event = decision.event
            old = related[decision.target] if event in ("UPDATE", "DELETE") else None
            if old is not None and old.id in ended:
                event, old = ("ADD" if event == "UPDATE" else "NOOP"), None
            if event == "UPDATE" and old is not None and normalized(decision.text) == normalized(old.text):
                event, old = "NOOP", None
            if event == "NOOP":
                self.report.facts_noop += 1
                continue
            pair_ids = [t.id for t in pair]
            new: Memory | None = None
            if event in ("ADD", "UPDATE"):
                text = clean(decision.text) if event == "UPDATE" and decision.text.strip() else fact
                new = self._memory(
                    user,
                    Kind.FACT,
                    normalized(text) + "\x1f" + ",".join(pair_ids),
                    text,
                    pair[-1],
                    " ".join(t.source for t in pair if t.source),
                    pair_ids,
                )
                new.session, new.valid_from = pair[0].session, pair[0].created_at
                same = next((a for a in added if a.id == new.id), None)
                if same is None:
                    added.append(new)
                    vectors.append(vector if text == fact else self.embed([text])[0])  # a memory, not a query
                    entries.append(
                        HistoryEntry(new.id, user, new.kind, "ADD", "", new.text, at, pair_ids, old.id if old else "")
                    )
                else:  # the window already adds these words from this pair: one fact, which this old one also ends in
                    new = same
                    self.report.facts_deduplicated += 1
                    if old is None:
                        continue
            if old is not None:
                old.valid_to = pair[0].created_at
                ended[old.id] = old
                entries.append(
                    HistoryEntry(
                        old.id,
                        user,
                        old.kind,
                        event,
                        old.text,
                        new.text if new else "",
                        at,
                        pair_ids,
                        new.id if new else "",
                    )
                )
            if event == "ADD":
                self.report.facts_added += 1
            elif event == "UPDATE":
                self.report.facts_updated += 1
            else:
                self.report.facts_deleted += 1
        with self.store.transaction():
            self.store.sidecar.record(entries)
            if added:
                self.store.upsert(added, vectors, embedder=embedder_identity(self.engine.embedder))
            if ended:
                self.store.update(list(ended.values()))
            self.store.sidecar.mark_consolidated(user, "fact", done, at, DONE)
            if skipped:
                self.store.sidecar.mark_consolidated(user, "fact", skipped, at, SKIPPED)
