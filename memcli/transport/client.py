"""The thin client: sends a request to the memcli service (starting it when it is not up)
and hands the events of the reply to the CLI.

This is the path of every memory command, so it imports nothing heavy (no numpy, torch,
sentence-transformers, chromadb, llama_cpp) and nothing but the standard library: the
``multiprocessing.connection`` over the service's Unix socket carries one JSON request
and the JSON events of its reply, one message each. The service (``memcli.transport.service``)
answers with ``notice``/``warning``/``progress``/``piece`` events, then ``result`` or
``error``; a service of another version or protocol answers ``mismatch``, and the client
stops it and starts its own.

Whether a request goes to the service or runs in this process is the entry's choice
(``memcli.transport.entry``), made once per request; this module is only the service's transport.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import signal
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from multiprocessing.connection import Client, Connection
from typing import Any

from memcli import PROTOCOL, __version__
from memcli.errors import BadInputError, ExitCode, ServiceError, error_for
from memcli.paths import ENV_PREFIX, Paths, read_config_file
from memcli.processes import running, service_file, service_pid

START_TIMEOUT = 60.0
"""Seconds a client waits for the service it started to answer (its store lock wait
included) before it falls back to running in-process."""
START_POLL = 0.01
"""Seconds between two tries to connect to the service this client started: a cold command
waits half of it on average past the moment the service listens (a failed connection to a
socket not yet there costs microseconds)."""
STOP_TIMEOUT = 10.0
"""Seconds ``stop`` waits for the service to exit after asking, before it signals it."""
SERVICE_MODULE = "memcli.transport.serve"
"""The module a client runs (``python -P -m``) to start the service in the background:
``memcli serve --quiet`` without the command line (``memcli.transport.service.main``)."""
MAX_REQUEST_BYTES = 256 << 20
"""The largest request the service reads, in bytes (256 MiB: a ``remember -`` of a long
file fits); the client refuses to send a longer one, and the service answers a longer
length prefix with an error before reading any of it (``memcli.transport.service.read_request``)."""
IF_ALONE_PROTOCOL = 6
"""The first ``PROTOCOL`` whose service answers ``service.stop`` with ``if_alone``
(``ServiceClient.stop_if_alone``); an older one stops at any ``service.stop``."""


def _nothing(*_: Any, **__: Any) -> None:
    return None


@dataclass
class Handlers:
    """Where the events of a running request go: a status line (``notice``, ``warning``),
    progress (done, total), and streamed reply text (``piece``)."""

    notice: Callable[[str], None] = _nothing
    warning: Callable[[str], None] = _nothing
    progress: Callable[[int, int], None] = _nothing
    piece: Callable[[str], None] = _nothing


class ServiceUnavailable(ServiceError):
    """The service is not running and could not be started. ``bad_settings``: it exited
    at once with BAD_INPUT, so the settings (config file, ``MEMCLI_*``) are invalid, and
    the in-process run that follows reports why."""

    def __init__(self, message: str, bad_settings: bool = False) -> None:
        super().__init__(message)
        self.bad_settings = bad_settings


def client_env(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """The ``MEMCLI_*`` variables a request carries to the service."""
    return {k: v for k, v in (os.environ if env is None else env).items() if k.startswith(ENV_PREFIX)}


def service_mode(paths: Paths, env: Mapping[str, str], no_service: bool = False) -> str:
    """``off`` when the request must run in-process (``--no-service``, ``MEMCLI_SERVICE``,
    or the config file's ``service`` key), else ``auto``.

    Only the one key is read here (by ``read_config_file``, the one reader of the file),
    so the client stays thin; the full settings are the service's, or the in-process
    run's, to read. A config path that is there but cannot serve (``read_config_file``
    raises: a directory, a symbolic link to nothing, no permission, not TOML) gives ``off``
    too: the in-process run then reports it in one line, without starting a service that
    would refuse to."""
    if no_service:
        return "off"
    value = env.get(ENV_PREFIX + "SERVICE", "")
    if not value:
        try:
            value = str(read_config_file(paths.config_file).get("service", ""))
        except BadInputError:
            return "off"
    return "off" if value.strip().lower() == "off" else "auto"


def dispatch(event: Mapping[str, Any], handlers: Handlers) -> None:
    """Hand one event of a running request to its handler (a status line gets the
    ``memcli:`` prefix)."""
    kind = event.get("event")
    if kind == "notice":
        handlers.notice(f"memcli: {event.get('message', '')}")
    elif kind == "warning":
        handlers.warning(f"memcli: warning: {event.get('message', '')}")
    elif kind == "progress":
        handlers.progress(int(event.get("done", 0)), int(event.get("total", 0)))
    elif kind == "piece":
        handlers.piece(str(event.get("text", "")))


class ServiceClient:
    """Talks to the service of one MEMCLI_HOME over its socket: one connection per request."""

    def __init__(self, paths: Paths) -> None:
        self.paths = paths
        self.started = False
        """Whether this client started the service (``start`` spawned it)."""

    def connect(self) -> Connection | None:
        """A connection to the running service, or None when none answers on the socket.

        Raises ServiceUnavailable when the socket's directory is not this user's own and
        private (mode 0700): under a shared temporary folder, someone else may have made it
        to catch what memcli sends."""
        try:
            found = os.lstat(self.paths.run_dir)
        except OSError:
            return None
        if not stat.S_ISDIR(found.st_mode) or found.st_uid != os.getuid() or found.st_mode & 0o077:
            raise ServiceUnavailable(
                f"{self.paths.run_dir} is not a private directory of this user's (mode 0700); not using its socket"
            )
        try:
            return Client(str(self.paths.socket), family="AF_UNIX")
        except OSError:
            return None

    def request(self, request: dict[str, Any], handlers: Handlers, start: bool = True) -> Any:
        """Send ``request`` and return its result, starting the service first when ``start``
        and none runs (ServiceUnavailable when it cannot). A service that closed the
        connection before accepting the request (it was stopping: idle, or asked to) is
        started again and asked again; a service older than this client (memcli was
        upgraded) is restarted. Raises the error the service reports, and ServiceError
        when the service is newer than this client (this command ran across an upgrade)."""
        request = {**request, "version": __version__, "protocol": PROTOCOL}
        # before connecting: a connection the service accepted and got no request on keeps it
        # running for a moment (``stop_if_alone``), and a first command starts it
        data = _encode(request)
        for attempt in range(3):
            connection = self._adopt_early() or self.connect()
            if connection is None:
                if not start:
                    raise ServiceUnavailable("the memcli service is not running")
                connection = self.start()
            with connection:
                outcome, value = self._exchange(connection, request, handlers, data)
            if outcome == "result":
                return value
            if outcome == "unaccepted":
                if not start:
                    raise ServiceUnavailable("the memcli service is stopping")
                pid = self.pid()
                if pid is not None:
                    _wait_gone(pid, STOP_TIMEOUT)
                continue
            version, protocol = value
            if _release(version, protocol) > _release(__version__, PROTOCOL):
                raise ServiceError(
                    f"memcli was upgraded to {version} while this command ran (it is {__version__}); run the command again"
                )
            handlers.notice(f"memcli: the running service is memcli {version}; restarting it as memcli {__version__}")
            self.stop()
        raise ServiceUnavailable("the memcli service kept stopping or answering with another version")

    def _exchange(
        self, connection: Connection, request: dict[str, Any], handlers: Handlers, data: bytes | None = None
    ) -> tuple[str, Any]:
        accepted = cancelled = False
        saved: dict[str, int] = {}
        if data is None:
            data = _encode(request)
        try:
            try:
                connection.send_bytes(data)
            except ConnectionError:
                pass  # a service that refused the connection (busy) answered before closing it: read on
            while True:
                try:
                    event = json.loads(connection.recv_bytes())
                    if event.get("event") == "saved":
                        saved.update({k: int(v) for k, v in event.items() if k != "event"})
                        continue
                    if event.get("event") not in ("accepted", "result", "mismatch", "error"):
                        dispatch(event, handlers)
                        continue
                except KeyboardInterrupt:
                    # The first Ctrl-C asks the service to stop the request at its next event
                    # and answer what it has (an import: what it stored, a chat: the partial
                    # reply); a second one leaves at once (the connection closes: the service
                    # stops at its next event all the same).
                    if cancelled or not accepted:
                        raise
                    cancelled = True
                    _cancel(connection)
                    handlers.notice("memcli: stopping; press Ctrl-C again to leave at once")
                    continue
                kind = event.get("event")
                if kind == "accepted":
                    accepted = True
                    continue
                if kind == "result":
                    return "result", event.get("data")
                if kind == "mismatch":
                    return "mismatch", (str(event.get("version")), event.get("protocol"))
                if kind == "error":
                    if event.get("traceback"):
                        sys.stderr.write(str(event["traceback"]))
                    raise error_for(str(event.get("message", "")), int(event.get("code", 1)))
        except (EOFError, ConnectionError):
            if not accepted and request.get("verb") not in ("service.status", "service.stop"):
                return "unaccepted", None
            raise ServiceError(stopped_message(str(request.get("verb")), saved, str(self.paths.log_file))) from None

    def start(self) -> Connection:
        """Start the service in the background (one client at a time does) and return a
        connection to it. Raises ServiceUnavailable when it exits or does not answer."""
        try:
            return self._start()
        except OSError as exc:  # a state dir that cannot be written, no room for the log...
            raise ServiceUnavailable(f"cannot start the memcli service ({exc})") from None

    def _start(self) -> Connection:
        # thin client: needed only to take a lock, and memcli starts at every TAB press
        import filelock

        _private_dir(self.paths.state_dir)
        with filelock.FileLock(str(self.paths.start_lock), timeout=START_TIMEOUT, mode=0o600):
            connection = self.connect()
            if connection is not None:
                return connection
            process = _spawn(self.paths)
            self.started = True
            return self._listening(process)

    def _adopt_early(self) -> Connection | None:
        """A connection to the service this process started early (``start_early``) for
        this MEMCLI_HOME, once it listens, releasing the start lock held since (the command
        adopts it once Typer is loaded: before it listens, so the lock goes as it listens);
        None when it started none (or this was asked already), or the service it started has
        stopped since (idle). Raises ServiceUnavailable as ``start``."""
        early = _EARLY.pop(str(self.paths.socket), None)
        if early is None:
            return None
        _, lock, process = early
        if not _EARLY:
            _restore_signals()
        try:
            if process.poll() == 0:  # it stopped, idle, before this command asked it: start another
                return None
            self.started = True
            return self._listening(process)
        finally:
            lock.release()

    def _listening(self, process: subprocess.Popen) -> Connection:
        """A connection to the service ``process`` started, once it listens. Raises
        ServiceUnavailable when it exits first or does not answer within START_TIMEOUT."""
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            connection = self.connect()
            if connection is not None:
                return connection
            code = process.poll()
            if code is not None:
                raise ServiceUnavailable(
                    f"the memcli service could not start (exit {code}; see {self.paths.log_file})",
                    bad_settings=code == ExitCode.BAD_INPUT,
                )
            time.sleep(START_POLL)
        raise ServiceUnavailable(
            f"the memcli service did not answer within {START_TIMEOUT:g} s (see {self.paths.log_file})"
        )

    def stop_if_alone(self, own: int = 1) -> None:
        """Stop the service this client started when it has served no one else, so that a
        command that failed leaves no service running for itself alone; one that served
        another client, or that had accepted another client's connection before this stop
        request (its request maybe not sent yet), is left to exit when idle. The service
        decides (``memcli.transport.service.Service.stop_if_alone``), at once with the
        connections it counts: at most this client's ``own`` requests and this one served,
        and no other connection open unanswered. Nothing when it did not start it, or it is
        gone."""
        with contextlib.suppress(ServiceError):
            self._stop_if_alone(own)

    def _stop_if_alone(self, own: int) -> None:
        """``stop_if_alone``, its one connection the stop request (a service of protocol 6
        or later). A service older than that (its service file says; no request asks)
        stopped at any ``service.stop``, ``if_alone`` or not: it is asked its request count,
        then to stop, as before (another client that has connected meanwhile is not counted).
        Raises ServiceUnavailable when no service listens (or it is stopping), ServiceError
        when it went away while answering."""
        if not self.started:
            return
        found = service_file(self.paths)  # none yet: the service this client started, of its own protocol
        pid = None if found is None else int(found["pid"])
        if found is not None and _number(found.get("protocol")) < IF_ALONE_PROTOCOL:
            served = self.request({"verb": "service.status", "args": {}}, Handlers(), start=False)["requests_served"]
            if int(served) <= own + 1:
                self.stop()
            return
        stopped = self.request({"verb": "service.stop", "args": {"if_alone": own + 1}}, Handlers(), start=False)
        if stopped and pid is not None:
            _wait_gone(pid, STOP_TIMEOUT) or _terminate(pid)

    def status(self) -> dict[str, Any]:
        """The running service's ``schema.ServiceStatus``. Raises ServiceError when none runs."""
        try:
            return self.request({"verb": "service.status", "args": {}}, Handlers(), start=False)
        except ServiceUnavailable as exc:
            raise ServiceError(str(exc)) from None

    def stop(self) -> int | None:
        """Ask the running service to stop and wait until it has (signalling it after
        STOP_TIMEOUT); returns its pid, or None when none was running."""
        pid = self.pid()
        connection = self.connect()
        if connection is None and pid is None:
            return None
        if connection is not None:
            with connection:
                try:
                    connection.send_bytes(json.dumps({"verb": "service.stop"}).encode("utf-8"))
                    connection.recv_bytes()
                except (EOFError, OSError):
                    pass
        if pid is not None:
            _wait_gone(pid, STOP_TIMEOUT) or _terminate(pid)
        deadline = time.monotonic() + STOP_TIMEOUT
        while self.paths.socket.exists() and self.connect() is not None and time.monotonic() < deadline:
            time.sleep(0.05)
        return pid

    def pid(self) -> int | None:
        """The pid of the running service, from its service file; None when it is not
        running (also when its pid now belongs to another process: a service killed
        without cleaning up leaves its file behind, and pids are reused)."""
        return service_pid(self.paths)


