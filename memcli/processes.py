"""Which memcli service is running: its pid from the service file, checked against /proc;
and how many cores other processes leave free, for the models' threads.

A leaf module (standard library only), so that the client, the service, the store and
``memcli version`` can all ask without importing one another.
"""

from __future__ import annotations

import functools
import json
import os
import time
from pathlib import Path

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


def same_process(pid: int, started: int | None) -> bool:
    """Whether process ``pid`` is alive (``running``) and is the one that started at
    ``started`` clock ticks since boot (``process_start``; None, or where /proc does not
    tell: any process of that pid), not a later one the system gave the same pid."""
    if started is not None and process_start(pid) not in (None, started):
        return False
    return running(pid)


def service_file(paths: Paths) -> dict | None:
    """What the running service of ``paths`` wrote in its service file (pid, process_start,
    version, protocol); None when none runs (also when its pid now belongs to another
    process: a service killed without cleaning up leaves its file behind, and pids are
    reused)."""
    try:
        service = json.loads(paths.service_file.read_text(encoding="utf-8"))
        pid = int(service["pid"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return service if same_process(pid, service.get("process_start")) else None


def service_pid(paths: Paths) -> int | None:
    """The pid of the running service of ``paths``; None when none runs (see ``service_file``)."""
    found = service_file(paths)
    return None if found is None else int(found["pid"])


RUNNABLE_SECONDS = 0.25
"""How long a count of other processes' runnable threads stands (``runnable_elsewhere``):
llama.cpp asks before each generated token (tens of milliseconds), and reading the count
takes about a millisecond with many threads."""

_runnable: tuple[float, int | None] = (-1.0, None)


def runnable_elsewhere() -> int | None:
    """How many threads of other processes are runnable on this machine now: the kernel's
    count of runnable tasks (``/proc/loadavg``, fourth field) less this process's threads
    that are running (``/proc/self/task/*/stat``, counted before and after it, the larger
    count), at most ``RUNNABLE_SECONDS`` old. None where ``/proc`` does not say (not
    Linux)."""
    global _runnable
    now = time.monotonic()
    if now - _runnable[0] < RUNNABLE_SECONDS:
        return _runnable[1]
    try:
        own = _running_here()
        running = int(Path("/proc/loadavg").read_text().split()[3].split("/")[0])
        own = max(own, _running_here())
    except (OSError, ValueError, IndexError):
        found = None
    else:
        found = max(0, running - own)
    _runnable = (now, found)
    return found


def _running_here() -> int:
    """This process's threads in state R (running or runnable). Raises OSError without /proc."""
    own = 0
    for task in Path("/proc/self/task").iterdir():
        try:
            stat = (task / "stat").read_text()
        except OSError:  # the thread ended meanwhile
            continue
        own += stat[stat.rindex(")") + 2 : stat.rindex(")") + 3] == "R"
    return own


@functools.cache
def usable_cores() -> int:
    """The CPUs this process may run on: its affinity (``os.sched_getaffinity``, else
    ``os.cpu_count()``), capped by its cgroup's CPU quota (cgroup v2 ``cpu.max``) when it
    has one; at least 1."""
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    for cpu_max in _cgroup_cpu_max():
        try:
            quota, period = Path(cpu_max).read_text().split()[:2]
        except (OSError, ValueError):
            continue
        if quota != "max" and quota.isdigit() and period.isdigit() and int(period) > 0:
            cores = min(cores, max(1, -(-int(quota) // int(period))))
        break
    return max(1, cores)


def _cgroup_cpu_max() -> list[str]:
    """Where this process's cgroup v2 CPU quota may be: its own cgroup's ``cpu.max``
    (``/proc/self/cgroup``), then the cgroup root's (inside a container)."""
    found = []
    try:
        for line in Path("/proc/self/cgroup").read_text().splitlines():
            if line.startswith("0::"):
                found.append(f"/sys/fs/cgroup{line[3:].rstrip('/')}/cpu.max")
    except OSError:
        pass
    found.append("/sys/fs/cgroup/cpu.max")
    return found


def free_cores(cores: int) -> int:
    """The threads a model should use now, of ``cores``: those no other process is running
    on (at least 1). All ``cores`` when the count is unknown, or when this process may not
    run on every CPU of the machine (an affinity, a container's quota: the machine's count
    of runnable tasks then says nothing of its own CPUs). llama.cpp's and torch's threads
    wait for one another at every step: on a busy machine a thread that shares its core
    with another process makes every step wait for it (measured on 2 cores at load 13: a
    297-token prompt 11.5 s with 2 threads against 3.8 s with 1, a generated token 756 ms
    against 70 ms)."""
    if usable_cores() < (os.cpu_count() or 1):
        return cores
    elsewhere = runnable_elsewhere()
    return cores if elsewhere is None else max(1, min(cores, cores - elsewhere))
