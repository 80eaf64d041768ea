"""Parsers that turn files into memories: LoCoMo, MemoryBank, JSONL chat logs, text notes,
and memcli's own exports (``memcli.formats.export``, known by their header line).

Text and JSONL files are read a line at a time (``open_records`` gives a function that
parses them afresh on each call), so a file of any size is parsed in bounded memory;
LoCoMo and MemoryBank files are small JSON documents, parsed whole, and refused above
``MAX_WHOLE_BYTES`` before they are read. A text paragraph or a
JSONL message longer than ``memcli.text.chunking.MAX_CHARS`` becomes several memories, one a
chunk, with the same source and consecutive times (a millisecond apart). A parser raises
BadInputError at the first malformed record, naming the file and the record or line;
``Memcli.import_file`` runs it over the whole file before it stores anything. Ids are
derived from the content (``stable_id``; a chunk's from its paragraph's text and its
place in it), so importing the same file twice adds nothing.
"""

from __future__ import annotations

import codecs
import contextlib
import json
import os
import re
import stat
from collections.abc import Callable, Iterable, Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

from memcli.dates import OutOfRange, day_of, from_unix_seconds, written_time
from memcli.errors import BadInputError, UsageError
from memcli.formats.export import MAX_LINE_BYTES, is_header, open_archive
from memcli.memory import Kind, Memory, stable_id, unstorable
from memcli.paths import reading
from memcli.text.chunking import MAX_CHARS, chunk_spans, chunks, size

FORMATS = ("locomo", "memorybank", "jsonl", "text", "memcli")
_SESSION_KEY = re.compile(r"session_(\d+)$")
_SUFFIXES = {".jsonl": "jsonl", ".ndjson": "jsonl", ".txt": "text", ".md": "text", ".markdown": "text", ".text": "text"}
"""Extensions that name a format, whatever the file holds."""
_SNIFF_BYTES = 8192
LINE_PIECE = 1 << 20
"""Bytes of a line a text import reads at a time (``read_lines``)."""
PARAGRAPH_HELD = 64 * MAX_CHARS
"""Characters of a paragraph a text import holds before it chunks what it has (``text_notes``)."""
MAX_WHOLE_BYTES = 64 << 20
"""Bytes of a file memcli reads whole (``read_text``: a LoCoMo or MemoryBank JSON document,
parsed in one piece, peaks at about 6 times its size in memory: 21 MB of LoCoMo took 120 MiB
over the process's own). LoCoMo's ten conversations are 2.8 MB, MemoryBank's 15 users 0.2 MB."""


def read_text(path: Path) -> str:
    """The file's text, read whole. Raises BadInputError for a missing, empty, binary or
    non-UTF-8 file, and for one larger than ``MAX_WHOLE_BYTES``, refused before it is read
    (and, should it grow meanwhile, once that many bytes and one are read)."""
    with reading(path), path.open("rb") as f:
        size = os.fstat(f.fileno()).st_size
        data = b"" if size > MAX_WHOLE_BYTES else f.read(MAX_WHOLE_BYTES + 1)
    if size > MAX_WHOLE_BYTES or len(data) > MAX_WHOLE_BYTES:
        raise BadInputError(
            f"{path}: {max(size, len(data)):,} bytes, more than the {MAX_WHOLE_BYTES:,} ({MAX_WHOLE_BYTES >> 20} MiB) "
            "memcli reads of a file it parses whole (LoCoMo, MemoryBank JSON): split it, a few conversations a file"
        )
    if not data.strip():
        raise BadInputError(f"{path}: file is empty")
    if b"\x00" in data[:_SNIFF_BYTES]:
        raise BadInputError(f"{path}: binary file, not text")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise BadInputError(f"{path}: not UTF-8 text (byte {exc.start})") from None


def check_readable(path: Path) -> None:
    """Raise BadInputError, as ``read_text`` does, for a missing file, a directory, a FIFO,
    a device or a socket, a file that cannot be opened or a binary one (a NUL byte in its first 8 KiB), reading no more
    than that."""
    with reading(path):
        found = path.stat()
    if not stat.S_ISREG(found.st_mode) and not stat.S_ISDIR(found.st_mode):
        # a FIFO with no writer would block the import for ever; a device never ends
        raise BadInputError(f"{path}: not a regular file (a FIFO, a device or a socket): import reads files")
    with reading(path), path.open("rb") as f:
        head = f.read(_SNIFF_BYTES)
    if b"\x00" in head:
        raise BadInputError(f"{path}: binary file, not text")


