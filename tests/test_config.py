"""Settings (defaults < config.toml < MEMCLI_* env < explicit overrides), their errors,
memcli's paths, and the MEMCLI_NOW clock."""

from __future__ import annotations

import time
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from memcli.cli import app
from memcli.config import Paths, Settings, load_settings, resolve_paths
from memcli.dates import clock_from_env
from memcli.errors import BadInputError, ExitCode, UsageError


def paths_in(root: Path) -> Paths:
    return resolve_paths({"MEMCLI_HOME": str(root)})


def write_config(paths: Paths, text: str) -> Path:
    paths.config_dir.mkdir(parents=True, exist_ok=True)
    paths.config_file.write_text(text, encoding="utf-8")
    return paths.config_file


# precedence --------------------------------------------------------------------------


def test_defaults_apply_without_config_or_env(tmp_path: Path) -> None:
    settings = load_settings(paths_in(tmp_path), env={})
    defaults = {name: field.get_default(call_default_factory=True) for name, field in Settings.model_fields.items()}
    assert settings.model_dump() == defaults


def test_config_file_overrides_defaults(tmp_path: Path) -> None:
    paths = paths_in(tmp_path)
    write_config(paths, 'user = "alice"\nrecall_k = 9\ntemperature = 0.1\n')
    settings = load_settings(paths, env={})
    assert (settings.user, settings.recall_k, settings.temperature) == ("alice", 9, 0.1)
    assert settings.history_turns == Settings.model_fields["history_turns"].default


def test_env_overrides_config_file(tmp_path: Path) -> None:
    paths = paths_in(tmp_path)
    write_config(paths, 'user = "alice"\nrecall_k = 9\n')
    settings = load_settings(paths, env={"MEMCLI_USER": "bob", "MEMCLI_LOCK_TIMEOUT": "2.5"})
    assert settings.user == "bob"
    assert settings.recall_k == 9
    assert settings.lock_timeout == 2.5


def test_explicit_override_beats_env_and_file(tmp_path: Path) -> None:
    paths = paths_in(tmp_path)
    write_config(paths, 'model = "/from/file.gguf"\nuser = "alice"\n')
    env = {"MEMCLI_MODEL": "/from/env.gguf", "MEMCLI_USER": "bob"}
    settings = load_settings(paths, env=env, model="/from/option.gguf", user=None)
    assert settings.model == "/from/option.gguf"
    assert settings.user == "bob"  # an override of None is an option not given


def test_empty_env_value_is_ignored(tmp_path: Path) -> None:
    paths = paths_in(tmp_path)
    write_config(paths, 'user = "alice"\n')
    assert load_settings(paths, env={"MEMCLI_USER": ""}).user == "alice"


def test_a_given_environment_is_read_instead_of_the_process_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the service builds a request's settings from the client's variables, not its own
    monkeypatch.setenv("MEMCLI_USER", "service")
    assert load_settings(paths_in(tmp_path), env={"MEMCLI_HISTORY_TURNS": "2"}).user == "tester"
    assert load_settings(paths_in(tmp_path), env={"MEMCLI_USER": "client"}).user == "client"


def test_only_variables_spelled_in_capitals_are_read(tmp_path: Path) -> None:
    assert load_settings(paths_in(tmp_path), env={"memcli_user": "bob", "Memcli_User": "carol"}).user == "tester"


def test_a_table_setting_is_read_from_json_in_the_environment(tmp_path: Path) -> None:
    assert load_settings(paths_in(tmp_path), env={"MEMCLI_USER_DECAY": '{"alice": 0.5}'}).user_decay == {"alice": 0.5}
    with pytest.raises(BadInputError, match="^MEMCLI_USER_DECAY="):
        load_settings(paths_in(tmp_path), env={"MEMCLI_USER_DECAY": "{alice = 0.5}"})


