"""The graph step of consolidation (issue 26, Mem0g): every turn, note and fact not yet
scanned is read for entities, relations and aliases, which go into the graph
(``memcli.store.graph``); the typed relations are kept in step as memories of kind ``relation``.

Two paths, as for the rest of consolidation: without a capable model (the default install)
the offline extractor (``memcli.text.entities.extract``); with a chat model that has a chat
template (``consolidation`` = llm), the model's JSON (``memcli.text.entities.GraphOutput``)
grounded in the memory's text (``memcli.text.entities.ground``: a name the text does not hold is
dropped), falling back to the offline extractor when the output stays invalid.

Progress is kept per memory in the sidecar's consolidation progress (stage ``graph``), so a
second run scans nothing. A relation closed by a newer one is an INVALIDATE event in the
history (Mem0g marks it invalid instead of deleting it): its memory keeps its text with the
span of days it held, and ends (``valid_to``), so recall leaves it out unless asked as of
a day it held (``recall --at``).
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from memcli.dates import day_of
from memcli.errors import InvalidOutputError, NotFoundError, UsageError
from memcli.memory import ASSISTANT, Kind, Memory
from memcli.models.embedding import embedder_identity
from memcli.models.llm import ChatModel, Message, structured_output
from memcli.store.graph import MENTIONED_WITH, Closed, Entity, Graph, Relation, day_seconds, relation_memory_id
from memcli.store.sidecar import HistoryEntry
from memcli.text.chunking import LONGEST_READ, MAX_CHARS, chunks, size
from memcli.text.entities import (
    RELATIONS,
    Extraction,
    GraphOutput,
    KnownNames,
    Mention,
    common_words,
    entity_type,
    extract,
    extraction_prompt,
    ground,
    normalise,
    turn_names,
)
from memcli.text.extractive import parse_line

if TYPE_CHECKING:
    from memcli.models.embedding import Embedder
    from memcli.store.store import MemoryStore

STAGE = "graph"
"""The consolidation stage whose progress records the memories scanned for the graph."""
SCANNED_KINDS = (Kind.TURN.value, Kind.NOTE.value, Kind.FACT.value, Kind.EVENT_DAILY.value)
"""What the graph is read from: what people said, the facts consolidation drew from it and
the daily event summaries (recalled with them: a summary line that states a relation since
closed must rank below the newer one as the turn that said it does)."""
BATCH = 200
"""Memories written to the graph per store transaction (the service's other requests get
the store between batches)."""
GRAPH_READ = LONGEST_READ
"""Characters of one memory the graph step reads at most (``chunking.LONGEST_READ``, as
the extractive summary): the bound on the time one memory may take."""
GRAPH_TOKENS = 512
"""Token cap of the model's reply of the model path."""
_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]")


@dataclass
class GraphReport:
    """What the graph step did: memories scanned, entities mentioned, relations stated,
    relations closed by newer ones, relation memories written and deleted, and how many
    memories each path read ("extractive", "llm", "fallback")."""

    scanned: int = 0
    mentions: int = 0
    relations: int = 0
    closed: int = 0
    written: int = 0
    deleted: int = 0
    written_by: dict[str, int] = field(default_factory=dict)


def relation_phrase(relation: Relation) -> str:
    """``relation``'s label in the words of ``memcli.text.entities.RELATIONS``: "lives in" for
    ``lives_in``, the Chinese words when a name is Chinese ("住在"); a label the table does
    not declare ("mentioned with") as it is."""
    kind = RELATIONS.get(relation.relation)
    chinese = bool(_CJK.search(relation.subject_name + relation.object_name))
    return relation.relation if kind is None else (kind.zh if chinese else kind.en)


def relation_text(relation: Relation) -> str:
    """The text of ``relation``'s memory: "Caroline — lives in — Lisbon, since 2023-05-07",
    the label in words (``relation_phrase``; Chinese: "张曼婷 — 住在 — 北京")."""
    line = f"{relation.subject_name} — {relation_phrase(relation)} — {relation.object_name}"
    if relation.valid_to:
        return f"{line}, from {relation.valid_from or 'an unknown day'} to {relation.valid_to}"
    return f"{line}, since {relation.valid_from}" if relation.valid_from else line


