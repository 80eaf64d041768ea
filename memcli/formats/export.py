"""The memcli export format: a JSON-lines copy of a store (``memcli export``) that
``memcli import --format memcli`` reads back losslessly.

The first line is the header::

    {"type": "header", "format": "memcli", "format_version": 1, "memcli_version": "0.1.0",
     "embedder": "all-MiniLM-L6-v2@3f0c9a1b2c4d", "exported_at": "2024-05-01T03:00:00+02:00",
     "user": "sam", "history": false, "vectors": false}

(``user`` null: every user's memories; ``embedder``: the identity of the embedder that
made the store's vectors, ``memcli.models.embedding.embedder_identity``). Every other line is one
record, its ``type`` saying what it is:

- ``memory``: every field of ``memcli.memory.Memory`` as the store holds it (times in unix
  seconds, as stored, so that the round trip is exact), and with ``vectors`` the memory's
  stored vector, ``vector``: its float32 values, little-endian, in base64;
- ``progress``: one row of the consolidation progress (which turn went through which
  stage), so that a restored store's next consolidation does not do the work again;
- ``history`` (with ``history``): one event of the history (``memcli.store.sidecar.HistoryEntry``
  without its number; the file keeps their order).

Memories come first, in the order the store first wrote them, then the progress, then the
history. The store is read a page (``PAGE`` records) at a time, so an export holds one
page in memory whatever the size of the store; a reader takes the file a line at a time.
"""

from __future__ import annotations

import base64
import contextlib
import json
import math
from collections.abc import Callable, Iterable, Iterator
from dataclasses import MISSING, asdict, dataclass, fields
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np

from memcli.dates import DAY_FORMAT, TIME_RANGE, OutOfRange, from_unix_seconds
from memcli.errors import BadInputError
from memcli.memory import KIND_VALUES, Memory, unstorable
from memcli.paths import reading
from memcli.store.sidecar import HistoryEntry
from memcli.store.store import MemoryStore

FORMAT = "memcli"
FORMAT_VERSION = 1
"""Bump when a reader of this version could not read what is written."""
PAGE = 1000
"""Records an export reads from the store at a time (and sends in one piece)."""
HEADER, MEMORY, HISTORY, PROGRESS = "header", "memory", "history", "progress"

_MEMORY_FIELDS = {f.name: f for f in fields(Memory)}
_HISTORY_FIELDS = {f.name: f for f in fields(HistoryEntry) if f.name != "seq"}
_PROGRESS_FIELDS = {"user": "str", "stage": "str", "item_id": "str", "status": "str", "at": "float"}


def header(embedder: str, user: str | None, history: bool, vectors: bool, now: float, version: str) -> dict[str, Any]:
    """The header record of an export made at ``now`` (unix seconds) by memcli ``version``
    of ``user``'s memories (every user's when None)."""
    return {
        "type": HEADER,
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "memcli_version": version,
        "embedder": embedder,
        "exported_at": datetime.fromtimestamp(now).astimezone().isoformat(timespec="seconds"),
        "user": user,
        "history": history,
        "vectors": vectors,
    }


def _typed(value: Any, kind: str) -> Any:
    """``value`` as the type a field is declared with (a store may hand back 1 for 1.0)."""
    if kind == "float":
        return float(value)
    if kind == "int":
        return int(value)
    if kind == "bool":
        return bool(value)
    return value


def memory_record(memory: Memory, vector: bytes | None = None) -> dict[str, Any]:
    """A memory line's record: every field as stored, and its vector (float32 bytes) when given."""
    record: dict[str, Any] = {"type": MEMORY}
    record.update((name, _typed(value, str(_MEMORY_FIELDS[name].type))) for name, value in asdict(memory).items())
    if vector is not None:
        record["vector"] = base64.b64encode(vector).decode("ascii")
    return record


def history_record(entry: HistoryEntry) -> dict[str, Any]:
    """A history line's record (the event without its number)."""
    record: dict[str, Any] = {"type": HISTORY}
    record.update((name, _typed(getattr(entry, name), str(f.type))) for name, f in _HISTORY_FIELDS.items())
    return record


