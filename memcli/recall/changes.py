"""The per-memory changes: what happens to memories already in the store when they are
recalled, rated, pinned, forgotten, restored or deleted.

Each change reads the memory, changes it and writes it back in one store transaction, so
the Chroma record and the recall index (``MemoryStore.update``/``delete``) change
together and an in-memory recall index sees the change at its next query. The engine
(``memcli.library.engine``) calls these; this module is where the changes are made.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from memcli.config import Settings
from memcli.memory import SUPERSEDED_KINDS, Kind, Memory, tells
from memcli.paths import scrub_history_file
from memcli.recall import forgetting
from memcli.recall.forgetting import UNIT_SECONDS, Verdict, forget_pass
from memcli.store.journal import Journal
from memcli.store.recall_index import RecallIndex
from memcli.store.sidecar import HistoryEntry, Sidecar
from memcli.store.statements import habit_terms, key_term, sqlite_lower
from memcli.store.store import MemoryStore
from memcli.text import updates

DERIVED_KINDS = frozenset(
    k.value
    for k in (
        Kind.FACT,
        Kind.EVENT_DAILY,
        Kind.EVENT_GLOBAL,
        Kind.PORTRAIT_DAILY,
        Kind.PORTRAIT_GLOBAL,
        Kind.RUNNING_SUMMARY,
        Kind.RELATION,
    )
)
"""Kinds that consolidation makes from other memories (their ``source_ids``). A relation
memory purged with one of its sources is made again, from the sources left, by the next
consolidation's graph step (``memcli.consolidation.graph_memory``)."""


def said_by(memory: Memory) -> str:
    """Who a memory speaks for: its speaker, or its user for a note (importers take spaces
    out of a user's name, so spaces do not count)."""
    return (memory.speaker or memory.user).replace(" ", "").lower()


@dataclass(frozen=True)
class UpdateDecision:
    """A chat model's update decision for one new memory at write time (Mem0's update
    phase, Chhikara et al. 2025, Algorithm 1, made by ``memcli.library.supersession``): the
    ids of the current memories it was shown (``shown``) and of those among them it ends
    (``ended``: an UPDATE or a DELETE). ``Changes.supersede`` applies it in place of the
    rules for the memories shown; the rules still read the others."""

    shown: frozenset[str]
    ended: frozenset[str]


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
    derived: int = 0
    """Memories made from the purged ones, deleted with them (``Changes.purge``)."""
    verdicts: list[Verdict] = field(default_factory=list)
    """Every memory examined, forgotten or not (``memcli forget --explain``)."""


@dataclass
class PurgeReport:
    """What deleting for good did (``Changes.purge``): the memories asked for, those made
    from them that went with them (``derived``), history events whose text was emptied,
    journal files dropped, and the wall time in seconds, of which ``compaction_seconds``
    rewriting the files (``MemoryStore.compact``)."""

    purged: list[Memory]
    derived: list[Memory]
    scrubbed: int
    journal_files: int
    seconds: float
    compaction_seconds: float


def _typed(memories: Iterable[Memory], sidecar: Sidecar) -> list[str]:
    """Every text that someone may have typed at the chat prompt for ``memories`` (notes and
    turns): the text each has now and every text it had before an edit (the EDIT events of
    its history: ``memcli edit --text``), whose lines ``scrub_history_file`` takes out of
    the prompt history. Read before the history's texts are scrubbed."""
    texts = []
    for memory in memories:
        if memory.kind in (Kind.NOTE.value, Kind.TURN.value):
            texts.append(memory.text)
            texts += [
                t for event in sidecar.history(memory_id=memory.id) for t in (event.old_text, event.new_text) if t
            ]
    return texts


def stale_derivatives(gone: Sequence[Memory], others: Sequence[Memory], folded: set[str]) -> list[Memory]:
    """The memories of ``others`` made from one of ``gone`` (all of one user), directly or
    through another: whatever cites a gone memory in its ``source_ids`` (a daily summary or
    portrait its turns, a fact its message pair, a global summary or portrait its daily
    ones), then what cites those. The running memory cites only the turns of the last
    session folded into it, but every turn through the session stage (``folded``: their
    ids) is in it, so it goes whenever one of those turns goes."""
    cited = {m.id for m in gone}
    running = any(m.kind == Kind.TURN.value and m.id in folded for m in gone)
    stale: dict[str, Memory] = {}
    derived = [m for m in others if m.kind in DERIVED_KINDS and m.id not in cited]
    grew = True
    while grew:
        grew = False
        for memory in derived:
            if memory.id not in stale and (
                (running and memory.kind == Kind.RUNNING_SUMMARY.value) or not cited.isdisjoint(memory.source_ids)
            ):
                stale[memory.id] = memory
                cited.add(memory.id)
                grew = True
    return list(stale.values())


