"""Lexical recall in memory: BM25 over one user's memories, kept current by every write.

Each memory is a document of three fields: its own text (``speaker: text [image:
caption]``), its context (the texts of its session neighbours, ``index.context_text``) and
its day (``8 May 2023``). A query is scored against every memory at once, with the BM25
of SQLite FTS5's ``bm25()`` (Robertson & Zaragoza 2009, with FTS5's column weights)::

    score(D) = sum_i IDF(q_i) * f_i (k1 + 1) / (f_i + k1 (1 - b + b |D| / avgdl))
    f_i      = sum_c w_c tf(q_i, field c of D)
    IDF(q_i) = ln((N - n_i + 0.5) / (n_i + 0.5)), or 1e-6 where that is not positive

with k1 = 1.2, b = 0.75, |D| the tokens of all three fields, N the user's memories, n_i
those holding q_i, avgdl the mean |D|. (memcli's recall index once kept these documents in
an FTS5 table: its statistics mixed every user's memories, and scoring every match of a
common word through ``bm25()`` took about 80 ms a query at 100,000 memories; here it takes
a few.)

Tokens: runs of letters and digits, lower-cased, Latin diacritics folded, each of three
letters or more reduced by the Porter stemmer (Porter 1980; PyStemmer's ``porter``, as
FTS5's ``porter`` tokenizer), so "painting" finds "painted". Chinese text, which has no
spaces between words, is cut into words by jieba in its search mode (``segment``:
"我很喜欢弹钢琴" -> 我, 很, 喜欢, 钢琴, 弹钢琴), so a query's words meet a memory's; a
run that mixes scripts ("painting油画") is split where the script changes. Japanese
kana, which jieba does not segment, come out a character at a time (a Japanese
segmenter would do better); Korean writes spaces between words and is tokenized as Latin
text is.

The postings are three plain arrays in compressed-column form (``Postings``): three
columns per term (one per field), each column the slots holding the term (int32) and their
term counts (uint16), 6 bytes a posting. A query reads only its terms' columns, so the
arrays can stay memory-mapped from a snapshot of the recall index
(``memcli.store.snapshot``): a query maps in the pages of its terms alone. A write does not
touch them: the rows it replaces are marked stale and the new documents wait in a small
*delta*; once the delta holds more than ``MERGE_AT`` documents (and an eighth of them), it
is merged into the postings in one pass, so a write costs its own tokens and, amortised, a
few microseconds more.
"""

from __future__ import annotations

import dataclasses
import errno
import itertools
import logging
import os
import re
import tempfile
import threading
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

K1, B = 1.2, 0.75
"""FTS5's (and the usual) BM25 parameters."""
FIELDS = 3
"""Own text, context, day: the columns of each term in the postings."""
MERGE_AT = 2048
"""Documents the delta holds before it is merged into the postings (and at least an eighth
of the documents): a merge copies every posting, so it runs rarely."""
_MIN_IDF = 1e-6
FREQUENT_SHARE = 16
"""A term whose base columns hold postings for a share of at least 1/16 of the documents
has them kept merged (``LexicalIndex._frequent``)."""
FREQUENT_TERMS = 16
"""Terms whose merged columns a ``LexicalIndex`` keeps. Each costs 8 bytes (an int32 slot
and a float32) a document that holds it, so at most 16 x 8 B x the documents: 128 MB at a
million memories, when every kept term is in every document (the question words held by
most of them come nearer to half of that)."""
COUNT_MAX = np.iinfo(np.uint16).max
"""A term's count in one field of one document is kept up to this (BM25 has long saturated there)."""
_WORD = re.compile(r"[^\W_]+")
CJK_CHARS = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
"""Kana and CJK ideographs (a regular-expression class body): text written without spaces."""
_CJK = re.compile(f"[{CJK_CHARS}]+")
_SCRIPT_RUN = re.compile(f"[{CJK_CHARS}]+|[^{CJK_CHARS}]+")
_segmenter: Any = None
_segmenter_lock = threading.Lock()
_STEMS: dict[str, str] = {}
_STEM_CACHE_MAX = 1_000_000
_stemmer: Any = None

Document = tuple[str, str, str]
"""A memory as lexical recall sees it: (own text, context, day)."""


def _stem(word: str) -> str:
    global _stemmer
    if not word.isascii():
        # Diacritics folded ("café" as "cafe"); compatibility forms ("¼", "ｆｕｌｌ") keep their letters and digits.
        word = "".join(c for c in unicodedata.normalize("NFKD", word) if c.isalnum()).lower() or word
    if len(word) < 3:
        return word
    if _stemmer is None:
        # heavy: needed only for English BM25
        import Stemmer

        _stemmer = Stemmer.Stemmer("porter")
    return str(_stemmer.stemWord(word))


def stem_of(word: str) -> str:
    """The token of one lower-case word (``_stem``), remembered for the next time."""
    stem = _STEMS.get(word)
    if stem is None:
        if len(_STEMS) > _STEM_CACHE_MAX:
            _STEMS.clear()
        stem = _STEMS[word] = _stem(word)
    return stem


def has_cjk(text: str) -> bool:
    """Whether ``text`` holds CJK ideographs or kana (text that needs ``segment``)."""
    return not text.isascii() and _CJK.search(text) is not None


