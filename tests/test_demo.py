"""The first steps of a new user: the demo conversation that ships in the package, and a
first command that fails without leaving a service behind that it started for itself."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from memcli.cli import app
from memcli.paths import resolve_paths
from memcli.transport.client import ServiceClient

TESTS = Path(__file__).resolve().parent


def test_import_demo_loads_the_packaged_conversation_for_the_demo_user(runner: CliRunner, fake_embedder: Any) -> None:
    """``import --demo`` needs no file: the conversation ships with memcli, for user ``demo``;
    importing it again adds nothing."""
    first = runner.invoke(app, ["import", "--demo"])
    assert first.exit_code == 0, first.output
    assert "for demo (24)" in first.stdout
    again = runner.invoke(app, ["import", "--demo"])
    assert "imported 0 new memories (24 already stored)" in again.stdout
    recalled = runner.invoke(app, ["recall", "--user", "demo", "pottery class", "-k", "1"])
    assert "I started a pottery class yesterday" in recalled.stdout


def test_import_takes_a_file_or_demo_not_both_nor_neither(
    runner: CliRunner, fake_embedder: Any, tmp_path: Path
) -> None:
    notes = tmp_path / "notes.md"
    notes.write_text("A note.\n", encoding="utf-8")
    for argv in (["import"], ["import", str(notes), "--demo"]):
        result = runner.invoke(app, argv)
        assert result.exit_code == 2
        assert "give the file to import, or --demo" in result.stderr


def _cli(home: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMCLI_")} | {"MEMCLI_HOME": str(home)}
    return subprocess.run(
        [sys.executable, str(TESTS / "fakes"), "cli", "--", *argv],
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
        stdin=subprocess.DEVNULL,
    )


def test_a_failed_first_command_leaves_no_service_it_started(memcli_home: Path, tmp_path: Path) -> None:
    """The first command starts the service; when it fails (here: no such file), the service
    it started for itself alone is stopped. A service that served others stays."""
    paths = resolve_paths({"MEMCLI_HOME": str(memcli_home)})
    failed = _cli(memcli_home, "import", str(tmp_path / "missing.json"))
    assert failed.returncode == 5, failed.stderr
    assert ServiceClient(paths).pid() is None
    try:
        assert _cli(memcli_home, "remember", "a first note").returncode == 0
        pid = ServiceClient(paths).pid()
        assert pid is not None
        assert _cli(memcli_home, "import", str(tmp_path / "missing.json")).returncode == 5
        assert ServiceClient(paths).pid() == pid
    finally:
        ServiceClient(paths).stop()
