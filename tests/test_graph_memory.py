"""The graph step of consolidation (``memcli.graph_memory``) with the offline extractor: a
user who lives in Porto and then moves to Lisbon, read into the graph incrementally, with
the move an INVALIDATE event and the relations recallable as memories of kind relation."""

from __future__ import annotations

from typing import Any

import pytest
from test_consolidate import USER, day_turns, make_memcli, stored

from memcli.engine import Engine
from memcli.memory import Kind

PORTO_DAY, LISBON_DAY = "2023-01-10", "2023-05-08"
PORTO = [("Ana", "I live in Porto with my cat Miso."), ("assistant", "Porto is lovely. How is Miso?")]
LISBON = [("Ana", "Big news: I moved to Lisbon last week!"), ("assistant", "Congratulations on Lisbon!")]


@pytest.fixture
def moved(fake_model: Any) -> Engine:
    memcli = make_memcli(consolidation="extractive")
    memcli.add_memories(day_turns(PORTO, PORTO_DAY, "s1") + day_turns(LISBON, LISBON_DAY, "s2"))
    return memcli


def homes(memcli: Engine) -> dict[str, Any]:
    with memcli.store.transaction():
        graph = memcli.store.sidecar.graph
        return {r.object_name: r for r in graph.relations(USER) if r.relation == "lives_in"}


def test_the_move_closes_porto_and_keeps_it(moved: Engine) -> None:
    report = moved.consolidate(USER)
    assert report.graph.scanned >= 4 and report.graph.closed == 1
    found = homes(moved)
    assert found["Porto"].valid_from == PORTO_DAY and found["Porto"].valid_to == found["Lisbon"].valid_from
    assert found["Lisbon"].current
    with moved.store.transaction():
        me = moved.store.sidecar.graph.self_entity(USER)
    assert me is not None and me.name == "Ana"
    events = [e for e in moved.history(user=USER, limit=0) if e.event == "INVALIDATE"]
    assert len(events) == 1 and "Porto" in events[0].new_text and f"to {found['Lisbon'].valid_from}" in events[0].new_text


def test_relations_are_memories_and_a_closed_one_has_ended(moved: Engine) -> None:
    moved.consolidate(USER)
    relations = {m.text: m for m in stored(moved, Kind.RELATION)}
    lisbon = next(m for text, m in relations.items() if "Lisbon" in text)
    porto = next(m for text, m in relations.items() if "Porto" in text and "lives in" in text)
    assert lisbon.text.startswith("Ana — lives in — Lisbon, since ") and lisbon.valid_to == 0
    assert porto.valid_to > 0 and porto.text.startswith(f"Ana — lives in — Porto, from {PORTO_DAY} to ")


def test_a_second_consolidation_reads_nothing_again(moved: Engine) -> None:
    first = moved.consolidate(USER)
    assert first.graph.scanned > 0
    again = moved.consolidate(USER)
    assert again.nothing_to_do and again.graph.scanned == 0 and again.graph.written == 0


def test_where_do_i_live_ranks_lisbon_first_and_porto_as_of_before_the_move(moved: Engine) -> None:
    moved.consolidate(USER)
    now = moved.recall("where do I live", USER, k=3, reinforce=False)
    assert "Lisbon" in now[0].memory.text and now[0].signals["graph"] > 0
    then = moved.recall("where do I live", USER, k=3, reinforce=False, at="2023-03-01")
    assert "Porto" in then[0].memory.text
    assert not any("Lisbon" in hit.memory.text for hit in then)


def test_without_the_graph_lever_the_signal_is_off(moved: Engine) -> None:
    from memcli.retrieval import Signals

    assert "graph" in Signals.LEVERS and Signals().without("graph").graph == 0.0
