"""Commands over memories: chat, ask, remember, recall, import, list, show, delete, edit,
forget, purge-user, history, restore, pin, unpin, feedback."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated, Any, Optional

import typer

import memcli.cli.root as root
from memcli.cli.root import (
    _OPTIONS,
    IdArg,
    JsonOpt,
    ModelOpt,
    NowOpt,
    QuietOpt,
    TagFilterOpt,
    UserOpt,
    _call,
    _complete_id,
    _complete_kind,
    _confirm,
    _memory_line,
    _paths,
    _preview,
    _print_json,
    _print_memories,
    _print_memory_id,
    _print_table,
    _read_text,
    _report,
    _status,
    _stdin,
    app,
)
from memcli.errors import DiskFullError, Interrupted, UsageError


@app.command()
def chat(
    user: UserOpt = None,
    system: Annotated[
        Optional[str],
        typer.Option(
            "--system", metavar="TEXT", help="An instruction of your own for this session, added to every prompt."
        ),
    ] = None,
    resume: Annotated[
        bool, typer.Option("--continue", "-c", help="Go on with your last chat session: its id and its recent turns.")
    ] = False,
    model: ModelOpt = None,
    now: NowOpt = None,
    quiet: QuietOpt = False,
) -> None:
    """Chat with memcli. It recalls what matters before each reply and stores every turn.

    Slash commands: /help, /recall QUERY, /remember TEXT, /exit. On a terminal: line editing and a history kept across sessions (up-arrow); Ctrl-C stops the reply being written (what it wrote so far is kept) and keeps the session; at an empty prompt, Ctrl-C twice or Ctrl-D leaves. Your message is stored before the reply begins, so nothing you typed is lost.
    Without a terminal, each line of stdin is one message.

    Example: memcli chat --user alice --continue
    """
    # thin client: a command group's modules load when one of its commands runs, not at every start
    from memcli.cli.repl import Repl
    from memcli.transport.client import Handlers
    from memcli.transport.entry import call

    _stdin("your messages")
    paths = _paths()

    def request(verb: str, args: dict[str, Any], handlers: Handlers) -> Any:
        return call(
            paths,
            verb,
            args,
            handlers,
            now=now,
            model=model,
            no_service=_OPTIONS["no_service"],
            debug=_OPTIONS["debug"],
        )

    Repl(request, paths.state_dir, _memory_line, quiet).run(user, system or "", resume)


@app.command()
def ask(
    question: Annotated[
        Optional[str], typer.Argument(help="The question; '-' or nothing reads stdin.", show_default=False)
    ] = None,
    user: UserOpt = None,
    model: ModelOpt = None,
    now: NowOpt = None,
    json_out: JsonOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """Answer one question from your memories, citing the ids of the memories used.

    An empty answer from the model is an error (exit 3). An answer that finds nothing in your memories says so and exits 0; with --json, "answered" is false (true when it answered), so a script can tell.

    Example: memcli ask "When did I move to Lyon?" --json
    """
    answer = _call("ask", {"question": _read_text(question, "question"), "user": user}, quiet, now, model)
    if json_out:
        _print_json(answer)
        return
    typer.echo(answer.answer)
    if answer.memories:
        typer.echo("\nmemories:")
        for hit in answer.memories:
            typer.echo(_memory_line(hit))


@app.command()
def remember(
    text: Annotated[
        Optional[str], typer.Argument(help="The note; '-' or nothing reads stdin.", show_default=False)
    ] = None,
    importance: Annotated[float, typer.Option("--importance", "-i", help="How much it matters, 0..1.")] = 0.5,
    tag: Annotated[Optional[list[str]], typer.Option("--tag", "-t", help="A keyword; repeat for more.")] = None,
    user: UserOpt = None,
    now: NowOpt = None,
    json_out: JsonOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """Store a note. Prints its id. The same note twice is stored once.

    A note longer than 1000 characters (250 CJK characters) is stored as several, one a chunk cut at paragraphs and sentences, a millisecond apart: their ids are printed one a line.

    A note at least as important as the important_threshold setting starts stronger, so it fades slower.

    Example: echo "My sister's birthday is 4 March" | memcli remember --tag family -i 0.9
    """
    done = _call(
        "remember",
        {"text": _read_text(text, "text"), "user": user, "importance": importance, "tags": tag or []},
        quiet,
        now,
    )
    if json_out:
        _print_json(done)
        return
    typer.echo("\n".join(done.ids))
    chunked = f" as {len(done.ids)} notes of up to 1000 characters" if len(done.ids) > 1 else ""
    _status(("remembered" if done.added else "already remembered") + chunked, quiet)


@app.command()
def recall(
    query: Annotated[str, typer.Argument(help="What to look for.")],
    k: Annotated[int, typer.Option("-k", help="How many memories.")] = 10,
    kind: Annotated[
        Optional[str],
        typer.Option(
            "--kind",
            help="Only this kind. Default: turns, notes, facts and daily event summaries; portraits, the global event summary and the running memory only when asked for (portrait_daily, portrait_global, event_global, running_summary).",
            autocompletion=_complete_kind,
        ),
    ] = None,
    tag: TagFilterOpt = None,
    since: Annotated[
        Optional[str],
        typer.Option("--since", metavar="DATE", help="Only memories learned on or after this date (YYYY-MM-DD)."),
    ] = None,
    at: Annotated[
        Optional[str],
        typer.Option(
            "--at",
            metavar="DATE",
            help="Recall as of this date: what was learned by then, and the relations that held then (memcli graph).",
        ),
    ] = None,
    no_reinforce: Annotated[
        bool, typer.Option("--no-reinforce", help="Do not count these memories as recalled.")
    ] = False,
    explain: Annotated[bool, typer.Option("--explain", help="Show each component of every score.")] = False,
    sample: Annotated[
        bool, typer.Option("--sample", help="Roulette-wheel selection among the top 3k by score.")
    ] = False,
    seed: Annotated[Optional[int], typer.Option("--seed", help="Seed of --sample, for reproducible picks.")] = None,
    user: UserOpt = None,
    now: NowOpt = None,
    json_out: JsonOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """Show the memories most relevant to QUERY, best first: id, date, kind, score, source, text.

    The score weighs relevance, importance, retention, use, a recently-used penalty and feedback
    (weights in the config file). Printed memories count as recalled: they grow stronger.

    Example: memcli recall "sister birthday" -k 5 --explain
    """
    args = {
        "query": query,
        "user": user,
        "k": k,
        "kind": kind,
        "since": since,
        "reinforce": not no_reinforce,
        "sample": sample,
        "seed": seed,
        "tags": tag or [],
        "at": at,
    }
    hits = _call("recall", args, quiet, now, table=not json_out)
    if json_out:
        _print_json(hits)
        return
    _print_memories(hits, explain)
    if not hits:
        _status("no memories found", quiet)


@app.command("import")
def import_(
    file: Annotated[
        Optional[Path], typer.Argument(help="The file to import (none with --demo).", show_default=False)
    ] = None,
    format: Annotated[
        Optional[str],
        typer.Option(
            "--format", "-f", help="locomo, memorybank, jsonl, text or memcli (memcli export's; default: detected)."
        ),
    ] = None,
    conversation: Annotated[
        Optional[str], typer.Option("--conversation", help="LoCoMo: import only this sample_id.")
    ] = None,
    retention_from: Annotated[
        str,
        typer.Option(
            "--retention-from",
            metavar="import|conversation",
            help="When the imported memories' retention clock starts: at the import (they keep their own dates for display and recall), or at their conversation's time, to replay a timeline.",
        ),
    ] = "import",
    progress: Annotated[
        bool,
        typer.Option(
            "--progress",
            help="When stderr is not a terminal, a line every 1000 records ('imported 5000 of 91893 records'); a terminal always gets a progress bar.",
        ),
    ] = False,
    demo: Annotated[
        bool,
        typer.Option(
            "--demo",
            help="Import the short demo conversation that ships with memcli (four days of Maya's chats), for the user 'demo' unless --user names another.",
        ),
    ] = False,
    user: UserOpt = None,
    now: NowOpt = None,
    json_out: JsonOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """Import memories from a file: LoCoMo, MemoryBank, JSONL {role, content, timestamp}, text/Markdown notes, or a memcli export.

    With --demo and no file, the demo conversation that ships with memcli: try memcli with it, e.g. memcli ask --user demo "When did I start the pottery class?".

    Importing the same file twice adds nothing; a malformed file adds nothing.
    LoCoMo conversations go to the user named by their sample_id. Imported memories
    keep their conversation's dates, but start fading from the import, so a forget pass
    right after importing old logs does not archive them (--retention-from conversation
    for simulations); a memcli export comes back as it was exported (state, history,
    stored vectors when the embedder matches). A paragraph or message longer than 1000
    characters (250 CJK characters) is stored as several memories, one a chunk, with the
    same source.
    The file is stored in batches (up to 512 records, about 20 s each): Ctrl-C keeps what
    is stored, says how much ("interrupted: N of M stored"; --json prints the result with
    "interrupted": true) and exits 130; the same import run again stores the rest.
    An import the device of the store clearly has no room for is refused before it starts;
    one that fills the device stops, says how much is stored (--json: "failed" and "error")
    and exits 10.

    Example: memcli import locomo10.json --conversation conv-26
    """
    if demo == (file is not None):
        raise UsageError("give the file to import, or --demo (not both)")
    if demo:
        from importlib.resources import files  # rare path: the demo file is found only for import --demo

        file, user = Path(str(files("memcli.data") / "demo.jsonl")), user or "demo"
    args = {
        "path": os.path.abspath(file.expanduser()),
        "format": format,
        "user": user,
        "conversation": conversation,
        "retention_from": retention_from,
    }
    report = _call(
        "import",
        args,
        quiet,
        now,
        progress=f"embedding {file.name}",
        progress_lines="imported {done} of {total} records" if progress else None,
    )
    if json_out:
        _print_json(report)
    if report.interrupted:
        stored = report.added + report.skipped
        raise Interrupted(f"interrupted: {stored} of {report.found} stored; run the same import again to finish")
    if report.error:
        raise DiskFullError(report.error)
    if json_out:
        return
    users = ", ".join(f"{name} ({count})" for name, count in report.users.items())
    _report(
        f"imported {report.added} new memories ({report.skipped} already stored) from {file} as {report.format} "
        f"for {users} in {report.duration_seconds:.1f} s",
        quiet,
    )


@app.command("list")
def list_(
    kind: Annotated[
        Optional[str], typer.Option("--kind", help="Only this kind.", autocompletion=_complete_kind)
    ] = None,
    limit: Annotated[int, typer.Option("--limit", "-n", help="How many, newest first (0: all).")] = 20,
    archived: Annotated[bool, typer.Option("--archived", help="List forgotten (archived) memories instead.")] = False,
    tag: TagFilterOpt = None,
    user: UserOpt = None,
    json_out: JsonOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """List memories, newest first: id, date, kind, source, text.

    Example: memcli list --kind note --tag family -n 50
    """
    memories = _call(
        "list",
        {"user": user, "kind": kind, "limit": limit, "archived": archived, "tags": tag or []},
        quiet,
        table=not json_out,
    )
    if json_out:
        _print_json(memories)
        return
    _print_memories(memories)


@app.command()
def show(memory_id: IdArg, json_out: JsonOpt = False, quiet: QuietOpt = False) -> None:
    """Show every field of one memory.

    Example: memcli show 3fa2b1c9
    """
    memory = _call("show", {"id": memory_id}, quiet)
    if json_out:
        _print_json(memory)
        return
    for key, value in memory.fields():
        typer.echo(f"{key}: {'' if value is None else value}")


@app.command()
def delete(
    memory_id: IdArg,
    yes: Annotated[
        bool, typer.Option("--yes", "-y", help="Do not ask for confirmation (asked only when stdin is a terminal).")
    ] = False,
    json_out: JsonOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """Delete one memory for good: its text and its embedding. Prints its id (--json: the deleted memory).

    On a terminal it shows the memory and asks first (--yes skips that); answering no deletes nothing, prints nothing and exits 0. Without a terminal (a script) it does not ask.

    What was made from it (its day's summary and portrait, facts, the running memory) goes with it and is made again by the next consolidate from what is left; the history keeps a PURGE event without text; the store is compacted (about 1 s for 10,000 memories).

    Example: memcli delete 3fa2b1c9 --yes
    """
    if not yes and root._interactive():
        shown = _call("show", {"id": memory_id}, quiet)
        if not _confirm(f"delete {shown.id[:8]} {_preview(shown.text)!r}?"):
            _status("not deleted", quiet)
            return
        memory_id = shown.id  # exactly the memory shown, not a prefix
    memory = _call("delete", {"id": memory_id}, quiet)
    _print_memory_id(memory, json_out)
    _status("deleted", quiet or json_out)


@app.command()
def edit(
    memory_id: IdArg,
    text: Annotated[
        Optional[str], typer.Option("--text", metavar="TEXT", help="The new text; '-' reads it from stdin.")
    ] = None,
    importance: Annotated[
        Optional[float], typer.Option("--importance", "-i", help="How much it matters, 0..1.")
    ] = None,
    tag: Annotated[
        Optional[list[str]], typer.Option("--tag", "-t", metavar="TAG", help="Add this tag; repeat for more.")
    ] = None,
    untag: Annotated[
        Optional[list[str]], typer.Option("--untag", metavar="TAG", help="Remove this tag; repeat for more.")
    ] = None,
    json_out: JsonOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """Change a memory's text, importance or tags. Prints its id (--json: the memory as it is now).

    With no option, on a terminal, the text opens in $VISUAL or $EDITOR (else vi).

    A new text is embedded again and replaces the old one everywhere recall looks (its turn's neighbours too); the memory keeps its id, strength, pin and feedback, and memcli history ID shows the old text. Summaries and facts already made from the old text are not rewritten.

    Example: memcli edit 3fa2b1c9 --text "My sister's birthday is 5 March" --tag family
    """
    if text == "-":
        text = _read_text(text, "new text")
    elif text is None and importance is None and not tag and not untag and root._interactive():
        # thin client: a command group's modules load when one of its commands runs, not at every start
        from memcli.cli.configfile import edit_text

        shown = _call("show", {"id": memory_id}, quiet)
        memory_id, text = shown.id, edit_text(shown.text)
        if text.strip() == shown.text:
            _status("unchanged", quiet)
            return
    args = {"id": memory_id, "text": text, "importance": importance, "tags": tag or [], "untags": untag or []}
    _print_memory_id(_call("edit", args, quiet), json_out)
    _status("edited", quiet or json_out)


@app.command()
def forget(
    stochastic: Annotated[
        bool, typer.Option("--stochastic", help="MemoryBank's mode: forget with probability 1 - R.")
    ] = False,
    seed: Annotated[Optional[int], typer.Option("--seed", help="Seed of --stochastic, for reproducible runs.")] = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="List what would be forgotten; change nothing.")] = False,
    purge: Annotated[
        bool,
        typer.Option(
            "--purge",
            help="Delete forgotten memories for good instead of archiving them (and what was made from them; the store is compacted).",
        ),
    ] = False,
    explain: Annotated[
        bool,
        typer.Option(
            "--explain",
            help="List every memory examined, kept or not: t and S (in time_unit, days by default), d, R against the threshold.",
        ),
    ] = False,
    all_users: Annotated[bool, typer.Option("--all-users", help="Every user's memories, not just --user.")] = False,
    user: UserOpt = None,
    now: NowOpt = None,
    json_out: JsonOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """Forget what has faded: retention R = exp(-d t / S) below the forget_threshold setting.

    Forgotten memories are archived (never recalled; see list --archived, restore) unless --purge, which deletes them for good as delete does: with the summaries, portraits, facts and running memory made from them (the next consolidate makes those again from what is left), their text out of the history, and the store compacted once.
    Pinned memories never fade; a day's event summary goes only with the last turn of its day.
    Safe from cron: takes the store lock, is idempotent for the same clock time, exits 0 when it worked.

    Weekly from cron: memcli schedule prints (--install installs) this line with memcli's absolute path: 0 4 * * 0  memcli forget --all-users --quiet

    Never recalled, with the defaults, a turn goes after about a month, a fact after four months, a note after six, an important note after a year (the strength_* settings; docs/forgetting.md).

    Example: memcli forget --dry-run --explain --now 2026-12-01T00:00:00
    """
    args = {
        "user": user,
        "all_users": all_users,
        "stochastic": stochastic,
        "seed": seed,
        "dry_run": dry_run,
        "purge": purge,
        "explain": explain,
    }
    report = _call("forget", args, quiet, now)
    if json_out:
        _print_json(report)
        return
    if explain:
        _print_forgetting(report, stochastic)
    elif dry_run:
        for m in report.memories:
            preview = " ".join(m.text.split())[:60]
            seen = m.forgetting
            typer.echo(
                f"{m.id}\tR {seen.retention:.4f}\tS {m.strength:g}\tt {seen.elapsed_seconds / 86400:.2f} d\t{m.kind}\t{preview}"
            )
    verb = "would forget" if dry_run else "forgot"
    _report(
        f"examined {report.examined}, {verb} {report.forgotten} "
        f"(archived {report.archived}, purged {report.purged}) in {report.duration_seconds:.2f} s",
        quiet and not dry_run,
    )
    if report.derived_purged:
        _status(
            f"also deleted {report.derived_purged} memories made from the purged ones; memcli consolidate makes them again",
            quiet,
        )


def _print_forgetting(report: Any, stochastic: bool) -> None:
    """forget --explain: the rule, then each memory examined: whether it goes, t and S in
    time units (days by default), d, R, kind and text (a table on a terminal, else TSV)."""
    rule = "forgotten with probability 1 - R" if stochastic else f"forgotten when R < {report.threshold:g}"
    typer.echo(
        f"R = exp(-d t / S), t and S in {report.time_unit}s; {rule}; a daily summary or portrait goes with the last turn of its day"
    )
    rows = []
    for m in report.memories:
        seen = m.forgetting
        follows_day = m.kind in ("event_daily", "portrait_daily")
        r = "its day" if follows_day else ("pinned" if m.pinned else f"{seen.retention:.4f}")
        rows.append(
            [
                "forget" if seen.forgotten else "keep",
                m.id,
                f"{seen.elapsed:.1f}",
                f"{m.strength:g}",
                f"{seen.decay:g}",
                r,
                m.kind,
                " ".join(m.text.split()),
            ]
        )
    columns = ["verdict", "id", "t", "S", "d", "R", "kind", "text"]
    if root._terminal():
        _print_table(columns, rows, right=("t", "S", "d", "R"))
    else:
        typer.echo("\t".join(columns))
        for row in rows:
            typer.echo("\t".join(row))


@app.command("purge-user")
def purge_user(
    user: Annotated[str, typer.Argument(metavar="USER", help="The user whose memories to delete, named in full.")],
    yes: Annotated[
        bool, typer.Option("--yes", "-y", help="Do not ask for confirmation (required when stdin is not a terminal).")
    ] = False,
    json_out: JsonOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """Delete every memory of USER for good: notes, turns, summaries, portraits, facts, their history and consolidation progress; then compact the store so that none of their text stays on disk.

    On a terminal it asks first (--yes skips that); without a terminal it refuses unless --yes is given (exit 2): it cannot be undone.

    Example: memcli purge-user alice --yes
    """
    if not yes:
        if not root._interactive():
            raise UsageError(
                "purge-user deletes every memory of a user for good: add --yes to confirm without a terminal"
            )
        if not _confirm(f"delete every memory of {user!r} for good?"):
            _status("nothing deleted", quiet)
            return
    report = _call("purge-user", {"user": user}, quiet)
    if json_out:
        _print_json(report)
        return
    _report(f"purged {report.purged} memories of {report.user} in {report.duration_seconds:.2f} s", quiet)


_RELATED = {"ADD": "replaces {}", "REOPEN": "holds again: {} was edited or deleted"}
"""How ``history`` names an event's related memory, by event; others: "replaced by"."""


@app.command()
def history(
    memory_id: Annotated[
        Optional[str],
        typer.Argument(
            metavar="ID",
            help="A memory id or unique prefix; none: the newest events.",
            show_default=False,
            autocompletion=_complete_id,
        ),
    ] = None,
    limit: Annotated[
        int, typer.Option("--limit", "-n", help="How many events without ID, newest first (0: all).")
    ] = 20,
    user: UserOpt = None,
    json_out: JsonOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """Show how consolidation changed a memory: ADD, UPDATE, DELETE, with old and new text (and EDIT: memcli edit changed its text).

    Facts are never rewritten in place: an UPDATE or DELETE ends the old fact (it leaves recall) and its text stays here. Each line: time, event, id, old text -> new text, source turn ids.

    Example: memcli history 3fa2b1c9
    """
    entries = _call("history", {"id": memory_id, "user": user, "limit": limit}, quiet)
    if json_out:
        _print_json(entries)
        return
    rows = []
    for e in entries:
        change = e.new_text if e.event in ("ADD", "REOPEN") else f"{e.old_text} -> {e.new_text or '(deleted)'}"
        related = f" ({_RELATED.get(e.event, 'replaced by {}').format(e.related_id)})" if e.related_id else ""
        when = (e.at or "")[:16].replace("T", " ")
        rows.append([when, e.event, e.memory_id, f"{' '.join(change.split())}{related}", ",".join(e.source_ids) or "-"])
    if root._terminal() and rows:
        _print_table(["time", "event", "id", "change", "sources"], rows, wrap=("change", "sources"))
    else:
        for row in rows:
            typer.echo("\t".join(row))
    if not entries:
        _status("no history yet", quiet)


@app.command()
def restore(memory_id: IdArg, json_out: JsonOpt = False, quiet: QuietOpt = False) -> None:
    """Bring a forgotten (archived) memory back; its forgetting clock restarts now.

    Example: memcli restore 3fa2b1c9
    """
    _print_memory_id(_call("restore", {"id": memory_id}, quiet), json_out)


@app.command()
def pin(memory_id: IdArg, json_out: JsonOpt = False, quiet: QuietOpt = False) -> None:
    """Pin a memory: it never fades and is never forgotten.

    Example: memcli pin 3fa2b1c9
    """
    _print_memory_id(_call("pin", {"id": memory_id, "pinned": True}, quiet), json_out)


@app.command()
def unpin(memory_id: IdArg, json_out: JsonOpt = False, quiet: QuietOpt = False) -> None:
    """Unpin a memory: it fades again like any other.

    Example: memcli unpin 3fa2b1c9
    """
    _print_memory_id(_call("pin", {"id": memory_id, "pinned": False}, quiet), json_out)


@app.command()
def feedback(
    memory_id: IdArg,
    vote: Annotated[str, typer.Argument(metavar="up|down", help="Was the memory useful?")],
    json_out: JsonOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """Rate a memory's value: up or down. Feedback weighs in its recall score.

    Example: memcli feedback 3fa2b1c9 up
    """
    if vote not in ("up", "down"):
        raise UsageError(f"vote must be 'up' or 'down', not {vote!r}")
    memory = _call("feedback", {"id": memory_id, "vote": 1 if vote == "up" else -1}, quiet)
    if json_out:
        _print_json(memory)
    else:
        typer.echo(f"{memory.id}\tfeedback {memory.feedback:g}")