def _needles(said: updates.Statement) -> tuple[list[str], list[str]]:
    """(any_of, all_of): what a memory that states the attribute of ``said`` (a statement
    of a new memory) holds in its text, lower-cased (``updates.CUES``; a dose's medicine cut
    as ``updates.key_needles`` cuts it; every word of a stopped habit)."""
    attribute = said.key.split(":", 1)[0]
    if attribute == updates.HABIT:
        # a stem's final i is a word's y ("spotifi" of "Spotify"): looked for without it
        return [], sorted(w[:-1] if len(w) > 3 and w.endswith("i") else w for w in said.words)
    if attribute == updates.DOSE:
        return updates.key_needles(said.key), []
    if attribute == updates.JOB:  # a role at an employer names no cue but its title's head
        return [*updates.CUES[attribute], *updates.ROLE_HEAD_WORDS], []
    return list(updates.CUES[attribute]), []


def _candidates(
    index: RecallIndex, user: str, said: updates.Statement, covered: bool
) -> list[tuple[str, str, str, list[updates.Statement] | None]]:
    """(id, text, record, statements or None) of the current notes and turns of ``user``
    that may state the attribute of ``said`` (a new memory's statement): those whose text
    holds its needles (``_needles``). For a user the statements tables cover
    (``memcli.store.statements``), looked up by the attribute's term (or a habit's words)
    with what each states, then filtered by the needles as the scan filters, so that the
    candidates are the scan's among those that state something of the attribute; for
    another, one scan of the user's rows (``RecallIndex.current_holding``), statements None."""
    any_of, all_of = _needles(said)
    attribute, _, name = said.key.partition(":")
    terms = habit_terms(said.words) if attribute == updates.HABIT else [key_term(said.key)]
    lookups = [terms]
    if attribute == updates.MEMBERSHIP and updates.may_be_initialism(name):
        # an initialism ("cancelled PF") keys no term of the name it stands for: the held
        # membership's initials, kept as a term of their own, find it ("^pf" of "Planet Fitness")
        lookups.append([updates.INITIALS + name.lower()])
    if not covered or not terms:  # not covered, or a habit of no word to look up by: the scan
        rows = index.current_holding(user, SUPERSEDED_KINDS, any_of=any_of, all_of=all_of)
        return [(memory_id, text, record, None) for memory_id, text, record in rows]
    wanted_any = [n.lower() for n in any_of]
    wanted_all = [n.lower() for n in all_of]
    found: dict[str, tuple[str, str, str, list[updates.Statement] | None]] = {}
    for lookup in lookups:
        for memory_id, text, record, stated in index.said.current_with(user, SUPERSEDED_KINDS, lookup):
            lowered = sqlite_lower(text)
            if (not wanted_any or any(n in lowered for n in wanted_any)) and all(n in lowered for n in wanted_all):
                found.setdefault(memory_id, (memory_id, text, record, stated))
    return list(found.values())


def _habit_candidates(
    index: RecallIndex, user: str, said: updates.Statement, covered: bool
) -> list[tuple[str, str, str, list[updates.Statement] | None]]:
    """(id, text, record, statements or None) of the current notes and turns of ``user``
    that name the head of a stopped habit ``said`` (``Statement.value``), by any word that
    stands for it (``updates.habit_names``; a Chinese head by its first character): those
    ``updates.keeps_habit`` reads, those with a frequency (``updates.RECURS``) only. An
    indexed lookup per word for a covered user, one scan
    of the user's rows holding one of them for another; none for a statement of another
    attribute or of no head."""
    if said.key.split(":", 1)[0] != updates.HABIT or not said.value:
        return []
    chinese = bool(re.match(r"[\u4e00-\u9fff]", said.value))
    names = sorted({said.value[0]} if chinese else updates.habit_names(said.value))
    if not covered:
        # a stem's final i is a word's y ("spotifi" of "Spotify"): looked for without it
        needles = [w[:-1] if len(w) > 3 and w.endswith("i") else w for w in names]
        rows = index.current_holding(user, SUPERSEDED_KINDS, any_of=needles)
        return [(memory_id, text, record, None) for memory_id, text, record in rows if updates.RECURS.search(text)]
    found: dict[str, tuple[str, str, str, list[updates.Statement] | None]] = {}
    for term in habit_terms(names):
        for memory_id, text, record, stated in index.said.current_with(user, SUPERSEDED_KINDS, [term]):
            # only a note with a frequency keeps a habit: the others are left before they are parsed
            if updates.RECURS.search(text):
                found.setdefault(memory_id, (memory_id, text, record, stated))
    return list(found.values())


