"""The root of the ``memcli`` command line: the app and its error boundary, the root
options, and what every command shares (options, the call to the entry, rendering).

Each memory command builds the arguments of one verb, sends it through the entry
(``memcli.transport.entry.call``: the memcli service, started when it is not running, or this
process when the service is off or cannot start) and renders the result it gets back, the
typed view of a ``memcli.schema`` model: a line or a table on stdout, or with ``--json``
the model's JSON as it is. What is decided here is only what the command line needs:
reading stdin, asking before a delete on a terminal, formatting. Status, warnings and
progress bars go to stderr, and ``--quiet`` silences them. A MemcliError becomes one line
on stderr and its exit code (``--debug`` shows the traceback). Nothing heavy is imported
here or on the client path, so ``--help``, shell completion and a request to a running
service stay fast.
"""

from __future__ import annotations

import contextlib
import importlib
import inspect
import json
import os
import re
import sys
import threading
import traceback
from collections.abc import Callable, Iterator, MutableMapping
from typing import Annotated, Any, Optional

import typer
from typer._click.exceptions import ClickException, NoArgsIsHelpError
from typer._coercion import build_runtime_param
from typer.core import TyperArgument, TyperCommand, TyperGroup

from memcli import __version__
from memcli.cli.command_table import COMMANDS
from memcli.errors import (
    EXIT_CODE_MEANINGS,
    ExitCode,
    Interrupted,
    MemcliError,
    UsageError,
    fail,
)

EPILOG = "Exit status: " + "; ".join(f"{int(code)} {text}" for code, text in EXIT_CODE_MEANINGS.items()) + "."


_INTEGER = re.compile(r"[+-]?[0-9]+")
_DECIMAL = re.compile(r"[+-]?[0-9]+(\.[0-9]+)?")


class PlainValue:
    """Typer's conversion of a ``str``, ``int``, ``float``, ``bool`` or ``list[str]``
    parameter's value, without pydantic. Typer (0.29 here) converts each value through a
    pydantic TypeAdapter, built on first use even for an absent option or the help flag, so
    every command imported pydantic (about 90 ms) before doing anything. Only the values whose
    conversion is plain are converted here: text that is valid UTF-8; ``12``, ``-3`` or
    ``0.5`` within the option's min and max; a flag's True or False; an absent value. Any
    other value goes to Typer's own conversion, so a bad value fails with Typer's message.
    """

    def __init__(self, kind: type) -> None:
        self.kind = kind

    def coerce(self, value: Any, param: Any, ctx: Any) -> Any:
        """``value`` of ``param`` converted as Typer converts it (``RuntimeParam.coerce``)."""
        multiple = param.multiple or param.nargs == -1
        if value is None:
            return () if multiple else None
        if multiple and isinstance(value, (tuple, list)):
            items = [self._plain(item, param) for item in value]
            if all(item is not _NOT_PLAIN for item in items):
                return items
        elif not multiple:
            converted = self._plain(value, param)
            if converted is not _NOT_PLAIN:
                return converted
        # Typer's own conversion, pydantic and its message included, built for this value only:
        # the parameter keeps this conversion for the next invocation of the same command.
        return build_runtime_param(param.type_descriptor).coerce(value, param=param, ctx=ctx)

    def _plain(self, value: Any, param: Any) -> Any:
        if self.kind is bool or isinstance(value, bool):
            return value if self.kind is bool and isinstance(value, bool) else _NOT_PLAIN
        if self.kind is str:
            if not isinstance(value, str):
                return _NOT_PLAIN
            try:
                value.encode("utf-8")  # a lone surrogate (argv that is not UTF-8) is Typer's to judge
            except UnicodeEncodeError:
                return _NOT_PLAIN
            return value
        pattern = _INTEGER if self.kind is int else _DECIMAL
        if isinstance(value, str) and pattern.fullmatch(value):
            number = self.kind(value)
        elif isinstance(value, int) or (self.kind is float and isinstance(value, float)):
            number = self.kind(value)
        else:
            return _NOT_PLAIN
        info = param.type_descriptor.parameter_info
        if (info.min is not None and number < info.min) or (info.max is not None and number > info.max):
            return _NOT_PLAIN
        return number


_NOT_PLAIN = object()


