"""Property tests of ``memcli.recall.forgetting``: retention R = exp(-d t / S), reinforcement, the
forget pass (threshold and stochastic), daily summaries following their day's turns, and
the retention histogram. The expected values are computed here from the formula, not by
calling back into the code under test."""

from __future__ import annotations

import math
from collections import defaultdict
from pathlib import Path

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from memcli.config import Settings
from memcli.memory import Kind, Memory
from memcli.recall.forgetting import UNIT_SECONDS, days_to_forget, elapsed, forget_pass, histogram, reinforce, retention

DAY = 86400.0
T0 = 1_735_732_800.0  # 2025-01-01T12:00:00Z

PROPERTY = settings(deadline=None, max_examples=150)


def mem(
    memory_id: str = "m",
    *,
    created: float = T0,
    strength: float = 1.0,
    user: str = "u",
    kind: str = Kind.TURN.value,
    day: str = "2025-01-01",
    last: float = 0.0,
    pinned: bool = False,
    archived: bool = False,
) -> Memory:
    return Memory(
        id=memory_id,
        user=user,
        kind=kind,
        text=f"text of {memory_id}",
        created_at=created,
        day=day,
        strength=strength,
        last_recalled_at=last,
        pinned=pinned,
        archived=archived,
    )


def expected_r(days: float, strength: float, decay: float) -> float:
    """The paper's formula, written out independently: t in days, S divides."""
    return math.exp(-decay * max(0.0, days) / strength)


strengths = st.floats(min_value=0.1, max_value=100.0, allow_nan=False)
decays = st.floats(min_value=0.01, max_value=10.0, allow_nan=False)
ages = st.floats(min_value=0.0, max_value=365.0, allow_nan=False)  # days
units = st.sampled_from(sorted(UNIT_SECONDS))


# retention ---------------------------------------------------------------------------


@PROPERTY
@given(strengths, decays, units)
def test_retention_is_one_at_the_moment_of_learning(strength: float, decay: float, unit: str) -> None:
    assert retention(mem(strength=strength), T0, decay, UNIT_SECONDS[unit]) == 1.0


@PROPERTY
@given(strengths, decays, ages)
def test_retention_matches_the_formula(strength: float, decay: float, age: float) -> None:
    now = T0 + age * DAY
    r = retention(mem(strength=strength), now, decay, DAY)
    assert r == pytest.approx(expected_r((now - T0) / DAY, strength, decay), rel=1e-9, abs=1e-300)


@PROPERTY
@given(strengths, decays, ages, ages)
def test_retention_falls_with_time(strength: float, decay: float, a: float, b: float) -> None:
    early, late = sorted((a, b))
    memory = mem(strength=strength)
    r_early = retention(memory, T0 + early * DAY, decay)
    r_late = retention(memory, T0 + late * DAY, decay)
    assert r_late <= r_early
    if decay * (late - early) / strength > 1e-6 and decay * late / strength < 700:
        assert r_late < r_early


@PROPERTY
@given(strengths, strengths, decays, st.floats(min_value=1e-3, max_value=365.0))
def test_retention_rises_with_strength(s1: float, s2: float, decay: float, age: float) -> None:
    weak, strong = sorted((s1, s2))
    now = T0 + age * DAY
    r_weak = retention(mem(strength=weak), now, decay)
    r_strong = retention(mem(strength=strong), now, decay)
    assert r_strong >= r_weak
    if strong - weak > 1e-6 * strong and decay * age / weak < 700 and decay * age / strong > 1e-9:
        assert r_strong > r_weak


@PROPERTY
@given(strengths, decays, ages, units)
def test_retention_is_in_zero_one(strength: float, decay: float, age: float, unit: str) -> None:
    seconds = UNIT_SECONDS[unit]
    r = retention(mem(strength=strength), T0 + age * seconds, decay, seconds)
    assert 0.0 <= r <= 1.0
    if decay * age / strength < 700:  # below that exp() does not underflow
        assert r > 0.0


@PROPERTY
@given(strengths, decays, st.floats(min_value=0.0, max_value=1000.0), units)
def test_time_unit_scales_t(strength: float, decay: float, hours: float, unit: str) -> None:
    """t counts in time_unit: the same span in hours is the same R as in days with d · 24."""
    now = T0 + hours * 3600.0
    in_unit = retention(mem(strength=strength), now, decay, UNIT_SECONDS[unit])
    span_in_unit = (now - T0) / UNIT_SECONDS[unit]
    assert in_unit == pytest.approx(math.exp(-decay * span_in_unit / strength), rel=1e-9, abs=1e-300)