def read_lines(path: Path, piece: int | None = None) -> Iterator[tuple[int, str]]:
    """The lines of a UTF-8 file, numbered from 1, without their line ends, decoded one at
    a time. With ``piece`` (bytes), a longer line comes in several parts, each under the
    same number, so memory is bounded whatever the file holds; without, a line longer than
    ``MAX_LINE_BYTES`` is refused (BadInputError naming the file and line) before it is
    held whole. Raises BadInputError when the file cannot be read, or at the first byte
    that is not UTF-8 (naming its offset, as ``read_text`` does)."""
    decoder = codecs.getincrementaldecoder("utf-8")()
    offset, number = 0, 1
    try:
        with path.open("rb") as f:
            while raw := f.readline(piece or MAX_LINE_BYTES + 1):
                if piece is None and len(raw) > MAX_LINE_BYTES and not raw.endswith(b"\n"):
                    raise BadInputError(f"{path}:{number}: a line longer than {MAX_LINE_BYTES:,} bytes")
                held = len(decoder.getstate()[0])  # the start of a character cut by the last piece
                try:
                    text = decoder.decode(raw)
                except UnicodeDecodeError as exc:
                    raise BadInputError(f"{path}: not UTF-8 text (byte {offset - held + exc.start})") from None
                if offset == 0:
                    text = text.removeprefix("\ufeff")
                offset += len(raw)
                if raw.endswith(b"\n"):
                    yield number, text.rstrip("\r\n")
                    number += 1
                else:
                    yield number, text
            try:
                decoder.decode(b"", final=True)
            except UnicodeDecodeError:
                raise BadInputError(f"{path}: not UTF-8 text (byte {offset - len(decoder.getstate()[0])})") from None
    except OSError as exc:
        raise BadInputError(f"{path}: cannot read: {exc.strerror}") from exc


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
    stripped = text.lstrip()
    guess = _guess_format(path, stripped.splitlines()[0] if stripped else "")
    return _json_format(path, load_json(path, text)) if guess == "json" else guess


def _guess_format(path: Path, first_line: str) -> str:
    """jsonl, text, or json (LoCoMo or MemoryBank: the whole file tells) from the file's
    extension and its first line that is not blank."""
    suffix = path.suffix.lower()
    if suffix in _SUFFIXES:
        return _SUFFIXES[suffix]
    first_line = first_line.strip()
    if suffix == ".json" or first_line[:1] in ("[", "{"):
        if suffix != ".json" and _is_chat_record(first_line):
            return "jsonl"
        return "json"
    return "text"


def _json_format(path: Path, data: Any) -> str:
    """locomo or memorybank, by the shape of the JSON ``data``; BadInputError for another."""
    if _looks_like_locomo(data):
        return "locomo"
    if _looks_like_memorybank(data):
        return "memorybank"
    raise BadInputError(f"{path}: JSON of an unknown shape (expected LoCoMo or MemoryBank); use --format")


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
    """Parse a timestamp: ISO 8601 / English date text (``memcli.dates.written_time``), or
    unix seconds (int or float).

    Raises BadInputError naming ``where`` when it cannot be read, has no full date, or is
    out of the range memcli takes (``memcli.dates``: years ``MIN_YEAR``..``MAX_YEAR``; a
    time outside cannot be converted to unix seconds and back on every platform).
    """
    if isinstance(value, bool):
        raise BadInputError(f"{where}: timestamp must be a date or unix seconds, not {value!r}")
    if isinstance(value, (int, float)):
        try:
            return from_unix_seconds(value, f"timestamp {value!r}")
        except OutOfRange as exc:
            raise BadInputError(f"{where}: {exc}") from None
    if isinstance(value, str) and value.strip():
        try:
            return written_time(value)
        except ValueError as exc:  # OutOfRange, NoFullDate, unreadable: each says which
            raise BadInputError(f"{where}: {exc}") from None
    raise BadInputError(f"{where}: missing or empty timestamp")


