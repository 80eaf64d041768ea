"""Checks shared by the CLI tests: a command succeeded, or failed the way memcli promises."""

from __future__ import annotations

from typing import Any

from memcli.errors import ExitCode


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