def addressees(memories: Sequence[Memory]) -> dict[str, str]:
    """Memory id → who a turn was said to: the other speaker of its session when the session
    has two (a LoCoMo conversation, a user and the assistant); none otherwise."""
    speakers: dict[str, list[str]] = {}
    for memory in memories:
        if memory.kind == Kind.TURN.value and memory.speaker:
            names = speakers.setdefault(memory.session or memory.day, [])
            if memory.speaker not in names:
                names.append(memory.speaker)
    out: dict[str, str] = {}
    for memory in memories:
        names = speakers.get(memory.session or memory.day, [])
        if memory.kind == Kind.TURN.value and len(names) == 2 and memory.speaker in names:
            out[memory.id] = names[1 - names.index(memory.speaker)]
    return out


def typed_alike(found: list[tuple[Memory, Extraction]]) -> list[tuple[Memory, Extraction]]:
    """``found`` (memories and what each names) with every mention of one name given the
    type its mentions across all of them weigh to (``entity_type``: a type a cue gave wins
    over the default "person"). The graph keeps the type an entity was first stored with,
    so a name typed by the default in one note ("Manchester was grey") and by a cue in the
    next ("a gym in Manchester") must not be stored as a person because the first came first."""
    by_key: dict[str, list[Mention]] = {}
    for _, extraction in found:
        for mention in extraction.mentions:
            by_key.setdefault(mention.key, []).append(mention)
    types = {key: entity_type(mentions) for key, mentions in by_key.items()}
    return [
        (memory, replace(extraction, mentions=tuple(replace(m, type=types[m.key]) for m in extraction.mentions)))
        for memory, extraction in found
    ]


