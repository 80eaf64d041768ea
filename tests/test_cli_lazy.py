"""The command line builds only the command that runs: its group is imported from the command
table (``memcli/cli/command_table.py``, generated from the whole app), the root's ``--help``
and the completion of a command name read the table, and nothing they show differs from
what the whole app shows."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import typer
from cli_checks import ok

from memcli.cli import GROUP_MODULES, app, load_all, root
from memcli.cli.command_table import COMMANDS

ROOT = Path(__file__).resolve().parents[1]


def _gen_docs() -> Any:
    # scripts/ is not a package; load the script by path, as `python scripts/gen_docs.py` would.
    spec = importlib.util.spec_from_file_location("gen_docs_lazy", ROOT / "scripts" / "gen_docs.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _full_app() -> dict[str, Any]:
    """Every command of the app, built from the registrations with every group imported."""
    load_all()
    commands: dict[str, Any] = {}
    for info in app.registered_commands:
        command = typer.main.get_command_from_info(
            info, pretty_exceptions_short=True, rich_markup_mode=app.rich_markup_mode
        )
        commands[command.name] = (command, info.callback.__module__)  # type: ignore[union-attr]
    for group in app.registered_groups:
        built = typer.main.get_group_from_info(
            group, pretty_exceptions_short=True, rich_markup_mode=app.rich_markup_mode, suggest_commands=True
        )
        module = group.typer_instance.registered_commands[0].callback.__module__  # type: ignore[union-attr]
        commands[built.name] = (built, module)
    return commands


def _lazy_root() -> Any:
    """The root command as a fresh ``memcli`` process has it: nothing built yet."""
    command = typer.main.get_command(app)
    command.commands = root.LazyCommands({}, root._build_command)
    return command


def _run_python(code: str, tmp_path: Path) -> dict[str, Any]:
    """Run ``code`` in a fresh interpreter (MEMCLI_HOME in ``tmp_path``); the JSON it prints last."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMCLI_")}
    env.update(MEMCLI_HOME=str(tmp_path / "home"), MEMCLI_SERVICE="off", COLUMNS="100")
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, cwd=ROOT, capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


PROBE = """
import contextlib, io, json, sys
from memcli.cli import app
out = io.StringIO()
with contextlib.redirect_stdout(out):
    try:
        app({argv!r}, prog_name="memcli")
    except SystemExit as exc:
        code = exc.code
loaded = sorted(m for m in sys.modules if m.startswith(("memcli.cli.", "rich", "pydantic", "typer.rich_utils")))
print(json.dumps({{"code": code, "stdout": out.getvalue(), "loaded": loaded}}))
"""


def test_the_command_table_holds_every_command_of_the_full_app_with_its_module_and_help_line() -> None:
    full = _full_app()
    assert set(COMMANDS) == set(full)
    gen_docs = _gen_docs()
    assert list(COMMANDS) == [name for name, _ in gen_docs.command_order()]
    for name, (module, help_line, hidden) in COMMANDS.items():
        command, defined_in = full[name]
        assert defined_in == f"memcli.cli.{module}", name
        assert module in GROUP_MODULES
        assert help_line == root.help_line(command), name
        assert hidden == command.hidden, name


def test_the_root_help_read_from_the_table_is_the_help_of_the_full_app(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "100")
    lazy = _lazy_root()
    shown = [
        command.get_help(command.context_class(command, info_name="memcli"))
        for command in (_gen_docs().full_command(), lazy)
    ]
    assert shown[1] == shown[0]
    assert lazy.commands._built == {}  # listed from the table, nothing built
    for name in COMMANDS:
        assert f" {name} " in shown[0]


def test_completing_a_command_name_offers_what_the_full_app_offers() -> None:
    full = _gen_docs().full_command()
    lazy = _lazy_root()
    for incomplete in ("", "re", "co", "e", "-"):
        offered = [
            [(item.value, item.help) for item in group.shell_complete(group.context_class(group), incomplete)]
            for group in (full, lazy)
        ]
        assert offered[0] == offered[1] and offered[0], incomplete
    assert lazy.commands._built == {}


def test_help_imports_no_command_group(tmp_path: Path) -> None:
    result = _run_python(PROBE.format(argv=["--help"]), tmp_path)
    assert result["code"] == 0
    assert [m for m in result["loaded"] if m.startswith("memcli.cli.")] == [
        "memcli.cli.command_table",
        "memcli.cli.root",
    ]
    assert not [m for m in result["loaded"] if m.startswith("pydantic")]
    for name, (_, help_line, _) in COMMANDS.items():
        assert f" {name} " in result["stdout"]
        assert help_line.split()[0] in result["stdout"]


def test_help_is_rendered_without_rich_and_lists_each_command_with_its_whole_help_line(tmp_path: Path) -> None:
    """Click's plain layout: Typer's rich one imports rich's Markdown, Syntax and Traceback
    (about 0.3 CPU-s of every --help), and Click's own list of commands would cut each help
    line at its first full stop."""
    for argv in (["--help"], ["recall", "--help"], ["config", "--help"]):
        result = _run_python(PROBE.format(argv=argv), tmp_path)
        assert result["code"] == 0, argv
        assert "Usage: memcli" in result["stdout"], argv
        assert not [m for m in result["loaded"] if m.startswith(("rich", "typer.rich_utils"))], argv
    # compared without white space: Click's wrap may break a line at a hyphen (--to-folder)
    shown = "".join(_run_python(PROBE.format(argv=["--help"]), tmp_path)["stdout"].split())
    for name, (_, help_line, hidden) in COMMANDS.items():
        assert ("".join(f"{name} {help_line}".split()) in shown) != hidden, name