@PROPERTY
@given(strengths, decays, st.floats(min_value=0.0, max_value=10_000.0))
def test_pinned_memory_never_fades(strength: float, decay: float, age: float) -> None:
    assert retention(mem(strength=strength, pinned=True), T0 + age * DAY, decay) == 1.0


@PROPERTY
@given(strengths, decays, st.floats(min_value=0.0, max_value=365.0))
def test_clock_before_learning_counts_as_no_time(strength: float, decay: float, early: float) -> None:
    """A clock earlier than the memory (skew, --now in the past) is t = 0, never t < 0 (R ≤ 1)."""
    memory = mem(strength=strength)
    assert elapsed(memory, T0 - early * DAY) == 0.0
    assert retention(memory, T0 - early * DAY, decay) == 1.0


@PROPERTY
@given(decays, st.floats(min_value=0.01, max_value=365.0))
def test_stronger_memory_fades_slower_not_faster(decay: float, age: float) -> None:
    """Guard against MemoryBank's precedence bug (exp(-t / 5*S) == exp(-(t/5)·S)): with
    S = 5 against S = 1 at the same t > 0, S = 5 keeps MORE."""
    now = T0 + age * DAY
    r5 = retention(mem(strength=5.0), now, decay)
    r1 = retention(mem(strength=1.0), now, decay)
    assert r5 >= r1
    if decay * age < 700:  # r1 does not underflow to 0
        assert r5 > r1
    assert r5 == pytest.approx(math.exp(-decay * (now - T0) / DAY / 5.0), rel=1e-9, abs=1e-300)


def test_stronger_memory_fades_slower_worked_example() -> None:
    now = T0 + 2 * DAY
    assert retention(mem(strength=5.0), now) == pytest.approx(math.exp(-0.4))
    assert retention(mem(strength=1.0), now) == pytest.approx(math.exp(-2.0))
    buggy_s5 = math.exp(-2 / 5 * 5)  # what the reference code computes for S = 5
    assert retention(mem(strength=5.0), now) != pytest.approx(buggy_s5)


# reinforcement --------------------------------------------------------------------------


@PROPERTY
@given(strengths, st.floats(min_value=0.0, max_value=365.0), st.integers(0, 50))
def test_reinforce_add_gives_s_plus_one_and_restarts_the_clock(strength: float, age: float, count: int) -> None:
    memory = mem(strength=strength)
    memory.recall_count = count
    now = T0 + age * DAY
    out = reinforce(memory, now, "add")
    assert out is memory
    assert memory.strength == pytest.approx(strength + 1.0)
    assert memory.last_recalled_at == now
    assert memory.recall_count == count + 1
    assert elapsed(memory, now) == 0.0
    assert retention(memory, now) == 1.0


@PROPERTY
@given(strengths, st.floats(min_value=1.01, max_value=5.0), st.floats(min_value=0.0, max_value=365.0))
def test_reinforce_multiply_gives_s_times_boost(strength: float, boost: float, age: float) -> None:
    memory = mem(strength=strength)
    now = T0 + age * DAY
    reinforce(memory, now, "multiply", boost)
    assert memory.strength == pytest.approx(strength * boost)
    assert memory.last_recalled_at == now
    assert memory.recall_count == 1


schedules = st.lists(st.floats(min_value=0.0, max_value=200.0), min_size=1, max_size=8)  # days after learning


