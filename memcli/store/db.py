"""SQLite helpers shared by the sidecar database (``memcli.store.sidecar``) and the recall index
in it (``memcli.store.recall_index``)."""

from __future__ import annotations

import contextlib
import os
import sqlite3
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

IN_PAGE = 500
"""Ids one ``IN (...)`` query takes (``rows_in``), well under SQLite's bound on a statement's variables."""


def open_read_only(path: Path, timeout: float = 5.0) -> sqlite3.Connection:
    """A connection reading the SQLite database at ``path`` without writing a byte
    (``mode=ro``). A database in WAL mode cannot be opened so without its shared-memory
    file (``-shm``) where the folder cannot be written (a read-only mount, ``chmod -R
    a-w``): when SQLite refuses for that and nothing beside the file holds what it lacks
    (no non-empty ``-wal`` or ``-journal``: closed cleanly, or copied without them), it is
    opened as an immutable file (``immutable=1``: no locks, no log read). Standard
    library only (shell completion opens it at every TAB press). ``timeout``: seconds to
    wait on a lock. Raises sqlite3.OperationalError when it cannot be read (a lock held
    past ``timeout``, a log that cannot be read, an unreadable file)."""
    uri = f"{Path(path).absolute().as_uri()}?mode=ro"
    db = sqlite3.connect(uri, uri=True, timeout=timeout)
    try:
        db.execute("SELECT count(*) FROM sqlite_master").fetchone()  # opens the log, if any
        return db
    except sqlite3.OperationalError as exc:
        db.close()
        if exc.sqlite_errorcode in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED) or left_beside(path):
            raise
    db = sqlite3.connect(f"{uri}&immutable=1", uri=True, timeout=timeout)
    try:
        db.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except sqlite3.Error:
        db.close()
        raise
    return db


def left_beside(path: Path) -> str:
    """The suffix (``-wal``, ``-journal``) of a non-empty file beside the database at
    ``path`` that holds what the file alone lacks (committed pages, a write to roll back);
    "" when there is none."""
    for suffix in ("-wal", "-journal"):
        with contextlib.suppress(OSError):
            if os.stat(f"{os.fspath(path)}{suffix}").st_size > 0:
                return suffix
    return ""


@contextlib.contextmanager
def atomic(db: sqlite3.Connection) -> Iterator[None]:
    """One SQLite transaction around the block (committed at its end, rolled back on any
    exception), for a connection opened with ``isolation_level=None``, where ``with db:``
    alone would commit each statement by itself. Inside a transaction already, the block
    joins it.

    The error that ended the block (or the COMMIT) is the one raised: SQLite rolls a
    transaction back by itself on some errors (SQLITE_FULL "database or disk is full",
    SQLITE_IOERR, SQLITE_NOMEM), and a ROLLBACK after that would fail with "cannot
    rollback - no transaction is active" in its place, hiding a full disk."""
    if db.in_transaction:
        yield
        return
    db.execute("BEGIN IMMEDIATE")
    try:
        yield
        db.execute("COMMIT")
    except BaseException:
        if db.in_transaction:
            db.execute("ROLLBACK")
        raise


def execute_each(db: sqlite3.Connection, script: str) -> None:
    """Run the statements of ``script`` one at a time (each ended as
    ``sqlite3.complete_statement`` reads it, a trigger's body included): inside a
    transaction they join it, where ``executescript`` would commit it first."""
    statement = ""
    for piece in script.split(";"):
        statement += piece + ";"
        if sqlite3.complete_statement(statement):
            if statement.strip(" \n;"):
                db.execute(statement)
            statement = ""


def rows_in(db: sqlite3.Connection, sql: str, ids: Sequence[str], before: Sequence[Any] = ()) -> Iterator[Any]:
    """The rows of ``sql`` for every id of ``ids``, ``IN_PAGE`` ids a query: ``sql`` holds
    ``{marks}`` where the page's placeholders go (``... IN ({marks})``), and ``before`` are the
    parameters that come before them."""
    for start in range(0, len(ids), IN_PAGE):
        page = list(ids[start : start + IN_PAGE])
        yield from db.execute(sql.replace("{marks}", ", ".join("?" * len(page))), [*before, *page])


def execute_in(db: sqlite3.Connection, sql: str, ids: Sequence[str], before: Sequence[Any] = ()) -> None:
    """Run ``sql`` (a statement that returns no rows: a DELETE, an UPDATE) for every id of
    ``ids``, ``IN_PAGE`` ids a statement, as ``rows_in`` pages a query."""
    for _ in rows_in(db, sql, ids, before):
        pass
