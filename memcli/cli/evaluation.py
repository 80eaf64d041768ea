"""The ``eval`` group: memcli's recall and consolidation measured on a benchmark."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated, Any, Optional

import typer

import memcli.cli.root as root
from memcli.cli.root import (
    JsonOpt,
    QuietOpt,
    RankingOpt,
    WithoutOpt,
    _call,
    _print_json,
    app,
)

eval_app = root.MemcliTyper(
    help="Measure memcli's recall, answers and consolidation on a benchmark.\n\nExample: memcli eval locomo locomo10.json --json",
    no_args_is_help=True,
)
app.add_typer(eval_app, name="eval")


def _print_eval(
    group: str, columns: tuple[str, ...], rows: dict[str, dict[str, float]], report: Any, what: str
) -> None:
    """An eval report as a table: one row per ``group`` and overall (n and ``columns``),
    then the recall latency and the run's duration over ``what``."""
    typer.echo(f"{group:<16}{'n':>6}" + "".join(f"{c:>8}" for c in columns))
    for name, row in [*rows.items(), ("overall", report.overall)]:
        typer.echo(f"{name:<16}{int(row['n']):>6}" + "".join(f"{row[c]:>8.3f}" for c in columns))
    latency = report.latency_ms
    typer.echo(
        f"recall latency p50 {latency.get('p50', 0):.1f} ms, p95 {latency.get('p95', 0):.1f} ms; {what} in {report.duration_seconds:.1f} s"
    )