BARE_HABIT_DAYS = 90
"""How far back (days) a bare note of a habit's end looks for the habit it ends."""
UNNAMED_DOSE_DAYS = 365
"""How far back (days) a dose changed without the medicine's name looks for the dose it changes."""


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
        restarts; written behind (``MemoryStore.reinforce``). The caller holds the store
        transaction."""
        if not memories:
            return
        now = self.clock() if now is None else now
        for memory in memories:
            forgetting.reinforce(memory, now, self.settings.reinforce, self.settings.boost)
        self.store.reinforce(memories)

    def supersede(
        self, memories: Sequence[Memory], decided: Mapping[str, UpdateDecision] | None = None
    ) -> list[tuple[Memory, Memory]]:
        """Supersession at write time, the rules path (issue 31; Mem0's update phase without
        a model): for each of ``memories`` just stored (notes and people's turns), in time
        order, the current memories of the same user and speaker that state the same
        single-valued attribute with another value (``memcli.text.updates``: where one
        lives, one's job, a named medicine's dose, a diet, a membership), or a habit the new
        one says has stopped, are *superseded*: ``valid_to`` = the newer one's
        ``created_at``, ``superseded_by`` = its id, and the history records an UPDATE of
        the older one (related_id: the newer) and an ADD of the newer (related_id: the
        older). Nothing is deleted. A new memory older than a current one it conflicts with
        (an import out of order) is the one superseded. Returns the (older, newer) pairs.
        The caller holds the store transaction; only the recall index's copy is read: the
        candidates of a user whose statements are kept (``memcli.store.statements``) are
        looked up there with what each states, those of another are found by reading the
        user's rows (``RecallIndex.current_holding``) and parsed; both give the same pairs
        (``_candidates``).

        ``decided``: new memory id -> a chat model's decision (``UpdateDecision``; the
        capable-model path): for the memories it was shown, the decision stands in for the
        rules, and the ones it ends are superseded as the rules would (the same record), if
        they are still current, older than the new one and said by the same person; the
        rules read the memories it was not shown. The older memories' new metadata is
        written behind (``MemoryStore.update_behind``), with their history, in one commit
        for the whole call."""
        pairs: list[tuple[Memory, Memory]] = []
        index = self.store.sidecar.index
        decided = decided or {}
        covered: dict[str, bool] = {}
        kept = index.said.statements_of([m.id for m in memories if tells(m) and not m.valid_to])
        # One SQLite commit for every memory superseded here, not one each: a commit waits for
        # the disk (about 10 ms of a remember on a busy machine), the lookup takes a few ms of CPU.
        with self.store.sidecar.atomic():
            for new in sorted(memories, key=lambda m: (m.created_at, m.id)):
                if not tells(new) or new.valid_to:
                    continue
                decision = decided.get(new.id)
                if decision is not None:
                    for old in self.store.get_many(sorted(decision.ended)):
                        if (
                            tells(old)
                            and said_by(old) == said_by(new)
                            and old.user == new.user
                            and old.created_at < new.created_at
                            and not old.valid_to
                            and not old.archived
                        ):
                            pairs.append(self._supersede(old, new))
                shown = decision.shown if decision is not None else frozenset()
                if new.user not in covered:
                    covered[new.user] = index.said.covers(new.user)
                said_now = kept[new.id] if covered[new.user] and new.id in kept else updates.statements(new.text)
                for said in said_now:
                    if said.key == updates.BARE_HABIT:
                        before = self._habit_noted_before(index, new, said, shown)
                        if before is not None:
                            pairs.append(self._supersede(before, new))
                        continue
                    if said.key == updates.UNNAMED_DOSE:
                        before = self._dose_noted_before(index, new, said, shown)
                        if before is not None:
                            pairs.append(self._supersede(before, new))
                        continue
                    candidates = {
                        row[0]: row
                        for row in _candidates(index, new.user, said, covered[new.user])
                        + _habit_candidates(index, new.user, said, covered[new.user])
                    }
                    for memory_id, text, record, stated_then in candidates.values():
                        if memory_id == new.id or new.valid_to or memory_id in shown:
                            continue
                        old = Memory.from_record(memory_id, text, record)
                        if not tells(old) or said_by(old) != said_by(new) or old.created_at == new.created_at:
                            continue
                        if said.key.split(":", 1)[0] == updates.HABIT:
                            if old.created_at < new.created_at and (
                                updates.states_habit(old.text, said.words) or updates.keeps_habit(old.text, said.value)
                            ):
                                pairs.append(self._supersede(old, new))
                            continue
                        stated = [
                            s
                            for s in (updates.statements(old.text) if stated_then is None else stated_then)
                            if updates.same_key(s.key, said.key)
                        ]
                        if not stated:
                            continue
                        if old.created_at < new.created_at and updates.updates(said, stated[0]):
                            pairs.append(self._supersede(old, new))
                        elif old.created_at > new.created_at and updates.updates(stated[0], said):
                            pairs.append(self._supersede(new, old))
        return pairs

    def _habit_noted_before(
        self, index: RecallIndex, new: Memory, said: updates.Statement, shown: Collection[str]
    ) -> Memory | None:
        """The habit a bare note of its end ("quit.", "Sober from today.", "戒了！":
        ``updates.BARE_HABIT``, ``said``) ends, among the current notes and turns of the
        same speaker, before it and at most ``BARE_HABIT_DAYS`` days older, that note a
        habit as going on (``updates.RECURS``: "still on about 10 cigarettes a day", "two
        glasses of red most nights"), ask nothing and state nothing else: the latest that
        shares a word with the note (``updates.shares_habit_word``: "knee is wrecked.
        stopped." ends the running, not the journaling), else the only one; None when the
        writer keeps two or more and the note names neither (ending the latest would
        guess). One scan of the user's rows
        holding a word of frequency (``RecallIndex.current_holding``): such notes are rare."""
        rows = index.current_holding(new.user, SUPERSEDED_KINDS, any_of=list(updates.RECURS_NEEDLES), all_of=[])
        habits = [
            (old, text)
            for old, text in _latest_first(rows, new, shown, BARE_HABIT_DAYS)
            if updates.RECURS.search(text) and not updates.asks(text) and not updates.statements(text)
        ]
        named = [old for old, text in habits if updates.shares_habit_word(text, said.words)]
        if named:
            return named[0]
        return habits[0][0] if len(habits) == 1 else None

    def _dose_noted_before(
        self, index: RecallIndex, new: Memory, said: updates.Statement, shown: Collection[str]
    ) -> Memory | None:
        """The dose a change that names no medicine ("GP bumped me to 88 mcg":
        ``updates.UNNAMED_DOSE``) changes: the latest current note or turn of the same
        speaker, before it and at most ``UNNAMED_DOSE_DAYS`` days older, that gives a named
        medicine's dose in the same unit (``updates.dose_unit``), when its value is another.
        None otherwise. One scan of the user's rows holding a dose's unit
        (``RecallIndex.current_holding``): such notes are rare."""
        unit = updates.dose_unit(said.value)
        rows = index.current_holding(new.user, SUPERSEDED_KINDS, any_of=list(updates.CUES[updates.DOSE]))
        for old, text in _latest_first(rows, new, shown, UNNAMED_DOSE_DAYS):
            doses = [
                s
                for s in updates.statements(text)
                if s.key.startswith(f"{updates.DOSE}:") and s.key != updates.UNNAMED_DOSE and not s.ended
            ]
            if doses and updates.dose_unit(doses[0].value) == unit:
                return None if doses[0].value == said.value else old
        return None

    def _supersede(self, older: Memory, newer: Memory) -> tuple[Memory, Memory]:
        """Mark ``older`` superseded by ``newer``: its metadata written behind, in the same
        commit as the two history events (``MemoryStore.update_behind``), so that the write
        that supersedes costs one SQLite transaction, not a Chroma update."""
        older.valid_to, older.superseded_by = newer.created_at, newer.id
        self.store.update_behind([older], supersession_events(older, newer, self.clock()))
        return older, newer

    def reopen(self, newer_ids: Iterable[str], gone: Collection[str] = ()) -> list[Memory]:
        """The memories superseded by one of ``newer_ids`` (an edited or deleted memory)
        hold again: ``valid_to`` and ``superseded_by`` cleared, a REOPEN event in their
        history (related_id: the newer one). They are found by the history alone, the
        older ones' UPDATE rows naming the newer one (``Sidecar.replaced_by``, one lookup in
        its index), which every supersession writes, and an import too for the memories
        it brings in superseded (``FileWork._link_superseded``): a delete reads no memory
        whole. Those in ``gone`` (deleted with it) are left, and those no longer superseded
        by it (reopened since, or superseded by another).

        When the newer one was itself superseded in turn (Bristol, then "moved to Cardiff",
        then "moved to Swansea"; the Cardiff note deleted), an older one that the newest
        current memory of that chain (``_heir``) also updates (``updates.updates``: the same
        attribute, another value) is superseded by it instead of held again: an UPDATE (and
        the heir's ADD) after the REOPEN. Returns the memories reopened (those handed on
        included). The caller holds the store transaction."""
        sidecar = self.store.sidecar
        reopened: list[Memory] = []
        for newer_id in newer_ids:
            olders = [
                m
                for m in self.store.get_many([i for i in sidecar.replaced_by(newer_id) if i not in gone])
                if m.superseded_by == newer_id
            ]
            if not olders:
                continue
            heir = self._heir(newer_id, gone)
            now = self.clock()
            for older in olders:
                older.valid_to, older.superseded_by = 0.0, ""
                reopened.append(older)
                entries = [HistoryEntry(older.id, older.user, older.kind, "REOPEN", "", older.text, now, [], newer_id)]
                if heir is not None and _hands_on(older, heir, gone):
                    older.valid_to, older.superseded_by = heir.created_at, heir.id
                    entries += supersession_events(older, heir, now)
                sidecar.record(entries)
        self.store.update(reopened)
        return reopened

    def _heir(self, newer_id: str, gone: Collection[str]) -> Memory | None:
        """The memory current once ``gone`` is deleted that ``newer_id`` was superseded by:
        the last of the chain of ``superseded_by`` from it (at most ``HEIR_STEPS`` steps) not
        in ``gone`` (Bristol ← Cardiff ← Swansea ← Newport, Cardiff and Newport deleted
        together: Swansea, which their delete reopens), or None: a few reads by id, no
        memory read whole."""
        current, heir = newer_id, None
        for _ in range(HEIR_STEPS):
            found = self.store.get_many([current])
            if not found:
                return None
            if current != newer_id and current not in gone:
                heir = found[0]
            if not found[0].superseded_by:
                return heir
            current = found[0].superseded_by
        return None

    def relearn(self, memory_id: str, now: float) -> Memory:
        """A forgotten (archived) memory told again: active again, its clock restarted at
        ``now``. An active memory is left as it is. Raises NotFoundError."""
        with self.store.transaction():
            memory = self.store.get(memory_id)
            if memory.archived:
                memory.archived, memory.archived_at, memory.last_recalled_at = False, 0.0, now
                self.store.update([memory])
        return memory

    def delete(self, memory_id: str) -> PurgeReport:
        """Delete a memory for good, with what was made from it (``purge``). Raises NotFoundError."""
        with self.store.transaction():
            return self.purge([self.store.get(memory_id)])

    def purge(self, memories: Sequence[Memory]) -> PurgeReport:
        """Delete ``memories`` for good, so that their text is nowhere on disk under the
        store: from Chroma and the recall index (``MemoryStore.delete``), with the memories
        made from them (``stale_derivatives``: they may quote them), from the history (the
        events stay without their text, and a PURGE event is recorded: ``Sidecar.scrub_history``),
        the journal and the chat prompt's history (``scrub_history_file``: every line typed
        for them, by the ids recorded with it and by every text they ever had), and then
        from the files' free pages and logs (``MemoryStore.compact``, once for all of them).

        What was made from a purged turn is made again from the turns left by the next
        ``memcli consolidate``: the consolidation progress of its day (a daily summary or
        portrait), of every daily memory (the global ones), of every session (the running
        memory) or of the fact's other turns is forgotten. A memory deleted by name is not
        made again."""
        started = time.perf_counter()
        now = self.clock()
        if not memories:
            return PurgeReport([], [], 0, 0, 0.0, 0.0)
        gone: dict[str, Memory] = {m.id: m for m in memories}
        derived: list[Memory] = []
        scrubbed = 0
        with self.store.transaction():
            sidecar = self.store.sidecar
            users = sorted({m.user for m in memories})
            for user in users:
                mine = [m for m in memories if m.user == user]
                folded = sidecar.is_consolidated(user, "session", [m.id for m in mine if m.kind == Kind.TURN.value])
                # What may quote them is looked up in the sidecar's index of derived memories,
                # not found by reading every memory of the user; the running memory, made
                # from every folded turn but citing only the last session's, is read by kind.
                running = self.store.memories(user=user, kind=Kind.RUNNING_SUMMARY.value) if folded else []
                made = {m.id: m for m in running}
                made.update(
                    (m.id, m)
                    for m in self.store.derived_from([*(m.id for m in mine), *made], DERIVED_KINDS)
                    if m.user == user
                )
                stale = stale_derivatives(mine, list(made.values()), folded)
                derived.extend(stale)
                gone.update((m.id, m) for m in stale)
            # Progress first: cut after it, the next consolidation makes again what is still
            # there (same ids); cut after the delete, nothing would make it again.
            for user in users:
                self._redo(user, [m for m in derived if m.user == user], gone)
            typed = _typed(gone.values(), sidecar)
            self.reopen([i for i, m in gone.items() if m.kind in SUPERSEDED_KINDS], gone)
            self.store.delete(list(gone))
            for user in users:
                scrubbed += sidecar.scrub_history(user, {i: m.kind for i, m in gone.items() if m.user == user}, now)
            files = Journal(self.store.paths.pending_dir).drop(gone)
            scrub_history_file(self.store.paths.chat_history, typed, gone)
            compaction = self._compact()
        if derived:
            self.store.notice(
                f"also deleted {len(derived)} memories made from it (summaries, portraits, facts, running memory); "
                "memcli consolidate makes them again from what is left"
            )
        return PurgeReport(list(memories), derived, scrubbed, files, time.perf_counter() - started, compaction)

    def _compact(self) -> float:
        """Compact the store after a purge (``MemoryStore.compact``); returns its seconds. The
        memories are deleted by then, so a compaction that fails (a full disk: VACUUM needs
        about the file's size free) is a notice, not the command's error; the next purge's
        compaction erases what this one left."""
        started = time.perf_counter()
        try:
            self.store.compact()
        except Exception as exc:
            self.store.notice(
                f"deleted, but the store could not be compacted ({exc}): the deleted text may stay in the store's files "
                "until the next delete or purge compacts them"
            )
        return time.perf_counter() - started

    def _redo(self, user: str, stale: Sequence[Memory], gone: Mapping[str, Memory]) -> None:
        """Forget the consolidation progress that made the ``stale`` memories of ``user``
        (deleted), so that the next consolidation makes them again from what is left: the
        days of a daily memory (the turns and notes it was made from, all of its day that
        had been consolidated, but those ``gone``), every session for the running memory,
        the message pairs of a fact, every daily memory folded into a global one. Reads no
        memory: the progress of what is ``gone`` goes with it (``MemoryStore.delete``)."""
        kinds = {m.kind for m in stale}
        daily = (Kind.EVENT_DAILY.value, Kind.PORTRAIT_DAILY.value)
        redo: dict[str, list[str]] = {
            "day": sorted({i for m in stale if m.kind in daily for i in m.source_ids if i not in gone}),
            "fact": [i for m in stale if m.kind == Kind.FACT.value for i in m.source_ids],
        }
        for stage, ids in redo.items():
            if ids:
                self.store.sidecar.unmark_consolidated(ids, stage)
        if Kind.RUNNING_SUMMARY.value in kinds:
            self.store.sidecar.unmark_stage(user, "session")
        if kinds & {Kind.EVENT_GLOBAL.value, Kind.PORTRAIT_GLOBAL.value}:
            self.store.sidecar.unmark_stage(user, "global")

    def purge_user(self, user: str) -> tuple[int, int, int, float, float]:
        """Delete every memory of ``user`` for good, with their history, consolidation
        progress and journaled memories, then compact the store (``MemoryStore.compact``).
        Returns (memories purged, history events deleted, journal files dropped, compaction
        seconds, seconds)."""
        started = time.perf_counter()
        with self.store.transaction():
            everything = self.store.memories(user=user)
            ids = [m.id for m in everything]
            sidecar = self.store.sidecar
            typed = _typed(everything, sidecar)
            self.store.delete(ids)
            scrub_history_file(self.store.paths.chat_history, typed, ids)
            events = len(sidecar.history(user=user))
            sidecar.forget_user(user)
            sidecar.index.forget_user(user)
            files = Journal(self.store.paths.pending_dir).drop(ids, user=user)
            compaction = self._compact()
        return len(ids), events, files, compaction, time.perf_counter() - started

    def archive(self, memory_id: str) -> Memory:
        """Archive one memory as the forget pass archives a faded one (never recalled; kept
        for ``restore``), whatever its retention. An archived memory is left as it is.
        Raises NotFoundError."""
        with self.store.transaction():
            memory = self.store.get(memory_id)
            if not memory.archived:
                memory.archived, memory.archived_at = True, self.clock()
                self.store.update([memory])
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

    def forget(
        self,
        user: str | None,
        stochastic: bool = False,
        seed: int | None = None,
        dry_run: bool = False,
        purge: bool = False,
    ) -> ForgetReport:
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
                memories,
                now,
                decay_for=settings.user_decay,
                decay=settings.decay,
                unit=UNIT_SECONDS[settings.time_unit],
                threshold=settings.forget_threshold,
                stochastic=stochastic,
                seed=f"{seed if seed is not None else ''}@{now!r}",
            )
            gone = [v for v in verdicts if v.forgotten]
            derived = 0
            if not dry_run:
                if purge:
                    derived = len(self.purge([v.memory for v in gone]).derived) if gone else 0
                else:
                    for v in gone:
                        v.memory.archived, v.memory.archived_at = True, now
                    self.store.update([v.memory for v in gone])
        archived = 0 if dry_run or purge else len(gone)
        purged = len(gone) if purge and not dry_run else 0
        return ForgetReport(
            len(verdicts), len(gone), archived, purged, time.perf_counter() - started, dry_run, gone, derived, verdicts
        )


def supersession_events(older: Memory, newer: Memory, at: float) -> list[HistoryEntry]:
    """The two history events of ``newer`` superseding ``older`` at ``at`` (unix seconds):
    an UPDATE of the older (related_id: the newer) and an ADD of the newer (related_id: the
    older), which ``Changes.reopen`` finds it by (``Sidecar.replaced_by``)."""
    return [
        HistoryEntry(older.id, older.user, older.kind, "UPDATE", older.text, newer.text, at, [newer.id], newer.id),
        HistoryEntry(newer.id, newer.user, newer.kind, "ADD", "", newer.text, at, [newer.id], older.id),
    ]


HEIR_STEPS = 16
"""How far ``Changes._heir`` follows a chain of supersessions (each a read by id): longer
chains are not met in notes of one person, and a cycle a damaged store may hold ends."""


def _hands_on(older: Memory, heir: Memory, gone: Collection[str] = ()) -> bool:
    """Whether a memory reopened is superseded by ``heir`` instead (``Changes.reopen``):
    the same user and speaker, ``heir`` current (not ended, or ended only by a memory in
    ``gone``, which the same delete reopens; not archived) and later, and one of its
    statements updates one of ``older``'s (``updates.updates``)."""
    return (
        heir.user == older.user
        and said_by(heir) == said_by(older)
        and not heir.archived
        and (not heir.valid_to or heir.superseded_by in gone)
        and heir.created_at > older.created_at
        and any(updates.updates(n, o) for n in updates.statements(heir.text) for o in updates.statements(older.text))
    )


def _latest_first(
    rows: Iterable[tuple[str, str, str]], new: Memory, shown: Collection[str], days: float
) -> list[tuple[Memory, str]]:
    """Of ``rows`` (``RecallIndex.current_holding``: id, text, record), the memories that tell
    (``tells``), said by ``new``'s speaker, before ``new`` and at most ``days`` days older,
    other than ``new`` and ``shown``; latest first, each with its text (rows of one moment in
    their order)."""
    found = []
    for memory_id, text, record in rows:
        if memory_id == new.id or memory_id in shown:
            continue
        old = Memory.from_record(memory_id, text, record)
        if (
            tells(old)
            and said_by(old) == said_by(new)
            and new.created_at - days * 86400 <= old.created_at < new.created_at
        ):
            found.append((old, text))
    found.sort(key=lambda pair: -pair[0].created_at)
    return found