class GraphBuilder:
    """Scans memories into ``store``'s graph and keeps the relation memories in step.

    ``embedder`` embeds relation memories; ``clock`` gives now (unix seconds);
    ``strength(memory)`` the initial strength of a new memory; ``chat_model``: the model
    path's model (None: the offline extractor); ``warn`` gets a line for each model reply
    that stayed invalid."""

    def __init__(
        self,
        store: MemoryStore,
        embedder: Embedder,
        clock: Callable[[], float],
        strength: Callable[[Memory], float],
        chat_model: ChatModel | None = None,
        warn: Callable[[str], None] | None = None,
    ) -> None:
        self.store = store
        self.embedder = embedder
        self.clock = clock
        self.strength = strength
        self.chat_model = chat_model
        self.warn = warn or (lambda message: None)
        self.report = GraphReport()

    def scannable(self, user: str) -> list[Memory]:
        """Every memory of ``user`` of the ``SCANNED_KINDS``, scanned or not."""
        with self.store.transaction():
            return [m for kind in SCANNED_KINDS for m in self.store.memories(user=user, kind=kind)]

    def unscanned(self, user: str, scannable: Sequence[Memory] | None = None) -> list[Memory]:
        """``user``'s turns, notes, facts and daily event summaries (``SCANNED_KINDS``) not yet
        through the graph step, oldest first; from ``scannable`` (``scannable``'s list, when
        the caller has read it already)."""
        scannable = self.scannable(user) if scannable is None else scannable
        with self.store.transaction():
            done = self.store.sidecar.consolidated(user, STAGE)
            if done and self.lost(user):
                done = {}
        return sorted((m for m in scannable if m.id not in done), key=lambda m: (m.created_at, m.id))

    def lost(self, user: str) -> bool:
        """Whether ``user``'s graph is gone while what was derived from it is here: no entity,
        yet relation memories. A backup restored (``memcli export`` holds the memories and
        the consolidation progress, not the graph's tables) or a purged graph: the graph
        step then reads every memory again, rebuilding the graph, and ``sync`` replaces the
        relation memories of the lost relations with those of the rebuilt ones. Within a
        store transaction."""
        if self.store.sidecar.graph.entities(user):
            return False
        return bool(self.store.memories(user=user, kind=Kind.RELATION.value))

    def extraction(
        self, memory: Memory, speaker: str, addressee: str | None, known: KnownNames, common: Collection[str] = ()
    ) -> Extraction:
        """What ``memory`` names, by the model path when there is a model (grounded in its
        text, the offline extractor's result when the model's output stays invalid), else
        offline."""
        if self.chat_model is None:
            self._wrote("extractive")
            return extract(
                memory.text, speaker=speaker, addressee=addressee, day=memory.day, known=known, common=common
            )
        speakers = [s for s in (speaker, addressee) if s]
        messages = [Message("user", extraction_prompt(f"{speaker}: {memory.text}", speakers))]
        try:
            out = structured_output(self.chat_model, messages, GraphOutput, GRAPH_TOKENS)
        except InvalidOutputError as exc:
            self.warn(f"graph of {memory.id}: {exc.message}; the offline extraction was used instead")
            self._wrote("fallback")
            return extract(
                memory.text, speaker=speaker, addressee=addressee, day=memory.day, known=known, common=common
            )
        self._wrote("llm")
        return ground(out, memory.text, speakers=speakers)

    def extractions(
        self, memory: Memory, name: str, addressee: str | None, known: KnownNames, common: Collection[str] = ()
    ) -> list[Extraction]:
        """What ``memory`` names (``extraction``): a turn as its speaker said it, a note or
        a fact as the user's (``name``), a daily summary line by line, each line as the
        speaker it names said it."""
        if memory.kind != Kind.EVENT_DAILY.value:
            if size(memory.text) <= MAX_CHARS:
                return [self.extraction(memory, memory.speaker or name, addressee, known, common)]
            # a memory stored before texts were chunked at every entry: read chunk by chunk, and
            # no further than GRAPH_READ, so that no one memory holds the consolidation for long
            parts = list(chunks(memory.text[:GRAPH_READ]))
            if len(memory.text) > GRAPH_READ:
                self.warn(
                    f"graph of {memory.id}: only its first {GRAPH_READ:,} of {len(memory.text):,} characters were read"
                )
            speaker = memory.speaker or name
            return [self.extraction(replace(memory, text=part), speaker, addressee, known, common) for part in parts]
        out = []
        for line in memory.text.split("\n"):
            speaker, sentence = parse_line(line)
            if sentence.strip():
                out.append(self.extraction(replace(memory, text=sentence), speaker or name, None, known, common))
        return out

    def _wrote(self, path: str) -> None:
        self.report.written_by[path] = self.report.written_by.get(path, 0) + 1

    def build(
        self, user: str, name: str, memories: Sequence[Memory] | None = None, scannable: Sequence[Memory] | None = None
    ) -> GraphReport:
        """Scan ``memories`` of ``user`` (the unscanned ones when None; turns with their
        speaker as summaries name them, ``Consolidator.named``) into the graph, mark them
        scanned, record each relation a newer one closed as an INVALIDATE event, then bring
        the relation memories in step (``sync``). ``name``: what I/me/my in a note or a
        fact stand for (the user's name). ``scannable``: the user's ``scannable`` memories,
        when the caller has read them already (how the user writes each word is read from
        all of them)."""
        scannable = self.scannable(user) if scannable is None else scannable
        memories = self.unscanned(user, scannable) if memories is None else list(memories)
        if not memories:
            self.sync(user)
            return self.report
        you = addressees(memories)
        with self.store.transaction():
            known_entities = [e.name for e in self.store.sidecar.graph.entities(user)]
        # How this user writes a word (capitalised or not) is read from all of their texts, not from this run's few.
        texts = [m.text for m in scannable] or [m.text for m in memories]
        known = KnownNames.of(
            sorted(set(turn_names(texts)) | set(known_entities) | {m.speaker for m in memories if m.speaker})
        )
        common = common_words(texts)
        roles = {normalise(name): "user", normalise(ASSISTANT): "assistant"}
        for start in range(0, len(memories), BATCH):
            batch = memories[start : start + BATCH]
            found = typed_alike(
                [
                    (m, extraction)
                    for m in batch
                    for extraction in self.extractions(m, name, you.get(m.id), known, common)
                ]
            )
            now = self.clock()
            with self.store.transaction(), self.store.sidecar.graph.writing():
                graph = self.store.sidecar.graph
                closed: list[Closed] = []
                for memory, extraction in found:
                    done = graph.ingest(
                        user, memory.id, memory.day, memory.created_at, extraction, normalise, RELATIONS, roles, now
                    )
                    self.report.mentions += len(extraction.mentions)
                    self.report.relations += len(done.relations)
                    closed.extend(done.closed)
                self.store.sidecar.record(self._invalidations(user, closed, now))
                self.store.sidecar.mark_consolidated(user, STAGE, [m.id for m in batch], now)
            self.report.scanned += len(batch)
            self.report.closed += len(closed)
        self.sync(user)
        return self.report

    def _invalidations(self, user: str, closed: Sequence[Closed], now: float) -> list[HistoryEntry]:
        """The INVALIDATE events of relations a newer one closed: the old relation's memory,
        its text before and after, the sources of both, the newer one's memory."""
        entries = []
        for change in closed:
            before = replace(change.old, valid_to="", invalidated_at=0.0)
            entries.append(
                HistoryEntry(
                    relation_memory_id(user, change.old.id),
                    user,
                    Kind.RELATION.value,
                    "INVALIDATE",
                    relation_text(before),
                    relation_text(change.old),
                    now,
                    sorted({*change.old.sources, *change.new.sources}),
                    relation_memory_id(user, change.new.id),
                )
            )
        return entries

    def sync(self, user: str) -> None:
        """Make ``user``'s relation memories what the graph's typed relations say: one per
        relation (id ``relation_memory_id``), its text ``relation_text``, dated by its
        latest statement, ended (``valid_to``) once closed, citing the memories it was read
        from; a relation memory whose relation is gone is deleted. What an older version
        earned (strength, recalls, pin, feedback) is kept. A new one is an ADD event in the
        history, a renamed or merged one an UPDATE."""
        with self.store.transaction():
            relations = [r for r in self.store.sidecar.graph.relations(user) if r.relation in RELATIONS]
            stored = {m.id: m for m in self.store.memories(user=user, kind=Kind.RELATION.value)}
        wanted: dict[str, Memory] = {}
        for relation in relations:
            memory = Memory(
                id=relation_memory_id(user, relation.id),
                user=user,
                kind=Kind.RELATION.value,
                text=relation_text(relation),
                created_at=relation.last_seen,
                day=day_of(relation.last_seen),
                source="graph",
                source_ids=list(relation.sources),
                valid_from=day_seconds(relation.valid_from),
                valid_to=day_seconds(relation.valid_to) if relation.valid_to else 0.0,
            )
            old = stored.get(memory.id)
            if old is None:
                memory.strength = self.strength(memory)
            elif (old.text, old.valid_to, old.source_ids) == (memory.text, memory.valid_to, memory.source_ids):
                wanted[memory.id] = old
                continue
            else:
                memory.strength, memory.last_recalled_at, memory.recall_count = (
                    old.strength,
                    old.last_recalled_at,
                    old.recall_count,
                )
                memory.feedback, memory.pinned, memory.retained_from = old.feedback, old.pinned, old.retained_from
            wanted[memory.id] = memory
        changed = [m for m in wanted.values() if stored.get(m.id) is not m]
        gone = [i for i in stored if i not in wanted]
        vectors = self.embedder.embed([m.index_text() for m in changed]) if changed else []
        now = self.clock()
        # A closed relation's change is its INVALIDATE event; a new one is added, a renamed or merged one updated.
        entries = [
            HistoryEntry(
                m.id,
                user,
                m.kind,
                "ADD" if old is None else "UPDATE",
                "" if old is None else old.text,
                m.text,
                now,
                m.source_ids,
            )
            for m in changed
            if (old := stored.get(m.id)) is None or (old.text != m.text and old.valid_to == m.valid_to)
        ]
        with self.store.transaction():
            self.store.sidecar.record(entries)
            if changed:
                self.store.upsert(changed, vectors, embedder=embedder_identity(self.embedder))
            if gone:
                self.store.delete(gone)
        self.report.written += len(changed)
        self.report.deleted += len(gone)


