"""Facts (Mem0, Chhikara et al. 2025, Algorithm 1): candidate facts extracted from each new
window of message pairs, each compared with the most similar stored facts, and an ADD,
UPDATE, DELETE or NOOP decision applied, checked against its source turn
(``memcli.consolidation.consolidate.Consolidator``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from memcli.consolidation.grounding import Grounding, SourceTurn, fact_problem
from memcli.consolidation.model_output import (
    DECISIONS_PER_CALL,
    FACT_CHARS,
    WINDOW_FACTS,
    DecisionOutput,
    DecisionsOutput,
    FactsOutput,
    decision_request,
)
from memcli.dates import spoken_date
from memcli.errors import InvalidOutputError
from memcli.memory import ASSISTANT, Kind, Memory, singleton_id
from memcli.models import prompts
from memcli.models.embedding import embedder_identity
from memcli.store.sidecar import DONE, SKIPPED, HistoryEntry
from memcli.text import extractive

if TYPE_CHECKING:
    pass
from memcli.consolidation.shared import (
    DECISION_TOKENS,
    FACT_TOKENS,
    MAX_FACTS,
    RELATED_SIMILARITY,
    SIMILAR_FACTS,
    _transcript,
    clean,
    date_words,
    normalized,
)


class FactWork:
    """The fact extraction and the update phase of ``Consolidator``."""

    def windows(self, pairs: Sequence[list[Memory]], most: int, chars: float) -> list[list[list[Memory]]]:
        """``pairs`` in windows: consecutive message pairs of one session, at most ``most``
        pairs and ``chars`` characters of text (one pair always makes a window)."""
        out: list[list[list[Memory]]] = []
        used = 0
        for pair in pairs:
            size = sum(len(t.text) for t in pair)
            last = out[-1] if out else None
            if (
                last
                and (last[-1][0].session or last[-1][0].day) == (pair[0].session or pair[0].day)
                and len(last) < most
                and used + size <= chars
            ):
                last.append(pair)
                used += size
            else:
                out.append([pair])
                used = size
        return out

    def extract_facts(self, user: str, window: Sequence[list[Memory]], context: Sequence[Memory]) -> None:
        """Mem0's extraction and update phases for a window of message pairs (one model call
        for the window; see the module docstring), or by extraction."""
        turns = [t for pair in window for t in pair]
        ids = [t.id for t in turns]
        people = [t for t in turns if t.speaker != ASSISTANT]
        if not people:
            self._mark(user, "fact", ids)
            return
        if self.extractive:
            self._wrote("extractive")
            self.store_facts(user, self.extract_facts_of(window), ids, decide=False)
            return
        with self.store.transaction():
            running = self.store.get_many([singleton_id(Kind.RUNNING_SUMMARY, user)])
        content = ""
        if running:
            content += "Memory:\n" + running[0].text + "\n\n"
        if context:
            content += "Earlier messages:\n" + "\n".join(_transcript(context)) + "\n\n"
        content += f"New messages ({spoken_date(turns[0].created_at)}):\n" + "\n".join(_transcript(turns))
        limit = min(WINDOW_FACTS, MAX_FACTS * len(window))
        schema = FactsOutput.model_json_schema()
        schema["properties"]["facts"]["maxItems"] = limit
        try:
            out = self._ask(
                prompts.EXTRACT_FACTS,
                "facts",
                content[-self.budget :],
                FactsOutput,
                limit * FACT_TOKENS + 24,
                schema=schema,
            )
        except InvalidOutputError as exc:
            self._fall_back(f"{user} facts of {turns[0].source or turns[0].id}", exc)
            self.store_facts(user, self.extract_facts_of(window), ids, decide=False)
            return
        pair_of = {t.id: pair for pair in window for t in pair}
        sources = [
            SourceTurn(t.speaker, t.text, Grounding(f"{line} {date_words(t.created_at)}"))
            for t, line in zip(people, _transcript(people))
        ]
        candidates: dict[str, tuple[str, list[Memory]]] = {}
        problems: list[str] = []
        for fact in (clean(f) for f in out.facts[:limit]):
            source = next(
                (
                    t
                    for t, src in zip(people, sources)
                    if fact_problem(fact, [src], self.settings.fact_grounding) is None
                ),
                None,
            )
            if source is None:
                self.report.facts_rejected += 1
                problems.append(f"{fact[:40]!r}: {fact_problem(fact, sources, self.settings.fact_grounding)}")
            elif normalized(fact) in candidates:
                self.report.facts_deduplicated += 1
            else:
                candidates[normalized(fact)] = (fact, pair_of[source.id])
        if problems and not candidates:
            # Every fact the model wrote failed grounding: the window gets the extractive ones.
            self._fall_back(
                f"{user} facts of {turns[0].source or turns[0].id}",
                InvalidOutputError(f"every fact rejected ({problems[0]})"),
            )
            self.store_facts(user, self.extract_facts_of(window), ids, decide=False)
            return
        self._wrote("llm")
        self.store_facts(user, list(candidates.values()), ids)

    def extract_facts_of(self, window: Sequence[list[Memory]]) -> list[tuple[str, list[Memory]]]:
        """The extractive facts of each pair of ``window`` (``extractive.facts_of`` its
        people's turns, and the name the user gives themselves: ``extractive.name_fact``),
        with their pair; a statement longer than a fact may be (FACT_CHARS) is a story, not
        a fact: rejected."""
        out: list[tuple[str, list[Memory]]] = []
        for pair in window:
            people = {t.speaker for t in pair if t.speaker != ASSISTANT}
            names = [
                n
                for t in pair
                if t.id in self._own
                for s in extractive.split_sentences(t.text)
                if (n := extractive.stated_name(s))
            ]
            facts = [extractive.name_fact(n) for n in names] + [text for text, _ in extractive.facts_of(pair, people)]
            kept = [f for f in facts if len(f) <= FACT_CHARS]
            self.report.facts_rejected += len(facts) - len(kept)
            out.extend((f, pair) for f in kept)
        return out

    def store_facts(
        self, user: str, facts: Sequence[tuple[str, list[Memory]]], ids: Sequence[str], decide: bool = True
    ) -> None:
        """Reconcile ``facts`` ((text, the message pair it came from)) with the stored ones and
        mark the turns ``ids`` through the fact stage: done, or skipped for the pair of a fact
        whose decision stayed invalid (redone with ``retry``).

        Deduplication (Mem0): a fact whose normalized text is stored, or whose cosine
        similarity to a stored or an earlier new fact is at least ``fact_dedup``, is not
        stored again. The others are added, or with ``decide`` and stored facts at least
        RELATED_SIMILARITY similar, decided by the model (``decide``, a few facts a call,
        without the store lock). Every write of the window is one hold of the store."""
        unique: dict[str, tuple[str, list[Memory]]] = {}
        for fact, pair in facts:
            if normalized(fact) in unique:
                self.report.facts_deduplicated += 1
            else:
                unique.setdefault(normalized(fact), (fact, pair))
        items = list(unique.values())
        vectors = (
            np.asarray(self.embed([f for f, _ in items]), dtype=np.float32)
            if items
            else np.zeros((0, 0), dtype=np.float32)
        )
        with self.store.transaction():
            known, matrix = self.store.active_with_vectors(user, Kind.FACT.value)
        order = sorted(range(len(known)), key=lambda i: known[i].id)  # equal similarities rank the smaller id first
        known, matrix = [known[i] for i in order], matrix[order] if len(known) else matrix
        seen = {normalized(m.text) for m in known}
        new_vectors: list[np.ndarray] = []
        pending: list[tuple[str, list[Memory], np.ndarray, list[Memory]]] = []
        for (fact, pair), vector in zip(items, vectors):
            similarity = matrix @ vector if len(known) else np.zeros(0)
            closest_new = max((float(v @ vector) for v in new_vectors), default=-1.0)
            if (
                normalized(fact) in seen
                or closest_new >= self.settings.fact_dedup
                or (len(similarity) and similarity.max() >= self.settings.fact_dedup)
            ):
                self.report.facts_deduplicated += 1
                continue
            ranked = np.argsort(-similarity, kind="stable")[:SIMILAR_FACTS]
            related = [known[i] for i in ranked if similarity[i] >= RELATED_SIMILARITY]
            pending.append((fact, pair, vector, related))
            seen.add(normalized(fact))
            new_vectors.append(vector)
        add = DecisionOutput(event="ADD", target=0, text="")
        decisions: list[DecisionOutput | None] = [add] * len(pending)
        if decide:
            asked = [i for i, item in enumerate(pending) if item[3]]
            for batch in self._decision_batches([pending[i][3] for i in asked]):
                chosen = self.decide(
                    user,
                    [pending[asked[j]][0] for j in batch],
                    [pending[asked[j]][3] for j in batch],
                    [t for j in batch for t in pending[asked[j]][1]],
                )
                for j, decision in zip(batch, chosen):
                    decisions[asked[j]] = decision
        # A pair with a fact whose decision stayed invalid is skipped (redone with --retry); the others are done.
        undecided = {t.id for item, d in zip(pending, decisions) if d is None for t in item[1]}
        self.apply(
            user,
            [(item, d) for item, d in zip(pending, decisions) if d is not None],
            [i for i in ids if i not in undecided],
            sorted(undecided),
        )

    @staticmethod
    def _decision_batches(related: Sequence[Sequence[Memory]]) -> list[list[int]]:
        """Indexes of the new facts to decide, in groups of at most DECISIONS_PER_CALL whose
        related facts together number at most SIMILAR_FACTS (one call each)."""
        batches: list[list[int]] = []
        shown: set[str] = set()
        for i, facts in enumerate(related):
            ids = {m.id for m in facts}
            if batches and len(batches[-1]) < DECISIONS_PER_CALL and len(shown | ids) <= SIMILAR_FACTS:
                batches[-1].append(i)
                shown |= ids
            else:
                batches.append([i])
                shown = set(ids)
        return batches

    def decide(
        self, user: str, facts: Sequence[str], related: Sequence[Sequence[Memory]], turns: Sequence[Memory]
    ) -> list[DecisionOutput | None]:
        """Ask the model for Mem0's event of each of ``facts`` against the stored facts shown
        (those ``related`` to any of them), in one call; each fact may UPDATE or DELETE only
        a fact related to it. ``target`` in the replies indexes ``related[i]``. All None when
        the reply stayed invalid (those facts are skipped)."""
        shown = list({m.id: m for group in related for m in group}.values())
        schema, content = decision_request([m.text for m in shown], facts)

        def check(out: DecisionsOutput) -> None:
            if len(out.events) != len(facts):
                raise ValueError(f"{len(out.events)} events for {len(facts)} new facts")
            for decision, fact, group in zip(out.events, facts, related):
                if not 0 <= decision.target < len(shown):
                    raise ValueError(f"target {decision.target} is not one of the facts shown")
                if decision.event in ("UPDATE", "DELETE") and shown[decision.target] not in group:
                    raise ValueError(f"target {decision.target} is not related to the new fact {fact!r}")
                if decision.event == "UPDATE":
                    merged = f"{shown[decision.target].text}\n{fact}\n" + "\n".join(_transcript(turns))
                    source = SourceTurn("", merged, Grounding(merged))
                    problem = (
                        fact_problem(decision.text, [source], self.settings.fact_grounding)
                        if decision.text.strip()
                        else "the text is empty"
                    )
                    if problem:
                        raise ValueError(f"updated fact rejected: {problem}")

        try:
            out = self._ask(
                prompts.DECIDE_FACTS,
                "decisions",
                content,
                DecisionsOutput,
                len(facts) * DECISION_TOKENS + 24,
                check,
                schema,
            )
        except InvalidOutputError as exc:
            self._skip(f"{user} facts {', '.join(repr(f[:40]) for f in facts)}", exc)
            return [None] * len(facts)
        return [
            d.model_copy(update={"target": group.index(shown[d.target]) if shown[d.target] in group else 0})
            for d, group in zip(out.events, related)
        ]

    def apply(
        self,
        user: str,
        decided: Sequence[tuple[tuple[str, list[Memory], np.ndarray, list[Memory]], DecisionOutput]],
        done: Sequence[str],
        skipped: Sequence[str] = (),
    ) -> None:
        """Carry out the decisions of a window (each: (fact, its pair, its vector, the related
        stored facts), the decision) and mark the window's turns through the fact stage
        (``done``, and ``skipped``: those of a pair with a fact left undecided), in one hold
        of the store: history first (it holds the old text), then the store. A stored fact
        already ended by an earlier decision of the window is not ended again: an UPDATE of
        it becomes an ADD, a DELETE a NOOP. An UPDATE to the old fact's own words is a NOOP,
        and a fact the window already adds (the same words from the same pair) is a
        duplicate."""
        at = self.engine.clock()
        entries: list[HistoryEntry] = []
        added: list[Memory] = []
        vectors: list[Any] = []
        ended: dict[str, Memory] = {}
        for (fact, pair, vector, related), decision in decided:
            event = decision.event
            old = related[decision.target] if event in ("UPDATE", "DELETE") else None
            if old is not None and old.id in ended:
                event, old = ("ADD" if event == "UPDATE" else "NOOP"), None
            if event == "UPDATE" and old is not None and normalized(decision.text) == normalized(old.text):
                event, old = "NOOP", None
            if event == "NOOP":
                self.report.facts_noop += 1
                continue
            pair_ids = [t.id for t in pair]
            new: Memory | None = None
            if event in ("ADD", "UPDATE"):
                text = clean(decision.text) if event == "UPDATE" and decision.text.strip() else fact
                new = self._memory(
                    user,
                    Kind.FACT,
                    normalized(text) + "\x1f" + ",".join(pair_ids),
                    text,
                    pair[-1],
                    " ".join(t.source for t in pair if t.source),
                    pair_ids,
                )
                new.session, new.valid_from = pair[0].session, pair[0].created_at
                same = next((a for a in added if a.id == new.id), None)
                if same is None:
                    added.append(new)
                    vectors.append(vector if text == fact else self.embed([text])[0])  # a memory, not a query
                    entries.append(
                        HistoryEntry(new.id, user, new.kind, "ADD", "", new.text, at, pair_ids, old.id if old else "")
                    )
                else:  # the window already adds these words from this pair: one fact, which this old one also ends in
                    new = same
                    self.report.facts_deduplicated += 1
                    if old is None:
                        continue
            if old is not None:
                old.valid_to = pair[0].created_at
                ended[old.id] = old
                entries.append(
                    HistoryEntry(
                        old.id,
                        user,
                        old.kind,
                        event,
                        old.text,
                        new.text if new else "",
                        at,
                        pair_ids,
                        new.id if new else "",
                    )
                )
            if event == "ADD":
                self.report.facts_added += 1
            elif event == "UPDATE":
                self.report.facts_updated += 1
            else:
                self.report.facts_deleted += 1
        with self.store.transaction():
            self.store.sidecar.record(entries)
            if added:
                self.store.upsert(added, vectors, embedder=embedder_identity(self.engine.embedder))
            if ended:
                self.store.update(list(ended.values()))
            self.store.sidecar.mark_consolidated(user, "fact", done, at, DONE)
            if skipped:
                self.store.sidecar.mark_consolidated(user, "fact", skipped, at, SKIPPED)