_EARLY: dict[str, tuple[Paths, Any, subprocess.Popen]] = {}
"""The service this process started before its command line loaded (``start_early``), by
socket path: its paths, the start lock held until a ``ServiceClient`` adopts the service,
and the service's process."""
_SIGNALS: dict[int, Any] = {}
"""The handlers of SIGTERM and SIGHUP that ``start_early`` replaced (``_on_signal``), by signal."""


def start_early(paths: Paths, env: Mapping[str, str] | None = None) -> bool:
    """Start the service of ``paths`` in the background now, without waiting for it, when
    the service is on (``service_mode``) and none runs: the command line's own imports
    (Typer, a tenth of a second) then overlap the service's start instead of coming before
    it. Holds the start lock until a ``ServiceClient`` of this process adopts the service
    (its ``request``); a process that exits without (a usage error, ``--help`` after the
    command, Ctrl-C, SIGTERM or SIGHUP) ends the service it started (``_end_early``). True
    when it started one; False, and nothing done, when the service is off, runs already,
    another client is starting it, or the home cannot hold it (the command then reports
    why, as it does without this). Only for a command whose input is on its command line
    (``memcli.cli.EARLY_COMMANDS``): the lock waits for its adoption, and another client
    that needs a service waits for the lock (up to START_TIMEOUT)."""
    env = os.environ if env is None else env
    # a running service is seen in its file (it gets no connection without a request), and
    # a warm command imports no filelock
    if service_mode(paths, client_env(env)) != "auto" or str(paths.socket) in _EARLY or service_pid(paths) is not None:
        return False
    # thin client: needed only to take a lock, and memcli starts at every TAB press
    import filelock

    try:
        _private_dir(paths.state_dir)
        lock = filelock.FileLock(str(paths.start_lock), timeout=0, mode=0o600)
        lock.acquire()
    except (OSError, filelock.Timeout):
        return False
    try:
        connection = ServiceClient(paths).connect()  # one that listens, its file not written yet
        if connection is not None:
            connection.close()
            lock.release()
            return False
        # the handler is in place before the service exists and its entry follows the
        # spawn at once: a signal in between would otherwise leave it to its idle exit
        first = not _EARLY
        if first:
            _catch_signals()
        process = _spawn(paths)
        _EARLY[str(paths.socket)] = (paths, lock, process)
    except (OSError, ServiceError):
        if not _EARLY:
            _restore_signals()
        lock.release()
        return False
    if first:
        atexit.register(_end_early)
    return True


