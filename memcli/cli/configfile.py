"""Reading and writing the config file (``memcli config``): every setting with where its
value comes from, and changes validated by the ``Settings`` model before they are written.

A change is written whole to a temporary file of mode 0600 beside ``config.toml`` and
moved over it (``memcli.paths.write_private``), so a crash leaves the old file or the new
one, never half of one, and the file is never readable by others. Comments in a file written by hand do
not survive ``set`` or ``unset`` (tomli-w writes plain TOML); ``edit`` keeps the file as
it is typed.

A running service reads the config file again at its next request when the file changed
(``Resources.settings`` keys its cache on the file's mtime and size), so a change takes
effect from the next command; only ``RESTART_KEYS`` are read once, when the service starts.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import tempfile
import tomllib
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memcli.errors import BadInputError, UsageError
from memcli.paths import ENV_PREFIX, Paths, private_dir, read_config_file, write_private

RESTART_KEYS = ("service", "service_idle")
"""Settings a running service reads only when it starts: ``service_idle`` (its idle
timer) and ``service`` ("off" makes commands open the store themselves, which the running
service holds)."""


@dataclass(frozen=True)
class SettingValue:
    """One setting as it is in effect: its value, where that comes from (``default``,
    ``config file``, or the ``MEMCLI_<KEY>`` variable's name), and what it means."""

    key: str
    value: Any
    source: str
    description: str


def _fields() -> dict[str, Any]:
    # thin client: a command group's modules load when one of its commands runs, not at every start
    from memcli.config import Settings

    return dict(Settings.model_fields)


def is_setting(key: str) -> bool:
    """Whether ``key`` names a setting."""
    return key in _fields()


def check_key(key: str) -> str:
    """``key`` when it names a setting. Raises UsageError naming the settings otherwise."""
    if not is_setting(key):
        raise UsageError(f"unknown setting {key!r}; memcli config list shows them all")
    return key


def read_file(paths: Paths) -> dict[str, Any]:
    """The config file's table as written (empty when there is no file).

    Raises BadInputError as ``memcli.paths.read_config_file``; when the file is not UTF-8
    TOML, the message says to fix it with ``memcli config edit``."""
    return read_config_file(paths.config_file, hint=" (fix it with memcli config edit)")


def validate(values: Mapping[str, Any], where: str = "") -> Any:
    """``Settings`` made of ``values`` over the defaults. Raises BadInputError naming the
    first bad key (and ``where`` the values came from, when given)."""
    # thin client: pydantic is slow to import, and memcli starts at every TAB press
    from pydantic import ValidationError

    # thin client: a command group's modules load when one of its commands runs, not at every start
    from memcli.config import Settings

    try:
        return Settings(**values)
    except ValidationError as exc:
        first = exc.errors()[0]
        key = ".".join(str(p) for p in first["loc"]) or "settings"
        raise BadInputError(f"setting {key}: {first['msg']}" + (f" ({where})" if where else "")) from None


def settings_list(paths: Paths, env: Mapping[str, str] | None = None) -> list[SettingValue]:
    """Every setting in effect for a command run with ``env`` (the process environment
    when None), in the order of ``Settings``, with its source. Raises BadInputError as
    ``load_settings`` does when the file or a variable holds a bad value."""
    # thin client: a command group's modules load when one of its commands runs, not at every start
    from memcli.config import load_settings

    env = os.environ if env is None else env
    settings = load_settings(paths, env=dict(env))
    in_file = read_file(paths)
    out = []
    for key, field in _fields().items():
        variable = ENV_PREFIX + key.upper()
        source = variable if env.get(variable) else "config file" if key in in_file else "default"
        out.append(SettingValue(key, getattr(settings, key), source, field.description or ""))
    return out


def setting(paths: Paths, key: str, env: Mapping[str, str] | None = None) -> SettingValue:
    """The setting ``key`` in effect (see ``settings_list``). Raises UsageError for an
    unknown key."""
    check_key(key)
    return next(s for s in settings_list(paths, env) if s.key == key)


def _typed(key: str, text: str) -> Any:
    """``text`` from the command line as the value of ``key``: a table setting
    (``user_decay``) is read as a TOML inline table (``{alice = 0.5}``); the others are
    given as the string and the Settings model converts it ("30" for a number, "true"
    for a flag)."""
    if typing.get_origin(_fields()[key].annotation) is dict:
        try:
            return tomllib.loads(f"value = {text}")["value"]
        except tomllib.TOMLDecodeError:
            raise UsageError(f"setting {key}: give a TOML inline table, e.g. {{alice = 0.5}}, not {text!r}") from None
    return text


def set_value(paths: Paths, key: str, text: str) -> Any:
    """Write ``key = text`` into the config file, after checking that the file with it is
    valid (the other keys as they are in the file, over the defaults). Returns the value
    written, in its type.

    Raises UsageError for an unknown key or a value the setting does not take (the file is
    then unchanged), BadInputError when the file as it is cannot be read."""
    check_key(key)
    values = read_file(paths)
    values[key] = _typed(key, text)
    try:
        settings = validate(values)
    except BadInputError as exc:
        raise UsageError(exc.message) from None
    value = getattr(settings, key)
    values[key] = value
    write_file(paths, values)
    return value


def unset_value(paths: Paths, key: str) -> bool:
    """Remove ``key`` from the config file (it goes back to its default, or its
    ``MEMCLI_*`` variable); returns whether it was there. A key the file holds is removed
    even when it names no setting (left by an older memcli, or a typo). Raises UsageError
    for an unknown key the file does not hold, BadInputError when the file cannot be read."""
    values = read_file(paths)
    if key not in values:
        check_key(key)
        return False
    del values[key]
    write_file(paths, values)
    return True


def write_file(paths: Paths, values: Mapping[str, Any]) -> None:
    """Write ``values`` as the config file, atomically and with mode 0600 in a folder of
    mode 0700 (``memcli.paths.write_private``)."""
    # thin client: needed only to write the config file, and memcli starts at every TAB press
    import tomli_w

    write_private(paths.config_file, tomli_w.dumps(dict(values)))


def _private_copy(path: Path) -> Path:
    """A new file of mode 0600 beside ``path`` (its folder made 0700), holding ``path``'s
    bytes when it is a file, else empty."""
    private_dir(path.parent)
    fd, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".edit", dir=path.parent)  # mkstemp makes it 0600
    with os.fdopen(fd, "wb") as f:
        f.write(path.read_bytes() if path.is_file() else b"")
    return Path(name)


