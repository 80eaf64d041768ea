"""Commands about memcli itself: version, stats, reindex, migrate, doctor, paths, serve, mcp, and
the ``service`` group."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

import memcli.cli.root as root
from memcli.cli.root import (
    _OPTIONS,
    JsonOpt,
    NowOpt,
    QuietOpt,
    UserOpt,
    _call,
    _paths,
    _print_json,
    _report,
    _status,
    app,
)
from memcli.errors import MemcliError


@app.command()
def version(json_out: JsonOpt = False, quiet: QuietOpt = False) -> None:
    """Print the versions of memcli, Python, its engines (chromadb, llama-cpp-python, sentence-transformers, torch), the chat model and embedder the settings name (or their servers), and the running service. No model is loaded.

    Example: memcli version --json
    """
    # thin client: a command group's modules load when one of its commands runs, not at every start
    from memcli.config import load_settings
    from memcli.library.versions import versions

    try:
        settings = load_settings(_paths())
        named = (
            settings.model,
            settings.embedder,
            settings.model_url,
            settings.model_name,
            settings.embedder_url,
            settings.embedder_name,
        )
    except MemcliError as exc:  # a broken setting is when one asks which versions run
        _status(f"memcli: warning: {exc.message}; showing the default models", quiet)
        named = ("", "", "", "", "", "")
    # thin client: a command group's modules load when one of its commands runs, not at every start
    from memcli.library.views import VersionInfo

    model, embedder, url, name, embedder_url, embedder_name = named
    data = VersionInfo.of(versions(model, embedder, _paths(), url, name, embedder_url, embedder_name))
    if json_out:
        _print_json(data)
        return
    for key, value in data.fields():
        typer.echo(f"{key}\t{'-' if value is None else value}")


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
    force: Annotated[
        bool, typer.Option("--force", help="Re-embed even when the store is already the configured embedder's.")
    ] = False,
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
    _report(
        f"re-embedded {data.memories} memories of {data.users} users with {data.embedder} "
        f"(was {data.previous or 'unrecorded'}) in {data.duration_seconds:.1f} s",
        quiet,
    )


@app.command()
def migrate(
    to: Annotated[
        Optional[str],
        typer.Option(
            "--to",
            help="URL of the Chroma server to move the memories to, e.g. http://127.0.0.1:8000 (with the store_tenant, store_database and store_token_env settings).",
        ),
    ] = None,
    to_folder: Annotated[
        bool, typer.Option("--to-folder", help="Move the memories back to the folder under the data dir.")
    ] = False,
    json_out: JsonOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """Move the memories to a Chroma server (--to URL) or back to the folder (--to-folder).

    Every memory is copied with every field and its vector, the copy is read back and
    compared (count, ids, texts, fields, vectors), and only then is store_url written to
    the config file. The old place keeps its copy; an interrupted migration is run again.
    Exit 11 when the server cannot be used.

    Example: memcli migrate --to http://127.0.0.1:8000
    """
    if (to is None) == (not to_folder):
        raise typer.BadParameter("give --to URL or --to-folder (one of them)")
    # thin client: a command group's modules load when one of its commands runs, not at every start
    from memcli.cli.configfile import set_value, unset_value

    data = _call("migrate", {"to": to}, quiet, progress="copying")
    # Only now, the copy compared: the setting is switched.
    if to is None:
        unset_value(_paths(), "store_url")
    else:
        set_value(_paths(), "store_url", to)
    if json_out:
        _print_json(data)
        return
    _report(
        f"moved {data.memories} memories from {data.source} to {data.target} in {data.duration_seconds:.1f} s; "
        f"store_url {'set' if to else 'unset'} in the config file (the old copy is left where it was)",
        quiet,
    )


@app.command()
def doctor(json_out: JsonOpt = False, quiet: QuietOpt = False) -> None:
    """Check that every path memcli uses is private (folders 0700, files 0600, yours) and that the store can be written.

    Prints each path checked (ok or warn, its mode, its path) and one warning line on stderr for each path that group or others can read, write or enter, with the chmod that fixes it, and for a read-only store. Then the configured chat model, one line each: its GGUF file; or, with model_url, the server reachable, the model listed and a one-token completion answered; and with embedder_url, the embedding server reachable, its model listed and one text embedded. Exits 0 either way; runs in this process, loads no model (a model server is asked) and does not open the store. memcli stats prints the same path warnings.

    Example: memcli doctor --json
    """
    # thin client: a command group's modules load when one of its commands runs, not at every start
    from memcli.config import load_settings
    from memcli.library.doctor import check

    paths = _paths(check=False)
    try:
        settings = load_settings(paths)
    except MemcliError as exc:  # the paths are still worth checking
        _status(f"memcli: warning: {exc.message}; the model is not checked", quiet)
        settings = None
    report = check(paths, settings)
    for line in report.warnings:
        _status(f"memcli: warning: {line}", quiet)
    if json_out:
        _print_json(report)
        return
    for item in report.checks:
        if item.type != "missing":
            typer.echo(f"{'ok' if item.ok else 'warn'}\t{item.mode or '-'}\t{item.path}")
    for model_check in report.model_checks:
        typer.echo(f"{'ok' if model_check.ok else 'warn'}\t{model_check.name}\t{model_check.detail}")
    _status(
        f"memcli: {report.checked} paths checked: "
        + ("all private" if report.ok else f"{len(report.warnings)} warning{'s' * (len(report.warnings) != 1)}"),
        quiet,
    )


@app.command()
def paths(json_out: JsonOpt = False, quiet: QuietOpt = False) -> None:
    """Print every path memcli uses (set MEMCLI_HOME to move them all under one folder).

    Example: memcli paths --json
    """
    data = _paths(check=False).as_dict()
    if json_out:
        # thin client: a command group's modules load when one of its commands runs, not at every start
        from memcli.schema import PathsResult

        _print_json(PathsResult(**data))
        return
    for name, path in data.items():
        typer.echo(f"{name}\t{path}")


@app.command()
def serve(
    idle: Annotated[
        Optional[float],
        typer.Option(
            "--idle",
            metavar="SECONDS",
            help="Exit after this long without a request (default: the service_idle setting, 900).",
        ),
    ] = None,
    quiet: QuietOpt = False,
) -> None:
    """Run the memcli service in the foreground (for systemd, launchd or a supervisor).

    The service owns the memory store, keeps the embedder, the chat model and each user's recall index loaded, and answers every memcli command of this user over a Unix socket (see memcli paths). Commands start it in the background when it is not running; it exits after service_idle seconds without a request, on SIGTERM, Ctrl-C or memcli service stop. Its log: memcli paths (log_file).

    Example: memcli serve --idle 3600
    """
    # thin client: a command group's modules load when one of its commands runs, not at every start
    from memcli.transport.service import serve as run

    given = {} if idle is None else {"idle": idle}
    run(_paths(), ready=lambda line: _status(line, quiet), **given)


@app.command()
def mcp(
    user: UserOpt = None,
    read_only: Annotated[
        bool,
        typer.Option(
            "--read-only",
            help="Only the tools that change nothing: recall (which then does not reinforce), list_memories, show_memory, portrait, summary.",
        ),
    ] = False,
    http: Annotated[
        bool,
        typer.Option(
            "--http",
            help="Serve the streamable HTTP transport on 127.0.0.1 instead of stdio; every request needs the bearer token of --token-file.",
        ),
    ] = False,
    port: Annotated[int, typer.Option("--port", min=1, max=65535, help="The port of --http (1-65535).")] = 8765,
    token_file: Annotated[
        Optional[Path],
        typer.Option(
            "--token-file",
            metavar="FILE",
            help="The bearer token of --http, made (mode 0600, a random token) when missing. Default: mcp-token in the config folder (memcli paths).",
        ),
    ] = None,
    quiet: QuietOpt = False,
) -> None:
    """Serve your memory to other assistants over the Model Context Protocol (MCP), on stdio: desktop chat apps, coding agents, IDEs.

    Tools: recall, remember, ask, list_memories, show_memory, forget_memory (archives), delete_memory (for good), portrait, summary; resources memcli://USER/portrait, memcli://USER/summary and memcli://USER/running. Each tool runs the verb its command runs, through the memcli service, and returns what that command's --json prints. The user is fixed here (--user, else the 'user' setting): one server per user.

    Example: memcli mcp --user alice --read-only
    """
    # thin client: a command group's modules load when one of its commands runs, not at every start
    from memcli.transport.mcp_server import serve

    serve(
        _paths(), user, read_only, http, port, token_file, _OPTIONS["no_service"], say=lambda line: _status(line, quiet)
    )


service_app = root.MemcliTyper(
    help="Control the memcli service: status, stop, restart.\n\nExample: memcli service status --json",
    no_args_is_help=True,
)
app.add_typer(service_app, name="service")


@service_app.command("status")
def service_status(json_out: JsonOpt = False, quiet: QuietOpt = False) -> None:
    """Show the running service: pid, version, uptime, users loaded, memory, requests served, and why it refuses writes when its device is full (read_mostly). Exit 7 when it is not running.

    Example: memcli service status
    """
    # thin client: a command group's modules load when one of its commands runs, not at every start
    from memcli.library.views import ServiceStatus
    from memcli.transport.client import ServiceClient

    data = ServiceStatus.of(ServiceClient(_paths()).status())
    if json_out:
        _print_json(data)
        return
    for key, value in data.fields():
        if isinstance(value, list):
            value = ", ".join(value) or "-"
        typer.echo(f"{key}: {'-' if value is None else value}")


@service_app.command("stop")
def service_stop(json_out: JsonOpt = False, quiet: QuietOpt = False) -> None:
    """Stop the running service (requests in flight get a few seconds to finish). Not running is not an error.

    Example: memcli service stop
    """
    # thin client: a command group's modules load when one of its commands runs, not at every start
    from memcli.transport.client import ServiceClient

    pid = ServiceClient(_paths()).stop()
    if json_out:
        # thin client: a command group's modules load when one of its commands runs, not at every start
        from memcli.schema import ServiceStop

        _print_json(ServiceStop(stopped=pid is not None, pid=pid))
        return
    _status(f"memcli service (pid {pid}) stopped" if pid is not None else "memcli service is not running", quiet)


@service_app.command("restart")
def service_restart(json_out: JsonOpt = False, quiet: QuietOpt = False) -> None:
    """Stop the service if it runs, and start it again in the background.

    Example: memcli service restart
    """
    # thin client: a command group's modules load when one of its commands runs, not at every start
    from memcli.library.views import ServiceStatus
    from memcli.transport.client import ServiceClient

    client = ServiceClient(_paths())
    client.stop()
    client.start().close()
    data = ServiceStatus.of(client.status())
    if json_out:
        _print_json(data)
        return
    _status(f"memcli service (pid {data.pid}) started", quiet)