@PROPERTY
@given(
    st.sampled_from(["add", "multiply"]),
    st.floats(min_value=1.01, max_value=3.0),
    st.floats(min_value=0.2, max_value=10.0),
    st.floats(min_value=0.01, max_value=3.0),
    schedules,
    st.floats(min_value=0.0, max_value=300.0),
)
def test_a_recalled_memory_outlives_an_unrecalled_twin(
    mode: str, boost: float, s0: float, decay: float, recalls: list[float], later: float
) -> None:
    recalls = sorted(recalls)
    recalled, twin = mem(strength=s0), mem(strength=s0)
    for day in recalls:
        reinforce(recalled, T0 + day * DAY, mode, boost)
    now = T0 + (recalls[-1] + later) * DAY
    r_recalled = retention(recalled, now, decay)
    r_twin = retention(twin, now, decay)
    assert r_recalled >= r_twin
    t_twin = recalls[-1] + later
    if t_twin > 1e-6 and decay * t_twin / s0 < 700:
        assert r_recalled > r_twin
    # and so the forget pass never forgets the recalled one while keeping the twin
    for threshold in (0.05, 0.3, 0.9):
        v_rec = forget_pass([recalled], now, decay=decay, threshold=threshold)[0]
        v_twin = forget_pass([twin], now, decay=decay, threshold=threshold)[0]
        assert v_rec.forgotten <= v_twin.forgotten
    for seed in ("a", "b", "c"):
        v_rec = forget_pass([recalled], now, decay=decay, stochastic=True, seed=seed)[0]
        v_twin = forget_pass([twin], now, decay=decay, stochastic=True, seed=seed)[0]
        assert v_rec.forgotten <= v_twin.forgotten


@PROPERTY
@given(
    st.floats(min_value=0.5, max_value=30.0),  # how far before learning the recall happened
    st.floats(min_value=0.1, max_value=30.0),  # how long after learning we look
)
def test_a_recall_dated_before_learning_does_not_age_the_memory(before: float, after: float) -> None:
    recalled, twin = mem(), mem()
    reinforce(recalled, T0 - before * DAY, "add")
    now = T0 + after * DAY
    assert retention(recalled, now) >= retention(twin, now)


# the forget pass --------------------------------------------------------------------------

fading_memory = st.tuples(
    st.floats(min_value=0.0, max_value=60.0),  # age in days
    st.floats(min_value=0.2, max_value=20.0),  # strength
    st.sampled_from([Kind.TURN.value, Kind.NOTE.value, Kind.FACT.value]),
    st.booleans(),  # pinned
    st.sampled_from(["ann", "bob"]),
)


@PROPERTY
@given(
    st.lists(fading_memory, min_size=0, max_size=30),
    st.floats(min_value=0.01, max_value=0.99),
    st.floats(min_value=0.05, max_value=5.0),
    st.floats(min_value=0.05, max_value=5.0),
)
def test_threshold_pass_forgets_exactly_the_faded(rows, threshold: float, d_ann: float, d_default: float) -> None:
    now = T0 + 100 * DAY
    memories = [
        mem(f"m{i}", created=now - age * DAY, strength=s, kind=kind, pinned=pinned, user=user)
        for i, (age, s, kind, pinned, user) in enumerate(rows)
    ]
    by_id = {m.id: row for m, row in zip(memories, rows)}
    verdicts = forget_pass(memories, now, decay_for={"ann": d_ann}, decay=d_default, threshold=threshold)
    assert sorted(v.memory.id for v in verdicts) == sorted(by_id)
    for v in verdicts:
        age, s, _, pinned, user = by_id[v.memory.id]
        d = d_ann if user == "ann" else d_default
        r = 1.0 if pinned else expected_r((now - v.memory.created_at) / DAY, s, d)
        assert v.retention == pytest.approx(r, rel=1e-9, abs=1e-300)
        assert v.elapsed == pytest.approx(age, abs=1e-6)
        assume(abs(r - threshold) > 1e-9)
        assert v.forgotten == (not pinned and r < threshold), (v, r, threshold)
    # the pass decides, it does not act
    assert not any(m.archived for m in memories)


def test_threshold_pass_worked_example() -> None:
    """d = 1, θ = 0.05: S = 1 goes between day 2 (R 0.135) and day 3.5 (R 0.030); S = 2 stays at day 3.5 (R 0.174)."""
    now = T0 + 3.5 * DAY
    memories = [mem("young", created=now - 2 * DAY), mem("old", created=T0), mem("strong", created=T0, strength=2.0)]
    verdicts = {v.memory.id: v.forgotten for v in forget_pass(memories, now, threshold=0.05)}
    assert verdicts == {"young": False, "old": True, "strong": False}


