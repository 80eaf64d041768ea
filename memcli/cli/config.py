"""The ``config`` group: show and change the settings."""

from __future__ import annotations

import json
import os
from typing import Annotated, Any

import typer

import memcli.cli.root as root
from memcli.cli.root import (
    JsonOpt,
    QuietOpt,
    _paths,
    _print_json,
    _status,
    app,
)

config_app = root.MemcliTyper(
    help="Show and change the settings: defaults, the config file, MEMCLI_* variables.\n\n"
    "set and unset rewrite the config file (atomically, mode 0600) after checking the new value; a running service "
    "uses the change from its next request (service and service_idle: after memcli service restart).\n\n"
    "Example: memcli config set recall_k 8",
    no_args_is_help=True,
)
app.add_typer(config_app, name="config")


def _complete_key(incomplete: str) -> list[tuple[str, str]]:
    # thin client: a command group's modules load when one of its commands runs, not at every start
    from memcli.config import Settings

    return [
        (key, field.description or "") for key, field in Settings.model_fields.items() if key.startswith(incomplete)
    ]


KeyArg = Annotated[
    str,
    typer.Argument(
        metavar="KEY", help="A setting's name (memcli config list shows them).", autocompletion=_complete_key
    ),
]


def _setting_out(found: Any) -> Any:
    # thin client: a command group's modules load when one of its commands runs, not at every start
    from memcli.schema import ConfigSetting

    return ConfigSetting(key=found.key, value=found.value, source=found.source, description=found.description)


def _setting_text(value: Any) -> str:
    """A setting's value as ``config get`` prints it: a string as it is, the rest as JSON."""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _after_change(keys: list[str], quiet: bool) -> None:
    """Status lines after ``keys`` changed in the config file: a variable that still
    overrides one, and a running service that reads one only at its start."""
    # thin client: a command group's modules load when one of its commands runs, not at every start
    from memcli.cli.configfile import restart_notice
    from memcli.paths import ENV_PREFIX

    for key in keys:
        if os.environ.get(ENV_PREFIX + key.upper()):
            _status(
                f"memcli: note: {ENV_PREFIX}{key.upper()} is set in this environment and overrides the config file",
                quiet,
            )
    notice = restart_notice(_paths(), keys)
    if notice:
        _status(f"memcli: {notice}", quiet)


@config_app.command("list")
def config_list(json_out: JsonOpt = False, quiet: QuietOpt = False) -> None:
    """Show every setting: key, value, and where the value comes from (default, config file, or the MEMCLI_* variable).

    Example: memcli config list --json
    """
    # thin client: a command group's modules load when one of its commands runs, not at every start
    from memcli.cli.configfile import settings_list

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
    # thin client: a command group's modules load when one of its commands runs, not at every start
    from memcli.cli.configfile import setting

    found = setting(_paths(), key)
    if json_out:
        _print_json(_setting_out(found))
        return
    typer.echo(_setting_text(found.value))


@config_app.command("set")
def config_set(
    key: KeyArg,
    value: Annotated[
        str,
        typer.Argument(
            metavar="VALUE",
            help="The new value: a number, true/false, a word; user_decay: a TOML table such as '{alice = 0.5}'.",
        ),
    ],
    json_out: JsonOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """Set a setting in the config file, after checking it as every command will (an unknown key or a bad value: exit 2, file unchanged).

    Example: memcli config set time_unit hour
    """
    # thin client: a command group's modules load when one of its commands runs, not at every start
    from memcli.cli.configfile import set_value, setting

    old_user = _old_user() if key == "user" else None
    written = set_value(_paths(), key, value)
    if json_out:
        _print_json(_setting_out(setting(_paths(), key)))
    _status(f"{key} = {_setting_text(written)} in {_paths().config_file}", quiet or json_out)
    if old_user is not None:
        _warn_user_without_memories(str(written), old_user, quiet)
    _after_change([key], quiet)


def _old_user() -> tuple[str, bool] | None:
    """The ``user`` setting before a change, and whether it is the login-name default; None
    when the settings cannot be read (``set`` then says why)."""
    # thin client: a command group's modules load when one of its commands runs, not at every start
    from memcli.cli.configfile import setting
    from memcli.errors import MemcliError

    try:
        found = setting(_paths(), "user")
    except MemcliError:
        return None
    return str(found.value), found.source == "default"


def _warn_user_without_memories(new: str, old_user: tuple[str, bool], quiet: bool) -> None:
    """Warn when ``new`` has no memories and the user commands used before has: every
    memory would seem gone from list and recall. The user before is the old setting, or
    "default" when that was the store's only user and the setting only the login-name
    default. Counts come from the recall index as shell completion reads it (no engine)."""
    # thin client: a command group's modules load when one of its commands runs, not at every start
    from memcli.cli.completion import read_candidates
    from memcli.config import LEGACY_USER

    counts = {name: int(help.split()[0]) for name, help in read_candidates(_paths(), "user")}  # help: "N memories"
    old, by_default = old_user
    if by_default and list(counts) == [LEGACY_USER]:
        old = LEGACY_USER
    if new != old and not counts.get(new) and counts.get(old):
        _status(
            f"warning: user {new!r} has no memories; {old!r} has {counts[old]} (they are kept: --user {old} reads them, "
            f"'memcli config set user {old}' goes back)",
            quiet,
        )


@config_app.command("unset")
def config_unset(key: KeyArg, json_out: JsonOpt = False, quiet: QuietOpt = False) -> None:
    """Remove a setting from the config file: it goes back to its default (or its MEMCLI_* variable). A key of the file that names no setting is removed too (--json: null).

    Example: memcli config unset model
    """
    # thin client: a command group's modules load when one of its commands runs, not at every start
    from memcli.cli.configfile import is_setting, setting, unset_value

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
    # thin client: a command group's modules load when one of its commands runs, not at every start
    from memcli.cli.configfile import edit_file, read_file, settings_list

    paths = _paths()
    before = read_file(paths)

    def again(error: str) -> bool:
        typer.echo(f"memcli: {error}", err=True)
        return root._interactive() and typer.confirm("edit it again?", default=True, err=True)

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
        # thin client: a command group's modules load when one of its commands runs, not at every start
        from memcli.schema import ConfigPath

        _print_json(ConfigPath(path=str(path), exists=path.is_file()))
        return
    typer.echo(str(path))