def _end_early(ask: bool = True) -> None:
    """End what this process started early and never adopted (``start_early``): it is
    asked as ``stop_if_alone`` asks, the stop request its one connection (a probe first
    would count, for the service, as another client's): stopped when it served no one, else
    it exits when idle (another command found it and may be using it); one that does not
    listen yet is terminated (no client can have used it: the others wait for the start
    lock this process holds). Without ``ask`` (a signal, ``_on_signal``) one that listens
    is left to its idle exit unasked: asking and stopping it can take STOP_TIMEOUT."""
    while _EARLY:
        _, (paths, lock, process) = _EARLY.popitem()
        try:
            if process.poll() is not None:
                continue
            service = ServiceClient(paths)
            service.started = True
            if ask:
                # The stop request is its one connection: a probe before it would be counted
                # by the service as another client's until its thread saw it closed, and keep it.
                try:
                    service._stop_if_alone(own=0)
                except ServiceUnavailable:  # nothing listens (yet): no client can have used it
                    process.terminate()
                except ServiceError:
                    pass
                continue
            with contextlib.suppress(ServiceError):
                connection = service.connect()
                if connection is None:
                    process.terminate()
                    continue
                connection.close()
        except OSError:
            pass
        finally:
            lock.release()
    _restore_signals()


def _catch_signals() -> None:
    """Have SIGTERM and SIGHUP end the service started early (``_on_signal``) while it
    waits for its adoption, where they kill the process (their default): in the main thread
    only (the one Python runs signal handlers in)."""
    if threading.current_thread() is not threading.main_thread():
        return
    for signum in (signal.SIGTERM, signal.SIGHUP):
        if signal.getsignal(signum) == signal.SIG_DFL:
            _SIGNALS[signum] = signal.signal(signum, _on_signal)


