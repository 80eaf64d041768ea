"""The memcli library: ``Memcli``, one public method per verb, each taking typed arguments
and returning the ``memcli.schema`` model that ``--json`` prints.

Every front end calls these methods through one table (``memcli.library.verbs`` names them,
``memcli.library.api.run`` validates a request's arguments against the method's signature and
calls it): the CLI in-process, the memcli service for each client request, ``memcli
eval``, and the MCP server. Nothing here prints; events a verb emits while it runs
(status lines, progress, streamed reply text) go to the ``emit`` it was built with.

The work itself is the engine's (``memcli.library.engine.Engine``: store, models, recall,
writes); this layer turns its domain objects into the documented shapes.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal, Optional, Protocol

from memcli import schema
from memcli.errors import DISK_FULL_ERRNOS, BadInputError, DiskFullError, Interrupted, ModelServerError
from memcli.formats import export
from memcli.library import evaluation
from memcli.library.chat import ChatSession
from memcli.library.engine import Engine, note_chunks
from memcli.memory import Memory
from memcli.paths import device_of, export_target, writing_private
from memcli.recall.forgetting import UNIT_SECONDS
from memcli.recall.retrieval import Recalled


class Emit(Protocol):
    """Sends one event of a running verb to its caller: ``emit("progress", done=3, total=9)``.

    Events: ``notice`` and ``warning`` (``message``: a status line), ``progress`` (``done``,
    ``total``), ``piece`` (``text``: streamed reply text) and, from the resources under
    the engine, ``saved`` (``journaled``, ``stored``, ``total``: what is safe so far, see
    ``memcli.library.engine.Engine``)."""

    def __call__(self, event: str, **fields: Any) -> None: ...


def _silent(event: str, **fields: Any) -> None:
    return None


def memory_out(memory: Memory) -> schema.Memory:
    """A stored memory as ``schema.Memory`` (times as ISO 8601, None for none)."""
    return schema.Memory(**_memory_fields(memory))


def recalled_out(hit: Recalled) -> schema.RecalledMemory:
    """A recalled memory with its score block (``schema.Score``)."""
    score = schema.Score(
        score=round(hit.score, 6),
        relevance=round(hit.relevance, 4),
        similarity=round(hit.similarity, 4),
        signals={k: round(v, 4) for k, v in hit.signals.items()},
        components={k: round(v, 4) for k, v in hit.components.items()},
    )
    return schema.RecalledMemory(**_memory_fields(hit.memory), score=score)


def _memory_fields(memory: Memory) -> dict[str, Any]:
    return dict(
        id=memory.id,
        user=memory.user,
        kind=memory.kind,
        text=memory.text,
        speaker=memory.speaker,
        caption=memory.caption,
        session=memory.session,
        day=memory.day,
        created_at=schema.iso_time(memory.created_at),
        source=memory.source,
        source_ids=list(memory.source_ids),
        tags=list(memory.tags),
        importance=memory.importance,
        strength=memory.strength,
        recall_count=memory.recall_count,
        last_recalled_at=schema.iso_time(memory.last_recalled_at),
        retained_from=schema.iso_time(memory.retained_from),
        feedback=memory.feedback,
        pinned=memory.pinned,
        archived=memory.archived,
        archived_at=schema.iso_time(memory.archived_at),
        valid_from=schema.iso_time(memory.valid_from),
        valid_to=schema.iso_time(memory.valid_to),
        superseded_by=memory.superseded_by or None,
    )


def _entity_out(entity: Any, aliases: list[str], mentions: int) -> schema.GraphEntity:
    return schema.GraphEntity(
        id=entity.id,
        name=entity.name,
        type=entity.type,
        role=entity.role,
        aliases=aliases,
        mentions=mentions,
        first_seen=schema.iso_time(entity.first_seen),
        last_seen=schema.iso_time(entity.last_seen),
    )


def _relation_out(relation: Any) -> schema.GraphRelation:
    from memcli.consolidation.graph_memory import relation_phrase  # the engine loads the graph code lazily too

    return schema.GraphRelation(
        id=relation.id,
        subject=relation.subject_name,
        relation=relation.relation,
        phrase=relation_phrase(relation),
        object=relation.object_name,
        valid_from=relation.valid_from,
        valid_to=relation.valid_to,
        current=relation.current,
        count=relation.count,
        sources=list(relation.sources),
    )


class Memcli:
    """memcli's verbs over one ``Engine`` (one per command in-process, one per request in the
    service).

    Args:
        engine: the store, models and recall of this request (``memcli.library.engine.Engine``).
        emit: receives the verb's events (see ``Emit``); default: dropped.

    Each method raises the ``MemcliError`` its engine call raises (each names its own in
    ``memcli.library.engine``); ``memcli.library.api.run`` has validated the argument types before.
    """

    def __init__(self, engine: Engine, emit: Emit = _silent) -> None:
        self.engine = engine
        self.emit = emit

    def _progress(self, done: int, total: int) -> None:
        self.emit("progress", done=done, total=total)

    # memories ------------------------------------------------------------------------

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

    def remember(
        self, text: str, user: Optional[str] = None, importance: float = 0.5, tags: Sequence[str] = ()
    ) -> schema.Remembered:
        """Store a note (``Engine.remember``): the first note, whether it was new, and the id
        of every chunk of a long text."""
        note, added = self.engine.remember(text, user, importance, tags)
        ids = (
            [note.id] if note.text == text.strip() else [part_id for part_id, _ in note_chunks(text.strip(), note.user)]
        )
        return schema.Remembered(memory=memory_out(self.engine.get(note.id)), added=added, ids=ids)

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

    def import_file(
        self,
        path: str,
        format: Optional[str] = None,
        user: Optional[str] = None,
        conversation: Optional[str] = None,
        retention_from: str = "import",
    ) -> schema.ImportResult:
        """Import a LoCoMo, MemoryBank, JSONL, text or memcli export file (``Engine.import_file``); progress
        events count the memories stored."""
        report = self.engine.import_file(Path(path), format, user, conversation, self._progress, retention_from)
        return schema.ImportResult(
            path=report.path,
            format=report.format,
            found=report.found,
            added=report.added,
            skipped=report.skipped,
            users=report.users,
            duration_seconds=round(report.seconds, 3),
            interrupted=report.interrupted,
            failed=report.failed,
            error=report.stopped or None,
        )

    def export(
        self,
        user: Optional[str] = None,
        all_users: bool = False,
        path: Optional[str] = None,
        history: bool = False,
        with_vectors: bool = False,
    ) -> schema.ExportResult:
        """Export ``user``'s memories (every user's with ``all_users``) in the memcli format
        (``memcli.formats.export``), with the history and each memory's stored vector when asked:
        to the file ``path`` (absolute: the service's working directory is not the
        caller's), written atomically (a temporary file renamed at the end, 0600; through a
        symlink, to the file it names: ``memcli.paths.export_target``), or without one as
        ``piece`` events, a page of lines each. The store is read a page at a time and held
        until the end. Raises BadInputError when the file cannot be written (a folder, a
        device, a FIFO, a missing folder, no permission), DiskFullError when the device is
        full."""
        started = time.perf_counter()
        head, pages = self.engine.export(user, all_users, history, with_vectors)
        with contextlib.closing(pages):
            if path is None:
                written = export.write_pages(pages, lambda text: self.emit("piece", text=text))
            else:
                target = export_target(Path(path))
                try:
                    with writing_private(target) as f:
                        written = export.write_pages(pages, lambda text: f.write(text.encode("utf-8")))
                except OSError as exc:
                    if exc.errno in DISK_FULL_ERRNOS:
                        raise DiskFullError(
                            f"no space left on {device_of(target.parent)}; {path} was not written"
                        ) from None
                    raise BadInputError(f"cannot write {path}: {exc.strerror or exc}") from None
        return schema.ExportResult(
            path=path,
            format_version=head["format_version"],
            embedder=head["embedder"],
            lines=written.lines,
            memories=written.memories,
            history_events=written.history,
            progress_marks=written.progress,
            vectors=with_vectors,
            size_bytes=written.size_bytes,
            duration_seconds=round(time.perf_counter() - started, 3),
        )

    def list_memories(
        self,
        user: Optional[str] = None,
        kind: Optional[str] = None,
        limit: int = 20,
        archived: bool = False,
        tags: Sequence[str] = (),
    ) -> list[schema.Memory]:
        """Newest memories first (``Engine.list_memories``); ``limit`` 0: all."""
        return [memory_out(x) for x in self.engine.list_memories(user, kind, limit, archived, tags)]

    def show(self, id: str) -> schema.Memory:
        """The memory with this id or unique prefix. Raises NotFoundError."""
        return memory_out(self.engine.get(id))

    def delete(self, id: str) -> schema.Memory:
        """Delete a memory for good, with what was made of it (``Changes.purge``); returns it."""
        return memory_out(self.engine.delete(id))

    def archive(self, id: str) -> schema.Memory:
        """Archive one memory, as forgetting does (``Changes.archive``): never recalled
        again until ``restore``."""
        return memory_out(self.engine.archive(id))

    def restore(self, id: str) -> schema.Memory:
        """Bring an archived (forgotten) memory back."""
        return memory_out(self.engine.restore(id))

    def pin(self, id: str, pinned: bool = True) -> schema.Memory:
        """Pin (a pinned memory never fades) or unpin a memory."""
        return memory_out(self.engine.pin(id, pinned))

    def feedback(self, id: str, vote: int) -> schema.Memory:
        """Rate a memory's value: +1 or -1, summed into its ``feedback``."""
        return memory_out(self.engine.feedback(id, vote))

    def edit(
        self,
        id: str,
        text: Optional[str] = None,
        importance: Optional[float] = None,
        tags: Sequence[str] = (),
        untags: Sequence[str] = (),
    ) -> schema.Memory:
        """Change a memory's text (embedded again), importance or tags (``Engine.edit``)."""
        return memory_out(self.engine.edit(id, text, importance, tags, untags))

    def history(
        self, id: Optional[str] = None, user: Optional[str] = None, limit: int = 20
    ) -> list[schema.HistoryEntry]:
        """How consolidation and edits changed a memory (ADD, UPDATE, DELETE, EDIT, PURGE),
        or the newest events of ``user`` without ``id``."""
        return [
            schema.HistoryEntry(
                seq=e.seq,
                memory_id=e.memory_id,
                user=e.user,
                kind=e.kind,
                event=e.event,
                old_text=e.old_text,
                new_text=e.new_text,
                at=schema.iso_time(e.at),
                source_ids=e.source_ids,
                related_id=e.related_id,
            )
            for e in self.engine.history(id, user, limit)
        ]

    # forgetting and consolidation ------------------------------------------------------

    def forget(
        self,
        user: Optional[str] = None,
        all_users: bool = False,
        stochastic: bool = False,
        seed: Optional[int] = None,
        dry_run: bool = False,
        purge: bool = False,
        explain: bool = False,
    ) -> schema.ForgetResult:
        """The forget pass (MemoryBank §2.3; ``Changes.forget``): archive, or with ``purge``
        delete, what has faded below ``forget_threshold``. ``explain``: list every memory
        examined, with its t, d and R and whether it is forgotten, not only the forgotten."""
        report = self.engine.forget(user, all_users, stochastic, seed, dry_run, purge)
        settings = self.engine.settings
        unit = UNIT_SECONDS[settings.time_unit]
        listed = report.verdicts if explain else report.forgotten
        memories = [
            schema.ForgottenMemory(
                **_memory_fields(v.memory),
                forgetting=schema.Forgetting(
                    retention=round(v.retention, 6),
                    elapsed_seconds=round(v.elapsed * unit, 3),
                    elapsed=round(v.elapsed, 6),
                    decay=settings.decay_for(v.memory.user),
                    forgotten=v.forgotten,
                ),
            )
            for v in listed
        ]
        return schema.ForgetResult(
            dry_run=report.dry_run,
            examined=report.examined,
            forgotten=report.forgotten_count,
            archived=report.archived,
            purged=report.purged,
            derived_purged=report.derived,
            duration_seconds=round(report.seconds, 3),
            threshold=settings.forget_threshold,
            time_unit=settings.time_unit,
            memories=memories,
        )

    def purge_user(self, user: str) -> schema.PurgeUserResult:
        """Delete every memory, history event and consolidation progress of ``user``."""
        return schema.PurgeUserResult(**self.engine.purge_user(user))

    def consolidate(
        self,
        user: Optional[str] = None,
        all_users: bool = False,
        since: Optional[str] = None,
        until: Optional[str] = None,
        dry_run: bool = False,
        retry: bool = False,
    ) -> schema.ConsolidateResult:
        """Daily and global event summaries and portraits (MemoryBank), the running memory
        (Wang et al.) and facts (Mem0 ADD/UPDATE/DELETE/NOOP) of each new day, session and
        window (``memcli.consolidation.consolidate``); warnings and progress are emitted."""
        r = self.engine.consolidate(
            user,
            all_users,
            since,
            until,
            dry_run,
            lambda message: self.emit("warning", message=message),
            self._progress,
            retry,
        )
        facts = schema.FactCounts(
            added=r.facts_added,
            updated=r.facts_updated,
            deleted=r.facts_deleted,
            unchanged=r.facts_noop,
            rejected=r.facts_rejected,
            deduplicated=r.facts_deduplicated,
        )
        return schema.ConsolidateResult(
            dry_run=r.dry_run,
            users=r.users,
            days=r.days,
            sessions=r.sessions,
            message_pairs=r.pairs,
            global_folds=r.folds,
            summaries_written=r.summaries,
            facts=facts,
            invalid_outputs=r.invalid,
            duration_seconds=round(r.seconds, 3),
            warnings=r.warnings,
            path=r.path,
            written_by=dict(r.written_by),
            failed=r.failed,
            failures=r.failures,
            graph=schema.GraphCounts(
                scanned=r.graph.scanned,
                mentions=r.graph.mentions,
                relations=r.graph.relations,
                closed=r.graph.closed,
                relation_memories=r.graph.written,
            ),
        )

    def portrait(self, user: Optional[str] = None) -> Optional[schema.Memory]:
        """The global portrait (MemoryBank's global user portrait); None before
        consolidation wrote one."""
        found = self.engine.portraits(user, False)
        return memory_out(found[-1]) if found else None

    def daily_portraits(self, user: Optional[str] = None) -> list[schema.Memory]:
        """Every daily portrait (MemoryBank's daily personality insights), oldest first."""
        return [memory_out(x) for x in self.engine.portraits(user, True)]

    def summary(
        self, user: Optional[str] = None, day: Optional[str] = None, running: bool = False
    ) -> Optional[schema.Memory]:
        """The global event summary, ``day``'s daily one, or with ``running`` the running
        memory; None when there is none yet."""
        found = self.engine.summaries(user, day, running)
        return memory_out(found[-1]) if found else None

    # the store -------------------------------------------------------------------------

    def stats(self, user: Optional[str] = None) -> schema.Stats:
        """Counts by kind and user, days, a retention histogram; every privacy warning of
        ``doctor`` is emitted."""
        stats = schema.Stats(**self.engine.stats(user))
        for line in self.engine.doctor().warnings:  # after the store's open has tightened what it could
            self.emit("warning", message=line)
        return stats

    def reindex(self, force: bool = False) -> schema.ReindexResult:
        """Re-embed every memory with the configured embedder; progress is emitted."""
        return schema.ReindexResult(**self.engine.reindex(force, self._progress))

    def migrate(self, to: Optional[str] = None) -> schema.MigrateResult:
        """``memcli migrate``: move the memories to the Chroma server at ``to`` (None: back to the folder)."""
        return schema.MigrateResult(**self.engine.migrate(to, self._progress))

    def complete(self, what: str, prefix: str = "", user: Optional[str] = None) -> list[schema.Completion]:
        """Shell completions of ``prefix`` (``what``: id, user or kind), from the recall index
        alone: no model is touched. Raises UsageError for another ``what``."""
        return [
            schema.Completion(value=value, help=help) for value, help in self.engine.completions(what, prefix, user)
        ]

    def chat_open(self, user: Optional[str] = None, system: str = "", resume: bool = False) -> schema.ChatState:
        """A new chat session's state (``resume``: going on from the user's last session).
        Building it names the model, which loads it: a bad model fails here, before the
        first prompt."""
        engine = self.engine
        session = (
            ChatSession.resume(engine, user, system=system) if resume else ChatSession(engine, user, system=system)
        )
        return schema.ChatState(**session.state())

    def chat_respond(self, state: schema.ChatState, text: str) -> schema.ChatReply:
        """Store the user's ``text``, recall, and stream a reply (``piece`` events); the reply
        and the session's next state. A reply the caller cancels (``Interrupted`` from
        ``emit``) ends there, its partial text stored."""

        def warn(message: str) -> None:
            with contextlib.suppress(Interrupted):  # a reply the client cancelled still stores its turns
                self.emit("warning", message=message)

        session = ChatSession.restore(self.engine, state.model_dump(mode="json"), warn)
        try:
            reply = session.respond(text, lambda piece: self.emit("piece", text=piece))
        except ModelServerError as exc:
            raise ModelServerError(f"the reply failed (your message is stored): {exc.message}", exc.status) from None
        return schema.ChatReply(
            reply=reply.text,
            interrupted=reply.interrupted,
            empty_reason=reply.empty_reason,
            memories=[recalled_out(h) for h in reply.memories],
            state=schema.ChatState(**session.state()),
        )

    # evaluation ------------------------------------------------------------------------

    def _stage_progress(self, stage: str, done: int, total: int) -> None:
        self._progress(done, total)

    def graph_show(
        self, name: Optional[str] = None, user: Optional[str] = None, at: Optional[str] = None, depth: int = 1
    ) -> schema.GraphShow:
        """An entity of the graph memory (the user themself without a name): aliases,
        relations current and past with their days and sources, neighbours (``Engine.graph_show``)."""
        found = self.engine.graph_show(name, user, at, depth)
        return schema.GraphShow(
            user=found["user"],
            at=found["at"],
            entity=_entity_out(found["entity"], found["aliases"], found["mentions"]),
            relations=[_relation_out(r) for r in found["relations"]],
            neighbours=[
                schema.GraphNeighbour(name=e.name, type=e.type, depth=d, relation=label, count=count)
                for e, d, label, count in found["neighbours"]
            ],
        )

    def graph_list(self, user: Optional[str] = None, type: Optional[str] = None) -> list[schema.GraphEntity]:
        """The entities of the graph memory, most mentioned first (``Engine.graph_list``)."""
        return [_entity_out(e, aliases, mentions) for e, aliases, mentions in self.engine.graph_list(user, type)]

    def graph_export(
        self, user: Optional[str] = None, format: Literal["graphml", "gexf", "json", "dot"] = "graphml"
    ) -> schema.GraphExport:
        """The graph memory as GraphML, GEXF, node-link JSON or DOT (``Engine.graph_export``)."""
        return schema.GraphExport(**self.engine.graph_export(user, format))

    def graph_merge(self, name: str, into: str, user: Optional[str] = None) -> schema.GraphEntity:
        """Merge two entities that are one (``Engine.graph_merge``)."""
        return _entity_out(*self.engine.graph_merge(name, into, user))

    def graph_rename(self, name: str, new: str, user: Optional[str] = None) -> schema.GraphEntity:
        """Rename an entity; the old name stays an alias (``Engine.graph_rename``)."""
        return _entity_out(*self.engine.graph_rename(name, new, user))

    def eval_locomo(
        self, path: str, conversations: Sequence[str] = (), ranking: bool = True, without: Sequence[str] = ()
    ) -> schema.EvalResult:
        """Evidence recall@5/10/20 per LoCoMo category and recall latency, each conversation
        in a temporary store with this engine's settings and embedder
        (``evaluation.eval_locomo``); the user's own store is not touched."""
        report = evaluation.eval_locomo(
            Path(path),
            self.engine.settings,
            self.engine.embedder,
            conversations,
            self._stage_progress,
            ranking,
            without,
        )
        return schema.EvalResult(**report.to_dict())

    def eval_memorybank(
        self,
        path: str,
        probes: str,
        users: Sequence[str] = (),
        ranking: bool = True,
        without: Sequence[str] = (),
        details: bool = False,
    ) -> schema.ProbeEvalResult:
        """Hit@1/5/10 per probe type of probe questions over a MemoryBank history, in a
        temporary store (``evaluation.eval_memorybank``)."""
        report = evaluation.eval_memorybank(
            Path(path),
            Path(probes),
            self.engine.settings,
            self.engine.embedder,
            users,
            self._stage_progress,
            ranking,
            without,
            details,
        )
        return schema.ProbeEvalResult(**report.to_dict())

    def eval_consolidation(
        self,
        path: str,
        conversations: Sequence[str] = (),
        consolidation: Optional[Literal["auto", "llm", "extractive"]] = None,
        details: bool = False,
    ) -> schema.ConsolidationEvalResult:
        """Consolidate each LoCoMo conversation in a temporary store and score it against the
        dataset (``evaluation.eval_consolidation``); ``consolidation``: the path to measure
        (default: the setting). The chat model is this engine's, loaded once."""
        settings = self.engine.settings
        if consolidation is not None:
            settings = settings.model_copy(update={"consolidation": consolidation})
        chat_model = self.engine.chat_model if settings.consolidation != "extractive" else None
        report = evaluation.eval_consolidation(
            Path(path),
            settings,
            self.engine.embedder,
            conversations,
            self._stage_progress,
            details,
            chat_model=chat_model,
        )
        return schema.ConsolidationEvalResult(**report.to_dict())

    def eval_qa(
        self,
        path: str,
        conversations: Sequence[str] = (),
        limit: Optional[int] = None,
        context: Literal["memory", "full", "none"] = "memory",
        answers: Optional[Literal["auto", "llm", "extractive"]] = None,
        details: bool = False,
    ) -> schema.QaEvalResult:
        """Answer LoCoMo's questions (``limit`` a conversation) as ask does, or from the whole
        conversation or nothing (``context``), each conversation in a temporary store, and
        score them with LoCoMo's metric (``evaluation.eval_qa``); ``answers``: the answering
        path (default: the setting). The chat model is this engine's, loaded once."""
        settings = self.engine.settings
        chat_model = self.engine.chat_model if (answers or settings.answers) != "extractive" else None
        report = evaluation.eval_qa(
            Path(path),
            settings,
            self.engine.embedder,
            conversations,
            limit,
            context,
            answers,
            self._stage_progress,
            details,
            chat_model=chat_model,
        )
        return schema.QaEvalResult(**report.to_dict())

    def eval_changes(
        self, path: str, answers: Optional[Literal["auto", "llm", "extractive"]] = None, details: bool = False
    ) -> schema.ChangesEvalResult:
        """Run life-change scenarios (notes at their dates, a question at its time) in a
        temporary store and score the answers (``evaluation.eval_changes``); ``answers``:
        the answering path (default: the setting). The chat model is this engine's."""
        settings = self.engine.settings
        chat_model = self.engine.chat_model if (answers or settings.answers) != "extractive" else None
        report = evaluation.eval_changes(
            Path(path), settings, self.engine.embedder, answers, self._stage_progress, details, chat_model=chat_model
        )
        return schema.ChangesEvalResult(**report.to_dict())
