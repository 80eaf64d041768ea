"""Extractive consolidation: summaries chosen from what was said, grounded by construction.

No generative model writes here: every sentence kept is a sentence someone said, with its
speaker named. This is what a nightly ``memcli consolidate`` can afford on the embedded
270M base model, which cannot write summaries (issue 13).

- Sentences: each turn is split into sentences by pySBD (Sadvilkar & Neumann 2020, rule
  based, English and Chinese); fragments without content ("Wow!", "Haha.") are left out.
- Centrality: LexRank (Erkan & Radev 2004, continuous form): a graph over the sentences
  whose edges weigh the cosine similarity of their embeddings (those below
  ``LEXRANK_THRESHOLD`` dropped), ranked by PageRank (networkx, damping 0.85).
- Selection: maximal marginal relevance (Carbonell & Goldstein 1998): the next sentence is
  the one of highest ``λ · centrality − (1 − λ) · similarity to those chosen``; a sentence
  at least ``REDUNDANT`` similar to one chosen is never chosen.
- Order: the chosen sentences are given back in the order they were said.

``summarize`` makes a day's event summary; ``fold`` a running memory (Wang et al. 2023's
``M_i = f(S_i, M_{i-1})``, its sentences competing with the new session's, at most 20).
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

Embed = Callable[[list[str]], list[list[float]]]
"""Texts -> unit vectors (``Embedder.embed``)."""

LEXRANK_THRESHOLD = 0.1
"""Cosine similarity below which two sentences are not linked (Erkan & Radev use 0.1)."""
DAMPING = 0.85
"""PageRank's damping factor."""
DIVERSITY = 0.3
"""1 − λ of MMR: how much a sentence's similarity to those chosen counts against it."""
REDUNDANT = 0.85
"""Cosine similarity from which a sentence repeats one already chosen."""
MIN_WORDS = 5
"""Sentences shorter than this (in words, or CJK characters / 2) carry no event ("Good to
see you!", "That's really sweet.")."""
RUNNING_LIMIT = 20
"""Sentences a running memory keeps (Wang et al. 2023)."""

_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_WORD = re.compile(r"[^\W_]+")
_SEGMENTERS: dict[str, Any] = {}
_LOCK = threading.Lock()


@dataclass(frozen=True)
class Sentence:
    """One sentence of a turn: its ``text``, who said it (``speaker``, "" for none), the
    turn's id (``source``) and time (``at``, unix seconds), and its place in the turn."""

    text: str
    speaker: str
    source: str
    at: float
    position: int = 0

    def line(self) -> str:
        """``speaker: text``, as a summary shows it."""
        return f"{self.speaker}: {self.text}" if self.speaker else self.text


def split_sentences(text: str) -> list[str]:
    """The sentences of ``text`` (pySBD, Chinese rules when the text is mostly CJK),
    stripped, empty ones dropped."""
    language = "zh" if len(_CJK.findall(text)) * 2 > len(text) else "en"
    segmenter = _SEGMENTERS.get(language)
    if segmenter is None:
        with _LOCK:
            import pysbd

            segmenter = _SEGMENTERS[language] = pysbd.Segmenter(language=language, clean=False)
    return [s.strip() for s in segmenter.segment(text) if s.strip()]


def size(text: str) -> float:
    """How long ``text`` is in words: Latin words, plus CJK characters / 2."""
    cjk = len(_CJK.findall(text))
    return len(_WORD.findall(_CJK.sub(" ", text))) + cjk / 2


def sentences_of(turns: Sequence[Any], min_words: int = MIN_WORDS) -> list[Sentence]:
    """The sentences of ``turns`` (memories: ``text``, ``speaker``, ``id``, ``created_at``),
    in the order said, without questions (they ask, they do not tell what happened) and
    those shorter than ``min_words``."""
    out: list[Sentence] = []
    for turn in turns:
        for i, text in enumerate(split_sentences(turn.text)):
            if size(text) >= min_words and not text.rstrip().endswith(("?", "？")):
                out.append(Sentence(text, turn.speaker, turn.id, turn.created_at, i))
    return out