def _on_signal(signum: int, frame: Any) -> None:
    """SIGTERM or SIGHUP before the service started early was adopted: end it unless it
    listens (``_end_early`` without asking it), then die of the signal as the process
    would have."""
    _end_early(ask=False)
    signal.signal(signum, signal.SIG_DFL)
    os.kill(os.getpid(), signum)


def _restore_signals() -> None:
    """Put back the handlers ``_catch_signals`` replaced, where it can (the main thread)."""
    if threading.current_thread() is not threading.main_thread():
        return
    while _SIGNALS:
        signum, previous = _SIGNALS.popitem()
        if signal.getsignal(signum) is _on_signal:
            signal.signal(signum, previous)


def _spawn(paths: Paths) -> subprocess.Popen:
    """Start the service of ``paths`` in the background (``python -P -m memcli.transport.serve``,
    its output to the service log) and return its process, without waiting for it."""
    with open(paths.log_file, "ab") as log:
        os.chmod(paths.log_file, 0o600)
        # -P: the current directory stays off sys.path, so that a folder named
        # memcli there (a clone, a notes folder) does not shadow the installed package.
        # memcli.transport.serve: `memcli serve --quiet` without the command line's modules.
        return subprocess.Popen(
            [sys.executable, "-P", "-m", SERVICE_MODULE],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
            start_new_session=True,
        )


