"""Recall: score every memory of the user for a query, keep the best, rank them.

The score of a memory is a weighted sum of signals (CombSUM, Fox & Shaw 1994). The
lexical and dense scores are z-scored over the user's memories that the query may return;
speaker, date and when are 0 or 1 before weighting; the length prior is z-scored over all
the user's memories:

- *lexical*: BM25 (``memcli.text.lexical``: Porter stemming, English stop words dropped from
  the query) over the memory's own text, its context (the two previous turns of its
  session and the next one) and its day;
- *window*: cosine similarity of the query with the memory's window vector (the turn
  with its previous and next turn) and *turn*, with its own vector (MemoryBank's dense
  retrieval, §2.2; all-MiniLM-L6-v2 by default);
- *speaker*: the memory was said by someone the query names, or by no one (a note, a
  fact, a summary); off when the query names no speaker or every one;
- *person*, when the query names no one: the memory was said by the one the question's
  grammatical person points to ("what did I say": the user; "what did you recommend": the
  assistant; 我, 你), or by no one;
- *date*: it was learned on a date the query writes ("May 2nd", "yesterday", "上周二":
  ``memcli.dates``), or in the weeks after it (half); *when*: the query asks when, and
  the memory says "yesterday", "last week", a weekday...;
- *graph* (Mem0g's entity-centric retrieval, ``memcli.store.graph``): the memory mentions an
  entity the query names (by name or alias; "Caroline's sister", "my sister": the entity a
  relation of that label leads to), or, at GRAPH_NEIGHBOUR, one an edge away from it; a
  speaker of the user's conversations, whose turns *speaker* already favours, counts only
  through the relations the query names;
- *superseded* (issue 31): a note or turn that a newer one superseded at write time
  (``memcli.recall.changes.Changes.supersede``: where one lives, a dose...) is recalled
  below the one that replaced it, unless the question asks about the past ("Where did I
  live in 2023?", "以前") or recall is as of a day it still held (``--at``);
- *prior*, independent of the query: longer turns, turns that are not questions, the
  first turn of a session and turns sharing an image carry more than "Wow, cool!"; a reply
  of a base model (tagged ``base-model``, it invents) ranks below what the user said,
  unless the query names the assistant or asks what "you" said (speaker, person).

The best candidates are then ranked by the weighted recall score (``Ranking``: relevance,
importance, retention, use, recently used, feedback). Chat, ask, recall and eval all use
this one path. The recipe and its weights were chosen on half of LoCoMo and checked on
the other half; see the closing note of the retrieval issue for every lever's effect.
"""

from __future__ import annotations

import math
import random
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime

import numpy as np

from memcli.config import Settings
from memcli.dates import DAY_SECONDS, QueryDate, resolve_year
from memcli.dates import query_dates as _query_dates
from memcli.memory import ASSISTANT, BASE_MODEL, SUPERSEDED_KINDS, Kind, Memory, tells
from memcli.models.embedding import Embedder, embedder_identity
from memcli.recall.forgetting import UNIT_SECONDS, retention
from memcli.store import index as user_index
from memcli.store.graph import Graph, day_seconds, relation_memory_id
from memcli.store.index import UserIndex
from memcli.store.store import WINDOWS_SKIPPED, MemoryStore
from memcli.text.entities import RELATIONS, normalise
from memcli.text.extractive import parse_line
from memcli.text.lexical import CJK_CHARS, tokens
from memcli.text.stopwords import stopwords

CANDIDATES = 50
"""How many of the best-scored memories the weighted ranking re-scores."""
POOL = 4
"""Slots of a big index (``SCAN_AT``) whose every signal is worked out, as a multiple of
the slots rescored exactly (``RESCORED``): the best by the signals that cost a pass over
every slot anyway (``Recaller._scanned``)."""

RECALLED_KINDS = (Kind.TURN.value, Kind.NOTE.value, Kind.FACT.value, Kind.EVENT_DAILY.value, Kind.RELATION.value)
"""What recall returns when no kind is asked for: turns, notes, facts and daily event
summaries (MemoryBank's memory pieces are "each turn and each event summary"; Mem0's are
facts), and the relations of the graph memory (Mem0g's triplets) when the query follows
that relation ("where does Ana live": ``graph_memories``; a closed one has ended, so only
``recall --at`` a day it held finds it; ``--kind relation`` lists them all). The global portrait, the global event summary and the running memory go into
every chat and ask prompt whole (``Memcli.consolidated``), and the daily portraits are the
material of the global one, so recalling them would spend the prompt's few recall slots
on repeats: on LoCoMo conv-26, consolidated by the embedded model, they took 139 of the
1,500 top-10 slots of its 150 questions. Asking for their kind still recalls them."""


@dataclass(frozen=True)
class Signals:
    """Weights of the recall signals (see the module docstring); 0 turns one off.

    ``context`` weighs the lexical context column against the memory's own text (1.5) and
    its day (1). The priors: length (z-scored log of the text length), question (the text
    ends with "?"), first (first turn of its session), caption (shares an image).
    """

    lexical: float = 1.0
    context: float = 1.0
    window: float = 1.0
    turn: float = 0.5
    speaker: float = 3.0
    person: float = 2.0
    date: float = 2.0
    when: float = 1.0
    length: float = 0.5
    question: float = -1.0
    first: float = 0.5
    caption: float = 0.5
    base_model: float = -2.0
    graph: float = 1.0

    LEVERS = ("lexical", "context", "window", "turn", "speaker", "person", "date", "when", "priors", "graph")
    """What ``without`` can turn off (``priors`` is the four priors together)."""

    def without(self, *levers: str) -> Signals:
        """These weights with ``levers`` turned off. Raises ValueError for an unknown lever."""
        off: dict[str, float] = {}
        for lever in levers:
            if lever not in self.LEVERS:
                raise ValueError(f"unknown lever {lever!r}; choose from {', '.join(self.LEVERS)}")
            names = ("length", "question", "first", "caption") if lever == "priors" else (lever,)
            off.update({name: 0.0 for name in names})
        return replace(self, **off)


OWN_WEIGHT, DAY_WEIGHT = 1.5, 1.0
"""BM25 weights of the own-text and day fields beside the context field."""

_TERM = re.compile(rf"(?u)\b\w\w+\b|[{CJK_CHARS}]")


def _query_stopwords() -> frozenset[str]:
    """English and Chinese stop words dropped from queries (bm25s's lists: 33 English
    function words, and the common Chinese list of 841 function words, pronouns and
    question words; ``memcli.text.stopwords``)."""
    return stopwords("STOPWORDS_EN", "STOPWORDS_CHINESE")


def query_terms(query: str) -> list[str]:
    """The words of ``query`` that lexical recall looks for: two letters or more (or one
    CJK character), lower-cased, stop words dropped, each once. A CJK run stays whole
    here (``query_stems`` cuts it into words)."""
    stop = _query_stopwords()
    return list(dict.fromkeys(t for t in _TERM.findall(query.lower()) if t not in stop))


def query_stems(query: str) -> list[str]:
    """The tokens lexical recall scores for ``query``: its ``query_terms``, stemmed and
    segmented as memories are (``memcli.text.lexical.tokens``), stop words dropped, each once."""
    stop = _query_stopwords()
    return list(dict.fromkeys(stem for term in query_terms(query) for stem in tokens(term) if stem not in stop))