@PROPERTY
@given(st.lists(st.sampled_from([k.value for k in Kind]), min_size=1, max_size=20))
def test_global_summaries_portraits_and_running_memory_are_never_examined(kinds: list[str]) -> None:
    now = T0 + 1000 * DAY
    memories = [mem(f"m{i}", kind=kind) for i, kind in enumerate(kinds)]
    verdicts = forget_pass(memories, now)
    # relation memories follow the graph memory (consolidation keeps them in step), not retention
    never = {Kind.EVENT_GLOBAL.value, Kind.PORTRAIT_GLOBAL.value, Kind.RUNNING_SUMMARY.value, Kind.RELATION.value}
    examined = {v.memory.id for v in verdicts}
    assert examined == {m.id for m in memories if m.kind not in never}
    fading = {Kind.TURN.value, Kind.NOTE.value, Kind.FACT.value}
    assert all(v.forgotten for v in verdicts if v.memory.kind in fading)  # 1000 days at S = 1


@PROPERTY
@given(st.lists(st.tuples(st.floats(0.0, 60.0), st.booleans()), min_size=1, max_size=20), st.booleans())
def test_archived_memories_are_not_examined(rows, stochastic: bool) -> None:
    now = T0 + 60 * DAY
    memories = [mem(f"m{i}", created=now - age * DAY, archived=archived) for i, (age, archived) in enumerate(rows)]
    verdicts = forget_pass(memories, now, stochastic=stochastic, seed="s")
    assert {v.memory.id for v in verdicts} == {m.id for m in memories if not m.archived}


@PROPERTY
@given(
    st.lists(st.tuples(st.floats(0.0, 30.0), st.floats(0.2, 10.0)), min_size=1, max_size=40),
    st.text(max_size=8),
    st.floats(min_value=0.05, max_value=3.0),
)
def test_stochastic_pass_is_idempotent_for_the_same_seed(rows, seed: str, decay: float) -> None:
    now = T0 + 30 * DAY
    memories = [mem(f"m{i}", created=now - age * DAY, strength=s) for i, (age, s) in enumerate(rows)]
    first = [(v.memory.id, v.forgotten) for v in forget_pass(memories, now, decay=decay, stochastic=True, seed=seed)]
    again = [
        (v.memory.id, v.forgotten)
        for v in forget_pass(list(reversed(memories)), now, decay=decay, stochastic=True, seed=seed)
    ]
    assert sorted(first) == sorted(again)
    # what survives the pass survives it again: the second pass over the survivors forgets nothing
    survivors = [m for m in memories if not dict(first)[m.id]]
    assert not any(v.forgotten for v in forget_pass(survivors, now, decay=decay, stochastic=True, seed=seed))


@PROPERTY
@given(st.lists(st.floats(0.2, 10.0), min_size=1, max_size=20), st.text(max_size=8))
def test_stochastic_pass_keeps_fresh_and_pinned_memories(strengths_, seed: str) -> None:
    now = T0 + 400 * DAY
    fresh = [mem(f"f{i}", created=now, strength=s) for i, s in enumerate(strengths_)]
    pinned = [mem(f"p{i}", created=T0, strength=s, pinned=True) for i, s in enumerate(strengths_)]
    ancient = [mem(f"a{i}", created=now - 100_000 * DAY, strength=s) for i, s in enumerate(strengths_)]
    verdicts = {
        v.memory.id: v.forgotten for v in forget_pass(fresh + pinned + ancient, now, stochastic=True, seed=seed)
    }
    assert not any(verdicts[m.id] for m in fresh + pinned)  # R = 1: never
    assert all(verdicts[m.id] for m in ancient)  # R ≈ 0: always


@settings(deadline=None, max_examples=25)
@given(st.integers(0, 10_000), st.floats(min_value=0.1, max_value=5.0))
def test_stochastic_fraction_forgotten_is_mean_of_one_minus_r(seed: int, decay: float) -> None:
    """Over many memories the number forgotten is Σ(1 − R) give or take a few standard deviations."""
    n = 2000
    now = T0 + 20 * DAY
    memories = [mem(f"m{i:05d}", created=now - (i % 97) / 97 * 6 * DAY, strength=1 + (i % 13) / 4) for i in range(n)]
    verdicts = forget_pass(memories, now, decay=decay, stochastic=True, seed=str(seed))
    probabilities = [
        1 - expected_r(m_age, s, decay) for m_age, s in (((now - m.created_at) / DAY, m.strength) for m in memories)
    ]
    expected = sum(probabilities)
    sd = math.sqrt(sum(p * (1 - p) for p in probabilities))
    forgotten = sum(v.forgotten for v in verdicts)
    assert abs(forgotten - expected) <= 5 * sd + 1, (forgotten, expected, sd)


