"""The verbs on memories one at a time and on a user's whole store: remember, list, show, edit,
delete, archive, restore, pin, feedback, history, forget, purge-user and stats (``memcli.library.library.Memcli``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Optional

from memcli import schema
from memcli.library.engine import Engine, note_chunks
from memcli.library.outputs import Emit, _memory_fields, memory_out
from memcli.recall.forgetting import UNIT_SECONDS


class MemoryVerbs:
    """The memory verbs of ``Memcli``; each returns its ``memcli.schema`` model."""

    engine: Engine
    emit: Emit

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

    def stats(self, user: Optional[str] = None) -> schema.Stats:
        """Counts by kind and user, days, a retention histogram; every privacy warning of
        ``doctor`` is emitted."""
        stats = schema.Stats(**self.engine.stats(user))
        for line in self.engine.doctor().warnings:  # after the store's open has tightened what it could
            self.emit("warning", message=line)
        return stats