def stopped_message(verb: str, saved: Mapping[str, int], log_file: str) -> str:
    """What to tell the user when the service stopped while answering ``verb``
    (ServiceError, exit 7): what of it is safe, from the last ``saved`` event it sent
    (``memcli.library.engine.Engine``'s ``saved``; none: nothing is known to be). A journaled
    note is stored at the service's next start; an import's batches are stored as they
    commit; either way the same command run again adds nothing twice (ids derive from
    content)."""
    journaled, stored, total = saved.get("journaled", 0), saved.get("stored"), saved.get("total")
    again = "run the same command to check — it will not duplicate"
    if verb == "remember" and journaled and (total is None or journaled >= total):
        return f"the memcli service stopped; your note was saved and will be stored when it starts again ({again})"
    if verb == "remember" and journaled:
        return (
            f"the memcli service stopped; {journaled} of the {total} parts of your note were saved and will be stored when "
            f"it starts again (run the same command to store the rest — it will not duplicate)"
        )
    if verb == "import" and stored is not None:
        return (
            f"the memcli service stopped during the import; it had stored at least {stored} new memories of the {total} found "
            f"(run the same command to store the rest — it will not duplicate); see {log_file}"
        )
    if verb == "import":
        return (
            f"the memcli service stopped during the import, before it stored a first batch; run the same command again "
            f"(it will not duplicate); see {log_file}"
        )
    if journaled:
        return f"the memcli service stopped; what you said was saved and will be stored when it starts again; see {log_file}"
    if verb == "remember":
        return (
            f"the memcli service stopped before it said your note was saved; run the same command again (it will not "
            f"duplicate); see {log_file}"
        )
    return f"the memcli service stopped while answering; see {log_file}"