@eval_app.command("locomo")
def eval_locomo(
    file: Annotated[Path, typer.Argument(help="locomo10.json from the LoCoMo benchmark.", show_default=False)],
    conversation: Annotated[
        Optional[list[str]], typer.Option("--conversation", help="Only this sample_id; repeat for more.")
    ] = None,
    ranking: RankingOpt = True,
    without: WithoutOpt = None,
    imported: Annotated[
        bool,
        typer.Option(
            "--imported",
            help="The conversations are in your store already (memcli import FILE): evaluate a copy of it instead of importing each again.",
        ),
    ] = False,
    json_out: JsonOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """Evidence recall@5/10/20 per category (1-4) and recall latency on LoCoMo.

    Each conversation is imported into a temporary store; your own store is not touched.
    With --imported, each is read from a copy of your store instead, where 'memcli import
    FILE' put it (under its sample_id as the user): the recall of your memories as they
    are, without the time of another import; your store is not changed.

    Example: memcli eval locomo locomo10.json --conversation conv-26 --without speaker
    """
    args = {
        "path": os.path.abspath(file.expanduser()),
        "conversations": conversation or [],
        "ranking": ranking,
        "without": without or [],
        "imported": imported,
    }
    report = _call("eval.locomo", args, quiet, progress="eval locomo")
    if json_out:
        _print_json(report)
        return
    _print_eval(
        "category", ("R@5", "R@10", "R@20"), report.per_category, report, f"{len(report.conversations)} conversations"
    )


@eval_app.command("qa")
def eval_qa(
    file: Annotated[Path, typer.Argument(help="locomo10.json from the LoCoMo benchmark.", show_default=False)],
    conversation: Annotated[
        Optional[list[str]], typer.Option("--conversation", help="Only this sample_id; repeat for more.")
    ] = None,
    limit: Annotated[
        Optional[int],
        typer.Option(
            "--limit",
            min=1,
            help="Questions a conversation, spread evenly over its categories (default: all).",
            show_default=False,
        ),
    ] = None,
    context: Annotated[
        str,
        typer.Option(
            "--context",
            help="What answers are written from: memory (recalled, as ask), full (the whole conversation that fits the model's context window) or none (the question alone).",
        ),
    ] = "memory",
    answers: Annotated[
        Optional[str],
        typer.Option("--answers", help="llm or extractive (default: the answers setting).", show_default=False),
    ] = None,
    details: Annotated[bool, typer.Option("--details", help="With --json: each question's answer and score.")] = False,
    json_out: JsonOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """Answer quality on LoCoMo: F1 per category by LoCoMo's own metric, answer latency and evidence recall.

    Each conversation is imported into a temporary store (your own store is not touched)
    and each question answered as 'memcli ask' answers it, with the configured model
    (in-process or a model server: model_url), decoded greedily. Answers are scored as
    LoCoMo's task_eval/evaluation.py scores them: token F1 after its normalisation (Porter
    stems; multi-hop answers split at commas), adversarial questions right when the answer
    says the conversation does not tell. The baselines: --context full gives the model the
    conversation's most recent turns that fit n_ctx, --context none the question alone.

    Example: memcli eval qa locomo10.json --conversation conv-26 --limit 40
    """
    args = {
        "path": os.path.abspath(file.expanduser()),
        "conversations": conversation or [],
        "limit": limit,
        "context": context,
        "answers": answers,
        "details": details,
    }
    report = _call("eval.qa", args, quiet, progress="eval qa")
    if json_out:
        _print_json(report)
        return
    columns = ("F1", "R@5", "R@10", "R@20")
    typer.echo(f"{'category':<16}{'n':>6}" + "".join(f"{c:>8}" for c in columns))
    for name, row in [*report.per_category.items(), ("overall", report.overall), ("overall 1-4", report.overall_1_4)]:
        typer.echo(
            f"{name:<16}{int(row['n']):>6}" + "".join(f"{row[c]:>8.3f}" if c in row else f"{'-':>8}" for c in columns)
        )
    by = f" by {report.model}" if report.model else ""
    latency = report.latency_seconds
    typer.echo(
        f"{report.answers} answers{by} from {report.context}; answer latency p50 {latency.get('p50', 0):.2f} s, "
        f"p95 {latency.get('p95', 0):.2f} s; {report.questions} questions of {len(report.conversations)} conversations "
        f"in {report.duration_seconds:.1f} s"
    )


@eval_app.command("memorybank")
def eval_memorybank(
    file: Annotated[
        Path,
        typer.Argument(help="A MemoryBank history (memory_bank_en.json or memory_bank_cn.json).", show_default=False),
    ],
    probes: Annotated[
        Path,
        typer.Argument(help="Probe questions, JSON lines: {user, question, evidence, type, now}.", show_default=False),
    ],
    user: Annotated[
        Optional[list[str]], typer.Option("--user", help="Only this user's probes; repeat for more.")
    ] = None,
    ranking: RankingOpt = True,
    without: WithoutOpt = None,
    details: Annotated[
        bool, typer.Option("--details", help="With --json: each probe's rank and recalled turns.")
    ] = False,
    json_out: JsonOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """Hit@1/5/10 per question type and recall latency of probe questions over a MemoryBank history.

    The history is imported into a temporary store; your own store is not touched. Each
    line of PROBES is {"user": "Emily", "question": "What did you recommend on May 2nd?",
    "type": "date", "evidence": ["2023-05-02:3:response"], "now": "2023-05-07T20:00:00"};
    evidence names turns as DAY:N:query|response (N: the day's Nth exchange); now
    (optional) is when the question is asked.

    Example: memcli eval memorybank memory_bank_en.json probes_en.jsonl --json
    """
    args = {
        "path": os.path.abspath(file.expanduser()),
        "probes": os.path.abspath(probes.expanduser()),
        "users": user or [],
        "ranking": ranking,
        "without": without or [],
        "details": details,
    }
    report = _call("eval.memorybank", args, quiet, progress="eval memorybank")
    if json_out:
        _print_json(report)
        return
    _print_eval("type", ("hit@1", "hit@5", "hit@10"), report.per_type, report, f"{len(report.users)} users")


@eval_app.command("consolidation")
def eval_consolidation(
    file: Annotated[Path, typer.Argument(help="locomo10.json from the LoCoMo benchmark.", show_default=False)],
    conversation: Annotated[
        Optional[list[str]], typer.Option("--conversation", help="Only this sample_id; repeat for more.")
    ] = None,
    consolidation: Annotated[
        Optional[str],
        typer.Option(
            "--consolidation",
            help="The path to measure: auto, llm or extractive (default: the setting).",
            show_default=False,
        ),
    ] = None,
    details: Annotated[
        bool, typer.Option("--details", help="With --json: each conversation's daily summaries and facts.")
    ] = False,
    json_out: JsonOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """What consolidation keeps of LoCoMo: ROUGE-L of the daily event summaries against the
    dataset's session summaries, coverage of its observations by the facts and summaries,
    and consolidation speed.

    Each conversation is imported into a temporary store and consolidated there; your own
    store is not touched. Seconds count the consolidate call with the models loaded.

    Example: memcli eval consolidation locomo10.json --conversation conv-26 --consolidation llm
    """
    args = {
        "path": os.path.abspath(file.expanduser()),
        "conversations": conversation or [],
        "consolidation": consolidation,
        "details": details,
    }
    report = _call("eval.consolidation", args, quiet, progress="eval consolidation")
    if json_out:
        _print_json(report)
        return
    columns = (
        "turns",
        "seconds",
        "turns_per_second",
        "days_summarized",
        "days",
        "facts",
        "rougeL_f",
        "coverage",
        "coverage_facts",
        "coverage_summaries",
        "coverage_turns",
        "coverage_strict",
    )
    header = ("turns", "s", "turns/s", "summd", "days", "facts", "ROUGE-L", "cover", "facts", "summ.", "raw", "@0.7")
    typer.echo(f"{'conversation':<14}" + "".join(f"{h:>9}" for h in header))
    for name, row in [*((r["conversation"], r) for r in report.conversations), ("overall", report.overall)]:
        typer.echo(
            f"{name:<14}"
            + "".join(
                f"{row[c]:>9.3f}" if isinstance(row[c], float) and c.startswith(("rouge", "cover")) else f"{row[c]:>9g}"
                for c in columns
            )
        )
    typer.echo(
        f"{report.path} consolidation of {len(report.conversations)} conversations in {report.duration_seconds:.1f} s "
        f"(summd: days summarized; cover: observations matched at cosine >= 0.6 by facts and summary lines, each alone, and by the raw turns; @0.7: by facts and lines at 0.7)"
    )


@eval_app.command("changes")
def eval_changes(
    file: Annotated[Path, typer.Argument(help="Life-change scenarios, JSON lines (see below).", show_default=False)],
    answers: Annotated[
        Optional[str],
        typer.Option("--answers", help="llm or extractive (default: the answers setting).", show_default=False),
    ] = None,
    details: Annotated[bool, typer.Option("--details", help="With --json: each scenario's answer and score.")] = False,
    json_out: JsonOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """Answers that follow a life as it changes: right / first-right / superseded-first / abstained-rightly per scenario type.

    Each scenario runs in a temporary store (your own store is not touched): its notes are
    remembered at their dates, then its question asked at its time. Each line of FILE is
    {"id": "d01", "type": "dose", "notes": [{"text": "I take lisinopril 10 mg", "date":
    "2025-01-05"}, ...], "question": "What dose of lisinopril do I take?", "now":
    "2025-03-10T09:00:00", "gold": ["20 mg"], "superseded": "10 mg", "abstain": false}.

    Example: memcli eval changes tests/data/changes/dev.jsonl --answers extractive
    """
    args = {"path": os.path.abspath(file.expanduser()), "answers": answers, "details": details}
    report = _call("eval.changes", args, quiet, progress="eval changes")
    if json_out:
        _print_json(report)
        return
    columns = ("right", "first_right", "superseded_first", "abstained_rightly")
    typer.echo(f"{'type':<16}{'n':>6}" + "".join(f"{c:>19}" for c in columns))
    for name, row in [*report.per_type.items(), ("overall", report.overall)]:
        typer.echo(f"{name:<16}{int(row['n']):>6}" + "".join(f"{row[c]:>19.3f}" for c in columns))
    typer.echo(f"{report.questions} questions ({report.answers} answers) in {report.duration_seconds:.1f} s")
