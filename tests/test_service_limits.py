"""The service is not held by a client that says nothing, too much or nonsense: a read
deadline per request, a maximum request size checked before reading, a cap on open
connections, idle time counted from requests (issue 25, section 3).

The service runs in a thread of the test (its limits are module constants the tests
lower); the misbehaving clients are raw sockets speaking the frame format of
``multiprocessing.connection``.
"""

from __future__ import annotations

import json
import socket
import struct
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import FakeEmbedder

from memcli.config import load_settings
from memcli.errors import BadInputError, ServiceError
from memcli.paths import Paths, resolve_paths
from memcli.transport import client as client_module
from memcli.transport import service as service_module
from memcli.transport.client import Handlers, ServiceClient, client_env


@pytest.fixture
def paths(memcli_home: Path, monkeypatch: pytest.MonkeyPatch) -> Paths:
    monkeypatch.delenv("MEMCLI_SERVICE")
    return resolve_paths()


class Running:
    """A service serving in a thread of the test."""

    def __init__(self, paths: Paths, idle: float) -> None:
        self.service = service_module.Service(paths, load_settings(paths), embedder=FakeEmbedder(), idle=idle)
        self.thread = threading.Thread(target=self.service.serve, daemon=True)
        self.thread.start()
        deadline = time.monotonic() + 30
        while ServiceClient(paths).connect() is None:
            assert time.monotonic() < deadline, "the service did not start"
            time.sleep(0.02)
        self.started = time.monotonic()


@pytest.fixture
def start(paths: Paths) -> Iterator[Any]:
    started: list[Running] = []

    def run(idle: float = 60.0) -> Running:
        started.append(Running(paths, idle))
        return started[-1]

    yield run
    for running in started:
        running.service.stop()
        running.thread.join(30)


def connect(paths: Paths) -> socket.socket:
    sock = socket.socket(socket.AF_UNIX)
    sock.connect(str(paths.socket))
    return sock


def reply(sock: socket.socket, seconds: float = 10.0) -> dict[str, Any]:
    """The first event the service sends on ``sock``."""
    sock.settimeout(seconds)
    head = sock.recv(4, socket.MSG_WAITALL)
    assert len(head) == 4, f"closed without a reply ({head!r})"
    (size,) = struct.unpack("!i", head)
    return json.loads(sock.recv(size, socket.MSG_WAITALL))


def listed(paths: Paths) -> Any:
    return ServiceClient(paths).request({"verb": "list", "args": {}, "env": client_env()}, Handlers(), start=False)


@pytest.mark.parametrize("sent", [b"", struct.pack("!i", 100) + b'{"verb"'], ids=["nothing", "half a frame"])
def test_a_silent_client_gets_an_error_at_the_read_deadline(
    start: Any, paths: Paths, monkeypatch: pytest.MonkeyPatch, sent: bytes
) -> None:
    monkeypatch.setattr(service_module, "REQUEST_TIMEOUT", 0.5)
    start()
    with connect(paths) as sock:
        sock.sendall(sent)
        began = time.monotonic()
        event = reply(sock)
    assert 0.4 < time.monotonic() - began < 5
    assert event["event"] == "error" and event["code"] == 7 and "no whole request within 0.5 s" in event["message"]
    assert listed(paths) == []


def test_a_silent_client_does_not_keep_the_service_from_its_idle_exit(start: Any, paths: Paths) -> None:
    running = start(idle=1.0)
    with connect(paths) as sock:
        sock.sendall(struct.pack("!i", 100) + b"{")  # and nothing more, well within the 10 s read deadline
        running.thread.join(8)
        assert not running.thread.is_alive()
    assert time.monotonic() - running.started < 8


@pytest.mark.parametrize("length", [2**40, 2**62, 2**31 - 1])
def test_an_absurd_length_prefix_gets_an_error_before_anything_is_read(start: Any, paths: Paths, length: int) -> None:
    start()
    prefix = struct.pack("!i", length) if length < 2**31 else struct.pack("!i", -1) + struct.pack("!Q", length)
    with connect(paths) as sock:
        sock.sendall(prefix + b"{}")
        event = reply(sock)
    assert event["code"] == 7 and f"at most 256 MiB, not {length} bytes" in event["message"]
    assert listed(paths) == []


@pytest.mark.parametrize(
    "body",
    [b"[" * 100_000 + b"]" * 100_000, b'{"a":' * 50_000 + b"1" + b"}" * 50_000, b"\xff\xfe", b"[1, 2]"],
    ids=["nested lists", "nested objects", "not UTF-8", "not an object"],
)
def test_a_request_that_is_not_a_json_object_gets_an_error(start: Any, paths: Paths, body: bytes) -> None:
    start()
    with connect(paths) as sock:
        sock.sendall(struct.pack("!i", len(body)) + body)
        event = reply(sock)
    assert event["code"] == 7 and "could not read the request" in event["message"]
    assert listed(paths) == []


def test_connections_past_the_cap_are_refused_in_one_line(
    start: Any, paths: Paths, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(service_module, "MAX_CONNECTIONS", 3)
    running = start()
    silent = [connect(paths) for _ in range(3)]
    try:
        # a wait for the accepts, not a timing: a loaded CI machine took more than 10 s
        deadline = time.monotonic() + 60
        while running.service._open < 3:  # each is accepted and waits in its thread for a request
            assert time.monotonic() < deadline
            time.sleep(0.02)
        with pytest.raises(ServiceError) as refused:
            listed(paths)
        assert str(refused.value) == "the memcli service is busy (3 connections open); try again in a moment"
    finally:
        for sock in silent:
            sock.close()
    deadline = time.monotonic() + 60
    while True:  # the closed ones are let go of
        try:
            assert listed(paths) == []
            break
        except ServiceError:
            assert time.monotonic() < deadline
            time.sleep(0.05)


def test_the_client_does_not_send_a_request_longer_than_the_service_reads(
    start: Any, paths: Paths, monkeypatch: pytest.MonkeyPatch
) -> None:
    start()
    monkeypatch.setattr(client_module, "MAX_REQUEST_BYTES", 1 << 20)
    with pytest.raises(BadInputError, match=r"this request is 2\.0 MiB, more than the 1 MiB the memcli service reads"):
        ServiceClient(paths).request(
            {"verb": "remember", "args": {"text": "x" * (2 << 20)}, "env": client_env()}, Handlers(), start=False
        )
    monkeypatch.undo()
    assert listed(paths) == []


def test_a_request_longer_than_the_service_reads_opens_no_connection(
    start: Any, paths: Paths, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Refused before connecting: a first command's connection that sends nothing is
    counted by the service as another client's until its thread reads the end, and the
    failed command's stop_if_alone would leave the service running (or it would start one)."""
    start()
    monkeypatch.setattr(client_module, "MAX_REQUEST_BYTES", 1 << 20)
    connections: list[bool] = []
    connect = ServiceClient.connect

    def counted(self: ServiceClient) -> Any:
        connection = connect(self)
        connections.append(connection is not None)
        return connection

    monkeypatch.setattr(ServiceClient, "connect", counted)
    with pytest.raises(BadInputError, match=r"this request is 2\.0 MiB"):
        ServiceClient(paths).request(
            {"verb": "remember", "args": {"text": "x" * (2 << 20)}, "env": client_env()}, Handlers()
        )
    assert connections == []
