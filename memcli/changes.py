"""The per-memory changes: what happens to memories already in the store when they are
recalled, rated, pinned, forgotten, restored or deleted.

Each change reads the memory, changes it and writes it back in one store transaction, so
the Chroma record and the recall index (``MemoryStore.update``/``delete``) change
together and an in-memory recall index sees the change at its next query. ``Memcli``
(``memcli.core``) is the facade the front ends call; this module is where the changes
are made.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from memcli import forgetting
from memcli.config import Settings
from memcli.forgetting import UNIT_SECONDS, Verdict, forget_pass
from memcli.memory import Memory
from memcli.store import MemoryStore


@dataclass
class ForgetReport:
    """What a forget pass did. ``forgotten`` holds the verdicts of the forgotten memories
    (their retention and elapsed time, in ``time_unit``s); ``seconds``: wall time."""

    examined: int
    forgotten_count: int
    archived: int
    purged: int
    seconds: float
    dry_run: bool
    forgotten: list[Verdict]


class Changes:
    """Changes to stored memories, over ``store`` with ``settings`` (reinforcement mode,
    boost, decay, forget threshold) and ``clock`` (unix seconds)."""

    def __init__(self, store: MemoryStore, settings: Settings, clock: Callable[[], float]) -> None:
        self.store = store
        self.settings = settings
        self.clock = clock

    def reinforce(self, memories: Sequence[Memory], now: float | None = None) -> None:
        """Count ``memories`` as recalled at ``now`` (default: the clock): S grows by the
        ``reinforce`` setting (MemoryBank: S += 1; Landwehr et al.: S *= boost) and t
        restarts. The caller holds the store transaction."""
        if not memories:
            return
        now = self.clock() if now is None else now
        for memory in memories:
            forgetting.reinforce(memory, now, self.settings.reinforce, self.settings.boost)
        self.store.update(memories)

    def relearn(self, memory_id: str, now: float) -> Memory:
        """A forgotten (archived) memory told again: active again, its clock restarted at
        ``now``. An active memory is left as it is. Raises NotFoundError."""
        with self.store.transaction():
            memory = self.store.get(memory_id)
            if memory.archived:
                memory.archived, memory.archived_at, memory.last_recalled_at = False, 0.0, now
                self.store.update([memory])
        return memory

    def delete(self, memory_id: str) -> Memory:
        """Delete a memory for good (text and embedding); returns it. Raises NotFoundError."""
        with self.store.transaction():
            memory = self.store.get(memory_id)
            self.store.delete([memory.id])
        return memory

    def restore(self, memory_id: str) -> Memory:
        """Bring an archived memory back; its clock restarts now. Raises NotFoundError."""
        with self.store.transaction():
            memory = self.store.get(memory_id)
            memory.archived, memory.archived_at = False, 0.0
            memory.last_recalled_at = self.clock()
            self.store.update([memory])
        return memory

    def pin(self, memory_id: str, pinned: bool = True) -> Memory:
        """Pin (never fades) or unpin a memory. Raises NotFoundError."""
        with self.store.transaction():
            memory = self.store.get(memory_id)
            memory.pinned = pinned
            self.store.update([memory])
        return memory

    def feedback(self, memory_id: str, vote: int) -> Memory:
        """Add a vote (+1 up, −1 down) to a memory's feedback (the bot memory design notes'
        feedback score). Raises NotFoundError."""
        with self.store.transaction():
            memory = self.store.get(memory_id)
            memory.feedback += vote
            self.store.update([memory])
        return memory

    def forget(self, user: str | None, stochastic: bool = False, seed: int | None = None, dry_run: bool = False,
               purge: bool = False) -> ForgetReport:
        """The forget pass over the active memories of ``user`` (None: every user) at the
        clock's time (MemoryBank §2.3; see ``forgetting.forget_pass``): archive the faded
        memories, or with ``purge`` delete them for good; ``dry_run`` changes nothing.
        Idempotent for the same clock time (and seed)."""
        started = time.perf_counter()
        now = self.clock()
        settings = self.settings
        with self.store.transaction():
            memories = self.store.memories(user=user, archived=False)
            verdicts = forget_pass(
                memories, now, decay_for=settings.user_decay, decay=settings.decay, unit=UNIT_SECONDS[settings.time_unit],
                threshold=settings.forget_threshold, stochastic=stochastic, seed=f"{seed if seed is not None else ''}@{now!r}",
            )
            gone = [v for v in verdicts if v.forgotten]
            if not dry_run:
                if purge:
                    self.store.delete([v.memory.id for v in gone])
                else:
                    for v in gone:
                        v.memory.archived, v.memory.archived_at = True, now
                    self.store.update([v.memory for v in gone])
        archived = 0 if dry_run or purge else len(gone)
        purged = len(gone) if purge and not dry_run else 0
        return ForgetReport(len(verdicts), len(gone), archived, purged, time.perf_counter() - started, dry_run, gone)