# Dates in questions ----------------------------------------------------------------------

DATE_BEFORE_DAYS = 1
"""A memory learned the day before a date the query names still counts (time zones)."""
DATE_AFTER_DAYS = {"day": 14, "week": 14, "month": 14, "year": 30}
"""People tell of an event up to two weeks (a month for a year) after it happened."""
DATE_AFTER_WEIGHT = 0.5
"""The date signal of a memory learned after the date's span, within DATE_AFTER_DAYS (a
memory of the date itself: 1)."""

_WHEN = re.compile(
    r"^\W*(when\b|what (year|month|date|day|week|time)\b|which (year|month|week|day|date)\b|how long ago\b|in which (year|month)\b)"
    r"|什么时候|哪一?天|哪一?年|几月|几号|哪个月|多久以前|多长时间以前",
    re.I,
)


def query_dates(query: str, now: float | None = None) -> list[QueryDate]:
    """The dates ``query`` writes, relative ones resolved against ``now`` (unix seconds;
    the clock when None): ``memcli.dates.query_dates``."""
    return _query_dates(query, time.time() if now is None else now)


def date_hits(
    dates: list[QueryDate],
    created_at: np.ndarray,
    months: Callable[[float], np.ndarray] | None = None,
    now: float | None = None,
) -> np.ndarray:
    """The date signal of each time of ``created_at`` (unix seconds): 1.0 within the span
    of one of ``dates`` (from DATE_BEFORE_DAYS before its start to its end), DATE_AFTER_WEIGHT
    after it up to DATE_AFTER_DAYS, else 0.0. A month named alone matches that month of any
    year (1.0), or the first two weeks of the next (DATE_AFTER_WEIGHT). A date written
    without a year is placed first (``memcli.dates.resolve_year``, at ``now``).

    ``months(shift)``: the local month of each time minus ``shift`` seconds, worked out
    ahead (``UserIndex.months``); without it, worked out here."""
    if months is None:
        months = lambda shift: np.array([datetime.fromtimestamp(t - shift).month for t in created_at])  # noqa: E731
    hit = np.zeros(len(created_at))
    for when in dates:
        if when.granularity == "month alone":
            inside = months(0.0) == when.month
            later = months(DATE_AFTER_DAYS["month"] * DAY_SECONDS) == when.month
        else:
            after = DATE_AFTER_DAYS[when.granularity] * DAY_SECONDS
            when = resolve_year(when, created_at, time.time() if now is None else now, after)
            inside = (created_at >= when.start - DATE_BEFORE_DAYS * DAY_SECONDS) & (created_at <= when.end)
            later = (created_at > when.end) & (created_at <= when.end + after)
        hit = np.maximum(hit, np.where(inside, 1.0, np.where(later, DATE_AFTER_WEIGHT, 0.0)))
    return hit


def asks_when(query: str) -> bool:
    """Whether ``query`` asks for a time: "When did...", "What year...", "How long ago...",
    "什么时候", "哪天", "几号"."""
    return bool(_WHEN.search(query))


def asks_past(query: str) -> bool:
    """Whether ``query`` asks about the past ("Where did I live in 2022?", "我以前住在哪里？"):
    then a superseded memory is not recalled below the one that replaced it."""
    return bool(_PAST.search(query))


def named_speakers(query: str, speakers: set[str]) -> set[str]:
    """The ``speakers`` that ``query`` names (whole words, any case)."""
    lower = query.lower()
    return {s for s in speakers if s and re.search(rf"\b{re.escape(s.lower())}\b", lower)}


_ASKING = re.compile(
    r"\b(?:do|did|can|could|would|will)\s+you\s+(?:still\s+)?(?:remember|recall|know|tell me|remind me)\b|\bremind me\b|\btell me\b"
    r"|你还?记得|您还?记得|告诉我|提醒我|帮我(?:回忆|想想)",
    re.I,
)
_PERSON = re.compile(
    r"\b(we|us|our|ours|ourselves)\b|\b(i|my|me|mine|myself|you|your|yours|yourself)\b|(我们|咱们|你们|您们)|(我|你|您)",
    re.I,
)
_CLAUSE = re.compile(r"[.?!。？！；;，]")
_FIRST = {"i", "my", "me", "mine", "myself", "我"}
_SECOND = {"you", "your", "yours", "yourself", "你", "您"}


def is_user_speaker(speaker: str, user: str) -> bool:
    """Whether ``speaker`` is ``user`` speaking: the user's name (spaces and case aside,
    as MemoryBank names are written) or the role "user" of a chat log."""
    name = speaker.replace(" ", "").lower()
    return bool(name) and name in (user.replace(" ", "").lower(), "user")


def person_speakers(query: str, speakers: set[str], user: str) -> set[str]:
    """The speakers a question addressed to memcli points to by its grammatical person: the
    first personal pronoun of the last sentence that has one (in Chinese, of the last
    clause: "朋友过生日我不知道送什么，你给我出了哪些主意" asks about 你), once "do you
    remember", "tell me" and the like are set aside. "I/my/me" (我) point to ``user``'s
    turns; "you/your" (你, 您) to the assistant's; "we" (我们) to both, that is to no one
    in particular. Empty when the pronoun's speaker has no turns."""
    match = None
    for clause in reversed(_CLAUSE.split(_ASKING.sub(" ", query))):
        match = _PERSON.search(clause)
        if match is not None:
            break
    if match is None or match.group(1) or match.group(3):  # "we", 我们: both of you
        return set()
    word = match.group(0).lower()
    if word in _FIRST:
        return {s for s in speakers if is_user_speaker(s, user)}
    if word in _SECOND:
        return {s for s in speakers if s == ASSISTANT}
    return set()


# The graph -----------------------------------------------------------------------------------

GRAPH_NEIGHBOUR = 0.4
"""The graph signal of a memory that mentions an entity one edge away from one the query
names (a memory that mentions the named entity: 1)."""
SUPERSEDED_PENALTY = 2.0
"""Weighted score taken from a superseded memory for a question in the present tense
(about two standard deviations of one signal): below the memory that replaced it."""
_PAST = re.compile(
    r"\b(did|was|were|used to|before|previously|formerly|originally|back then|back in|at first|in the past|"
    r"ago|last year|(in|during|of) (19|20)\d\d)\b|以前|之前|过去|原来|曾经|当时|那时|去年|前年|\d{4}年",
    re.IGNORECASE,
)
GRAPH_HELD = 2.0
"""The graph signal of a relation the query follows and of the memories that state it: the
answer to "where does Ana live" itself, above a mere mention of Lisbon."""
GRAPH_SUPERSEDED = -3.0
"""The graph signal of a memory that states a relation the query follows which no longer
holds (or did not hold on ``--at``'s day): as low as an ended fact is out of recall."""
GRAPH_NEIGHBOURS = 10
"""Neighbours of a named entity whose memories count, the most stated edges first."""
_NAME_WORD = re.compile(r"[^\W\d_][\w'’\-]*", re.U)
_CJK_RUN = re.compile(rf"[{CJK_CHARS}]+")
_SELF = re.compile(r"\b(?:i|me|my|mine|myself)\b|我(?!们)", re.I)


