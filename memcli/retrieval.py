"""Recall: query → dense and lexical candidates → reciprocal-rank fusion → top k.

Dense: cosine similarity of sentence embeddings (MemoryBank's dense retrieval, §2.2).
Lexical: BM25 (bm25s) over the same memories' indexed text, English stop words removed.
The two ranked lists are fused by reciprocal rank fusion, score = Σ 1 / (60 + rank)
(Cormack et al. 2009); on LoCoMo the fusion beats either alone (data README).
Chat, ask, recall and eval all use this one path.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field
from typing import Any

from memcli.config import Settings
from memcli.embedding import Embedder
from memcli.forgetting import UNIT_SECONDS, retention
from memcli.memory import Memory
from memcli.store import MemoryStore

RRF_K = 60
CANDIDATES = 50
"""How many candidates each retriever contributes to the fusion."""


USE_SATURATION = 20
"""Recall count at which the log-scaled use component reaches 1."""
FEEDBACK_SCALE = 3.0
"""Feedback (a sum of ±1 votes) at which the feedback component reaches ±1."""


@dataclass(frozen=True)
class Ranking:
    """Weights of the recall score (bot memory design notes, DESIGN.md §5), and the
    retention parameters it reads. Similarity dominates by default: relevance decides what
    is recalled, the rest breaks near-ties, so ranking costs retrieval quality nothing on
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

    score: the ranking score (Ranking.score), or the fused score when ranking is off.
    fused: the reciprocal-rank fusion score (at most 2/61).
    similarity: cosine similarity to the query (−1..1), None when only BM25 found it.
    dense_rank / lexical_rank: 1-based rank in each retriever's list, None when absent.
    components: the ranking signals (Ranking.components), empty when ranking is off.
    """

    memory: Memory
    score: float
    similarity: float | None
    dense_rank: int | None
    lexical_rank: int | None
    fused: float = 0.0
    components: dict[str, float] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: the memory's id, kind, date, score, text, source and the rest."""
        m = self.memory
        return {
            "id": m.id,
            "kind": m.kind,
            "date": m.day,
            "created_at": m.created_at,
            "score": round(self.score, 6),
            "similarity": None if self.similarity is None else round(self.similarity, 4),
            "speaker": m.speaker,
            "text": m.text,
            "caption": m.caption,
            "source": m.source,
            "session": m.session,
            "tags": m.tags,
            "strength": m.strength,
            "recall_count": m.recall_count,
            "components": {k: round(v, 4) for k, v in self.components.items()},
        }


class LexicalIndex:
    """A BM25 index (bm25s) over memories' ``index_text()``, English stop words removed."""

    def __init__(self, memories: list[Memory]) -> None:
        import bm25s
        from bm25s.tokenization import Tokenizer

        self.memories = memories
        self._tokenizer = Tokenizer(stopwords="en")
        self._bm25 = bm25s.BM25()
        if memories:
            ids = self._tokenizer.tokenize([m.index_text() for m in memories], return_as="ids", show_progress=False)
            self._bm25.index(ids, show_progress=False)

    def search(self, query: str, n: int, since: float | None = None, kind: str | None = None) -> list[Memory]:
        """Up to ``n`` memories with a positive BM25 score for ``query``, best first."""
        if not self.memories:
            return []
        import numpy as np

        query_ids = self._tokenizer.tokenize([query], return_as="ids", update_vocab=False, show_progress=False)
        if not any(query_ids[0]):
            return []
        mask = None
        if since is not None or kind is not None:
            mask = np.array(
                [(since is None or m.created_at >= since) and (kind is None or m.kind == kind) for m in self.memories],
                dtype=np.float32,
            )
        docs, scores = self._bm25.retrieve(
            query_ids, k=min(n, len(self.memories)), show_progress=False, weight_mask=mask, n_threads=0
        )
        return [self.memories[int(d)] for d, s in zip(docs[0], scores[0]) if s > 0]


class Recaller:
    """Recalls memories from a store; caches each user's lexical index between writes."""

    def __init__(self, store: MemoryStore, embedder: Embedder) -> None:
        self.store = store
        self.embedder = embedder
        self._lexical: dict[str, tuple[int, LexicalIndex]] = {}

    def lexical_index(self, user: str) -> LexicalIndex:
        """The BM25 index of ``user``'s active memories, rebuilt when the store changed."""
        cached = self._lexical.get(user)
        if cached is None or cached[0] != self.store.generation:
            cached = (self.store.generation, LexicalIndex(self.store.memories(user=user, archived=False, ended=False)))
            self._lexical[user] = cached
        return cached[1]

    def recall(
        self,
        query: str,
        user: str,
        k: int = 10,
        kind: str | None = None,
        since: float | None = None,
        ranking: Ranking | None = None,
        now: float = 0.0,
    ) -> list[Recalled]:
        """The ``k`` memories of ``user`` most relevant to ``query``, best first.

        ``kind`` keeps one kind of memory; ``since`` (unix seconds) keeps memories
        learned at or after it. Archived (forgotten) memories are never recalled. With a
        ``ranking``, the fused candidates are re-scored by it at ``now`` (unix seconds).
        """
        if k <= 0 or not query.strip():
            return []
        vector = self.embedder.embed_one(query)
        with self.store.transaction():
            dense = self.store.nearest(vector, max(k, CANDIDATES), user=user, kind=kind, since=since)
            lexical = self.lexical_index(user).search(query, max(k, CANDIDATES), since=since, kind=kind)
        fused: dict[str, Recalled] = {}
        for rank, (memory, distance) in enumerate(dense, start=1):
            fused[memory.id] = Recalled(memory, 0.0, 1.0 - distance, rank, None, fused=1.0 / (RRF_K + rank))
        for rank, memory in enumerate(lexical, start=1):
            hit = fused.get(memory.id)
            if hit is None:
                fused[memory.id] = Recalled(memory, 0.0, None, None, rank, fused=1.0 / (RRF_K + rank))
            else:
                hit.fused += 1.0 / (RRF_K + rank)
                hit.lexical_rank = rank
        best = max((hit.fused for hit in fused.values()), default=1.0)
        for hit in fused.values():
            if ranking is None:
                hit.score = hit.fused
            else:
                hit.components = ranking.components(hit.memory, hit.fused / best, now)
                hit.score = ranking.score(hit.components)
        ranked = sorted(fused.values(), key=lambda r: (-r.score, -r.fused, r.memory.created_at))
        return ranked[:k]


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
