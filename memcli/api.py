"""The verbs as requests: one table from a verb's name to the ``Memcli`` method it runs and
the ``memcli.schema`` result it returns.

Both front ends go through ``run``: the CLI in-process (``service = "off"`` or
``--no-service``) and the service for each client request, so a verb behaves and answers
the same in both. A request is ``{verb, args, env, now, model}``: ``env`` holds the
client's ``MEMCLI_*`` variables, from which (with the config file) each request's
settings are built, so a client's environment means the same in either mode.

Events a verb may emit while it runs, besides its result: ``notice`` and ``warning``
(a status line), ``progress`` (done, total) and ``piece`` (streamed reply text).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Protocol

from pydantic import BaseModel

from memcli import schema
from memcli.candidates import WHAT
from memcli.chat import ChatSession
from memcli.config import Paths, Settings, load_settings
from memcli.core import Memcli, note_chunks
from memcli.errors import Interrupted, UsageError
from memcli.forgetting import UNIT_SECONDS
from memcli.memory import Memory
from memcli.resources import Resources
from memcli.retrieval import Recalled
from memcli.versions import versions


class Emit(Protocol):
    """Sends one event of a running request to its client: ``emit("progress", done=3, total=9)``."""

    def __call__(self, event: str, **fields: Any) -> None: ...


def memory_fields(memory: Memory) -> dict[str, Any]:
    """The fields of ``schema.Memory`` for a stored memory (times as ISO 8601, None for none);
    the shapes that extend it (a score block, a forgetting block) add theirs to these."""
    return dict(
        id=memory.id, user=memory.user, kind=memory.kind, text=memory.text, speaker=memory.speaker, caption=memory.caption,
        session=memory.session, day=memory.day, created_at=schema.iso_time(memory.created_at), source=memory.source,
        source_ids=list(memory.source_ids), tags=list(memory.tags), importance=memory.importance, strength=memory.strength,
        recall_count=memory.recall_count, last_recalled_at=schema.iso_time(memory.last_recalled_at),
        retained_from=schema.iso_time(memory.retained_from), feedback=memory.feedback,
        pinned=memory.pinned, archived=memory.archived, archived_at=schema.iso_time(memory.archived_at),
        valid_from=schema.iso_time(memory.valid_from), valid_to=schema.iso_time(memory.valid_to),
    )


def memory_out(memory: Memory) -> schema.Memory:
    """A stored memory as ``schema.Memory``."""
    return schema.Memory(**memory_fields(memory))


def recalled_out(hit: Recalled) -> schema.RecalledMemory:
    """A recalled memory with its score block."""
    score = schema.Score(
        score=round(hit.score, 6), relevance=round(hit.relevance, 4), similarity=round(hit.similarity, 4),
        signals={k: round(v, 4) for k, v in hit.signals.items()}, components={k: round(v, 4) for k, v in hit.components.items()},
    )
    return schema.RecalledMemory(**memory_fields(hit.memory), score=score)


# The verbs ------------------------------------------------------------------------------


def _recall(m: Memcli, emit: Emit, query: str, user: str | None = None, k: int | None = 10, kind: str | None = None,
            since: str | None = None, reinforce: bool = True, sample: bool = False, seed: int | None = None,
            tags: list[str] | None = None) -> list[schema.RecalledMemory]:
    k = (m.settings.recall_k or 5) if k is None else k  # None: as many as a chat prompt carries
    return [recalled_out(h) for h in m.recall(query, user, k=k, kind=kind, since=since, reinforce=reinforce, sample=sample, seed=seed,
                                              tags=tags or [])]


def _remember(m: Memcli, emit: Emit, text: str, user: str | None = None, importance: float = 0.5, tags: list[str] | None = None) -> schema.Remembered:
    note, added = m.remember(text, user, importance, tags or [])
    ids = [note.id] if note.text == text.strip() else [part_id for part_id, _ in note_chunks(text.strip(), note.user)]
    return schema.Remembered(memory=memory_out(m.get(note.id)), added=added, ids=ids)


def _ask(m: Memcli, emit: Emit, question: str, user: str | None = None) -> schema.Answer:
    answer = m.ask(question, user)
    return schema.Answer(answer=answer.answer, cited=answer.cited, memories=[recalled_out(h) for h in answer.memories])


def _import(m: Memcli, emit: Emit, path: str, format: str | None = None, user: str | None = None,
            conversation: str | None = None, retention_from: str = "import") -> schema.ImportResult:
    report = m.import_file(Path(path), format, user, conversation, lambda done, total: emit("progress", done=done, total=total),
                           retention_from)
    return schema.ImportResult(path=report.path, format=report.format, found=report.found, added=report.added,
                               skipped=report.skipped, users=report.users, duration_seconds=round(report.seconds, 3),
                               interrupted=report.interrupted)


def _list(m: Memcli, emit: Emit, user: str | None = None, kind: str | None = None, limit: int = 20,
          archived: bool = False, tags: list[str] | None = None) -> list[schema.Memory]:
    return [memory_out(x) for x in m.list_memories(user, kind, limit, archived, tags or [])]


def _show(m: Memcli, emit: Emit, id: str) -> schema.Memory:
    return memory_out(m.get(id))


def _delete(m: Memcli, emit: Emit, id: str) -> schema.Memory:
    return memory_out(m.delete(id))


def _restore(m: Memcli, emit: Emit, id: str) -> schema.Memory:
    return memory_out(m.restore(id))


def _pin(m: Memcli, emit: Emit, id: str, pinned: bool = True) -> schema.Memory:
    return memory_out(m.pin(id, pinned))


def _feedback(m: Memcli, emit: Emit, id: str, vote: int) -> schema.Memory:
    return memory_out(m.feedback(id, vote))


def _edit(m: Memcli, emit: Emit, id: str, text: str | None = None, importance: float | None = None,
          tags: list[str] | None = None, untags: list[str] | None = None) -> schema.Memory:
    return memory_out(m.edit(id, text, importance, tags or [], untags or []))


def _complete(m: Memcli, emit: Emit, what: str, prefix: str = "", user: str | None = None) -> list[schema.Completion]:
    """Shell completions, from the recall index alone: no model is touched."""
    if what not in WHAT:
        raise UsageError(f"cannot complete {what!r}; choose one of {', '.join(WHAT)}")
    with m.store.transaction():
        found = m.store.sidecar.completions(what, prefix, user)
    return [schema.Completion(value=value, help=help) for value, help in found]


def _version(m: Memcli, emit: Emit) -> schema.VersionInfo:
    return schema.VersionInfo(**versions(m.settings.model, m.settings.embedder, m.paths))


def _forget(m: Memcli, emit: Emit, user: str | None = None, all_users: bool = False, stochastic: bool = False,
            seed: int | None = None, dry_run: bool = False, purge: bool = False) -> schema.ForgetResult:
    report = m.forget(user, all_users, stochastic, seed, dry_run, purge)
    unit = UNIT_SECONDS[m.settings.time_unit]
    forgotten = [
        schema.ForgottenMemory(
            **memory_fields(v.memory),
            forgetting=schema.Forgetting(retention=round(v.retention, 6), elapsed_seconds=round(v.elapsed * unit, 3)),
        )
        for v in report.forgotten
    ]
    return schema.ForgetResult(dry_run=report.dry_run, examined=report.examined, forgotten=report.forgotten_count,
                               archived=report.archived, purged=report.purged, derived_purged=report.derived,
                               duration_seconds=round(report.seconds, 3), memories=forgotten)


def _purge_user(m: Memcli, emit: Emit, user: str) -> schema.PurgeUserResult:
    return schema.PurgeUserResult(**m.purge_user(user))


def _consolidate(m: Memcli, emit: Emit, user: str | None = None, all_users: bool = False, since: str | None = None,
                 until: str | None = None, dry_run: bool = False, retry: bool = False) -> schema.ConsolidateResult:
    r = m.consolidate(user, all_users, since, until, dry_run, lambda message: emit("warning", message=message),
                      lambda done, total: emit("progress", done=done, total=total), retry)
    facts = schema.FactCounts(added=r.facts_added, updated=r.facts_updated, deleted=r.facts_deleted, unchanged=r.facts_noop,
                              rejected=r.facts_rejected, deduplicated=r.facts_deduplicated)
    return schema.ConsolidateResult(dry_run=r.dry_run, users=r.users, days=r.days, sessions=r.sessions, message_pairs=r.pairs,
                                    global_folds=r.folds, summaries_written=r.summaries, facts=facts, invalid_outputs=r.invalid,
                                    duration_seconds=round(r.seconds, 3), warnings=r.warnings, path=r.path,
                                    written_by=dict(r.written_by))


def _portrait(m: Memcli, emit: Emit, user: str | None = None, daily: bool = False) -> Any:
    found = [memory_out(x) for x in m.portraits(user, daily)]
    return found if daily else (found[-1] if found else None)


def _summary(m: Memcli, emit: Emit, user: str | None = None, day: str | None = None, running: bool = False) -> schema.Memory | None:
    found = m.summaries(user, day, running)
    return memory_out(found[-1]) if found else None


def _history(m: Memcli, emit: Emit, id: str | None = None, user: str | None = None, limit: int = 20) -> list[schema.HistoryEntry]:
    return [
        schema.HistoryEntry(seq=e.seq, memory_id=e.memory_id, user=e.user, kind=e.kind, event=e.event, old_text=e.old_text,
                            new_text=e.new_text, at=schema.iso_time(e.at), source_ids=e.source_ids, related_id=e.related_id)
        for e in m.history(id, user, limit)
    ]


def _reindex(m: Memcli, emit: Emit, force: bool = False) -> schema.ReindexResult:
    return schema.ReindexResult(**m.reindex(force, lambda done, total: emit("progress", done=done, total=total)))


def _stats(m: Memcli, emit: Emit, user: str | None = None) -> schema.Stats:
    stats = schema.Stats(**m.stats(user))
    for line in m.doctor().warnings:  # after the store's open has tightened what it could
        emit("warning", message=line)
    return stats


def _doctor(m: Memcli, emit: Emit) -> schema.DoctorReport:
    return m.doctor()


def _chat_open(m: Memcli, emit: Emit, user: str | None = None, system: str = "", resume: bool = False) -> schema.ChatState:
    # Building the state names the model, which loads it: a bad model fails here, before the first prompt.
    session = ChatSession.resume(m, user, system=system) if resume else ChatSession(m, user, system=system)
    return schema.ChatState(**session.state())


def _chat_respond(m: Memcli, emit: Emit, state: dict[str, Any], text: str) -> schema.ChatReply:
    def warn(message: str) -> None:
        with contextlib.suppress(Interrupted):  # a reply the client cancelled still stores its turns
            emit("warning", message=message)

    session = ChatSession.restore(m, state, warn)
    # A cancel from the client (or its going away) raises Interrupted at the next piece: the
    # reply ends there and is answered with interrupted = true, its partial text stored.
    reply = session.respond(text, lambda piece: emit("piece", text=piece))
    return schema.ChatReply(reply=reply.text, interrupted=reply.interrupted, memories=[recalled_out(h) for h in reply.memories],
                            state=schema.ChatState(**session.state()))


VERBS: dict[str, Callable[..., Any]] = {
    "recall": _recall,
    "remember": _remember,
    "ask": _ask,
    "import": _import,
    "list": _list,
    "show": _show,
    "delete": _delete,
    "restore": _restore,
    "pin": _pin,
    "feedback": _feedback,
    "edit": _edit,
    "complete": _complete,
    "version": _version,
    "forget": _forget,
    "purge-user": _purge_user,
    "consolidate": _consolidate,
    "portrait": _portrait,
    "summary": _summary,
    "history": _history,
    "stats": _stats,
    "doctor": _doctor,
    "reindex": _reindex,
    "chat.open": _chat_open,
    "chat.respond": _chat_respond,
}
"""Every verb a client may send, by name."""


def dump(result: Any) -> Any:
    """A verb's result as JSON-ready data (what ``--json`` prints)."""
    if isinstance(result, BaseModel):
        return result.model_dump(mode="json")
    if isinstance(result, list):
        return [dump(x) for x in result]
    return result


