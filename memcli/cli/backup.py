"""Commands that copy a store out: export (what ``memcli import --format memcli`` reads back)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Annotated, Optional

import typer

from memcli.cli.root import JsonOpt, QuietOpt, UserOpt, _call, _print_json, _report, _status, app


def _write_stdout(text: str) -> None:
    out = getattr(sys.stdout, "buffer", None)
    if out is not None:
        out.write(text.encode("utf-8"))
    else:
        sys.stdout.write(text)


@app.command("export")
def export_(
    output: Annotated[
        Optional[Path],
        typer.Option(
            "--output",
            "-o",
            metavar="FILE",
            help="Write to FILE (whole or not at all: a temporary file renamed at the end; mode 0600) instead of standard output; through a symlink, to the file it names; a folder, a device or a FIFO is refused (exit 5: write to it through standard output).",
        ),
    ] = None,
    history: Annotated[
        bool, typer.Option("--history", help="Also the history of every memory (memcli history).")
    ] = False,
    with_vectors: Annotated[
        bool,
        typer.Option(
            "--with-vectors",
            help="Also each memory's stored vector: an import with the same embedder stores them instead of embedding again.",
        ),
    ] = False,
    all_users: Annotated[bool, typer.Option("--all-users", help="Every user's memories, not just --user.")] = False,
    user: UserOpt = None,
    json_out: JsonOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """Export memories as JSON lines, every field as stored: a backup that memcli import reads back as it was.

    The first line is a header (format "memcli", its version, the memcli version, the
    embedder, the time of export); then one line a memory with every field (id, user,
    kind, text, dates as unix seconds, strength, recall count, importance, tags, pin,
    archiving, feedback, source, cited ids...), the consolidation progress, and with
    --history the history events; each line's "type" says which. The store is read a
    page at a time, so memory does not grow with the store. Without -o the lines go to
    standard output and a summary to stderr (--json: the result as JSON, on stderr);
    with -o the summary (or --json's result) goes to standard output.
    memcli import FILE --format memcli restores it into any store: every memory as it
    was, vectors embedded again unless the file has them (--with-vectors) from the
    configured embedder.

    Nightly from cron: memcli schedule prints (--install installs) this line with memcli's absolute path: 0 3 * * *  memcli export --all-users --history -o ~/memcli-backup.jsonl --quiet

    Example: memcli export --all-users --history -o backup.jsonl
    """
    path = os.path.abspath(output.expanduser()) if output is not None else None
    args = {"user": user, "all_users": all_users, "path": path, "history": history, "with_vectors": with_vectors}
    result = _call("export", args, quiet, piece=None if path is not None else _write_stdout)
    if path is None:
        sys.stdout.flush()
        if json_out:
            # thin client: a command group's modules load when one of its commands runs, not at every start
            from memcli.library.verbs import dump

            typer.echo(json.dumps(dump(result), ensure_ascii=False), err=True)
            return
    elif json_out:
        _print_json(result)
        return
    counts = f"{result.memories} memories"
    if result.history_events:
        counts += f", {result.history_events} history events"
    line = f"exported {counts} ({result.lines} lines, {result.size_bytes} bytes) in {result.duration_seconds:.1f} s"
    if path is None:
        _status(f"memcli: {line}", quiet)
    else:
        _report(f"{line} to {path}", quiet)