def progress_record(row: tuple[str, str, str, str, float]) -> dict[str, Any]:
    """A progress line's record from a row (user, stage, item id, status, at)."""
    return {
        "type": PROGRESS,
        **{name: _typed(value, kind) for (name, kind), value in zip(_PROGRESS_FIELDS.items(), row)},
    }


def line(record: dict[str, Any]) -> str:
    """One record as a line of the file (compact JSON, UTF-8 as it is, a newline)."""
    return json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n"


def export_pages(
    store: MemoryStore, head: dict[str, Any], user: str | None, history: bool, vectors: bool, size: int | None = None
) -> Iterator[tuple[str, list[str]]]:
    """The lines of an export, ``size`` records (default ``PAGE``) at a time, as (type,
    lines): the header line, then the memories of ``user`` (every user's when None), the
    consolidation progress and, with ``history``, the history. The store is held from the
    first page to the last (``MemoryStore.pages``)."""
    size = size or PAGE
    yield HEADER, [line(head)]
    with store.transaction():
        for page in store.pages(user, vectors, size):
            yield MEMORY, [line(memory_record(memory, vector)) for memory, vector in page]
        sidecar = store.sidecar
        after = ("", "", "")
        while rows := sidecar.progress_page(user, after, size):
            yield PROGRESS, [line(progress_record(row)) for row in rows]
            after = rows[-1][:3]
        seq = 0
        while history and (entries := sidecar.history_page(user, seq, size)):
            yield HISTORY, [line(history_record(entry)) for entry in entries]
            seq = entries[-1].seq


@dataclass
class Written:
    """What an export wrote: lines (the header included), records of each type, UTF-8 bytes."""

    lines: int = 0
    memories: int = 0
    history: int = 0
    progress: int = 0
    size_bytes: int = 0


def write_pages(pages: Iterable[tuple[str, list[str]]], write: Callable[[str], None]) -> Written:
    """Send each page of ``pages`` to ``write`` as one text; returns the counts."""
    written = Written()
    for kind, lines in pages:
        text = "".join(lines)
        write(text)
        written.lines += len(lines)
        written.size_bytes += len(text.encode("utf-8"))
        if kind == MEMORY:
            written.memories += len(lines)
        elif kind == HISTORY:
            written.history += len(lines)
        elif kind == PROGRESS:
            written.progress += len(lines)
    return written


# reading -------------------------------------------------------------------------------


def is_header(text: str) -> bool:
    """Whether ``text`` (a file's first line that is not blank) is the header of a memcli export."""
    try:
        record = json.loads(text)
    except ValueError:
        return False
    return isinstance(record, dict) and record.get("format") == FORMAT


MAX_LINE_BYTES = 4 << 20
"""The longest line an import reads (bytes): a memcli export's memory line (a text, its
vector in base64 and its state) is a few kilobytes; a longer line is refused, naming it,
before it is held whole."""


def bounded_lines(path: Path, limit: int = MAX_LINE_BYTES) -> Iterator[tuple[int, bytes]]:
    """The raw lines of ``path``, numbered from 1, none longer than ``limit`` bytes.
    Raises BadInputError naming the file and line of a longer one (having read no more of
    it than ``limit`` bytes)."""
    with path.open("rb") as f:
        number = 0
        while raw := f.readline(limit + 1):
            number += 1
            if len(raw) > limit and not raw.endswith(b"\n"):
                raise BadInputError(f"{path}:{number}: a line longer than {limit:,} bytes")
            yield number, raw


def _lines(path: Path) -> Iterator[tuple[int, str]]:
    """The lines of ``path`` that are not blank, numbered from 1, decoded one at a time.
    Raises BadInputError when the file cannot be read, a line is not UTF-8 or is longer
    than ``MAX_LINE_BYTES``."""
    with reading(path):
        for number, raw in bounded_lines(path):
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise BadInputError(f"{path}:{number}: not UTF-8 text (byte {exc.start} of the line)") from None
            if text.strip():
                yield number, text


