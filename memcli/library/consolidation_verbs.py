"""The verbs of consolidation and of the graph memory: consolidate, portrait, summary and the
graph's show, list, export, merge and rename (``memcli.library.library.Memcli``)."""

from __future__ import annotations

from typing import Literal, Optional

from memcli import schema
from memcli.library.engine import Engine
from memcli.library.outputs import Emit, _entity_out, _relation_out, memory_out


class ConsolidationVerbs:
    """The consolidation and graph verbs of ``Memcli``."""

    engine: Engine
    emit: Emit

    def consolidate(
        self,
        user: Optional[str] = None,
        all_users: bool = False,
        since: Optional[str] = None,
        until: Optional[str] = None,
        dry_run: bool = False,
        retry: bool = False,
    ) -> schema.ConsolidateResult:
        """Daily and global event summaries and portraits (MemoryBank), the running memory
        (Wang et al.) and facts (Mem0 ADD/UPDATE/DELETE/NOOP) of each new day, session and
        window (``memcli.consolidation.consolidate``); warnings and progress are emitted."""
        r = self.engine.consolidate(
            user,
            all_users,
            since,
            until,
            dry_run,
            lambda message: self.emit("warning", message=message),
            self._progress,
            retry,
        )
        facts = schema.FactCounts(
            added=r.facts_added,
            updated=r.facts_updated,
            deleted=r.facts_deleted,
            unchanged=r.facts_noop,
            rejected=r.facts_rejected,
            deduplicated=r.facts_deduplicated,
        )
        return schema.ConsolidateResult(
            dry_run=r.dry_run,
            users=r.users,
            days=r.days,
            sessions=r.sessions,
            message_pairs=r.pairs,
            global_folds=r.folds,
            summaries_written=r.summaries,
            facts=facts,
            invalid_outputs=r.invalid,
            duration_seconds=round(r.seconds, 3),
            warnings=r.warnings,
            path=r.path,
            written_by=dict(r.written_by),
            failed=r.failed,
            failures=r.failures,
            graph=schema.GraphCounts(
                scanned=r.graph.scanned,
                mentions=r.graph.mentions,
                relations=r.graph.relations,
                closed=r.graph.closed,
                relation_memories=r.graph.written,
            ),
        )

    def portrait(self, user: Optional[str] = None) -> Optional[schema.Memory]:
        """The global portrait (MemoryBank's global user portrait); None before
        consolidation wrote one."""
        found = self.engine.portraits(user, False)
        return memory_out(found[-1]) if found else None

    def daily_portraits(self, user: Optional[str] = None) -> list[schema.Memory]:
        """Every daily portrait (MemoryBank's daily personality insights), oldest first."""
        return [memory_out(x) for x in self.engine.portraits(user, True)]

    def summary(
        self, user: Optional[str] = None, day: Optional[str] = None, running: bool = False
    ) -> Optional[schema.Memory]:
        """The global event summary, ``day``'s daily one, or with ``running`` the running
        memory; None when there is none yet."""
        found = self.engine.summaries(user, day, running)
        return memory_out(found[-1]) if found else None

    def graph_show(
        self, name: Optional[str] = None, user: Optional[str] = None, at: Optional[str] = None, depth: int = 1
    ) -> schema.GraphShow:
        """An entity of the graph memory (the user themself without a name): aliases,
        relations current and past with their days and sources, neighbours (``Engine.graph_show``)."""
        found = self.engine.graph_show(name, user, at, depth)
        return schema.GraphShow(
            user=found["user"],
            at=found["at"],
            entity=_entity_out(found["entity"], found["aliases"], found["mentions"]),
            relations=[_relation_out(r) for r in found["relations"]],
            neighbours=[
                schema.GraphNeighbour(name=e.name, type=e.type, depth=d, relation=label, count=count)
                for e, d, label, count in found["neighbours"]
            ],
        )

    def graph_list(self, user: Optional[str] = None, type: Optional[str] = None) -> list[schema.GraphEntity]:
        """The entities of the graph memory, most mentioned first (``Engine.graph_list``)."""
        return [_entity_out(e, aliases, mentions) for e, aliases, mentions in self.engine.graph_list(user, type)]

    def graph_export(
        self, user: Optional[str] = None, format: Literal["graphml", "gexf", "json", "dot"] = "graphml"
    ) -> schema.GraphExport:
        """The graph memory as GraphML, GEXF, node-link JSON or DOT (``Engine.graph_export``)."""
        return schema.GraphExport(**self.engine.graph_export(user, format))

    def graph_merge(self, name: str, into: str, user: Optional[str] = None) -> schema.GraphEntity:
        """Merge two entities that are one (``Engine.graph_merge``)."""
        return _entity_out(*self.engine.graph_merge(name, into, user))

    def graph_rename(self, name: str, new: str, user: Optional[str] = None) -> schema.GraphEntity:
        """Rename an entity; the old name stays an alias (``Engine.graph_rename``)."""
        return _entity_out(*self.engine.graph_rename(name, new, user))
