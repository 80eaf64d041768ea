"""The candidates of shell completion (memory ids, user names, kinds), read from the
recall index table of the sidecar database (``memcli.store.recall_index``): a query on an open
SQLite connection, used by the sidecar (``Sidecar.completions``, the service's answer) and
by ``memcli.cli.completion`` (the sidecar file read directly). Standard library only: the
shell runs memcli at every TAB press.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from memcli.memory import Kind

WHAT = ("id", "user", "kind", "entity")
"""What can be completed."""
LIMIT = 50
"""Candidates offered at most (newest memories first): more is noise in a shell menu."""
KIND_HELP = {
    Kind.TURN.value: "a chat or conversation turn",
    Kind.NOTE.value: "a note (memcli remember)",
    Kind.FACT.value: "a fact extracted by consolidation",
    Kind.EVENT_DAILY.value: "a day's event summary",
    Kind.EVENT_GLOBAL.value: "the global event summary",
    Kind.PORTRAIT_DAILY.value: "a day's portrait",
    Kind.PORTRAIT_GLOBAL.value: "the global portrait",
    Kind.RUNNING_SUMMARY.value: "the running memory of past sessions",
    Kind.RELATION.value: "a relation of the graph memory (memcli graph)",
}


def _after(prefix: str) -> str:
    """The smallest string above every string that starts with ``prefix`` (a range scan
    on an index instead of LIKE, which SQLite cannot use on a case-sensitive column)."""
    return prefix + "\U0010ffff"


def candidates(
    db: sqlite3.Connection, what: str, prefix: str = "", user: str | None = None, limit: int = LIMIT
) -> list[tuple[str, str]]:
    """(value, help) pairs that complete ``prefix``: memory ids (the latest stored first, ``user``'s
    only when given; help: the start of the text), user names (help: how many memories),
    kinds, or entity names of the graph memory (help: the type; ``user``'s only when given,
    matched case-insensitively). Reads the ``recall_index`` and ``graph_entities`` tables of
    the sidecar ``db``.

    Raises ValueError for an unknown ``what``; sqlite3.Error as the database does."""
    if what == "kind":
        return [(k, h) for k, h in KIND_HELP.items() if k.startswith(prefix)]
    if what == "user":
        rows = db.execute(
            "SELECT user, count(*) FROM recall_index WHERE user >= ? AND user < ? GROUP BY user ORDER BY user LIMIT ?",
            (prefix, _after(prefix), limit),
        ).fetchall()
        return [(name, f"{count} memories") for name, count in rows]
    if what == "id":
        # A prefix of 2+ hex digits matches few rows: found by the id index, then ordered. A
        # shorter one matches many: the table is walked newest row first and stops at
        # ``limit`` (the unary + keeps SQLite off the id index, which would sort them all).
        column = "memory_id" if len(prefix) >= 2 else "+memory_id"
        query = f"SELECT memory_id, kind, text FROM recall_index WHERE {column} >= ? AND {column} < ?"
        args: list[Any] = [prefix, _after(prefix)]
        if user:
            query += " AND user = ?"
            args.append(user)
        rows = db.execute(query + " ORDER BY rowid DESC LIMIT ?", (*args, limit)).fetchall()
        return [(memory_id, f"{kind}: {' '.join(text.split())[:60]}") for memory_id, kind, text in rows]
    if what == "entity":
        key = prefix.casefold()
        query, args = "SELECT name, type FROM graph_entities WHERE key >= ? AND key < ?", [key, _after(key)]
        if user:
            query += " AND user = ?"
            args.append(user)
        rows = db.execute(query + " ORDER BY key LIMIT ?", (*args, limit)).fetchall()
        return list(dict.fromkeys((name, kind) for name, kind in rows))
    raise ValueError(f"cannot complete {what!r}; choose one of {', '.join(WHAT)}")