def _plain_values(params: list[Any]) -> None:
    """Give each parameter of a plain kind (``PlainValue``) its conversion in place of the
    one Typer would build on first use; any other parameter keeps Typer's."""
    for param in params:
        descriptor = getattr(param, "type_descriptor", None)
        if descriptor is None or getattr(param, "_runtime_param", "unknown") is not None:
            continue  # not a Typer parameter as this Typer makes them: left to Typer
        info = descriptor.parameter_info
        if descriptor.file_annotation is not None or info.parser is not None or info.clamp:
            continue
        annotation = descriptor.annotation
        if annotation == list[str] and param.multiple:
            param._runtime_param = PlainValue(str)
        elif annotation in (str, int, float, bool) and not param.multiple and param.nargs == 1:
            param._runtime_param = PlainValue(annotation)


def help_line(command: Any) -> str:
    """The first paragraph of a Click command's help (its ``short_help`` when set), on one
    line: what ``--help`` lists beside the command's name, and the help line that
    ``scripts/gen_docs.py`` writes to ``memcli.cli.command_table``."""
    # inspect: already imported with Click, which cleans every docstring with it
    return " ".join(inspect.cleandoc(command.short_help or command.help or "").split("\n\n")[0].split())


class _PlainHelp:
    """``--help`` as people read it: a flag shows no ``<bool>`` (it takes no value) and an
    argument is ``QUERY`` when required, ``[ID]`` when not, in the usage line (Typer writes
    ``{query}``); a group lists each command with the whole first paragraph of its help.
    Mixed into every group and command (``MemcliTyper``), whose plain parameters it also
    converts without pydantic (``PlainValue``)."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        _plain_values(self.get_params(ctx))
        return super().parse_args(ctx, args)  # type: ignore[misc,no-any-return]

    def get_params(self, ctx: Any) -> list[Any]:
        params: list[Any] = super().get_params(ctx)  # type: ignore[misc]
        for param in params:
            if getattr(param, "is_flag", False) and param.metavar is None:
                param.metavar = ""  # Typer's help shows the metavar in place of the type
        return params

    def format_commands(self, ctx: Any, formatter: Any) -> None:
        """A group's commands, each with the first paragraph of its help whole (the line of
        ``memcli.cli.command_table``): Click's plain help would cut it at its first full stop
        or at 45 characters ("Chat with memcli.")."""
        rows = []
        for name in self.list_commands(ctx):  # type: ignore[attr-defined]
            command = self.get_command(ctx, name)  # type: ignore[attr-defined]
            if command is not None and not command.hidden:
                rows.append((name, help_line(command)))
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)

    def collect_usage_pieces(self, ctx: Any) -> list[str]:
        pieces: list[str] = super().collect_usage_pieces(ctx)  # type: ignore[misc]
        for param in self.get_params(ctx):
            if isinstance(param, TyperArgument):
                name = param.metavar or (param.name or "").upper()
                plain = (name if param.required else f"[{name}]") + ("..." if param.nargs != 1 else "")
                typer_pieces = param.get_usage_pieces(ctx)
                pieces = [plain if piece in typer_pieces else piece for piece in pieces]
        return pieces


class PlainCommand(_PlainHelp, TyperCommand):
    """A memcli command (see ``_PlainHelp``)."""


class PlainGroup(_PlainHelp, TyperGroup):
    """A group of memcli commands, as ``memcli config`` (see ``_PlainHelp``)."""


class MemcliTyper(typer.Typer):
    """A Typer app whose groups and commands render their help as ``_PlainHelp`` says, in
    Click's plain layout (``rich_markup_mode=None``): Typer's rich layout imports
    ``typer.rich_utils``, which imports rich's Markdown, Syntax and Traceback (markdown-it,
    pygments, attrs), about 0.3 CPU-seconds of every ``--help`` on 2 cores for boxes around
    the same text."""

    def __init__(self, *, cls: Any = None, **kwargs: Any) -> None:
        kwargs.setdefault("rich_markup_mode", None)
        super().__init__(cls=cls or PlainGroup, **kwargs)

    def command(self, *args: Any, cls: Any = None, **kwargs: Any) -> Any:  # type: ignore[override]
        """``typer.Typer.command`` with ``PlainCommand`` as the command class."""
        return super().command(*args, cls=cls or PlainCommand, **kwargs)


class LazyCommands(MutableMapping[str, Any]):
    """The root's commands by name, each built when first asked for: the name, its module
    and its help line come from ``memcli.cli.command_table``, so a command imports only the
    module that registers it (``memcli recall`` never builds ``eval`` or imports rich's
    help). Iterating goes through every name of the table, in its order, then any command
    already built that the table lacks; walking ``items()`` builds every command, as the
    generators of the man page, completions and reference do.

    Inside ``listing()`` a command not yet built is a stand-in holding only its name and help
    line (``Listed``): what the root's ``--help`` and the completion of a command name show.
    """

    def __init__(self, built: dict[str, Any], load: Callable[[str], Any]) -> None:
        self._built = dict(built)
        self._load = load
        self._listing = False

    def __iter__(self) -> Iterator[str]:
        yield from COMMANDS
        yield from (name for name in self._built if name not in COMMANDS)

    def __len__(self) -> int:
        return len(COMMANDS) + sum(name not in COMMANDS for name in self._built)

    def __contains__(self, name: object) -> bool:
        return name in self._built or name in COMMANDS

    def __getitem__(self, name: str) -> Any:
        if name in self._built:
            return self._built[name]
        if name not in COMMANDS:
            raise KeyError(name)
        if self._listing:
            return Listed(name)
        command = self._load(name)
        self._built[name] = command
        return command

    def __setitem__(self, name: str, command: Any) -> None:
        self._built[name] = command

    def __delitem__(self, name: str) -> None:
        del self._built[name]

    @contextlib.contextmanager
    def listing(self) -> Iterator[None]:
        """Within it, commands not yet built are their ``Listed`` stand-ins."""
        self._listing = True
        try:
            yield
        finally:
            self._listing = False


class Listed(PlainCommand):
    """A command as the root's ``--help`` and a command name's completion see it: its name
    and the help line of ``memcli.cli.command_table``, nothing to run."""

    def __init__(self, name: str) -> None:
        _module, help_line, hidden = COMMANDS[name]
        super().__init__(name=name, help=help_line, hidden=hidden)


def _build_command(name: str) -> Any:
    """The command ``name`` of the table, built as Typer builds the whole app: its module
    imported (which registers it on ``app``), then its Click command made. Raises KeyError
    when the module registers no command of that name (a stale table: the generator's test
    fails first)."""
    # thin client: only the group of the command that runs is imported (see command_table);
    # through __import__ rather than importlib.import_module, which `python -X importtime` does not see
    __import__(f"memcli.cli.{COMMANDS[name][0]}")
    for info in app.registered_commands:
        if (info.name or typer.main.get_command_name(info.callback.__name__)) == name:  # type: ignore[union-attr]
            return typer.main.get_command_from_info(
                info, pretty_exceptions_short=app.pretty_exceptions_short, rich_markup_mode=app.rich_markup_mode
            )
    for group in app.registered_groups:
        if group.name == name:
            return typer.main.get_group_from_info(
                group,
                pretty_exceptions_short=app.pretty_exceptions_short,
                rich_markup_mode=app.rich_markup_mode,
                suggest_commands=app.suggest_commands,
            )
    raise KeyError(name)


class MemcliGroup(_PlainHelp, TyperGroup):
    """The root command: turns every failure into one line on stderr and an exit code, and
    builds only the command that runs (``LazyCommands``)."""

    def __init__(self, *, commands: Any = None, **kwargs: Any) -> None:
        super().__init__(commands=commands, **kwargs)
        self.commands = LazyCommands(dict(self.commands), _build_command)

    def format_help(self, ctx: Any, formatter: Any) -> None:
        """The help, its list of commands read from the table rather than built."""
        with self._listing():
            super().format_help(ctx, formatter)

    def shell_complete(self, ctx: Any, incomplete: str) -> list[Any]:
        """Completions of a command name (or a root option), from the table rather than built."""
        with self._listing():
            return super().shell_complete(ctx, incomplete)

    def _listing(self) -> Any:
        # A plain dict of built commands (the generators' whole app) lists them as they are.
        return self.commands.listing() if isinstance(self.commands, LazyCommands) else contextlib.nullcontext()

    def main(
        self,
        args: Any = None,
        prog_name: Any = None,
        complete_var: Any = None,
        standalone_mode: bool = True,
        **extra: Any,
    ) -> Any:  # type: ignore[override]
        """Run the command line ``args``; exit with the code of the MemcliError (or usage
        error, or interruption) that ends it, after one line on stderr (``--debug`` or
        MEMCLI_DEBUG: the traceback)."""
        argv = list(sys.argv[1:] if args is None else args)
        debug = "--debug" in argv or bool(os.environ.get("MEMCLI_DEBUG"))
        # Private by default: what this process makes (Chroma's files too) is its user's
        # alone, beside the explicit 0700/0600 of memcli.paths.
        os.umask(0o077)
        try:
            result = super().main(
                args=argv, prog_name=prog_name, complete_var=complete_var, standalone_mode=False, **extra
            )
        except NoArgsIsHelpError as exc:
            # the help to stdout, as --help writes it (`memcli | less`); Click's show() writes
            # it to stderr (Typer's rich help had printed it to stdout while building it)
            exc.show(file=sys.stdout)
            raise SystemExit(int(exc.exit_code)) from None
        except ClickException as exc:
            if debug:
                traceback.print_exc()
            command = exc.ctx.command_path if getattr(exc, "ctx", None) else "memcli"
            fail(f"{exc.format_message()} (see '{command} --help')", int(exc.exit_code))
        except Interrupted as exc:
            if debug:
                traceback.print_exc()
            sys.stderr.write(f"memcli: {exc.message}\n")
            raise SystemExit(int(exc.exit_code)) from None
        except MemcliError as exc:
            if debug:
                traceback.print_exc()
            fail(exc.message, int(exc.exit_code))
        except (KeyboardInterrupt, typer.Abort):
            fail("interrupted", int(ExitCode.INTERRUPTED))
        except BrokenPipeError:
            sys.stderr.close()
            raise SystemExit(int(ExitCode.ERROR)) from None
        except Exception as exc:
            if debug:
                traceback.print_exc()
            fail(f"unexpected {type(exc).__name__}: {exc} (run with --debug for the traceback)", int(ExitCode.ERROR))
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


HELP_MAX_WIDTH = 10_000
"""Columns of ``--help`` at most: none in practice, the terminal's width decides."""