def _cancel(connection: Connection) -> None:
    """Tell the service to stop the request running on ``connection`` (``memcli.transport.service``
    checks for it at each event it sends). Raises KeyboardInterrupt when the service is
    gone already."""
    try:
        connection.send_bytes(b'{"event": "cancel"}')
    except OSError:
        raise KeyboardInterrupt from None


def _encode(request: Mapping[str, Any]) -> bytes:
    """``request`` as the bytes sent to the service. Raises BadInputError when they are more
    than it reads (``MAX_REQUEST_BYTES``)."""
    data = json.dumps(request, ensure_ascii=False).encode("utf-8")
    if len(data) > MAX_REQUEST_BYTES:
        raise BadInputError(
            f"this request is {len(data) / 2**20:.1f} MiB, more than the {MAX_REQUEST_BYTES >> 20} MiB the memcli "
            "service reads; store a long text with 'memcli import FILE'"
        )
    return data


def _number(protocol: Any) -> int:
    """A protocol as a number; 0 (oldest) when it is not one."""
    try:
        return int(protocol)
    except (TypeError, ValueError):
        return 0


def _release(version: str, protocol: Any) -> tuple[Any, int]:
    """A version and protocol as something to compare: which memcli is newer (PEP 440
    order: 0.2.0rc1 before 0.2.0; a version that is not PEP 440 counts as oldest)."""
    # thin client: needed only to compare versions, and memcli starts at every TAB press
    from packaging.version import InvalidVersion, Version

    number = _number(protocol)
    try:
        return Version(version), number
    except InvalidVersion:
        return Version("0"), number


def _wait_gone(pid: int, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not running(pid):
            return True
        time.sleep(0.05)
    return False


def _terminate(pid: int) -> None:
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.kill(pid, sig)
        except OSError:
            return
        if _wait_gone(pid, STOP_TIMEOUT / 2):
            return


def _private_dir(path: os.PathLike[str]) -> None:
    """Make ``path`` (and its parents) and set it to mode 0700, whatever the umask."""
    os.makedirs(path, exist_ok=True)
    os.chmod(path, 0o700)
