"""The benchmark script runs (``scripts/bench.py --quick``): a smoke test, under the slow
marker. It asserts that every section reports its figures and nothing failed, never how
fast anything was: speed is what the bench reports, not what a test checks."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import LOCOMO, data_missing
from fakes.models import FakeEmbedder
from test_index import session

from memcli.config import home_paths
from memcli.models.embedding import embedder_identity
from memcli.recall.retrieval import Recaller
from memcli.store import snapshot

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "bench.py"
DOCS = Path(__file__).resolve().parents[1] / "docs" / "benchmark.md"
START = "<!-- bench:summary:start (written by scripts/bench.py --docs; do not edit by hand) -->"
END = "<!-- bench:summary:end -->"


@pytest.mark.slow
def test_the_quick_bench_reports_every_section(tmp_path: Path) -> None:
    if not LOCOMO.is_file():
        pytest.skip(data_missing(LOCOMO, "LoCoMo data", "snap-research/locomo, data/locomo10.json"))
    # conv-26 alone, cut to its first two sessions (35 turns, two days): every part runs its
    # code on it once (the stores of 1,000 memories are copies of them; its questions are all
    # kept), and the import section encodes its turns four times with the real embedder (its
    # two imports and their raw encodings): a third session (23 turns) made the run ~20 s longer
    locomo = tmp_path / "locomo.json"
    conversation = next(c for c in json.loads(LOCOMO.read_text(encoding="utf-8")) if c["sample_id"] == "conv-26")
    conversation["conversation"] = {
        key: value
        for key, value in conversation["conversation"].items()
        if not key.startswith("session_") or int(key.split("_")[1]) <= 2
    }
    locomo.write_text(json.dumps([conversation]), encoding="utf-8")
    docs = tmp_path / "benchmark.md"
    docs.write_text(f"# Benchmark\n\n{START}\nan older run\n{END}\n\nWhat follows stays.\n", encoding="utf-8")
    done = subprocess.run(
        [
            sys.executable,
            str(SCRIPT),
            "--quick",  # every part once, one size (1,000), two chat turns: a smoke run
            "--json",
            "--locomo",
            str(locomo),
            "--docs",
            str(docs),
        ],
        capture_output=True,
        text=True,
        timeout=3600,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(done.stdout)
    assert report["failures"] == []
    assert {"client", "import", "shell", "recall", "waits"} <= set(report)
    assert [row["size"] for row in report["recall"]][:1] == [1000]
    # its few queries hold a "when" question: the first after a restart is a figure of its own
    assert report["recall"][0]["worker"]["first_when_restart_s"] >= 0
    assert report["import"]["with_export"]["runtime"] == "onnx"  # the second import's part ran, not skipped
    waits = report["waits"]
    assert set(waits["cold_p50_s"]) == {"ask", "list", "show", "stats"}
    assert waits["embedder_runtime"] == "onnx"  # the first start made the export the later ones use
    assert [row["turn"] for row in waits["chat"]["turns"]] == [1, 2]
    assert all(row["pieces"] >= 0 for row in waits["chat"]["turns"])
    assert set(waits["ctrl_c_s"]) == {"before_first_piece", "after_first_piece"}
    # the first chat's opening, kept on disk, read by a second chat after a service restart
    assert waits["chat"]["opening_on_disk"]["states_on_disk"] >= 1
    written = docs.read_text(encoding="utf-8")
    assert "an older run" not in written and written.endswith("What follows stays.\n")
    summary = written[written.index(START) : written.index(END)]
    assert "CPUs" in summary and "load average" in summary
    for figure in (
        "cold `memcli list`",
        "chat: time to first token, turns 2–2",
        "chat: time to first token, turn 1 of a chat after a service restart",
        "first recall after a restart, 1,000 memories",
    ):
        assert figure in summary


def test_the_benchmark_page_has_the_section_the_bench_writes() -> None:
    text = DOCS.read_text(encoding="utf-8")
    assert text.index(START) < text.index(END)


def bench_module() -> Any:
    """scripts/bench.py imported as a module."""
    spec = importlib.util.spec_from_file_location("memcli_bench", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_store_built_for_recall_alone_recalls_without_chroma(tmp_path: Path, fake_embedder: FakeEmbedder) -> None:
    bench = bench_module()
    sessions = [session(f"s{i}") for i in range(3)]
    vectors = {m.id: v for s in sessions for m, v in zip(s, fake_embedder.embed([m.index_text() for m in s]))}
    build = bench.build_recall_only(tmp_path, sessions, vectors, 40, 0.35)
    assert build["written"] == 40 and build["recall_only"]
    paths = home_paths(tmp_path)
    for restart in (False, True):  # the first loads the index whole and takes a snapshot; the second reads it
        store = bench.recall_only_store(paths, 5.0, embedder_identity(fake_embedder))
        store.open_resident()
        try:
            hits = Recaller(store, fake_embedder).recall("a puppy named Rex", bench.USER, k=5)
            assert len(hits) == 5 and "Rex" in hits[0].memory.text
            with store.transaction():
                assert store.sidecar.index.count_of(bench.USER) == 40, "not rebuilt from a Chroma that has none"
            with pytest.raises(RuntimeError, match="recall alone"):
                store.count(bench.USER)  # what would read Chroma
        finally:
            store.close()
        assert (snapshot.describe(paths.data_dir, bench.USER) is not None) or not restart


@pytest.mark.integration
def test_the_worker_encodes_queries_with_the_services_embedder(tmp_path: Path) -> None:
    """A fresh home: the torch model makes the export, and the bench then runs the export, as a service does."""
    from memcli.config import load_settings

    bench = bench_module()
    paths = home_paths(tmp_path)
    embedder = bench.service_embedder(load_settings(paths, env={}), paths)
    assert embedder.runtime == "onnx"
    assert list(paths.embedder_exports_dir.glob("*.onnx"))
    assert len(embedder.embed_one("When did Caroline go to the LGBTQ support group?")) == 384