app = MemcliTyper(
    name="memcli",
    cls=MemcliGroup,
    epilog=EPILOG,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    # max_content_width: the help wraps at the terminal's width, as Typer's rich help did
    # (Click's plain help stops at 80 columns however wide the terminal)
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": HELP_MAX_WIDTH},
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"memcli {__version__}")
        raise typer.Exit()


@app.callback()
def main(
    debug: Annotated[bool, typer.Option("--debug", help="Show the traceback of an error.")] = False,
    no_service: Annotated[
        bool,
        typer.Option(
            "--no-service",
            help='Run in this process instead of the memcli service (also: MEMCLI_SERVICE=off, or service = "off" in the config file).',
        ),
    ] = False,
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version and exit.")
    ] = False,
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
    """Shell completions of ``incomplete`` (``memcli.cli.completion.complete``: through the
    running service, else read from the sidecar; never an error)."""
    # thin client: a command group's modules load when one of its commands runs, not at every start
    from memcli.cli.completion import complete

    return complete(_paths(check=False), what, incomplete, user if isinstance(user, str) else None)


def _complete_id(ctx: typer.Context, incomplete: str) -> list[tuple[str, str]]:
    return _completions("id", incomplete, ctx.params.get("user"))


def _complete_user(incomplete: str) -> list[tuple[str, str]]:
    return _completions("user", incomplete)


