"""The memcli service (``memcli serve``): one resident owner of the store per MEMCLI_HOME.

Chroma wants one owning process per store directory, and loading the models costs
seconds, so the service holds the store's file lock for its lifetime, keeps the Chroma
client and the SQLite sidecar open, keeps each user's recall index in memory (the
``Recaller`` brings it up to date from the index's change log after every write instead
of reloading it), loads the embedder once, in the background once its first request is
answered, or as a request that embeds arrives (``LOADS_AT_ONCE``: beside it, in a thread of
its own), or ``WARM_UP_AFTER`` seconds after the start, and the chat model on first use.
Clients (``memcli.transport.client``) send one JSON request per connection over a Unix socket with
``multiprocessing.connection``; each connection gets a thread, and the request runs
through the same ``memcli.library.api.run`` as in-process mode (``memcli.transport.local``).

Concurrency: the store is one re-entrant lock (``MemoryStore`` in resident mode), taken
per transaction, so reads and writes take turns but never wait on a model; the embedder
is used under its own lock; the chat model under a gate where an interactive request
(chat, ask) goes before the next call of a consolidation.

Safety: the socket is in a directory of mode 0700 and is itself 0600; a peer of another
uid is refused (SO_PEERCRED); the process runs with umask 077. What a user says is
journaled before it is acknowledged (``Engine.write``), and the journal is stored at
the next start, so ``kill -9`` at any moment loses nothing acknowledged. The service
exits after ``service_idle`` seconds without a request, on ``memcli service stop``,
SIGTERM or SIGINT.

A client gets what it needs and no more: its whole request within ``REQUEST_TIMEOUT``
seconds of connecting, at most ``MAX_REQUEST_BYTES`` (the length prefix is checked before
anything is read), and ``MAX_CONNECTIONS`` connections at once; past any of these it gets
an error reply (exit 7) and is closed. The idle time counts from the last request, not
from the last open socket, so a client that connects and says nothing cannot hold the
service.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import logging
import logging.handlers
import os
import resource
import selectors
import signal
import socket
import stat
import struct
import sys
import threading
import time
import traceback
from collections.abc import Callable, Mapping
from multiprocessing.connection import Client, Connection, Listener
from pathlib import Path
from typing import Any

import orjson

from memcli import PROTOCOL, __version__, schema
from memcli.config import Paths, Settings, load_settings
from memcli.dates import query_dates
from memcli.errors import ExitCode, Interrupted, MemcliError, fail, redact
from memcli.library import api, verbs
from memcli.library.engine import Engine
from memcli.library.library import Memcli
from memcli.models.llm import ChatModel
from memcli.paths import check_home, private_dir, resolve_paths, write_private
from memcli.processes import process_start
from memcli.transport.client import MAX_REQUEST_BYTES
from memcli.transport.resources import Resources

log = logging.getLogger("memcli.service")

REQUEST_TIMEOUT = 10.0
"""Seconds a client has, from its connection, to send its whole request; a client that
sends nothing, or half a frame, gets an error reply then and is closed."""
MAX_CONNECTIONS = 64
"""Connections served at once (each is a thread); one more is refused at once with an
error reply saying the service is busy."""
WARM_UP_AFTER = 2.0
"""Seconds after the start at most before the warm-up imports what reads texts
(``TEXT_READING``) and then loads the embedder in the background, unless a request is
running then (it waits for its answer): it waits for the first request to be answered, so
that a command that embeds nothing (list, show, stats) is not slowed by those imports
(seconds of the interpreter, holding the GIL) in the service it started; a command that
embeds loads the embedder itself, at once."""
LOADS_AT_ONCE = frozenset({"import", "remember", "reindex", "recall", "ask", "chat.open", "chat.respond"})
"""Verbs whose request starts loading the embedder (``Service._load_embedder``) as it
arrives, in a thread of its own, not once it is answered: they embed, and what the request
does before its first embedding overlaps the load. ONNX Runtime builds its session (most of
the load: 0.4 of its 0.5 CPU-s on 2 cores) without holding the GIL, so it runs on another
core while a cold ``ask`` or ``recall`` imports what reads texts and has dateparser read its
question, and while an import reads and counts its file."""
CHROMA_AFTER_QUIET = 3.0
"""Seconds without a request after which the warm-up imports chromadb (``Service._warm_up``):
longer than a script's gap between two commands, even on a busy machine where a client
takes a second or two to start (at load 30, 1 s let the import fall between two recalls
and slow the next ones), shorter than a person takes to type a first chat message."""

TEXT_READING = ("memcli.library.chat", "memcli.library.supersession", "memcli.store.statements")
"""The modules of the verbs that read what texts say (recall, ask, chat, remember: names,
dates, changes, answers), imported by the warm-up (``Service._warm_up``) once the first
request is answered, rather than before the socket listens or beside that request, so that a
list, show or stats of a service just started waits neither for them nor for the GIL their
import holds."""


class Cancel:
    """The client's cancel of one request: its user pressed Ctrl-C (the client sends
    nothing after its request but that), or it went away (a closed connection reads as
    ready too; ``memcli.transport.client``).

    Asked as ``cancel()`` (the chat model's "stop now", at every piece and step of a
    prompt's evaluation), it says True every time once the cancel came: a point that asks
    and lets the reply go on (a warning sent while a chat reply is stopped, which must
    still store its turns) does not use it up. ``first()`` says True only the first time:
    a verb's events stop it once, and it then answers what it has.
    """

    def __init__(self, connection: Connection) -> None:
        self._connection = connection
        self._came = False
        self._told = False

    def __call__(self) -> bool:
        """True once the client cancelled or went away (and every time after)."""
        if not self._came and self._connection.poll():
            self._came = True
        return self._came

    def first(self) -> bool:
        """True the first time this is asked after the cancel came, False before and after."""
        if self() and not self._told:
            self._told = True
            return True
        return False


class BadRequest(Exception):
    """A request the service will not run; its message is the reply's."""


def read_request(connection: Connection, seconds: float = REQUEST_TIMEOUT, limit: int = MAX_REQUEST_BYTES) -> bytes:
    """The bytes of one request frame on ``connection``, in ``multiprocessing.connection``'s
    framing (a big-endian 4-byte length, or -1 and an 8-byte length, then the bytes: what
    the client's ``send_bytes`` writes), read within ``seconds`` in all.

    ``Connection.recv_bytes`` would wait forever for a silent client and allocates what
    the length prefix says before reading (MemoryError at 2**62), so the frame is read here:
    the prefix is checked against ``limit`` first, then the bytes are read as they come,
    a MiB at a time. Raises BadRequest (too long, too slow), EOFError (the client closed
    the connection first)."""
    deadline = time.monotonic() + seconds
    fd = connection.fileno()
    with selectors.DefaultSelector() as selector:
        selector.register(fd, selectors.EVENT_READ)

        def read(size: int) -> bytes:
            parts: list[bytes] = []
            while size:
                left = deadline - time.monotonic()
                if left <= 0 or not selector.select(left):
                    raise BadRequest(f"the memcli service got no whole request within {seconds:g} s")
                part = os.read(fd, min(size, 1 << 20))
                if not part:
                    raise EOFError
                parts.append(part)
                size -= len(part)
            return b"".join(parts)

        (size,) = struct.unpack("!i", read(4))
        if size == -1:
            (size,) = struct.unpack("!Q", read(8))
        if not 0 <= size <= limit:
            raise BadRequest(f"the memcli service reads requests of at most {limit >> 20} MiB, not {size} bytes")
        return read(size)


def peer_uid(connection: Connection) -> int | None:
    """The uid of the process at the other end of ``connection`` (SO_PEERCRED), or None
    where the platform does not tell."""
    if not hasattr(socket, "SO_PEERCRED"):
        return None
    with socket.socket(fileno=os.dup(connection.fileno())) as sock:
        data = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    return struct.unpack("3i", data)[1]


def peer_allowed(uid: int | None, own: int | None = None) -> bool:
    """Whether a peer of ``uid`` may talk to this service: only its own user (a platform
    that does not tell the uid relies on the socket directory's mode 0700)."""
    return uid is None or uid == (os.getuid() if own is None else own)


def rss_bytes() -> int:
    """The resident memory of this process in bytes (its peak where /proc is missing)."""
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass

    return int(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss) * 1024


class Service:
    """The service of one MEMCLI_HOME; ``serve()`` runs it in the foreground until it stops.

    Args:
        paths, settings: memcli's paths and the settings the service starts with
            (``lock_timeout``, ``service_idle``, the embedder it loads at once).
        embedder, chat_model: given models instead of the configured ones (tests).
        idle: seconds without a request before it exits (default: ``service_idle``).
    """

    def __init__(
        self,
        paths: Paths,
        settings: Settings,
        *,
        embedder: Any = None,
        chat_model: ChatModel | None = None,
        idle: float | None = None,
    ) -> None:
        self.paths = paths
        self.settings = settings
        self.idle = settings.service_idle if idle is None else idle
        self.resources = Resources(paths, settings, embedder, chat_model)
        self.started_at = time.time()
        self.requests = 0
        self._active = 0
        """Requests running (read, not yet answered): what the idle time and the drain wait for."""
        self._open = 0
        """Connections open (``MAX_CONNECTIONS``)."""
        self._unanswered = 0
        """Connections open whose request is not answered yet (``stop_if_alone``)."""
        self._refusing = False
        self._last = time.monotonic()
        self._counter = threading.Lock()
        self._stopping = threading.Event()
        self._listener: Listener | None = None
        self._warming: threading.Thread | None = None
        self._loading: threading.Thread | None = None
        """The thread that loads the embedder (``_load_embedder``), once one was started."""
        self._answered = threading.Event()
        """Set once the first request is answered (not another: the first may still be
        running), or the service stops: the warm-up goes on to the embedder, dateparser and
        Chroma."""

    # running ---------------------------------------------------------------------------

    def serve(self, ready: Callable[[str], None] | None = None) -> None:
        """Take the store, listen, answer until stopped, then give everything up.

        ``ready`` gets one line once the socket accepts. Raises StoreLockedError when
        another process holds the store for longer than ``lock_timeout``."""
        os.umask(0o077)
        _setup_log(self.paths)
        self.resources.store.open_resident()
        try:
            pending = Engine(
                self.settings, self.paths, store=self.resources.store, embedder=self.resources.embedder(self.settings)
            )  # type: ignore[arg-type]
            stored = pending.flush_pending()
            if stored:
                log.info("stored %d journaled memories", len(stored))
            short = self.resources.store.space_problem()
            if short:  # the service serves reads and deletes all the same (a full device, not a broken store)
                log.warning("read-mostly: %s", short)
            listener = self._listener = self._listen()
            try:
                self._write_service_file()
                self._warming = threading.Thread(target=self._warm_up, name="warm-up", daemon=True)
                self._warming.start()
                threading.Thread(target=self._watch_idle, name="idle", daemon=True).start()
                previous = (
                    signal.signal(signal.SIGTERM, lambda *_: self.stop())
                    if threading.current_thread() is threading.main_thread()
                    else None
                )
                log.info("memcli %s service (pid %d) listening on %s", __version__, os.getpid(), self.paths.socket)
                if ready:
                    ready(
                        f"memcli service (pid {os.getpid()}) listening on {self.paths.socket}; log: {self.paths.log_file}"
                    )
                try:
                    self._accept(listener)
                finally:
                    if previous is not None:
                        signal.signal(signal.SIGTERM, previous)
            finally:
                with contextlib.suppress(OSError):  # its socket file may be gone with its folder
                    listener.close()
                with contextlib.suppress(OSError):
                    self.paths.service_file.unlink()
                with contextlib.suppress(OSError):
                    self.paths.socket.unlink()
        finally:
            self._drain()
            self.resources.store.close()
            log.info("stopped after %d requests", self.requests)

    def stop(self) -> None:
        """Stop accepting requests and let ``serve`` return (from any thread)."""
        if self._stopping.is_set():
            return
        self._stopping.set()
        self._wake()

    def stop_if_alone(self, served: int) -> bool:
        """Stop as ``stop`` does when no other client has a connection open whose request is
        not answered yet and at most ``served`` requests were served (this one included):
        the one client that asks (``memcli.transport.client.ServiceClient.stop_if_alone``)
        started the service for itself alone. Decided under the lock ``_accept`` counts a
        new connection under, so a client whose connection was accepted before the stop
        request is decided keeps the service, its request maybe not sent yet (it would
        otherwise go unanswered and start another: a cold start); one accepted after, still
        in the listen queue then, is closed unanswered and its client starts a new service.
        A connection whose client has closed it counts until its thread has read the end.
        True when it stops."""
        with self._counter:
            if self._unanswered > 1 or self.requests > served or self._stopping.is_set():
                return False
            self._stopping.set()
        self._wake()
        return True

    def _wake(self) -> None:
        """Let the warm-up and ``_accept`` see ``_stopping``, set already."""
        self._answered.set()
        # accept() does not wake when its socket is closed from another thread; a connection does.
        try:
            Client(str(self.paths.socket), family="AF_UNIX").close()
        except OSError:
            # The socket file is gone (its MEMCLI_HOME was deleted under the service): no one
            # can connect, so shutting the listening socket down is what wakes accept() (Linux).
            with contextlib.suppress(AttributeError, OSError):
                self._listener._listener._socket.shutdown(socket.SHUT_RDWR)  # type: ignore[union-attr]

    def _listen(self) -> Listener:
        run = self.paths.run_dir
        run.mkdir(parents=True, exist_ok=True)
        found = os.lstat(run)
        if not stat.S_ISDIR(found.st_mode) or found.st_uid != os.getuid():
            # Under the shared temporary folder someone else may have made it first.
            raise MemcliError(f"{run} is not a directory of this user's own; remove it and start again")
        os.chmod(run, 0o700)
        # Holding the store lock, this is the only service of this store: a socket left by
        # a killed one is stale.
        with contextlib.suppress(FileNotFoundError):
            self.paths.socket.unlink()
        listener = Listener(str(self.paths.socket), family="AF_UNIX", backlog=64)
        os.chmod(self.paths.socket, 0o600)
        return listener

    def _write_service_file(self) -> None:
        data = {
            "pid": os.getpid(),
            "process_start": process_start(os.getpid()),
            "version": __version__,
            "protocol": PROTOCOL,
            "socket": str(self.paths.socket),
            "started_at": self.started_at,
        }
        write_private(self.paths.service_file, json.dumps(data))

    def _warm_up(self) -> None:
        # What recall, ask, chat and a write read texts with (their patterns compile at import:
        # most of a CPU-second) is imported here once the first request is answered, not before
        # the socket listens nor beside the first request: a list, show or stats that started
        # the service does not wait for it, nor for the GIL it holds, and a request that needs
        # it imports it itself, or waits only for what is left (an import's module lock).
        if not self._answered.wait(WARM_UP_AFTER):
            with self._counter:
                running = self._active > 0
            if running:
                # A first request still running then (a cold ask on a busy machine) imports what it
                # needs itself: the warm-up beside it only took the GIL from it, and had dateparser
                # read its first date a second time (0.5-0.7 s of a cold ask at load 6).
                self._answered.wait()
        for module in TEXT_READING:
            if self._stopping.is_set():
                return
            try:
                importlib.import_module(module)
            except Exception:  # the request that needs it meets the same fault, with its own message
                log.exception("importing %s failed", module)
        if self._stopping.is_set():
            return
        self._load_embedder(self.settings).join()
        query_dates("on May 2nd", time.time())  # dateparser loads its English data on its first call (0.2 s)
        # A store opened without Chroma (``memcli.store.store_open``, ``CLOSED_FILE``) opens it at
        # its first write: chromadb's import and Chroma's opening (a second or more of Python
        # holding the GIL) are paid here, not by that write, but only once the service is
        # quiet: imported while a script's recalls came back to back, it made each of the
        # first few 0.2 s slower.
        if not self._quiet(CHROMA_AFTER_QUIET):
            return
        # chromadb is imported only here, late, as the store opens it: not on a service's start
        from memcli.store.chroma import _import_chroma

        _import_chroma()  # without the store's lock: a request that comes meanwhile does not wait for it
        try:
            self.resources.store.open_chroma()
        except Exception:  # the first write meets the same fault, with its own message
            log.exception("opening Chroma failed")
        # What the memories of a store written by another memcli state, for supersession at
        # write time (until then it reads a user's memories one by one): a page at a time,
        # requests served in between.
        try:
            read, seconds = self.resources.store.fill_statements(stop=self._stopping.is_set)
            if read:
                log.info("read what %d memories state in %.1f s", read, seconds)
        except Exception:
            log.exception("reading what the memories state failed")

    def _load_embedder(self, settings: Settings) -> threading.Thread:
        """The thread that loads the embedder of ``settings`` and embeds one word with it
        (its first run allocates what later ones reuse), started now unless a load was
        started already (then that one's thread). A bad embedder setting is logged here
        and fails the requests that need it, with their own message."""
        with self._counter:
            if self._loading is None:
                self._loading = threading.Thread(
                    target=self._embed_first, args=(settings,), name="embedder", daemon=True
                )
                self._loading.start()
            return self._loading

    def _embed_first(self, settings: Settings) -> None:
        try:
            self.resources.embedder(settings).embed_one("memcli")
        except Exception:
            log.exception("loading the embedder failed")

    def _quiet(self, seconds: float) -> bool:
        """Wait until no request has run for ``seconds`` (True), or the service stops (False)."""
        while True:
            with self._counter:
                left = seconds - (time.monotonic() - self._last) if self._active == 0 else seconds
            if left <= 0:
                return True
            if self._stopping.wait(left):
                return False

    def _watch_idle(self) -> None:
        """Stop after ``idle`` seconds without a request, or, checked as often (at most every
        second), as soon as the socket file it listens on is gone or is another one: no
        client can reach it any more (its MEMCLI_HOME deleted under it, as a script's or a
        test's temporary home is), and it would otherwise hold its memory until the idle
        exit."""
        interval = max(0.05, min(1.0, self.idle / 4))
        listening = _file_identity(self.paths.socket)
        while not self._stopping.wait(interval):
            with self._counter:
                idle = self._active == 0 and time.monotonic() - self._last > self.idle
            if idle:
                log.info("no request for %g s: exiting", self.idle)
                self.stop()
            elif _file_identity(self.paths.socket) != listening:
                log.info("%s is gone: no client can reach this service; exiting", self.paths.socket)
                self.stop()

    def _accept(self, listener: Listener) -> None:
        while not self._stopping.is_set():
            try:
                connection = listener.accept()
            except KeyboardInterrupt:
                self.stop()
                break
            except OSError as exc:
                if self._stopping.is_set():
                    break
                log.warning("accept failed: %s", exc)
                continue
            with self._counter:  # the lock ``stop_if_alone`` decides under: counted, or refused as stopping
                stopping = self._stopping.is_set()
                busy = not stopping and self._open >= MAX_CONNECTIONS
                if not (stopping or busy):
                    self._open += 1
                    self._unanswered += 1
            if stopping:
                connection.close()  # unanswered, so its client starts another service
                break
            if busy:
                if not self._refusing:  # once per busy spell: a flood of clients must not flood the log
                    log.warning("%d connections open: refusing more", MAX_CONNECTIONS)
                self._refusing = True
                with connection:
                    self._refuse(
                        connection,
                        f"the memcli service is busy ({MAX_CONNECTIONS} connections open); try again in a moment",
                    )
                continue
            self._refusing = False
            threading.Thread(target=self._connection, args=(connection,), daemon=True).start()

    def _drain(self, seconds: float = 5.0) -> None:
        """Give requests in flight, and the warm-up (loading the embedder), a moment to
        finish before the store is given up: a thread inside torch or Chroma when the
        process ends is what aborts it (``end_process``)."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            with self._counter:
                if self._active == 0 and not any(
                    t is not None and t.is_alive() for t in (self._warming, self._loading)
                ):
                    return
            time.sleep(0.05)
        log.info("%d requests still running at the stop", self._active)

    # one request -------------------------------------------------------------------------

    def _connection(self, connection: Connection) -> None:
        """Serve one connection (counted open by ``_accept``): read its request within
        ``REQUEST_TIMEOUT``, run it, answer. Whatever a client sends ends in a reply or a
        closed connection, never in a thread that dies or waits forever."""
        answered = False

        def answering() -> None:
            # before the reply is sent: its client may connect again as soon as it reads it
            nonlocal answered
            with self._counter:
                if not answered:
                    answered = True
                    self._unanswered -= 1

        try:
            with connection:
                uid = peer_uid(connection)
                if not peer_allowed(uid):
                    log.warning("refused a client of uid %s", uid)
                    self._refuse(connection, f"the memcli service of uid {os.getuid()} refuses clients of uid {uid}")
                    return
                try:
                    request = json.loads(read_request(connection, REQUEST_TIMEOUT))
                except BadRequest as exc:
                    log.warning("refused a request: %s", exc)
                    self._refuse(connection, str(exc))
                    return
                except (EOFError, OSError):
                    return  # the client left before its request was whole: no one to answer
                except (ValueError, RecursionError):  # not JSON, or nested deeper than the parser goes
                    request = None
                if not isinstance(request, dict):
                    self._refuse(connection, "the memcli service could not read the request (not a JSON object)")
                    return
                with self._counter:
                    if self._stopping.is_set():
                        return  # unanswered: the client may send it again, to a new service
                    self.requests += 1
                    first = self.requests == 1
                    self._active += 1
                    self._last = time.monotonic()
                if request.get("verb") in LOADS_AT_ONCE:
                    self._load_embedder(self.settings)  # beside the request's reading of its input
                try:
                    self._handle(connection, request, answering)
                finally:
                    if first:  # the warm-up waits for this answer alone, not a later request's
                        self._answered.set()
                    with self._counter:
                        self._active -= 1
                        self._last = time.monotonic()
        except Exception:  # a bug must cost one connection, logged, not a silent dead thread
            log.exception("a connection failed")
        finally:
            answering()
            with self._counter:
                self._open -= 1

    def _handle(
        self, connection: Connection, request: dict[str, Any], answering: Callable[[], None] = lambda: None
    ) -> None:
        """Run ``request`` and send its events and reply on ``connection``; ``answering()``
        is called right before the reply (``result``, ``error``, ``mismatch``) is sent."""
        verb = str(request.get("verb", ""))
        started = time.perf_counter()

        sending = threading.Lock()  # an import's store thread sends its ``saved`` events too

        def send(event: dict[str, Any]) -> None:
            if event.get("event") in ("result", "error", "mismatch"):
                answering()
            try:
                # orjson: a forget --dry-run over 100,000 memories replies with 60 MB of JSON (1.4 s with json).
                data = orjson.dumps(event, option=orjson.OPT_SERIALIZE_NUMPY)
                with sending:
                    connection.send_bytes(data)
            except OSError:
                raise Interrupted("the client went away") from None

        cancel = Cancel(connection)

        def emit(event: str, **fields: Any) -> None:
            if event == "saved":
                # What is safe so far (``Engine``'s ``saved``): not a point to stop at, and
                # the write goes on whether or not the client is there to hear it.
                with contextlib.suppress(Interrupted):
                    send({"event": event, **fields})
                return
            if cancel.first():
                raise Interrupted("interrupted")
            send({"event": event, **fields})

        outcome = "ok"
        try:
            if verb == "service.stop":
                alone = (request.get("args") or {}).get("if_alone")
                if alone is not None:  # a client that started the service for itself alone
                    stopping = self.stop_if_alone(int(alone))
                    send({"event": "result", "data": stopping})
                    if stopping:
                        log.info("stop requested: no other client")
                    return
                send({"event": "result", "data": None})
                log.info("stop requested")
                self.stop()
                return
            if verb == "service.status":
                send({"event": "result", "data": self.status().model_dump(mode="json")})
                return
            if (request.get("version"), request.get("protocol")) != (__version__, PROTOCOL):
                send({"event": "mismatch", "version": __version__, "protocol": PROTOCOL})
                outcome = f"mismatch with client {request.get('version')}"
                return
            emit("accepted")
            with self.resources.emitting(emit, cancel):
                library = Memcli(self.resources.engine(request), emit)
                data = verbs.dump(api.run(library, verb, request.get("args") or {}))
            send({"event": "result", "data": data})
        except Interrupted as exc:
            outcome = f"interrupted: {exc.message}"
            self._reply_error(send, int(exc.exit_code), exc.message, request)  # a client that cancelled waits for it
        except MemcliError as exc:
            outcome = f"error {int(exc.exit_code)}: {exc.message}"
            self._reply_error(send, int(exc.exit_code), exc.message, request)
        except Exception as exc:
            log.exception("request %s failed", verb)
            outcome = f"unexpected {type(exc).__name__}: {exc}"
            self._reply_error(
                send,
                1,
                f"unexpected {type(exc).__name__} in the memcli service: {exc} (see {self.paths.log_file})",
                request,
            )
        finally:
            log.info("%s %s in %.1f ms", verb, outcome, (time.perf_counter() - started) * 1000)

    @staticmethod
    def _refuse(connection: Connection, message: str) -> None:
        """Tell a client its request will not run (exit 7), so it does not try again."""
        with contextlib.suppress(OSError):
            connection.send_bytes(orjson.dumps({"event": "error", "code": 7, "message": message}))

    @staticmethod
    def _reply_error(
        send: Callable[[dict[str, Any]], None], code: int, message: str, request: Mapping[str, Any]
    ) -> None:
        event: dict[str, Any] = {"event": "error", "code": code, "message": message}
        if request.get("debug"):
            event["traceback"] = traceback.format_exc()
        with contextlib.suppress(Interrupted):
            send(event)

    def status(self) -> schema.ServiceStatus:
        """What ``memcli service status`` shows."""
        return schema.ServiceStatus(
            pid=os.getpid(),
            version=__version__,
            protocol=PROTOCOL,
            started_at=schema.iso_time(self.started_at),
            uptime_seconds=round(time.time() - self.started_at, 3),
            users_loaded=self.resources.users_loaded(),
            rss_bytes=rss_bytes(),
            requests_served=self.requests,
            socket=str(self.paths.socket),
            log_file=str(self.paths.log_file),
            read_mostly=self.resources.store.space_problem() or None,
        )


class _RedactingFormatter(logging.Formatter):
    """A log line without keys or anything shaped like one (``memcli.errors.redact``),
    tracebacks included."""

    def format(self, record: logging.LogRecord) -> str:
        return redact(super().format(record))


def _setup_log(paths: Paths) -> None:
    """The service's log: ``paths.log_file``, rotated at 1 MB, three files kept."""
    private_dir(paths.state_dir)
    for existing in list(log.handlers):
        if getattr(existing, "memcli_service", False):
            log.removeHandler(existing)
    handler = logging.handlers.RotatingFileHandler(paths.log_file, maxBytes=1 << 20, backupCount=2, encoding="utf-8")
    handler.setFormatter(_RedactingFormatter("%(asctime)s %(process)d %(levelname)s %(message)s"))
    handler.memcli_service = True  # type: ignore[attr-defined]
    log.addHandler(handler)
    log.setLevel(logging.INFO)
    log.propagate = False
    os.chmod(paths.log_file, 0o600)


def _file_identity(path: Path) -> tuple[int, int] | None:
    """The (device, inode) of the file at ``path``, or None when there is none."""
    try:
        found = os.stat(path)
    except OSError:
        return None
    return found.st_dev, found.st_ino


def serve(
    paths: Paths, env: Mapping[str, str] | None = None, ready: Callable[[str], None] | None = None, **given: Any
) -> None:
    """Run the service of ``paths`` in the foreground (``memcli serve``); ``given``:
    keyword arguments of ``Service`` (models, idle)."""
    settings = load_settings(paths, env=None if env is None else dict(env))
    Service(paths, settings, **given).serve(ready)
    end_process()


def main() -> None:
    """The service as a client starts it in the background (``memcli.transport.serve``):
    ``memcli serve --quiet`` without the command line, whose modules (Typer) the service
    never uses: a tenth of a CPU-second of every cold command, before the socket listens.
    The paths are ``MEMCLI_HOME``'s (``resolve_paths``), refused as the command refuses them
    (``check_home``); an error ends it as it ends the command (``memcli.errors.fail``): one
    line on stderr (the service log) and the error's exit code, which the client reads
    (``BAD_INPUT``: bad settings); MEMCLI_DEBUG puts the traceback before the line."""
    os.umask(0o077)  # as the command line's: what it makes is its user's alone
    debug = bool(os.environ.get("MEMCLI_DEBUG"))
    try:
        paths = resolve_paths()
        check_home(paths)
        serve(paths)
    except MemcliError as exc:
        if debug:
            traceback.print_exc()
        fail(exc.message, int(exc.exit_code))
    except KeyboardInterrupt:
        fail("interrupted", int(ExitCode.INTERRUPTED))
    except Exception as exc:
        if debug:
            traceback.print_exc()
        fail(f"unexpected {type(exc).__name__}: {exc} (set MEMCLI_DEBUG=1 for the traceback)", int(ExitCode.ERROR))


def end_process(code: int = 0) -> None:
    """End the service's process now, once ``Service.serve`` has returned (its requests
    drained, its store closed, the journal on disk), without the interpreter's shutdown.

    Why: the service's process has threads that native libraries started and never stop
    (torch's OpenMP pool, Chroma's tokio and SQLite workers; llama.cpp's when a chat model
    was loaded), and may have a request thread that outlived the drain, inside a torch or
    Chroma call with the GIL released. Python's shutdown then runs the C++ static
    destructors under the live threads, and makes each daemon thread that wakes up
    take a forced unwind (``pthread_exit``) through the C++ frames it is in: either
    ends in ``std::terminate`` ("terminate called without an active exception" in the
    service log, SIGABRT) or in a process that never exits until ``stop`` signals it.
    Nothing is left to save by then, so the log and the standard streams are flushed
    and the process exits at once (``os._exit``), as a forked server's child does."""
    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(code)