def query_entity_keys(query: str) -> list[str]:
    """The normalised names (``memcli.text.entities.normalise``) an entity of the query could
    have: every run of one to four words ("caroline", "lgbtq support group"), stop words
    alone left out, and in Chinese every two to four characters of a run."""

    stop = _query_stopwords()
    words = _NAME_WORD.findall(query)
    keys: list[str] = []
    for size in range(1, 5):
        for start in range(len(words) - size + 1):
            gram = words[start : start + size]
            if size == 1 and gram[0].lower() in stop:
                continue
            keys.append(normalise(" ".join(gram)))
    for run in _CJK_RUN.findall(query):
        keys.extend(normalise(run[i : i + n]) for n in range(2, 5) for i in range(len(run) - n + 1))
    return list(dict.fromkeys(k for k in keys if k))


def _label_words(label: str) -> set[str]:
    """The words that name a relation label in a question: its own words and those of its
    English and Chinese phrasing (``memcli.text.entities.RELATIONS``), stemmed."""

    kind = RELATIONS.get(label)
    text = label.replace("_", " ") + ("" if kind is None else f" {kind.en}")
    words = {stem for word in text.lower().split() for stem in tokens(word)} - _query_stopwords() - {"ha", "has", "is"}
    if kind is not None:
        words.add(kind.zh.strip("的是于在"))
    return {w for w in words if w}


def graph_memories(graph: Graph, user: str, query: str, speakers: set[str], at: str | None = None) -> dict[str, float]:
    """Memory id → graph signal (before weighting) for ``query``: 1.0 for the memories that
    mention an entity the query names, GRAPH_NEIGHBOUR for those of its GRAPH_NEIGHBOURS
    most-stated neighbours. "X's sister", "where does X live", "my sister" lead along the
    typed relations whose label the query words: the entity at the other end counts as
    named, the relation's memory and its sources get GRAPH_HELD, and the sources of the relations
    of that label that no longer hold (closed by a newer one, Mem0g's invalid edges) get
    GRAPH_SUPERSEDED: "I live in Porto" is no answer to "where do I live" once Ana moved. A
    ``speaker`` named (the speaker signal covers their turns) or the user themself (I, my,
    我) count only through such relations. ``at`` (``YYYY-MM-DD``): the relations that held
    that day instead of the current ones."""
    found = graph.find(user, query_entity_keys(query))
    named = set(found.values())
    self_entity = graph.self_entity(user) if _SELF.search(query) else None
    people = set(graph.find(user, [normalise_name(s) for s in speakers]).values())
    through = named & people
    if self_entity is not None:
        through.add(self_entity.id)
    direct = named - through
    stems = set(query_stems(query)) | set(_CJK_RUN.findall(query))
    held: set[int] = set()
    superseded: set[int] = set()
    for _, label, other, relation_id, valid_from, valid_to in graph.typed_edges(named | through):
        words = _label_words(label)
        if not (words & stems or any(w in query for w in words if _CJK_RUN.fullmatch(w))):
            continue
        holds = (
            (not valid_to) if at is None else ((not valid_from or valid_from <= at) and (not valid_to or at < valid_to))
        )
        if holds:
            direct.add(other)
            held.add(relation_id)
        else:
            superseded.add(relation_id)
    out: dict[str, float] = {}
    if not direct:
        return out
    near = [(e, edge) for e, edge in graph.neighbours(direct).items() if e not in through]
    neighbours = sorted(near, key=lambda item: -item[1][1])[:GRAPH_NEIGHBOURS]
    mentioning = graph.mentioning([*direct, *(e for e, _ in neighbours)])
    for entity, _ in neighbours:
        for memory_id in mentioning.get(entity, []):
            out[memory_id] = GRAPH_NEIGHBOUR
    for entity in direct:
        for memory_id in mentioning.get(entity, []):
            out[memory_id] = 1.0
    sources = graph.sources(held | superseded)
    for relation_id in superseded:
        for memory_id in sources.get(relation_id, []):
            out[memory_id] = GRAPH_SUPERSEDED
    for relation_id in held:
        out[relation_memory_id(user, relation_id)] = GRAPH_HELD
        for memory_id in sources.get(relation_id, []):
            out[memory_id] = GRAPH_HELD
    return out


def normalise_name(name: str) -> str:
    """``memcli.text.entities.normalise``, imported when first needed."""

    return normalise(name)