def centrality(vectors: np.ndarray, threshold: float = LEXRANK_THRESHOLD) -> np.ndarray:
    """LexRank score of each row of ``vectors`` (unit vectors, n x d): PageRank over the
    graph of cosine similarities ≥ ``threshold``; sums to 1. A sentence linked to none
    keeps the teleport share."""
    import networkx as nx

    n = len(vectors)
    if n == 0:
        return np.zeros(0)
    if n == 1:
        return np.ones(1)
    similarity = np.clip(vectors @ vectors.T, 0.0, 1.0)
    np.fill_diagonal(similarity, 0.0)
    similarity[similarity < threshold] = 0.0
    graph = nx.from_numpy_array(similarity)
    ranks = nx.pagerank(graph, alpha=DAMPING, weight="weight")
    return np.array([ranks[i] for i in range(n)])


def select(scores: np.ndarray, vectors: np.ndarray, k: int, diversity: float = DIVERSITY, redundant: float = REDUNDANT) -> list[int]:
    """Up to ``k`` rows by maximal marginal relevance over ``scores`` (scaled to 0..1),
    never one at least ``redundant`` similar to a row already chosen; in the order chosen."""
    n = len(scores)
    if n == 0 or k <= 0:
        return []
    high, low = float(scores.max()), float(scores.min())
    relevance = np.ones(n) if high == low else (scores - low) / (high - low)
    chosen: list[int] = []
    closest = np.zeros(n)  # similarity of each row to the nearest chosen one
    available = np.ones(n, dtype=bool)
    while len(chosen) < k and available.any():
        value = (1 - diversity) * relevance - diversity * closest
        value[~available] = -np.inf
        best = int(np.argmax(value))
        chosen.append(best)
        available[best] = False
        closest = np.maximum(closest, vectors @ vectors[best])
        available &= closest < redundant
    return chosen


def summary_length(n: int) -> int:
    """How many sentences a day of ``n`` sentences keeps: about one in eight, 3 to 10."""
    return max(3, min(10, round(n / 8)))


def salience(pool: Sequence[Sentence], vectors: np.ndarray) -> np.ndarray:
    """What selection ranks by: LexRank centrality times the square root of the sentence's
    length in words, so that a sentence that tells something ("I went to an LGBTQ support
    group yesterday") outranks the short pleasantries every conversation repeats, which
    LexRank alone finds central."""
    return centrality(vectors) * np.sqrt([size(s.text) for s in pool])


def summarize(turns: Sequence[Any], embed: Embed, limit: int | None = None) -> list[Sentence]:
    """A day's (or any span's) extractive event summary: its most salient, non-redundant
    sentences (``salience``, then MMR), ``limit`` of them (``summary_length`` when None),
    in the order they were said. Empty when the turns hold no sentence of substance."""
    pool = sentences_of(turns)
    if not pool:
        return []
    vectors = np.asarray(embed([s.text for s in pool]), dtype=np.float32)
    chosen = select(salience(pool, vectors), vectors, summary_length(len(pool)) if limit is None else limit)
    return [pool[i] for i in sorted(chosen, key=lambda i: (pool[i].at, pool[i].position))]


def fold(previous: Sequence[Sentence], turns: Sequence[Any], embed: Embed, limit: int = RUNNING_LIMIT) -> list[Sentence]:
    """The running memory after a session (Wang et al. 2023, ``M_i = f(S_i, M_{i-1})``):
    the previous memory's sentences and the session's compete on centrality over both
    (``salience``, then MMR), at most ``limit`` kept, in the order they were said. A session
    that repeats the memory adds nothing; one with new events pushes the least central
    sentences out."""
    pool = list(previous) + [s for s in sentences_of(turns) if s not in previous]
    if not pool:
        return []
    vectors = np.asarray(embed([s.text for s in pool]), dtype=np.float32)
    chosen = select(salience(pool, vectors), vectors, limit)
    return [pool[i] for i in sorted(chosen, key=lambda i: (pool[i].at, pool[i].source, pool[i].position))]