def _complete_kind(incomplete: str) -> list[tuple[str, str]]:
    return _completions("kind", incomplete)


UserOpt = Annotated[
    Optional[str],
    typer.Option("--user", "-u", help="Whose memories (default: the 'user' setting).", autocompletion=_complete_user),
]
JsonOpt = Annotated[
    bool, typer.Option("--json", help="Print the result as JSON (the schemas are in the man page, JSON OUTPUT).")
]
QuietOpt = Annotated[
    bool,
    typer.Option(
        "--quiet",
        "-q",
        help="Nothing on stdout or stderr unless something failed: no status, progress or report of what was done (what you asked to see, a listing or --json, still prints). For cron.",
    ),
]
RankingOpt = Annotated[
    bool, typer.Option("--ranking/--no-ranking", help="Weighted ranking on top of relevance, as in chat and recall.")
]
WithoutOpt = Annotated[
    Optional[list[str]],
    typer.Option(
        "--without",
        metavar="LEVER",
        help="Turn a recall lever off, for ablations: lexical, context, window, turn, speaker, person, date, when, priors, graph; repeat for more.",
    ),
]
ModelOpt = Annotated[
    Optional[str],
    typer.Option(
        "--model", "-m", help="GGUF chat model file (default: the 'model' setting, else the embedded Gemma 3 270M)."
    ),
]


