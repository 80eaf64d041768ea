"""What each note and turn states, kept beside the recall index so that supersession at
write time (issue 31, ``memcli.recall.changes.Changes.supersede``) finds the memories a new
one may update by an indexed lookup instead of reading every memory of its user.

For every note and turn of the recall index (``memcli.store.recall_index``), written in the
same SQLite transaction as its row and deleted with it, ``said`` holds the attributes its
text states (``memcli.text.updates.statements``, in text order) and ``said_terms`` the terms
it is looked up by:

- ``@KEY`` for each attribute it states (``@residence``, ``@membership:gym``), a dose by
  its medicine's name cut as ``updates.key_needle`` cuts it (``@dose:levo``: "levo" and
  "levothyroxine" are one medicine, ``updates.same_key``);
- ``w:WORD`` for every word of its text as ``updates.states_habit`` reads words (Porter
  stems, ``memcli.text.lexical.stem_of``), and for a text with Chinese in it every
  character, but the commonest (``UNLOOKED``): a stopped habit's words are all among them
  when it states the habit.

The terms only narrow the candidates; supersession then reads them as it always did.

What a text states depends on the rules (``memcli.text.updates`` and what it reads), so a
user's rows are trusted only when all of them were written under the rules of this code
(``rules_version``): a user whose rows were all written by it is *covered* (``said_rules``).
A user's first memories, and a rebuild of a user's rows, cover them; rows written by
another version (or before this table existed) are parsed again by ``RecallIndex.fill_said``,
off the path of a request (the service's warm-up), and until then supersession reads the
user's memories as before (``RecallIndex.current_holding``).
"""

from __future__ import annotations

import functools
import hashlib
import importlib.resources
import json
import re
import sqlite3
from collections.abc import Iterable, Sequence

from memcli import __version__
from memcli.distributions import installed_version
from memcli.memory import Kind
from memcli.store.db import execute_in, rows_in
from memcli.text import updates
from memcli.text.lexical import stem_of

SAID_KINDS = (Kind.NOTE.value, Kind.TURN.value)
"""The kinds whose statements are kept: what supersession at write time reads."""

SCHEMA = """
CREATE TABLE IF NOT EXISTS said (
    sid INTEGER PRIMARY KEY,
    memory_id TEXT NOT NULL UNIQUE,
    user TEXT NOT NULL,
    statements TEXT NOT NULL,
    terms TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS said_terms (
    user TEXT NOT NULL,
    term TEXT NOT NULL,
    sid INTEGER NOT NULL,
    PRIMARY KEY (user, term, sid)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS said_rules (user TEXT PRIMARY KEY, rules TEXT NOT NULL);
"""

_RULE_MODULES = ("updates.py", "whose.py", "entities.py", "extractive.py", "lexical.py")
"""The modules of ``memcli.text`` whose code decides what a text states."""
_RULE_PACKAGES = ("jionlp", "jieba", "PyStemmer")
"""Packages whose data or code the rules read (Chinese place names, Porter stems)."""
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")
UNLOOKED = frozenset(
    "the and you that for have with your thi but thei about them some all just from had when our there other those "
    "what how can been more ani get got did 了 的 我 啦 也 就 都 还 再".split()
)
"""Words not kept as terms (nor looked up): words of two letters or fewer and the commonest
function words (stems), which half of all texts hold (measured on LoCoMo: about 45 % of the
terms). A habit is looked up by its other words; one of no other word is read by the scan."""


TERMS_VERSION = 2
"""What ``Said.write`` keeps as a statement's terms: 2 adds a held membership's initials
(``updates.INITIALS``: "^pf" of "Planet Fitness"), by which an initialism finds it. Part of
``rules_version``: other terms, statements parsed again."""


@functools.cache
def rules_version() -> str:
    """A digest of what decides the statements of a text: the source of
    ``memcli.text.updates`` and of the modules it reads, and the versions of the packages
    they take data from. Any change to them (a lexicon, a pattern) gives another version,
    so the statements kept are parsed again (``RecallIndex.fill_said``). An install without
    the sources (bytecode only) falls back to memcli's version for a module it cannot read,
    so its statements are parsed again at each release."""
    digest = hashlib.sha256(f"terms {TERMS_VERSION}".encode())
    text = importlib.resources.files("memcli.text")
    for name in _RULE_MODULES:
        try:
            digest.update(text.joinpath(name).read_bytes())
        except OSError:
            digest.update(f"{name} of memcli {__version__}".encode())
    for package in _RULE_PACKAGES:
        digest.update(f"{package}={installed_version(package) or 'none'}".encode())
    return digest.hexdigest()[:16]


def sqlite_lower(text: str) -> str:
    """``text`` lower-cased as SQLite's ``lower()`` does without ICU: ASCII letters only."""
    return text.translate(_ASCII_LOWER)


def key_term(key: str) -> str:
    """The term a text that states ``key`` (``Statement.key``) is found by: ``@`` and the
    key, a dose's medicine cut by ``updates.key_needle`` (the part ``same_key`` compares)."""
    attribute = key.partition(":")[0]
    if attribute == updates.DOSE:
        return f"@{updates.DOSE}:{updates.key_needle(key)}"
    return f"@{key}"


def word_terms(text: str) -> set[str]:
    """The ``w:`` terms of ``text``: the stem of each of its words, as
    ``updates.states_habit`` reads them, and each character of a text with Chinese in it."""
    words = {stem_of(w) for w in re.findall(r"[a-z]+", text.lower())}
    if re.search(r"[\u4e00-\u9fff]", text):
        words.update(text)
    return {f"w:{w}" for w in words if looked_up(w)}