def jieba_tokenizer() -> Any:
    """jieba's tokenizer (its prefix dictionary), loaded once for the process (about 0.6 s)
    and shared by ``segment`` and the part-of-speech tagging of ``memcli.text.entities``. Its
    dictionary cache, in the temporary directory, is one per user (not a file others could
    plant)."""
    global _segmenter
    if _segmenter is None:
        with _segmenter_lock:
            if _segmenter is None:
                # heavy: jieba loads its dictionary (about a second)
                import jieba

                jieba.setLogLevel(logging.WARNING)
                tokenizer = jieba.Tokenizer()
                tokenizer.cache_file = f"jieba.u{os.getuid()}.cache" if hasattr(os, "getuid") else None
                tokenizer.initialize()
                _segmenter = tokenizer
    return _segmenter


def segment(run: str) -> list[str]:
    """The words of a run of CJK characters, by jieba's search mode (Sun 2012; the
    prefix-dictionary DAG with an HMM for unknown words, then the shorter words inside
    each long one as well): "弹钢琴" -> 钢琴, 弹钢琴. jieba loads its dictionary on first
    use (``jieba_tokenizer``)."""
    return [w for w in jieba_tokenizer().cut_for_search(run) if w.strip()]


def word_tokens(word: str) -> list[str]:
    """The tokens of one lower-case word of ``_WORD`` (see ``tokens``)."""
    if not has_cjk(word):
        return [stem_of(word)]
    out: list[str] = []
    for run in _SCRIPT_RUN.findall(word):
        out.extend(segment(run) if _CJK.match(run) else [stem_of(run)])
    return out


def tokens(text: str) -> list[str]:
    """The tokens of ``text`` (see the module docstring), in order, repeats kept."""
    out: list[str] = []
    for word in _WORD.findall(text.lower()):
        if has_cjk(word):
            out.extend(word_tokens(word))
        else:
            out.append(stem_of(word))
    return out


@dataclass(frozen=True)
class Postings:
    """Postings in compressed-column form: column ``c`` (``FIELDS * term + field``) holds the
    slots ``indices[indptr[c]:indptr[c + 1]]`` (int32, ascending) with the term's count in
    that field of each (``counts``, uint16). The arrays may be read-only memory maps."""

    indptr: np.ndarray
    indices: np.ndarray
    counts: np.ndarray

    @property
    def columns(self) -> int:
        """Columns held (``FIELDS`` times the terms known when they were made)."""
        return len(self.indptr) - 1

    def column(self, column: int) -> tuple[np.ndarray, np.ndarray]:
        """(slots, counts) of ``column``; empty when it is beyond these postings."""
        if column >= self.columns:
            return _NO_SLOTS, _NO_COUNTS
        start, end = int(self.indptr[column]), int(self.indptr[column + 1])
        return self.indices[start:end], self.counts[start:end]

    def without(self, gone: np.ndarray) -> Postings:
        """These postings without the entries at positions ``gone`` (ascending int64):
        copies the two big arrays once, in their own types (never widened: at a million
        memories they hold about a hundred million postings)."""
        if not len(gone):
            return self
        indptr = self.indptr - np.searchsorted(gone, self.indptr)
        return Postings(indptr, np.delete(self.indices, gone), np.delete(self.counts, gone))

    def renumbered(self, renumber: np.ndarray) -> Postings:
        """These postings with each slot ``s`` renamed ``renumber[s]`` (int32; -1: the slot's
        entries go). ``renumber`` must keep the order of the slots it keeps (a compaction's):
        the slots of each column stay ascending."""
        slots = renumber[self.indices]
        gone = np.flatnonzero(slots < 0)
        indptr = self.indptr - np.searchsorted(gone, self.indptr) if len(gone) else self.indptr
        return Postings(indptr, np.delete(slots, gone), np.delete(self.counts, gone))

    def plus(self, other: Postings, rows: int) -> Postings:
        """The entries of both postings (no slot may have a column in both), over the
        columns of the wider: a sparse sum in int32 slots and uint16 counts (scipy keeps
        the index and value types of its operands)."""
        # heavy: scipy's sparse matrices are needed only by BM25
        from scipy import sparse

        columns = max(self.columns, other.columns)
        matrices = [
            sparse.csc_matrix(
                (p.counts, p.indices, np.concatenate([p.indptr, np.full(columns - p.columns, p.indptr[-1])])),
                shape=(rows, columns),
            )
            for p in (self, other)
        ]
        total = matrices[0] + matrices[1]
        return Postings(
            total.indptr.astype(np.int64),
            total.indices.astype(np.int32, copy=False),
            total.data.astype(np.uint16, copy=False),
        )

    @classmethod
    def joined(cls, parts: list[Run], spill: str | os.PathLike[str] | None = None) -> Postings:
        """The entries of ``parts`` (their slots in ascending ranges, each part's after the
        previous one's) as one, over the columns of the widest: column by column, each
        part's entries after the previous part's, so the slots of a column stay ascending.
        Empties ``parts``; the result keeps int32 slots and uint16 counts. ``spill``: a
        folder where the entries are written, a block of columns at a time, into two
        unlinked files then memory-mapped read-only, as a snapshot's are (a query maps in
        its terms' pages alone), rather than held; without room there (the files cannot be
        made or written, ENOSPC), they are held."""
        columns = max(p.width for p in parts)
        lengths = np.zeros(columns, dtype=np.int64)
        for p in parts:
            lengths[p.columns] += p.lengths  # a part's columns are distinct
        indptr = np.zeros(columns + 1, dtype=np.int64)
        np.cumsum(lengths, out=indptr[1:])
        total = int(indptr[-1])
        starts = [np.cumsum(p.lengths, dtype=np.int64) - p.lengths for p in parts]
        entries: tuple[np.ndarray, np.ndarray] | None = None
        if spill is not None and total:
            files = _spill_files(spill)
            try:
                if files:
                    entries = _fill(parts, starts, indptr, files)
            except OSError:  # no room on the device (ENOSPC) or no map: held in memory
                entries = None
            finally:
                for f in files:
                    f.close()
        if entries is None:
            entries = _fill(parts, starts, indptr, [])
        parts.clear()
        indices, counts = entries
        return cls(indptr, indices, counts)

    @classmethod
    def build(cls, slots: np.ndarray, columns: np.ndarray, counts: np.ndarray, n_columns: int) -> Postings:
        """Postings of the entries (slot, column, count); repeated (slot, column) entries are summed."""
        # heavy: scipy's sparse matrices are needed only by BM25 (its conversion is a counting sort)
        from scipy import sparse

        rows = int(slots.max()) + 1 if len(slots) else 1
        matrix = sparse.coo_matrix(
            (np.asarray(counts, dtype=np.float64), (slots, columns)), shape=(rows, n_columns)
        ).tocsc()
        matrix.sum_duplicates()
        return cls(
            matrix.indptr.astype(np.int64),
            matrix.indices.astype(np.int32),
            np.clip(np.rint(matrix.data), 0, COUNT_MAX).astype(np.uint16),
        )