IdArg = Annotated[
    str,
    typer.Argument(metavar="ID", help="A memory id, or a unique prefix of 4+ characters.", autocompletion=_complete_id),
]
TagFilterOpt = Annotated[
    Optional[list[str]],
    typer.Option(
        "--tag", "-t", metavar="TAG", help="Only memories with this tag; repeat for more (memories with all of them)."
    ),
]
NowOpt = Annotated[
    Optional[str],
    typer.Option(
        "--now", metavar="TIME", help="Act as if it were this time (ISO 8601); default: MEMCLI_NOW, else the clock."
    ),
]


def _paths(check: bool = True) -> Any:
    """This invocation's paths (``resolve_paths``); unless ``check`` is False (doctor, paths,
    completion: they report or only read), refused when someone else controls one of its
    folders (``check_home``: UnsafeHomeError)."""
    # thin client: a command group's modules load when one of its commands runs, not at every start
    from memcli.paths import check_home, resolve_paths

    paths = resolve_paths()
    if check:
        check_home(paths)
    return paths


def _call(
    verb: str,
    args: dict[str, Any],
    quiet: bool = False,
    now: str | None = None,
    model: str | None = None,
    progress: str | None = None,
    piece: Callable[[str], None] | None = None,
    progress_lines: str | None = None,
    table: bool = False,
) -> Any:
    """Send one request (``memcli.transport.entry.call``) and return its schema model; notices and
    warnings go to stderr unless ``quiet``, a ``progress`` bar with that label when stderr
    is a terminal (else ``progress_lines``, when given: see ``_progress``), streamed text
    to ``piece``. ``table``: the command prints its result as a table on a terminal
    (``_print_table``), whose modules load while the request runs (``_load_table``)."""
    # thin client: a command group's modules load when one of its commands runs, not at every start
    from memcli.transport.client import Handlers
    from memcli.transport.entry import call

    if table and _terminal():
        _load_table()

    handlers = Handlers(notice=lambda message: _status(message, quiet), warning=lambda message: _status(message, quiet))
    if piece is not None:
        handlers.piece = piece
    with _progress(progress or verb, quiet if progress else True, progress_lines) as update:
        if update is not None:
            handlers.progress = update
        return call(
            _paths(),
            verb,
            args,
            handlers,
            now=now,
            model=model,
            no_service=_OPTIONS["no_service"],
            debug=_OPTIONS["debug"],
        )


def _print_json(result: Any) -> None:
    """A verb's result (a view or schema model, a list of them, or None) as the JSON
    ``--json`` prints."""
    # thin client: a command group's modules load when one of its commands runs, not at every start
    from memcli.library.verbs import dump

    typer.echo(json.dumps(dump(result), ensure_ascii=False, indent=2))


def _status(message: str, quiet: bool) -> None:
    if not quiet:
        typer.echo(message, err=True)


def _report(message: str, quiet: bool) -> None:
    """A command's report of what it did (``consolidated ...``, ``forgot ...``) on stdout,
    unless ``quiet``: ``--quiet`` prints nothing unless something failed, so cron mails
    nothing on a night that went well."""
    if not quiet:
        typer.echo(message)


PROGRESS_LINE_EVERY = 1000
"""Items between two lines of ``_progress`` when stderr is not a terminal."""


