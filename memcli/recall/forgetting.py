"""Forgetting and reinforcement along the Ebbinghaus curve.

Retention ``R = exp(-d · t / S)`` (MemoryBank §2.3 with Landwehr et al.'s decay constant
d): t is the time since the memory was learned or last recalled, in ``time_unit``s; S is
its strength. MemoryBank's reference code writes ``exp(-t / 5*S)``, which Python reads as
``exp(-(t/5)·S)`` so that stronger memories fade *faster*; here S divides, as the paper
means. Each recall reinforces: ``S += 1`` (MemoryBank) or ``S *= b`` (Landwehr et al.),
and t restarts from 0.

How long a memory lasts is set by its initial strength S0, one per kind (the settings
``strength_turn``, ``strength_note``, ``strength_fact``): never recalled, it is forgotten
once R < θ (``forget_threshold``), i.e. after ``t = S0 · ln(1/θ) / d`` time units
(``days_to_forget``). With θ = 0.05, d = 1 and t in days that is about 3·S0 days.
"""

from __future__ import annotations

import hashlib
import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from memcli.memory import Kind, Memory

UNIT_SECONDS = {"second": 1.0, "minute": 60.0, "hour": 3600.0, "day": 86400.0, "week": 604800.0}

FADING_KINDS = frozenset({Kind.TURN.value, Kind.NOTE.value, Kind.FACT.value})
"""Kinds whose retention decides their fate. Daily summaries follow their day's turns;
global summaries, portraits and the running memory are never forgotten; relation memories
follow the graph memory (consolidation ends one when a newer relation closes it)."""

DAY_KINDS = frozenset({Kind.EVENT_DAILY.value, Kind.PORTRAIT_DAILY.value})
"""Kinds forgotten only when every turn of their (user, day) is gone (MemoryBank)."""


def elapsed(memory: Memory, now: float, unit: float = UNIT_SECONDS["day"]) -> float:
    """t: time since ``memory`` was learned (or imported: ``retained_from``) or last
    recalled, whichever is latest, in units of ``unit`` seconds (≥ 0). A recall dated
    before the memory was learned (a replayed timeline) does not age it."""
    since = max(memory.created_at, memory.retained_from, memory.last_recalled_at)
    return max(0.0, now - since) / unit


def retention(memory: Memory, now: float, decay: float = 1.0, unit: float = UNIT_SECONDS["day"]) -> float:
    """R = exp(-d · t / S), in 0..1; 1 for a pinned memory. ``now`` in unix seconds."""
    if memory.pinned:
        return 1.0
    return math.exp(-decay * elapsed(memory, now, unit) / max(memory.strength, 1e-9))


def days_to_forget(
    strength: float, decay: float = 1.0, threshold: float = 0.05, unit: float = UNIT_SECONDS["day"]
) -> float:
    """Days until a memory of strength S that is never recalled falls below ``threshold``:
    R = exp(-d·t/S) < θ when t > S·ln(1/θ)/d time units of ``unit`` seconds (MemoryBank
    §2.3). The forgetting table of docs/forgetting.md is this function over the default settings."""
    return strength * math.log(1.0 / threshold) / decay * unit / UNIT_SECONDS["day"]


def reinforce(memory: Memory, now: float, mode: str = "add", boost: float = 1.5) -> Memory:
    """Record a recall of ``memory`` at ``now``: strengthen it and restart its clock (in place).

    mode ``add``: S += 1 (MemoryBank); ``multiply``: S *= boost (Landwehr et al.).
    """
    memory.strength = memory.strength + 1.0 if mode == "add" else memory.strength * boost
    memory.last_recalled_at = now
    memory.recall_count += 1
    return memory


def draw(seed: str, memory_id: str) -> float:
    """A uniform number in [0, 1) fixed by (seed, memory id): the same pass at the same
    clock time and seed makes the same choices, so a stochastic forget pass is idempotent."""
    digest = hashlib.sha256(f"{seed}\x1f{memory_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


@dataclass
class Verdict:
    """A memory the forget pass examined: its retention R, elapsed t (in time units), and
    whether it is forgotten."""

    memory: Memory
    retention: float
    elapsed: float
    forgotten: bool


def forget_pass(
    memories: Iterable[Memory],
    now: float,
    decay_for: dict[str, float] | None = None,
    decay: float = 1.0,
    unit: float = UNIT_SECONDS["day"],
    threshold: float = 0.05,
    stochastic: bool = False,
    seed: str = "",
) -> list[Verdict]:
    """Decide which active memories to forget at ``now`` (unix seconds).

    Threshold mode forgets a fading memory when R < ``threshold``; stochastic mode
    (MemoryBank) forgets it with probability 1 − R, i.e. when ``draw(seed, id) > R``.
    Pinned memories never fade. A daily event summary or daily portrait is forgotten only
    when no turn of its (user, day) remains. Archived memories are skipped. Returns one
    Verdict per memory examined.
    """
    decay_for = decay_for or {}
    active = [m for m in memories if not m.archived]
    verdicts: list[Verdict] = []
    turns_left: dict[tuple[str, str], int] = defaultdict(int)
    for memory in active:
        if memory.kind not in FADING_KINDS:
            continue
        r = retention(memory, now, decay_for.get(memory.user, decay), unit)
        gone = (draw(seed, memory.id) > r) if stochastic else r < threshold
        gone = gone and not memory.pinned
        verdicts.append(Verdict(memory, r, elapsed(memory, now, unit), gone))
        if memory.kind == Kind.TURN.value and not gone:
            turns_left[(memory.user, memory.day)] += 1
    for memory in active:
        if memory.kind in DAY_KINDS:
            gone = turns_left[(memory.user, memory.day)] == 0 and not memory.pinned
            verdicts.append(Verdict(memory, 1.0, elapsed(memory, now, unit), gone))
    return verdicts


def histogram(values: Sequence[float], bins: int = 10) -> list[int]:
    """Counts of ``values`` (0..1) in ``bins`` equal bins; 1.0 falls in the last bin."""
    counts = [0] * bins
    for value in values:
        counts[min(bins - 1, max(0, int(value * bins)))] += 1
    return counts
