"""SQLite helpers shared by the sidecar database (``memcli.store.sidecar``) and the recall index
in it (``memcli.store.recall_index``)."""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Iterator


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