@dataclass(frozen=True)
class Run:
    """Postings kept without their empty columns, for ``Postings.joined``: the columns
    holding entries (int32, ascending), the entries of each (int32), and the entries
    (slots int32, counts uint16) column after column. A page of a load holds a few of a
    big user's terms: its full column pointers (8 bytes a column of every term known)
    would outweigh its entries."""

    columns: np.ndarray
    lengths: np.ndarray
    indices: np.ndarray
    counts: np.ndarray
    width: int
    """The columns of the postings it was made of (empty ones included)."""
    first: int = 0
    """What ``indices`` are relative to: a page's slots span under 65,536, kept as uint16
    offsets from its first slot (4 bytes an entry with its count, not 6)."""
    file: Any = None
    """Where the entries wait when they are not held (``stored``): an open file holding,
    from byte ``at``, the ``size`` entries' ``indices`` then their ``counts`` (both arrays
    then left empty, ``indices`` of its type)."""
    at: int = 0
    size: int = 0

    @classmethod
    def of(cls, postings: Postings) -> Run:
        """``postings`` without their empty columns."""
        lengths = np.diff(postings.indptr)
        columns = np.flatnonzero(lengths)
        indices, first = postings.indices, 0
        if len(indices) and int(indices.max()) - int(indices.min()) <= np.iinfo(np.uint16).max:
            first = int(indices.min())
            indices = (indices - first).astype(np.uint16)
        return cls(
            columns.astype(np.int32),
            lengths[columns].astype(np.int32),
            indices,
            postings.counts,
            postings.columns,
            first,
        )

    def slots(self, begin: int, end: int) -> np.ndarray:
        """The slots of entries ``begin`` to ``end`` (int32) of a run held."""
        return self._as_slots(self.indices[begin:end])

    def _as_slots(self, part: np.ndarray) -> np.ndarray:
        return part if part.dtype == np.int32 and not self.first else part.astype(np.int32) + np.int32(self.first)

    def entries(self, begin: int, end: int) -> tuple[np.ndarray, np.ndarray]:
        """The slots (int32) and counts (uint16) of entries ``begin`` to ``end``, held or
        read from the run's file (``stored``). Raises OSError (the file, or a short read)."""
        if self.file is None:
            return self.slots(begin, end), self.counts[begin:end]
        fd, width, n = self.file.fileno(), self.indices.itemsize, end - begin
        indices = os.pread(fd, n * width, self.at + begin * width)
        counts = os.pread(fd, 2 * n, self.at + self.size * width + 2 * begin)
        if len(indices) != n * width or len(counts) != 2 * n:
            raise OSError(errno.EIO, "a short read of a load's pending postings")
        return self._as_slots(np.frombuffer(indices, dtype=self.indices.dtype)), np.frombuffer(counts, dtype=np.uint16)

    def stored(self, file: Any, at: int) -> Run:
        """This run with its entries written to ``file`` from byte ``at`` (slots, then
        counts) and no longer held; its bytes there are ``stored_bytes``. Raises OSError
        (no room on the file's device)."""
        for array, offset in ((self.indices, at), (self.counts, at + self.indices.nbytes)):
            data = memoryview(np.ascontiguousarray(array)).cast("B")
            while len(data):
                written = os.pwrite(file.fileno(), data, offset)
                data, offset = data[written:], offset + written
        return dataclasses.replace(
            self,
            indices=self.indices[:0].copy(),
            counts=self.counts[:0].copy(),
            file=file,
            at=at,
            size=len(self.indices),
        )


POSTINGS_PER_DOCUMENT = 100
"""Postings a document makes, about: the distinct terms of its own text, its context and
its day (84 a memory on the bench's synthetic stores, LoCoMo turns with their session
neighbours as context), what ``spill_room`` counts on."""


def spill_room(documents: int) -> int:
    """Bytes of temporary files the postings of a load of ``documents`` may take at once on
    its spill's device (``LexicalIndex.loading``, ``Postings.joined``), about
    (``POSTINGS_PER_DOCUMENT``): the batches waiting (4 bytes an entry) and the joined
    postings (6) during the join, then the joined and a snapshot's (6 + 6) while a
    snapshot of the load is written; 12 bytes an entry."""
    return 12 * POSTINGS_PER_DOCUMENT * documents


