"""``memcli eval``: evidence recall of memcli's retrieval on LoCoMo and on MemoryBank probes,
and what consolidation keeps of LoCoMo.

``eval locomo``: each conversation is imported into its own temporary store (or, with a store
that holds it already, ``imported``, read from a copy of that store); each category 1–4 question
with valid evidence is run through the same recall path as chat and ask, after the graph
step of consolidation has read the conversation (the default install's offline extractor:
``Consolidator.build_graph``), as ``eval memorybank`` does for each user. Recall@k of a
question is the fraction of its evidence turns (``dia_id``) found in the top k; figures
are means over questions. Evidence ids are cleaned as the data README says: combined
entries split on ``;`` and spaces, malformed or absent ids dropped.

``eval memorybank``: a MemoryBank history file (English or Chinese) is imported into a
temporary store, and each probe question of a JSON-lines file is recalled for its user;
hit@k of a question is 1 when one of its evidence turns is in the top k (see
``eval_memorybank`` for the probe format).

``eval consolidation``: each LoCoMo conversation is imported into a temporary store and
consolidated; its daily event summaries are scored by ROUGE-L against the dataset's own
session summaries of the same day, and its facts and summary lines by how many of the
dataset's observations they cover (``eval_consolidation``).

``eval qa``: each LoCoMo conversation is imported the same way, its questions are answered
as ``memcli ask`` answers (or from the whole conversation, or from nothing: the baselines),
and the answers are scored with LoCoMo's own metric (``memcli.library.qa_scoring``), per category,
beside the answer latency and the evidence recall (``eval_qa``).
"""

from __future__ import annotations

import contextlib
import json
import math
import re
import shutil
import statistics
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from memcli.config import Paths, Settings, home_paths
from memcli.consolidation.consolidate import Consolidator
from memcli.errors import BadInputError, UsageError
from memcli.formats.importers import (
    load_json,
    parse_locomo,
    parse_memorybank,
    parse_time,
    read_text,
)
from memcli.library import qa_scoring
from memcli.library.engine import Engine, make_chat_model
from memcli.library.qa_scoring import LOCOMO_ABSTENTIONS
from memcli.memory import Kind, Memory
from memcli.models.embedding import Embedder
from memcli.models.llm import Message, complete, is_base_model
from memcli.models.prompts import format_memory
from memcli.recall.answers import NOT_FOUND
from memcli.recall.assistant import Answer, Assistant, Context
from memcli.recall.retrieval import Ranking, Recalled, Signals
from memcli.store.store import MemoryStore

KS = (5, 10, 20)
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
_DIA_ID = re.compile(r"^D\d+:\d+$")


@contextlib.contextmanager
def discarding(store: MemoryStore) -> Iterator[MemoryStore]:
    """``store`` for the block, then its collections deleted from the Chroma server (an
    evaluation's temporary store with ``store_url`` set: its folder goes with the temporary
    directory, its collections would stay on the server)."""
    try:
        yield store
    finally:
        store.discard()


def clean_evidence(evidence: list[Any], known: set[str]) -> list[str]:
    """Evidence ids of one question: split combined entries, drop malformed and unknown ids."""
    out: list[str] = []
    for entry in evidence:
        for part in re.split(r"[;\s]+", str(entry)):
            if _DIA_ID.match(part) and part in known and part not in out:
                out.append(part)
    return out


class _Report:
    """What the eval reports share: their JSON form."""

    seconds: float

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready (``schema.EvalResult``, ``schema.ProbeEvalResult``): the fields, with
        ``seconds`` as ``duration_seconds``."""
        data = dict(self.__dict__)
        data["duration_seconds"] = round(data.pop("seconds"), 3)
        return data


@dataclass
class EvalReport(_Report):
    """Recall@k per category and overall; latency in milliseconds per recall."""

    questions: int = 0
    conversations: list[str] = field(default_factory=list)
    without: list[str] = field(default_factory=list)
    per_category: dict[str, dict[str, float]] = field(default_factory=dict)
    overall: dict[str, float] = field(default_factory=dict)
    latency_ms: dict[str, float] = field(default_factory=dict)
    seconds: float = 0.0


Progress = Callable[[str, int, int], None]
"""(stage, done, total) progress callback."""


def _means(rows: list[dict[int, float]], ks: Sequence[int], label: str) -> dict[str, float]:
    """{n, label@k...}: the number of questions and the mean of each k's figure over them."""
    summary: dict[str, float] = {"n": len(rows)}
    for k in ks:
        summary[f"{label}{k}"] = round(statistics.fmean(r[k] for r in rows), 4) if rows else 0.0
    return summary


def _percentiles(latencies: list[float]) -> dict[str, float]:
    """{p50, p95} of ``latencies`` (in their unit), rounded to 2 decimals; empty when none was measured."""
    if not latencies:
        return {}
    ordered = sorted(latencies)
    return {
        "p50": round(statistics.median(ordered), 2),
        "p95": round(ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))], 2),
    }


def _signals(without: Sequence[str]) -> Signals:
    """The recall weights with the ``without`` levers off. Raises UsageError for an unknown lever."""
    try:
        return Signals().without(*without)
    except ValueError as exc:
        raise UsageError(str(exc)) from None


def _locomo_samples(path: Path, conversations: Sequence[str]) -> tuple[str, list[dict[str, Any]]]:
    """The text of a LoCoMo file and its conversations (those named, or all).

    Raises BadInputError for a file that is not LoCoMo or an unknown conversation."""
    text = read_text(path)
    data = load_json(path, text)
    if not isinstance(data, list):
        raise BadInputError(f"{path}: not a LoCoMo file")
    samples = [c for c in data if isinstance(c, dict) and (not conversations or c.get("sample_id") in conversations)]
    unknown = sorted(set(conversations) - {str(c.get("sample_id")) for c in samples})
    if unknown or not samples:
        raise BadInputError(f"{path}: no conversation {', '.join(unknown)}" if unknown else f"{path}: no conversations")
    return text, samples


