"""The engine's work on memories: storing notes and turns (``add_memories``, ``write``, the
journal's pending writes), reading, editing and deleting them, their history, forgetting,
and the per-user counts (``memcli.library.engine.Engine``)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from memcli.dates import day_of
from memcli.errors import (
    BadInputError,
    DiskFullError,
    EmbedderChangedError,
    ModelServerError,
    NotFoundError,
    ReadOnlyStoreError,
    UsageError,
)
from memcli.library import engine_models
from memcli.memory import KIND_VALUES, Kind, Memory
from memcli.models.embedding import Progress, embedder_identity
from memcli.recall.forgetting import UNIT_SECONDS, histogram, retention
from memcli.store.sidecar import HistoryEntry
from memcli.store.store import MIN_PREFIX, short_prefix
from memcli.text.chunking import MAX_CHARS, WIDE_WEIGHT, size

if TYPE_CHECKING:
    from memcli.recall.changes import ForgetReport, UpdateDecision
from memcli.library.engine_models import note_chunks


class MemoryWork:
    """The memory work of ``Engine``: writes, reads, edits, deletes, forgetting and stats."""

    def pending(self) -> list[Memory]:
        """Memories journaled but not in the store whose writer is done with them (see
        ``Journal.pending``), oldest first."""
        return [memory for _, memory in self.journal.pending()]

    def add_memories(
        self,
        memories: Sequence[Memory],
        progress: Progress | None = None,
        added: set[str] | None = None,
        vectors: Mapping[str, Any] | None = None,
        decide: bool = False,
    ) -> set[str]:
        """Embed and add the memories not yet in the store (no journal: for memories that
        can be read again from where they came, such as an imported file); returns the ids
        added. ``progress`` gets (texts embedded, texts in all). Raises
        EmbedderChangedError as ``check_embedder`` does, ReadOnlyStoreError on a read-only store.
        ``added``, when given, gets the ids as soon as they are stored: a Ctrl-C held back
        during the write (``deferred_interrupt``) is raised after it, before this returns.
        ``vectors``: id -> vector of memories already embedded by the configured embedder
        (a memcli export's): stored as they are; when every memory has one, nothing is
        embedded, and the recall index's windows are filled at the next recall.
        ``decide``: with a capable chat model, the model decides what they supersede
        (``update_decisions``), else the rules (``Changes.supersede``)."""
        embedded = self._embed_new(memories, progress, vectors)
        decided = self.update_decisions(embedded.memories, embedded.vectors) if decide else {}
        return self._add_embedded(embedded, added, decided)

    def update_decisions(self, memories: Sequence[Memory], vectors: Mapping[str, Any]) -> dict[str, UpdateDecision]:
        """The chat model's update decisions for ``memories`` about to be stored (embedded
        as ``vectors``), made without the store held, when supersession at write time
        asks the model (``supersession.model_decides``: a capable model is configured);
        empty otherwise or when it fails (then the rules decide, with a notice), never
        waiting longer than ``model_timeout`` (``supersession.write_time_decisions``)."""
        # heavy: supersession reads what texts state (memcli.text.updates compiles its patterns
        # at import); a write needs it, a list or show does not
        from memcli.library import supersession

        if not memories or not supersession.model_decides(
            self.settings, lambda: engine_models.chat_template_known(self.settings, self.paths)
        ):
            return {}
        return supersession.write_time_decisions(
            memories,
            vectors,
            self.recaller,
            lambda: self.chat_model,
            self.settings,
            bool(self.settings.model_url),
            self.store.notice,
        )

    def write(self, memories: Sequence[Memory], total: int | None = None, decide: bool = False) -> set[str]:
        """Store new memories the user gave (journal first, then the store); returns the ids
        new to the store (with S0 set by ``initial_strength``). Once they are journaled,
        ``saved`` is told (``total``: how many the command writes in all, when known).
        ``decide``: as for ``add_memories`` (``remember``: a kill while the model decides
        leaves the note journaled, and the rules decide when it is stored).

        Also stores anything an earlier writer journaled but could not store. Raises
        StoreLockedError when the store stays locked; the memories stay journaled and are
        stored by the next memcli that gets the store.
        """
        for memory in memories:
            memory.strength = self.initial_strength(memory)
        with self.journal.writing(memories) as done:
            self._journaled += len(memories)
            self.tell_saved(journaled=self._journaled, total=total)
            added = self.add_memories(memories, decide=decide)
            done()
        self.flush_pending()
        return added

    def tell_saved(self, **counts: int | None) -> None:
        """Tell ``saved`` (see the class) the ``counts`` given, those that are not None."""
        if self._saved is not None:
            self._saved(**{name: count for name, count in counts.items() if count is not None})

    def initial_strength(self, memory: Memory) -> float:
        """S0 of a new memory, in ``time_unit``s, by its kind: ``strength_turn``,
        ``strength_note`` (times ``important_strength`` for a note at least as important as
        ``important_threshold``), ``strength_fact``; ``initial_strength`` for the kinds that
        never fade. Only new memories get it: a stored memory keeps the strength it has."""
        settings = self.settings
        if memory.kind == Kind.NOTE.value:
            important = memory.importance >= settings.important_threshold
            return settings.strength_note * (settings.important_strength if important else 1.0)
        by_kind = {Kind.TURN.value: settings.strength_turn, Kind.FACT.value: settings.strength_fact}
        return by_kind.get(memory.kind, settings.initial_strength)

    def flush_pending(self) -> set[str]:
        """Store every journaled memory whose writer is done with it (``pending``);
        returns the ids new to the store. While the store waits for a reindex
        (``check_embedder``), cannot be written (read-only, or its device full), or the
        embedding server fails, they stay journaled, and a read goes on without them."""
        waiting = self.journal.pending()
        if not waiting:
            return set()
        try:
            added = self.add_memories([memory for _, memory in waiting])
        except (EmbedderChangedError, ReadOnlyStoreError, DiskFullError, ModelServerError):
            return set()
        self.journal.discard([path for path, _ in waiting])
        return added

    def remember(
        self, text: str, user: str | None = None, importance: float = 0.5, tags: Sequence[str] = ()
    ) -> tuple[Memory, bool]:
        """Store a note; returns (the note, whether it was new). The same text twice is one note.

        A text longer than ``memcli.text.chunking.MAX_CHARS`` is stored as one note a chunk
        (``note_chunks``), a millisecond apart, with the same source, importance and tags,
        ``engine_models.IMPORT_BATCH`` at a time; the note returned is the first. Raises BadInputError
        for empty text, UsageError for an importance outside 0..1 (an invalid option value).

        What the note supersedes is marked before this returns (issue 31): by the chat
        model's update decision when a capable model is configured (``update_decisions``,
        at most ``model_timeout`` seconds), else, or when it fails, by the rules.
        """
        text = text.strip()
        if not text:
            raise BadInputError("nothing to remember: the text is empty")
        if not 0.0 <= importance <= 1.0:
            raise UsageError(f"--importance must be between 0 and 1, not {importance:g}")
        user = self.user(user)
        now = self.clock()
        notes = [
            Memory(
                id=part_id,
                user=user,
                kind=Kind.NOTE.value,
                text=part,
                created_at=now + index / 1000,  # a long note's chunks keep their order
                day=day_of(now),
                source="remember",
                importance=importance,
                tags=sorted({t.strip() for t in tags if t.strip()}),
            )
            for index, (part_id, part) in enumerate(note_chunks(text, user))
        ]
        note = notes[0]
        added: set[str] = set()
        for start in range(0, len(notes), engine_models.IMPORT_BATCH):  # a huge note in bounded memory
            added |= self.write(notes[start : start + engine_models.IMPORT_BATCH], total=len(notes), decide=True)
        is_new = note.id in added
        if not is_new:
            self.changes.relearn(note.id, now)  # told again what it had forgotten: memcli learns it again
        return note, is_new

    def get(self, memory_id: str) -> Memory:
        """The memory with this id (or unique prefix). Raises NotFoundError."""
        return self.store.get(memory_id)

    def delete(self, memory_id: str) -> Memory:
        """Delete one memory for good, with what was made from it, and compact the store
        (see ``Changes.purge``); returns the memory. Raises NotFoundError."""
        return self.changes.delete(memory_id).purged[0]

    def purge_user(self, user: str) -> dict[str, Any]:
        """Delete every memory of ``user`` for good, with their history and consolidation
        progress, and compact the store (``Changes.purge_user``). ``user`` is named
        explicitly (no default user: it is destructive). Returns {user, purged,
        history_events, journal_files, compaction_seconds, duration_seconds}.

        Raises UsageError for an empty user name."""
        if not user or not user.strip():
            raise UsageError("name the user to purge")
        purged, events, files, compaction, seconds = self.changes.purge_user(user)
        return {
            "user": user,
            "purged": purged,
            "history_events": events,
            "journal_files": files,
            "compaction_seconds": round(compaction, 3),
            "duration_seconds": round(seconds, 3),
        }

    def edit(
        self,
        memory_id: str,
        text: str | None = None,
        importance: float | None = None,
        tags: Sequence[str] = (),
        untags: Sequence[str] = (),
    ) -> Memory:
        """Change a memory's text, importance or tags (``tags`` added, ``untags`` removed);
        returns it as stored. The memory keeps its id, strength, recall count, pin and
        feedback.

        A new text is embedded again (outside the store lock) and replaces the old one in
        Chroma and in the recall index (``MemoryStore.upsert``), which also refreshes the
        lexical context and windows of its session's other turns; the history records the
        edit (event EDIT, old and new text). An edited turn counts as new for the next
        consolidation's day and fact stages: its day's summary and portrait are written
        again (and folded into the global ones), and its message pair's facts extracted
        again and reconciled with the stored ones. Importance and tags alone change the
        metadata only.

        Raises NotFoundError (no such id), UsageError (nothing to change), BadInputError
        (an empty text, or one longer than ``memcli.text.chunking.MAX_CHARS``), UsageError (an importance outside 0..1), EmbedderChangedError as
        ``check_embedder`` does.
        """
        if text is None and importance is None and not tags and not untags:
            raise UsageError("nothing to change: give --text, --importance, --tag or --untag")
        if text is not None:
            text = text.strip()
            if not text:
                raise BadInputError("the new text is empty")
            if size(text) > MAX_CHARS:
                # one memory keeps one id: a text that remember would chunk cannot replace it
                raise BadInputError(
                    f"the new text is {len(text):,} characters; one memory holds at most {MAX_CHARS:,}"
                    f" ({MAX_CHARS // WIDE_WEIGHT:,} CJK characters): remember a longer text as notes"
                )
        if importance is not None and not 0.0 <= importance <= 1.0:
            raise UsageError(f"--importance must be between 0 and 1, not {importance:g}")
        memory = self.get(memory_id)
        old_text = memory.text
        vector = None
        if text is not None and text != old_text:
            identity = embedder_identity(self.embedder)
            self.check_embedder()
            memory.text = text
            vector = self.embedder.embed([memory.index_text()])[0]
        with self.store.transaction():
            current = self.store.get(memory.id)  # what changed while the text was embedded stays
            if importance is not None:
                current.importance = importance
            current.tags = sorted((set(current.tags) | {t.strip() for t in tags if t.strip()}) - set(untags))
            if vector is None:
                self.store.update([current])
                return current
            current.text = text  # type: ignore[assignment]
            self.store.sidecar.record(
                [HistoryEntry(current.id, current.user, current.kind, "EDIT", old_text, current.text, self.clock())]
            )
            self.store.upsert([current], [vector], embedder=identity)
            # What the old text superseded holds again, unless the new text supersedes it too.
            self.changes.reopen([current.id])
            with self.store.optional_write("not checked for the memories it supersedes"):
                self.changes.supersede([current])
            # The next consolidation writes its day's summaries again and extracts its facts anew.
            for stage in ("day", "fact"):
                self.store.sidecar.unmark_consolidated([current.id], stage)
        return current

    def list_memories(
        self,
        user: str | None = None,
        kind: str | None = None,
        limit: int = 20,
        archived: bool = False,
        tags: Sequence[str] = (),
    ) -> list[Memory]:
        """The ``limit`` newest active memories of ``user`` (0: all), newest first; the
        archived (forgotten) ones instead when ``archived``; only those that carry every
        one of ``tags``. Facts that have ended (UPDATE, DELETE) are not listed; ``history``
        shows them."""
        if kind is not None and kind not in KIND_VALUES:
            raise UsageError(f"unknown kind {kind!r}; choose one of {', '.join(KIND_VALUES)}")
        if limit < 0:
            raise UsageError("--limit must be 0 (all) or more")
        self.flush_pending()
        with self.store.transaction():
            memories = self.store.memories(
                user=self.user(user), kind=kind, archived=archived, ended=None if archived else False
            )
        wanted = set(tags)
        if wanted:
            memories = [m for m in memories if wanted.issubset(m.tags)]
        memories.reverse()
        return memories[:limit] if limit else memories

    def history(self, memory_id: str | None = None, user: str | None = None, limit: int = 20) -> list[HistoryEntry]:
        """The history of one memory (an id or unique prefix of ``MIN_PREFIX``+ characters, oldest event
        first), or without an id the newest ``limit`` events of ``user`` (0: all).

        Raises NotFoundError when no memory in the store or the history has that id."""
        if limit < 0:
            raise UsageError("--limit must be 0 (all) or more")
        with self.store.transaction():
            sidecar = self.store.sidecar
            if memory_id is None:
                return sidecar.history(user=self.user(user), limit=limit)
            try:
                full = self.store.get(memory_id).id
            except NotFoundError:
                matches = sidecar.history_ids(memory_id) if len(memory_id) >= MIN_PREFIX else []
                if len(matches) != 1:
                    detail = (
                        f"is ambiguous ({len(matches)} memories)"
                        if matches
                        else f"matches no memory or history{short_prefix(memory_id)}"
                    )
                    raise NotFoundError(f"memory id {memory_id!r} {detail}") from None
                full = matches[0]
            return sidecar.history(memory_id=full)

    def stats(self, user: str | None = None) -> dict[str, Any]:
        """Counts by kind and user, the day range, a retention histogram (10 bins over
        0..1 of active memories), fading / archived / pinned counts, pending, and the size
        in bytes of the store (Chroma and the sidecar database with its -wal and -shm)."""
        user = self.user(user)
        now = self.clock()
        with self.store.transaction():
            everyone = self.store.memories()
            recorded = self.store.embedder_record()
        mine = [m for m in everyone if m.user == user]
        active = [m for m in mine if not m.archived]
        decay, unit = self.settings.decay_for(user), UNIT_SECONDS[self.settings.time_unit]
        retentions = [retention(m, now, decay, unit) for m in active]
        # the sidecar's -wal and -shm with it: with the service up the file may be 4 KB, the rest in its log
        files = (
            [*self.paths.store_dir.rglob("*"), *self.paths.database_files()] if self.paths.store_dir.exists() else []
        )
        size = sum(p.stat().st_size for p in files if p.is_file())
        return {
            "user": user,
            "memories": len(active),
            "by_kind": dict(Counter(m.kind for m in active)),
            "first_day": min((m.day for m in active), default=None),
            "last_day": max((m.day for m in active), default=None),
            "sessions": len({m.session for m in active if m.session}),
            "retention_histogram": histogram(retentions),
            "fading": sum(r < self.settings.forget_threshold for r in retentions),
            "archived": len(mine) - len(active),
            "pinned": sum(m.pinned for m in active),
            "all_users": dict(Counter(m.user for m in everyone)),
            "pending": len(self.pending()),
            "store_bytes": size,
            "embedder": recorded,
            "embedder_configured": self._configured_embedder(),
        }

    def forget(
        self,
        user: str | None = None,
        all_users: bool = False,
        stochastic: bool = False,
        seed: int | None = None,
        dry_run: bool = False,
        purge: bool = False,
    ) -> ForgetReport:
        """The forget pass over ``user``'s memories, or every user's (``all_users``); see
        ``Changes.forget``."""
        return self.changes.forget(None if all_users else self.user(user), stochastic, seed, dry_run, purge)

    def archive(self, memory_id: str) -> Memory:
        """See ``Changes.archive``."""
        return self.changes.archive(memory_id)

    def restore(self, memory_id: str) -> Memory:
        """See ``Changes.restore``."""
        return self.changes.restore(memory_id)

    def pin(self, memory_id: str, pinned: bool = True) -> Memory:
        """See ``Changes.pin``."""
        return self.changes.pin(memory_id, pinned)

    def feedback(self, memory_id: str, vote: int) -> Memory:
        """See ``Changes.feedback``."""
        return self.changes.feedback(memory_id, vote)
