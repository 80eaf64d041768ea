"""What the library's verbs return, made from what the engine returns: the ``memcli.schema``
models of memories, recalled memories, graph entities and relations, and the ``Emit``
callback a front end gives ``Memcli``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from memcli import schema
from memcli.memory import Memory

if TYPE_CHECKING:
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