def _check(value: Any, kind: str, where: str, name: str) -> Any:
    """``value`` of a field declared ``kind`` (str, float, int, bool, list[str]), as that
    type; BadInputError naming ``where`` and the field when it is not one, or is a string
    that is not text (``memcli.memory.unstorable``)."""
    ok = {
        "str": isinstance(value, str),
        "float": isinstance(value, (int, float)) and not isinstance(value, bool),
        "int": isinstance(value, int) and not isinstance(value, bool),
        "bool": isinstance(value, bool),
        "list[str]": isinstance(value, list) and all(isinstance(v, str) for v in value),
    }[kind]
    if not ok:
        raise BadInputError(
            f"{where}: '{name}' must be {kind.replace('list[str]', 'a list of strings')}, not {json.dumps(value)[:40]}"
        )
    reason = next(
        filter(None, map(unstorable, [value] if kind == "str" else value if kind == "list[str]" else [])), None
    )
    if reason:
        raise BadInputError(f"{where}: '{name}' {reason}")
    return _typed(value, kind)


def _fields(record: dict[str, Any], declared: dict[str, str], required: Iterable[str], where: str) -> dict[str, Any]:
    unknown = sorted(set(record) - set(declared))
    if unknown:
        raise BadInputError(f"{where}: unknown field {unknown[0]!r} (written by a newer memcli?)")
    missing = [name for name in required if name not in record]
    if missing:
        raise BadInputError(f"{where}: missing field {missing[0]!r}")
    return {name: _check(value, declared[name], where, name) for name, value in record.items()}


_MEMORY_TYPES = {name: str(f.type) for name, f in _MEMORY_FIELDS.items()}
_MEMORY_REQUIRED = [name for name, f in _MEMORY_FIELDS.items() if f.default is MISSING and f.default_factory is MISSING]
_HISTORY_TYPES = {name: str(f.type) for name, f in _HISTORY_FIELDS.items()}
_HISTORY_REQUIRED = [
    name for name, f in _HISTORY_FIELDS.items() if f.default is MISSING and f.default_factory is MISSING
]


@dataclass
class Archive:
    """A memcli export file, its header read and checked (``open_archive``)."""

    path: Path
    header: dict[str, Any]

    @property
    def embedder(self) -> str:
        """The identity of the embedder that made the file's vectors."""
        return str(self.header.get("embedder") or "")

    def records(self) -> Iterator[tuple[str, Any]]:
        """The file's records after the header, a line at a time, checked: (``memory``,
        (Memory, vector as float32 bytes or None)), (``history``, HistoryEntry) or
        (``progress``, (user, stage, item id, status, at)). Raises BadInputError naming
        the file and line of the first record that is not one of them whole, or a vector
        of another dimension than the first."""
        with contextlib.closing(_lines(self.path)) as lines:
            next(lines)  # the header
            yield from self._records(lines)

    def _records(self, lines: Iterator[tuple[int, str]]) -> Iterator[tuple[str, Any]]:
        dimension = None
        for number, text in lines:
            where = f"{self.path}:{number}"
            try:
                record = json.loads(text)
            except ValueError as exc:
                raise BadInputError(f"{where}: not valid JSON: {exc}") from None
            if not isinstance(record, dict):
                raise BadInputError(f"{where}: expected an object with a 'type'")
            kind = record.pop("type", None)
            if kind == MEMORY:
                vector = self._vector(record.pop("vector", None), where)
                if vector is not None:
                    dimension = dimension or len(vector)
                    if len(vector) != dimension:
                        raise BadInputError(
                            f"{where}: a vector of {len(vector) // 4} dimensions, the first had {dimension // 4}"
                        )
                values = _fields(record, _MEMORY_TYPES, _MEMORY_REQUIRED, where)
                if not values["id"] or values["kind"] not in KIND_VALUES:
                    raise BadInputError(
                        f"{where}: " + ("empty 'id'" if not values["id"] else f"unknown kind {values['kind']!r}")
                    )
                _check_bounds(values, where)
                yield MEMORY, (Memory(**values), vector)
            elif kind == HISTORY:
                yield HISTORY, HistoryEntry(**_fields(record, _HISTORY_TYPES, _HISTORY_REQUIRED, where))
            elif kind == PROGRESS:
                values = _fields(record, _PROGRESS_FIELDS, _PROGRESS_FIELDS, where)
                yield PROGRESS, tuple(values[name] for name in _PROGRESS_FIELDS)
            else:
                raise BadInputError(f"{where}: unknown record type {kind!r} (expected memory, progress or history)")

    @staticmethod
    def _vector(value: Any, where: str) -> bytes | None:
        if value is None:
            return None
        try:
            data = base64.b64decode(value, validate=True) if isinstance(value, str) else b""
        except ValueError:
            data = b""
        if not data or len(data) % 4:
            raise BadInputError(f"{where}: 'vector' must be float32 values in base64")
        if not np.isfinite(np.frombuffer(data, dtype=np.float32)).all():
            raise BadInputError(f"{where}: 'vector' holds NaN or infinity")
        return data