# Reading and fixing the graph (memcli graph) ---------------------------------------------------

EXPORT_FORMATS = ("graphml", "gexf", "json", "dot")
"""What ``memcli graph export`` writes, each with networkx's own writer (dot through
pydot, a dependency)."""


def find_entity(graph: Graph, user: str, name: str | None) -> Entity:
    """``user``'s entity called ``name`` (its name or an alias, normalised), or without a
    name the user themself. Raises NotFoundError naming the closest entities."""
    if name is None:
        found = graph.self_entity(user)
        if found is None:
            raise NotFoundError(
                f"the graph of {user!r} has no entity for the user yet (memcli consolidate reads it); name one"
            )
        return found
    key = normalise(name)
    entity_id = graph.find(user, [key]).get(key)
    entity = None if entity_id is None else graph.entity(entity_id)
    if entity is None:
        names = [e.name for e in graph.entities(user)]
        close = difflib.get_close_matches(name, names, n=3, cutoff=0.6)
        hint = (
            f"; did you mean {' or '.join(close)}?"
            if close
            else ("" if names else " (its graph is empty: memcli consolidate builds it)")
        )
        raise NotFoundError(f"no entity {name!r} in the graph of {user!r}{hint}")
    return entity


def neighbourhood(
    graph: Graph, user: str, entity: Entity, depth: int, at: str | None
) -> list[tuple[Entity, int, str, int]]:
    """The entities up to ``depth`` edges from ``entity`` (relations that held on ``at``
    when given), nearest first, then by the edge's kind (typed first) and count: (entity,
    depth, label of the edge that reached it, its count)."""
    # heavy: networkx is needed only by the graph and TextRank
    import networkx

    whole = graph.to_networkx(user, at).to_undirected(as_view=True)
    if entity.id not in whole:
        return []
    reached = networkx.single_source_shortest_path_length(whole, entity.id, cutoff=depth)
    out = []
    for node, steps in reached.items():
        if node == entity.id:
            continue
        path = networkx.shortest_path(whole, entity.id, node)
        edges = whole.get_edge_data(path[-2], node).values()
        best = max(edges, key=lambda e: (e["label"] != MENTIONED_WITH, e["count"]))
        found = graph.entity(node)
        if found is not None:
            out.append((found, steps, best["label"], best["count"]))
    return sorted(out, key=lambda n: (n[1], n[2] == MENTIONED_WITH, -n[3], n[0].name))


