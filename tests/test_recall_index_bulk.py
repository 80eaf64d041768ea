"""The bulk writer of a fresh user's recall index (``RecallIndex.put_fresh``): the rows it
writes are those ``put`` writes for the same batches (context, windows, vectors, the copy
of each memory), the user is left for ``fill_said`` to read what each memory states, and
what it cannot follow (a user with rows, a session split over two batches, another user's
memory) is refused before the batch is written."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from test_index import LINES, USER, embedding, note, session

from memcli.memory import Memory
from memcli.store.index import UserIndex
from memcli.store.recall_index import window_text
from memcli.store.sidecar import Sidecar

COLUMNS = (
    "memory_id, user, kind, session, speaker, created_at, archived, ended, text, caption, own, window,"
    " turn_vector, window_vector, context, spoken_day, record"
)


def batches() -> list[tuple[list[Memory], list[Any], dict[str, Any]]]:
    """Two batches of whole sessions: one with a note, a turn alone in its session and a
    session given out of time order; windows of the first session given, one left out."""
    first = session("s1")
    alone = session("s2", LINES[:1])
    second = session("s3", LINES[1:4])
    owns = [m.index_text() for m in first]
    windows = {window_text(owns, i): embedding(f"window {i}") for i in range(len(owns)) if i != 2}
    one = [*reversed(first), note("The harbour festival is in July"), *alone]
    two = [*second, note("I take the early ferry on Mondays")]
    return [
        (one, [embedding(m.text) for m in one], windows),
        (two, [embedding(m.text) for m in two], {}),
    ]


def table(sidecar: Sidecar) -> dict[str, tuple[Any, ...]]:
    return {row[0]: row for row in sidecar._db.execute(f"SELECT {COLUMNS} FROM recall_index")}


def test_put_fresh_writes_the_rows_put_writes(tmp_path: Path) -> None:
    one, two = Sidecar(tmp_path / "one.sqlite3"), Sidecar(tmp_path / "two.sqlite3")
    for memories, vectors, windows in batches():
        one.index.put(memories, vectors, windows)
    assert two.index.put_fresh(USER, batches()) == 11
    want, got = table(one), table(two)
    assert got == want
    assert sum(row[13] is None for row in got.values()) == 4, "windows not given are left to fill"
    assert not two.index.is_dirty(USER) and two.index.epoch(USER)
    # the index loaded from either recalls the same rows
    a, b = one.index.load(USER), two.index.load(USER)
    assert a.ids == b.ids and a.texts == b.texts
    assert np.array_equal(a.turn, b.turn) and np.array_equal(a.window, b.window)


def test_put_fresh_leaves_the_statements_to_fill_said(tmp_path: Path) -> None:
    sidecar = Sidecar(tmp_path / "s.sqlite3")
    sidecar.index.put_fresh(USER, batches())
    assert sidecar.index.unsaid() == [USER]
    after: int | None = 0
    while after is not None:
        after, _ = sidecar.index.fill_said(USER, after, 5)
    assert sidecar.index.unsaid() == []


@pytest.mark.parametrize("fault", ["user with rows", "session in two batches", "another user"])
def test_put_fresh_refuses_what_it_cannot_follow(tmp_path: Path, fault: str) -> None:
    sidecar = Sidecar(tmp_path / "s.sqlite3")
    given = batches()
    if fault == "user with rows":
        sidecar.index.put([note("already here")], [embedding("already here")])
    elif fault == "session in two batches":
        given[1][0].append(session("s1")[0])
        given[1][1].append(embedding("again"))
    else:
        given[1][0].append(note("someone else's", user="bob"))
        given[1][1].append(embedding("someone else's"))
    before = len(table(sidecar))
    with pytest.raises(ValueError):
        sidecar.index.put_fresh(USER, given)
    written = len(table(sidecar)) - before
    assert written in (0, len(given[0][0])), "no batch written in part"
    if fault != "user with rows":
        assert sidecar.index.is_dirty(USER), "an interrupted bulk write leaves its user to rebuild"


def test_an_index_loaded_from_put_fresh_rows_has_every_row(tmp_path: Path) -> None:
    sidecar = Sidecar(tmp_path / "s.sqlite3")
    sidecar.index.put_fresh(USER, batches())
    index = sidecar.index.load(USER)
    assert isinstance(index, UserIndex) and index.count == 11
    db = sqlite3.connect(tmp_path / "s.sqlite3")
    assert db.execute("SELECT count(*) FROM recall_index WHERE window_vector IS NULL").fetchone()[0] == 4
