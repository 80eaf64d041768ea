"""Graph memory (Mem0g): the people, places and things of a user's life as entities, and
the relations between them as labelled edges that hold over a span of time.

Stored in the sidecar database (``memcli.store.sidecar``), inside the store's transactions:

- ``graph_entities``: one row per entity of a user, found by its normalised key
  (``memcli.text.entities.normalise``), with a display name, a type (person, place,
  organisation, pet, work, event), a role ("user", "assistant" or "") and when it was
  first and last seen (unix seconds);
- ``graph_aliases``: other normalised names of an entity ("mel" for Melanie when the text
  says so); an alias is never inferred from embedding similarity;
- ``graph_mentions``: which memories mention an entity;
- ``graph_relations``: subject, relation, object, ``valid_from`` / ``valid_to`` (days,
  ``YYYY-MM-DD``, "" when open or unknown), ``invalidated_at`` (unix seconds at which a
  newer relation closed it, 0 while current), how many times it was stated and when it
  was first and last seen; "mentioned with" edges (``MENTIONED_WITH``) are relations too;
- ``graph_sources``: the memories each relation was read from.

A relation of a single-valued kind (lives in, works at...) that a newer one contradicts is
closed, never deleted (Mem0g's conflict detector; Graphiti's ``invalid_at``): its
``valid_to`` becomes the newer one's ``valid_from``. Deleting memories cascades
(``forget_memories``): a mention or a relation whose every source is gone goes, and so does
an entity left with no mention. ``to_networkx`` gives the graph to traverse and export.
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol

from memcli.memory import Kind, stable_id
from memcli.store.db import atomic, execute_in, rows_in

if TYPE_CHECKING:
    import networkx

SCHEMA = """
CREATE TABLE IF NOT EXISTS graph_entities (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    user TEXT NOT NULL,
    key TEXT NOT NULL,
    name TEXT NOT NULL,
    type TEXT NOT NULL,
    role TEXT NOT NULL,
    first_seen REAL NOT NULL,
    last_seen REAL NOT NULL,
    UNIQUE (user, key)
);
CREATE TABLE IF NOT EXISTS graph_aliases (
    user TEXT NOT NULL,
    key TEXT NOT NULL,
    entity INTEGER NOT NULL,
    name TEXT NOT NULL,
    PRIMARY KEY (user, key)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS graph_aliases_by_entity ON graph_aliases (entity);
CREATE TABLE IF NOT EXISTS graph_mentions (
    entity INTEGER NOT NULL,
    memory_id TEXT NOT NULL,
    at REAL NOT NULL,
    PRIMARY KEY (entity, memory_id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS graph_mentions_by_memory ON graph_mentions (memory_id);
CREATE TABLE IF NOT EXISTS graph_relations (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    user TEXT NOT NULL,
    subject INTEGER NOT NULL,
    relation TEXT NOT NULL,
    object INTEGER NOT NULL,
    valid_from TEXT NOT NULL,
    valid_to TEXT NOT NULL,
    invalidated_at REAL NOT NULL,
    count INTEGER NOT NULL,
    first_seen REAL NOT NULL,
    last_seen REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS graph_relations_by_subject ON graph_relations (subject, relation);
CREATE INDEX IF NOT EXISTS graph_relations_by_object ON graph_relations (object);
CREATE INDEX IF NOT EXISTS graph_relations_by_user ON graph_relations (user);
CREATE TABLE IF NOT EXISTS graph_sources (
    relation INTEGER NOT NULL,
    memory_id TEXT NOT NULL,
    PRIMARY KEY (relation, memory_id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS graph_sources_by_memory ON graph_sources (memory_id);
"""

MENTIONED_WITH = "mentioned with"
"""The label of the edge between two entities a memory mentions together (not single-valued;
its ``count`` says how many memories do)."""
MOST_TOGETHER = 8
"""Entities of one memory paired by "mentioned with" edges at most (the first ones): a list
of twenty names makes 190 edges that say little."""


def day_seconds(day: str) -> float:
    """Unix seconds of the start of ``day`` (``YYYY``, ``YYYY-MM`` or ``YYYY-MM-DD``, local
    time); 0.0 for "" or an unreadable day."""
    for pattern in ("%Y-%m-%d", "%Y-%m", "%Y"):
        try:
            return datetime.strptime(day, pattern).timestamp()
        except ValueError:
            continue
    return 0.0


def relation_memory_id(user: str, relation_id: int) -> str:
    """The id of the memory of kind ``relation`` that stands for relation ``relation_id`` of
    ``user`` (``memcli.consolidation.graph_memory``)."""
    return stable_id(Kind.RELATION.value, user, str(relation_id))


class RelationKindLike(Protocol):
    """What ingestion reads of a relation kind (``memcli.text.entities.RelationKind``)."""

    single_valued: bool


class MentionLike(Protocol):
    """An entity mention (``memcli.text.entities.Mention``)."""

    name: str
    key: str
    type: str


class RelationLike(Protocol):
    """A relation read from a text (``memcli.text.entities.Relation``)."""

    subject: str
    relation: str
    object: str
    valid_from: str | None


class ExtractionLike(Protocol):
    """What the extractor found in one text (``memcli.text.entities.Extraction``)."""

    mentions: Sequence[MentionLike]
    relations: Sequence[RelationLike]
    aliases: Sequence[tuple[str, str]]


@dataclass(frozen=True)
class Entity:
    """One entity of a user. first_seen / last_seen: unix seconds."""

    id: int
    user: str
    key: str
    name: str
    type: str
    role: str
    first_seen: float
    last_seen: float


@dataclass(frozen=True)
class Relation:
    """One stored relation, with its endpoints' names. valid_from / valid_to: days
    (``YYYY-MM-DD``, "" when unknown or open); invalidated_at: unix seconds at which a newer
    relation closed it (0 while current); sources: the memory ids it was read from."""

    id: int
    user: str
    subject: int
    subject_name: str
    relation: str
    object: int
    object_name: str
    valid_from: str
    valid_to: str
    invalidated_at: float
    count: int
    first_seen: float
    last_seen: float
    sources: tuple[str, ...] = ()

    @property
    def current(self) -> bool:
        """Whether no newer relation has closed it."""
        return not self.valid_to

    def valid_at(self, day: str) -> bool:
        """Whether it held on ``day`` (``YYYY-MM-DD``): it began on or before it (or its
        start is unknown) and had not ended by it."""
        return (not self.valid_from or self.valid_from <= day) and (not self.valid_to or day < self.valid_to)


@dataclass
class Closed:
    """A relation a newer one closed (an audit event in the history): the old relation as
    it is now, and the one that closed it."""

    old: Relation
    new: Relation


@dataclass
class Ingested:
    """What ``ingest`` did to the graph for one memory: entity ids mentioned, relation ids
    written (new or seen again) and the relations it closed."""

    entities: list[int] = field(default_factory=list)
    relations: list[int] = field(default_factory=list)
    closed: list[Closed] = field(default_factory=list)


_RELATION_COLUMNS = (
    "r.id, r.user, r.subject, s.name, r.relation, r.object, o.name, r.valid_from, r.valid_to, r.invalidated_at,"
    " r.count, r.first_seen, r.last_seen"
)
_RELATION_FROM = "graph_relations r JOIN graph_entities s ON s.id = r.subject JOIN graph_entities o ON o.id = r.object"
_ENTITY_COLUMNS = "id, user, key, name, type, role, first_seen, last_seen"


class Graph:
    """The graph tables of a sidecar connection (see the module docstring). Every write
    commits at once (``memcli.store.db.atomic``), as the sidecar's other tables do."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self._db = db

    # reading -------------------------------------------------------------------------

    def entity(self, entity_id: int) -> Entity | None:
        """The entity with this id, or None."""
        row = self._db.execute(f"SELECT {_ENTITY_COLUMNS} FROM graph_entities WHERE id = ?", (entity_id,)).fetchone()
        return None if row is None else Entity(*row)

    def find(self, user: str, keys: Iterable[str]) -> dict[str, int]:
        """Normalised key → entity id of ``user``'s entities named or aliased by one of
        ``keys`` (an entity's own key wins over another's alias)."""
        wanted = list(dict.fromkeys(k for k in keys if k))
        found: dict[str, int] = {}
        found.update(
            rows_in(
                self._db, "SELECT key, entity FROM graph_aliases WHERE user = ? AND key IN ({marks})", wanted, [user]
            )
        )
        found.update(
            rows_in(self._db, "SELECT key, id FROM graph_entities WHERE user = ? AND key IN ({marks})", wanted, [user])
        )
        return found

    def entities(self, user: str, type: str | None = None) -> list[Entity]:
        """``user``'s entities (of ``type`` when given), most mentioned first, then by name."""
        where, args = ("e.user = ? AND e.type = ?", [user, type]) if type else ("e.user = ?", [user])
        rows = self._db.execute(
            f"SELECT {', '.join('e.' + c.strip() for c in _ENTITY_COLUMNS.split(','))}"
            f" FROM graph_entities e LEFT JOIN graph_mentions m ON m.entity = e.id WHERE {where}"
            " GROUP BY e.id ORDER BY COUNT(m.memory_id) DESC, e.name",
            args,
        )
        return [Entity(*row) for row in rows.fetchall()]

    def mention_counts(self, entity_ids: Sequence[int]) -> dict[int, int]:
        """Entity id → how many memories mention it."""
        if not entity_ids:
            return {}
        sql = "SELECT entity, COUNT(*) FROM graph_mentions WHERE entity IN ({marks}) GROUP BY entity"
        return dict(rows_in(self._db, sql, list(entity_ids)))

    def aliases(self, entity_id: int) -> list[str]:
        """The other names of an entity, as first written."""
        return [
            r[0]
            for r in self._db.execute("SELECT name FROM graph_aliases WHERE entity = ? ORDER BY name", (entity_id,))
        ]

    def self_entity(self, user: str) -> Entity | None:
        """The entity that stands for ``user`` (role "user"), if the graph has one."""
        row = self._db.execute(
            f"SELECT {_ENTITY_COLUMNS} FROM graph_entities WHERE user = ? AND role = 'user'", (user,)
        ).fetchone()
        return None if row is None else Entity(*row)

    def mentioning(self, entity_ids: Collection[int]) -> dict[int, list[str]]:
        """Entity id → the ids of the memories that mention it."""
        return self._memory_ids("graph_mentions", "entity", entity_ids)

    def _memory_ids(self, table: str, column: str, ids: Collection[int], ordered: bool = False) -> dict[int, list[str]]:
        """``column``'s value → the ``memory_id`` of ``table``'s rows with that value, for
        the values ``ids`` (asked a page at a time, ``db.rows_in``: SQLite bounds the variables of a
        statement), in memory id order when ``ordered``."""
        out: dict[int, list[str]] = {}
        order = " ORDER BY memory_id" if ordered else ""
        sql = f"SELECT {column}, memory_id FROM {table} WHERE {column} IN ({{marks}}){order}"
        for key, memory_id in rows_in(self._db, sql, list(ids)):
            out.setdefault(key, []).append(memory_id)
        return out

    def relations(self, user: str, entity_id: int | None = None, current: bool | None = None) -> list[Relation]:
        """``user``'s relations (those with ``entity_id`` at one end when given; only the
        current ones, or only the closed ones, when ``current`` says so), typed ones before
        "mentioned with" edges, each by valid_from then id; with their sources."""
        where, args = ["r.user = ?"], [user]
        if entity_id is not None:
            where.append("(r.subject = ? OR r.object = ?)")
            args += [entity_id, entity_id]
        if current is not None:
            where.append("r.valid_to = ''" if current else "r.valid_to != ''")
        rows = self._db.execute(
            f"SELECT {_RELATION_COLUMNS} FROM {_RELATION_FROM} WHERE {' AND '.join(where)}"
            " ORDER BY r.relation = ?, r.valid_from, r.id",
            [*args, MENTIONED_WITH],
        ).fetchall()
        return self._with_sources(rows)

    def relation(self, relation_id: int) -> Relation | None:
        """The relation with this id, or None."""
        rows = self._db.execute(
            f"SELECT {_RELATION_COLUMNS} FROM {_RELATION_FROM} WHERE r.id = ?", (relation_id,)
        ).fetchall()
        found = self._with_sources(rows)
        return found[0] if found else None

    def _with_sources(self, rows: Sequence[tuple[Any, ...]]) -> list[Relation]:
        sources = self._memory_ids("graph_sources", "relation", [row[0] for row in rows], ordered=True)
        return [Relation(*row, sources=tuple(sources.get(row[0], ()))) for row in rows]

    def neighbours(self, entity_ids: Collection[int], typed_only: bool = False) -> dict[int, tuple[str, int]]:
        """The entities one edge away from ``entity_ids`` (not among them): id → (the label
        of the edge, how many times it was stated); a typed relation wins over a
        "mentioned with" edge, then the edge stated most."""
        if not entity_ids:
            return {}
        ids = list(entity_ids)
        marks = ", ".join("?" * len(ids))
        extra = " AND relation != ?" if typed_only else ""
        args = [*ids, *([MENTIONED_WITH] if typed_only else []), *ids, *([MENTIONED_WITH] if typed_only else [])]
        rows = self._db.execute(
            f"SELECT object, relation, count FROM graph_relations WHERE subject IN ({marks}){extra}"
            f" UNION ALL SELECT subject, relation, count FROM graph_relations WHERE object IN ({marks}){extra}",
            args,
        )
        out: dict[int, tuple[str, int]] = {}
        chosen = set(ids)
        for other, label, count in rows:
            if other in chosen:
                continue
            best = out.get(other)
            rank = (label != MENTIONED_WITH, count)
            if best is None or rank > (best[0] != MENTIONED_WITH, best[1]):
                out[other] = (label, count)
        return out

    def typed_edges(self, entity_ids: Collection[int]) -> list[tuple[int, str, int, int, str, str]]:
        """The typed relations (not "mentioned with" edges) at ``entity_ids``, current and
        closed, as (that entity, label, the entity at the other end, relation id,
        valid_from, valid_to)."""
        if not entity_ids:
            return []
        ids = list(entity_ids)
        marks = ", ".join("?" * len(ids))
        rows = self._db.execute(
            f"SELECT subject, relation, object, id, valid_from, valid_to FROM graph_relations WHERE subject IN ({marks}) AND relation != ?"
            f" UNION SELECT object, relation, subject, id, valid_from, valid_to FROM graph_relations WHERE object IN ({marks}) AND relation != ?",
            [*ids, MENTIONED_WITH, *ids, MENTIONED_WITH],
        )
        return rows.fetchall()

    def sources(self, relation_ids: Collection[int]) -> dict[int, list[str]]:
        """Relation id → the ids of the memories it was read from."""
        return self._memory_ids("graph_sources", "relation", relation_ids)

    def relation_memories_at(self, user: str, day: str) -> list[str]:
        """The ids of the memories (``relation_memory_id``) of ``user``'s typed relations
        that held on ``day`` (``YYYY-MM-DD``)."""
        rows = self._db.execute(
            "SELECT id FROM graph_relations WHERE user = ? AND relation != ? AND (valid_from = '' OR valid_from <= ?)"
            " AND (valid_to = '' OR ? < valid_to)",
            (user, MENTIONED_WITH, day, day),
        )
        return [relation_memory_id(user, r[0]) for r in rows]

    # writing -------------------------------------------------------------------------

    def writing(self) -> contextlib.AbstractContextManager[None]:
        """One SQLite transaction around many writes (``ingest`` of a batch of memories):
        each write commits on its own otherwise, a disk sync each."""
        return atomic(self._db)

    def _resolve(self, user: str, name: str, key: str, type: str, at: float, role: str = "") -> int:
        """The id of ``user``'s entity with normalised ``key`` (its own or an alias), made
        when there is none; its last_seen moves to ``at``, and a role once given stays."""
        found = self.find(user, [key]).get(key)
        if found is None:
            cursor = self._db.execute(
                "INSERT INTO graph_entities (user, key, name, type, role, first_seen, last_seen) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (user, key, name, type, role, at, at),
            )
            return int(cursor.lastrowid or 0)
        self._db.execute(
            "UPDATE graph_entities SET last_seen = MAX(last_seen, ?), first_seen = MIN(first_seen, ?),"
            " role = CASE WHEN role = '' THEN ? ELSE role END WHERE id = ?",
            (at, at, role, found),
        )
        return found

    def ingest(
        self,
        user: str,
        memory_id: str,
        day: str,
        at: float,
        extraction: ExtractionLike,
        normalise: Callable[[str], str],
        kinds: Mapping[str, RelationKindLike],
        roles: Mapping[str, str] | None = None,
        now: float = 0.0,
    ) -> Ingested:
        """Write what ``extraction`` found in memory ``memory_id`` of ``user`` (learned on
        ``day``, ``YYYY-MM-DD``, at ``at`` unix seconds) into the graph; ``now`` (unix
        seconds) stamps the relations it closes.

        Names resolve to entities by ``normalise``d key, then by alias; an alias pair
        (alias, full name) makes the alias point at the full name's entity, and an entity
        that was known by the alias alone is merged into it. Each typed relation is stored
        once while it holds (seen again: its count and last_seen grow, the memory becomes
        one of its sources); its valid_from is the day the text gives, else ``day``. For a
        single-valued kind (``kinds[label].single_valued``), a current relation of the same
        subject and label to another object that began earlier is closed at the new one's
        valid_from; one that began later closes the new one instead (a memory read out of
        order). The entities the memory mentions are tied by "mentioned with" edges.
        ``roles``: normalised key → "user" or "assistant", for the people the speaker rule
        resolves to. Idempotent for a memory already ingested."""
        roles = roles or {}
        done = Ingested()
        with atomic(self._db):
            types = {m.key: m.type for m in extraction.mentions}
            for alias, full in extraction.aliases:
                self._alias(
                    user, alias, normalise(alias), full, normalise(full), types.get(normalise(full), "person"), at
                )
            mentioned: list[int] = []
            for mention in extraction.mentions:
                entity = self._resolve(user, mention.name, mention.key, mention.type, at, roles.get(mention.key, ""))
                if entity not in mentioned:
                    mentioned.append(entity)
                self._mention(entity, memory_id, at)
            for found in extraction.relations:
                kind = kinds.get(found.relation)
                subject_key, object_key = normalise(found.subject), normalise(found.object)
                if not subject_key or not object_key or subject_key == object_key:
                    continue
                # A name the text did not type as a mention takes the relation kind's type (an age's "30": number).
                subject_type, object_type = getattr(kind, "subject", "person"), getattr(kind, "object", "person")
                subject = self._resolve(
                    user,
                    found.subject,
                    subject_key,
                    types.get(subject_key, subject_type),
                    at,
                    roles.get(subject_key, ""),
                )
                target = self._resolve(
                    user, found.object, object_key, types.get(object_key, object_type), at, roles.get(object_key, "")
                )
                self._mention(subject, memory_id, at)
                self._mention(target, memory_id, at)
                single = bool(kind is not None and kind.single_valued)
                relation_id, closed = self._relate(
                    user, subject, found.relation, target, found.valid_from or day, memory_id, at, single, now
                )
                done.relations.append(relation_id)
                done.closed.extend(closed)
            together = mentioned[:MOST_TOGETHER]
            for i, first in enumerate(together):
                for second in together[i + 1 :]:
                    low, high = sorted((first, second))
                    self._relate(user, low, MENTIONED_WITH, high, day, memory_id, at, False, now)
            done.entities = mentioned
        return done

    def _alias(self, user: str, alias: str, alias_key: str, full: str, full_key: str, type: str, at: float) -> None:
        if not alias_key or not full_key or alias_key == full_key:
            return
        entity = self._resolve(user, full, full_key, type, at)
        own = self._db.execute("SELECT id FROM graph_entities WHERE user = ? AND key = ?", (user, alias_key)).fetchone()
        if own is not None and own[0] != entity:
            self._merge(own[0], entity)
        self._db.execute(
            "INSERT OR REPLACE INTO graph_aliases (user, key, entity, name) VALUES (?, ?, ?, ?)",
            (user, alias_key, entity, alias),
        )

    def _mention(self, entity: int, memory_id: str, at: float) -> None:
        self._db.execute(
            "INSERT OR IGNORE INTO graph_mentions (entity, memory_id, at) VALUES (?, ?, ?)", (entity, memory_id, at)
        )

    def _relate(
        self,
        user: str,
        subject: int,
        label: str,
        target: int,
        valid_from: str,
        memory_id: str,
        at: float,
        single: bool,
        now: float,
    ) -> tuple[int, list[Closed]]:
        """Store one statement of (subject, label, target) from ``memory_id``; returns the
        relation's id and the relations it closed."""
        row = self._db.execute(
            "SELECT id FROM graph_relations WHERE subject = ? AND relation = ? AND object = ? AND valid_to = '' ORDER BY id DESC LIMIT 1",
            (subject, label, target),
        ).fetchone()
        if row is None and not single:
            # A relation that was closed and is said again: seen again, not current again
            # (only a single-valued kind closes, and for it the newer statement reopens below).
            row = self._db.execute(
                "SELECT id FROM graph_relations WHERE subject = ? AND relation = ? AND object = ? ORDER BY id DESC LIMIT 1",
                (subject, label, target),
            ).fetchone()
        closed: list[Closed] = []
        if row is not None:
            relation_id = int(row[0])
            fresh = self._db.execute(
                "INSERT OR IGNORE INTO graph_sources (relation, memory_id) VALUES (?, ?)", (relation_id, memory_id)
            )
            if fresh.rowcount:
                self._db.execute(
                    "UPDATE graph_relations SET count = count + 1, last_seen = MAX(last_seen, ?), first_seen = MIN(first_seen, ?),"
                    " valid_from = CASE WHEN valid_from = '' OR ? < valid_from THEN ? ELSE valid_from END WHERE id = ?",
                    (at, at, valid_from, valid_from, relation_id),
                )
            return relation_id, closed
        valid_to = ""
        if single:
            others = self._db.execute(
                "SELECT id, valid_from FROM graph_relations WHERE subject = ? AND relation = ? AND object != ? AND valid_to = ''",
                (subject, label, target),
            ).fetchall()
            later = [start for _, start in others if start and valid_from and start > valid_from]
            if later:
                valid_to = min(later)  # told of an older state after a newer one: it ended when the newer began
        cursor = self._db.execute(
            "INSERT INTO graph_relations (user, subject, relation, object, valid_from, valid_to, invalidated_at, count, first_seen, last_seen)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, 1, ?, ?)",
            (user, subject, label, target, valid_from, valid_to, now if valid_to else 0.0, at, at),
        )
        relation_id = int(cursor.lastrowid or 0)
        self._db.execute(
            "INSERT OR IGNORE INTO graph_sources (relation, memory_id) VALUES (?, ?)", (relation_id, memory_id)
        )
        if single and not valid_to:
            for other_id, start in others:
                if not start or not valid_from or start <= valid_from:
                    self._db.execute(
                        "UPDATE graph_relations SET valid_to = ?, invalidated_at = ? WHERE id = ?",
                        (valid_from or start, now, other_id),
                    )
                    old, new = self.relation(other_id), self.relation(relation_id)
                    if old is not None and new is not None:
                        closed.append(Closed(old, new))
        return relation_id, closed

    def merge(self, source: int, target: int) -> None:
        """Merge entity ``source`` into ``target`` (both of one user): its name and aliases
        become aliases of ``target``, its mentions and relations move to it (an edge that
        would join ``target`` to itself goes), and ``source`` is deleted."""
        with atomic(self._db):
            self._merge(source, target)

    def _merge(self, source: int, target: int) -> None:
        row = self._db.execute("SELECT user, key, name, role FROM graph_entities WHERE id = ?", (source,)).fetchone()
        if row is None or source == target:
            return
        user, key, name, role = row
        self._db.execute("UPDATE graph_aliases SET entity = ? WHERE entity = ?", (target, source))
        self._db.execute(
            "INSERT OR REPLACE INTO graph_aliases (user, key, entity, name) VALUES (?, ?, ?, ?)",
            (user, key, target, name),
        )
        self._db.execute(
            "INSERT OR IGNORE INTO graph_mentions (entity, memory_id, at) SELECT ?, memory_id, at FROM graph_mentions WHERE entity = ?",
            (target, source),
        )
        self._db.execute("DELETE FROM graph_mentions WHERE entity = ?", (source,))
        self._db.execute("UPDATE graph_relations SET subject = ? WHERE subject = ?", (target, source))
        self._db.execute("UPDATE graph_relations SET object = ? WHERE object = ?", (target, source))
        loops = [
            r[0]
            for r in self._db.execute(
                "SELECT id FROM graph_relations WHERE subject = object AND subject = ?", (target,)
            )
        ]
        self._delete_relations(loops)
        self._db.execute(
            "UPDATE graph_entities SET role = CASE WHEN role = '' THEN ? ELSE role END,"
            " first_seen = MIN(first_seen, (SELECT first_seen FROM graph_entities WHERE id = ?)),"
            " last_seen = MAX(last_seen, (SELECT last_seen FROM graph_entities WHERE id = ?)) WHERE id = ?",
            (role, source, source, target),
        )
        self._db.execute("DELETE FROM graph_entities WHERE id = ?", (source,))

    def rename(self, entity_id: int, name: str, key: str) -> None:
        """Give an entity a new display name and normalised key; the old name becomes an
        alias. Raises ValueError when another entity of the user already has that key."""
        with atomic(self._db):
            row = self._db.execute("SELECT user, key, name FROM graph_entities WHERE id = ?", (entity_id,)).fetchone()
            if row is None:
                return
            user, old_key, old_name = row
            other = self.find(user, [key]).get(key)
            if other is not None and other != entity_id:
                raise ValueError(f"{name!r} is already another entity; merge them instead")
            self._db.execute("DELETE FROM graph_aliases WHERE user = ? AND key = ?", (user, key))
            self._db.execute("UPDATE graph_entities SET name = ?, key = ? WHERE id = ?", (name, key, entity_id))
            if old_key != key:
                self._db.execute(
                    "INSERT OR REPLACE INTO graph_aliases (user, key, entity, name) VALUES (?, ?, ?, ?)",
                    (user, old_key, entity_id, old_name),
                )

    def _delete_relations(self, ids: Sequence[int]) -> None:
        self._db.executemany("DELETE FROM graph_sources WHERE relation = ?", [(i,) for i in ids])
        self._db.executemany("DELETE FROM graph_relations WHERE id = ?", [(i,) for i in ids])

    # deleting ------------------------------------------------------------------------------

    def forget_memories(self, memory_ids: Sequence[str], users: Collection[str] = ()) -> list[int]:
        """Take deleted memories out of the graph: their mentions and their place among the
        sources of relations go; a relation left with no source goes, and an entity left
        with no mention goes with its aliases and relations. A deleted memory of kind
        ``relation`` of one of ``users`` (the users the memories belong to) takes its relation
        with it: the person said it is wrong or not to be kept, so the next consolidation
        must not write it again. Returns the ids of the relations deleted."""
        if not memory_ids:
            return []
        with atomic(self._db):
            deleting = set(memory_ids)
            denied = [
                relation_id
                for user in sorted(users)
                for (relation_id,) in self._db.execute("SELECT id FROM graph_relations WHERE user = ?", (user,))
                if relation_memory_id(user, relation_id) in deleting
            ]
            self._delete_relations(denied)
            touched: set[int] = set()
            entities: set[int] = set()
            page = "SELECT {0} FROM {1} WHERE memory_id IN ({{marks}})"
            touched.update(r[0] for r in rows_in(self._db, page.format("relation", "graph_sources"), memory_ids))
            entities.update(r[0] for r in rows_in(self._db, page.format("entity", "graph_mentions"), memory_ids))
            for table in ("graph_sources", "graph_mentions"):
                execute_in(self._db, f"DELETE FROM {table} WHERE memory_id IN ({{marks}})", memory_ids)
            orphans = [
                i
                for i in sorted(touched)
                if self._db.execute("SELECT 1 FROM graph_sources WHERE relation = ?", (i,)).fetchone() is None
            ]
            self._delete_relations(orphans)
            gone = [
                e
                for e in sorted(entities)
                if self._db.execute("SELECT 1 FROM graph_mentions WHERE entity = ?", (e,)).fetchone() is None
            ]
            deleted = [*denied, *orphans]
            for entity in gone:
                edges = [
                    r[0]
                    for r in self._db.execute(
                        "SELECT id FROM graph_relations WHERE subject = ? OR object = ?", (entity, entity)
                    )
                ]
                self._delete_relations(edges)
                deleted.extend(edges)
                self._db.execute("DELETE FROM graph_aliases WHERE entity = ?", (entity,))
                self._db.execute("DELETE FROM graph_entities WHERE id = ?", (entity,))
        return deleted

    def forget_user(self, user: str) -> None:
        """Delete ``user``'s whole graph."""
        with atomic(self._db):
            self._db.execute(
                "DELETE FROM graph_sources WHERE relation IN (SELECT id FROM graph_relations WHERE user = ?)", (user,)
            )
            self._db.execute("DELETE FROM graph_relations WHERE user = ?", (user,))
            self._db.execute(
                "DELETE FROM graph_mentions WHERE entity IN (SELECT id FROM graph_entities WHERE user = ?)", (user,)
            )
            self._db.execute("DELETE FROM graph_aliases WHERE user = ?", (user,))
            self._db.execute("DELETE FROM graph_entities WHERE user = ?", (user,))

    # networkx ------------------------------------------------------------------------------

    def to_networkx(self, user: str, at: str | None = None) -> networkx.MultiDiGraph:
        """``user``'s graph as a networkx ``MultiDiGraph``: a node per entity (attributes
        name, type, role, aliases, mentions), an edge per relation (label, valid_from,
        valid_to, count, sources as a comma-separated string, so every writer takes it).
        ``at`` (``YYYY-MM-DD``): only the relations that held that day."""
        # heavy: networkx is needed only by the graph and TextRank
        import networkx

        graph = networkx.MultiDiGraph(user=user)
        entities = self.entities(user)
        counts = self.mention_counts([e.id for e in entities])
        for entity in entities:
            graph.add_node(
                entity.id,
                name=entity.name,
                type=entity.type,
                role=entity.role,
                aliases=", ".join(self.aliases(entity.id)),
                mentions=counts.get(entity.id, 0),
            )
        for relation in self.relations(user):
            if at is not None and not relation.valid_at(at):
                continue
            graph.add_edge(
                relation.subject,
                relation.object,
                key=relation.id,
                label=relation.relation,
                valid_from=relation.valid_from,
                valid_to=relation.valid_to,
                count=relation.count,
                sources=",".join(relation.sources),
            )
        return graph