def evidence_recall(
    engine: Engine, question: str, user: str, evidence: Sequence[str], ranking: Ranking | None, now: float
) -> dict[int, float]:
    """Recall@k for each k of ``KS`` of one LoCoMo question: the share of its ``evidence``
    turns (``dia_id``s, as ``clean_evidence`` gives them) among the first k memories
    ``engine`` recalls for ``question`` of ``user`` at ``now`` (unix seconds), ranked by
    ``ranking`` (None: by relevance alone). Recall here never reinforces."""
    sources = [r.memory.source for r in engine.recaller.recall(question, user, k=max(KS), ranking=ranking, now=now)]
    return {k: len(set(evidence) & set(sources[:k])) / len(evidence) for k in KS}


def eval_locomo(
    path: Path,
    settings: Settings,
    embedder: Embedder,
    conversations: Sequence[str] = (),
    progress: Progress | None = None,
    ranking: bool = True,
    without: Sequence[str] = (),
    imported: Paths | None = None,
    hold: Callable[[], contextlib.AbstractContextManager[Any]] = contextlib.nullcontext,
) -> EvalReport:
    """Run LoCoMo's category 1–4 questions through recall; see the module docstring.

    ``conversations``: the sample_ids to run (all when empty). ``ranking``: re-score the
    best candidates with the weighted ranking of the settings (as chat, ask and recall
    do), else rank by relevance alone. ``without``: recall levers to turn off
    (``Signals.LEVERS``), for ablations. Recall here never reinforces.

    ``imported``: the paths of a store in a folder that holds the conversations already
    (``memcli import FILE``: each under its sample_id as the user). Its data folder is
    copied into the temporary folder and the copy evaluated (the graph step writes to it),
    instead of importing each conversation there again: the store itself is not changed.
    Its memories are what is recalled, as that import made them (the import's retention
    clock, any consolidation or edits since). ``hold()`` holds that store still while it
    is copied (its ``transaction``: no write in between).

    Raises BadInputError for a file that is not LoCoMo, an unknown conversation, or one
    the ``imported`` store has no memories of, and UsageError for an unknown lever or an
    ``imported`` store on a Chroma server (``store_url``: no folder to copy).
    """
    if imported is not None and settings.store_url:
        raise UsageError(
            "--imported evaluates a copy of a store in a folder; this store is on a Chroma server (store_url)"
        )
    signals = _signals(without)
    started = time.perf_counter()
    text, samples = _locomo_samples(path, conversations)
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
            if imported is not None:
                with hold():
                    shutil.copytree(imported.data_dir, home_paths(root).data_dir)
            engine = Engine(settings, home_paths(root), embedder=embedder, signals=signals)
            with discarding(engine.store), engine.store.transaction():
                if imported is None:
                    engine.add_memories(
                        memories, progress=(lambda d, t: progress(f"{sample_id} import", d, t)) if progress else None
                    )
                elif not engine.store.count(sample_id):
                    raise BadInputError(
                        f"the store has no memories of {sample_id}: import it first (memcli import {path} --conversation {sample_id})"
                    )
                Consolidator(engine).build_graph(sample_id)
                for i, qa in enumerate(questions, start=1):
                    evidence = clean_evidence(qa.get("evidence", []), known)
                    if evidence:
                        t0 = time.perf_counter()
                        hits = evidence_recall(engine, str(qa["question"]), sample_id, evidence, rank_by, time.time())
                        latencies.append((time.perf_counter() - t0) * 1000)
                        by_category[int(qa["category"])].append(hits)
                    if progress:
                        progress(f"{sample_id} questions", i, len(questions))
        report.conversations.append(sample_id)
    everything = [h for hits in by_category.values() for h in hits]
    report.questions = len(everything)
    report.per_category = {f"{c} {CATEGORIES[c]}": _means(by_category[c], KS, "R@") for c in sorted(by_category)}
    report.overall = _means(everything, KS, "R@")
    report.latency_ms = _percentiles(latencies)
    report.seconds = round(time.perf_counter() - started, 2)
    return report


HIT_KS = (1, 5, 10)
_EVIDENCE = re.compile(r"^\d{4}-\d{2}-\d{2}:\d+:(query|response)$")


@dataclass
class Probe:
    """One probe question: ``user`` (as memcli names them: spaces removed), ``question``,
    ``type`` (free text: self, recommend, date, relative...), ``evidence`` (turn references
    ``YYYY-MM-DD:N:query|response``, N the 1-based exchange of that day) and ``now`` (unix
    seconds the question is asked at, or None: when the eval runs)."""

    user: str
    question: str
    type: str
    evidence: list[str]
    now: float | None = None
    line: int = 0
    """The probe's line in its file (1-based)."""


