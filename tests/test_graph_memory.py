"""The graph step of consolidation (``memcli.consolidation.graph_memory``) with the offline extractor: a
user who lives in Porto and then moves to Lisbon, read into the graph incrementally, with
the move an INVALIDATE event and the relations recallable as memories of kind relation."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import networkx
import pytest
from cli_checks import assert_error, ok
from test_consolidate import USER, day_turns, make_memcli, stored
from typer.testing import CliRunner

from memcli.cli import app
from memcli.consolidation.graph_memory import GRAPH_READ, GraphBuilder
from memcli.errors import ExitCode
from memcli.library.engine import Engine
from memcli.memory import Kind, Memory
from memcli.text.entities import KnownNames

PORTO_DAY, LISBON_DAY = "2023-01-10", "2023-05-08"
PORTO = [("Ana", "I live in Porto with my cat Miso."), ("assistant", "Porto is lovely. How is Miso?")]
LISBON = [("Ana", "Big news: I moved to Lisbon last week!"), ("assistant", "Congratulations on Lisbon!")]


@pytest.fixture
def moved(fake_model: Any) -> Engine:
    engine = make_memcli(consolidation="extractive")
    engine.add_memories(day_turns(PORTO, PORTO_DAY, "s1") + day_turns(LISBON, LISBON_DAY, "s2"))
    return engine


def homes(engine: Engine) -> dict[str, Any]:
    with engine.store.transaction():
        graph = engine.store.sidecar.graph
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
    assert (
        len(events) == 1 and "Porto" in events[0].new_text and f"to {found['Lisbon'].valid_from}" in events[0].new_text
    )


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


def test_a_deleted_relation_memory_takes_its_relation_and_stays_gone(moved: Engine) -> None:
    """Deleting a relation's memory says the relation is wrong or not to be kept: the
    relation leaves the graph, and the next consolidation does not write it again."""
    moved.consolidate(USER)
    lisbon = next(m for m in stored(moved, Kind.RELATION) if "Lisbon" in m.text)
    moved.delete(lisbon.id)
    assert "Lisbon" not in homes(moved) and "Porto" in homes(moved)
    moved.add_memories(day_turns([("Ana", "The weather was grey all day.")], "2023-06-01", "s3"))
    moved.consolidate(USER)
    assert not any("Lisbon" in m.text for m in stored(moved, Kind.RELATION))
    assert "Lisbon" not in homes(moved)


def test_where_do_i_live_ranks_lisbon_first_and_porto_as_of_before_the_move(moved: Engine) -> None:
    moved.consolidate(USER)
    now = moved.recall("where do I live", USER, k=3, reinforce=False)
    assert "Lisbon" in now[0].memory.text and now[0].signals["graph"] > 0
    then = moved.recall("where do I live", USER, k=3, reinforce=False, at="2023-03-01")
    assert "Porto" in then[0].memory.text
    assert not any("Lisbon" in hit.memory.text for hit in then)


def test_a_word_the_user_writes_in_lower_case_is_no_name_in_a_later_consolidation(fake_model: Any) -> None:
    """How the user writes a word is read from all of their texts, not only from what one
    consolidation scans: "frisbee", written in lower case on earlier days, is no entity
    when a later day writes it "Frisbee"; "Max" still is."""
    engine = make_memcli(consolidation="extractive")
    engine.add_memories(
        day_turns(
            [("Ana", "frisbee is great exercise."), ("Ana", "I bought a new frisbee for the dog.")], PORTO_DAY, "s1"
        )
    )
    engine.consolidate(USER)
    engine.add_memories(day_turns([("Ana", "Yesterday Max and I played Frisbee in the park.")], LISBON_DAY, "s2"))
    engine.consolidate(USER)
    with engine.store.transaction():
        names = {e.name for e in engine.store.sidecar.graph.entities(USER)}
    assert "Max" in names and "Frisbee" not in names


def test_without_the_graph_lever_the_signal_is_off(moved: Engine) -> None:
    from memcli.recall.retrieval import Signals

    assert "graph" in Signals.LEVERS and Signals().without("graph").graph == 0.0


def life_log(path: Path) -> Path:
    """A JSON-lines chat log of Ana living in Porto, then moving to Lisbon."""
    lines = [
        {"role": "Ana", "content": text, "timestamp": f"{day}T10:0{i}:00", "session": session}
        for day, session, turns in ((PORTO_DAY, "s1", PORTO), (LISBON_DAY, "s2", LISBON))
        for i, (_, text) in enumerate(turns)
    ]
    for line, (speaker, _) in zip(lines, PORTO + LISBON):
        line["role"] = speaker
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture
def cli_moved(runner: CliRunner, fake_embedder: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> CliRunner:
    monkeypatch.setenv("MEMCLI_CONSOLIDATION", "extractive")
    monkeypatch.setenv("MEMCLI_USER", USER)
    ok(runner.invoke(app, ["import", str(life_log(tmp_path / "life.jsonl")), "-q"]))
    ok(runner.invoke(app, ["consolidate", "-q"]))
    return runner


def test_graph_show_has_porto_ended_and_lisbon_current(cli_moved: CliRunner) -> None:
    shown = json.loads(ok(cli_moved.invoke(app, ["graph", "show", "--json"])).stdout)
    assert shown["entity"]["name"] == "Ana" and shown["entity"]["role"] == "user"
    homes = {r["object"]: r for r in shown["relations"] if r["relation"] == "lives_in"}
    assert homes["Porto"]["valid_to"] == homes["Lisbon"]["valid_from"] and not homes["Porto"]["current"]
    assert homes["Lisbon"]["current"] and homes["Lisbon"]["sources"] and homes["Lisbon"]["phrase"] == "lives in"
    then = json.loads(ok(cli_moved.invoke(app, ["graph", "show", "Ana", "--at", "2023-03-01", "--json"])).stdout)
    assert [r["object"] for r in then["relations"] if r["relation"] == "lives_in"] == ["Porto"]
    text = ok(cli_moved.invoke(app, ["graph", "show", "Ana"])).stdout
    assert "Ana — lives in — Porto, 2023-01-10 to " in text and "(ended)" in text
    assert_error(cli_moved.invoke(app, ["graph", "show", "Lisbn"]), ExitCode.NOT_FOUND)


def test_recall_where_do_i_live_through_the_cli(cli_moved: CliRunner) -> None:
    now = json.loads(
        ok(cli_moved.invoke(app, ["recall", "where do I live", "-k", "3", "--json", "--no-reinforce"])).stdout
    )
    assert "Lisbon" in now[0]["text"]
    then = json.loads(
        ok(
            cli_moved.invoke(app, ["recall", "where do I live", "--at", "2023-03-01", "--json", "--no-reinforce"])
        ).stdout
    )
    assert "Porto" in then[0]["text"] and not any("Lisbon" in hit["text"] for hit in then)
    explained = ok(
        cli_moved.invoke(app, ["recall", "where do I live", "-k", "1", "--explain", "--no-reinforce"])
    ).stdout
    assert "graph" in explained


def test_graph_list_export_merge_and_rename(cli_moved: CliRunner, tmp_path: Path) -> None:
    places = json.loads(ok(cli_moved.invoke(app, ["graph", "list", "--type", "place", "--json"])).stdout)
    assert {e["name"] for e in places} >= {"Porto", "Lisbon"}
    readers = {
        "graphml": networkx.read_graphml,
        "gexf": networkx.read_gexf,
        "json": lambda path: networkx.node_link_graph(json.loads(path.read_text(encoding="utf-8")), edges="edges"),
    }
    for fmt, read in readers.items():
        out = tmp_path / f"graph.{fmt}"
        ok(cli_moved.invoke(app, ["graph", "export", "--format", fmt, "-o", str(out)]))
        back = read(out)
        assert {data["name"] for _, data in back.nodes(data=True)} >= {"Ana", "Porto", "Lisbon"}
        assert {data["label"] for _, _, data in back.edges(data=True)} >= {"lives_in", "mentioned with"}
    dot = tmp_path / "graph.dot"
    ok(cli_moved.invoke(app, ["graph", "export", "--format", "dot", "-o", str(dot)]))
    back = networkx.nx_pydot.read_dot(dot)
    assert {data.get("label", "").strip('"') for _, data in back.nodes(data=True)} >= {"Ana", "Porto", "Lisbon"}
    assert_error(cli_moved.invoke(app, ["graph", "export", "--format", "png"]), ExitCode.USAGE)
    merged = json.loads(ok(cli_moved.invoke(app, ["graph", "merge", "Miso", "Ana", "--json"])).stdout)
    assert merged["name"] == "Ana" and "Miso" in merged["aliases"]
    renamed = json.loads(ok(cli_moved.invoke(app, ["graph", "rename", "Lisbon", "Lisboa", "--json"])).stdout)
    assert renamed["name"] == "Lisboa" and renamed["aliases"] == ["Lisbon"]
    relations = [
        m["text"] for m in json.loads(ok(cli_moved.invoke(app, ["list", "--kind", "relation", "--json"])).stdout)
    ]
    assert any(text.startswith("Ana — lives in — Lisboa") for text in relations)
    assert_error(cli_moved.invoke(app, ["graph", "rename", "Porto", "Lisboa"]), ExitCode.USAGE)


def test_the_model_path_keeps_only_names_the_text_holds(fake_model: Any) -> None:
    from memcli.consolidation.consolidate import Consolidator

    reply = {
        "entities": [{"name": "Porto", "type": "place"}, {"name": "Atlantis", "type": "place"}],
        "relations": [
            {"subject": "Ana", "relation": "lives_in", "object": "Porto", "valid_from": None},
            {"subject": "Ana", "relation": "lives_in", "object": "Atlantis", "valid_from": None},
        ],
        "aliases": [],
    }
    fake_model.responder = lambda task, content: json.dumps(reply) if task == "entities" else pytest.fail(task)
    engine = make_memcli(consolidation="llm", graph_extraction="llm")
    engine.add_memories(day_turns(PORTO[:1], PORTO_DAY, "s1"))
    Consolidator(engine).build_graph(USER)
    with engine.store.transaction():
        graph = engine.store.sidecar.graph
        assert {e.name for e in graph.entities(USER)} == {"Ana", "Porto"}
        assert [(r.subject_name, r.object_name) for r in graph.relations(USER) if r.relation == "lives_in"] == [
            ("Ana", "Porto")
        ]
    assert [call[0] for call in fake_model.structured_calls] == ["entities"]


@pytest.mark.parametrize(
    "name, why",
    [("Lis\x01boa", "control character U+0001"), ("L" * 100_000, "a name has at most"), ("Lis\ud800", "surrogate")],
)
def test_graph_rename_refuses_a_name_that_is_not_one_line_of_text(cli_moved: CliRunner, name: str, why: str) -> None:
    line = assert_error(cli_moved.invoke(app, ["graph", "rename", "Lisbon", name]), ExitCode.BAD_INPUT)
    assert why in line


def test_every_graph_export_escapes_a_name_that_holds_control_characters(moved: Engine, tmp_path: Path) -> None:
    moved.consolidate(USER)
    with moved.store.transaction():
        graph = moved.store.sidecar.graph
        entity = next(e for e in graph.entities(USER) if e.name == "Lisbon")
        graph.rename(entity.id, "Lis\x01bo\x0ba", "lisboa")  # as an older memcli, or a text, could have named it
    for fmt, read in (("graphml", networkx.parse_graphml), ("gexf", _parse_gexf)):
        text = moved.graph_export(USER, fmt)["text"]
        read(text)  # parses: no character XML cannot hold
    dot = moved.graph_export(USER, "dot")["text"]
    assert "\x01" not in dot and "\x0b" not in dot


def _parse_gexf(text: str) -> Any:
    return networkx.read_gexf(io.BytesIO(text.encode("utf-8")))


def test_a_memory_longer_than_a_chunk_is_read_chunk_by_chunk_and_only_so_far() -> None:
    warned: list[str] = []
    builder = GraphBuilder(None, None, lambda: 0.0, lambda m: 1.0, warn=warned.append)  # type: ignore[arg-type]
    text = "My sister Carla moved to Lisbon last year and loves it there. " * 1000
    memory = Memory("m1", USER, Kind.NOTE.value, text, 0.0, "2023-05-08")
    found = builder.extractions(memory, USER, None, KnownNames.of([]))
    assert 2 <= len(found) <= GRAPH_READ // 1000 + 1
    assert warned and "only its first 20,000" in warned[0]


def test_a_name_gets_the_type_its_cued_mentions_give_across_notes(fake_model: Any) -> None:
    """Issue 33 item 6: "Manchester" first written without a cue (the default, person) and
    then "in Manchester" is one place, not a person because the first note came first."""
    engine = make_memcli(consolidation="extractive")
    texts = ("Mum says Manchester was grey and wet all week.", "Signed up at a gym in Manchester today.")
    engine.add_memories(
        [
            Memory(
                id=f"note{i}", user=USER, kind=Kind.NOTE.value, text=text, created_at=1_683_500_000 + i, day=PORTO_DAY
            )
            for i, text in enumerate(texts)
        ]
    )
    engine.consolidate(USER)
    with engine.store.transaction():
        types = {e.name: e.type for e in engine.store.sidecar.graph.entities(USER)}
    assert types.get("Manchester") == "place"