JOIN_BLOCK = 1 << 22
"""Entries ``Postings.joined`` writes to its files at a time (24 MB)."""


def _spill_files(folder: str | os.PathLike[str]) -> list[Any]:
    """Two unlinked files in ``folder`` for ``Postings.joined``; none when either cannot be made."""
    files: list[Any] = []
    try:
        for _ in range(2):
            files.append(tempfile.TemporaryFile(dir=folder))
    except OSError:
        for f in files:
            f.close()
        return []
    return files


def _fill(
    parts: list[Run], starts: list[np.ndarray], indptr: np.ndarray, files: list[Any]
) -> tuple[np.ndarray, np.ndarray]:
    """The entries of ``parts`` column by column (``Postings.joined``): slots int32 and
    counts uint16, each of ``indptr[-1]`` entries. With ``files`` (two), written to them a
    block of columns at a time and returned as read-only memory maps of them (the files may
    then be closed); without, held. ``parts`` are left as they were. Raises OSError (the
    files: no room on their device, or no map)."""
    columns, total = len(indptr) - 1, int(indptr[-1])
    if files:
        indices: np.ndarray = np.empty(min(total, JOIN_BLOCK), dtype=np.int32)
        counts: np.ndarray = np.empty(len(indices), dtype=np.uint16)
    else:
        indices, counts = np.empty(total, dtype=np.int32), np.empty(total, dtype=np.uint16)
    first = 0
    while first < columns:  # a block of columns: their entries at most JOIN_BLOCK (or one column)
        last = max(first + 1, int(np.searchsorted(indptr, indptr[first] + JOIN_BLOCK, side="right")) - 1)
        last = min(last, columns)
        origin = 0 if not files else int(indptr[first])
        size = int(indptr[last]) - int(indptr[first])
        if files and size > len(indices):
            indices, counts = np.empty(size, dtype=np.int32), np.empty(size, dtype=np.uint16)
        filled = indptr[first:last] - origin  # where the next part's entries of each column go
        for p, at in zip(parts, starts):
            lo, hi = np.searchsorted(p.columns, [first, last])
            if lo == hi:
                continue
            own, begin = p.lengths[lo:hi], int(at[lo])
            end = int(at[hi - 1]) + int(own[-1])
            # each entry's place: its column's fill point, plus its rank within its column in the part
            where = np.repeat(filled[p.columns[lo:hi] - first] - (at[lo:hi] - begin), own)
            where += np.arange(end - begin)
            indices[where], counts[where] = p.entries(begin, end)
            filled[p.columns[lo:hi] - first] += own
        if files:
            files[0].write(memoryview(indices[:size]).cast("B"))
            files[1].write(memoryview(counts[:size]).cast("B"))
        first = last
    if not files:
        return indices, counts
    for f in files:
        f.flush()
    return (
        np.memmap(files[0], dtype=np.int32, mode="r", shape=(total,)),
        np.memmap(files[1], dtype=np.uint16, mode="r", shape=(total,)),
    )


_NO_SLOTS = np.zeros(0, dtype=np.int32)
_NO_COUNTS = np.zeros(0, dtype=np.uint16)


Column = tuple[np.ndarray, np.ndarray, float]
"""A column of postings as a query reads it: slots (ascending), counts, the field's weight."""


