"""One memory record (DESIGN.md, "One memory record") and how it maps onto Chroma.

Times are unix seconds (float). ``day`` is the calendar day the memory belongs to,
``YYYY-MM-DD``, as the source gave it.
"""

from __future__ import annotations

import hashlib
import json
import re
import uuid
from dataclasses import MISSING, asdict, dataclass, field, fields
from enum import Enum
from typing import Any


class Kind(str, Enum):
    """What a memory is. Turns and notes come from the user; the rest from consolidation."""

    TURN = "turn"
    NOTE = "note"
    FACT = "fact"
    EVENT_DAILY = "event_daily"
    EVENT_GLOBAL = "event_global"
    PORTRAIT_DAILY = "portrait_daily"
    PORTRAIT_GLOBAL = "portrait_global"
    RUNNING_SUMMARY = "running_summary"
    RELATION = "relation"


KIND_VALUES = tuple(k.value for k in Kind)

ASSISTANT = "assistant"
"""The speaker of the assistant's turns (memcli's chat, MemoryBank's AI companion, the
assistant of JSON-lines chat logs)."""

BASE_MODEL = "base-model"
"""The tag of a chat reply written by a base model (no chat template, such as the embedded
Gemma 3 270M): kept as the assistant's turn, never a source of facts, portraits or summary
lines, and recalled below what the user said (``memcli.recall.retrieval``)."""

SUPERSEDED_KINDS = (Kind.NOTE.value, Kind.TURN.value)
"""What supersession at write time reads and closes (``memcli.recall.changes``): what people
said and noted (facts are reconciled by consolidation's own update phase, relations by the
graph step); their ended memories are still recalled (``memcli.recall.retrieval``)."""


_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")


def unstorable(text: str) -> str | None:
    """Why ``text`` cannot be stored, or None when it can. The one rule of what memcli
    takes as text, wherever it comes from (an argument, an option, stdin, a JSON string, a
    text file): valid Unicode without a NUL. So it refuses a NUL character (U+0000: a text
    file with a NUL byte is binary, and a JSON string's ``\\u0000`` is refused alike), a
    byte that is not UTF-8 (Python hands one over as a surrogate escape, U+DC80..U+DCFF) and
    a lone surrogate (a JSON string's ``\\ud800``), none of which can be written as UTF-8.
    The reason names the first offender and its place (from 1), e.g. "is not valid UTF-8
    (the byte 0xe9 at character 4)"."""
    found = _UNSTORABLE.search(text)
    if found is None:
        return None
    at, char = found.start() + 1, ord(found.group())
    if char == 0:
        return f"holds a NUL character (at character {at}): memcli stores text, not binary data"
    if 0xDC80 <= char <= 0xDCFF:
        return f"is not valid UTF-8 (the byte 0x{char - 0xDC00:02x} at character {at})"
    return f"holds a lone surrogate U+{char:04X} (at character {at}), which is not text"


def stable_id(*parts: str) -> str:
    """A 16-hex-digit id derived from ``parts``: the same parts always give the same id.

    Imports use it so that importing a file twice adds nothing.
    """
    return hashlib.sha256("\x1f".join(parts).encode("utf-8")).hexdigest()[:16]


def singleton_id(kind: Kind, user: str) -> str:
    """The id of ``user``'s one memory of ``kind``: the global event summary, the global
    portrait, the running memory. Each consolidation replaces it under the same id."""
    return stable_id(kind.value, user, "")


def new_id() -> str:
    """A fresh random 16-hex-digit id (chat turns)."""
    return uuid.uuid4().hex[:16]


