"""The processes memcli looks at: whether a pid is alive and when it started, and the pid
of the running service, from its service file. Standard library only: the thin client
(``memcli.client``) and the store (``memcli.store``, to name who holds it) both read them.
"""

from __future__ import annotations

import json
import os

from memcli.paths import Paths


def process_start(pid: int) -> int | None:
    """When process ``pid`` started, in clock ticks since boot (/proc/PID/stat, field 22),
    which tells a process from a later one given the same pid; None where /proc does not
    tell."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as f:
            return int(f.read().rpartition(")")[2].split()[19])
    except (OSError, ValueError, IndexError):
        return None


def running(pid: int) -> bool:
    """Whether process ``pid`` is alive: it exists and, where /proc tells, is not a zombie
    (a service that has exited but whose parent, a test or a long-lived client that
    started it, has not yet reaped it)."""
    try:
        os.kill(pid, 0)
    except OSError:
        return False
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as f:
            return f.read().rpartition(")")[2].split()[:1] != ["Z"]
    except OSError:
        return True


def service_pid(paths: Paths) -> int | None:
    """The pid of the service running on ``paths``, from its service file; None when it is
    not running (also when its pid now belongs to another process: a service killed
    without cleaning up leaves its file behind, and pids are reused)."""
    try:
        service = json.loads(paths.service_file.read_text(encoding="utf-8"))
        pid = int(service["pid"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    started = service.get("process_start")
    if started is not None and process_start(pid) not in (None, started):
        return None
    return pid if running(pid) else None