def _require_str(record: dict[str, Any], key: str, where: str) -> str:
    """``record[key]``, a string that is text (``memcli.memory.unstorable``: no NUL, no lone
    surrogate such as a JSON ``"\\ud800"``). Raises BadInputError naming ``where`` and ``key``."""
    value = record.get(key)
    if not isinstance(value, str):
        raise BadInputError(f"{where}: '{key}' must be a string")
    reason = unstorable(value)
    if reason:
        raise BadInputError(f"{where}: '{key}' {reason}")
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
                        day=day_of(started),
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
                            id=stable_id("memorybank", user, day_of(day), str(i), field, content),
                            user=user,
                            kind=Kind.TURN.value,
                            text=content,
                            created_at=_timestamp(day) + 2 * i + offset,
                            day=day_of(day),
                            session=day_of(day),
                            speaker=speaker,
                            source=f"{path.name}:{name}:{date_text}:{i + 1}:{field}",
                        )
                    )
    return memories


def jsonl_turns(path: Path, lines: Iterable[tuple[int, str]], user: str) -> Iterator[Memory]:
    """A JSON-lines chat log, one ``{role, content, timestamp}`` object a line: its turns.

    ``lines``: (line number, line), as ``read_lines`` gives them. ``timestamp`` is ISO
    8601 or unix seconds; an optional ``session`` is kept. The speaker of a ``user`` turn is
    ``user`` (the memcli user, as ``memcli chat`` names them), of any other its role. Blank lines are skipped. A
    message longer than ``MAX_CHARS`` becomes one turn a chunk.
    """
    ties: dict[float, int] = {}
    blank = True
    for number, line in lines:
        if not line.strip():
            continue
        blank = False
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
        stamp = _timestamp(moment)
        for part, text in enumerate(chunks(content)):
            # Records with the same timestamp keep the file's order, a millisecond apart (a
            # long message's chunks too).
            ties[stamp] = ties.get(stamp, -1) + 1
            whole = part == 0 and text == content.strip()
            yield Memory(
                id=stable_id(
                    "jsonl",
                    user,
                    str(record.get("timestamp")),
                    role,
                    content,
                    *(() if whole else (f"part {part + 1}",)),
                ),
                user=user,
                kind=Kind.TURN.value,
                text=content if whole else text,
                created_at=stamp + ties[stamp] / 1000,
                day=day_of(moment),
                session=str(session) if session is not None else "",
                speaker=user if role == "user" else role,  # the user's own turns, named as chat names them
                source=f"{path.name}:{number}",
            )
    if blank:
        raise BadInputError(f"{path}: file is empty")


_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(\S.*)$")


