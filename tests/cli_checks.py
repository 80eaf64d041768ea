"""Checks shared by the CLI tests: a command succeeded, or failed the way memcli promises."""

from __future__ import annotations

import json
from typing import Any

from memcli import PROTOCOL, __version__
from memcli.cli import app
from memcli.errors import ExitCode
from memcli.transport.client import client_env


def ok(result: Any) -> Any:
    """The command exited 0 with no traceback; returns the result."""
    assert result.exit_code == 0, (result.exit_code, result.stdout, result.stderr)
    assert "Traceback" not in result.stdout + result.stderr
    return result


def assert_error(result: Any, code: ExitCode) -> str:
    """The command failed with ``code``, one line on stderr, no traceback; returns that line."""
    assert result.exit_code == int(code), (result.exit_code, result.stdout, result.stderr)
    assert "Traceback" not in result.stdout + result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].strip()
    return lines[0]


def remember_at(runner: Any, monkeypatch: Any, when: str, text: str) -> str:
    """``memcli remember -q TEXT`` as of ``when`` (ISO, through MEMCLI_NOW); returns the
    new memory's id."""
    monkeypatch.setenv("MEMCLI_NOW", when)
    return ok(runner.invoke(app, ["remember", "-q", text])).stdout.strip()


def ask_at(runner: Any, monkeypatch: Any, when: str, question: str) -> dict[str, Any]:
    """``memcli ask QUESTION --json`` as of ``when`` (ISO, through MEMCLI_NOW), read."""
    monkeypatch.setenv("MEMCLI_NOW", when)
    return json.loads(ok(runner.invoke(app, ["ask", question, "--json"])).stdout)


def show_json(runner: Any, memory_id: str) -> dict[str, Any]:
    """``memcli show ID --json``, read."""
    return json.loads(ok(runner.invoke(app, ["show", memory_id, "--json"])).stdout)


def handled(service: Any, ours: Any, theirs: Any, verb: str, args: dict[str, Any]) -> list[dict[str, Any]]:
    """The events a service (``memcli.transport.service.Service``) sends for one request of
    ``verb`` handled in this thread, the request coming over ``theirs`` and the events read
    from ``ours``, the two ends of one ``multiprocessing.connection.Pipe``."""
    request = {"verb": verb, "args": args, "env": client_env(), "version": __version__, "protocol": PROTOCOL}
    service._handle(theirs, request)
    events = []
    while ours.poll():
        events.append(json.loads(ours.recv_bytes()))
    return events