@dataclass
class Memory:
    """A memory piece: a dialogue turn, a note, or a consolidated summary.

    Attributes:
        created_at: unix seconds when the memory was *learned*; an imported turn keeps
            the original time of the conversation.
        importance: 0..1. strength: the Ebbinghaus strength S (MemoryBank §2.3), starts at 1.
        last_recalled_at: unix seconds of the last recall, 0 when never recalled.
        retained_from: unix seconds from which the retention clock runs when that is later
            than ``created_at``: an imported memory's import (its ``created_at`` stays the
            conversation's, for display, dates and recall); 0 otherwise.
        valid_from / valid_to: unix seconds bounding a fact's validity, 0 when unbounded;
            a note or turn superseded by a newer one ends (``valid_to``) at the newer one's
            ``created_at``.
        superseded_by: the id of the memory that superseded this one (a newer statement of
            the same single-valued attribute, ``memcli.recall.changes.Changes.supersede``);
            "" while it holds.
        source: where it came from, for people: a LoCoMo ``dia_id``, ``file:line``,
            ``remember``, ``chat:SESSION``; for a consolidated memory, what it was made from.
        source_ids: the ids of the memories (turns) a consolidated memory was made from.
        archived / archived_at: forgotten by ``memcli forget`` (never recalled, restorable)
            and when, unix seconds.
        caption: the caption of an image shared in a turn, if any.
    """

    id: str
    user: str
    kind: str
    text: str
    created_at: float
    day: str
    session: str = ""
    speaker: str = ""
    source: str = ""
    source_ids: list[str] = field(default_factory=list)
    caption: str = ""
    importance: float = 0.5
    tags: list[str] = field(default_factory=list)
    strength: float = 1.0
    last_recalled_at: float = 0.0
    recall_count: int = 0
    feedback: float = 0.0
    pinned: bool = False
    valid_from: float = 0.0
    valid_to: float = 0.0
    archived: bool = False
    archived_at: float = 0.0
    retained_from: float = 0.0
    superseded_by: str = ""

    def index_text(self) -> str:
        """The text that is embedded and searched: ``speaker: text`` plus any image caption."""
        text = f"{self.speaker}: {self.text}" if self.speaker else self.text
        if self.caption:
            text = f"{text} [image: {self.caption}]"
        return text

    def to_metadata(self) -> dict[str, Any]:
        """Chroma metadata (scalars only: lists as JSON strings; the text is the document)."""
        data = {name: getattr(self, name) for name in _STORED_FIELDS}
        for name in LIST_FIELDS:
            data[name] = json.dumps(data[name], ensure_ascii=False)
        return data

    @classmethod
    def from_chroma(cls, memory_id: str, document: str | None, metadata: dict[str, Any] | None) -> Memory:
        """Rebuild a Memory from what Chroma returns for one id (a field that an older
        memcli did not write takes its default)."""
        values = {k: v for k, v in (metadata or {}).items() if k in _FIELD_NAMES}
        for name in LIST_FIELDS:
            raw = values.get(name)
            values[name] = json.loads(raw) if raw and raw != "[]" else []
        return cls(id=memory_id, text=document or "", **values)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict of every field."""
        return asdict(self)

    def to_record(self) -> str:
        """The fields but the id and the text that differ from their defaults, as JSON: the
        copy of a memory's metadata that the recall index keeps beside Chroma's
        (``memcli.store.recall_index``), read back by ``from_record``."""
        # thin client: needed only for JSON of vectors and exports, and memcli starts at every TAB press
        import orjson

        # the fields read as they are, not copied deep (``asdict``): nothing here changes them
        data = {k: v for k in _STORED_FIELDS if (v := getattr(self, k)) != _DEFAULTS.get(k, _REQUIRED)}
        return orjson.dumps(data, option=orjson.OPT_SERIALIZE_NUMPY).decode("utf-8")

    @classmethod
    def from_record(cls, memory_id: str, text: str, record: str) -> Memory:
        """Rebuild a Memory from its id, text and ``to_record`` JSON (a field not written
        takes its default)."""
        # thin client: needed only for JSON of vectors and exports, and memcli starts at every TAB press
        import orjson

        values = orjson.loads(record)
        if not values.keys() <= _FIELD_NAMES:
            values = {k: v for k, v in values.items() if k in _FIELD_NAMES}
        return cls(id=memory_id, text=text, **values)


def tells(memory: Memory) -> bool:
    """Whether ``memory`` can state something of its speaker: a note or a person's turn,
    not the assistant's or a base model's reply."""
    return memory.kind in SUPERSEDED_KINDS and memory.speaker != ASSISTANT and BASE_MODEL not in memory.tags


LIST_FIELDS = ("tags", "source_ids")
"""Fields that Chroma metadata (scalars only) keeps as JSON list strings."""
_FIELD_NAMES = frozenset(f.name for f in fields(Memory))
_STORED_FIELDS = tuple(f.name for f in fields(Memory) if f.name not in ("id", "text"))
"""The fields of a record and of Chroma's metadata (the id and the text are kept apart), in order."""
_REQUIRED = object()
_DEFAULTS: dict[str, Any] = {
    f.name: f.default if f.default is not MISSING else f.default_factory()  # type: ignore[misc]
    for f in fields(Memory)
    if f.default is not MISSING or f.default_factory is not MISSING
}
"""Each field's default value (lists as empty lists); a record leaves these out."""
