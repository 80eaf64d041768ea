"""SQLite helpers shared by the sidecar database (``memcli.store.sidecar``) and the recall index
in it (``memcli.store.recall_index``)."""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Iterator, Sequence
from typing import Any

IN_PAGE = 500
"""Ids one ``IN (...)`` query takes (``rows_in``), well under SQLite's bound on a statement's variables."""


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