def run(memcli: Memcli, verb: str, args: Mapping[str, Any], emit: Emit) -> Any:
    """Run ``verb`` with ``args`` on ``memcli``; returns its result as JSON-ready data.

    Raises UsageError for an unknown verb or arguments it does not take, and whatever
    MemcliError the verb raises."""
    handler = VERBS.get(verb)
    if handler is None:
        raise UsageError(f"unknown request {verb!r}")
    try:
        bound = _bind(handler, args)
    except TypeError as exc:
        raise UsageError(f"request {verb!r}: {exc}") from None
    return dump(bound(memcli, emit))


def _bind(handler: Callable[..., Any], args: Mapping[str, Any]) -> Callable[[Memcli, Emit], Any]:
    import inspect

    inspect.signature(handler).bind(None, None, **args)
    return lambda memcli, emit: handler(memcli, emit, **args)


_LOCAL: dict[Paths, Resources] = {}
"""The in-process resources of this process: one MEMCLI_HOME at a time."""
_GIVEN: dict[str, Any] = {"embedder": None, "chat_model": None}
"""The models given to ``use_models``."""


def use_models(embedder: Any = None, chat_model: Any = None) -> None:
    """Run in-process requests with these models instead of the configured ones (a
    program embedding memcli, or tests passing fakes, as llm registers its MockModel);
    None: the configured one. Takes effect from the next request (loaded resources are
    dropped)."""
    _GIVEN.update(embedder=embedder, chat_model=chat_model)
    _LOCAL.clear()