def test_stochastic_seed_changes_the_draws() -> None:
    now = T0 + DAY
    memories = [mem(f"m{i}", created=T0) for i in range(200)]  # R = e^-1 each
    a = [v.forgotten for v in forget_pass(memories, now, stochastic=True, seed="1")]
    b = [v.forgotten for v in forget_pass(memories, now, stochastic=True, seed="2")]
    assert a != b


# daily summaries follow their day's turns --------------------------------------------------

turn_rows = st.lists(
    st.tuples(
        st.sampled_from(["ann", "bob"]),
        st.sampled_from(["2025-01-01", "2025-01-02", "2025-01-03"]),
        st.floats(0.0, 10.0),  # age, days
        st.booleans(),  # archived already
    ),
    max_size=20,
)


@PROPERTY
@given(turn_rows, st.booleans(), st.sampled_from([Kind.EVENT_DAILY.value, Kind.PORTRAIT_DAILY.value]))
def test_a_daily_summary_goes_only_with_the_last_turn_of_its_day(rows, pin_one: bool, day_kind: str) -> None:
    now = T0 + 10 * DAY
    turns = [
        mem(f"t{i}", user=user, day=day, created=now - age * DAY, archived=archived)
        for i, (user, day, age, archived) in enumerate(rows)
    ]
    # a note on the same day does not keep the summary alive, and is judged on its own
    notes = [mem("note", user="ann", day="2025-01-01", kind=Kind.NOTE.value, created=now)]
    summaries = [
        mem(f"s-{user}-{day}", user=user, day=day, kind=day_kind, created=T0)
        for user in ("ann", "bob")
        for day in ("2025-01-01", "2025-01-02", "2025-01-03")
        if any(r[0] == user and r[1] == day for r in rows)
    ]
    if pin_one and summaries:
        summaries[0].pinned = True
    verdicts = {v.memory.id: v for v in forget_pass(turns + notes + summaries, now, threshold=0.05)}
    gone_turns: dict[tuple[str, str], list[bool]] = defaultdict(list)
    for t, (user, day, age, archived) in zip(turns, rows):
        r = expected_r((now - t.created_at) / DAY, 1.0, 1.0)
        assume(abs(r - 0.05) > 1e-9)
        gone_turns[(user, day)].append(archived or r < 0.05)
    for s in summaries:
        expected = all(gone_turns[(s.user, s.day)]) and not s.pinned
        assert verdicts[s.id].forgotten == expected, (s.id, gone_turns[(s.user, s.day)])
    assert not verdicts["note"].forgotten


def test_daily_summary_worked_example() -> None:
    now = T0 + 10 * DAY
    old = mem("old", day="2025-01-01", created=T0)
    fresh = mem("fresh", day="2025-01-01", created=now - DAY)
    other_day = mem("other", day="2025-01-02", created=T0)
    s1 = mem("s1", kind=Kind.EVENT_DAILY.value, day="2025-01-01", created=T0)
    s2 = mem("s2", kind=Kind.EVENT_DAILY.value, day="2025-01-02", created=T0)
    bob = mem("bob-turn", day="2025-01-01", created=now - DAY, user="bob")
    s_bob = mem("s-bob", kind=Kind.EVENT_DAILY.value, day="2025-01-02", created=T0, user="bob")
    verdicts = {v.memory.id: v.forgotten for v in forget_pass([old, fresh, other_day, bob, s1, s2, s_bob], now)}
    # s-bob: bob's 01-02 has no turn left, his fresh turn is another day
    assert verdicts == {
        "old": True,
        "fresh": False,
        "other": True,
        "bob-turn": False,
        "s1": False,
        "s2": True,
        "s-bob": True,
    }
    # once the fresh turn fades too, the day's summary goes with it
    later = {v.memory.id: v.forgotten for v in forget_pass([old, fresh, s1], now + 5 * DAY)}
    assert later == {"old": True, "fresh": True, "s1": True}


# histogram -------------------------------------------------------------------------------

interior = st.tuples(st.integers(0, 9), st.floats(min_value=0.01, max_value=0.99)).map(
    lambda p: (p[0], (p[0] + p[1]) / 10)
)


