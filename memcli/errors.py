"""The MemcliError hierarchy and memcli's exit codes.

The core raises these; ``memcli.cli`` turns each into one line on stderr and
exits with the error's code. The codes are documented in docs/errors.md and the
man page (EXIT STATUS).
"""

from __future__ import annotations

import errno
import re
import sys
from enum import IntEnum
from typing import NoReturn


class ExitCode(IntEnum):
    """Process exit codes of the ``memcli`` command."""

    OK = 0
    ERROR = 1
    USAGE = 2
    MODEL = 3
    STORE_LOCKED = 4
    BAD_INPUT = 5
    NOT_FOUND = 6
    SERVICE = 7
    EMBEDDER_CHANGED = 8
    READ_ONLY = 9
    DISK_FULL = 10
    STORE_SERVER = 11
    UNSAFE_HOME = 12
    INTERRUPTED = 130


EXIT_CODE_MEANINGS: dict[ExitCode, str] = {
    ExitCode.OK: "success (an ask that finds nothing in the memories too: it says so, and --json has answered false)",
    ExitCode.ERROR: "unexpected error (run with --debug for the traceback)",
    ExitCode.USAGE: "usage error: unknown command or option, invalid option value",
    ExitCode.MODEL: "the chat model or the embedder is missing or invalid, or the model server failed (refused, timed out, an error status)",
    ExitCode.STORE_LOCKED: "the memory store (or consolidation) is locked by another memcli process",
    ExitCode.BAD_INPUT: "bad input: a file or text that cannot be read or parsed (an import file, the config file, a MEMCLI_* setting, text that is not UTF-8 or holds a NUL, a question longer than the model's context)",
    ExitCode.NOT_FOUND: "no memory with that id, or (ask) no user of that name",
    ExitCode.SERVICE: "the memcli service is not running (service status), is busy, refused the request, or stopped while answering (the message says what was kept)",
    ExitCode.EMBEDDER_CHANGED: "the store's memories were embedded by another embedder than the one configured: run memcli reindex",
    ExitCode.READ_ONLY: "the memory store is read-only (a read-only mount, chattr +i, no write permission): read commands work, writes are refused",
    ExitCode.DISK_FULL: "no space left on the device of the memory store: nothing of the write was stored (an import says how much it stored); reads and deletes work",
    ExitCode.STORE_SERVER: "the Chroma server of store_url cannot be used (down, refused the token, timed out, another API version); the same command works once it is back (a note is saved and stored then; an import says how many it stored)",
    ExitCode.UNSAFE_HOME: "a memcli folder (MEMCLI_HOME, or its config, data, state or cache folder) belongs to another user or can be written by others: nothing was read or written; the message names it and the fix (chmod 700, chown)",
    ExitCode.INTERRUPTED: "interrupted (Ctrl-C)",
}


DISK_FULL_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG})
"""The OSError numbers of a device (or quota, or file size limit) that is full: a write
that meets one is a DiskFullError."""
READ_ONLY_ERRNOS = frozenset({errno.EROFS, errno.EACCES, errno.EPERM})
"""The OSError numbers of a folder that cannot be written (a read-only mount, no
permission, ``chattr +i``): a write under the data folder that meets one is a
ReadOnlyStoreError."""


_SECRETS: set[str] = set()
_TOKEN_SHAPES = re.compile(
    r"(?i)\b(bearer|basic)(\s+)[A-Za-z0-9._~+/=\-]{8,}"
    r"|\b((?:access_|api_|x-api-)?(?:token|key|secret|password))([\"']?\s*[:=]\s*[\"']?)[A-Za-z0-9._~+/=\-]{8,}"
    r"|\bsk-[A-Za-z0-9_\-]{8,}"
)
REDACTED = "[redacted]"


def register_secret(value: str) -> None:
    """Remember a key memcli read (a model or embedding server's API key) so that
    ``redact`` takes it out of every message and log line; keys shorter than 4 characters
    are not worth hiding (and would blank common words)."""
    if len(value) >= 4:
        _SECRETS.add(value)


def redact(text: str) -> str:
    """``text`` without the keys ``register_secret`` was given and without anything shaped
    like a credential: ``Bearer …``, ``token: …``, ``api_key=…``, ``sk-…`` (a server that
    echoes a request's Authorization header in its error body must not put the key on
    stderr or in the service log)."""
    for secret in sorted(_SECRETS, key=len, reverse=True):
        text = text.replace(secret, REDACTED)
    return _TOKEN_SHAPES.sub(_redacted, text)


def fail(message: str, code: int) -> NoReturn:
    """End the process as every memcli command ends on an error: one line
    ``memcli: error: MESSAGE`` (``redact``-ed) on stderr, then exit ``code`` (an ``ExitCode``).
    Raises SystemExit."""
    sys.stderr.write(f"memcli: error: {redact(message)}\n")
    sys.stderr.flush()
    raise SystemExit(code)


def _redacted(match: re.Match[str]) -> str:
    """What ``redact`` writes for one credential-shaped ``match``: its keyword kept."""
    for name, gap in ((1, 2), (3, 4)):
        if match.group(name):
            return f"{match.group(name)}{match.group(gap)}{REDACTED}"
    return REDACTED


