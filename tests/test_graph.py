"""The graph memory's storage (``memcli.store.graph``): entities resolved by normalised name and
alias, relations that a newer single-valued one closes without deleting it, "mentioned
with" edges, merge and rename, and the cascade when memories are deleted. Extractions are
written by hand here (the extractor has its own tests)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from memcli.store.graph import MENTIONED_WITH, Graph
from memcli.store.sidecar import Sidecar


@dataclass(frozen=True)
class Mention:
    name: str
    key: str
    type: str
    start: int = 0
    end: int = 0


@dataclass(frozen=True)
class Relation:
    subject: str
    relation: str
    object: str
    valid_from: str | None = None
    evidence: str = ""


@dataclass(frozen=True)
class Extraction:
    mentions: tuple[Mention, ...] = ()
    relations: tuple[Relation, ...] = ()
    aliases: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Kind:
    single_valued: bool


KINDS = {"lives in": Kind(True), "sister": Kind(False), "works at": Kind(True)}
USER = "ana"


def norm(name: str) -> str:
    return " ".join(name.casefold().split())


def m(name: str, type: str = "person") -> Mention:
    return Mention(name, norm(name), type)


@pytest.fixture
def graph(tmp_path: Path) -> Graph:
    return Sidecar(tmp_path / "memcli.db").graph


def ingest(graph: Graph, memory_id: str, day: str, extraction: Extraction, at: float = 1.0) -> object:
    return graph.ingest(USER, memory_id, day, at, extraction, norm, KINDS, roles={"ana": "user"}, now=100.0)


def test_a_move_closes_the_old_home_and_keeps_it(graph: Graph) -> None:
    ingest(
        graph, "t1", "2023-01-05", Extraction((m("Ana"), m("Porto", "place")), (Relation("Ana", "lives in", "Porto"),))
    )
    done = ingest(
        graph,
        "t2",
        "2023-06-01",
        Extraction((m("Ana"), m("Lisbon", "place")), (Relation("Ana", "lives in", "Lisbon"),)),
    )
    ana = graph.self_entity(USER)
    assert ana is not None and ana.name == "Ana"
    homes = {r.object_name: r for r in graph.relations(USER, ana.id) if r.relation == "lives in"}
    assert homes["Porto"].valid_from == "2023-01-05" and homes["Porto"].valid_to == "2023-06-01"
    assert homes["Porto"].invalidated_at == 100.0
    assert homes["Lisbon"].current and homes["Lisbon"].valid_from == "2023-06-01"
    assert [(c.old.object_name, c.new.object_name) for c in done.closed] == [("Porto", "Lisbon")]
    assert homes["Porto"].valid_at("2023-03-01") and not homes["Lisbon"].valid_at("2023-03-01")


def test_an_older_home_told_later_is_closed_at_once(graph: Graph) -> None:
    ingest(
        graph,
        "t2",
        "2023-06-01",
        Extraction((m("Ana"), m("Lisbon", "place")), (Relation("Ana", "lives in", "Lisbon"),)),
    )
    ingest(
        graph,
        "t1",
        "2023-07-01",
        Extraction((m("Ana"), m("Porto", "place")), (Relation("Ana", "lives in", "Porto", "2019-01-01"),)),
    )
    homes = {r.object_name: r for r in graph.relations(USER) if r.relation == "lives in"}
    assert homes["Lisbon"].current
    assert (homes["Porto"].valid_from, homes["Porto"].valid_to) == ("2019-01-01", "2023-06-01")


def test_a_relation_said_again_is_counted_not_repeated(graph: Graph) -> None:
    sister = Extraction((m("Ana"), m("Rita")), (Relation("Ana", "sister", "Rita"),))
    ingest(graph, "t1", "2023-01-05", sister)
    ingest(graph, "t2", "2023-02-05", sister, at=2.0)
    ingest(graph, "t2", "2023-02-05", sister, at=2.0)  # the same memory again: nothing new
    (relation,) = [r for r in graph.relations(USER) if r.relation == "sister"]
    assert relation.count == 2 and relation.sources == ("t1", "t2") and relation.last_seen == 2.0


def test_names_resolve_by_key_and_alias_and_an_alias_merges_its_entity(graph: Graph) -> None:
    ingest(graph, "t1", "2023-01-05", Extraction((m("Mel"),)))
    ingest(graph, "t2", "2023-01-06", Extraction((m("MELANIE"), m("Mel")), aliases=(("Mel", "MELANIE"),)))
    ingest(graph, "t3", "2023-01-07", Extraction((m("melanie"),)))
    (melanie,) = graph.entities(USER)
    assert melanie.name == "MELANIE" and graph.aliases(melanie.id) == ["Mel"]
    assert sorted(graph.mentioning([melanie.id])[melanie.id]) == ["t1", "t2", "t3"]
    assert graph.find(USER, ["mel", "melanie"]) == {"mel": melanie.id, "melanie": melanie.id}


def test_entities_mentioned_together_are_joined_with_a_count(graph: Graph) -> None:
    both = Extraction((m("Ana"), m("Rita"), m("Porto", "place")))
    ingest(graph, "t1", "2023-01-05", both)
    ingest(graph, "t2", "2023-01-06", both)
    edges = [r for r in graph.relations(USER) if r.relation == MENTIONED_WITH]
    assert len(edges) == 3 and {r.count for r in edges} == {2}
    rita = graph.find(USER, ["rita"])["rita"]
    assert set(graph.neighbours([rita])) == set(graph.find(USER, ["ana", "porto"]).values())


def test_deleting_every_source_takes_relations_mentions_and_entities(graph: Graph) -> None:
    ingest(
        graph, "t1", "2023-01-05", Extraction((m("Ana"), m("Porto", "place")), (Relation("Ana", "lives in", "Porto"),))
    )
    ingest(
        graph, "t2", "2023-01-06", Extraction((m("Ana"), m("Porto", "place")), (Relation("Ana", "lives in", "Porto"),))
    )
    ingest(graph, "t3", "2023-01-07", Extraction((m("Ana"),)))
    graph.forget_memories(["t1"])
    assert [r.sources for r in graph.relations(USER) if r.relation == "lives in"] == [("t2",)]
    deleted = graph.forget_memories(["t2"])
    assert deleted and graph.relations(USER) == []
    assert [e.name for e in graph.entities(USER)] == ["Ana"]
    graph.forget_memories(["t3"])
    assert graph.entities(USER) == []


def test_merge_and_rename(graph: Graph) -> None:
    ingest(graph, "t1", "2023-01-05", Extraction((m("Ana"), m("Jo")), (Relation("Ana", "sister", "Jo"),)))
    ingest(graph, "t2", "2023-01-06", Extraction((m("Ana"), m("Joana")), (Relation("Ana", "sister", "Joana"),)))
    ids = graph.find(USER, ["jo", "joana"])
    graph.merge(ids["jo"], ids["joana"])
    assert graph.find(USER, ["jo"]) == {"jo": ids["joana"]}
    assert {r.object for r in graph.relations(USER) if r.relation == "sister"} == {ids["joana"]}
    graph.rename(ids["joana"], "Joana Silva", "joana silva")
    joana = graph.entity(ids["joana"])
    assert joana is not None and joana.name == "Joana Silva"
    assert set(graph.aliases(joana.id)) == {"Jo", "Joana"}
    ana = graph.find(USER, ["ana"])["ana"]
    with pytest.raises(ValueError):
        graph.rename(ana, "Joana", "joana")


def test_networkx_view_as_of_a_day(graph: Graph) -> None:
    ingest(
        graph, "t1", "2023-01-05", Extraction((m("Ana"), m("Porto", "place")), (Relation("Ana", "lives in", "Porto"),))
    )
    ingest(
        graph,
        "t2",
        "2023-06-01",
        Extraction((m("Ana"), m("Lisbon", "place")), (Relation("Ana", "lives in", "Lisbon"),)),
    )
    then = graph.to_networkx(USER, at="2023-03-01")
    labels = {
        (then.nodes[u]["name"], then.nodes[v]["name"]) for u, v, d in then.edges(data=True) if d["label"] == "lives in"
    }
    assert labels == {("Ana", "Porto")}
    assert graph.to_networkx(USER).number_of_nodes() == 3


def test_forget_user_leaves_others(tmp_path: Path) -> None:
    sidecar = Sidecar(tmp_path / "memcli.db")
    sidecar.graph.ingest("ana", "t1", "2023-01-05", 1.0, Extraction((m("Porto", "place"),)), norm, KINDS)
    sidecar.graph.ingest("bo", "t2", "2023-01-05", 1.0, Extraction((m("Porto", "place"),)), norm, KINDS)
    sidecar.forget_user("ana")
    assert sidecar.graph.entities("ana") == [] and len(sidecar.graph.entities("bo")) == 1


def test_entity_names_complete_case_insensitively(tmp_path: Path) -> None:
    from memcli.store.candidates import candidates

    sidecar = Sidecar(tmp_path / "memcli.db")
    sidecar.graph.ingest(
        USER, "t1", "2023-01-05", 1.0, Extraction((m("Porto", "place"), m("Portia"), m("Lisbon", "place"))), norm, KINDS
    )
    sidecar.graph.ingest("bo", "t2", "2023-01-05", 1.0, Extraction((m("Portland", "place"),)), norm, KINDS)
    assert candidates(sidecar._db, "entity", "po", USER) == [("Portia", "person"), ("Porto", "place")]
    assert len(candidates(sidecar._db, "entity", "PORT")) == 3
