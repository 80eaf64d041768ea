"""``memcli eval locomo``: evidence recall of memcli's retrieval on LoCoMo.

Each conversation is imported into its own temporary store; each category 1–4 question
with valid evidence is run through the same recall path as chat and ask. Recall@k of a
question is the fraction of its evidence turns (``dia_id``) found in the top k; figures
are means over questions. Evidence ids are cleaned as the data README says: combined
entries split on ``;`` and spaces, malformed or absent ids dropped.
"""

from __future__ import annotations

import re
import statistics
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memcli.config import Settings, home_paths
from memcli.core import Memcli
from memcli.embedding import Embedder
from memcli.importers import load_json, parse_locomo, read_text
from memcli.errors import BadInputError, UsageError
from memcli.retrieval import Ranking, Signals

KS = (5, 10, 20)
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
_DIA_ID = re.compile(r"^D\d+:\d+$")


def clean_evidence(evidence: list[Any], known: set[str]) -> list[str]:
    """Evidence ids of one question: split combined entries, drop malformed and unknown ids."""
    out: list[str] = []
    for entry in evidence:
        for part in re.split(r"[;\s]+", str(entry)):
            if _DIA_ID.match(part) and part in known and part not in out:
                out.append(part)
    return out


@dataclass
class EvalReport:
    """Recall@k per category and overall; latency in milliseconds per recall."""

    questions: int = 0
    conversations: list[str] = field(default_factory=list)
    without: list[str] = field(default_factory=list)
    per_category: dict[str, dict[str, float]] = field(default_factory=dict)
    overall: dict[str, float] = field(default_factory=dict)
    latency_ms: dict[str, float] = field(default_factory=dict)
    seconds: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: ``schema.EvalResult``."""
        data = dict(self.__dict__)
        data["duration_seconds"] = round(data.pop("seconds"), 3)
        return data


Progress = Callable[[str, int, int], None]
"""(stage, done, total) progress callback."""


def _summarize(hits: list[dict[int, float]]) -> dict[str, float]:
    summary: dict[str, float] = {"n": len(hits)}
    for k in KS:
        summary[f"R@{k}"] = round(statistics.fmean(h[k] for h in hits), 4) if hits else 0.0
    return summary


def eval_locomo(
    path: Path,
    settings: Settings,
    embedder: Embedder,
    conversations: Sequence[str] = (),
    progress: Progress | None = None,
    ranking: bool = True,
    without: Sequence[str] = (),
) -> EvalReport:
    """Run LoCoMo's category 1–4 questions through recall; see the module docstring.

    ``conversations``: the sample_ids to run (all when empty). ``ranking``: re-score the
    best candidates with the weighted ranking of the settings (as chat, ask and recall
    do), else rank by relevance alone. ``without``: recall levers to turn off
    (``Signals.LEVERS``), for ablations. Recall here never reinforces.

    Raises BadInputError for a file that is not LoCoMo or an unknown conversation, and
    UsageError for an unknown lever.
    """
    try:
        signals = Signals().without(*without)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    started = time.perf_counter()
    text = read_text(path)
    data = load_json(path, text)
    if not isinstance(data, list):
        raise BadInputError(f"{path}: not a LoCoMo file")
    samples = [c for c in data if isinstance(c, dict) and (not conversations or c.get("sample_id") in conversations)]
    unknown = sorted(set(conversations) - {str(c.get("sample_id")) for c in samples})
    if unknown or not samples:
        raise BadInputError(f"{path}: no conversation {', '.join(unknown)}" if unknown else f"{path}: no conversations")
    by_category: dict[int, list[dict[int, float]]] = defaultdict(list)
    latencies: list[float] = []
    report = EvalReport(without=list(without))
    for sample in samples:
        sample_id = str(sample.get("sample_id"))
        memories = parse_locomo(path, text, sample_id)
        known = {m.source for m in memories}
        questions = [q for q in sample.get("qa", []) if q.get("category") in CATEGORIES]
        rank_by = Ranking.from_settings(settings, sample_id) if ranking else None
        with tempfile.TemporaryDirectory(prefix="memcli-eval-") as home:
            root = Path(home)
            memcli = Memcli(settings, home_paths(root), embedder=embedder, signals=signals)
            with memcli.store.transaction():
                memcli.add_memories(memories, progress=(lambda d, t: progress(f"{sample_id} import", d, t)) if progress else None)
                for i, qa in enumerate(questions, start=1):
                    evidence = clean_evidence(qa.get("evidence", []), known)
                    if evidence:
                        t0 = time.perf_counter()
                        recalled = memcli.recaller.recall(
                            str(qa["question"]), sample_id, k=max(KS), ranking=rank_by, now=time.time()
                        )
                        latencies.append((time.perf_counter() - t0) * 1000)
                        sources = [r.memory.source for r in recalled]
                        by_category[int(qa["category"])].append(
                            {k: len(set(evidence) & set(sources[:k])) / len(evidence) for k in KS}
                        )
                    if progress:
                        progress(f"{sample_id} questions", i, len(questions))
        report.conversations.append(sample_id)
    everything = [h for hits in by_category.values() for h in hits]
    report.questions = len(everything)
    report.per_category = {f"{c} {CATEGORIES[c]}": _summarize(by_category[c]) for c in sorted(by_category)}
    report.overall = _summarize(everything)
    if latencies:
        ordered = sorted(latencies)
        report.latency_ms = {
            "p50": round(statistics.median(ordered), 2),
            "p95": round(ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))], 2),
        }
    report.seconds = round(time.perf_counter() - started, 2)
    return report