def read_probes(path: Path) -> list[Probe]:
    """The probes of a JSON-lines file: one object a line with ``user``, ``question``,
    ``evidence`` (a list of ``YYYY-MM-DD:N:query|response``), optional ``type`` and ``now``
    (ISO 8601, local time). Blank lines are skipped.

    Raises BadInputError naming the file and line of the first malformed probe.
    """
    # heavy: needed only for JSON of vectors and exports
    import orjson

    probes: list[Probe] = []
    for number, line in enumerate(read_text(path).splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{path}: line {number}"
        try:
            record = orjson.loads(line)
        except orjson.JSONDecodeError as exc:
            raise BadInputError(f"{where}: not JSON: {exc}") from None
        if not isinstance(record, dict):
            raise BadInputError(f"{where}: expected an object with user, question and evidence")
        user, question, evidence = record.get("user"), record.get("question"), record.get("evidence")
        if not isinstance(user, str) or not user.strip() or not isinstance(question, str) or not question.strip():
            raise BadInputError(f"{where}: 'user' and 'question' must be non-empty strings")
        if (
            not isinstance(evidence, list)
            or not evidence
            or not all(isinstance(e, str) and _EVIDENCE.match(e) for e in evidence)
        ):
            raise BadInputError(f"{where}: 'evidence' must be a non-empty list of YYYY-MM-DD:N:query|response")
        now = record.get("now")
        probes.append(
            Probe(
                user=user.replace(" ", ""),
                question=question,
                type=str(record.get("type") or "question"),
                evidence=list(evidence),
                now=None if now is None else parse_time(now, f"{where}: now").timestamp(),
                line=number,
            )
        )
    if not probes:
        raise BadInputError(f"{path}: no probes")
    return probes


@dataclass
class ProbeReport(_Report):
    """Hit@k of MemoryBank probes per question type and overall; latency in milliseconds
    per recall; ``details`` (filled on request): one row per probe with its ranked turns."""

    questions: int = 0
    users: list[str] = field(default_factory=list)
    without: list[str] = field(default_factory=list)
    per_type: dict[str, dict[str, float]] = field(default_factory=dict)
    overall: dict[str, float] = field(default_factory=dict)
    latency_ms: dict[str, float] = field(default_factory=dict)
    seconds: float = 0.0
    details: list[dict[str, Any]] = field(default_factory=list)


def _turn_reference(source: str) -> str:
    """``YYYY-MM-DD:N:field`` of a MemoryBank turn's source (``file:name:day:N:field``)."""
    return ":".join(source.rsplit(":", 3)[-3:])


def eval_memorybank(
    path: Path,
    probes_path: Path,
    settings: Settings,
    embedder: Embedder,
    users: Sequence[str] = (),
    progress: Progress | None = None,
    ranking: bool = True,
    without: Sequence[str] = (),
    details: bool = False,
) -> ProbeReport:
    """Recall each probe of ``probes_path`` (``read_probes``) over the MemoryBank history
    ``path``, imported into a temporary store (your own store is not touched); report
    hit@1/5/10 per probe type and overall.

    ``users``: only the probes of these users (all when empty). ``ranking``, ``without``:
    as ``eval_locomo``. A probe is asked at its ``now`` (the clock of relative dates such
    as "yesterday" and of the ranking), else at the time of the run. Recall here never
    reinforces.

    Raises BadInputError for a history that is not MemoryBank, a malformed probe file, a
    probe of a user the history lacks or evidence it does not hold; UsageError for an
    unknown lever.
    """
    signals = _signals(without)
    started = time.perf_counter()
    probes = read_probes(probes_path)
    if users:
        wanted = {u.replace(" ", "") for u in users}
        probes = [p for p in probes if p.user in wanted]
        if not probes:
            raise BadInputError(f"{probes_path}: no probes for {', '.join(sorted(wanted))}")
    memories = [m for m in parse_memorybank(path, read_text(path)) if m.user in {p.user for p in probes}]
    reference = {(m.user, _turn_reference(m.source)): m.id for m in memories}
    for probe in probes:
        if not any(m.user == probe.user for m in memories):
            raise BadInputError(f"{probes_path}: line {probe.line}: {path} has no user {probe.user!r}")
        missing = [e for e in probe.evidence if (probe.user, e) not in reference]
        if missing:
            raise BadInputError(f"{probes_path}: line {probe.line}: {path} has no turn {missing[0]} of {probe.user}")
    by_type: dict[str, list[dict[int, float]]] = defaultdict(list)
    latencies: list[float] = []
    report = ProbeReport(users=sorted({p.user for p in probes}), without=list(without))
    with tempfile.TemporaryDirectory(prefix="memcli-eval-") as home:
        engine = Engine(settings, home_paths(Path(home)), embedder=embedder, signals=signals)
        with discarding(engine.store), engine.store.transaction():
            engine.add_memories(memories, progress=(lambda d, t: progress("import", d, t)) if progress else None)
            for user in report.users:
                Consolidator(engine).build_graph(user)
            for i, probe in enumerate(probes, start=1):
                now = probe.now if probe.now is not None else time.time()
                rank_by = Ranking.from_settings(settings, probe.user) if ranking else None
                t0 = time.perf_counter()
                recalled = engine.recaller.recall(probe.question, probe.user, k=max(HIT_KS), ranking=rank_by, now=now)
                latencies.append((time.perf_counter() - t0) * 1000)
                wanted_ids = {reference[(probe.user, e)] for e in probe.evidence}
                ids = [r.memory.id for r in recalled]
                row = {k: float(bool(wanted_ids & set(ids[:k]))) for k in HIT_KS}
                by_type[probe.type].append(row)
                if details:
                    rank = next((n for n, memory_id in enumerate(ids, start=1) if memory_id in wanted_ids), None)
                    report.details.append(
                        {
                            "user": probe.user,
                            "question": probe.question,
                            "type": probe.type,
                            "evidence": probe.evidence,
                            "rank": rank,
                            "recalled": [_turn_reference(r.memory.source) for r in recalled],
                        }
                    )
                if progress:
                    progress("questions", i, len(probes))
    report.questions = len(probes)
    report.per_type = {name: _means(by_type[name], HIT_KS, "hit@") for name in sorted(by_type)}
    report.overall = _means([r for rows in by_type.values() for r in rows], HIT_KS, "hit@")
    report.latency_ms = _percentiles(latencies)
    report.seconds = round(time.perf_counter() - started, 2)
    return report


# eval consolidation ------------------------------------------------------------------------

COVERAGE_SIMILARITY = 0.6
"""Cosine similarity (packaged embedder) from which a memcli fact or summary line counts as
covering a reference observation (issue 13's measure)."""
STRICT_SIMILARITY = 0.7
"""A stricter threshold: with all-MiniLM-L6-v2 a sentence about the same person on another
topic often passes 0.6 (the facts of another LoCoMo conversation with its speakers' names
swapped for conv-26's cover 65% of conv-26's observations at 0.6, 15% at 0.7)."""


@dataclass
class ConsolidationReport(_Report):
    """``memcli eval consolidation``: what consolidation wrote for each LoCoMo conversation,
    measured against the dataset authors' own session summaries and observations.

    Per conversation (``conversations``) and ``overall`` (means over conversations, sums of
    counts): turns, days, days_summarized, facts, seconds (the consolidate call, models
    loaded), turns_per_second, rougeL_p/r/f (ROUGE-L of each day's event summary against
    that day's session summaries, a day without one scoring 0, mean over days), coverage
    (share of reference observations whose best match among the facts and daily summary
    lines has cosine ≥ COVERAGE_SIMILARITY), coverage_facts and coverage_summaries (each
    alone), coverage_turns (the same by the turns themselves: what keeping everything
    covers, the measure's ceiling), coverage_strict (facts and summary lines at
    STRICT_SIMILARITY), written_by (units per path). ``path``: the consolidation path of the runs."""

    path: str = ""
    conversations: list[dict[str, Any]] = field(default_factory=list)
    overall: dict[str, float] = field(default_factory=dict)
    seconds: float = 0.0


def _rows(embedder: Embedder, texts: Sequence[str]) -> np.ndarray:
    """The unit vectors of ``texts`` as rows (n x d; 0 rows for no text)."""
    if not texts:
        return np.zeros((0, 1), dtype=np.float32)
    return np.asarray(embedder.embed(list(texts)), dtype=np.float32)


def _coverage(references: np.ndarray, candidates: np.ndarray, threshold: float = COVERAGE_SIMILARITY) -> float:
    """Share of ``references`` (unit rows) whose most similar row of ``candidates`` has
    cosine similarity ≥ ``threshold``; 0 when there is no candidate."""
    if len(references) == 0 or len(candidates) == 0:
        return 0.0
    return float(((references @ candidates.T).max(axis=1) >= threshold).mean())


def eval_consolidation(
    path: Path,
    settings: Settings,
    embedder: Embedder,
    conversations: Sequence[str] = (),
    progress: Progress | None = None,
    details: bool = False,
    chat_model: Any = None,
    model_paths: Paths | None = None,
) -> ConsolidationReport:
    """Consolidate each LoCoMo conversation in a temporary store (the ``consolidation``
    path of ``settings``) and measure it; see ``ConsolidationReport``.

    ROUGE-L is rouge-score's (Lin 2004; Porter stemming). A daily summary is compared
    as stored ("Speaker: sentence" lines of an extractive one). ``details``: each
    conversation also carries its daily summaries ({day: text}) and facts (texts).
    ``chat_model``: shared by every conversation (made from the settings when the path
    may need it and none is given, from ``model_paths``' model dir: the user's, so that the
    embedded model is not assembled again in each temporary store), so that its load is not
    counted in a run's seconds.

    Raises BadInputError for a file that is not LoCoMo or an unknown conversation.
    """

    started = time.perf_counter()
    text, samples = _locomo_samples(path, conversations)
    report = ConsolidationReport()
    for sample in samples:
        sample_id = str(sample.get("sample_id"))
        memories = parse_locomo(path, text, sample_id)
        with tempfile.TemporaryDirectory(prefix="memcli-eval-") as home:
            paths = home_paths(Path(home))
            if chat_model is None and settings.consolidation != "extractive":
                chat_model = make_chat_model(settings, model_paths or paths)
            engine = Engine(settings, paths, embedder=embedder, chat_model=chat_model)
            with engine.store.transaction():
                engine.add_memories(
                    memories, progress=(lambda d, t: progress(f"{sample_id} import", d, t)) if progress else None
                )
            t0 = time.perf_counter()
            run = engine.consolidate(
                user=sample_id, progress=(lambda d, t: progress(f"{sample_id} consolidate", d, t)) if progress else None
            )
            seconds = time.perf_counter() - t0
            with discarding(engine.store), engine.store.transaction():
                dailies = {
                    m.day: m.text
                    for m in engine.store.memories(user=sample_id, kind=Kind.EVENT_DAILY.value, archived=False)
                }
                facts = [
                    m.text
                    for m in engine.store.memories(user=sample_id, kind=Kind.FACT.value, archived=False, ended=False)
                ]
        row = score_consolidation(sample, memories, dailies, facts, embedder, seconds)
        row["written_by"] = dict(run.written_by)
        if details:
            row["summaries"] = dict(sorted(dailies.items()))
            row["fact_texts"] = facts
        report.path = run.path or settings.consolidation
        report.conversations.append(row)
    rows = report.conversations
    report.overall = {
        key: round(sum(r[key] for r in rows), 2)
        for key in ("turns", "days", "days_summarized", "facts", "observations", "seconds")
    }
    report.overall["turns_per_second"] = (
        round(report.overall["turns"] / report.overall["seconds"], 2) if report.overall["seconds"] else 0.0
    )
    for key in (
        "rougeL_p",
        "rougeL_r",
        "rougeL_f",
        "coverage",
        "coverage_facts",
        "coverage_summaries",
        "coverage_turns",
        "coverage_strict",
    ):
        report.overall[key] = round(statistics.fmean(r[key] for r in rows), 4)
    report.seconds = round(time.perf_counter() - started, 2)
    return report


def score_consolidation(
    sample: dict[str, Any],
    turns: Sequence[Any],
    dailies: dict[str, str],
    facts: Sequence[str],
    embedder: Embedder,
    seconds: float,
) -> dict[str, Any]:
    """The measures of one LoCoMo conversation's consolidation (``ConsolidationReport``):
    ``sample`` the conversation as the file has it, ``turns`` its memories as imported,
    ``dailies`` the daily event summaries written ({YYYY-MM-DD: text}), ``facts`` the active
    facts' texts, ``seconds`` the consolidation's wall time. The reference summaries of a
    day are those of the sessions whose turns are dated that day."""
    # heavy: needed only by eval consolidation
    from rouge_score import rouge_scorer

    day_of = {m.session: m.day for m in turns}
    references: dict[str, list[str]] = defaultdict(list)
    for key, summary in sorted((sample.get("session_summary") or {}).items(), key=lambda kv: _session_number(kv[0])):
        session = key.removesuffix("_summary")
        if session in day_of and isinstance(summary, str) and summary.strip():
            references[day_of[session]].append(summary.strip())
    observations = [
        str(item[0])
        for per_speaker in (sample.get("observation") or {}).values()
        if isinstance(per_speaker, dict)
        for items in per_speaker.values()
        for item in items
        if isinstance(item, list) and item and str(item[0]).strip()
    ]
    scorer = rouge_scorer.RougeScorer(["rougeL"], use_stemmer=True)
    rouge = [
        scorer.score(" ".join(refs), dailies.get(day, "").replace("\n", " "))["rougeL"]
        for day, refs in references.items()
    ]
    lines = [line for summary in dailies.values() for line in summary.split("\n") if line.strip()]
    wanted, fact_vectors, line_vectors, turn_vectors = (
        _rows(embedder, texts) for texts in (observations, list(facts), lines, [m.text for m in turns])
    )
    both = np.vstack([v for v in (fact_vectors, line_vectors) if len(v)]) if facts or lines else fact_vectors
    return {
        "conversation": str(sample.get("sample_id")),
        "turns": len(turns),
        "days": len(references),
        "days_summarized": sum(1 for day in references if dailies.get(day)),
        "facts": len(facts),
        "observations": len(observations),
        "seconds": round(seconds, 2),
        "turns_per_second": round(len(turns) / seconds, 2) if seconds else 0.0,
        "rougeL_p": round(statistics.fmean(s.precision for s in rouge), 4) if rouge else 0.0,
        "rougeL_r": round(statistics.fmean(s.recall for s in rouge), 4) if rouge else 0.0,
        "rougeL_f": round(statistics.fmean(s.fmeasure for s in rouge), 4) if rouge else 0.0,
        "coverage": round(_coverage(wanted, both), 4),
        "coverage_facts": round(_coverage(wanted, fact_vectors), 4),
        "coverage_summaries": round(_coverage(wanted, line_vectors), 4),
        "coverage_turns": round(_coverage(wanted, turn_vectors), 4),
        "coverage_strict": round(_coverage(wanted, both, STRICT_SIMILARITY), 4),
    }


def _session_number(key: str) -> int:
    """``session_12_summary`` -> 12 (0 when it has no number)."""
    match = re.search(r"\d+", key)
    return int(match.group()) if match else 0


# eval qa -----------------------------------------------------------------------------------

QA_CATEGORIES = {**CATEGORIES, 5: "adversarial"}
CONTEXTS = ("memory", "full", "none")
"""What an answer is written from: the memories recalled as ``ask`` recalls them, the whole
conversation (what fits the context window), or nothing (the question alone)."""
ABSTENTIONS = (
    *LOCOMO_ABSTENTIONS,
    "do not remember",
    "don't remember",
    "don’t remember",
    NOT_FOUND.lower().rstrip("."),
)
"""Answers that say the conversation does not tell, right on an adversarial question: LoCoMo's
phrases, and memcli's own: the ask prompt tells the model to say it does not remember, and an
extractive answer says "I don't find that in your memories"."""
PROMPT_MARGIN = 64
"""Tokens of a full-context prompt left for the chat template's own markup."""
CHARS_PER_TOKEN = 3.0
"""Characters a token is taken to hold when the model cannot count them (a server model):
fewer than English text has, so that an estimated prompt fits."""
_CITATION = re.compile(r"\s*\[([0-9a-f]{4,16})\]")


@dataclass
class QaReport(_Report):
    """``memcli eval qa``: answers to LoCoMo's questions scored by LoCoMo's metric
    (``memcli.library.qa_scoring``), per category (1-5) and overall.

    ``per_category``: {n, F1} per category, and R@5/10/20 of the evidence (with context
    "memory", categories 1-4: as ``eval locomo``); ``overall``: the same over every question
    (R@k over those of categories 1-4 with evidence); ``overall_1_4``: {n, F1} without the
    adversarial category. ``latency_seconds``: {p50, p95} of one answer, recall included.
    ``answers``: the answering path used (llm or extractive); ``model``: the chat model's
    name ("" for extractive answers). ``details`` (on request): one row per question."""

    questions: int = 0
    conversations: list[str] = field(default_factory=list)
    context: str = "memory"
    answers: str = ""
    model: str = ""
    per_category: dict[str, dict[str, float]] = field(default_factory=dict)
    overall: dict[str, float] = field(default_factory=dict)
    overall_1_4: dict[str, float] = field(default_factory=dict)
    latency_seconds: dict[str, float] = field(default_factory=dict)
    seconds: float = 0.0
    details: list[dict[str, Any]] = field(default_factory=list)


def locomo_questions(sample: dict[str, Any], limit: int | None = None) -> list[dict[str, Any]]:
    """The questions of a LoCoMo conversation that can be scored (categories 1-4 with an
    answer, and category 5), in file order; with ``limit``, that many spread evenly over
    them (the i-th of n at i·n/limit): the file groups questions by category, so its first
    ones would leave categories out."""
    questions = [
        q for q in sample.get("qa", []) if q.get("category") in QA_CATEGORIES and (q["category"] == 5 or "answer" in q)
    ]
    if limit is None or limit >= len(questions):
        return questions
    return [questions[i * len(questions) // limit] for i in range(limit)]


def _token_counter(model: Any) -> Callable[[str], int]:
    """How many tokens a text takes in ``model``: its own count when it has one (a GGUF
    model), else an estimate at ``CHARS_PER_TOKEN``."""
    count = getattr(model, "count_tokens", None)
    if callable(count):
        return count
    return lambda text: math.ceil(len(text) / CHARS_PER_TOKEN)


def without_citations(answer: str, cited: Sequence[str]) -> str:
    """``answer`` without its citations: each ``[id]`` that names one of the ``cited``
    memory ids (a prefix of it, as ``assistant.cited_ids`` reads them)."""
    return _CITATION.sub(lambda m: "" if any(c.startswith(m.group(1)) for c in cited) else m.group(0), answer).strip()


def _prompt_memories(
    context: str,
    assistant: Assistant,
    question: str,
    user: str,
    turns: Sequence[Memory],
    path: str,
    cost: dict[str, int],
    count: Callable[[str], int],
) -> Context:
    """What an answer on ``path`` to ``question`` is written from with ``context`` memory
    (recalled as ask does, not reinforcing), full (every turn for an extractive answer,
    ``whole_conversation`` for the model) or none."""
    if context == "memory":
        return assistant.context(question, user)
    if context == "none":
        return Context([])
    if path == "extractive":
        return Context([Recalled(m, 0.0, 0.0, 0.0) for m in turns])
    return whole_conversation(assistant, question, user, turns, cost, count, assistant.owner.settings)


def whole_conversation(
    assistant: Assistant,
    question: str,
    user: str,
    turns: Sequence[Memory],
    cost: dict[str, int],
    count: Callable[[str], int],
    settings: Settings,
) -> Context:
    """The full-context baseline's prompt memories for ``question``: the most recent
    ``turns`` whose lines (``prompts.format_memory``) fit the context window (``n_ctx``)
    beside the rest of the ask prompt, the reply (``max_tokens``) and ``PROMPT_MARGIN``,
    counted by ``count``; ``cost`` keeps each turn's count (memory id -> tokens)."""
    frame = count("\n".join(m.content for m in assistant.ask_messages(question, user, Context([]))))
    budget = settings.n_ctx - settings.max_tokens - frame - PROMPT_MARGIN
    kept: list[Memory] = []
    for memory in sorted(turns, key=lambda m: m.created_at, reverse=True):
        if memory.id not in cost:
            cost[memory.id] = count(format_memory(memory)) + 1
        if cost[memory.id] > budget:
            break
        kept.append(memory)
        budget -= cost[memory.id]
    return Context([Recalled(m, 0.0, 0.0, 0.0) for m in kept])


def _qa_means(rows: list[dict[str, float]]) -> dict[str, float]:
    """{n, F1, R@k...}: the number of questions, their mean F1, and the mean R@k of those
    that have one."""
    summary: dict[str, float] = {
        "n": len(rows),
        "F1": round(statistics.fmean(r["F1"] for r in rows), 4) if rows else 0.0,
    }
    for k in KS:
        measured = [r[f"R@{k}"] for r in rows if f"R@{k}" in r]
        if measured:
            summary[f"R@{k}"] = round(statistics.fmean(measured), 4)
    return summary


def eval_qa(
    path: Path,
    settings: Settings,
    embedder: Embedder,
    conversations: Sequence[str] = (),
    limit: int | None = None,
    context: str = "memory",
    answers: str | None = None,
    progress: Progress | None = None,
    details: bool = False,
    chat_model: Any = None,
    model_paths: Paths | None = None,
) -> QaReport:
    """Answer LoCoMo's questions as ``memcli ask`` does and score the answers with LoCoMo's
    own metric (``memcli.library.qa_scoring``, following snap-research/locomo
    ``task_eval/evaluation.py``); see ``QaReport``.

    Each conversation is imported into a temporary store, as ``eval_locomo`` does, and its
    questions (``locomo_questions``: ``limit`` a conversation) are asked just after its
    last turn (the clock of the prompt's "today" and of the ranking). ``context``:
    "memory": recalled as ``ask`` recalls (``Assistant.context``, not reinforcing), with
    R@k of the evidence measured by ``evidence_recall`` at the same time; "full": the
    whole conversation, its most recent turns that fit (``whole_conversation``); "none":
    the question alone, no system prompt (extractive answers then find nothing).
    ``answers``: llm, extractive or auto (default: the ``answers`` setting; auto:
    extractive for a model without a chat template). Answers are decoded greedily
    (temperature 0), so a run repeats; ``max_tokens`` as set. Citations (``[id]``) are
    taken out of an answer before it is scored; ``ABSTENTIONS`` count as "not mentioned".
    ``chat_model``: shared by every conversation (made from the settings, ``model_paths``'
    model dir, when the path needs one and none is given), loaded before the first answer
    is timed.

    Raises BadInputError for a file that is not LoCoMo or an unknown conversation,
    UsageError for an unknown context or answers path, and the chat model's ModelError.
    """
    if context not in CONTEXTS:
        raise UsageError(f"unknown context {context!r}; choose one of {', '.join(CONTEXTS)}")
    if limit is not None and limit < 1:
        raise UsageError(f"the limit must be 1 or more, not {limit}")
    setting = answers or settings.answers
    if setting not in ("auto", "llm", "extractive"):
        raise UsageError(f"unknown answers path {setting!r}; choose one of auto, llm, extractive")
    started = time.perf_counter()
    text, samples = _locomo_samples(path, conversations)
    by_category: dict[int, list[dict[str, float]]] = defaultdict(list)
    latencies: list[float] = []
    report = QaReport(context=context)
    for sample in samples:
        sample_id = str(sample.get("sample_id"))
        memories = parse_locomo(path, text, sample_id)
        known = {m.source for m in memories}
        end = max(m.created_at for m in memories)
        questions = locomo_questions(sample, limit)
        with tempfile.TemporaryDirectory(prefix="memcli-eval-") as home:
            paths = home_paths(Path(home))
            if chat_model is None and setting != "extractive":
                chat_model = make_chat_model(settings, model_paths or paths)
            if not report.answers:
                report.answers = (
                    setting if setting != "auto" else ("extractive" if is_base_model(chat_model) else "llm")
                )
                report.model = chat_model.name if report.answers == "llm" else ""
            answering = settings.model_copy(update={"answers": report.answers, "temperature": 0.0})
            engine = Engine(answering, paths, clock=lambda end=end: end, embedder=embedder, chat_model=chat_model)
            assistant = engine.assistant
            rank_by = Ranking.from_settings(answering, sample_id)
            count = _token_counter(chat_model)
            cost: dict[str, int] = {}
            with discarding(engine.store):
                if context == "memory":
                    with engine.store.transaction():
                        engine.add_memories(
                            memories,
                            progress=(lambda d, t: progress(f"{sample_id} import", d, t)) if progress else None,
                        )
                for i, qa in enumerate(questions, start=1):
                    question, category = str(qa["question"]), int(qa["category"])
                    t0 = time.perf_counter()
                    if context == "none" and report.answers == "llm":
                        reply = Answer(complete(chat_model, [Message("user", question)], answering.max_tokens, 0.0), [])
                    else:
                        given = _prompt_memories(
                            context, assistant, question, sample_id, memories, report.answers, cost, count
                        )
                        reply = assistant.answer(question, sample_id, given, report.answers)
                    seconds = time.perf_counter() - t0
                    latencies.append(seconds)
                    scored = without_citations(reply.answer, reply.cited)
                    row = {"F1": qa_scoring.score(scored, qa.get("answer"), category, ABSTENTIONS)}
                    evidence = clean_evidence(qa.get("evidence", []), known)
                    if context == "memory" and category in CATEGORIES and evidence:
                        with engine.store.transaction():
                            hits = evidence_recall(engine, question, sample_id, evidence, rank_by, end)
                        row.update({f"R@{k}": hits[k] for k in KS})
                    by_category[category].append(row)
                    if details:
                        report.details.append(
                            {
                                "conversation": sample_id,
                                "category": category,
                                "question": question,
                                "reference": qa.get("answer", qa.get("adversarial_answer")),
                                "answer": reply.answer,
                                "answered": reply.answered,
                                "score": round(row["F1"], 4),
                                "seconds": round(seconds, 3),
                            }
                        )
                    if progress:
                        progress(f"{sample_id} questions", i, len(questions))
        report.conversations.append(sample_id)
    report.questions = sum(len(rows) for rows in by_category.values())
    report.per_category = {f"{c} {QA_CATEGORIES[c]}": _qa_means(by_category[c]) for c in sorted(by_category)}
    report.overall = _qa_means([r for rows in by_category.values() for r in rows])
    report.overall_1_4 = {
        key: value
        for key, value in _qa_means([r for c, rows in by_category.items() if c in CATEGORIES for r in rows]).items()
        if key in ("n", "F1")
    }
    report.latency_seconds = _percentiles(latencies)
    report.seconds = round(time.perf_counter() - started, 2)
    return report


# eval changes ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Change:
    """One life-change scenario of an ``eval changes`` file: its notes (text, learned at a
    unix time), the question asked at ``now`` (unix seconds), the ``gold`` words a right
    answer holds (none: nothing should be found), the ``superseded`` words of the value a
    newer note replaced ("" when none), its ``type`` and the line it came from."""

    id: str
    type: str
    notes: tuple[tuple[str, float], ...]
    question: str
    now: float
    gold: tuple[str, ...]
    superseded: str
    line: int


def read_changes(path: Path) -> list[Change]:
    """The scenarios of a JSON-lines file, one a line: {"id", "type", "lang", "notes":
    [{"text", "date"}], "question", "now", "gold": [words], "superseded": words or null,
    "abstain": bool}; dates as ``parse_time`` reads them. Raises BadInputError naming the
    line of a malformed one."""
    found: list[Change] = []
    for number, raw in enumerate(read_text(path).splitlines(), start=1):
        if not raw.strip():
            continue
        where = f"{path}: line {number}"
        try:
            record = json.loads(raw)
            notes = tuple(
                (str(n["text"]), parse_time(str(n["date"]), f"{where}: date").timestamp()) for n in record["notes"]
            )
            gold = tuple(str(g) for g in record.get("gold") or [])
            found.append(
                Change(
                    str(record.get("id", number)),
                    str(record.get("type", "other")),
                    notes,
                    str(record["question"]),
                    parse_time(str(record["now"]), f"{where}: now").timestamp(),
                    () if record.get("abstain") else gold,
                    str(record.get("superseded") or ""),
                    number,
                )
            )
        except (ValueError, KeyError, TypeError) as exc:
            raise BadInputError(f"{where}: not a change scenario ({exc})") from None
    if not found:
        raise BadInputError(f"{path}: no scenarios")
    return found


@dataclass
class ChangesReport(_Report):
    """Per scenario type and overall: n, right (the answer holds every gold word; for a
    question with no answer, it says nothing is found), first_right (the first memory the
    answer quotes holds every gold word: an answer that quotes an unrelated note first and
    the right one after is right, not first_right; a list quoted from several memories, each
    holding one of its items, is first_right too (``quotes_gold_first``); for a question with no answer, as
    right), superseded_first (the first memory quoted holds the superseded value and not the
    gold one) and abstained_rightly (nothing found where nothing should be), each a share of
    n. With ``details``, one row per scenario: its id, type, question, answer, the four
    scores (0 or 1) and ``recalled``,
    the memories recall gave the answer, best first (rank from 1, text, cosine similarity
    of the memory's vector to the question, whether the answer cites it, whether it is
    superseded)."""

    questions: int = 0
    answers: str = ""
    per_type: dict[str, dict[str, float]] = field(default_factory=dict)
    overall: dict[str, float] = field(default_factory=dict)
    seconds: float = 0.0
    details: list[dict[str, Any]] = field(default_factory=list)


def quotes_gold_first(gold: Sequence[str], quoted: Sequence[str]) -> bool:
    """Whether an answer quoting the memories ``quoted`` (texts, in the order cited) is right
    from its first quote: the first holds every string of ``gold`` (case-insensitively), or,
    for an answer of several items (``gold`` of two or more) quoted from several memories,
    every quoted memory holds one of them at least and together they hold them all (a list
    gathered from the notes that each name one item, issue 31 §4, and nothing beside them)."""
    folded = [t.casefold() for t in quoted]
    wanted = [g.casefold() for g in gold]
    if not folded or not wanted:
        return False
    if all(g in folded[0] for g in wanted):
        return True
    if len(wanted) < 2 or len(folded) < 2:
        return False
    held = [{g for g in wanted if g in text} for text in folded]
    return all(held) and set().union(*held) == set(wanted)


def _changes_means(rows: list[dict[str, float]]) -> dict[str, float]:
    n = len(rows)
    keys = ("right", "first_right", "superseded_first", "abstained_rightly")
    return {"n": n, **{k: round(sum(r[k] for r in rows) / n, 4) if n else 0.0 for k in keys}}


def eval_changes(
    path: Path,
    settings: Settings,
    embedder: Embedder,
    answers: str | None = None,
    progress: Progress | None = None,
    details: bool = False,
    chat_model: Any = None,
) -> ChangesReport:
    """Run each scenario of ``path`` (``read_changes``) in a temporary store, each as its
    own user: its notes remembered at their dates (``Engine.remember``, so supersession at
    write time acts as for a person), its question asked at its ``now`` (``Engine.ask``,
    without reinforcement), with ``answers`` (default: the setting); score it
    (``ChangesReport``). Your own store is not touched."""
    started = time.perf_counter()
    changes = read_changes(path)
    answering = settings.model_copy(update={"answers": answers}) if answers else settings
    report = ChangesReport(answers=answering.answers)
    by_type: dict[str, list[dict[str, float]]] = defaultdict(list)
    moment = [0.0]
    with tempfile.TemporaryDirectory(prefix="memcli-eval-") as home:
        engine = Engine(
            answering,
            home_paths(Path(home)),
            clock=lambda: moment[0],
            embedder=embedder,
            chat_model=chat_model,
        )
        with discarding(engine.store):
            for i, change in enumerate(changes, start=1):
                user = f"changes-{change.id}"
                for text, learned in sorted(change.notes, key=lambda n: n[1]):
                    moment[0] = learned
                    engine.remember(text, user)
                moment[0] = change.now
                reply = engine.assistant.ask(change.question, user, reinforce=False)
                said = without_citations(reply.answer, reply.cited).casefold()
                texts = {r.memory.id: r.memory.text for r in reply.memories}
                quoted = [texts[i] for i in reply.cited if i in texts]
                first = quoted[0] if quoted else ""
                answered = reply.answered and bool(reply.cited or reply.answered_by == "llm")
                row = {
                    "right": float(
                        all(g.casefold() in said for g in change.gold)
                        if change.gold and answered
                        else not change.gold and not answered
                    ),
                    "first_right": float(
                        quotes_gold_first(change.gold, quoted)
                        if change.gold and answered
                        else not change.gold and not answered
                    ),
                    "superseded_first": float(
                        bool(change.superseded)
                        and change.superseded.casefold() in first.casefold()
                        and not any(g.casefold() in first.casefold() for g in change.gold)
                    ),
                    "abstained_rightly": float(not change.gold and not answered),
                }
                by_type[change.type].append(row)
                if details:
                    report.details.append(
                        {
                            "id": change.id,
                            "type": change.type,
                            "question": change.question,
                            "answer": reply.answer,
                            **row,
                            "recalled": [
                                {
                                    "rank": rank,
                                    "text": r.memory.text,
                                    "similarity": round(r.similarity, 4),
                                    "cited": r.memory.id in reply.cited,
                                    "superseded": bool(r.memory.superseded_by),
                                }
                                for rank, r in enumerate(reply.memories, start=1)
                            ],
                        }
                    )
                if progress:
                    progress("questions", i, len(changes))
    report.questions = len(changes)
    report.per_type = {name: _changes_means(by_type[name]) for name in sorted(by_type)}
    report.overall = _changes_means([r for rows in by_type.values() for r in rows])
    report.seconds = round(time.perf_counter() - started, 2)
    return report