def _merged(parts: Sequence[Column], values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The slots of ``parts`` (columns of one term: ascending slots, their counts, the
    field's weight), each once, ascending, and the weighted count of each summed over the
    parts (float32), added in the parts' order. ``values``: a float32 buffer of at least
    every part's length.

    The columns one after another are sorted stably (timsort merges the ascending runs
    in linear time), so that every pass reads its arrays in order: at a million memories
    the query's terms hold about a million postings, and marking each slot in arrays of
    every slot (a scatter a column, then a gather) cost twice as much."""
    every = np.concatenate([slots for slots, _, _ in parts])
    at = 0
    for slots, counts, weight in parts:
        np.multiply(counts, weight, out=values[at : at + len(slots)])
        at += len(slots)
    order = np.argsort(every, kind="stable")
    every, weighted = every[order], values[: len(every)][order]
    starts = np.flatnonzero(np.r_[True, every[1:] != every[:-1]])
    runs = np.diff(starts, append=len(every))
    f = weighted[starts]
    for k in range(1, int(runs.max())):  # one field after another, as a slot's sum adds them
        longer = np.flatnonzero(runs > k)
        f[longer] += weighted[starts[longer] + k]
    return every[starts], f


def _summed(parts: Sequence[Column], values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``_merged``, but a single column (its slots distinct already) only weighted, into
    ``values``."""
    if len(parts) == 1:
        slots, counts, weight = parts[0]
        return slots, np.multiply(counts, weight, out=values[: len(slots)])
    return _merged(parts, values)


class LexicalIndex:
    """BM25 postings of one user's memories, one document per slot of a ``UserIndex``
    (slots are small integers; a slot may be written again or dropped).

    ``put`` (re)indexes documents, ``drop`` removes one, ``compact`` renumbers the slots
    as ``UserIndex`` compaction does, and ``scores`` scores a query against every slot.
    """

    def __init__(self) -> None:
        self._vocab: dict[str, int] = {}
        """Term (a stem) -> its number."""
        self._words: dict[str, int] = {}
        """Word (lower-case, as written) -> the number of its stem."""
        self._length = np.zeros(0, dtype=np.float64)
        self._live = np.zeros(0, dtype=bool)
        self._stale = np.zeros(0, dtype=bool)
        self._live_count = 0
        self._total_length = 0.0
        self._base: Postings | None = None
        """Postings as of the last merge; rows marked stale since do not count."""
        self._delta: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        """Documents written since the last merge: slot -> (columns, counts)."""
        self._delta_postings: Postings | None = None
        self._pending: list[Run] = []
        """Postings of documents appended after every slot the base holds, by batch
        (``put`` of new slots in order during a load, a page at a time: ``loading``), joined
        into the base once anything else reads or writes it (``_join``): no merge a batch."""
        self._spill_to: str | os.PathLike[str] | None = None
        """The folder where the pending postings of a load wait in a file (``loading``)."""
        self._pending_file: Any = None
        self._pending_end = 0
        """The unlinked file the pending postings wait in, and the end of what it holds."""
        self._loading = False
        """Whether a load is under way (``loading`` to ``settle``): only then does a ``put``
        of new slots in order go to ``_pending``. Outside a load a new document goes to the
        small ``_delta``: a pending batch would make the next query join (copy) the whole base."""
        self._end = 0
        """One past the last slot the base and the pending postings hold."""
        self._norm = np.zeros(0)
        self._buffers = [np.empty(0, dtype=np.float32) for _ in range(3)]
        self._norm_key: tuple[Any, ...] | None = None
        self._frequent_columns: dict[tuple[int, tuple[float, float, float]], tuple[np.ndarray, np.ndarray]] = {}
        """(term, weights) -> the term's base columns merged (``_frequent``), the last used
        last; emptied as soon as the base is replaced (``_rebase``)."""
        self._writes = 0
        """Documents put or dropped so far (the lengths changed since ``_norms`` last looked)."""

    def __len__(self) -> int:
        """Documents indexed."""
        return self._live_count

    def state(self) -> tuple[dict[str, np.ndarray], dict[str, Any], dict[str, Any]]:
        """The postings as (arrays, JSON-able lists, scalars), merged first: what
        ``from_state`` takes back (a snapshot of the recall index saves them)."""
        self._merge()
        self._join()
        arrays = {"length": self._length, "live": self._live}
        if self._base is not None:
            arrays.update(indptr=self._base.indptr, indices=self._base.indices, counts=self._base.counts)
        terms = [""] * len(self._vocab)
        for term, number in self._vocab.items():
            terms[number] = term
        lists = {"terms": terms, "words": self._words}
        scalars = {"live_count": self._live_count, "total_length": self._total_length}
        return arrays, lists, scalars

    @classmethod
    def from_state(
        cls, arrays: Mapping[str, np.ndarray], lists: Mapping[str, Any], scalars: Mapping[str, Any]
    ) -> LexicalIndex:
        """The postings ``state`` gave (``indices`` and ``counts`` may be read-only memory
        maps: they are used as they are, and only a query's columns are read). Raises
        ValueError when its parts do not agree."""
        index = cls()
        index._vocab = {term: number for number, term in enumerate(lists["terms"])}
        index._words = {str(word): int(number) for word, number in lists["words"].items()}
        index._length = np.array(arrays["length"], dtype=np.float64)
        index._live = np.array(arrays["live"], dtype=bool)
        if len(index._length) != len(index._live):
            raise ValueError("postings whose parts differ in length")
        index._stale = np.zeros(len(index._live), dtype=bool)
        index._end = len(index._live)
        index._live_count, index._total_length = int(scalars["live_count"]), float(scalars["total_length"])
        if "indptr" in arrays:
            indptr = np.array(arrays["indptr"], dtype=np.int64)
            indices, counts = arrays["indices"], arrays["counts"]
            if (
                len(indptr) > FIELDS * max(1, len(index._vocab)) + 1
                or indices.dtype != np.int32
                or counts.dtype != np.uint16
                or len(indices) != len(counts)
                or (len(indptr) and (indptr[0] != 0 or indptr[-1] != len(indices)))
                or bool(np.any(np.diff(indptr) < 0))
            ):
                raise ValueError("postings of another shape")
            index._rebase(Postings(indptr, indices, counts))
        return index

    def adopt(self, indices: np.ndarray, counts: np.ndarray) -> None:
        """Read the postings' entries from now on from ``indices`` and ``counts`` (read-only
        memory maps of the snapshot just written of them, ``memcli.store.snapshot.save``)
        instead of what holds them now (memory, or the unlinked files of a load's join,
        whose room goes back to the device with their maps). Raises ValueError when they
        are not the postings as they stand (another length or type, or the postings
        written since: a delta, pending batches or stale rows)."""
        base = self._base
        if base is None or self._pending or self._delta or bool(self._stale.any()):
            raise ValueError("postings written since the snapshot")
        if (
            len(indices) != len(base.indices)
            or len(counts) != len(base.counts)
            or indices.dtype != base.indices.dtype
            or counts.dtype != base.counts.dtype
        ):
            raise ValueError("postings that are not this index's")
        self._rebase(Postings(base.indptr, indices, counts))
        self._delta_postings = None

    # writes ------------------------------------------------------------------------------

    def put(self, slots: Sequence[int], documents: Sequence[Document]) -> None:
        """Index ``documents`` at ``slots`` (replacing what those slots held)."""
        if not len(slots):
            return
        slots = np.asarray(slots, dtype=np.int64)
        self._grow(int(slots.max()) + 1)
        batch = self._encode(documents)
        lengths = np.asarray(batch.sum(axis=1)).ravel()
        fresh = self._base is None and not self._delta and self._live_count == 0
        appended = (
            not fresh
            and self._loading
            and not self._delta
            and int(slots[0]) >= self._end
            and (len(slots) == 1 or bool(np.all(np.diff(slots) > 0)))
        )
        if fresh or appended:
            coo = batch.tocoo()
            postings = self._postings([slots[coo.row]], [coo.col.astype(np.int64)], [coo.data])
            if fresh:
                self._rebase(postings)
            else:
                self._pending.append(self._waiting(Run.of(postings)))
            self._end = int(slots[-1]) + 1 if appended else int(slots.max()) + 1
        else:
            self._join()
            self._end = max(self._end, int(slots.max()) + 1)
            for i, slot in enumerate(slots.tolist()):
                self._unindex(slot)
                start, end = batch.indptr[i], batch.indptr[i + 1]
                self._delta[slot] = (
                    batch.indices[start:end].astype(np.int64),
                    batch.data[start:end].astype(np.float32),
                )
            self._delta_postings = None
        self._writes += 1
        for slot, length in zip(slots.tolist(), lengths.tolist()):
            if self._live[slot]:
                self._total_length -= self._length[slot]
            else:
                self._live_count += 1
            self._live[slot] = True
            self._length[slot] = length
            self._total_length += length
        if len(self._delta) > max(MERGE_AT, self._live_count // 8):
            self._merge()

    def drop(self, slot: int) -> None:
        """Remove the document at ``slot``."""
        if slot < len(self._live) and self._live[slot]:
            self._join()
            self._writes += 1
            self._unindex(slot)
            self._delta_postings = None
            self._live[slot] = False
            self._live_count -= 1
            self._total_length -= self._length[slot]
            self._length[slot] = 0.0

    def compact(self, keep: np.ndarray) -> None:
        """Renumber the slots: slot ``i`` becomes what slot ``keep[i]`` was (the others go)."""
        self._merge()
        self._join()
        keep = np.asarray(keep, dtype=np.int64)
        inside = keep[keep < len(self._live)]
        length, live = np.zeros(len(keep)), np.zeros(len(keep), dtype=bool)
        length[: len(inside)], live[: len(inside)] = self._length[inside], self._live[inside]
        base = self._base
        if base is not None:
            renumber = np.full(len(self._live), -1, dtype=np.int32)
            renumber[inside[live[: len(inside)]]] = np.flatnonzero(live[: len(inside)])
            self._frequent_columns.clear()  # the old base's kept columns go before its renumbered copy is made
            self._rebase(base.renumbered(renumber))
        self._length, self._live, self._stale = length, live, np.zeros(len(keep), dtype=bool)
        self._end = len(keep)
        self._writes += 1
        self._live_count, self._total_length = int(live.sum()), float(length[live].sum())
        self._grow(len(keep))

    def _grow(self, n: int) -> None:
        if n <= len(self._live):
            return
        capacity = max(n, 2 * len(self._live), 16)
        for name in ("_length", "_live", "_stale"):
            old = getattr(self, name)
            new = np.zeros(capacity, dtype=old.dtype)
            new[: len(old)] = old
            setattr(self, name, new)

    def _unindex(self, slot: int) -> None:
        """Take the document at ``slot`` out of the postings (a base row goes stale)."""
        if self._delta.pop(slot, None) is None and self._base is not None:
            self._stale[slot] = True

    def _encode(self, documents: Sequence[Document]) -> Any:
        """The term counts of ``documents``: a CSR matrix (documents x FIELDS * terms).

        Each distinct line is tokenized once (a turn's text is also a line of its
        neighbours' context), and a field's counts are the sum of its lines' counts
        (a sparse product: documents x lines, lines x terms)."""
        # heavy: scipy's sparse matrices are needed only by BM25
        from scipy import sparse

        lines: dict[str, int] = {}
        number = lines.setdefault
        rows: tuple[list[int], ...] = ([], [], [])
        found: tuple[list[int], ...] = ([], [], [])
        for i, document in enumerate(documents):
            for field, text in enumerate(document):
                if text:
                    for line in text.split("\n") if "\n" in text else (text,):
                        rows[field].append(i)
                        found[field].append(number(line, len(lines)))
        ids = [self._term_ids(line) for line in lines]
        vocab = self._vocab
        indptr = np.cumsum([0, *map(len, ids)])
        indices = np.fromiter(itertools.chain.from_iterable(ids), dtype=np.int64, count=int(indptr[-1]))
        terms = sparse.csr_matrix(
            (np.ones(len(indices), dtype=np.float32), indices, indptr), shape=(len(lines), max(1, len(vocab)))
        )
        parts = []
        for field in range(FIELDS):
            incidence = sparse.csr_matrix(
                (np.ones(len(rows[field]), dtype=np.float32), (rows[field], found[field])),
                shape=(len(documents), len(lines)),
            )
            counts = (incidence @ terms).tocoo()
            parts.append((counts.row, counts.col.astype(np.int64) * FIELDS + field, counts.data))
        shape = (len(documents), FIELDS * max(1, len(vocab)))
        entries = (
            np.concatenate([p[2] for p in parts]),
            (np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])),
        )
        return sparse.coo_matrix(entries, shape=shape).tocsr()

    def _term_ids(self, text: str) -> list[int]:
        """The term number of each token of ``text`` (new terms numbered as they come)."""
        words, vocab = self._words, self._vocab
        out = []
        for word in _WORD.findall(text.lower()):
            number = words.get(word)
            if number is None:
                if has_cjk(word):  # a CJK run is often a whole sentence: cut it, do not keep it
                    out.extend(vocab.setdefault(token, len(vocab)) for token in word_tokens(word))
                    continue
                number = words[word] = vocab.setdefault(stem_of(word), len(vocab))
            out.append(number)
        return out

    def _postings(self, slots: list[np.ndarray], columns: list[np.ndarray], counts: list[np.ndarray]) -> Postings:
        """Postings of the entries given in parts (slots, columns, counts), over every term known."""
        n_columns = FIELDS * max(1, len(self._vocab))
        if not slots:
            return Postings.build(_NO_SLOTS.astype(np.int64), _NO_SLOTS.astype(np.int64), _NO_COUNTS, n_columns)
        return Postings.build(np.concatenate(slots), np.concatenate(columns), np.concatenate(counts), n_columns)

    def loading(self, spill: str | os.PathLike[str] | None = None) -> None:
        """Begin a load (``UserIndex.from_chunks``): until ``settle``, a ``put`` of new slots
        after every slot held, in order, is kept as a batch and joined once, not merged.
        ``spill``: a folder where the batches' entries wait in an unlinked file (read back a
        block of columns at a time by the join) rather than in memory (about 400 MB at a
        million memories); without room there (ENOSPC), they are held."""
        self._loading = True
        self._spill_to = spill

    def _waiting(self, run: Run) -> Run:
        """``run`` as it waits for the join: stored at the end of the pending file when a
        load spills (``loading``), else (or without room for it) held."""
        if self._spill_to is None or not len(run.indices):
            return run
        try:
            if self._pending_file is None:
                self._pending_file = tempfile.TemporaryFile(dir=self._spill_to)
                self._pending_end = 0
            stored = run.stored(self._pending_file, self._pending_end)
        except OSError:  # no room on the device: this batch and the next are held
            self._spill_to = None
            return run
        self._pending_end += run.indices.nbytes + run.counts.nbytes
        return stored

    def settle(self, spill: str | os.PathLike[str] | None = None) -> None:
        """End a load (``loading``): join the postings of documents appended in order (a load
        a page at a time) into one, now rather than at the first query (``_join``); ``spill``:
        a folder where they are written and read from through a read-only memory map
        (``Postings.joined``). Later writes go to the delta."""
        self._loading = False
        self._spill_to = None
        self._join(spill)

    def abandon(self) -> None:
        """Close the file of a load's pending postings (a load that failed: its room given
        back now, not at garbage collection); the pending postings go with it."""
        self._pending = []
        self._close_pending()

    def _close_pending(self) -> None:
        if self._pending_file is not None:
            self._pending_file.close()
            self._pending_file, self._pending_end = None, 0

    def _join(self, spill: str | os.PathLike[str] | None = None) -> None:
        """Join the pending postings (documents appended in order) into the base. The
        pending postings are let go only once the join is made (an error keeps them), and
        the file they waited in with them."""
        if self._pending:
            parts = [Run.of(self._base), *self._pending] if self._base is not None else list(self._pending)
            joined = Postings.joined(parts, spill)
            self._rebase(joined)
            self._pending = []
            self._delta_postings = None
            self._close_pending()

    def _merge(self) -> None:
        """Fold the delta into the postings and drop the stale rows."""
        self._join()
        if not self._delta and not self._stale.any():
            return
        delta = self._delta_as_postings()
        base = self._base
        if base is not None and self._stale.any():
            base = base.without(np.flatnonzero(self._stale[base.indices]))
        if base is not None and self._delta:
            base = base.plus(delta, len(self._live))
        self._rebase(base if base is not None else delta)
        self._delta, self._delta_postings = {}, None
        self._stale[:] = False

    def _rebase(self, base: Postings | None) -> None:
        """Make ``base`` the postings as of the last merge, letting go of the merged columns
        kept from the one before (``_frequent``) at once: held until the next query, they
        would sit in memory beside the new base for as long as no query comes."""
        self._frequent_columns.clear()
        self._base = base

    def _delta_as_postings(self) -> Postings:
        """The delta's documents as postings, kept until the next write (``_delta_postings``):
        what a query reads beside the base, and what a merge adds to it."""
        if self._delta_postings is None:
            self._delta_postings = self._postings(
                [np.full(len(c), slot, dtype=np.int64) for slot, (c, _) in self._delta.items()],
                [c for c, _ in self._delta.values()],
                [n for _, n in self._delta.values()],
            )
        return self._delta_postings

    # scoring ---------------------------------------------------------------------------------

    def _frequent(self, base: Postings, term: int, weights: tuple[float, float, float]) -> tuple[list[Column], bool]:
        """The base's columns of ``term`` that hold postings, and whether they come merged
        into one (``_merged``, the weights applied: a column of weight 1, each slot once):
        merged when they hold postings for ``FREQUENT_SHARE`` of the documents or more,
        else as they are (read once: ``scores`` filters these). The merged columns of the
        last ``FREQUENT_TERMS`` such terms are kept until the base is replaced: the words
        that most questions share ("what", "did", "when") hold most of a query's postings,
        and merging theirs cost half its time. Filtering the merged column by slot
        (``scores``: the limit, the stale rows) keeps what filtering each column would: a
        slot's fields are kept or dropped together."""
        key = (term, weights)
        merged = self._frequent_columns.pop(key, None)
        if merged is None:
            columns = [
                (slots, counts, weight)
                for field, weight in enumerate(weights)
                for slots, counts in [base.column(FIELDS * term + field)]
                if len(slots)
            ]
            size = sum(len(slots) for slots, _, _ in columns)
            if size * FREQUENT_SHARE < self._live_count or not columns:
                return columns, False
            merged = _merged(columns, np.empty(size, dtype=np.float32))
            if len(self._frequent_columns) >= FREQUENT_TERMS:
                del self._frequent_columns[next(iter(self._frequent_columns))]
        self._frequent_columns[key] = merged  # the last used last
        return [(merged[0], merged[1], 1.0)], True

    def _norms(self, n: int, avgdl: float) -> np.ndarray:
        """BM25's length normalisation ``K1 * (1 - B + B * length / avgdl)`` of the first
        ``n`` slots, kept until the lengths change (a pass over every slot once, not a query)."""
        key = (n, avgdl, self._writes, id(self._length))
        if self._norm_key != key:
            self._norm = (K1 * (1 - B + B * self._length[:n] / avgdl)).astype(np.float32)
            self._norm_key = key
        return self._norm

    def _work(self, size: int) -> list[np.ndarray]:
        """Three float32 buffers of at least ``size`` entries, kept for the next query."""
        if len(self._buffers[0]) < size:
            self._buffers = [np.empty(size, dtype=np.float32) for _ in range(3)]
        return self._buffers

    def scores(self, stems: Sequence[str], weights: tuple[float, float, float], n: int) -> np.ndarray:
        """The BM25 score (higher is better; 0 for no match) of each of the first ``n``
        slots for the query terms ``stems`` (already ``tokens``), with field weights
        (own, context, day). Reads the postings of the query's terms alone: the cost grows
        with their postings, not with the documents, beyond the output's ``n`` zeros."""
        out = np.zeros(n)
        if self._live_count == 0:
            return out
        self._join()
        ids = [self._vocab[s] for s in dict.fromkeys(stems) if s in self._vocab]
        if not ids:
            return out
        if self._delta:
            self._delta_as_postings()
        avgdl = self._total_length / self._live_count
        limit = min(n, len(self._stale))
        stale = self._stale if self._stale.any() else None
        norm = self._norms(n, avgdl)
        # Work in proportion to the postings, never a pass over every slot a term (at a
        # million memories a query's terms hold about a million postings): a term's fields
        # merged in order (``_merged``), its scores kept by slot, and the terms added up once.
        found_slots: list[np.ndarray] = []
        found_scores: list[np.ndarray] = []
        for term in ids:
            parts: list[tuple[np.ndarray, np.ndarray, float]] = []
            base_merged = False
            for postings, skip in ((self._base, stale), (self._delta_postings, None)):
                if postings is None:
                    continue
                if postings is self._base:
                    columns, base_merged = self._frequent(postings, term, weights)
                else:
                    columns = [
                        (*postings.column(FIELDS * term + field), weight) for field, weight in enumerate(weights)
                    ]
                for slots, counts, weight in columns:
                    if not len(slots):
                        continue
                    if int(slots[-1]) >= limit:  # a column's slots ascend: those below the limit are a prefix
                        end = int(np.searchsorted(slots, limit))
                        slots, counts = slots[:end], counts[:end]
                    if skip is not None:
                        keep = ~skip[slots]
                        slots, counts = slots[keep], counts[keep]
                    if len(slots):
                        parts.append((slots, counts, weight))
                    elif postings is self._base:
                        base_merged = False  # the merged column left nothing: no base part
            if not parts:
                continue
            work = self._work(sum(len(slots) for slots, _, _ in parts))
            # a document holds the term in one field or several: count it once, its fields summed
            if base_merged and len(parts) > 1:
                # the base's merged column and the delta's columns hold different slots (a slot
                # written since the merge has its base rows stale): the delta's fields summed
                # alone and put in among the base's slots, which are not sorted again
                present, f = _summed(parts[1:], work[0])
                at = np.searchsorted(parts[0][0], present)
                present, f = np.insert(parts[0][0], at, present), np.insert(parts[0][1], at, f)
            else:
                present, f = _summed(parts, work[0])
            found = len(present)
            idf = np.log((self._live_count - found + 0.5) / (found + 0.5))
            idf = np.float32(idf if idf > 0 else _MIN_IDF)
            # idf * f * (K1 + 1) / (f + norm) in float32 (half the bytes a scattered read
            # meets; the scores agree to about 1e-7 of their size, and the best 4,000 of a
            # million slots were the same on 50 of 50 LoCoMo questions), into buffers kept
            # from query to query (no fresh pages a query)
            score = np.multiply(f, idf, out=work[1][:found])
            score *= np.float32(K1 + 1)
            length = np.take(norm, present, out=work[2][:found])
            length += f
            score /= length
            found_slots.append(present)
            found_scores.append(score.copy())  # the buffer serves the next term
        if len(found_slots) > 1:
            # each slot's terms added in the query's order, as adding a term at a time would,
            # in one pass over the postings rather than a gather and a scatter a term
            return np.bincount(np.concatenate(found_slots), np.concatenate(found_scores), minlength=n)
        if found_slots:
            out[found_slots[0]] = found_scores[0]
        return out
