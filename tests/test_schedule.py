"""``memcli schedule`` (crontab lines, systemd user timers, launchd agents, with this memcli's
absolute path; ``--install`` through a stand-in ``crontab`` on PATH), ``--quiet`` on the
scheduled commands (nothing printed unless something failed) and ``memcli uninstall``."""

from __future__ import annotations

import json
import os
import shlex
import stat
from pathlib import Path
from typing import Any

import pytest
from cli_checks import ok
from typer.testing import CliRunner

from memcli.cli import app

CRONTAB = """#!/bin/sh
# A stand-in for crontab(1): the table is a file.
table="$CRONTAB_FILE"
if [ "$1" = "-l" ]; then
    if [ -f "$table" ]; then cat "$table"; else echo "no crontab for $(id -un)" >&2; exit 1; fi
elif [ "$1" = "-" ]; then
    cat > "$table"
else
    exit 2
fi
"""


@pytest.fixture
def crontab(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The file the stand-in ``crontab`` keeps the table in; HOME and XDG_CONFIG_HOME under tmp_path."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "crontab").write_text(CRONTAB, encoding="utf-8")
    (bin_dir / "crontab").chmod(stat.S_IRWXU)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("CRONTAB_FILE", str(tmp_path / "crontab.txt"))
    monkeypatch.setenv("HOME", str(tmp_path / "user"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "user" / ".config"))
    return tmp_path / "crontab.txt"


def _jobs(block: str) -> list[list[str]]:
    """The command lines of the crontab lines in ``block`` (the five time fields dropped)."""
    return [shlex.split(line)[5:] for line in block.splitlines() if line and not line.startswith("#")]


def test_schedule_prints_crontab_lines_that_run_this_memcli_by_its_absolute_path(
    memcli_home: Path, runner: CliRunner, crontab: Path
) -> None:
    result = ok(runner.invoke(app, ["schedule"]))
    jobs = _jobs(result.stdout)
    assert len(jobs) == 3
    for argv in jobs:
        env, command = argv[0], argv[1:]
        assert env == f"MEMCLI_HOME={memcli_home}"
        assert os.path.isabs(command[0]) and os.access(command[0], os.X_OK), command
        assert command[-1] == "--quiet"
    verbs = [next(word for word in argv[2:] if not word.startswith("-")) for argv in jobs]
    assert sorted(verbs) == ["consolidate", "export", "forget"]
    assert result.stderr == ""


def test_schedule_install_replaces_its_own_block_and_keeps_the_rest_and_uninstall_takes_it_out(
    memcli_home: Path, runner: CliRunner, crontab: Path, fake_embedder: Any
) -> None:
    crontab.write_text("MAILTO=me@example.org\n15 * * * *  /usr/bin/true\n", encoding="utf-8")
    ok(runner.invoke(app, ["schedule", "--install"]))
    ok(runner.invoke(app, ["schedule", "--install", "--backup", str(memcli_home.parent / "b.jsonl")]))
    table = crontab.read_text(encoding="utf-8")
    assert table.startswith("MAILTO=me@example.org\n15 * * * *  /usr/bin/true\n")
    assert table.count("# memcli schedule: begin") == 1 and len([j for j in _jobs(table) if "--quiet" in j]) == 3
    assert str(memcli_home.parent / "b.jsonl") in table

    ok(runner.invoke(app, ["remember", "I keep bees"]))
    assert memcli_home.is_dir()
    done = ok(runner.invoke(app, ["uninstall", "--yes"]))
    assert crontab.read_text(encoding="utf-8") == "MAILTO=me@example.org\n15 * * * *  /usr/bin/true\n"
    assert not memcli_home.exists()
    assert "pip uninstall memcli" in done.stderr


def test_schedule_systemd_prints_a_service_and_a_timer_a_job(
    memcli_home: Path, runner: CliRunner, crontab: Path
) -> None:
    out = ok(runner.invoke(app, ["schedule", "--systemd"])).stdout
    headers = [line[2:] for line in out.splitlines() if line.startswith("# /")]
    assert sorted(Path(h).name for h in headers) == sorted(
        f"memcli-{job}.{kind}" for job in ("backup", "consolidate", "forget") for kind in ("service", "timer")
    )
    starts = [line.removeprefix("ExecStart=") for line in out.splitlines() if line.startswith("ExecStart=")]
    assert len(starts) == 3 and all(os.path.isabs(shlex.split(s)[0]) for s in starts)
    assert "OnCalendar=Sun *-*-* 04:00:00" in out


def test_uninstall_without_a_terminal_needs_yes(memcli_home: Path, runner: CliRunner, fake_embedder: Any) -> None:
    ok(runner.invoke(app, ["remember", "I keep bees"]))
    refused = runner.invoke(app, ["uninstall"])
    assert refused.exit_code == 2 and "--yes" in refused.stderr
    assert memcli_home.is_dir()
    listed = ok(runner.invoke(app, ["uninstall", "--dry-run"])).stdout.split()
    assert str(memcli_home / "data") in listed


def test_quiet_consolidate_and_forget_print_nothing_when_they_worked(
    memcli_home: Path, runner: CliRunner, fake_model: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMCLI_CONSOLIDATION", "extractive")
    turns = tmp_path / "turns.jsonl"
    lines = [
        {"role": "user", "content": "I moved to Lyon last spring.", "timestamp": "2025-03-01T10:00:00"},
        {"role": "assistant", "content": "How do you like Lyon?", "timestamp": "2025-03-01T10:00:05"},
    ]
    turns.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    ok(runner.invoke(app, ["import", str(turns), "--quiet"]))
    for argv in (["consolidate", "--all-users"], ["consolidate"], ["forget", "--all-users"]):
        result = ok(runner.invoke(app, [*argv, "--quiet"]))
        assert (result.stdout, result.stderr) == ("", ""), argv
    loud = ok(runner.invoke(app, ["forget"]))
    assert loud.stdout.startswith("examined ")