def embedder_for(settings: Settings) -> Any:
    """The embedder an in-process run uses: the one given to ``use_models``, else the
    one ``settings`` name (loaded now). Raises ModelError when it cannot load."""
    from memcli.core import make_embedder

    return _GIVEN["embedder"] if _GIVEN["embedder"] is not None else make_embedder(settings)


def in_process(paths: Paths, request: Mapping[str, Any], emit: Emit) -> Any:
    """Run one request in this process (``service = "off"``, ``--no-service``, or the
    service could not start). The store is opened per transaction; the models and the
    recall index stay loaded for the next request of this process (a chat session)."""
    resources = _LOCAL.get(paths)
    if resources is None:
        _LOCAL.clear()
        resources = _LOCAL[paths] = Resources(paths, settings_for(paths, request), _GIVEN["embedder"], _GIVEN["chat_model"])
    with resources.emitting(emit):
        memcli = resources.memcli(request)
        memcli.store.lock_timeout = memcli.settings.lock_timeout
        return run(memcli, request["verb"], request.get("args") or {}, emit)


def settings_for(paths: Paths, request: Mapping[str, Any]) -> Settings:
    """The settings of one request: defaults, the config file, the client's ``MEMCLI_*``
    variables, then ``--model``. Raises BadInputError as ``load_settings`` does."""
    return load_settings(paths, env=dict(request.get("env") or {}), model=request.get("model"))
