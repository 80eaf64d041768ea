"""A backup keeps the graph memory: ``export`` -> ``purge-user`` -> ``import`` -> ``consolidate``
gives back the same graph (``graph export --format json``, its entities and relations
compared by name: the store numbers them anew) and the same relation memories, once each.
An export does not hold the graph's tables: a store whose user has relation memories but no
graph (``GraphBuilder.lost``) has its graph rebuilt by the next consolidation."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_checks import ok
from conftest import list_json
from typer.testing import CliRunner

from memcli.cli import app

NOTES = (
    "My sister Ana lives in Porto.",
    "Ana works at the Santo Antonio hospital.",
    "In 2024 Ana moved to Lisbon with her husband Rui.",
)


def graph(runner: CliRunner) -> dict[str, Any]:
    """``graph export --format json``: nodes and edges, the store's numbering replaced by names."""
    found = json.loads(ok(runner.invoke(app, ["graph", "export", "--format", "json"])).stdout)
    names = {node["id"]: node["name"] for node in found["nodes"]}
    nodes = sorted(json.dumps({k: v for k, v in n.items() if k != "id"}, sort_keys=True) for n in found["nodes"])
    edges = sorted(
        json.dumps(
            {
                **{k: v for k, v in e.items() if k not in ("key", "source", "target")},
                "source": names[e["source"]],
                "target": names[e["target"]],
            },
            sort_keys=True,
        )
        for e in found["edges"]
    )
    return {"nodes": nodes, "edges": edges}


@pytest.fixture
def extractive(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMCLI_CONSOLIDATION", "extractive")


def test_export_purge_import_consolidate_gives_the_same_graph(
    memcli_home: Path, runner: CliRunner, fake_model: Any, extractive: None, tmp_path: Path
) -> None:
    for note in NOTES:
        ok(runner.invoke(app, ["remember", note]))
    ok(runner.invoke(app, ["consolidate", "--quiet"]))
    before = graph(runner)
    assert len(before["nodes"]) >= 3 and before["edges"]
    relations = sorted(m["text"] for m in list_json(runner, "--kind", "relation"))
    assert relations

    backup = tmp_path / "backup.jsonl"
    ok(runner.invoke(app, ["export", "-o", str(backup), "--quiet"]))
    ok(runner.invoke(app, ["purge-user", "tester", "--yes", "--quiet"]))
    ok(runner.invoke(app, ["import", str(backup), "--quiet"]))
    rebuilt = runner.invoke(app, ["consolidate"])
    assert "nothing new to consolidate" not in ok(rebuilt).stdout

    assert graph(runner) == before
    assert sorted(m["text"] for m in list_json(runner, "--kind", "relation")) == relations


def test_importing_a_backup_into_the_store_that_has_the_graph_changes_nothing(
    memcli_home: Path, runner: CliRunner, fake_model: Any, extractive: None, tmp_path: Path
) -> None:
    for note in NOTES:
        ok(runner.invoke(app, ["remember", note]))
    ok(runner.invoke(app, ["consolidate", "--quiet"]))
    before = graph(runner)
    backup = tmp_path / "backup.jsonl"
    ok(runner.invoke(app, ["export", "-o", str(backup), "--quiet"]))
    ok(runner.invoke(app, ["import", str(backup), "--quiet"]))
    assert ok(runner.invoke(app, ["consolidate"])).stdout.startswith("nothing new to consolidate")
    assert graph(runner) == before
