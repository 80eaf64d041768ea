"""Split long texts into memory-sized chunks before they are embedded and indexed.

The embedder reads at most its ``max_seq_length`` word pieces (all-MiniLM-L6-v2: 256,
two of them taken by [CLS] and [SEP]) and drops the rest, so a longer memory is not
represented in its vector past that point; and a single huge text (a 50 MB note) costs
gigabytes to tokenize, embed and index in one go. ``chunks`` cuts a text at paragraphs
(blank lines), then at sentence ends and line breaks, then, for a run without either,
at the last space (or CJK comma) before the limit, and packs consecutive pieces greedily
up to ``MAX_CHARS``. Every chunk is a slice of the text with its ends stripped: their
concatenation is the text, whitespace between chunks aside.

Size is counted in characters, a CJK character (Han, kana, Hangul) counting as
``WIDE_WEIGHT``: measured with the all-MiniLM-L6-v2 tokenizer on LoCoMo's English turns,
a word piece is 4.2 characters (254 word pieces: 1,072 characters); on MemoryBank's
Chinese turns, 1.0 character. ``MAX_CHARS`` = 1,000 keeps an English chunk, and a Chinese
one of 250 characters, inside the 254 word pieces the model reads.

The work is linear in the text's length: the pieces are found with regular expressions
over the text (no copy of it is made), and only pieces up to ``MAX_CHARS`` long are
measured character by character.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

MAX_CHARS = 1000
"""Largest chunk, in characters (a CJK character counts ``WIDE_WEIGHT``)."""
LONGEST_READ = 20 * MAX_CHARS
"""Characters of one memory a consolidation step (the event summary, the graph) reads at
most: memcli chunks what it stores at ``MAX_CHARS``, so only a memory kept whole by an
export or an older store is longer, and this bounds the time one memory can take."""
WIDE_WEIGHT = 4
"""What a CJK character counts toward ``MAX_CHARS``: one word piece each, as 4 English characters are."""

_WIDE = re.compile(r"[\u1100-\u11ff\u2e80-\u9fff\uac00-\ud7af\uf900-\ufaff\uff00-\uffef]")
_LEVELS = (
    re.compile(r"\n[^\S\n]*\n\s*"),  # paragraphs: a blank line ends one
    re.compile(
        r"[.!?\u2026]+[\"'\u201d\u2019)\]]*\s+|[\u3002\uff01\uff1f]+[\u201d\u2019\u300d\u300f\uff09)]*\s*|\n\s*"
    ),  # sentences, lines
)
_SOFT_CUT = re.compile(r"[\s\uff0c\u3001\uff1b\uff1a,;:]")
"""Where a run with no sentence end is cut, failing that at the limit itself."""


def size(text: str) -> int:
    """The length of ``text`` as ``MAX_CHARS`` counts it: characters, a CJK one counting ``WIDE_WEIGHT``."""
    return len(text) + (WIDE_WEIGHT - 1) * len(_WIDE.findall(text))


def chunks(text: str, limit: int = MAX_CHARS) -> Iterator[str]:
    """The chunks of ``text``, in order, none larger than ``limit`` (``size``), none empty.

    A text that fits is one chunk (stripped). Raises ValueError for a limit below ``WIDE_WEIGHT`` (a
    CJK character must fit).
    """
    for start, end in chunk_spans(text, limit):
        piece = text[start:end].strip()
        if piece:
            yield piece


def chunk_spans(text: str, limit: int = MAX_CHARS) -> Iterator[tuple[int, int]]:
    """(start, end) of each chunk of ``text`` that ``chunks`` gives, before it is stripped
    (the spans cover the text end to end)."""
    if limit < WIDE_WEIGHT:
        raise ValueError(f"chunk limit {limit} is below {WIDE_WEIGHT} characters")
    return _spans(text, 0, len(text), 0, limit)


def _cost(text: str, start: int, end: int, limit: int) -> int:
    """``size(text[start:end])``, or more than ``limit`` when it is longer than that."""
    if end - start > limit:
        return limit + 1
    return (end - start) + (WIDE_WEIGHT - 1) * len(_WIDE.findall(text, start, end))


def _spans(text: str, start: int, end: int, level: int, limit: int) -> Iterator[tuple[int, int]]:
    """Spans of ``text[start:end]`` within ``limit``: its pieces at ``level`` packed
    greedily, a piece too large cut at the next level (the last level: ``_hard_cut``)."""
    if _cost(text, start, end, limit) <= limit:
        yield start, end
        return
    if level == len(_LEVELS):
        yield from _hard_cut(text, start, end, limit)
        return
    chunk_start, chunk_size = start, 0
    for piece_start, piece_end in _pieces(text, start, end, _LEVELS[level]):
        cost = _cost(text, piece_start, piece_end, limit)
        if chunk_size and chunk_size + cost > limit:
            yield chunk_start, piece_start
            chunk_start, chunk_size = piece_start, 0
        if cost > limit:
            yield from _spans(text, piece_start, piece_end, level + 1, limit)
            chunk_start = piece_end
        else:
            chunk_size += cost
    if chunk_size:
        yield chunk_start, end


def _pieces(text: str, start: int, end: int, boundary: re.Pattern[str]) -> Iterator[tuple[int, int]]:
    """``text[start:end]`` cut after each match of ``boundary`` (which never matches empty)."""
    position = start
    for match in boundary.finditer(text, start, end):
        yield position, match.end()
        position = match.end()
    if position < end:
        yield position, end


def _hard_cut(text: str, start: int, end: int, limit: int) -> Iterator[tuple[int, int]]:
    """Windows of at most ``limit`` over a run with no sentence end, each cut after the
    last space or comma in its second half, else at the limit."""
    position = start
    while position < end:
        stop = min(end, position + limit)
        while (cost := _cost(text, position, stop, limit)) > limit:
            stop = position + max(1, (stop - position) * limit // cost)
        if stop < end:
            half = position + (stop - position) // 2
            last = None
            for last in _SOFT_CUT.finditer(text, half, stop):
                pass
            if last is not None:
                stop = last.end()
        yield position, stop
        position = stop
