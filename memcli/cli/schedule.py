"""Commands that set memcli up on this machine and take it away: ``schedule`` (the nightly
consolidation, the weekly forgetting pass and the nightly backup, for cron, systemd user
timers or a launchd agent) and ``uninstall`` (the schedule, the service and every folder
``memcli paths`` lists)."""

from __future__ import annotations

import os
import platform
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Optional

import typer

from memcli.cli.root import JsonOpt, QuietOpt, _confirm, _interactive, _paths, _print_json, _status, app
from memcli.errors import MemcliError, UsageError

CRON_BEGIN = "# memcli schedule: begin (memcli schedule --install writes this block; memcli uninstall removes it)"
CRON_END = "# memcli schedule: end"
UNIT_PREFIX = "memcli-"
LAUNCHD_PREFIX = "org.memcli."


@dataclass(frozen=True)
class Job:
    """One scheduled memcli run: its name, its arguments after ``memcli``, and when (cron's
    five fields, and the same as a systemd ``OnCalendar`` and a launchd calendar interval)."""

    name: str
    argv: tuple[str, ...]
    minute: int
    hour: int
    weekday: int | None = None
    """0 Sunday ... 6 Saturday, as cron counts; None: every day."""

    @property
    def cron_time(self) -> str:
        return f"{self.minute} {self.hour} * * {'*' if self.weekday is None else self.weekday}"

    @property
    def on_calendar(self) -> str:
        day = "" if self.weekday is None else ("Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat")[self.weekday] + " "
        return f"{day}*-*-* {self.hour:02d}:{self.minute:02d}:00"


def jobs(backup: Path) -> list[Job]:
    """The nightly backup (03:00, before anything changes the store), the nightly
    consolidation (03:30) and the weekly forgetting pass (Sunday 04:00), every user's,
    each with ``--quiet`` (nothing printed unless it failed, so cron mails only failures)."""
    return [
        Job("backup", ("export", "--all-users", "--history", "-o", str(backup), "--quiet"), 0, 3),
        Job("consolidate", ("consolidate", "--all-users", "--quiet"), 30, 3),
        Job("forget", ("forget", "--all-users", "--quiet"), 0, 4, weekday=0),
    ]


def memcli_command() -> list[str]:
    """This memcli as an absolute command line that cron, systemd and launchd can run (they
    do not have the shell's PATH): the ``memcli`` console script beside this Python when
    there is one, else this Python with ``-P -m memcli`` (``-P``: a folder named memcli in
    the job's working directory must not shadow the package). The interpreter's path is
    kept as it is, not resolved: a virtual environment's python is a symbolic link."""
    python = Path(os.path.abspath(sys.executable))
    script = python.parent / "memcli"
    if script.is_file() and os.access(script, os.X_OK):
        return [str(script)]
    return [str(python), "-P", "-m", "memcli"]


def job_environment() -> dict[str, str]:
    """The variables each job runs with: ``MEMCLI_HOME`` when this command has it (a job
    does not inherit the shell's environment; settings belong in the config file)."""
    home = os.environ.get("MEMCLI_HOME")
    return {"MEMCLI_HOME": os.path.abspath(os.path.expanduser(home))} if home else {}


def crontab_block(command: list[str], env: dict[str, str], backup: Path) -> str:
    """The crontab lines, between the markers that ``--install`` and ``uninstall`` find them by."""
    prefix = "".join(f"{key}={shlex.quote(value)} " for key, value in env.items())
    lines = [CRON_BEGIN]
    for job in jobs(backup):
        lines.append(f"{job.cron_time}  {prefix}{shlex.join([*command, *job.argv])}")
    lines.append(CRON_END)
    return "\n".join(lines) + "\n"


def without_block(crontab: str) -> str:
    """``crontab`` without the memcli block (every block, should there be several)."""
    kept, inside = [], False
    for line in crontab.splitlines(keepends=True):
        if line.rstrip("\n") == CRON_BEGIN:
            inside = True
        elif inside and line.rstrip("\n") == CRON_END:
            inside = False
        elif not inside:
            kept.append(line)
    return "".join(kept)


def systemd_units(command: list[str], env: dict[str, str], backup: Path) -> dict[str, str]:
    """File name -> text of the systemd user units: a oneshot service and a timer a job
    (``Persistent=true``: a run missed while the machine was off happens at the next boot)."""
    units = {}
    for job in jobs(backup):
        environment = "".join(f"Environment={shlex.quote(f'{k}={v}')}\n" for k, v in env.items())
        units[f"{UNIT_PREFIX}{job.name}.service"] = (
            f"[Unit]\nDescription=memcli {job.name}\n\n[Service]\nType=oneshot\n{environment}"
            f"ExecStart={shlex.join([*command, *job.argv])}\n"
        )
        units[f"{UNIT_PREFIX}{job.name}.timer"] = (
            f"[Unit]\nDescription=memcli {job.name} on schedule\n\n[Timer]\nOnCalendar={job.on_calendar}\n"
            f"Persistent=true\n\n[Install]\nWantedBy=timers.target\n"
        )
    return units