TIME_FIELDS = ("created_at", "last_recalled_at", "archived_at", "retained_from", "valid_from", "valid_to")
"""A memory's times (unix seconds): ``created_at`` within the years memcli takes
(``memcli.dates``), the others 0 (none) or within them too."""
MAX_STRENGTH = 1e6
"""The largest strength S an import takes (one recall adds 1; a memory recalled every
minute for a year is far below it)."""
MAX_COUNT = 1e9
"""The largest recall count and absolute feedback an import takes."""


def _check_bounds(values: dict[str, Any], where: str) -> None:
    """Raise BadInputError naming ``where`` and the field of a memory record's value that
    no verb could have written and that ``list``, ``show`` and ``recall`` could not read:
    a time out of range, an importance outside 0..1, a strength not above 0, a negative
    count, a day that is not ``YYYY-MM-DD``."""
    for name in TIME_FIELDS:
        value = values.get(name, 0.0)
        if name != "created_at" and value == 0:
            continue
        try:
            from_unix_seconds(value)
        except OutOfRange:
            raise BadInputError(f"{where}: '{name}' {value!r} is out of range (memcli takes {TIME_RANGE})") from None
    bounds = {
        "importance": (0.0, 1.0, "between 0 and 1"),
        "strength": (1e-9, MAX_STRENGTH, f"above 0 and at most {MAX_STRENGTH:g}"),
        "recall_count": (0, MAX_COUNT, f"between 0 and {MAX_COUNT:g}"),
        "feedback": (-MAX_COUNT, MAX_COUNT, f"between {-MAX_COUNT:g} and {MAX_COUNT:g}"),
    }
    for name, (low, high, what) in bounds.items():
        value = values.get(name)
        if value is not None and not (math.isfinite(value) and low <= value <= high):
            raise BadInputError(f"{where}: '{name}' must be {what}, not {value!r}")
    try:
        datetime.strptime(values["day"], DAY_FORMAT)
    except (KeyError, ValueError):
        raise BadInputError(f"{where}: 'day' must be a day written YYYY-MM-DD, not {values.get('day')!r}") from None


def open_archive(path: Path) -> Archive:
    """The memcli export at ``path``, its header checked. Raises BadInputError when the
    file cannot be read, its first line is not a memcli header, or it was written in a
    newer format version than this memcli reads."""
    with contextlib.closing(_lines(path)) as lines:
        first = next(lines, None)
    if first is None:
        raise BadInputError(f"{path}: file is empty")
    number, text = first
    if not is_header(text):
        raise BadInputError(f"{path}:{number}: not a memcli export (its first line is not a memcli header)")
    head = json.loads(text)
    version = head.get("format_version")
    if not isinstance(version, int) or isinstance(version, bool):
        raise BadInputError(f"{path}:{number}: the header has no format_version")
    if version > FORMAT_VERSION:
        raise BadInputError(
            f"{path}: memcli export format {version}; this memcli reads format {FORMAT_VERSION}: upgrade memcli"
        )
    return Archive(path, head)