def _z(values: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """``values`` z-scored over the entries of ``mask``."""
    chosen = values[mask]
    if chosen.size == 0:
        return np.zeros_like(values)
    return (values - chosen.mean()) / (chosen.std() + 1e-9)


def _top(values: np.ndarray, size: int) -> np.ndarray:
    """The positions of the ``size`` highest ``values`` (fewer than ``len(values)``), ascending:
    those above a threshold read from every 16th value first (one comparison a value, then
    a partition of about twice ``size`` values), the whole array partitioned only when
    the threshold lets too few through."""
    n = len(values)
    sample = values[::16]
    kept = min(len(sample) - 1, max(0, len(sample) - 2 * (size // 16) - 1))
    above = np.flatnonzero(values >= np.partition(sample, kept)[kept])
    if size <= len(above) < n:
        top = above[np.argpartition(values[above], len(above) - size)[len(above) - size :]]
    else:
        top = np.argpartition(values, n - size)[n - size :]
    top.sort()
    return top


def _sparse_moments(values: np.ndarray, count: int) -> tuple[float, float]:
    """Mean and (population) standard deviation of ``count`` values of which ``values``
    are the non-zero ones (the others are zeros)."""
    if count == 0:
        return 0.0, 0.0
    mean = float(values.sum()) / count
    spread = float(((values - mean) ** 2).sum()) + (count - len(values)) * mean * mean
    return mean, math.sqrt(spread / count)


def _prior(index: UserIndex, w: Signals) -> np.ndarray:
    """The *prior* of every slot of ``index`` with the weights ``w``, the base-model part
    aside (``Recaller._base_model``): longer turns (z-scored over the slots alive), turns
    that are not questions, first turns of a session and turns that share an image."""
    return (
        w.length * _z(index.log_length, index.alive)
        + w.question * index.question
        + w.first * index.first
        + w.caption * index.caption
    )


MOMENT_SAMPLE = 4096
"""Slots whose exact similarity gives the mean and standard deviation of a vector signal
over a big index (``_moments``); every slot below twice as many."""


def moment_slots(mask: np.ndarray) -> np.ndarray:
    """The slots ``_moments`` reads of an index: every slot of ``mask`` when there are fewer
    than 2 x ``MOMENT_SAMPLE``, else every n-th (a fixed sample: the same query gives the
    same figures)."""
    slots = np.flatnonzero(mask)
    if len(slots) >= 2 * MOMENT_SAMPLE:
        slots = slots[:: len(slots) // MOMENT_SAMPLE]
    return slots


def _moments(vectors: np.ndarray, slots: np.ndarray, vector: np.ndarray) -> tuple[float, float]:
    """Mean and (population) standard deviation of the cosine similarity of ``vectors``
    (unit rows) to ``vector`` over ``slots`` (``moment_slots`` of the slots recalled)."""
    values = np.asarray(vectors[slots], dtype=np.float32) @ vector
    return float(values.mean()), float(values.std())


# Ranking ----------------------------------------------------------------------------------

USE_SATURATION = 20
"""Recall count at which the log-scaled use component reaches 1."""
FEEDBACK_SCALE = 3.0
"""Feedback (a sum of ±1 votes) at which the feedback component reaches ±1."""


@dataclass(frozen=True)
class Ranking:
    """Weights of the recall score (bot memory design notes, DESIGN.md §5), and the
    retention parameters it reads. Relevance dominates by default: it decides what is
    recalled, the rest breaks near-ties, so ranking costs retrieval quality little on
    memories that are all equally fresh, important and unused."""

    similarity: float = 0.6
    importance: float = 0.1
    retention: float = 0.1
    use: float = 0.05
    recent_penalty: float = 0.1
    feedback: float = 0.05
    recent_window: float = 3600.0
    decay: float = 1.0
    unit: float = UNIT_SECONDS["day"]

    @classmethod
    def from_settings(cls, settings: Settings, user: str) -> Ranking:
        """The ranking the settings describe for ``user`` (per-user decay)."""
        return cls(
            similarity=settings.weight_similarity,
            importance=settings.weight_importance,
            retention=settings.weight_retention,
            use=settings.weight_use,
            recent_penalty=settings.weight_recent_penalty,
            feedback=settings.weight_feedback,
            recent_window=settings.recent_window,
            decay=settings.decay_for(user),
            unit=UNIT_SECONDS[settings.time_unit],
        )

    def components(self, memory: Memory, relevance: float, now: float) -> dict[str, float]:
        """Each ranking signal of ``memory`` in its own scale: relevance, importance,
        retention and use in 0..1, recent_penalty in 0..1, feedback in −1..1."""
        recent = 0.0
        if memory.last_recalled_at:
            recent = math.exp(-max(0.0, now - memory.last_recalled_at) / self.recent_window)
        return {
            "relevance": relevance,
            "importance": memory.importance,
            "retention": retention(memory, now, self.decay, self.unit),
            "use": min(1.0, math.log1p(memory.recall_count) / math.log1p(USE_SATURATION)),
            "recent_penalty": recent,
            "feedback": max(-1.0, min(1.0, memory.feedback / FEEDBACK_SCALE)),
        }

    def score(self, parts: dict[str, float]) -> float:
        """The weighted sum of ``components``; the recent-use penalty subtracts."""
        return (
            self.similarity * parts["relevance"]
            + self.importance * parts["importance"]
            + self.retention * parts["retention"]
            + self.use * parts["use"]
            - self.recent_penalty * parts["recent_penalty"]
            + self.feedback * parts["feedback"]
        )


@dataclass
class Recalled:
    """One recalled memory and why.

    score: the ranking score (Ranking.score), or the relevance when ranking is off.
    relevance: the sum of the weighted signals (unbounded: z-scores).
    similarity: cosine similarity of the memory's own vector to the query (−1..1).
    signals: each weighted signal (lexical, window, turn, speaker, person, date, when, prior).
    components: the ranking signals (Ranking.components), empty when ranking is off.
    """

    memory: Memory
    score: float
    relevance: float
    similarity: float
    signals: dict[str, float] = field(default_factory=dict)
    components: dict[str, float] = field(default_factory=dict)


_BLAS_LIMITED = False


def one_blas_thread() -> None:
    """Run the BLAS of numpy and scipy (OpenBLAS) on one thread in this process, once.

    A query's matrix-vector products over every memory's vectors are bound by memory
    bandwidth, not arithmetic, and the query encoder's threads (torch) sit on the same
    cores: with two OpenBLAS threads besides them, one recall in eight took 120-140 ms
    instead of 50 at 100,000 memories on 2 cores; with one, none took more than 55.
    """
    global _BLAS_LIMITED
    if not _BLAS_LIMITED:
        # heavy: needed only to cap BLAS threads
        from threadpoolctl import threadpool_limits

        threadpool_limits(limits=1, user_api="blas")
        _BLAS_LIMITED = True


SNAPSHOT_BEHIND = 2000
"""Rows written since a user's snapshot of the recall index (and at least a tenth of the
user's memories) after which a new snapshot is taken, so that a restart reads few rows
from the sidecar's change log (``memcli.store.snapshot``)."""


class Recaller:
    """Recalls memories from a store; keeps each user's index in memory, brought up to date
    with what changed in the store's recall index before each query (``index``).

    ``signals``: the weights (eval turns levers off with ``Signals.without``). Limits
    OpenBLAS to one thread (``one_blas_thread``).
    """

    def __init__(self, store: MemoryStore, embedder: Embedder, signals: Signals | None = None) -> None:
        one_blas_thread()
        self.store = store
        self.embedder = embedder
        self.signals = signals or Signals()
        self._loaded: dict[str, UserIndex] = {}
        self._slot_cache: dict[str, tuple[tuple[int, int, int], dict[str, int]]] = {}
        self._prior_cache: dict[str, tuple[tuple[int, int, int, int], np.ndarray]] = {}
        self._mask_cache: dict[str, tuple[tuple[object, ...], np.ndarray, np.ndarray]] = {}
        self._relation_cache: dict[str, tuple[tuple[int, int, int, int], np.ndarray]] = {}
        self._sample_cache: dict[str, tuple[np.ndarray, np.ndarray]] = {}

    @property
    def identity(self) -> str:
        """The identity of this recaller's embedder (``memcli.models.embedding.embedder_identity``)."""
        return embedder_identity(self.embedder)

    def loaded_users(self) -> list[str]:
        """The users whose recall index this recaller holds in memory."""
        return sorted(self._loaded)

    def encode(self, query: str) -> np.ndarray:
        """The query's unit vector (float32, the embedder's dimension). Callers encode it
        before they take the store, so that in the service other requests use the store
        while this one waits for the embedder (busy with a batch of an import)."""
        return np.asarray(self.embedder.embed_one(query), dtype=np.float32)

    def prepare(self, user: str) -> None:
        """Get ``user``'s recall index ready for a query without embedding under the store:
        check it against the store when it is not loaded or must be loaded again (a
        rebuild reads Chroma under the store), then embed the windows writes left to fill
        with the store released, and store them. Callers that share the store with other
        threads (the service) call it before they take the store for a query; what is
        still missing then, ``index`` fills under the store. A store opened per
        transaction (in-process mode: one thread, no one to let in) skips this: ``index``
        does it all under one opening."""
        if not self.store.resident:
            return
        with self.store.transaction():
            self.store.require_embedder(self.identity)
            sidecar = self.store.sidecar.index
            if self._stale(user):
                self.store.check_recall_index(user)
            missing = sidecar.missing_windows(user)
        if missing:
            vectors = self.embedder.embed([text for _, text in missing])
            with self.store.transaction(), self.store.optional_write(WINDOWS_SKIPPED):
                self.store.sidecar.index.fill_windows(missing, vectors)

    def _stale(self, user: str) -> bool:
        """Whether ``user``'s index must be loaded whole (under the store): not loaded yet,
        left dirty by an interrupted write, or written whole since (a new epoch)."""
        cached = self._loaded.get(user)
        sidecar = self.store.sidecar.index
        return cached is None or sidecar.is_dirty(user) or sidecar.epoch(user) != cached.epoch

    def index(self, user: str) -> UserIndex:
        """``user``'s recall index, up to date with the store (raises EmbedderChangedError
        when the store's vectors come from another embedder than this recaller's).

        The first call for a user loads it whole from the store (``MemoryStore.recall_index``:
        checked against the store's ids, rebuilt when stale). Later calls read only what
        changed since (``RecallIndex.changes``), after computing the windows writes left to
        fill (``prepare`` computes them first, with the store released); a user left dirty
        by an interrupted write, or whose rows were written whole since (a new epoch), is
        loaded whole again."""
        with self.store.transaction():
            self.store.require_embedder(self.identity)
            if self._stale(user):
                cached = self._loaded[user] = self.store.recall_index(user, self.embedder.embed)
                return cached
            cached = self._loaded[user]
            sidecar = self.store.sidecar.index
            missing = sidecar.missing_windows(user)
            if missing:
                vectors = self.embedder.embed([text for _, text in missing])
                with self.store.optional_write(WINDOWS_SKIPPED):
                    sidecar.fill_windows(missing, vectors)
            if sidecar.seq() != cached.seq:
                cached.apply(sidecar.changes(user, cached.seq))
                if cached.behind > max(SNAPSHOT_BEHIND, cached.count // 10):
                    self.store.save_recall_snapshot(user, cached)
            return cached

    def scores(
        self, query: str, vector: np.ndarray, user: str, index: UserIndex, mask: np.ndarray, now: float | None = None
    ) -> dict[str, np.ndarray]:
        """Each weighted signal of every memory of ``index`` for ``query`` (embedded as
        ``vector``); z-scores are taken over the memories of ``mask`` (those the query may
        return). ``now`` (unix seconds; the clock when None) resolves relative dates."""
        now = time.time() if now is None else now
        return self._scores(query, vector, user, index, mask, now, self.parse(query, now))[0]

    def parse(self, query: str, now: float) -> tuple[list[str], list[QueryDate]]:
        """What recall reads from the words of ``query`` at ``now`` (unix seconds): its
        lexical terms (``query_stems``) and its dates (``query_dates``). Worked out before
        the store is taken: the first Chinese query loads jieba and JioNLP (about 2 s)."""
        w = self.signals
        return (query_stems(query) if w.lexical else []), (query_dates(query, now) if w.date else [])

    def _scores(
        self,
        query: str,
        vector: np.ndarray,
        user: str,
        index: UserIndex,
        mask: np.ndarray,
        now: float,
        parsed: tuple[list[str], list[QueryDate]],
        at: str | None = None,
        graph: np.ndarray | None = None,
    ) -> tuple[dict[str, np.ndarray], np.ndarray]:
        """``scores``, and the cosine similarity of each memory's own vector to ``vector``;
        ``parsed``: the query's terms and dates (``parse``); ``at``: the day recall is as of
        (the graph's relations that held then); ``graph``: the graph signal already worked
        out (``graph_signal``, unweighted). Every signal of every slot: an index below
        ``SCAN_AT`` (``_scanned`` scores a bigger one)."""
        w = self.signals
        out: dict[str, np.ndarray] = {}
        stems, dates = parsed
        lexical = (
            index.lexical.scores(stems, (OWN_WEIGHT, w.context, DAY_WEIGHT), len(index))
            if stems
            else np.zeros(len(index))
        )
        out["lexical"] = w.lexical * _z(lexical, mask)
        similarity, window = index.turn @ vector, index.window @ vector
        out["window"] = w.window * _z(window, mask)
        out["turn"] = w.turn * _z(similarity, mask)
        speakers = index.speaker_names()  # notes, facts and summaries have no speaker
        named = named_speakers(query, speakers)
        # A memory with no speaker (a note, a fact, a summary) is not pushed below the named speakers' turns.
        if 0 < len(named) < len(speakers):
            out["speaker"] = w.speaker * index.speaker_table(lambda s: s in named or not s)
        else:
            out["speaker"] = np.zeros(len(index))
        person = person_speakers(query, speakers, user) if w.person and not named else set()
        if 0 < len(person) < len(speakers):
            out["person"] = w.person * index.speaker_table(lambda s: s in person or not s)
        else:
            out["person"] = np.zeros(len(index))
        out["date"] = w.date * date_hits(dates, index.created_at, index.months, now) if dates else np.zeros(len(index))
        out["when"] = w.when * index.says_when if w.when and asks_when(query) else np.zeros(len(index))
        if graph is None:
            graph = self.graph_signal(query, user, index, speakers, at) if w.graph else np.zeros(len(index))
        out["graph"] = w.graph * graph
        out["prior"] = self._prior(user, index) + self._base_model(user, index, speakers, named | person)
        return out, similarity

    def _base_model(
        self, user: str, index: UserIndex, speakers: set[str], pointed: set[str], slots: np.ndarray | None = None
    ) -> np.ndarray | float:
        """The base-model part of the prior (``Signals.base_model`` on the replies a base
        model wrote, unless the query names the assistant or asks what "you" said:
        ``pointed``), of every slot or of ``slots`` alone; 0.0 when it does not apply."""
        w = self.signals
        if not (w.base_model and ASSISTANT in speakers and ASSISTANT not in pointed):
            return 0.0
        with self.store.transaction():
            tagged = self.store.sidecar.index.rowids_with_tags(user, [BASE_MODEL])
        return w.base_model * np.isin(index.rowids if slots is None else index.rowids[slots], tagged)

    def _recallable(
        self, user: str, index: UserIndex, kind: str | None, relations: bool
    ) -> tuple[np.ndarray, np.ndarray]:
        """The slots of ``user``'s ``index`` that hold a superseded memory, and those recall
        may return of ``kind`` (the ``RECALLED_KINDS`` when None; with ``relations``, ended
        relations too, for a recall as of a day) before the query's own conditions: alive,
        not forgotten, not ended unless superseded. Both kept until the index changes (they
        do not depend on the query: a big index pays their passes once); the mask is a
        copy the caller may narrow."""
        key = (id(index), index.seq, len(index), index.count, kind, relations)
        cached = self._mask_cache.get(user)
        if cached is None or cached[0] != key:
            superseded = index.ended & index.kind_mask(list(SUPERSEDED_KINDS))
            mask = (
                index.alive
                & ~index.archived
                & (~index.ended | superseded | (index.kind_mask([Kind.RELATION.value]) if relations else False))
            )
            mask &= index.kind_mask([kind] if kind is not None else RECALLED_KINDS)
            cached = self._mask_cache[user] = (key, superseded, mask)
        return cached[1], cached[2].copy()

    def _moment_sample(self, user: str, mask: np.ndarray) -> np.ndarray:
        """``moment_slots(mask)``, kept for the next query of ``user`` with the same mask
        (most of them: the mask changes with the index, or with a query's own conditions)."""
        cached = self._sample_cache.get(user)
        if cached is None or not np.array_equal(cached[0], mask):
            cached = self._sample_cache[user] = (mask.copy(), moment_slots(mask))
        return cached[1]

    def _relation_slots(self, user: str, index: UserIndex) -> np.ndarray:
        """The slots of ``user``'s ``index`` that hold a relation memory (ascending), kept
        until the index changes: a query tests the graph signal of these few slots, not a
        mask of every slot."""
        key = (id(index), index.seq, len(index), index.count)
        cached = self._relation_cache.get(user)
        if cached is None or cached[0] != key:
            cached = self._relation_cache[user] = (key, np.flatnonzero(index.kind_mask([Kind.RELATION.value])))
        return cached[1]

    def _prior(self, user: str, index: UserIndex) -> np.ndarray:
        """``_prior`` of every slot of ``user``'s ``index``, kept until the index changes (it
        does not depend on the query: a big index pays its passes once, not per query)."""
        key = (id(index), index.seq, len(index), index.count)
        cached = self._prior_cache.get(user)
        if cached is None or cached[0] != key:
            cached = self._prior_cache[user] = (key, _prior(index, self.signals))
        return cached[1]

    def _scanned(
        self,
        query: str,
        vector: np.ndarray,
        user: str,
        index: UserIndex,
        mask: np.ndarray,
        now: float,
        parsed: tuple[list[str], list[QueryDate]],
        at: str | None,
        graph: np.ndarray | None,
        superseded: np.ndarray,
    ) -> tuple[np.ndarray, dict[str, np.ndarray], np.ndarray]:
        """The signals of a big index's best slots (``SCAN_AT`` rows or more): the slots
        recall may return (ascending), each signal of each of them (arrays in their order),
        and their exact cosine similarity to ``vector``.

        Three stages, each over fewer slots. Every slot of ``mask``: a *selection score*,
        the signals that cost a pass over every slot anyway (BM25 over the query's
        postings, z-scored from its non-zero scores; the two vector signals estimated from
        the signs of the vectors, ``UserIndex.sign_differences``, z-scored from the count
        of each Hamming distance; the priors, worked out once an index, ``_prior``; the
        date and graph signals when the query has them). The best ``POOL`` x ``RESCORED``
        slots by it: the other signals (speaker, person, when, superseded, the base-model
        prior), so that every signal is summed as ``_scores`` sums it. The ``RESCORED`` best of those
        by that sum: the two vector signals made exact (their vectors read from the
        snapshot: ``memcli.store.snapshot``), z-scored with the mean and standard
        deviation of the exact similarity over ``mask`` (``_moments``): the scale of the
        estimates, so that the slots keep comparable totals."""
        w = self.signals
        stems, dates = parsed
        n, count = len(index), int(np.count_nonzero(mask))
        # BM25 is zero on every slot without a query term: its moments from the others.
        lexical = index.lexical.scores(stems, (OWN_WEIGHT, w.context, DAY_WEIGHT), n) if stems else np.zeros(n)
        present = np.flatnonzero(lexical != 0)  # a mask's nonzero: several times faster than a float array's
        present = present[mask[present]]
        mean, std = _sparse_moments(lexical[present], count)
        lexical_scale, lexical_shift = w.lexical / (std + 1e-9), -w.lexical * mean / (std + 1e-9)
        # The vector estimates take dimension + 1 values: z-scored as a table, read by distance.
        cosines = user_index.sign_cosines(index.dimension).astype(np.float64)
        differ: dict[str, np.ndarray] = {}
        tables: dict[str, np.ndarray] = {}
        # The slots outside mask are usually few (deleted, forgotten, ended): counted apart
        # and taken off the count of every slot, not a copy made of the rest.
        outside = np.flatnonzero(~mask) if count > n // 2 else None
        for name, d, weight in zip(("turn", "window"), index.sign_differences(vector), (w.turn, w.window)):
            if outside is None:
                seen = np.bincount(d[mask], minlength=len(cosines)) / count
            else:
                seen = (
                    np.bincount(d, minlength=len(cosines)) - np.bincount(d[outside], minlength=len(cosines))
                ) / count
            estimate_mean = float(seen @ cosines)
            estimate_std = math.sqrt(max(0.0, float(seen @ (cosines - estimate_mean) ** 2)))
            differ[name], tables[name] = d, weight * (cosines - estimate_mean) / (estimate_std + 1e-9)
        # fancy indexing, not np.take: take converts a uint16 index to intp through a
        # checked cast, about three times the time at a million slots
        selection = (tables["turn"] + lexical_shift)[differ["turn"]]
        selection += tables["window"][differ["window"]]
        # scaled in place and added whole: a slot without a query term adds zero, and the
        # others add what a scatter to them added, at a third of its cost
        lexical *= lexical_scale
        selection += lexical
        prior = self._prior(user, index)
        selection += prior
        date = w.date * date_hits(dates, index.created_at, index.months, now) if dates else None
        if date is not None:
            selection += date
        speakers = index.speaker_names()
        if graph is None and w.graph:
            graph = self.graph_signal(query, user, index, speakers, at)
        if graph is not None and w.graph and graph.any():
            selection += w.graph * graph
        selection[~mask] = -np.inf
        pool = (
            _top(selection, POOL * user_index.RESCORED) if count > POOL * user_index.RESCORED else np.flatnonzero(mask)
        )
        zeros = np.zeros(len(pool))
        out: dict[str, np.ndarray] = {
            "lexical": lexical[pool] + lexical_shift,
            "window": np.take(tables["window"], differ["window"][pool]),
            "turn": np.take(tables["turn"], differ["turn"][pool]),
        }
        named = named_speakers(query, speakers)
        out["speaker"] = (
            w.speaker * index.speaker_table(lambda s: s in named or not s, pool)
            if 0 < len(named) < len(speakers)
            else zeros
        )
        person = person_speakers(query, speakers, user) if w.person and not named else set()
        pointed = named | person
        out["person"] = (
            w.person * index.speaker_table(lambda s: s in person or not s, pool)
            if 0 < len(person) < len(speakers)
            else zeros
        )
        out["date"] = date[pool] if date is not None else zeros
        out["when"] = w.when * index.says_when[pool] if w.when and asks_when(query) else zeros
        out["graph"] = w.graph * graph[pool] if graph is not None else zeros
        out["prior"] = prior[pool] + self._base_model(user, index, speakers, pointed, pool)
        out["superseded"] = self._superseded(query, index, pool[superseded[pool]], at, len(pool), pool)
        total = sum(out.values())
        best = np.arange(len(pool))
        if len(best) > user_index.RESCORED:
            best = np.sort(np.argpartition(total, len(total) - user_index.RESCORED)[-user_index.RESCORED :])
        out = {name: values[best] for name, values in out.items()}
        slots = pool[best]  # ascending: the rows in file order
        similarity = np.zeros(len(slots))
        sample = self._moment_sample(user, mask)
        for name, vectors, weight in (("turn", index.turn, w.turn), ("window", index.window, w.window)):
            exact = np.asarray(vectors[slots], dtype=np.float32) @ vector
            exact_mean, exact_std = _moments(vectors, sample, vector)
            out[name] = weight * (exact - exact_mean) / (exact_std + 1e-9)
            if name == "turn":
                similarity = exact.astype(np.float64)
        return slots, out, similarity

    def graph_signal(
        self, query: str, user: str, index: UserIndex, speakers: set[str], at: str | None = None
    ) -> np.ndarray:
        """The graph signal of each slot of ``index`` for ``query`` (``graph_memories``; as
        of day ``at`` when given), read from the store's graph (under the store)."""
        with self.store.transaction():
            hits = graph_memories(self.store.sidecar.graph, user, query, speakers, at)
        signal = np.zeros(len(index))
        if hits:
            slots = self._slots(user, index)
            for memory_id, value in hits.items():
                slot = slots.get(memory_id)
                if slot is not None:
                    signal[slot] = value
        return signal

    def _slots(self, user: str, index: UserIndex) -> dict[str, int]:
        """Memory id → slot of ``index``, kept until the index changes."""
        key = (id(index), index.seq, len(index))
        cached = self._slot_cache.get(user)
        if cached is None or cached[0] != key:
            cached = self._slot_cache[user] = (key, {memory_id: slot for slot, memory_id in enumerate(index.ids)})
        return cached[1]

    def _as_of(self, user: str, index: UserIndex, at: str, kind: str | None) -> np.ndarray:
        """The slots recall may return as of day ``at``: memories learned by its end, and
        for the relation memories, those of relations that held that day."""
        end = day_seconds(at) + DAY_SECONDS
        relations = index.kind_mask([Kind.RELATION.value])
        valid = np.isin(np.array(index.ids, dtype=object), self.store.sidecar.graph.relation_memories_at(user, at))
        return np.where(relations, valid, index.created_at < end)

    def recall(
        self,
        query: str,
        user: str,
        k: int = 10,
        kind: str | None = None,
        since: float | None = None,
        ranking: Ranking | None = None,
        now: float | None = None,
        vector: np.ndarray | None = None,
        trim: bool = True,
        tags: Sequence[str] = (),
        parsed: tuple[list[str], list[QueryDate]] | None = None,
        at: str | None = None,
    ) -> list[Recalled]:
        """The ``k`` memories of ``user`` most relevant to ``query``, best first.

        ``kind`` keeps one kind of memory (without it, the ``RECALLED_KINDS``); ``since``
        (unix seconds) keeps memories learned at or after it. Archived (forgotten) memories
        and facts that have ended are never recalled. With a ``ranking``, the best
        CANDIDATES are re-scored by it at ``now`` (unix seconds), with their relevance
        scaled to 0..1 among them. ``now`` (unix seconds; the clock when None) also resolves
        the query's relative dates ("yesterday", "上周二"). Memories of equal relevance come
        oldest first (then by id), as in time order. ``vector``: the query already ``encode``d.
        ``trim``: leave out the summary lines whose turn is recalled too
        (``without_repeated_lines``); a caller that picks among the hits trims after it.
        ``tags``: only memories that carry every one of them (a mask over the index's
        slots, from the rows the recall index finds with them: ``RecallIndex.rowids_with_tags``).
        ``parsed``: the query already ``parse``d at ``now``, by a caller that holds the store
        around this call (reading a first query loads dateparser and jieba: seconds).
        ``at`` (``YYYY-MM-DD``): recall as of that day: only memories learned by its end, and
        the relation memories of the relations that held that day (ended ones included,
        current ones that began later left out).
        """
        if k <= 0 or not query.strip():
            return []
        if vector is None:
            vector = self.encode(query)
        now = time.time() if now is None else now
        parsed = self.parse(query, now) if parsed is None else parsed
        with self.store.transaction():
            index = self.index(user)
            superseded, mask = self._recallable(user, index, kind, bool(at))
            if since is not None:
                mask &= index.created_at >= since
            if tags:
                mask &= np.isin(index.rowids, self.store.sidecar.index.rowids_with_tags(user, tags))
            if at is not None:
                mask &= self._as_of(user, index, at, kind)
            graph = None
            if kind is None:
                # Mem0g's dual retrieval: a relation's memory comes in when the query follows that relation.
                graph = (
                    self.graph_signal(query, user, index, index.speaker_names(), at)
                    if self.signals.graph
                    else np.zeros(len(index))
                )
                relations = self._relation_slots(user, index)
                mask[relations[graph[relations] < GRAPH_HELD]] = False
            if not mask.any():
                return []
            wanted = max(k, CANDIDATES) if ranking else k
            if len(index) >= user_index.SCAN_AT:
                slots, signals, similarity = self._scanned(
                    query, vector, user, index, mask, now, parsed, at, graph, superseded
                )
                total = sum(signals.values())
                order = _best_of(slots, total, index, wanted)
            else:
                signals, similarity = self._scores(query, vector, user, index, mask, now, parsed, at, graph)
                signals["superseded"] = self._superseded(query, index, np.flatnonzero(mask & superseded), at)
                total = sum(signals.values())
                order = _best(total, mask, index, wanted)
            memories = {m.id: m for m in self.store.get_many([index.ids[slot] for slot, _ in order])}
            # Slots are read under the store: another request's write may compact the index.
            hits = [
                Recalled(
                    memories[index.ids[slot]],
                    float(total[i]),
                    float(total[i]),
                    float(similarity[i]),
                    {n: float(v[i]) for n, v in signals.items()},
                )
                for slot, i in order
                if index.ids[slot] in memories
            ]
        if ranking is not None and hits:
            high, low = hits[0].relevance, hits[-1].relevance
            for hit in hits:
                relevance = 1.0 if high == low else (hit.relevance - low) / (high - low)
                hit.components = ranking.components(hit.memory, relevance, now)
                hit.score = ranking.score(hit.components)
            hits.sort(key=lambda r: (-r.score, -r.relevance, r.memory.created_at))
        hits = after_replacements(hits)
        hits = without_repeated_lines(hits, k) if trim else hits[:k]
        if not hits:
            return hits
        speakers = {h.memory.speaker for h in hits if h.memory.speaker}
        pointed = named_speakers(query, speakers) | person_speakers(query, speakers, user)
        return after_statements(hits, query, pointed)

    def _superseded(
        self,
        query: str,
        index: UserIndex,
        slots: np.ndarray,
        at: str | None,
        length: int | None = None,
        where: np.ndarray | None = None,
    ) -> np.ndarray:
        """The *superseded* signal: ``-SUPERSEDED_PENALTY`` for each of ``slots`` (an array
        of the superseded notes and turns recall may return) that was superseded by the day
        recall is as of (``at``; now when None), none for a question about the past
        (``asks_past``). One value a slot of the index, or ``length`` values, one for each
        slot of ``where`` (ascending; ``slots`` among them)."""
        signal = np.zeros(len(index) if length is None else length)
        if not len(slots) or (at is None and asks_past(query)):
            return signal
        ids = [index.ids[i] for i in slots]
        end = day_seconds(at) + DAY_SECONDS if at else math.inf
        ended = {m.id for m in self.store.get_many(ids) if m.valid_to and m.valid_to < end}
        hit = np.array([memory_id in ended for memory_id in ids], dtype=bool)
        signal[slots[hit] if where is None else np.searchsorted(where, slots[hit])] = -SUPERSEDED_PENALTY
        return signal


def after_replacements(hits: list[Recalled]) -> list[Recalled]:
    """``hits`` with each superseded memory (its *superseded* signal set) moved just after
    the memory that replaced it (``Memory.superseded_by``) when that one is among them
    and below it: the ranking's other components (importance, retention) do not lift an
    old value above the current one."""
    out = list(hits)
    for hit in hits:
        if not hit.signals.get("superseded") or not hit.memory.superseded_by:
            continue
        at = next((i for i, h in enumerate(out) if h.memory.id == hit.memory.superseded_by), None)
        mine = out.index(hit)
        if at is not None and at > mine:
            out.insert(at, out.pop(mine))
    return out


_ASKS_ASKED = re.compile(
    r"\b(?:what|which|who|when|where|why|how)\b.{0,40}\b(?:did|have|had)\s+i\s+(?:ever\s+)?(?:ask|request|wonder|query|question)"
    r"|\bmy\s+(?:own\s+)?(?:questions?|requests?)\b|\bi\s+(?:asked|requested|wondered)\b"
    r"|我(?:都|曾|曾经|之前|以前)?(?:问|请教|咨询|打听)(?:过|了)",
    re.IGNORECASE,
)
"""A question about what its asker asked ("what did I ask you about Lisbon?", "my questions
about the lease", "我问过你什么"): the asking turns are what it is about."""


def after_statements(hits: list[Recalled], query: str, pointed: set[str]) -> list[Recalled]:
    """``hits`` (recalled, best first) in the order a person reads evidence by: first the
    memories that tell something, then the questions and requests of people (a memory that
    can state something of its speaker, ``memcli.memory.tells``, of which every
    piece asks, ``_only_asks``: "Where do I live?", "tell me a story about…", "我住在哪里？",
    not "I went to the parade! Did you go?"), then the replies a base model wrote (tagged
    ``BASE_MODEL``), each group in its order. The same memories, none dropped: only where
    they stand. The asking ones keep their place for a question about what was asked
    (``_ASKS_ASKED``), the base model's replies for one that points to the assistant
    (``pointed``: the speakers the query names or points to by its grammatical person,
    ``named_speakers``, ``person_speakers``). A question is no evidence of what its asker
    holds, as Mem0's extraction (Chhikara et al. 2025, §2.1) takes facts from what is
    stated."""
    keep_asks = bool(_ASKS_ASKED.search(query))
    keep_replies = ASSISTANT in pointed

    def rank(hit: Recalled) -> int:
        if BASE_MODEL in hit.memory.tags and not keep_replies:
            return 2
        if not keep_asks and tells(hit.memory) and _only_asks(hit.memory.text):
            return 1
        return 0

    return sorted(hits, key=rank)  # stable: each group keeps recall's order


_PIECE = re.compile(r"(?<=[.!?。！？])\s*|[,，;；]\s*")
"""Where a memory's text is cut into the pieces ``_only_asks`` reads: after a sentence's end
mark, at a comma or a semicolon."""
PIECE_WORDS = 3
"""The fewest words (or Chinese characters) of a piece ``_only_asks`` reads: "So", "Hey
Mel", "嗯" neither tell nor ask."""


def _only_asks(text: str) -> bool:
    """Whether every piece of ``text`` that says something asks (``memcli.text.updates.asks``,
    memcli's test of a question or request): "Where do I live?", "嗯，我住在哪里？", "tell me a story about…";
    not "Last night I watched a great movie, "Looking Up" Have you seen it?" nor "我搬到苏州了，
    你去过吗？", which tell before they ask. The pieces: ``_PIECE``; one shorter than
    ``PIECE_WORDS`` is read only when it is the whole text."""
    from memcli.text.updates import asks  # the rules load with the first recall that has hits to read

    pieces = [p.strip() for p in _PIECE.split(text) if p and p.strip()]
    said = [p for p in pieces if len(p.split()) >= PIECE_WORDS or len(p) >= PIECE_WORDS and not p.isascii()]
    return all(asks(p) for p in (said or pieces)) and bool(pieces)


def without_repeated_lines(hits: list[Recalled], k: int) -> list[Recalled]:
    """The first ``k`` of ``hits`` once an extractive daily summary ("Speaker: sentence"
    lines, ``memcli.text.extractive``) has lost the lines whose turn is among the turns recalled
    with it: the same sentence must not fill two of recall's slots. A summary left with no
    line is dropped and the next hit takes its place. The memory returned is a copy with the
    remaining lines; the stored one is unchanged."""
    turns = [h.memory for h in hits[:k] if h.memory.kind == Kind.TURN.value]
    if not turns:
        return hits[:k]
    out: list[Recalled] = []
    for hit in hits:
        if len(out) == k:
            break
        memory = hit.memory
        if memory.kind == Kind.EVENT_DAILY.value:
            lines = memory.text.split("\n")
            kept = [line for line in lines if not _repeats(line, turns)]
            if not kept:
                continue
            if len(kept) < len(lines):
                hit = replace(hit, memory=replace(memory, text="\n".join(kept)))
        out.append(hit)
    return out


def _repeats(line: str, turns: Sequence[Memory]) -> bool:
    """Whether summary ``line`` ("Speaker: sentence") is a sentence of one of ``turns``."""
    speaker, sentence = parse_line(line)
    # a summary names the user ("Sam: …", "the user: …") where their turn has their id or "user"
    return bool(speaker and sentence) and any(
        sentence in t.text and (t.speaker == speaker or (speaker != ASSISTANT and is_user_speaker(t.speaker, t.user)))
        for t in turns
    )


def _best(total: np.ndarray, mask: np.ndarray, index: UserIndex, n: int) -> list[tuple[int, int]]:
    """The slots of the ``n`` highest ``total`` (one value a slot) among ``mask``, best
    first, each as (slot, slot), ties oldest first then by memory id: the order a stable sort
    gives in time order, wherever the slots sit. Partitions first, so only the best few
    are sorted."""
    return [(slot, slot) for slot, _ in _best_of(np.flatnonzero(mask), total[mask], index, n)]


def _best_of(slots: np.ndarray, total: np.ndarray, index: UserIndex, n: int) -> list[tuple[int, int]]:
    """The ``n`` of ``slots`` with the highest ``total`` (one value each, in their order),
    best first, as (slot, position in ``slots``), ties oldest first then by memory id."""
    chosen = np.arange(len(slots))
    if len(chosen) > n:
        threshold = np.partition(total, len(total) - n)[len(total) - n]
        chosen = chosen[total >= threshold]  # ties at the threshold all stay, for the sort to pick
    created_at = index.created_at
    best = sorted(chosen.tolist(), key=lambda i: (-total[i], created_at[slots[i]], index.ids[slots[i]]))[:n]
    return [(int(slots[i]), i) for i in best]


def roulette(hits: list[Recalled], k: int, rng: random.Random) -> list[Recalled]:
    """Pick ``k`` of ``hits`` without replacement, each draw with probability proportional
    to its score (roulette-wheel selection, bot memory design notes), so that replies do not
    always surface the same memories. Returns them best score first."""
    pool = list(hits)
    chosen: list[Recalled] = []
    while pool and len(chosen) < k:
        weights = [max(hit.score, 1e-6) for hit in pool]
        chosen.append(pool.pop(rng.choices(range(len(pool)), weights=weights)[0]))
    return sorted(chosen, key=lambda r: -r.score)