def launchd_agents(command: list[str], env: dict[str, str], backup: Path) -> dict[str, str]:
    """File name -> text of the launchd agents (property lists), one a job."""
    # rare path: only for --launchd (plistlib brings in an XML parser every command would load)
    import plistlib

    agents = {}
    for job in jobs(backup):
        interval: dict[str, int] = {"Hour": job.hour, "Minute": job.minute}
        if job.weekday is not None:
            interval["Weekday"] = job.weekday
        agent: dict[str, object] = {
            "Label": f"{LAUNCHD_PREFIX}{job.name}",
            "ProgramArguments": [*command, *job.argv],
            "StartCalendarInterval": interval,
        }
        if env:
            agent["EnvironmentVariables"] = env
        agents[f"{LAUNCHD_PREFIX}{job.name}.plist"] = plistlib.dumps(agent).decode("utf-8")
    return agents


def systemd_dir() -> Path:
    """Where systemd looks for a user's own units."""
    config = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(config) / "systemd" / "user"


def launchd_dir() -> Path:
    """Where launchd looks for a user's agents."""
    return Path.home() / "Library" / "LaunchAgents"


def _run(argv: list[str], input: str | None = None) -> subprocess.CompletedProcess[str]:
    """Run a system tool (crontab, systemctl, launchctl); raises MemcliError when it is not
    installed."""
    if shutil.which(argv[0]) is None:
        raise MemcliError(
            f"{argv[0]} is not installed here: print the schedule without --install and set it up by hand"
        )
    return subprocess.run(argv, input=input, capture_output=True, text=True, check=False)


def _checked(argv: list[str], input: str | None = None) -> str:
    done = _run(argv, input)
    if done.returncode != 0:
        raise MemcliError(f"{shlex.join(argv)} failed (exit {done.returncode}): {done.stderr.strip()}")
    return done.stdout


def current_crontab() -> str:
    """This user's crontab as ``crontab -l`` prints it; empty when there is none."""
    done = _run(["crontab", "-l"])
    if done.returncode != 0:
        if "no crontab" in done.stderr.lower():
            return ""
        raise MemcliError(f"crontab -l failed (exit {done.returncode}): {done.stderr.strip()}")
    return done.stdout


def install_crontab(block: str) -> None:
    """Put ``block`` in this user's crontab in place of an earlier memcli block (the rest is kept)."""
    kept = without_block(current_crontab())
    if kept and not kept.endswith("\n"):
        kept += "\n"
    _checked(["crontab", "-"], kept + block)


def remove_crontab() -> bool:
    """Take the memcli block out of this user's crontab; whether there was one."""
    if shutil.which("crontab") is None:
        return False
    crontab = current_crontab()
    kept = without_block(crontab)
    if kept == crontab:
        return False
    _checked(["crontab", "-"], kept)
    return True


def _write_files(folder: Path, files: dict[str, str]) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for name, text in files.items():
        (folder / name).write_text(text, encoding="utf-8")
        written.append(folder / name)
    return written


def _removable(folder: Path, prefix: str) -> list[Path]:
    return sorted(folder.glob(f"{prefix}*")) if folder.is_dir() else []


def _default_kind() -> str:
    return "launchd" if platform.system() == "Darwin" else "cron"