_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ud800-\udfff\ufffe\uffff]")
"""Characters XML 1.0 cannot hold (and DOT reads badly): a name or label written into
GraphML, GEXF or DOT has each replaced by U+FFFD."""


def _printable(whole: Any) -> Any:
    """A copy of the networkx graph ``whole`` whose string attributes hold no ``_NOT_XML``
    character (a name from an older store, or from a text, may)."""
    copy = whole.copy()
    for _, data in [*copy.nodes(data=True), *((None, d) for *_, d in copy.edges(data=True))]:
        for key, value in data.items():
            if isinstance(value, str):
                data[key] = _NOT_XML.sub("\ufffd", value)
    return copy


def export_graph(graph: Graph, user: str, fmt: str) -> tuple[str, int, int]:
    """``user``'s graph (``Graph.to_networkx``) as a document in format ``fmt`` (one of
    EXPORT_FORMATS), with its node and edge counts. Raises UsageError for another format."""
    # heavy: networkx is needed only by the graph and TextRank
    import networkx

    if fmt not in EXPORT_FORMATS:
        raise UsageError(f"unknown format {fmt!r}; choose one of {', '.join(EXPORT_FORMATS)}")
    whole = graph.to_networkx(user)
    if fmt != "json":
        whole = _printable(whole)
    if fmt == "graphml":
        text = "\n".join(networkx.generate_graphml(whole))
    elif fmt == "gexf":
        text = "\n".join(networkx.generate_gexf(whole))
    elif fmt == "json":
        text = json.dumps(networkx.node_link_data(whole, edges="edges"), ensure_ascii=False, indent=1)
    else:
        drawn = whole.copy()
        for _, data in drawn.nodes(data=True):  # pydot takes "name" for the node's id: the name is its label
            data["label"] = data.pop("name")
        text = networkx.nx_pydot.to_pydot(drawn).to_string()
    return text, whole.number_of_nodes(), whole.number_of_edges()
