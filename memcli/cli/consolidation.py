"""Commands over what consolidation writes: consolidate, portrait, summary."""

from __future__ import annotations

from typing import Annotated, Any, Optional

import typer

from memcli.cli.root import (
    JsonOpt,
    ModelOpt,
    NowOpt,
    QuietOpt,
    UserOpt,
    _call,
    _print_json,
    _report,
    _status,
    app,
)
from memcli.errors import ExitCode, UsageError, fail


@app.command()
def consolidate(
    since: Annotated[
        Optional[str], typer.Option("--since", metavar="DATE", help="Only days on or after this date (YYYY-MM-DD).")
    ] = None,
    until: Annotated[
        Optional[str], typer.Option("--until", metavar="DATE", help="Only days on or before this date (YYYY-MM-DD).")
    ] = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Count the days, sessions and message pairs to do; change nothing.")
    ] = False,
    retry: Annotated[
        bool, typer.Option("--retry", help="Also redo the work whose model output was invalid in an earlier run.")
    ] = False,
    all_users: Annotated[bool, typer.Option("--all-users", help="Every user's memories, not just --user.")] = False,
    user: UserOpt = None,
    model: ModelOpt = None,
    now: NowOpt = None,
    json_out: JsonOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """Consolidate new turns: daily and global event summaries, the portrait, the running memory, and facts.

    For each day with new turns: an event summary and a portrait of the day, then the global summary and portrait. For each new session: the running memory (at most 20 sentences). For each new message pair: facts, checked against their source turns and the stored facts, then added, updated, deleted or left alone (see memcli history).

    Safe from cron: incremental, resumable, and a second run with nothing new does nothing. The store is locked only while writing, so a chat keeps working. Exits 0 when it worked, even if some model output was rejected (counted in the summary line); 3 when a model server failed (those units are not done, the others are; the next run does them). Work whose model output stayed invalid is skipped and redone only with --retry (or, for a day, when new turns arrive on it).

    Nightly from cron: memcli schedule prints (--install installs) this line with memcli's absolute path: 30 3 * * *  memcli consolidate --all-users --quiet

    Example: memcli consolidate --dry-run
    """
    args = {"user": user, "all_users": all_users, "since": since, "until": until, "dry_run": dry_run, "retry": retry}
    report = _call("consolidate", args, quiet, now, model, progress="consolidating")
    if json_out:
        _print_json(report)
    else:
        _print_consolidated(report, quiet)
    if report.failed:
        fail(
            f"{report.failures[0]}; {_count(report.failed, 'unit')} not done, the next consolidate runs them again",
            int(ExitCode.MODEL),
        )


def _print_consolidated(report: Any, quiet: bool) -> None:
    """The summary lines of a consolidate run (the ConsolidateResult view ``report``); none when ``quiet``."""
    graph = report.graph
    if report.days == report.sessions == report.message_pairs == report.global_folds == graph.scanned == 0:
        _report("nothing new to consolidate", quiet)
        return
    units = f"{_count(report.days, 'day')}, {_count(report.sessions, 'session')} and {_count(report.message_pairs, 'message pair')}"
    if report.dry_run:
        typer.echo(f"would consolidate {units}; {_count(graph.scanned, 'memory', 'memories')} to read for the graph")
        return
    facts = report.facts
    _report(
        f"consolidated {units} in {report.duration_seconds:.1f} s: {report.summaries_written} summaries written; facts "
        f"{facts.added} added, {facts.updated} updated, {facts.deleted} deleted, "
        f"{facts.unchanged} unchanged, {facts.rejected} rejected as ungrounded, "
        f"{facts.deduplicated} duplicates; {report.invalid_outputs} invalid model outputs "
        f"({report.written_by.get('fallback', 0)} replaced by extraction); written by {report.path or 'no one'}"
        + (f"; {_count(report.failed, 'unit')} not done (the model server failed)" if report.failed else ""),
        quiet,
    )
    _report(
        f"graph: {_count(graph.scanned, 'memory', 'memories')} read, {_count(graph.mentions, 'mention')}, "
        f"{_count(graph.relations, 'relation')} ({graph.closed} closed by a newer one), {graph.relation_memories} relation memories written",
        quiet,
    )


def _count(n: int, noun: str, plural: str = "") -> str:
    return f"{n} {noun if n == 1 else plural or noun + 's'}"


def _print_texts(found: Any, json_out: bool, quiet: bool, what: str, daily: bool = False) -> None:
    """Consolidated memories: their text (one per day with its date when ``daily``), or
    JSON (one memory or null; a list with ``daily``)."""
    if json_out:
        _print_json(found)
        return
    memories = found if daily else ([found] if found else [])
    if not memories:
        _status(f"no {what} yet: memcli consolidate writes it", quiet)
    for memory in memories:
        typer.echo(f"{memory.day}\t{memory.text}" if daily else memory.text)


@app.command()
def portrait(
    daily: Annotated[bool, typer.Option("--daily", help="Every daily portrait, one line per day.")] = False,
    user: UserOpt = None,
    json_out: JsonOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """Show the portrait of you that consolidation wrote: personality traits and emotions.

    With --json: the portrait as one memory, or null before the first consolidation; with --daily, a list.

    Example: memcli portrait --daily
    """
    found = _call("portrait.daily" if daily else "portrait", {"user": user}, quiet)
    if found or json_out or quiet:
        _print_texts(found, json_out, quiet, "daily portrait" if daily else "portrait", daily)
        return
    _status(_why_no_portrait(user), quiet)


def _why_no_portrait(user: Optional[str]) -> str:
    """Why there is no portrait yet, and what makes one: no turns or notes, some not
    consolidated yet, or none in which the user said anything of themselves."""
    stats = _call("stats", {"user": user}, quiet=True)
    turns, notes = stats.by_kind.get("turn", 0), stats.by_kind.get("note", 0)
    if not turns and not notes:
        return (
            "no portrait yet: memcli consolidate writes one from your conversation turns and notes (memcli chat, "
            f"memcli remember, or import a chat log); {stats.user} has none"
        )
    todo = _call("consolidate", {"user": user, "dry_run": True}, quiet=True)
    if todo.days:
        return (
            f"no portrait yet: memcli consolidate writes one from your turns and notes; {_count(todo.days, 'day')} of "
            "them not consolidated yet: run memcli consolidate"
        )
    read = " and ".join(_count(n, what) for n, what in ((turns, "turn"), (notes, "note")) if n)
    return (
        f"no portrait yet: consolidation found nothing you said of yourself in your {read}; a portrait is "
        'made of sentences such as "I love ...", "I\'m ...", "my favourite ..."'
    )


@app.command()
def summary(
    day: Annotated[
        Optional[str], typer.Option("--day", metavar="DATE", help="The event summary of this day instead.")
    ] = None,
    running: Annotated[
        bool, typer.Option("--running", help="The running memory of past conversations instead.")
    ] = False,
    user: UserOpt = None,
    json_out: JsonOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """Show the global event summary that consolidation wrote (or one day's, or the running memory).

    With --json: the summary as one memory, or null when there is none yet.

    Example: memcli summary --day 2023-05-08
    """
    if day is not None and running:
        raise UsageError("give --day or --running, not both")
    what = f"event summary of {day}" if day else "running memory" if running else "event summary"
    _print_texts(_call("summary", {"user": user, "day": day, "running": running}, quiet), json_out, quiet, what)