@app.command()
def schedule(
    systemd: Annotated[
        bool, typer.Option("--systemd", help="systemd user timer units (Linux) instead of crontab lines.")
    ] = False,
    launchd: Annotated[
        bool, typer.Option("--launchd", help="launchd agents (macOS; the default there) instead of crontab lines.")
    ] = False,
    install: Annotated[
        bool,
        typer.Option(
            "--install",
            help="Install it: the lines into your crontab (an earlier memcli block replaced, the rest kept), or the units/agents into their folder, enabled.",
        ),
    ] = False,
    backup: Annotated[
        Optional[Path],
        typer.Option(
            "--backup", metavar="FILE", help="Where the nightly backup goes (default: ~/memcli-backup.jsonl)."
        ),
    ] = None,
    json_out: JsonOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """Print (or --install) the nightly consolidation, the weekly forgetting pass and the nightly backup.

    Each job runs this memcli by its absolute path (cron, systemd and launchd do not have
    your shell's PATH), for every user, with --quiet: nothing is printed unless it failed,
    so cron mails you only a failure. MEMCLI_HOME, when set, goes into each job. Crontab
    lines by default (launchd agents on macOS); --systemd for systemd user timers. memcli
    uninstall removes what --install installed.

    Example: memcli schedule --install
    """
    if systemd and launchd:
        raise UsageError("give --systemd or --launchd, not both")
    kind = "systemd" if systemd else "launchd" if launchd else _default_kind()
    target = Path(os.path.abspath((backup or Path("~/memcli-backup.jsonl")).expanduser()))
    command, env = memcli_command(), job_environment()
    if kind == "cron":
        block = crontab_block(command, env, target)
        if install:
            install_crontab(block)
            _status("memcli: installed the schedule in your crontab (crontab -l shows it)", quiet)
        if json_out:
            _schedule_json(kind, {"crontab": block}, install)
        elif not install:
            typer.echo(block, nl=False)
        return
    files = systemd_units(command, env, target) if kind == "systemd" else launchd_agents(command, env, target)
    folder = systemd_dir() if kind == "systemd" else launchd_dir()
    if not install:
        if json_out:
            _schedule_json(kind, {str(folder / name): text for name, text in files.items()}, False)
            return
        for name, text in files.items():
            typer.echo(f"# {folder / name}\n{text}")
        return
    written = _write_files(folder, files)
    if kind == "systemd":
        _checked(["systemctl", "--user", "daemon-reload"])
        timers = [path.name for path in written if path.suffix == ".timer"]
        _checked(["systemctl", "--user", "enable", "--now", *timers])
    else:
        for path in written:
            _run(["launchctl", "unload", str(path)])
            _checked(["launchctl", "load", str(path)])
    _status(f"memcli: installed {len(written)} files in {folder} and enabled them", quiet)
    if json_out:
        _schedule_json(kind, {str(folder / name): text for name, text in files.items()}, True)


def _schedule_json(kind: str, files: dict[str, str], installed: bool) -> None:
    # thin client: a command group's modules load when one of its commands runs, not at every start
    from memcli.schema import ScheduleResult

    _print_json(ScheduleResult(kind=kind, files=files, installed=installed))


def _uninstall_json(removed: list[str], dry_run: bool) -> None:
    # thin client: a command group's modules load when one of its commands runs, not at every start
    from memcli.schema import UninstallResult

    _print_json(UninstallResult(removed=removed, dry_run=dry_run))


def remove_schedule() -> list[str]:
    """Take out every schedule ``memcli schedule --install`` may have installed (crontab
    block, systemd units, launchd agents); what was removed, one description each."""
    removed = []
    if remove_crontab():
        removed.append("the memcli block of your crontab")
    units = _removable(systemd_dir(), UNIT_PREFIX)
    if units:
        timers = [path.name for path in units if path.suffix == ".timer"]
        if shutil.which("systemctl"):
            _run(["systemctl", "--user", "disable", "--now", *timers])
        for path in units:
            path.unlink()
        if shutil.which("systemctl"):
            _run(["systemctl", "--user", "daemon-reload"])
        removed += [str(path) for path in units]
    for path in _removable(launchd_dir(), LAUNCHD_PREFIX):
        if shutil.which("launchctl"):
            _run(["launchctl", "unload", str(path)])
        path.unlink()
        removed.append(str(path))
    return removed


@app.command()
def uninstall(
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask (needed without a terminal).")] = False,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Print what would be removed; remove nothing.")] = False,
    json_out: JsonOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """Remove memcli's files: stop the service, take out the schedule, delete the config, data, cache and state folders memcli paths lists.

    That is the memories of every user (export them first if you want them), the config
    file, the service's state and log, and the cache with the assembled copy of the chat
    model. With MEMCLI_HOME set, the embedder's export that every home shares
    (embedder_exports_dir) stays: it holds only the model. The program itself stays:
    remove it with pip uninstall memcli (or pipx uninstall memcli). On a terminal it asks
    first; a script needs --yes.

    Example: memcli uninstall --dry-run
    """
    paths = _paths(check=False)
    folders = [p for p in (paths.data_dir, paths.config_dir, paths.state_dir, paths.cache_dir) if p.exists()]
    if dry_run:
        if json_out:
            _uninstall_json([str(folder) for folder in folders], True)
            return
        for folder in folders:
            typer.echo(str(folder))
        return
    if not yes:
        if not _interactive():
            raise UsageError(
                "uninstall deletes every memory of every user for good: add --yes to confirm without a terminal"
            )
        if not _confirm(f"delete {', '.join(map(str, folders)) or 'nothing'} and the schedule for good?"):
            _status("nothing removed", quiet)
            return
    # thin client: a command group's modules load when one of its commands runs, not at every start
    from memcli.transport.client import ServiceClient

    ServiceClient(paths).stop()
    removed = remove_schedule()
    for folder in folders:
        shutil.rmtree(folder)
        removed.append(str(folder))
    home = os.environ.get("MEMCLI_HOME")
    if home and Path(home).is_dir() and not any(Path(home).iterdir()):
        Path(home).rmdir()
    if json_out:
        _uninstall_json(removed, False)
    _status(
        f"memcli: removed {', '.join(removed) or 'nothing (memcli had written nothing)'}; "
        "the program itself: pip uninstall memcli",
        quiet,
    )