def test_a_command_imports_only_its_own_group(tmp_path: Path) -> None:
    result = _run_python(PROBE.format(argv=["paths", "--json"]), tmp_path)
    assert result["code"] == 0 and "data_dir" in result["stdout"]
    groups = {m.removeprefix("memcli.cli.") for m in result["loaded"]} & set(GROUP_MODULES)
    assert groups == {"system"}


def test_a_command_not_in_the_table_is_refused_with_a_suggestion(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMCLI_")}
    env.update(MEMCLI_HOME=str(tmp_path / "home"), MEMCLI_SERVICE="off")
    done = subprocess.run(
        [sys.executable, "-m", "memcli", "reca", "x"],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    assert "No such command 'reca'. Did you mean 'recall'?" in done.stderr


SAMPLES: list[Any] = [None, "", "x", "Lyon in 2021", "5", "-3", "+2", "007", " 4", "4 ", "1_000", "1.5", "1.", ".5",
    "-0.25", "1e3", "nan", "inf", "٣", "abc", "\udcff", 0, 7, 2.5, True, False, (), ("a", "b"), ("a", "\udcff"),
    ["x"], 0, 65535, 65536, "65536", "0", "-1"]  # fmt: skip


def _outcome(runtime: Any, value: Any, param: Any, ctx: Any) -> tuple[str, Any]:
    try:
        converted = runtime.coerce(value, param=param, ctx=ctx)
    except Exception as exc:  # the outcome compared is the failure and its message
        return type(exc).__name__, str(exc)
    return type(converted).__name__, repr(converted)  # repr: nan equals nan


def test_plain_values_convert_as_typer_converts(monkeypatch: pytest.MonkeyPatch) -> None:
    from typer._coercion import build_runtime_param

    full = _gen_docs().full_command()
    seen: set[Any] = set()

    def params(command: Any) -> Any:
        ctx = command.context_class(command, info_name=command.name)
        yield from ((param, ctx) for param in command.get_params(ctx))
        for sub in getattr(command, "commands", {}).values():
            yield from params(sub)

    for param, ctx in params(full):
        descriptor = param.type_descriptor
        param._runtime_param = None
        root._plain_values([param])
        plain = param._runtime_param
        if not isinstance(plain, root.PlainValue):
            continue
        seen.add((plain.kind, param.multiple, descriptor.parameter_info.min))
        for value in SAMPLES:
            param._runtime_param = plain
            mine = _outcome(plain, value, param, ctx)
            typer_own = _outcome(build_runtime_param(descriptor), value, param, ctx)
            assert mine == typer_own, (param.name, value)
    assert {kind for kind, _, _ in seen} == {str, int, float, bool}
    assert (str, True, None) in seen and any(minimum is not None for _, _, minimum in seen)


def test_a_bad_value_leaves_the_parameter_its_plain_conversion(runner: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    # The runner of the tests reuses one Click tree a process (conftest), as a service would:
    # Typer's conversion of a bad value must not stay the parameter's for the next invocation.
    converted: list[str] = []
    plain_coerce = root.PlainValue.coerce

    def coerce(self: Any, value: Any, param: Any, ctx: Any) -> Any:
        converted.append(param.name)
        return plain_coerce(self, value, param, ctx)

    monkeypatch.setattr(root.PlainValue, "coerce", coerce)
    ok(runner.invoke(app, ["list", "-n", "1"]))  # imports the command's group: the tree is built again once
    bad = runner.invoke(app, ["list", "-n", "many"])
    assert bad.exit_code == 2 and "Invalid value for '--limit'" in bad.output
    converted.clear()
    good = runner.invoke(app, ["list", "-n", "0", "--json"])
    assert good.exit_code == 0, good.output
    assert "limit" in converted


def test_recall_parses_its_options_without_pydantic(tmp_path: Path) -> None:
    code = (
        "import json, sys\n"
        "import memcli.transport.entry as entry\n"
        "seen = []\n"
        "entry.call = lambda paths, verb, args, *rest, **kw: seen.append((verb, args)) or []\n"
        "from memcli.cli import app\n"
        "try:\n"
        "    app(['recall', 'sister', '-k', '3', '--tag', 'family', '--since', '2024-01-01'], prog_name='memcli')\n"
        "except SystemExit as exc:\n"
        "    code = exc.code\n"
        "print(json.dumps({'code': code, 'seen': seen, 'pydantic': 'pydantic' in sys.modules}))\n"
    )
    result = _run_python(code, tmp_path)
    assert result["code"] == 0
    [(verb, args)] = result["seen"]
    assert verb == "recall" and args["query"] == "sister" and args["k"] == 3 and args["tags"] == ["family"]
    assert args["since"] == "2024-01-01" and args["seed"] is None
    assert result["pydantic"] is False


def test_a_request_through_the_client_imports_no_logging(tmp_path: Path) -> None:
    """The client's path to the service (the command, the entry, the paths) leaves the logging
    package unimported: only the service and a delete for good log."""
    code = (
        "import json, sys\n"
        "import memcli.cli.memory, memcli.transport.entry\n"
        "from memcli.paths import resolve_paths\n"
        "resolve_paths().run_dir\n"
        "print(json.dumps('logging' in sys.modules))\n"
    )
    assert _run_python(code, tmp_path) is False


def test_the_generator_names_a_command_module_missing_from_the_group_list(monkeypatch: pytest.MonkeyPatch) -> None:
    gen_docs = _gen_docs()
    load_all()

    def extra() -> None:
        """A command of a module nobody listed."""

    extra.__module__ = "memcli.cli.extra"
    monkeypatch.setattr(
        app, "registered_commands", [*app.registered_commands, typer.models.CommandInfo(callback=extra)]
    )
    with pytest.raises(SystemExit, match=r"memcli\.cli\.extra registers commands: add it to GROUP_MODULES"):
        gen_docs.command_order()