def editor_command(env: Mapping[str, str] | None = None) -> list[str]:
    """The editor to run: ``$VISUAL``, else ``$EDITOR``, else ``vi``, split as a shell
    would (``EDITOR="code --wait"``)."""
    env = os.environ if env is None else env
    return shlex.split(env.get("VISUAL") or env.get("EDITOR") or "vi")


def _run_editor(command: list[str], path: Path) -> None:
    """Run ``command`` on ``path`` and wait. Raises UsageError when it cannot run or fails."""
    try:
        code = subprocess.run([*command, str(path)]).returncode
    except OSError as exc:
        raise UsageError(f"cannot run the editor {command[0]!r} ({exc.strerror}); set VISUAL or EDITOR") from None
    if code != 0:
        raise UsageError(f"the editor {command[0]!r} exited with {code}; nothing was changed")


def edit_text(text: str, env: Mapping[str, str] | None = None) -> str:
    """``text`` as the user leaves it in the editor (``editor_command``), edited in a
    private temporary file (mode 0600, removed after). Raises UsageError as ``_run_editor``."""
    fd, name = tempfile.mkstemp(prefix="memcli-", suffix=".txt")
    path = Path(name)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text + "\n")
        _run_editor(editor_command(env), path)
        return path.read_text(encoding="utf-8")
    finally:
        path.unlink(missing_ok=True)


def edit_file(paths: Paths, again: Callable[[str], bool], env: Mapping[str, str] | None = None) -> bool:
    """Open a copy of the config file in the editor (``editor_command``); when the editor
    exits, check the copy (TOML, then the Settings model) and move it over the config file
    when it is valid. When it is not, ``again(error)`` decides: True opens the copy again,
    False leaves the config file as it was. Returns whether the file changed.

    Raises BadInputError when the copy is invalid and ``again`` gives up, UsageError when
    the editor cannot be run or fails."""
    path = paths.config_file
    if path.exists() and not path.is_file():
        raise BadInputError(f"config file {path} is not a file")
    copy = _private_copy(path)
    try:
        before = copy.read_bytes()
        command = editor_command(env)
        while True:
            _run_editor(command, copy)
            try:
                values = tomllib.loads(copy.read_text(encoding="utf-8"))
                validate(values, str(path))
                break
            except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
                error = f"{path}: {exc}"
            except BadInputError as exc:
                error = exc.message
            if not again(error):
                raise BadInputError(f"{error}; {path} is unchanged")
        if copy.read_bytes() == before:
            return False
        with open(copy, "rb") as f:
            os.fsync(f.fileno())
        os.replace(copy, path)
        return True
    finally:
        copy.unlink(missing_ok=True)


def restart_notice(paths: Paths, keys: list[str]) -> str | None:
    """What to tell after ``keys`` changed, when a running service reads one of them only
    at its start (``RESTART_KEYS``); None when nothing needs doing."""
    changed = [k for k in keys if k in RESTART_KEYS]
    if not changed:
        return None
    # thin client: a command group's modules load when one of its commands runs, not at every start
    from memcli.transport.client import ServiceClient

    pid = ServiceClient(paths).pid()
    if pid is None:
        return None
    return (
        f"the running memcli service (pid {pid}) read {', '.join(changed)} when it started; "
        "run memcli service restart (or memcli service stop) for the change to take effect"
    )
