"""The ``graph`` group: the graph memory (issue 26, Mem0g), the people, places and things
of a user's life and the relations between them, as consolidation read them."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Optional

import typer

import memcli.cli.root as root
from memcli.cli.root import JsonOpt, QuietOpt, UserOpt, _call, _print_json, _status, app

graph_app = root.MemcliTyper(
    help="The graph memory: entities and the relations between them, with the days they held.\n\nExample: memcli graph show Caroline",
    no_args_is_help=True,
)
app.add_typer(graph_app, name="graph")


def _complete_entity(ctx: typer.Context, incomplete: str) -> list[tuple[str, str]]:
    return root._completions("entity", incomplete, ctx.params.get("user"))


NameArg = Annotated[
    Optional[str],
    typer.Argument(
        help="An entity's name or alias (default: you).", show_default=False, autocompletion=_complete_entity
    ),
]


def _span(relation: Any) -> str:
    if relation.valid_to:
        return f"{relation.valid_from or '?'} to {relation.valid_to}"
    return f"since {relation.valid_from}" if relation.valid_from else "current"


@graph_app.command("show")
def show(
    name: NameArg = None,
    at: Annotated[
        Optional[str], typer.Option("--at", metavar="DATE", help="As of this date: only the relations that held then.")
    ] = None,
    depth: Annotated[int, typer.Option("--depth", help="Neighbours up to this many edges away.")] = 1,
    user: UserOpt = None,
    json_out: JsonOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """Show an entity: its aliases, its relations (current and past, with their days and source ids) and its neighbours.

    Example: memcli graph show Caroline --at 2023-06-01
    """
    found = _call("graph.show", {"name": name, "user": user, "at": at, "depth": depth}, quiet)
    if json_out:
        _print_json(found)
        return
    entity = found.entity
    aliases = f" (also {', '.join(entity.aliases)})" if entity.aliases else ""
    role = f", {entity.role}" if entity.role else ""
    typer.echo(
        f"{entity.name} [{entity.type}{role}]{aliases}: mentioned in {entity.mentions} memories"
        + (f", as of {found.at}" if found.at else "")
    )
    for relation in found.relations:
        state = "" if relation.current else " (ended)"
        typer.echo(
            f"  {relation.subject} — {relation.phrase} — {relation.object}, {_span(relation)}{state}  "
            f"[{relation.count}x: {' '.join(s[:8] for s in relation.sources[:5])}{' …' if len(relation.sources) > 5 else ''}]"
        )
    if found.neighbours:
        typer.echo("neighbours:")
    for near in found.neighbours:
        typer.echo(f"  {'  ' * (near.depth - 1)}{near.name} [{near.type}] {near.relation} ({near.count})")


@graph_app.command("list")
def list_(
    type: Annotated[
        Optional[str], typer.Option("--type", help="Only this type: person, place, organisation, pet, work, event.")
    ] = None,
    user: UserOpt = None,
    json_out: JsonOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """List the entities of the graph memory, most mentioned first: mentions, type, name, aliases.

    Example: memcli graph list --type place
    """
    entities = _call("graph.list", {"user": user, "type": type}, quiet)
    if json_out:
        _print_json(entities)
        return
    for entity in entities:
        aliases = f" (also {', '.join(entity.aliases)})" if entity.aliases else ""
        typer.echo(f"{entity.mentions:>5}  {entity.type:<12} {entity.name}{aliases}")
    if not entities:
        _status("no entities yet: memcli consolidate reads them from your memories", quiet)


@graph_app.command("export")
def export(
    format: Annotated[
        str, typer.Option("--format", "-f", help="graphml, gexf, json (node-link) or dot (through pydot).")
    ] = "graphml",
    output: Annotated[
        Optional[Path], typer.Option("--output", "-o", help="Write to this file (default: standard output).")
    ] = None,
    user: UserOpt = None,
    json_out: JsonOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """Export the graph memory with networkx's writers, for Gephi, yEd, Graphviz or a script.

    Example: memcli graph export --format gexf -o life.gexf
    """
    found = _call("graph.export", {"user": user, "format": format}, quiet)
    if json_out:
        _print_json(found)
        return
    if output is None:
        typer.echo(found.text)
        return
    output.write_text(found.text + "\n", encoding="utf-8")
    _status(f"wrote {found.nodes} entities and {found.edges} relations to {output}", quiet)


@graph_app.command("merge")
def merge(
    name: Annotated[
        str,
        typer.Argument(
            help="The entity to merge (its name becomes an alias).", show_default=False, autocompletion=_complete_entity
        ),
    ],
    into: Annotated[str, typer.Argument(help="The entity it is.", show_default=False, autocompletion=_complete_entity)],
    user: UserOpt = None,
    json_out: JsonOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """Merge two entities that are one person, place or thing (memcli never merges on similarity alone).

    Example: memcli graph merge Mel Melanie
    """
    entity = _call("graph.merge", {"name": name, "into": into, "user": user}, quiet)
    if json_out:
        _print_json(entity)
        return
    typer.echo(f"{entity.name}: also {', '.join(entity.aliases)}; mentioned in {entity.mentions} memories")


@graph_app.command("rename")
def rename(
    name: Annotated[
        str, typer.Argument(help="The entity's name or alias.", show_default=False, autocompletion=_complete_entity)
    ],
    new: Annotated[str, typer.Argument(help="Its new name (the old one stays an alias).", show_default=False)],
    user: UserOpt = None,
    json_out: JsonOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """Rename an entity; the old name stays an alias.

    Example: memcli graph rename "Mel" "Melanie Rivera"
    """
    entity = _call("graph.rename", {"name": name, "new": new, "user": user}, quiet)
    if json_out:
        _print_json(entity)
        return
    typer.echo(f"{entity.name}: also {', '.join(entity.aliases)}")
