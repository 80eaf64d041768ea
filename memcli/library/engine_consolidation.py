"""The engine's consolidation and graph memory: consolidate, what it wrote (portraits, event
summaries, the running memory) and the graph's show, list, export, merge and rename
(``memcli.library.engine.Engine``)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from memcli.dates import parse_day
from memcli.errors import (
    NotFoundError,
    StoreLockedError,
    UsageError,
)
from memcli.memory import Kind, Memory
from memcli.models.embedding import Progress
from memcli.models.llm import Message
from memcli.paths import PRIVATE_FILE, private_dir

if TYPE_CHECKING:
    from memcli.consolidation.consolidate import ConsolidationReport
    from memcli.recall.assistant import Context
from memcli.library.engine_models import check_entity_name


class ConsolidationWork:
    """The consolidation and graph work of ``Engine``."""

    def consolidate(
        self,
        user: str | None = None,
        all_users: bool = False,
        since: str | None = None,
        until: str | None = None,
        dry_run: bool = False,
        warn: Callable[[str], None] | None = None,
        progress: Progress | None = None,
        retry: bool = False,
    ) -> ConsolidationReport:
        """The consolidation pass (``memcli.consolidation.consolidate``) for ``user`` or every user, over
        the days from ``since`` to ``until`` (dates, inclusive). Idempotent and resumable;
        ``retry`` also redoes the work whose model output was invalid in an earlier run.
        Unless ``dry_run``, then reads what the memories of users not yet covered state
        (``MemoryStore.fill_statements``), as an idle service does.

        Raises StoreLockedError when another consolidation runs longer than lock_timeout,
        UsageError for an unreadable date, ModelError when the chat model cannot load.
        """
        # heavy: needed only to take a lock
        import filelock

        # rare path: consolidation and the graph load on first use, not with every verb
        from memcli.consolidation.consolidate import Consolidator

        first, last = parse_day(since, "--since", self.clock()), parse_day(until, "--until", self.clock())
        if first and last and first > last:
            raise UsageError(f"--since {first} is after --until {last}")
        if not dry_run:
            self.check_embedder()
        lock = filelock.FileLock(
            str(self.paths.consolidate_lock), timeout=self.settings.lock_timeout, mode=PRIVATE_FILE
        )
        try:
            private_dir(self.paths.data_dir)
            lock.acquire()
        except filelock.Timeout:
            raise StoreLockedError(
                f"another memcli consolidate is running (waited {self.settings.lock_timeout:g} s for {self.paths.consolidate_lock})"
            ) from None
        except OSError as exc:
            fault = self.store.fault(exc)
            if fault is None:
                raise
            raise fault from None
        try:
            users = self.store.users() if all_users else [self.user(user)]
            report = Consolidator(self, warn, progress).run(users, first, last, dry_run, retry)
            if not dry_run:
                # A store only ever used in-process (no service to fill them as it idles)
                # gets its statements here, at the nightly pass, so that supersession at
                # write time looks its candidates up instead of reading every memory.
                self.store.fill_statements()
            return report
        finally:
            lock.release()

    def consolidated(self, user: str) -> Context:
        """See ``Assistant.consolidated``."""
        return self.assistant.consolidated(user)

    def summarize(self, previous: str, turns: Sequence[Message]) -> str:
        """See ``Assistant.summarize``."""
        return self.assistant.summarize(previous, turns)

    def graph_show(
        self, name: str | None = None, user: str | None = None, at: str | None = None, depth: int = 1
    ) -> dict[str, Any]:
        """The entity ``name`` (the user themself when None) of ``user``'s graph: the
        entity, its typed relations (current and past, or those that held on ``at``, a date)
        and its neighbours up to ``depth`` edges away (``memcli.consolidation.graph_memory``). Returns
        {user, at, entity, relations, neighbours}: ``Entity``, ``Relation`` objects and
        (entity, depth, label, count) tuples. Raises NotFoundError (no such entity),
        UsageError (depth below 1, an unreadable date)."""
        # rare path: consolidation and the graph load on first use, not with every verb
        from memcli.consolidation.graph_memory import find_entity, neighbourhood
        from memcli.store.graph import MENTIONED_WITH

        if depth < 1:
            raise UsageError("--depth must be 1 or more")
        user = self.user(user)
        day = parse_day(at, "--at", self.clock())
        with self.store.transaction():
            graph = self.store.sidecar.graph
            entity = find_entity(graph, user, name)
            relations = [
                r
                for r in graph.relations(user, entity.id)
                if r.relation != MENTIONED_WITH and (day is None or r.valid_at(day))
            ]
            return {
                "user": user,
                "at": day,
                "entity": entity,
                "aliases": graph.aliases(entity.id),
                "mentions": graph.mention_counts([entity.id]).get(entity.id, 0),
                "relations": relations,
                "neighbours": neighbourhood(graph, user, entity, depth, day),
            }

    def graph_list(self, user: str | None = None, type: str | None = None) -> list[tuple[Any, list[str], int]]:
        """``user``'s entities (of ``type`` when given), most mentioned first: (entity,
        aliases, mentions)."""
        user = self.user(user)
        with self.store.transaction():
            graph = self.store.sidecar.graph
            entities = graph.entities(user, type)
            counts = graph.mention_counts([e.id for e in entities])
            return [(e, graph.aliases(e.id), counts.get(e.id, 0)) for e in entities]

    def graph_export(self, user: str | None = None, format: str = "graphml") -> dict[str, Any]:
        """``user``'s graph as a document (``memcli.consolidation.graph_memory.export_graph``): {user,
        format, nodes, edges, text}. Raises UsageError for an unknown format."""
        # rare path: consolidation and the graph load on first use, not with every verb
        from memcli.consolidation.graph_memory import export_graph

        user = self.user(user)
        with self.store.transaction():
            text, nodes, edges = export_graph(self.store.sidecar.graph, user, format)
        return {"user": user, "format": format, "nodes": nodes, "edges": edges, "text": text}

    def graph_merge(self, name: str, into: str, user: str | None = None) -> tuple[Any, list[str], int]:
        """Merge entity ``name`` into entity ``into`` (one person under two names, which
        memcli never merges by itself on similarity): ``name`` becomes an alias, its
        mentions and relations move over; the relation memories follow (UPDATE events).
        Returns (entity, aliases, mentions) of the merged one. Raises NotFoundError, UsageError
        (the same entity twice)."""
        # rare path: consolidation and the graph load on first use, not with every verb
        from memcli.consolidation.graph_memory import GraphBuilder, find_entity

        user = self.user(user)
        with self.store.transaction():
            graph = self.store.sidecar.graph
            source, target = find_entity(graph, user, name), find_entity(graph, user, into)
            if source.id == target.id:
                raise UsageError(f"{name!r} and {into!r} are already one entity")
            graph.merge(source.id, target.id)
        GraphBuilder(self.store, self.embedder, self.clock, self.initial_strength).sync(user)
        return self._graph_entity(user, target.id)

    def graph_rename(self, name: str, new: str, user: str | None = None) -> tuple[Any, list[str], int]:
        """Give entity ``name`` the name ``new`` (the old one stays as an alias); the relation
        memories follow. Returns (entity, aliases, mentions). Raises NotFoundError,
        UsageError (``new`` is empty or another entity's name: merge them instead),
        BadInputError (``new`` is not text, holds a control character or is longer than
        ``MAX_ENTITY_NAME``: ``check_entity_name``)."""
        # rare path: consolidation and the graph load on first use, not with every verb
        from memcli.consolidation.graph_memory import GraphBuilder, find_entity
        from memcli.text.entities import normalise

        new = new.strip()
        if not normalise(new):
            raise UsageError("the new name is empty")
        check_entity_name(new)
        user = self.user(user)
        with self.store.transaction():
            graph = self.store.sidecar.graph
            entity = find_entity(graph, user, name)
            try:
                graph.rename(entity.id, new, normalise(new))
            except ValueError as exc:
                raise UsageError(str(exc)) from None
        GraphBuilder(self.store, self.embedder, self.clock, self.initial_strength).sync(user)
        return self._graph_entity(user, entity.id)

    def _graph_entity(self, user: str, entity_id: int) -> tuple[Any, list[str], int]:
        with self.store.transaction():
            graph = self.store.sidecar.graph
            entity = graph.entity(entity_id)
            if entity is None:
                raise NotFoundError(f"no entity {entity_id} in the graph of {user!r}")
            return entity, graph.aliases(entity_id), graph.mention_counts([entity_id]).get(entity_id, 0)

    def portraits(self, user: str | None = None, daily: bool = False) -> list[Memory]:
        """``user``'s global portrait (a list of one, or none yet), or with ``daily`` every
        daily portrait, oldest day first (MemoryBank's user portrait)."""
        return self._consolidated(user, Kind.PORTRAIT_DAILY if daily else Kind.PORTRAIT_GLOBAL)

    def summaries(self, user: str | None = None, day: str | None = None, running: bool = False) -> list[Memory]:
        """``user``'s global event summary, or the daily event summary of ``day``, or with
        ``running`` the running memory: a list of one, or empty when there is none yet.

        Raises UsageError for an unreadable day."""
        if running:
            return self._consolidated(user, Kind.RUNNING_SUMMARY)
        if day is None:
            return self._consolidated(user, Kind.EVENT_GLOBAL)
        wanted = parse_day(day, "--day", self.clock())
        return [m for m in self._consolidated(user, Kind.EVENT_DAILY) if m.day == wanted]

    def _consolidated(self, user: str | None, kind: Kind) -> list[Memory]:
        with self.store.transaction():
            memories = self.store.memories(user=self.user(user), kind=kind.value, archived=False)
        return sorted(memories, key=lambda m: (m.day, m.created_at))
