"""The ``memcli`` command line: parse options, send the verb, render its result.

Each memory command builds the arguments of one verb, sends it through the entry
(``memcli.entry.call``: the memcli service, started when it is not running, or this
process when the service is off or cannot start) and renders the ``memcli.schema`` model
it gets back: a line or a table on stdout, or with ``--json`` the model's JSON as it is.
What is decided here is only what the command line needs: reading stdin, asking before
a delete on a terminal, formatting. Status, warnings and progress bars go to stderr, and
``--quiet`` silences them. A MemcliError becomes one line on stderr and its exit code
(``--debug`` shows the traceback). Nothing heavy is imported here or on the client path,
so ``--help``, shell completion and a request to a running service stay fast.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import traceback
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Annotated, Any, Optional

import typer
from typer._click.exceptions import ClickException, NoArgsIsHelpError
from typer.core import TyperGroup

from memcli import __version__
from memcli.errors import EXIT_CODE_MEANINGS, ExitCode, Interrupted, MemcliError, UsageError

EPILOG = "Exit status: " + "; ".join(f"{int(code)} {text}" for code, text in EXIT_CODE_MEANINGS.items()) + "."


def _fail(message: str, code: int) -> None:
    sys.stderr.write(f"memcli: error: {message}\n")
    sys.stderr.flush()
    raise SystemExit(code)


class MemcliGroup(TyperGroup):
    """The root command: turns every failure into one line on stderr and an exit code."""

    def main(self, args: Any = None, prog_name: Any = None, complete_var: Any = None, standalone_mode: bool = True, **extra: Any) -> Any:  # type: ignore[override]
        """Run the command line ``args``; exit with the code of the MemcliError (or usage
        error, or interruption) that ends it, after one line on stderr (``--debug`` or
        MEMCLI_DEBUG: the traceback)."""
        argv = list(sys.argv[1:] if args is None else args)
        debug = "--debug" in argv or bool(os.environ.get("MEMCLI_DEBUG"))
        # Private by default: what this process makes (Chroma's files too) is its user's
        # alone, beside the explicit 0700/0600 of memcli.paths.
        os.umask(0o077)
        try:
            result = super().main(args=argv, prog_name=prog_name, complete_var=complete_var, standalone_mode=False, **extra)
        except NoArgsIsHelpError as exc:
            exc.show()
            raise SystemExit(int(exc.exit_code)) from None
        except ClickException as exc:
            if debug:
                traceback.print_exc()
            command = exc.ctx.command_path if getattr(exc, "ctx", None) else "memcli"
            _fail(f"{exc.format_message()} (see '{command} --help')", int(exc.exit_code))
        except Interrupted as exc:
            if debug:
                traceback.print_exc()
            sys.stderr.write(f"memcli: {exc.message}\n")
            raise SystemExit(int(exc.exit_code)) from None
        except MemcliError as exc:
            if debug:
                traceback.print_exc()
            _fail(exc.message, int(exc.exit_code))
        except (KeyboardInterrupt, typer.Abort):
            _fail("interrupted", int(ExitCode.INTERRUPTED))
        except BrokenPipeError:
            sys.stderr.close()
            raise SystemExit(int(ExitCode.ERROR)) from None
        except Exception as exc:
            if debug:
                traceback.print_exc()
            _fail(f"unexpected {type(exc).__name__}: {exc} (run with --debug for the traceback)", int(ExitCode.ERROR))
        code = result if isinstance(result, int) else 0
        if standalone_mode:
            raise SystemExit(code)
        return code

    def invoke(self, ctx: Any) -> Any:
        """Run the command; Ctrl-C becomes ``Interrupted``, which ``main`` reports ("memcli:
        interrupted", exit 130). Typer would turn the KeyboardInterrupt into a silent exit
        130 before ``main`` saw it."""
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt:
            raise Interrupted("interrupted") from None


app = typer.Typer(
    name="memcli",
    cls=MemcliGroup,
    epilog=EPILOG,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)
eval_app = typer.Typer(
    help="Measure memcli's recall and consolidation on a benchmark.\n\nExample: memcli eval locomo locomo10.json --json",
    no_args_is_help=True,
)
app.add_typer(eval_app, name="eval")


def _version(value: bool) -> None:
    if value:
        typer.echo(f"memcli {__version__}")
        raise typer.Exit()


@app.callback()
def main(
    debug: Annotated[bool, typer.Option("--debug", help="Show the traceback of an error.")] = False,
    no_service: Annotated[
        bool, typer.Option("--no-service", help="Run in this process instead of the memcli service (also: MEMCLI_SERVICE=off, or service = \"off\" in the config file).")
    ] = False,
    version: Annotated[bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version and exit.")] = False,
) -> None:
    """A local-first personal memory assistant: chat, remember, recall. Nothing leaves your machine.

    memcli keeps memories of what you tell it in a local Chroma store, recalls what matters, and answers with a local llama.cpp model. Commands go through the memcli service, which keeps the store and the models loaded; it starts on first use and exits when idle.

    Example: memcli remember "I moved to Lyon in 2021"
    """
    _OPTIONS["debug"] = debug
    _OPTIONS["no_service"] = no_service


_OPTIONS: dict[str, bool] = {"debug": False, "no_service": False}
"""The root options of this invocation, for every command's request."""

def _completions(what: str, incomplete: str, user: Any = None) -> list[tuple[str, str]]:
    """Shell completions of ``incomplete`` (``memcli.completion.complete``: through the
    running service, else read from the sidecar; never an error)."""
    from memcli.completion import complete

    return complete(_paths(), what, incomplete, user if isinstance(user, str) else None)


def _complete_id(ctx: typer.Context, incomplete: str) -> list[tuple[str, str]]:
    return _completions("id", incomplete, ctx.params.get("user"))


def _complete_user(incomplete: str) -> list[tuple[str, str]]:
    return _completions("user", incomplete)


def _complete_kind(incomplete: str) -> list[tuple[str, str]]:
    return _completions("kind", incomplete)


UserOpt = Annotated[
    Optional[str], typer.Option("--user", "-u", help="Whose memories (default: the 'user' setting).", autocompletion=_complete_user)
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print the result as JSON (the schemas are in the man page, JSON OUTPUT).")]
QuietOpt = Annotated[bool, typer.Option("--quiet", "-q", help="No status or progress on stderr.")]
RankingOpt = Annotated[bool, typer.Option("--ranking/--no-ranking", help="Weighted ranking on top of relevance, as in chat and recall.")]
WithoutOpt = Annotated[
    Optional[list[str]],
    typer.Option(
        "--without", metavar="LEVER",
        help="Turn a recall lever off, for ablations: lexical, context, window, turn, speaker, person, date, when, priors; repeat for more.",
    ),
]
ModelOpt = Annotated[
    Optional[str], typer.Option("--model", "-m", help="GGUF chat model file (default: the 'model' setting, else the embedded Gemma 3 270M).")
]


IdArg = Annotated[str, typer.Argument(metavar="ID", help="A memory id, or a unique prefix of 4+ characters.", autocompletion=_complete_id)]
TagFilterOpt = Annotated[
    Optional[list[str]], typer.Option("--tag", "-t", metavar="TAG", help="Only memories with this tag; repeat for more (memories with all of them).")
]
NowOpt = Annotated[
    Optional[str],
    typer.Option("--now", metavar="TIME", help="Act as if it were this time (ISO 8601); default: MEMCLI_NOW, else the clock."),
]


def _paths() -> Any:
    from memcli.paths import resolve_paths

    return resolve_paths()


def _call(
    verb: str,
    args: dict[str, Any],
    quiet: bool = False,
    now: str | None = None,
    model: str | None = None,
    progress: str | None = None,
    piece: Callable[[str], None] | None = None,
    progress_lines: str | None = None,
) -> Any:
    """Send one request (``memcli.entry.call``) and return its schema model; notices and
    warnings go to stderr unless ``quiet``, a ``progress`` bar with that label when stderr
    is a terminal (else ``progress_lines``, when given: see ``_progress``), streamed text
    to ``piece``."""
    from memcli.client import Handlers
    from memcli.entry import call

    handlers = Handlers(notice=lambda message: _status(message, quiet), warning=lambda message: _status(message, quiet))
    if piece is not None:
        handlers.piece = piece
    with _progress(progress or verb, quiet if progress else True, progress_lines) as update:
        if update is not None:
            handlers.progress = update
        return call(_paths(), verb, args, handlers, now=now, model=model, no_service=_OPTIONS["no_service"], debug=_OPTIONS["debug"])


def _print_json(result: Any) -> None:
    """A verb's result (a view or schema model, a list of them, or None) as the JSON
    ``--json`` prints."""
    from memcli.verbs import dump

    typer.echo(json.dumps(dump(result), ensure_ascii=False, indent=2))


def _status(message: str, quiet: bool) -> None:
    if not quiet:
        typer.echo(message, err=True)


PROGRESS_LINE_EVERY = 1000
"""Items between two lines of ``_progress`` when stderr is not a terminal."""


@contextlib.contextmanager
def _progress(description: str, quiet: bool, lines: str | None = None) -> Iterator[Optional[Callable[[int, int], None]]]:
    """A rich progress bar on stderr when it is a terminal; otherwise, when ``lines`` is
    given, a line on stderr each ``PROGRESS_LINE_EVERY`` items and at the end, ``lines``
    formatted with ``done`` and ``total`` ("imported {done} of {total} records"); else no
    callback."""
    if quiet:
        yield None
        return
    if not sys.stderr.isatty():
        if lines is None:
            yield None
            return
        shown = [0]

        def line(done: int, total: int) -> None:
            if done // PROGRESS_LINE_EVERY > shown[0] // PROGRESS_LINE_EVERY or (done == total and done > shown[0]):
                shown[0] = done
                sys.stderr.write(f"memcli: {lines.format(done=done, total=total)}\n")
                sys.stderr.flush()

        yield line
        return
    from rich.console import Console
    from rich.progress import Progress

    with Progress(console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task(description, total=None)

        def update(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        yield update


def _read_text(value: str | None, what: str) -> str:
    """``value``, or standard input when it is ``-`` or absent and stdin is not a terminal."""
    if value is not None and value != "-":
        return value
    if value is None and sys.stdin.isatty():
        raise UsageError(f"give the {what} as an argument, or '-' to read it from stdin")
    return sys.stdin.read()


def _interactive() -> bool:
    """Whether a person is at the keyboard: stdin is a terminal (questions are asked then)."""
    return sys.stdin.isatty()


def _confirm(question: str) -> bool:
    """Ask ``question`` on stderr, ``[y/N]``; True for yes. Ctrl-C or end of input
    interrupts the command (exit 130)."""
    return typer.confirm(question, default=False, err=True)


def _preview(text: str, width: int = 50) -> str:
    """``text`` on one line, cut to ``width`` characters with an ellipsis."""
    line = " ".join(text.split())
    return line if len(line) <= width else line[: width - 1].rstrip() + "\u2026"


def _print_memory_id(memory: dict[str, Any], json_out: bool) -> None:
    """A command's result that is one memory: its id, or the whole memory with --json."""
    if json_out:
        _print_json(memory)
    else:
        typer.echo(memory.id)


def _memory_line(memory: dict[str, Any]) -> str:
    """One memory as a tab-separated line: id, day, kind, [score,] source, text."""
    who = f"{memory.speaker}: " if memory.speaker else ""
    text = " ".join(memory.text.split())
    if memory.caption:
        text += f" [image: {memory.caption}]"
    fields = [memory.id, memory.day, memory.kind]
    if getattr(memory, "score", None) is not None:
        fields.append(f"{memory.score.score:.4f}")
    fields += [memory.source or "-", f"{who}{text}"]
    return "\t".join(fields)


@app.command()
def chat(
    user: UserOpt = None,
    system: Annotated[
        Optional[str], typer.Option("--system", metavar="TEXT", help="An instruction of your own for this session, added to every prompt.")
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
    from memcli.client import Handlers
    from memcli.entry import call
    from memcli.repl import Repl

    paths = _paths()

    def request(verb: str, args: dict[str, Any], handlers: Handlers) -> Any:
        return call(paths, verb, args, handlers, now=now, model=model, no_service=_OPTIONS["no_service"], debug=_OPTIONS["debug"])

    Repl(request, paths.state_dir, _memory_line, quiet).run(user, system or "", resume)


@app.command()
def ask(
    question: Annotated[Optional[str], typer.Argument(help="The question; '-' or nothing reads stdin.", show_default=False)] = None,
    user: UserOpt = None,
    model: ModelOpt = None,
    now: NowOpt = None,
    json_out: JsonOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """Answer one question from your memories, citing the ids of the memories used.

    An empty answer from the model is an error (exit 3).

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
    text: Annotated[Optional[str], typer.Argument(help="The note; '-' or nothing reads stdin.", show_default=False)] = None,
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
    done = _call("remember", {"text": _read_text(text, "text"), "user": user, "importance": importance, "tags": tag or []}, quiet, now)
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
    kind: Annotated[Optional[str], typer.Option("--kind", help="Only this kind. Default: turns, notes, facts and daily event summaries; portraits, the global event summary and the running memory only when asked for (portrait_daily, portrait_global, event_global, running_summary).", autocompletion=_complete_kind)] = None,
    tag: TagFilterOpt = None,
    since: Annotated[Optional[str], typer.Option("--since", metavar="DATE", help="Only memories learned on or after this date (YYYY-MM-DD).")] = None,
    no_reinforce: Annotated[bool, typer.Option("--no-reinforce", help="Do not count these memories as recalled.")] = False,
    explain: Annotated[bool, typer.Option("--explain", help="Show each component of every score.")] = False,
    sample: Annotated[bool, typer.Option("--sample", help="Roulette-wheel selection among the top 3k by score.")] = False,
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
    args = {"query": query, "user": user, "k": k, "kind": kind, "since": since, "reinforce": not no_reinforce, "sample": sample, "seed": seed,
            "tags": tag or []}
    hits = _call("recall", args, quiet, now)
    if json_out:
        _print_json(hits)
        return
    for hit in hits:
        typer.echo(_memory_line(hit))
        if explain:
            score = hit.score
            signals = "  ".join(f"{name} {value:+.2f}" for name, value in score.signals.items())
            parts = "  ".join(f"{name} {value:.3f}" for name, value in score.components.items())
            typer.echo(f"\trelevance {score.relevance:+.2f} = {signals}\n\t{parts}")
    if not hits:
        _status("no memories found", quiet)


@app.command("import")
def import_(
    file: Annotated[Path, typer.Argument(help="The file to import.", show_default=False)],
    format: Annotated[Optional[str], typer.Option("--format", "-f", help="locomo, memorybank, jsonl or text (default: detected).")] = None,
    conversation: Annotated[Optional[str], typer.Option("--conversation", help="LoCoMo: import only this sample_id.")] = None,
    retention_from: Annotated[
        str,
        typer.Option(
            "--retention-from", metavar="import|conversation",
            help="When the imported memories' retention clock starts: at the import (they keep their own dates for display and recall), or at their conversation's time, to replay a timeline.",
        ),
    ] = "import",
    progress: Annotated[
        bool, typer.Option("--progress", help="When stderr is not a terminal, a line every 1000 records ('imported 5000 of 91893 records'); a terminal always gets a progress bar.")
    ] = False,
    user: UserOpt = None,
    now: NowOpt = None,
    json_out: JsonOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """Import memories from a file: LoCoMo, MemoryBank, JSONL {role, content, timestamp}, or text/Markdown notes.

    Importing the same file twice adds nothing; a malformed file adds nothing.
    LoCoMo conversations go to the user named by their sample_id. Imported memories
    keep their conversation's dates, but start fading from the import, so a forget pass
    right after importing old logs does not archive them (--retention-from conversation
    for simulations). A paragraph or message longer than 1000 characters (250 CJK
    characters) is stored as several memories, one a chunk, with the same source.
    The file is stored in batches (up to 512 records, about 20 s each): Ctrl-C keeps what
    is stored, says how much ("interrupted: N of M stored"; --json prints the result with
    "interrupted": true) and exits 130; the same import run again stores the rest.

    Example: memcli import locomo10.json --conversation conv-26
    """
    args = {"path": os.path.abspath(file.expanduser()), "format": format, "user": user, "conversation": conversation,
            "retention_from": retention_from}
    report = _call("import", args, quiet, now, progress=f"embedding {file.name}",
                   progress_lines="imported {done} of {total} records" if progress else None)
    if json_out:
        _print_json(report)
    if report.interrupted:
        stored = report.added + report.skipped
        raise Interrupted(f"interrupted: {stored} of {report.found} stored; run the same import again to finish")
    if json_out:
        return
    users = ", ".join(f"{name} ({count})" for name, count in report.users.items())
    typer.echo(
        f"imported {report.added} new memories ({report.skipped} already stored) from {file} as {report.format} "
        f"for {users} in {report.duration_seconds:.1f} s"
    )


@app.command("list")
def list_(
    kind: Annotated[Optional[str], typer.Option("--kind", help="Only this kind.", autocompletion=_complete_kind)] = None,
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
    memories = _call("list", {"user": user, "kind": kind, "limit": limit, "archived": archived, "tags": tag or []}, quiet)
    if json_out:
        _print_json(memories)
        return
    for memory in memories:
        typer.echo(_memory_line(memory))


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
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask for confirmation (asked only when stdin is a terminal).")] = False,
    json_out: JsonOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """Delete one memory for good: its text and its embedding. Prints its id (--json: the deleted memory).

    On a terminal it shows the memory and asks first (--yes skips that); answering no deletes nothing, prints nothing and exits 0. Without a terminal (a script) it does not ask.

    What was made from it (its day's summary and portrait, facts, the running memory) goes with it and is made again by the next consolidate from what is left; the history keeps a PURGE event without text; the store is compacted (about 1 s for 10,000 memories).

    Example: memcli delete 3fa2b1c9 --yes
    """
    if not yes and _interactive():
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
    text: Annotated[Optional[str], typer.Option("--text", metavar="TEXT", help="The new text; '-' reads it from stdin.")] = None,
    importance: Annotated[Optional[float], typer.Option("--importance", "-i", help="How much it matters, 0..1.")] = None,
    tag: Annotated[Optional[list[str]], typer.Option("--tag", "-t", metavar="TAG", help="Add this tag; repeat for more.")] = None,
    untag: Annotated[Optional[list[str]], typer.Option("--untag", metavar="TAG", help="Remove this tag; repeat for more.")] = None,
    json_out: JsonOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """Change a memory's text, importance or tags. Prints its id (--json: the memory as it is now).

    With no option, on a terminal, the text opens in $VISUAL or $EDITOR (else vi).

    A new text is embedded again and replaces the old one everywhere recall looks (its turn's neighbours too); the memory keeps its id, strength, pin and feedback, and memcli history ID shows the old text. Summaries and facts already made from the old text are not rewritten.

    Example: memcli edit 3fa2b1c9 --text "My sister's birthday is 5 March" --tag family
    """
    if text == "-":
        text = sys.stdin.read()
    elif text is None and importance is None and not tag and not untag and _interactive():
        from memcli.configfile import edit_text

        shown = _call("show", {"id": memory_id}, quiet)
        memory_id, text = shown.id, edit_text(shown.text)
        if text.strip() == shown.text:
            _status("unchanged", quiet)
            return
    args = {"id": memory_id, "text": text, "importance": importance, "tags": tag or [], "untags": untag or []}
    _print_memory_id(_call("edit", args, quiet), json_out)
    _status("edited", quiet or json_out)


@app.command()
def version(json_out: JsonOpt = False, quiet: QuietOpt = False) -> None:
    """Print the versions of memcli, Python, its engines (chromadb, llama-cpp-python, sentence-transformers, torch), the chat model and embedder the settings name, and the running service. No model is loaded.

    Example: memcli version --json
    """
    from memcli.config import load_settings
    from memcli.versions import versions

    try:
        settings = load_settings(_paths())
        model, embedder = settings.model, settings.embedder
    except MemcliError as exc:  # a broken setting is when one asks which versions run
        _status(f"memcli: warning: {exc.message}; showing the default models", quiet)
        model, embedder = "", ""
    from memcli.views import VersionInfo

    data = VersionInfo.of(versions(model, embedder, _paths()))
    if json_out:
        _print_json(data)
        return
    for key, value in data.fields():
        typer.echo(f"{key}\t{'-' if value is None else value}")


@app.command()
def forget(
    stochastic: Annotated[bool, typer.Option("--stochastic", help="MemoryBank's mode: forget with probability 1 - R.")] = False,
    seed: Annotated[Optional[int], typer.Option("--seed", help="Seed of --stochastic, for reproducible runs.")] = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="List what would be forgotten; change nothing.")] = False,
    purge: Annotated[bool, typer.Option("--purge", help="Delete forgotten memories for good instead of archiving them (and what was made from them; the store is compacted).")] = False,
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

    Weekly from cron: 0 4 * * 0  memcli forget --all-users --quiet

    Example: memcli forget --dry-run --now 2026-12-01T00:00:00
    """
    args = {"user": user, "all_users": all_users, "stochastic": stochastic, "seed": seed, "dry_run": dry_run, "purge": purge}
    report = _call("forget", args, quiet, now)
    if json_out:
        _print_json(report)
        return
    if dry_run:
        for m in report.memories:
            preview = " ".join(m.text.split())[:60]
            seen = m.forgetting
            typer.echo(f"{m.id}\tR {seen.retention:.4f}\tS {m.strength:g}\tt {seen.elapsed_seconds / 86400:.2f} d\t{m.kind}\t{preview}")
    verb = "would forget" if dry_run else "forgot"
    typer.echo(
        f"examined {report.examined}, {verb} {report.forgotten} "
        f"(archived {report.archived}, purged {report.purged}) in {report.duration_seconds:.2f} s"
    )
    if report.derived_purged:
        _status(f"also deleted {report.derived_purged} memories made from the purged ones; memcli consolidate makes them again", quiet)


@app.command("purge-user")
def purge_user(
    user: Annotated[str, typer.Argument(metavar="USER", help="The user whose memories to delete, named in full.")],
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask for confirmation (required when stdin is not a terminal).")] = False,
    json_out: JsonOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """Delete every memory of USER for good: notes, turns, summaries, portraits, facts, their history and consolidation progress; then compact the store so that none of their text stays on disk.

    On a terminal it asks first (--yes skips that); without a terminal it refuses unless --yes is given (exit 2): it cannot be undone.

    Example: memcli purge-user alice --yes
    """
    if not yes:
        if not _interactive():
            raise UsageError("purge-user deletes every memory of a user for good: add --yes to confirm without a terminal")
        if not _confirm(f"delete every memory of {user!r} for good?"):
            _status("nothing deleted", quiet)
            return
    report = _call("purge-user", {"user": user}, quiet)
    if json_out:
        _print_json(report)
        return
    typer.echo(f"purged {report.purged} memories of {report.user} in {report.duration_seconds:.2f} s")


@app.command()
def consolidate(
    since: Annotated[Optional[str], typer.Option("--since", metavar="DATE", help="Only days on or after this date (YYYY-MM-DD).")] = None,
    until: Annotated[Optional[str], typer.Option("--until", metavar="DATE", help="Only days on or before this date (YYYY-MM-DD).")] = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Count the days, sessions and message pairs to do; change nothing.")] = False,
    retry: Annotated[bool, typer.Option("--retry", help="Also redo the work whose model output was invalid in an earlier run.")] = False,
    all_users: Annotated[bool, typer.Option("--all-users", help="Every user's memories, not just --user.")] = False,
    user: UserOpt = None,
    model: ModelOpt = None,
    now: NowOpt = None,
    json_out: JsonOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """Consolidate new turns: daily and global event summaries, the portrait, the running memory, and facts.

    For each day with new turns: an event summary and a portrait of the day, then the global summary and portrait. For each new session: the running memory (at most 20 sentences). For each new message pair: facts, checked against their source turns and the stored facts, then added, updated, deleted or left alone (see memcli history).

    Safe from cron: incremental, resumable, and a second run with nothing new does nothing. The store is locked only while writing, so a chat keeps working. Exits 0 when it worked, even if some model output was rejected (counted in the summary line). Work whose model output stayed invalid is skipped and redone only with --retry (or, for a day, when new turns arrive on it).

    Nightly from cron: 30 3 * * *  memcli consolidate --all-users --quiet

    Example: memcli consolidate --dry-run
    """
    args = {"user": user, "all_users": all_users, "since": since, "until": until, "dry_run": dry_run, "retry": retry}
    report = _call("consolidate", args, quiet, now, model, progress="consolidating")
    if json_out:
        _print_json(report)
        return
    if report.days == report.sessions == report.message_pairs == report.global_folds == 0:
        typer.echo("nothing new to consolidate")
        return
    units = f"{_count(report.days, 'day')}, {_count(report.sessions, 'session')} and {_count(report.message_pairs, 'message pair')}"
    if report.dry_run:
        typer.echo(f"would consolidate {units}")
        return
    facts = report.facts
    typer.echo(
        f"consolidated {units} in {report.duration_seconds:.1f} s: {report.summaries_written} summaries written; facts "
        f"{facts.added} added, {facts.updated} updated, {facts.deleted} deleted, "
        f"{facts.unchanged} unchanged, {facts.rejected} rejected as ungrounded, "
        f"{facts.deduplicated} duplicates; {report.invalid_outputs} invalid model outputs "
        f"({report.written_by.get('fallback', 0)} replaced by extraction); written by {report.path or 'no one'}"
    )


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


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
    _print_texts(found, json_out, quiet, "daily portrait" if daily else "portrait", daily)


@app.command()
def summary(
    day: Annotated[Optional[str], typer.Option("--day", metavar="DATE", help="The event summary of this day instead.")] = None,
    running: Annotated[bool, typer.Option("--running", help="The running memory of past conversations instead.")] = False,
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


@app.command()
def history(
    memory_id: Annotated[
        Optional[str],
        typer.Argument(metavar="ID", help="A memory id or unique prefix; none: the newest events.", show_default=False, autocompletion=_complete_id),
    ] = None,
    limit: Annotated[int, typer.Option("--limit", "-n", help="How many events without ID, newest first (0: all).")] = 20,
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
    for e in entries:
        change = e.new_text if e.event == "ADD" else f"{e.old_text} -> {e.new_text or '(deleted)'}"
        related = f" ({'replaced by' if e.event != 'ADD' else 'replaces'} {e.related_id})" if e.related_id else ""
        when = (e.at or "")[:16].replace("T", " ")
        typer.echo(f"{when}\t{e.event}\t{e.memory_id}\t{' '.join(change.split())}{related}\t{','.join(e.source_ids) or '-'}")
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


@app.command()
def stats(user: UserOpt = None, now: NowOpt = None, json_out: JsonOpt = False, quiet: QuietOpt = False) -> None:
    """Counts of memories by kind and user, days covered, a retention histogram, fading, archived and pinned counts.

    Example: memcli stats --json
    """
    data = _call("stats", {"user": user}, quiet, now)
    if json_out:
        _print_json(data)
        return
    counts = data.retention_histogram
    width = max(counts, default=0) or 1
    typer.echo("retention")
    for i, count in enumerate(reversed(counts)):
        low = (len(counts) - 1 - i) / len(counts)
        typer.echo(f"  {low:.1f}-{low + 1 / len(counts):.1f} {'#' * round(30 * count / width):<30} {count}")
    for key, value in data.fields():
        if key == "retention_histogram":
            continue
        if isinstance(value, dict):
            value = ", ".join(f"{k} {v}" for k, v in sorted(value.items())) or "-"
        typer.echo(f"{key}: {'-' if value is None else value}")


@app.command()
def reindex(
    force: Annotated[bool, typer.Option("--force", help="Re-embed even when the store is already the configured embedder's.")] = False,
    json_out: JsonOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """Re-embed every memory with the configured embedder, after changing the embedder setting.

    Recall and writes refuse a store whose vectors another embedder made (exit 8) until
    it is reindexed. The store is held while it runs (other commands wait); an
    interrupted reindex is finished by running it again.

    Example: MEMCLI_EMBEDDER=~/models/paraphrase-multilingual-MiniLM-L12-v2 memcli reindex
    """
    data = _call("reindex", {"force": force}, quiet, progress="re-embedding")
    if json_out:
        _print_json(data)
        return
    if not data.memories:
        _status(f"the store is already embedded by {data.embedder}; nothing to do (--force re-embeds it)", quiet)
        return
    typer.echo(
        f"re-embedded {data.memories} memories of {data.users} users with {data.embedder} "
        f"(was {data.previous or 'unrecorded'}) in {data.duration_seconds:.1f} s"
    )


@app.command()
def doctor(json_out: JsonOpt = False, quiet: QuietOpt = False) -> None:
    """Check that every path memcli uses is private (folders 0700, files 0600, yours) and that the store can be written.

    Prints each path checked (ok or warn, its mode, its path) and one warning line on stderr for each path that group or others can read, write or enter, with the chmod that fixes it, and for a read-only store. Exits 0 either way; runs in this process, loads no model and does not open the store. memcli stats prints the same warnings.

    Example: memcli doctor --json
    """
    from memcli.doctor import check

    report = check(_paths())
    for line in report.warnings:
        _status(f"memcli: warning: {line}", quiet)
    if json_out:
        _print_json(report)
        return
    for item in report.checks:
        if item.type != "missing":
            typer.echo(f"{'ok' if item.ok else 'warn'}\t{item.mode}\t{item.path}")
    _status(f"memcli: {report.checked} paths checked: " + ("all private" if report.ok else f"{len(report.warnings)} warning{'s' * (len(report.warnings) != 1)}"), quiet)


@app.command()
def paths(json_out: JsonOpt = False, quiet: QuietOpt = False) -> None:
    """Print every path memcli uses (set MEMCLI_HOME to move them all under one folder).

    Example: memcli paths --json
    """
    data = _paths().as_dict()
    if json_out:
        from memcli.schema import PathsResult

        _print_json(PathsResult(**data))
        return
    for name, path in data.items():
        typer.echo(f"{name}\t{path}")


@app.command()
def serve(
    idle: Annotated[Optional[float], typer.Option("--idle", metavar="SECONDS", help="Exit after this long without a request (default: the service_idle setting, 900).")] = None,
    quiet: QuietOpt = False,
) -> None:
    """Run the memcli service in the foreground (for systemd, launchd or a supervisor).

    The service owns the memory store, keeps the embedder, the chat model and each user's recall index loaded, and answers every memcli command of this user over a Unix socket (see memcli paths). Commands start it in the background when it is not running; it exits after service_idle seconds without a request, on SIGTERM, Ctrl-C or memcli service stop. Its log: memcli paths (log_file).

    Example: memcli serve --idle 3600
    """
    from memcli.paths import resolve_paths
    from memcli.service import serve as run

    given = {} if idle is None else {"idle": idle}
    run(resolve_paths(), ready=lambda line: _status(line, quiet), **given)


service_app = typer.Typer(
    help="Control the memcli service: status, stop, restart.\n\nExample: memcli service status --json",
    no_args_is_help=True,
)
app.add_typer(service_app, name="service")


@service_app.command("status")
def service_status(json_out: JsonOpt = False, quiet: QuietOpt = False) -> None:
    """Show the running service: pid, version, uptime, users loaded, memory, requests served. Exit 7 when it is not running.

    Example: memcli service status
    """
    from memcli.client import ServiceClient
    from memcli.views import ServiceStatus

    data = ServiceStatus.of(ServiceClient(_paths()).status())
    if json_out:
        _print_json(data)
        return
    for key, value in data.fields():
        if isinstance(value, list):
            value = ", ".join(value) or "-"
        typer.echo(f"{key}: {value}")


@service_app.command("stop")
def service_stop(json_out: JsonOpt = False, quiet: QuietOpt = False) -> None:
    """Stop the running service (requests in flight get a few seconds to finish). Not running is not an error.

    Example: memcli service stop
    """
    from memcli.client import ServiceClient

    pid = ServiceClient(_paths()).stop()
    if json_out:
        from memcli.schema import ServiceStop

        _print_json(ServiceStop(stopped=pid is not None, pid=pid))
        return
    _status(f"memcli service (pid {pid}) stopped" if pid is not None else "memcli service is not running", quiet)


@service_app.command("restart")
def service_restart(json_out: JsonOpt = False, quiet: QuietOpt = False) -> None:
    """Stop the service if it runs, and start it again in the background.

    Example: memcli service restart
    """
    from memcli.client import ServiceClient
    from memcli.views import ServiceStatus

    client = ServiceClient(_paths())
    client.stop()
    client.start().close()
    data = ServiceStatus.of(client.status())
    if json_out:
        _print_json(data)
        return
    _status(f"memcli service (pid {data.pid}) started", quiet)


config_app = typer.Typer(
    help="Show and change the settings: defaults, the config file, MEMCLI_* variables.\n\n"
    "set and unset rewrite the config file (atomically, mode 0600) after checking the new value; a running service "
    "uses the change from its next request (service and service_idle: after memcli service restart).\n\n"
    "Example: memcli config set recall_k 8",
    no_args_is_help=True,
)
app.add_typer(config_app, name="config")


def _complete_key(incomplete: str) -> list[tuple[str, str]]:
    from memcli.config import Settings

    return [(key, field.description or "") for key, field in Settings.model_fields.items() if key.startswith(incomplete)]


KeyArg = Annotated[str, typer.Argument(metavar="KEY", help="A setting's name (memcli config list shows them).", autocompletion=_complete_key)]


def _setting_out(found: Any) -> Any:
    from memcli.schema import ConfigSetting

    return ConfigSetting(key=found.key, value=found.value, source=found.source, description=found.description)


def _setting_text(value: Any) -> str:
    """A setting's value as ``config get`` prints it: a string as it is, the rest as JSON."""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _after_change(keys: list[str], quiet: bool) -> None:
    """Status lines after ``keys`` changed in the config file: a variable that still
    overrides one, and a running service that reads one only at its start."""
    from memcli.configfile import restart_notice
    from memcli.paths import ENV_PREFIX

    for key in keys:
        if os.environ.get(ENV_PREFIX + key.upper()):
            _status(f"memcli: note: {ENV_PREFIX}{key.upper()} is set in this environment and overrides the config file", quiet)
    notice = restart_notice(_paths(), keys)
    if notice:
        _status(f"memcli: {notice}", quiet)


@config_app.command("list")
def config_list(json_out: JsonOpt = False, quiet: QuietOpt = False) -> None:
    """Show every setting: key, value, and where the value comes from (default, config file, or the MEMCLI_* variable).

    Example: memcli config list --json
    """
    from memcli.configfile import settings_list

    found = settings_list(_paths())
    if json_out:
        _print_json([_setting_out(s) for s in found])
        return
    for s in found:
        typer.echo(f"{s.key}\t{json.dumps(s.value, ensure_ascii=False)}\t{s.source}")


@config_app.command("get")
def config_get(key: KeyArg, json_out: JsonOpt = False, quiet: QuietOpt = False) -> None:
    """Print the value of one setting in effect (a string as it is, other values as JSON).

    Example: memcli config get user
    """
    from memcli.configfile import setting

    found = setting(_paths(), key)
    if json_out:
        _print_json(_setting_out(found))
        return
    typer.echo(_setting_text(found.value))


@config_app.command("set")
def config_set(
    key: KeyArg,
    value: Annotated[str, typer.Argument(metavar="VALUE", help="The new value: a number, true/false, a word; user_decay: a TOML table such as '{alice = 0.5}'.")],
    json_out: JsonOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """Set a setting in the config file, after checking it as every command will (an unknown key or a bad value: exit 2, file unchanged).

    Example: memcli config set time_unit hour
    """
    from memcli.configfile import set_value, setting

    written = set_value(_paths(), key, value)
    if json_out:
        _print_json(_setting_out(setting(_paths(), key)))
    _status(f"{key} = {_setting_text(written)} in {_paths().config_file}", quiet or json_out)
    _after_change([key], quiet)


@config_app.command("unset")
def config_unset(key: KeyArg, json_out: JsonOpt = False, quiet: QuietOpt = False) -> None:
    """Remove a setting from the config file: it goes back to its default (or its MEMCLI_* variable). A key of the file that names no setting is removed too (--json: null).

    Example: memcli config unset model
    """
    from memcli.configfile import is_setting, setting, unset_value

    removed = unset_value(_paths(), key)
    if not is_setting(key):  # a stray key of the file, removed
        if json_out:
            _print_json(None)
        _status(f"{key} (not a setting) removed from the config file", quiet or json_out)
        return
    found = setting(_paths(), key)
    if json_out:
        _print_json(_setting_out(found))
    what = "removed from the config file" if removed else "was not in the config file"
    _status(f"{key} {what}; now {_setting_text(found.value)} ({found.source})", quiet or json_out)
    if removed:
        _after_change([key], quiet)


@config_app.command("edit")
def config_edit(json_out: JsonOpt = False, quiet: QuietOpt = False) -> None:
    """Open the config file in $VISUAL or $EDITOR (else vi), and check it when the editor exits.

    The editor works on a copy: a valid copy replaces the file; an invalid one is reported, and on a terminal you are asked whether to edit it again, else the file stays as it was (exit 5).

    Example: EDITOR=nano memcli config edit
    """
    from memcli.configfile import edit_file, read_file, settings_list

    paths = _paths()
    before = read_file(paths)

    def again(error: str) -> bool:
        typer.echo(f"memcli: {error}", err=True)
        return _interactive() and typer.confirm("edit it again?", default=True, err=True)

    changed = edit_file(paths, again)
    if json_out:
        _print_json([_setting_out(s) for s in settings_list(paths)])
    _status(f"{paths.config_file} {'updated' if changed else 'unchanged'}", quiet or json_out)
    if changed:
        after = read_file(paths)
        _after_change(sorted(k for k in before.keys() | after.keys() if before.get(k) != after.get(k)), quiet)


@config_app.command("path")
def config_path(json_out: JsonOpt = False, quiet: QuietOpt = False) -> None:
    """Print the path of the config file (it may not exist yet).

    Example: $EDITOR "$(memcli config path)"
    """
    path = _paths().config_file
    if json_out:
        from memcli.schema import ConfigPath

        _print_json(ConfigPath(path=str(path), exists=path.is_file()))
        return
    typer.echo(str(path))


def _print_eval(group: str, columns: tuple[str, ...], rows: dict[str, dict[str, float]], report: Any, what: str) -> None:
    """An eval report as a table: one row per ``group`` and overall (n and ``columns``),
    then the recall latency and the run's duration over ``what``."""
    typer.echo(f"{group:<16}{'n':>6}" + "".join(f"{c:>8}" for c in columns))
    for name, row in [*rows.items(), ("overall", report.overall)]:
        typer.echo(f"{name:<16}{int(row['n']):>6}" + "".join(f"{row[c]:>8.3f}" for c in columns))
    latency = report.latency_ms
    typer.echo(f"recall latency p50 {latency.get('p50', 0):.1f} ms, p95 {latency.get('p95', 0):.1f} ms; {what} in {report.duration_seconds:.1f} s")


@eval_app.command("locomo")
def eval_locomo(
    file: Annotated[Path, typer.Argument(help="locomo10.json from the LoCoMo benchmark.", show_default=False)],
    conversation: Annotated[Optional[list[str]], typer.Option("--conversation", help="Only this sample_id; repeat for more.")] = None,
    ranking: RankingOpt = True,
    without: WithoutOpt = None,
    json_out: JsonOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """Evidence recall@5/10/20 per category (1-4) and recall latency on LoCoMo.

    Each conversation is imported into a temporary store; your own store is not touched.

    Example: memcli eval locomo locomo10.json --conversation conv-26 --without speaker
    """
    args = {"path": os.path.abspath(file.expanduser()), "conversations": conversation or [], "ranking": ranking, "without": without or []}
    report = _call("eval.locomo", args, quiet, progress="eval locomo")
    if json_out:
        _print_json(report)
        return
    _print_eval("category", ("R@5", "R@10", "R@20"), report.per_category, report, f"{len(report.conversations)} conversations")


@eval_app.command("memorybank")
def eval_memorybank(
    file: Annotated[Path, typer.Argument(help="A MemoryBank history (memory_bank_en.json or memory_bank_cn.json).", show_default=False)],
    probes: Annotated[Path, typer.Argument(help="Probe questions, JSON lines: {user, question, evidence, type, now}.", show_default=False)],
    user: Annotated[Optional[list[str]], typer.Option("--user", help="Only this user's probes; repeat for more.")] = None,
    ranking: RankingOpt = True,
    without: WithoutOpt = None,
    details: Annotated[bool, typer.Option("--details", help="With --json: each probe's rank and recalled turns.")] = False,
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
    args = {"path": os.path.abspath(file.expanduser()), "probes": os.path.abspath(probes.expanduser()), "users": user or [],
            "ranking": ranking, "without": without or [], "details": details}
    report = _call("eval.memorybank", args, quiet, progress="eval memorybank")
    if json_out:
        _print_json(report)
        return
    _print_eval("type", ("hit@1", "hit@5", "hit@10"), report.per_type, report, f"{len(report.users)} users")


@eval_app.command("consolidation")
def eval_consolidation(
    file: Annotated[Path, typer.Argument(help="locomo10.json from the LoCoMo benchmark.", show_default=False)],
    conversation: Annotated[Optional[list[str]], typer.Option("--conversation", help="Only this sample_id; repeat for more.")] = None,
    consolidation: Annotated[
        Optional[str], typer.Option("--consolidation", help="The path to measure: auto, llm or extractive (default: the setting).", show_default=False)
    ] = None,
    details: Annotated[bool, typer.Option("--details", help="With --json: each conversation's daily summaries and facts.")] = False,
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
    args = {"path": os.path.abspath(file.expanduser()), "conversations": conversation or [], "consolidation": consolidation,
            "details": details}
    report = _call("eval.consolidation", args, quiet, progress="eval consolidation")
    if json_out:
        _print_json(report)
        return
    columns = ("turns", "seconds", "turns_per_second", "days_summarized", "days", "facts", "rougeL_f", "coverage", "coverage_facts", "coverage_summaries", "coverage_turns", "coverage_strict")
    header = ("turns", "s", "turns/s", "summd", "days", "facts", "ROUGE-L", "cover", "facts", "summ.", "raw", "@0.7")
    typer.echo(f"{'conversation':<14}" + "".join(f"{h:>9}" for h in header))
    for name, row in [*((r["conversation"], r) for r in report.conversations), ("overall", report.overall)]:
        typer.echo(f"{name:<14}" + "".join(f"{row[c]:>9.3f}" if isinstance(row[c], float) and c.startswith(("rouge", "cover")) else f"{row[c]:>9g}" for c in columns))
    typer.echo(f"{report.path} consolidation of {len(report.conversations)} conversations in {report.duration_seconds:.1f} s "
               f"(summd: days summarized; cover: observations matched at cosine >= 0.6 by facts and summary lines, each alone, and by the raw turns; @0.7: by facts and lines at 0.7)")