def looked_up(word: str) -> bool:
    """Whether ``word`` (a stem, or a Chinese character) is kept as a term (``UNLOOKED``)."""
    return word not in UNLOOKED and (len(word) > 2 or bool(re.match(r"[\u3400-\u9fff]", word)))


def habit_terms(words: Iterable[str]) -> list[str]:
    """The terms a text that states the habit of ``words`` (``Statement.words`` of a stopped
    habit) holds for sure: every word kept as a term (``looked_up``); not those
    ``updates.states_habit`` may read in a subject it gives back to a sentence ("I", "I'm",
    "我"), which ``UNLOOKED`` holds."""
    return sorted(f"w:{w}" for w in words if looked_up(w))


def dump(statements: Sequence[updates.Statement]) -> str:
    """``statements`` as the JSON text ``load`` reads."""
    return json.dumps([[s.key, s.value, s.ended, sorted(s.words), s.state] for s in statements], ensure_ascii=False)


def load(text: str) -> list[updates.Statement]:
    """The statements ``dump`` wrote."""
    return [updates.Statement(k, v, bool(e), frozenset(w), st) for k, v, e, w, st in json.loads(text)]


class Said:
    """The statements tables of an open sidecar connection (see the module docstring). Its
    writes join the caller's transaction."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self._db = db

    def write(self, rows: Iterable[tuple[str, str, str, str]]) -> None:
        """Keep what each of ``rows`` (id, user, kind, text) states, in place of what was
        kept for its id; a memory of another kind than ``SAID_KINDS`` keeps nothing."""
        rows = list(rows)
        self.drop([r[0] for r in rows])
        for memory_id, user, kind, text in rows:
            if kind not in SAID_KINDS:
                continue
            stated = updates.statements(text)
            keys = {key_term(s.key) for s in stated if s.key.split(":", 1)[0] != updates.HABIT}
            initials = {
                w
                for s in stated
                if s.key.startswith(updates.MEMBERSHIP + ":")
                for w in s.words
                if w.startswith(updates.INITIALS)
            }
            terms = sorted(keys | initials | word_terms(text))
            sid = self._db.execute(
                "INSERT INTO said (memory_id, user, statements, terms) VALUES (?, ?, ?, ?)",
                (memory_id, user, dump(stated), json.dumps(terms, ensure_ascii=False)),
            ).lastrowid
            self._db.executemany("INSERT OR IGNORE INTO said_terms VALUES (?, ?, ?)", [(user, t, sid) for t in terms])

    def drop(self, ids: Sequence[str]) -> None:
        """Forget what the memories ``ids`` state."""
        gone = list(rows_in(self._db, "SELECT sid, user, terms FROM said WHERE memory_id IN ({marks})", ids))
        for sid, user, terms in gone:
            self._db.executemany(
                "DELETE FROM said_terms WHERE user = ? AND term = ? AND sid = ?",
                [(user, t, sid) for t in json.loads(terms)],
            )
        execute_in(self._db, "DELETE FROM said WHERE sid IN ({marks})", [g[0] for g in gone])

    def drop_user(self, user: str) -> None:
        """Forget what every memory of ``user`` states, and the mark of their rules."""
        self._db.execute("DELETE FROM said_terms WHERE user = ?", (user,))
        self._db.execute("DELETE FROM said WHERE user = ?", (user,))
        self._db.execute("DELETE FROM said_rules WHERE user = ?", (user,))

    def cover(self, users: Iterable[str]) -> None:
        """Mark ``users`` covered: every note and turn of theirs is kept under ``rules_version``."""
        version = rules_version()
        self._db.executemany("INSERT OR REPLACE INTO said_rules VALUES (?, ?)", [(u, version) for u in set(users)])

    def covers(self, user: str) -> bool:
        """Whether ``user`` is covered (``cover``): their candidates can be looked up here."""
        row = self._db.execute("SELECT rules FROM said_rules WHERE user = ?", (user,)).fetchone()
        return row is not None and row[0] == rules_version()

    def statements_of(self, ids: Sequence[str]) -> dict[str, list[updates.Statement]]:
        """id -> what the memory states, for those of ``ids`` kept here."""
        return {
            memory_id: load(text)
            for memory_id, text in rows_in(
                self._db, "SELECT memory_id, statements FROM said WHERE memory_id IN ({marks})", ids
            )
        }

    def current_with(
        self, user: str, kinds: Sequence[str], terms: Sequence[str]
    ) -> list[tuple[str, str, str, list[updates.Statement]]]:
        """(id, text, record, statements) of the current memories of ``user`` (neither
        archived nor ended) of ``kinds`` kept with every one of ``terms`` (at least one), in
        the order ``RecallIndex.current_holding`` gives them (by kind, then as written)."""
        found = " INTERSECT ".join("SELECT sid FROM said_terms WHERE user = ? AND term = ?" for _ in terms)
        kind_marks = ", ".join("?" * len(kinds))
        # CROSS JOIN keeps SQLite's loops in this order: from the terms' few rows, not from
        # every row of the user.
        rows = self._db.execute(
            f"SELECT r.memory_id, r.text, r.record, s.statements FROM ({found}) AS t"
            " CROSS JOIN said AS s ON s.sid = t.sid CROSS JOIN recall_index AS r ON r.memory_id = s.memory_id"
            f" WHERE r.user = ? AND r.kind IN ({kind_marks}) AND r.archived = 0 AND r.ended = 0"
            " ORDER BY r.kind, r.rowid",
            [*(x for t in terms for x in (user, t)), user, *kinds],
        ).fetchall()
        return [(memory_id, text, record, load(said)) for memory_id, text, record, said in rows]
