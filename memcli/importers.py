"""Parsers that turn files into memories: LoCoMo, MemoryBank, JSONL chat logs, text notes.

Every parser validates the whole file before anything is stored, so a malformed file
adds nothing; its error names the file and the record or line. Ids are derived from the
content (``stable_id``), so importing the same file twice adds nothing.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from memcli.errors import BadInputError, UsageError
from memcli.memory import Kind, Memory, stable_id

FORMATS = ("locomo", "memorybank", "jsonl", "text")
_SESSION_KEY = re.compile(r"session_(\d+)$")
_SNIFF_BYTES = 8192


def read_text(path: Path) -> str:
    """The file's text. Raises BadInputError for a missing, empty, binary or non-UTF-8 file."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise BadInputError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise BadInputError(f"{path}: is a directory") from None
    except OSError as exc:
        raise BadInputError(f"{path}: cannot read: {exc.strerror}") from exc
    if not data.strip():
        raise BadInputError(f"{path}: file is empty")
    if b"\x00" in data[:_SNIFF_BYTES]:
        raise BadInputError(f"{path}: binary file, not text")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise BadInputError(f"{path}: not UTF-8 text (byte {exc.start})") from None


def load_json(path: Path, text: str) -> Any:
    """``text`` parsed as JSON. Raises BadInputError naming ``path``, line and column."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise BadInputError(f"{path}: not valid JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}") from None


def detect_format(path: Path, text: str) -> str:
    """Guess the format of ``path`` from its extension and content.

    Returns one of FORMATS. Raises BadInputError when a ``.json`` file is not JSON or is
    JSON of no known shape.
    """
    suffix = path.suffix.lower()
    if suffix in (".jsonl", ".ndjson"):
        return "jsonl"
    if suffix in (".txt", ".md", ".markdown", ".text"):
        return "text"
    stripped = text.lstrip()
    if suffix == ".json" or stripped[:1] in ("[", "{"):
        first_line = stripped.splitlines()[0] if stripped else ""
        if suffix != ".json" and _is_chat_record(first_line):
            return "jsonl"
        data = load_json(path, text)
        if _looks_like_locomo(data):
            return "locomo"
        if _looks_like_memorybank(data):
            return "memorybank"
        raise BadInputError(f"{path}: JSON of an unknown shape (expected LoCoMo or MemoryBank); use --format")
    return "text"


def _is_chat_record(line: str) -> bool:
    """Whether ``line`` is one JSON object with ``role`` and ``content`` (a JSONL chat log line)."""
    try:
        record = json.loads(line)
    except json.JSONDecodeError:
        return False
    return isinstance(record, dict) and "role" in record and "content" in record


def _looks_like_locomo(data: Any) -> bool:
    return isinstance(data, list) and bool(data) and all(isinstance(c, dict) and "conversation" in c for c in data)


def _looks_like_memorybank(data: Any) -> bool:
    return isinstance(data, dict) and bool(data) and all(isinstance(v, dict) and "history" in v for v in data.values())


def _timestamp(moment: datetime) -> float:
    """Unix seconds; a naive time is taken as local wall-clock time."""
    return moment.timestamp()


def parse_time(value: Any, where: str) -> datetime:
    """Parse a timestamp: ISO 8601 / free-form date text, or unix seconds (int or float).

    Raises BadInputError naming ``where`` when it cannot be read.
    """
    from dateutil import parser as date_parser

    if isinstance(value, bool):
        raise BadInputError(f"{where}: timestamp must be a date or unix seconds, not {value!r}")
    if isinstance(value, (int, float)):
        try:
            return datetime.fromtimestamp(float(value), tz=timezone.utc).astimezone()
        except (OverflowError, OSError, ValueError):
            raise BadInputError(f"{where}: timestamp {value!r} is out of range") from None
    if isinstance(value, str) and value.strip():
        try:
            # dateutil fills missing parts from a default; two different defaults reveal
            # a time without a full date, which would otherwise be misdated silently.
            first = date_parser.parse(value, default=datetime(2000, 1, 1))
            second = date_parser.parse(value, default=datetime(2001, 2, 2))
        except (ValueError, OverflowError):
            raise BadInputError(f"{where}: cannot read the date {value!r}") from None
        if first.date() != second.date():
            raise BadInputError(f"{where}: {value!r} has no full date (year, month and day)")
        return first
    raise BadInputError(f"{where}: missing or empty timestamp")


def _require_str(record: dict[str, Any], key: str, where: str) -> str:
    value = record.get(key)
    if not isinstance(value, str):
        raise BadInputError(f"{where}: '{key}' must be a string")
    return value


def parse_locomo(path: Path, text: str, conversation: str | None = None) -> list[Memory]:
    """LoCoMo (Maharana et al. 2024): one user per conversation, named by its ``sample_id``.

    Each turn is timestamped with its session's ``date_time`` (plus its index in seconds,
    to keep order), keeps its ``dia_id`` as ``source`` and an image's ``blip_caption``.
    Sessions without turns are skipped. ``conversation`` keeps only that sample_id.
    """
    data = load_json(path, text)
    if not _looks_like_locomo(data):
        raise BadInputError(f"{path}: not a LoCoMo file (expected a list of objects with 'conversation')")
    samples = [c for c in data if conversation is None or c.get("sample_id") == conversation]
    if conversation is not None and not samples:
        known = ", ".join(str(c.get("sample_id")) for c in data)
        raise BadInputError(f"{path}: no conversation {conversation!r} (it has {known})")
    memories: list[Memory] = []
    for index, sample in enumerate(samples):
        user = str(sample.get("sample_id") or f"conversation-{index + 1}").replace(" ", "")
        conv = sample["conversation"]
        if not isinstance(conv, dict):
            raise BadInputError(f"{path}: {user}: 'conversation' must be an object")
        for key, turns in conv.items():
            match = _SESSION_KEY.match(key)
            if not match:
                continue
            where = f"{path}: {user} {key}"
            if not isinstance(turns, list):
                raise BadInputError(f"{where}: must be a list of turns")
            if not turns:
                continue
            started = parse_time(conv.get(f"{key}_date_time"), f"{where}_date_time")
            for i, turn in enumerate(turns):
                at = f"{where} turn {i + 1}"
                if not isinstance(turn, dict):
                    raise BadInputError(f"{at}: must be an object")
                dia_id = _require_str(turn, "dia_id", at)
                caption = turn.get("blip_caption") or ""
                memories.append(
                    Memory(
                        id=stable_id("locomo", user, dia_id),
                        user=user,
                        kind=Kind.TURN.value,
                        text=_require_str(turn, "text", at),
                        created_at=_timestamp(started) + i,
                        day=started.strftime("%Y-%m-%d"),
                        session=key,
                        speaker=_require_str(turn, "speaker", at),
                        source=dia_id,
                        caption=caption if isinstance(caption, str) else "",
                    )
                )
    return memories


def parse_memorybank(path: Path, text: str) -> list[Memory]:
    """MemoryBank (Zhong et al. 2023): ``{name: {history: {"YYYY-MM-DD": [{query, response}]}}}``.

    Each top-level name, stripped of spaces, is a user; each query (the user's words) and
    response (the assistant's) becomes a turn dated on its day.
    """
    data = load_json(path, text)
    if not _looks_like_memorybank(data):
        raise BadInputError(f"{path}: not a MemoryBank file (expected {{name: {{history: {{date: [...]}}}}}})")
    memories: list[Memory] = []
    for name, entry in data.items():
        user = str(name).replace(" ", "")
        history = entry["history"]
        if not isinstance(history, dict):
            raise BadInputError(f"{path}: {name}: 'history' must be an object of dates")
        for date_text, pairs in history.items():
            where = f"{path}: {name} {date_text}"
            day = parse_time(date_text, where)
            if not isinstance(pairs, list):
                raise BadInputError(f"{where}: must be a list of {{query, response}}")
            for i, pair in enumerate(pairs):
                at = f"{where} record {i + 1}"
                if not isinstance(pair, dict):
                    raise BadInputError(f"{at}: must be an object with 'query' and 'response'")
                for offset, (field, speaker) in enumerate((("query", str(name).strip()), ("response", "assistant"))):
                    content = _require_str(pair, field, at)
                    if not content.strip():
                        continue
                    memories.append(
                        Memory(
                            id=stable_id("memorybank", user, day.strftime("%Y-%m-%d"), str(i), field, content),
                            user=user,
                            kind=Kind.TURN.value,
                            text=content,
                            created_at=_timestamp(day) + 2 * i + offset,
                            day=day.strftime("%Y-%m-%d"),
                            session=day.strftime("%Y-%m-%d"),
                            speaker=speaker,
                            source=f"{path.name}:{name}:{date_text}:{i + 1}:{field}",
                        )
                    )
    return memories


def parse_jsonl(path: Path, text: str, user: str) -> list[Memory]:
    """A JSON-lines chat log, one ``{role, content, timestamp}`` object a line.

    ``timestamp`` is ISO 8601 or unix seconds; an optional ``session`` is kept. Blank
    lines are skipped.
    """
    memories: list[Memory] = []
    ties: dict[float, int] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{path}:{number}"
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise BadInputError(f"{where}: not valid JSON: {exc.msg}") from None
        if not isinstance(record, dict):
            raise BadInputError(f"{where}: expected an object with role, content and timestamp")
        role = _require_str(record, "role", where)
        content = _require_str(record, "content", where)
        if not content.strip():
            raise BadInputError(f"{where}: 'content' is empty")
        moment = parse_time(record.get("timestamp"), where)
        session = record.get("session")
        # Records with the same timestamp keep the file's order, a millisecond apart.
        stamp = _timestamp(moment)
        ties[stamp] = ties.get(stamp, -1) + 1
        memories.append(
            Memory(
                id=stable_id("jsonl", user, str(record.get("timestamp")), role, content),
                user=user,
                kind=Kind.TURN.value,
                text=content,
                created_at=stamp + ties[stamp] / 1000,
                day=moment.strftime("%Y-%m-%d"),
                session=str(session) if session is not None else "",
                speaker=role,
                source=f"{path.name}:{number}",
            )
        )
    return memories


_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(\S.*)$")


def parse_text(path: Path, text: str, user: str, now: float) -> list[Memory]:
    """Plain text or Markdown notes, one note per paragraph (blank-line separated).

    A Markdown heading line starts a section: each note in it is prefixed with the
    heading text (``"Trip to Lyon: We ate at a bouchon."``) until the next heading.
    Notes are dated ``now`` (unix seconds): the time memcli learned them.
    """
    memories: list[Memory] = []
    heading = ""
    paragraph: list[str] = []
    start = 0

    def flush() -> None:
        body = "\n".join(paragraph).strip()
        paragraph.clear()
        if not body:
            return
        note = f"{heading}: {body}" if heading else body
        memories.append(
            Memory(
                id=stable_id("text", user, note),
                user=user,
                kind=Kind.NOTE.value,
                text=note,
                created_at=now,
                day=datetime.fromtimestamp(now).strftime("%Y-%m-%d"),
                source=f"{path.name}:{start}",
            )
        )

    for number, line in enumerate(text.splitlines(), start=1):
        match = _HEADING.match(line)
        if match:
            flush()
            heading = match.group(1).rstrip(" #")
        elif line.strip():
            if not paragraph:
                start = number
            paragraph.append(line.rstrip())
        else:
            flush()
    flush()
    if not memories:
        raise BadInputError(f"{path}: no text to import")
    return memories


def parse_file(path: Path, fmt: str | None, user: str, now: float, conversation: str | None = None) -> tuple[str, list[Memory]]:
    """Read and parse an import file; returns (format used, memories without duplicates).

    Raises UsageError for an unknown ``fmt`` and BadInputError for a file that cannot be
    read or parsed (nothing is stored in either case).
    """
    if fmt is not None and fmt not in FORMATS:
        raise UsageError(f"unknown format {fmt!r}; choose one of {', '.join(FORMATS)}")
    text = read_text(path)
    fmt = fmt or detect_format(path, text)
    parsers: dict[str, Callable[[], list[Memory]]] = {
        "locomo": lambda: parse_locomo(path, text, conversation),
        "memorybank": lambda: parse_memorybank(path, text),
        "jsonl": lambda: parse_jsonl(path, text, user),
        "text": lambda: parse_text(path, text, user, now),
    }
    memories = parsers[fmt]()
    if not memories:
        raise BadInputError(f"{path}: no memories found in this {fmt} file")
    unique: dict[str, Memory] = {}
    for memory in memories:
        unique.setdefault(memory.id, memory)
    return fmt, list(unique.values())