@contextlib.contextmanager
def _progress(
    description: str, quiet: bool, lines: str | None = None
) -> Iterator[Optional[Callable[[int, int], None]]]:
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
    # thin client: rich is needed only to render, and memcli starts at every TAB press
    from rich.console import Console
    from rich.progress import Progress

    with Progress(console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task(description, total=None)

        def update(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        yield update


def _read_text(value: str | None, what: str) -> str:
    """``value``, or standard input when it is ``-`` or absent and stdin is not a terminal.
    Raises UsageError when it would read a terminal or a closed stdin (``_stdin``)."""
    if value is not None and value != "-":
        return value
    if value is None and _interactive():
        raise UsageError(f"give the {what} as an argument, or '-' to read it from stdin")
    return _stdin(f"the {what}").read()


def _stdin(what: str) -> Any:
    """Standard input, to read ``what`` from. Raises UsageError when it is closed
    (``<&-``: Python has no ``sys.stdin`` then)."""
    if sys.stdin is None:
        raise UsageError(f"standard input is closed: there is nothing to read {what} from")
    return sys.stdin


def _interactive() -> bool:
    """Whether a person is at the keyboard: stdin is a terminal (questions are asked then);
    False when stdin is closed."""
    return sys.stdin is not None and sys.stdin.isatty()


def _terminal() -> bool:
    """Whether stdout is a terminal: listings print an aligned table then, tab-separated
    lines when piped (tests fake a terminal by replacing this function)."""
    return sys.stdout.isatty()


TABLE_MODULES = ("rich.console", "rich.table", "rich.text")
"""What ``_print_table`` renders with: about a tenth of a CPU-second to import."""


def _load_table() -> None:
    """Import ``TABLE_MODULES`` in a thread of their own, now: a command that prints a table
    on a terminal imports them while it waits for its answer (the socket wait holds no GIL),
    not after it (a warm ``memcli recall`` answers in well under a tenth of a second). Its
    ``_print_table`` that comes first waits for the import under way (the import lock)."""

    def load() -> None:
        for module in TABLE_MODULES:
            importlib.import_module(module)

    threading.Thread(target=load, name="load-table", daemon=True).start()


def _print_table(
    columns: list[str], rows: list[list[Any]], wrap: tuple[str, ...] = ("text",), right: tuple[str, ...] = ()
) -> None:
    """``rows`` (strings, or rich Text) under ``columns`` as an aligned table on stdout,
    as wide as the terminal: the ``wrap`` columns fold, the others keep one line and take
    the room they need; ``right`` columns (numbers) are right-aligned."""
    # thin client: rich is needed only to render, and memcli starts at every TAB press
    from rich.console import Console
    from rich.table import Table

    table = Table(box=None, header_style="bold", pad_edge=False)
    for name in columns:
        table.add_column(name, justify="right" if name in right else "left", no_wrap=name not in wrap, overflow="fold")
    for row in rows:
        table.add_row(*row)
    Console(highlight=False).print(table)


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


def _memory_fields(memory: Any) -> list[str]:
    """One memory's columns: id, day, kind, [score,] source, text (who said it, the text
    on one line, an image's caption)."""
    who = f"{memory.speaker}: " if memory.speaker else ""
    text = " ".join(memory.text.split())
    if memory.caption:
        text += f" [image: {memory.caption}]"
    if "interrupted" in (getattr(memory, "tags", None) or []):
        text += " [interrupted]"  # a reply stopped by Ctrl-C: what was shown of it, not a finished turn
    fields = [memory.id, memory.day, memory.kind]
    if getattr(memory, "score", None) is not None:
        fields.append(f"{memory.score.score:.4f}")
    fields += [memory.source or "-", f"{who}{text}"]
    return fields


def _memory_line(memory: dict[str, Any]) -> str:
    """One memory as a tab-separated line: id, day, kind, [score,] source, text."""
    return "\t".join(_memory_fields(memory))


def _print_memories(memories: list[Any], explain: bool = False) -> None:
    """Memories (of list, or recall: with their score) as a table on a terminal, else one
    tab-separated line each (``_memory_line``). ``explain``: each score's signals and
    components under the memory (recall --explain)."""
    if not _terminal():
        for memory in memories:
            typer.echo(_memory_line(memory))
            if explain:
                typer.echo("\n".join(f"\t{line}" for line in _explain_lines(memory)))
        return
    # thin client: rich is needed only to render, and memcli starts at every TAB press
    from rich.text import Text

    scored = bool(memories) and getattr(memories[0], "score", None) is not None
    columns = ["id", "day", "kind", *(["score"] if scored else []), "source", "text"]
    rows: list[list[Any]] = []
    for memory in memories:
        fields: list[Any] = _memory_fields(memory)
        text = Text(fields[-1])
        if explain:
            text.append("\n" + "\n".join(_explain_lines(memory)), style="dim")
        rows.append([*fields[:-1], text])
    _print_table(columns, rows, wrap=("source", "text"), right=("score",))


def _explain_lines(memory: Any) -> list[str]:
    """recall --explain under one memory: its score's lines (``_score_lines``), then, for a
    memory a newer one replaced (recall --at, or a question about the past), which one and
    on which day."""
    lines = _score_lines(memory.score)
    if getattr(memory, "superseded_by", None):
        day = f" on {memory.valid_to[:10]}" if getattr(memory, "valid_to", None) else ""
        lines.append(f"superseded by {memory.superseded_by}{day}")
    return lines


def _score_lines(score: Any) -> list[str]:
    """recall --explain: the relevance and its signals, then each ranking component."""
    signals = "  ".join(f"{name} {value:+.2f}" for name, value in score.signals.items())
    parts = "  ".join(f"{name} {value:.3f}" for name, value in score.components.items())
    return [f"relevance {score.relevance:+.2f} = {signals}", parts]