def text_notes(path: Path, lines: Iterable[tuple[int, str]], user: str, now: float) -> Iterator[Memory]:
    """Plain text or Markdown notes, one note per paragraph (blank-line separated).

    ``lines``: (line number, line), as ``read_lines`` gives them (a long line may come in
    parts under one number). A Markdown heading line starts a section: each note in it is
    prefixed with the heading text (``"Trip to Lyon: We ate at a bouchon."``) until the
    next heading. Notes are dated ``now`` (unix seconds): the time memcli learned them. A
    paragraph longer than ``MAX_CHARS`` (heading included) becomes one note a chunk
    (``memcli.text.chunking``), each prefixed with the heading, dated ``now`` plus a
    millisecond a chunk; a paragraph is chunked as it is read, ``PARAGRAPH_HELD``
    characters at a time, so a huge one is read in bounded memory. Raises BadInputError
    when the file has no text, or no paragraph.
    """
    heading = ""
    paragraph: list[str] = []
    held = 0  # characters in paragraph
    start = previous = 0
    part = 0  # chunks of this paragraph given out so far
    blank = True
    found = 0
    day = day_of(now)

    def notes(ended: bool = True) -> Iterator[Memory]:
        """The notes of the paragraph read so far; unless ``ended``, its last chunk (which
        the next lines may continue) is kept back."""
        nonlocal found, held, part
        body = "\n".join(paragraph).lstrip()
        paragraph.clear()
        held = 0
        prefix = f"{heading}: " if heading else ""
        spans = list(chunk_spans(body, max(MAX_CHARS - size(prefix), MAX_CHARS // 4)))
        if not ended and spans:
            tail = spans.pop()[0]
            paragraph.append(body[tail:])
            held = len(body) - tail
        for first, last in spans:
            text = body[first:last].strip()
            if not text:
                continue
            whole = part == 0 and ended and text == body.strip()
            note = prefix + text
            found += 1
            yield Memory(
                id=stable_id("text", user, note) if whole else stable_id("text", user, note, f"part {part + 1}"),
                user=user,
                kind=Kind.NOTE.value,
                text=note,
                created_at=now + part / 1000,
                day=day,
                source=f"{path.name}:{start}",
            )
            part += 1
        if ended:
            part = 0

    for number, line in lines:
        if "\x00" in line:  # past the first 8 KiB that check_readable sniffs: the same rule
            raise BadInputError(f"{path}:{number}: binary file, not text (a NUL byte)")
        if number == previous and paragraph:  # the rest of a long line
            paragraph[-1] += line
            held += len(line)
        else:
            if paragraph:
                paragraph[-1] = paragraph[-1].rstrip()
            previous = number
            if line.strip():
                blank = False
            match = _HEADING.match(line)
            if match:
                yield from notes()
                heading = match.group(1).rstrip(" #")
                continue
            if not line.strip():
                yield from notes()
                continue
            if not paragraph and not part:
                start = number
            paragraph.append(line)
            held += len(line)
        if held > PARAGRAPH_HELD:
            yield from notes(ended=False)
    if paragraph:
        paragraph[-1] = paragraph[-1].rstrip()
    yield from notes()
    if blank:
        raise BadInputError(f"{path}: file is empty")
    if not found:
        raise BadInputError(f"{path}: no text to import")


Records = Callable[[], Iterator[Memory]]
"""Parses an import file afresh on each call, yielding its memories in the file's order."""


def open_records(
    path: Path, fmt: str | None, user: str, now: float, conversation: str | None = None
) -> tuple[str, Records]:
    """The format of an import file (detected when ``fmt`` is None) and a function that
    parses it: text, JSONL and memcli exports (their memories: ``memcli.formats.export.Archive``
    reads the rest) a line at a time on each call (``read_lines``), LoCoMo and MemoryBank
    once, here. Duplicates are not removed.

    Raises UsageError for an unknown ``fmt``, BadInputError for a file that cannot be read
    or, for LoCoMo and MemoryBank, parsed; the records function raises BadInputError at the
    first bad line of a text or JSONL file.
    """
    if fmt is not None and fmt not in FORMATS:
        raise UsageError(f"unknown format {fmt!r}; choose one of {', '.join(FORMATS)}")
    check_readable(path)
    if fmt is None:
        # A memcli export is known by its header line, whatever the file is called.
        with contextlib.closing(read_lines(path, LINE_PIECE)) as lines:
            fmt = "memcli" if is_header(next((line for _, line in lines if line.strip()), "")) else None
    if fmt is None and path.suffix.lower() in _SUFFIXES:
        fmt = _SUFFIXES[path.suffix.lower()]
    if fmt is None:
        # the first piece of the first line tells (a file of one huge line is not held whole)
        with contextlib.closing(read_lines(path, LINE_PIECE)) as lines:
            fmt = _guess_format(path, next((line for _, line in lines if line.strip()), ""))
    if fmt == "memcli":
        archive = open_archive(path)
        return fmt, lambda: (item[0] for kind, item in archive.records() if kind == "memory")
    if fmt in ("json", "locomo", "memorybank"):
        text = read_text(path)
        if fmt == "json":
            fmt = _json_format(path, load_json(path, text))
        memories = parse_locomo(path, text, conversation) if fmt == "locomo" else parse_memorybank(path, text)
        return fmt, lambda: iter(memories)
    if fmt == "jsonl":
        return fmt, lambda: jsonl_turns(path, read_lines(path), user)
    return fmt, lambda: text_notes(path, read_lines(path, LINE_PIECE), user, now)


def parse_file(
    path: Path, fmt: str | None, user: str, now: float, conversation: str | None = None
) -> tuple[str, list[Memory]]:
    """Read and parse an import file whole; returns (format used, memories without
    duplicates). ``open_records`` parses one a record at a time.

    Raises UsageError for an unknown ``fmt`` and BadInputError for a file that cannot be
    read or parsed, or holds no memories.
    """
    fmt, records = open_records(path, fmt, user, now, conversation)
    unique: dict[str, Memory] = {}
    for memory in records():
        unique.setdefault(memory.id, memory)
    if not unique:
        raise BadInputError(f"{path}: no memories found in this {fmt} file")
    return fmt, list(unique.values())