class MemcliError(Exception):
    """Base of every expected memcli failure; carries the process exit code. Its message
    is ``redact``-ed: no key reaches a user's screen or a log through an error."""

    exit_code: ExitCode = ExitCode.ERROR

    def __init__(self, message: str) -> None:
        message = redact(message)
        super().__init__(message)
        self.message = message


class UsageError(MemcliError):
    """An option value that memcli cannot use (for example an unknown --format)."""

    exit_code = ExitCode.USAGE


class ModelError(MemcliError):
    """The GGUF chat model or the sentence-transformers embedder is missing or invalid."""

    exit_code = ExitCode.MODEL


class ModelServerError(ModelError):
    """A request to the model server failed (refused, DNS, TLS, 401/403, 404, 5xx, a
    timeout, a stream cut mid-reply); the message names the URL, never the key, and the
    cause. ``status``: the HTTP status, when the server answered with one."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class StoreLockedError(MemcliError):
    """Another process held the store lock for longer than the configured timeout."""

    exit_code = ExitCode.STORE_LOCKED


class StoreHeldError(StoreLockedError):
    """The store lock stayed held for ``waited`` seconds (the lock file ``lock_file``): by
    the memcli service of pid ``pid``, or (None) by another memcli process. The message
    says so, and what to do, as the command line words it; another front end may word it
    from these fields."""

    def __init__(self, pid: int | None, waited: float, lock_file: str) -> None:
        self.pid = pid
        self.waited = waited
        self.lock_file = lock_file
        if pid is None:
            holder = "the memory store is in use by another memcli process; try again later or raise lock_timeout"
        else:
            holder = (
                f"the memory store is held by the memcli service (pid {pid}); run the command without --no-service "
                '(and without service = "off" or MEMCLI_SERVICE=off), or stop the service first: memcli service stop'
            )
        super().__init__(f"{holder} (waited {waited:g} s for {lock_file})")


class BadInputError(MemcliError):
    """Input memcli cannot read: a malformed import file, empty text, a binary file."""

    exit_code = ExitCode.BAD_INPUT


class InvalidOutputError(MemcliError):
    """The chat model's reply was not the JSON asked for, even after a retry. Consolidation
    catches it, skips that piece of work and reports it; it never reaches the user alone."""


class NotFoundError(MemcliError):
    """No memory has the given id, or a reading verb names a user without memories."""

    exit_code = ExitCode.NOT_FOUND


class ServiceError(MemcliError):
    """The memcli service is not running, or stopped answering in the middle of a request."""

    exit_code = ExitCode.SERVICE


class EmbedderChangedError(MemcliError):
    """The store's vectors come from another embedder than the configured one: recalling
    or writing would mix two vector spaces. ``memcli reindex`` re-embeds the store."""

    exit_code = ExitCode.EMBEDDER_CHANGED


class ReadOnlyStoreError(MemcliError):
    """A write to a store that cannot be written: its folder is on a read-only mount, is
    immutable (``chattr +i``) or is not writable by this user. Nothing was written."""

    exit_code = ExitCode.READ_ONLY


class DiskFullError(MemcliError):
    """The device of the store ran out of space (ENOSPC, EDQUOT, EFBIG, SQLite's "database
    or disk is full"), or has too little to take a write and keep the store's reserve for
    deleting (``memcli.store.space``); nothing of that write was stored (an import stopped part
    way says what it stored)."""

    exit_code = ExitCode.DISK_FULL


class StoreServerError(MemcliError):
    """The Chroma server of ``store_url`` could not be used: not running or unreachable,
    the token refused (401/403), no answer within ``store_timeout``, or a server of another
    API version. What memcli keeps beside it is left whole (an interrupted write is
    repaired from the server at the next command). ``reason``: what became of the server
    alone (its URL and why), without what became of the command, so that a caller that
    knows more (a journaled note, an import's stored count) can say it instead."""

    exit_code = ExitCode.STORE_SERVER

    def __init__(self, message: str, reason: str | None = None) -> None:
        super().__init__(message)
        self.reason = redact(reason) if reason is not None else self.message


class UnsafeHomeError(MemcliError):
    """A folder memcli keeps its memories in (MEMCLI_HOME, or its config, data, state or
    cache folder) is another user's, or others can write into it: whoever controls it could
    read or replace what memcli writes there, so memcli uses none of it (as ssh and gpg
    refuse such a folder). The message names the folder and the fix."""

    exit_code = ExitCode.UNSAFE_HOME


class Interrupted(MemcliError):
    """The request was interrupted: Ctrl-C, or its client went away."""

    exit_code = ExitCode.INTERRUPTED


def error_for(message: str, code: int) -> MemcliError:
    """The MemcliError of exit code ``code`` (an error the service reported), carrying
    ``message``."""
    for cls in (
        UsageError,
        ModelError,
        StoreLockedError,
        BadInputError,
        NotFoundError,
        ServiceError,
        EmbedderChangedError,
        ReadOnlyStoreError,
        DiskFullError,
        StoreServerError,
        UnsafeHomeError,
        Interrupted,
    ):
        if int(cls.exit_code) == code:
            return cls(message)
    return MemcliError(message)
