"""The benchmark script runs (``scripts/bench.py --quick``): a smoke test, under the slow
marker. It asserts that every section reports its figures and nothing failed, never how
fast anything was: speed is what the bench reports, not what a test checks."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import LOCOMO, data_missing

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "bench.py"
DOCS = Path(__file__).resolve().parents[1] / "docs" / "benchmark.md"
START = "<!-- bench:summary:start (written by scripts/bench.py --docs; do not edit by hand) -->"
END = "<!-- bench:summary:end -->"


@pytest.mark.slow
def test_the_quick_bench_reports_every_section(tmp_path: Path) -> None:
    if not LOCOMO.is_file():
        pytest.skip(data_missing(LOCOMO, "LoCoMo data", "snap-research/locomo, data/locomo10.json"))
    docs = tmp_path / "benchmark.md"
    docs.write_text(f"# Benchmark\n\n{START}\nan older run\n{END}\n\nWhat follows stays.\n", encoding="utf-8")
    done = subprocess.run(
        [
            sys.executable,
            str(SCRIPT),
            "--quick",
            "--json",
            "--calls",
            "3",
            "--chat-turns",
            "2",
            "--locomo",
            str(LOCOMO),
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
    waits = report["waits"]
    assert set(waits["cold_p50_s"]) == {"ask", "list", "show", "stats"}
    assert waits["embedder_runtime"] == "onnx"  # the first start made the export the later ones use
    assert [row["turn"] for row in waits["chat"]["turns"]] == [1, 2]
    assert all(row["pieces"] >= 0 for row in waits["chat"]["turns"])
    assert set(waits["ctrl_c_s"]) == {"before_first_piece", "after_first_piece"}
    written = docs.read_text(encoding="utf-8")
    assert "an older run" not in written and written.endswith("What follows stays.\n")
    summary = written[written.index(START) : written.index(END)]
    assert "CPUs" in summary and "load average" in summary
    for figure in (
        "cold `memcli list`",
        "chat: time to first token, turns 2–2",
        "first recall after a restart, 1,000 memories",
    ):
        assert figure in summary


def test_the_benchmark_page_has_the_section_the_bench_writes() -> None:
    text = DOCS.read_text(encoding="utf-8")
    assert text.index(START) < text.index(END)
