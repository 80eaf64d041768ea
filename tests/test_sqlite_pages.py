"""``memcli.store.sqlite_pages.scrub_free_space``: what rows deleted or moved by a connection
without ``secure_delete`` (as Chroma's are) left in a SQLite file is zeroed in place, and
nothing else changes."""

from __future__ import annotations

import random
import sqlite3
from pathlib import Path

import pytest

from memcli.store.sqlite_pages import NotScrubbed, scrub_free_space


def written_as_chroma_writes(path: Path) -> list[str]:
    """A database written, updated and deleted from through a connection without
    ``secure_delete``, with a log purged as Chroma purges its own; returns the markers of
    the rows deleted."""
    rng = random.Random(7)
    db = sqlite3.connect(str(path), isolation_level=None)
    db.execute("PRAGMA secure_delete = OFF")
    db.execute("PRAGMA synchronous = OFF")  # a commit a row, as Chroma's, without waiting for the disk
    db.execute("CREATE TABLE t (id TEXT PRIMARY KEY, body TEXT)")
    db.execute("CREATE INDEX t_body ON t (body)")
    db.execute("CREATE TABLE q (seq INTEGER PRIMARY KEY, id TEXT, meta TEXT)")
    words = ["".join(rng.choice("abcdefghij") for _ in range(6)) for _ in range(300)]
    order = list(range(3000))
    rng.shuffle(order)
    for k, i in enumerate(order):
        body = (f"Marker{i:05d}Quixvane " if i % 100 == 0 else "") + " ".join(rng.choices(words, k=rng.randint(5, 400)))
        db.execute("INSERT INTO t VALUES (?, ?)", (f"{i:016x}", body))
        db.execute("INSERT INTO q (id, meta) VALUES (?, ?)", (f"{i:016x}", body))
        if k % 500 == 499:
            db.execute("DELETE FROM q WHERE seq <= (SELECT MAX(seq) - 100 FROM q)")
    for i in rng.sample(range(3000), 300):
        db.execute("UPDATE t SET body = body || ' and more words' WHERE id = ?", (f"{i:016x}",))
    gone = [f"Marker{i:05d}Quixvane" for i in range(0, 3000, 100)]
    db.execute("DELETE FROM t WHERE body LIKE 'Marker%'")
    db.execute("DELETE FROM q WHERE meta LIKE 'Marker%'")
    db.close()
    return gone


def contents(path: Path) -> list[tuple[object, ...]]:
    db = sqlite3.connect(str(path))
    try:
        assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        return (
            db.execute("SELECT * FROM t ORDER BY id").fetchall() + db.execute("SELECT * FROM q ORDER BY seq").fetchall()
        )
    finally:
        db.close()


def test_what_deleted_rows_left_is_zeroed_and_the_rows_kept_are_untouched(tmp_path: Path) -> None:
    path = tmp_path / "chroma.sqlite3"
    gone = written_as_chroma_writes(path)
    assert any(m.encode() in path.read_bytes() for m in gone), "a delete without secure_delete leaves the text"
    kept = contents(path)
    assert scrub_free_space(path) > 0
    data = path.read_bytes()
    assert [m for m in gone if m.encode() in data] == []
    assert contents(path) == kept
    assert scrub_free_space(path) == 0  # nothing left to zero


def test_a_connection_open_across_the_scrub_reads_the_file_again(tmp_path: Path) -> None:
    """Another connection's cached pages hold the old bytes: the change counter moves, so
    it reads the pages again, and a write through it does not bring them back."""
    path = tmp_path / "chroma.sqlite3"
    gone = written_as_chroma_writes(path)
    other = sqlite3.connect(str(path), isolation_level=None)
    other.execute("PRAGMA cache_size = -65536")
    other.execute("SELECT * FROM t").fetchall()  # every page of the table in its cache
    other.execute("SELECT * FROM q").fetchall()
    scrub_free_space(path)
    other.execute("UPDATE t SET body = upper(body)")  # every page of the table written again
    other.execute("UPDATE q SET meta = upper(meta)")
    other.close()
    data = path.read_bytes()
    assert [m for m in gone if m.encode() in data] == []


def test_a_wal_database_is_not_scrubbed_in_place(tmp_path: Path) -> None:
    path = tmp_path / "wal.sqlite3"
    db = sqlite3.connect(str(path), isolation_level=None)
    db.execute("PRAGMA journal_mode = WAL")
    db.execute("CREATE TABLE t (x TEXT)")
    db.close()
    with pytest.raises(NotScrubbed):
        scrub_free_space(path)