def test_settings_without_load_settings_are_the_values_over_the_defaults(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMCLI_RECALL_K", "9")
    assert Settings(user="ana").model_dump() == {**Settings.model_validate({}).model_dump(), "user": "ana"}


def test_process_environment_is_read_by_default(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMCLI_HISTORY_TURNS", "3")
    assert load_settings(paths_in(tmp_path)).history_turns == 3


def test_config_file_is_read_by_the_cli(runner: CliRunner, fake_embedder: Any, memcli_home: Path) -> None:
    write_config(resolve_paths(), 'user = "carol"\n')
    memory_id = runner.invoke(app, ["remember", "carol's note"]).stdout.strip()
    shown = runner.invoke(app, ["show", memory_id])
    assert shown.exit_code == 0
    assert "user: carol" in shown.stdout


# errors -------------------------------------------------------------------------------


def test_unknown_key_in_config_file_names_the_file(tmp_path: Path) -> None:
    paths = paths_in(tmp_path)
    path = write_config(paths, 'user = "alice"\ncolour = "blue"\n')
    with pytest.raises(BadInputError) as info:
        load_settings(paths, env={})
    assert str(path) in info.value.message and "colour" in info.value.message


def test_invalid_toml_names_the_file(tmp_path: Path) -> None:
    paths = paths_in(tmp_path)
    path = write_config(paths, 'user = "alice\nrecall_k = \n')
    with pytest.raises(BadInputError) as info:
        load_settings(paths, env={})
    assert str(path) in info.value.message


@pytest.mark.parametrize(
    ("toml", "key"),
    [
        ("temperature = 5.0", "temperature"),
        ("recall_k = 51", "recall_k"),
        ("n_ctx = 100", "n_ctx"),
        ("lock_timeout = -1", "lock_timeout"),
        ('user = ""', "user"),
    ],
)
def test_out_of_range_value_in_config_file_is_bad_input(tmp_path: Path, toml: str, key: str) -> None:
    paths = paths_in(tmp_path)
    write_config(paths, toml + "\n")
    with pytest.raises(BadInputError) as info:
        load_settings(paths, env={})
    assert key in info.value.message


@pytest.mark.parametrize(
    ("name", "value"), [("MEMCLI_RECALL_K", "-3"), ("MEMCLI_MAX_TOKENS", "0"), ("MEMCLI_N_CTX", "lots")]
)
def test_bad_env_value_is_bad_input_naming_the_variable(tmp_path: Path, name: str, value: str) -> None:
    with pytest.raises(BadInputError) as info:
        load_settings(paths_in(tmp_path), env={name: value})
    assert name in info.value.message


def test_bad_override_is_bad_input(tmp_path: Path) -> None:
    with pytest.raises(BadInputError, match="temperature"):
        load_settings(paths_in(tmp_path), env={}, temperature=3.0)


def test_bad_config_file_fails_the_cli_with_one_line(runner: CliRunner, fake_embedder: Any) -> None:
    path = write_config(resolve_paths(), "colour = 1\n")
    result = runner.invoke(app, ["remember", "x"])
    assert result.exit_code == int(ExitCode.BAD_INPUT)
    assert "Traceback" not in result.stdout + result.stderr
    assert len(result.stderr.splitlines()) == 1 and str(path) in result.stderr


def test_bad_env_setting_fails_the_cli_with_one_line(
    runner: CliRunner, fake_embedder: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMCLI_LOCK_TIMEOUT", "soon")
    result = runner.invoke(app, ["list"])
    assert result.exit_code == int(ExitCode.BAD_INPUT)
    assert len(result.stderr.splitlines()) == 1 and "MEMCLI_LOCK_TIMEOUT" in result.stderr


# paths ----------------------------------------------------------------------------------


def test_memcli_home_puts_config_data_and_cache_under_it(tmp_path: Path) -> None:
    paths = resolve_paths({"MEMCLI_HOME": str(tmp_path / "h")})
    root = tmp_path / "h"
    assert paths.config_dir.parent == root and paths.data_dir.parent == root and paths.cache_dir.parent == root
    assert len({paths.config_dir, paths.data_dir, paths.cache_dir}) == 3
    listed = paths.as_dict()
    assert not Path(listed.pop("embedder_exports_dir")).is_relative_to(root)  # every home's, not under one
    for name, value in listed.items():
        assert Path(value).is_relative_to(root), name


def test_memcli_home_expands_the_tilde(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    paths = resolve_paths({"MEMCLI_HOME": "~/memories"})
    assert paths.data_dir.is_relative_to(tmp_path / "memories")


def test_without_memcli_home_paths_follow_the_platform_dirs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xc"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xd"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xk"))
    paths = resolve_paths({})
    assert paths.config_dir == tmp_path / "xc" / "memcli"
    assert paths.data_dir == tmp_path / "xd" / "memcli"
    assert paths.cache_dir == tmp_path / "xk" / "memcli"


# clock ----------------------------------------------------------------------------------


def test_memcli_now_fixes_the_clock() -> None:
    clock = clock_from_env({"MEMCLI_NOW": "2023-05-08T13:56:00"})
    expected = datetime(2023, 5, 8, 13, 56).timestamp()
    assert clock() == expected
    assert clock() == expected


def test_memcli_now_with_a_timezone(tmp_path: Path) -> None:
    clock = clock_from_env({"MEMCLI_NOW": "2023-05-08T12:00:00+02:00"})
    assert clock() == datetime.fromisoformat("2023-05-08T10:00:00+00:00").timestamp()


def test_without_memcli_now_the_clock_is_the_real_time() -> None:
    clock = clock_from_env({})
    before = time.time()
    now = clock()
    assert before <= now <= time.time()


def test_unreadable_memcli_now_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="MEMCLI_NOW"):
        clock_from_env({"MEMCLI_NOW": "next tuesday"})


def test_memcli_now_dates_what_the_cli_stores(
    runner: CliRunner, fake_embedder: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMCLI_NOW", "2021-12-31T23:00:00")
    memory_id = runner.invoke(app, ["remember", "new year's eve plans"]).stdout.strip()
    shown = runner.invoke(app, ["show", memory_id])
    assert "day: 2021-12-31" in shown.stdout
    fields = dict(line.split(": ", 1) for line in shown.stdout.splitlines())
    created = datetime.fromisoformat(fields["created_at"])
    assert created.utcoffset() is not None
    assert created == datetime(2021, 12, 31, 23).astimezone()
