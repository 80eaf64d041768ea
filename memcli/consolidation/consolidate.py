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

import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import numpy as np

from memcli.config import LEGACY_USER, login_name
from memcli.consolidation.facts import FactWork
from memcli.consolidation.graph_memory import GraphBuilder
from memcli.consolidation.grounding import Grounding, statement_problem
from memcli.consolidation.model_output import (
    RUNNING_SENTENCES,
    EventSummaryOutput,
    PortraitOutput,
    RunningMemoryOutput,
)
from memcli.consolidation.shared import (
    CONTEXT_MESSAGES,
    DAILY_KINDS,
    DECISION_TOKENS,
    FACT_TOKENS,
    GLOBAL_LINES,
    GLOBAL_TOPICS,
    MAX_FACTS,
    PORTRAIT_TOKENS,
    RELATED_SIMILARITY,
    RUNNING_TOKENS,
    SIMILAR_FACTS,
    STAGES,
    SUMMARY_TOKENS,
    WINDOW_PAIRS,
    ConsolidationReport,
    MemoryOwner,
    Plan,
    Progress,
    _chunks,
    _material,
    _people,
    _speakers,
    _transcript,
    clean,
    date_words,
    make_plan,
    normalized,
    told,
)
from memcli.dates import day_of, spoken_date
from memcli.errors import InvalidOutputError, ModelServerError
from memcli.memory import Kind, Memory, singleton_id, stable_id
from memcli.models import prompts
from memcli.models.embedding import embedder_identity
from memcli.models.llm import CHARS_PER_TOKEN, is_base_model, structured_output
from memcli.store.sidecar import DONE, HistoryEntry
from memcli.text import extractive

if TYPE_CHECKING:
    pass


# The plan -----------------------------------------------------------------------------


# The report ---------------------------------------------------------------------------


# The pass -----------------------------------------------------------------------------


class Consolidator(FactWork):
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

    def plan(self, user: str, since: str | None = None, until: str | None = None, retry: bool = False) -> Plan:
        """Read ``user``'s turns, daily memories and progress under the store lock; see ``make_plan``."""
        self.engine.flush_pending()  # embeds: before the store is taken
        with self.store.transaction():
            turns = self.store.memories(user=user, kind=Kind.TURN.value, archived=False)
            notes = self.store.memories(user=user, kind=Kind.NOTE.value, archived=False)
            dailies = self._dailies(user)
            progress = {stage: self.store.sidecar.consolidated(user, stage) for stage in STAGES}
        named = self.named(user, [*turns, *notes])
        said = [m for m in named if m.kind == Kind.TURN.value]
        written = [m for m in named if m.kind == Kind.NOTE.value]
        return make_plan(user, said, progress, dailies, since, until, retry, written)

    def named(self, user: str, memories: Sequence[Memory]) -> list[Memory]:
        """``memories`` (copies; turns, and notes) with the user's own speaker, their id or
        the role "user" of a chat log, renamed to what summaries, facts and portraits call
        them (``name_of``): "Sam's sister Ana", not "Default's sister Ana". With no name
        known, an id that is no name ("default", the login name) and "user" become
        ``extractive.UNNAMED``; another id (a MemoryBank user's, "Emily") stays. A note
        (``memcli remember``, no speaker) is the user's: it gets the name their turns get."""
        own = [t for t in memories if t.speaker in (user, "user")]
        notes = [m for m in memories if m.kind == Kind.NOTE.value and not m.speaker]
        self._own.update(t.id for t in own)
        name = self.name_of(user, [*own, *notes])
        writer = name or (extractive.UNNAMED if user in (LEGACY_USER, login_name()) else user)
        if not name:
            name = extractive.UNNAMED
            own = [t for t in own if t.speaker == "user" or user in (LEGACY_USER, login_name())]
        renamed = {t.id: name for t in own if t.speaker != name} | {n.id: writer for n in notes}
        return [replace(m, speaker=renamed[m.id]) if m.id in renamed else m for m in memories]

    def name_of(self, user: str, own: Sequence[Memory]) -> str:
        """The name of ``user``: the ``name`` setting (for the configured user, or a store's
        "default"), else the last name they gave in ``own`` (their turns and notes: "my name is Sam",
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
            self._unit(f"{plan.user} global fold", self.update_globals, plan.user, _people([*plan.turns, *plan.notes]))
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
        """The extractive daily event summary (``extractive.summarize`` of what the day's turns
        and notes tell, ``told``: "Speaker: sentence" lines, no question or request) and daily
        portrait (``extractive.portrait`` of each person who spoke or wrote) of a day."""
        embed = self.embed
        summary = "\n".join(s.line() for s in extractive.summarize(told(turns), embed))
        people = _speakers(turns)
        portrait = "\n".join(filter(None, (extractive.portrait(turns, who, embed) for who in people)))
        return summary, portrait

    def consolidate_day(self, user: str, day: str, turns: Sequence[Memory]) -> None:
        """Write the daily event summary and daily portrait of ``day`` from all its turns and
        notes, with the chat model or by extraction (``extractive``); when the model fails on
        either, the extractive ones are written instead. The summary is written from what
        they tell (``told``: no question or request), the portrait from all of it (what a
        person asks shows them too). A day with nothing of substance writes nothing (and is
        done)."""
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
            events = _material(told(turns))
            header = f"{'Notes and conversation' if any(t.kind == Kind.NOTE.value for t in turns) else 'Conversation'}"
            try:
                summary = (
                    self.summarize(events, f"{header} of {spoken_date(turns[0].created_at)}:", grounding)
                    if events
                    else ""
                )
                portrait = self.portray(prompts.DAILY_PORTRAIT.format(who=_people(turns)), lines, grounding)
                self._wrote("llm")
            except InvalidOutputError as exc:
                self._fall_back(f"{user} {day}", exc)
                summary, portrait = self.extract_day(turns)
        if not summary and not portrait:
            self._mark(user, "day", ids)
            return
        last = turns[-1]
        memories = [
            self._memory(user, kind, day, text, last, f"consolidate:{day}", ids)
            for kind, text in ((Kind.EVENT_DAILY, summary), (Kind.PORTRAIT_DAILY, portrait))
            if text
        ]
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


# Names that moved to memcli.consolidation.shared, still importable from here.
__all__ = [
    "Consolidator",
    "MemoryOwner",
    "STAGES",
    "GLOBAL_LINES",
    "GLOBAL_TOPICS",
    "CONTEXT_MESSAGES",
    "SIMILAR_FACTS",
    "RELATED_SIMILARITY",
    "MAX_FACTS",
    "WINDOW_PAIRS",
    "SUMMARY_TOKENS",
    "PORTRAIT_TOKENS",
    "RUNNING_TOKENS",
    "FACT_TOKENS",
    "DECISION_TOKENS",
    "DAILY_KINDS",
    "clean",
    "normalized",
    "date_words",
    "Plan",
    "make_plan",
    "ConsolidationReport",
    "Progress",
    "_transcript",
    "_material",
    "_speakers",
    "_people",
    "_chunks",
]