@PROPERTY
@given(st.lists(interior, max_size=60), st.integers(0, 3), st.integers(0, 3))
def test_histogram_counts_each_value_in_its_bin(points, zeros: int, ones: int) -> None:
    values = [v for _, v in points] + [0.0] * zeros + [1.0] * ones
    counts = histogram(values)
    assert len(counts) == 10
    assert sum(counts) == len(values)
    expected = [0] * 10
    for b, _ in points:
        expected[b] += 1
    expected[0] += zeros
    expected[9] += ones  # 1.0 falls in the last bin
    assert counts == expected


@PROPERTY
@given(st.lists(st.floats(min_value=0.0, max_value=1.0), max_size=50), st.integers(1, 20))
def test_histogram_keeps_every_value(values: list[float], bins: int) -> None:
    counts = histogram(values, bins)
    assert len(counts) == bins and sum(counts) == len(values) and min(counts, default=0) >= 0
    assert histogram([], bins) == [0] * bins


# the default strengths: a human time scale (issue 22) ----------------------------------------

FORGETTING_DOC = Path(__file__).resolve().parent.parent / "docs" / "forgetting.md"


def never_recalled_days(strength: float, defaults: Settings) -> float:
    """Days until R = exp(-d t / S) < θ for a memory never recalled: t > S ln(1/θ) / d."""
    return strength * math.log(1 / defaults.forget_threshold) / defaults.decay * UNIT_SECONDS[defaults.time_unit] / DAY


def default_strengths() -> dict[str, tuple[str, float]]:
    """For each row of the table in docs/forgetting.md: S0 as the table writes it, and its value, from the defaults."""
    defaults = Settings()
    note, important = defaults.strength_note, defaults.important_strength
    return {
        "chat turn, imported turn": (f"= {defaults.strength_turn:g}", defaults.strength_turn),
        "fact (consolidation)": (f"= {defaults.strength_fact:g}", defaults.strength_fact),
        "note (`remember`, imported notes)": (f"= {note:g}", note),
        "important note (importance ≥ `important_threshold`, 0.8)": (f"= {note:g} × {important:g}", note * important),
    }


def test_default_strengths_keep_a_note_or_fact_60_days_and_forget_it_within_a_year() -> None:
    defaults = Settings()
    for strength in (defaults.strength_note, defaults.strength_fact):
        days = never_recalled_days(strength, defaults)
        assert 60 <= days < 365, (strength, days)
        assert days_to_forget(
            strength, defaults.decay, defaults.forget_threshold, UNIT_SECONDS[defaults.time_unit]
        ) == pytest.approx(days)
        note = mem(strength=strength)
        assert retention(note, T0 + 60 * DAY, defaults.decay) >= defaults.forget_threshold
        assert retention(note, T0 + 365 * DAY, defaults.decay) < defaults.forget_threshold
    # an important note lasts longer, still within a year; the threshold 0.8 is the docs'
    assert defaults.important_strength > 1 and defaults.important_threshold == 0.8
    assert never_recalled_days(defaults.strength_note * defaults.important_strength, defaults) < 365


def test_default_strengths_keep_a_turn_7_days_and_forget_it_within_90() -> None:
    defaults = Settings()
    days = never_recalled_days(defaults.strength_turn, defaults)
    assert 7 <= days < 90, days
    turn = mem(strength=defaults.strength_turn)
    assert retention(turn, T0 + 7 * DAY, defaults.decay) >= defaults.forget_threshold
    assert retention(turn, T0 + 90 * DAY, defaults.decay) < defaults.forget_threshold
    [verdict] = forget_pass([turn], T0 + 90 * DAY, threshold=defaults.forget_threshold)
    assert verdict.forgotten


def test_readme_forgetting_table_gives_the_days_of_the_defaults() -> None:
    defaults = Settings()
    rows = {
        line.split("|")[1].strip(): [cell.strip() for cell in line.split("|")[2:-1]]
        for line in FORGETTING_DOC.read_text(encoding="utf-8").splitlines()
        if line.startswith("| ")
    }
    for kind, (written, strength) in default_strengths().items():
        setting, before, after = rows[kind]
        assert setting.endswith(written), (kind, setting)
        assert float(after) == pytest.approx(round(never_recalled_days(strength, defaults), 1)), kind
        old_strength = 3.0 if kind.startswith("important") else 1.0  # every kind's S0 before issue 22
        assert float(before) == pytest.approx(round(never_recalled_days(old_strength, defaults), 1)), kind
