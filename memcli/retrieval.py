"""Recall: query → dense and lexical candidates → reciprocal-rank fusion → top k.

Dense: cosine similarity of sentence embeddings (MemoryBank's dense retrieval, §2.2).
Lexical: BM25 (bm25s) over the same memories' indexed text, English stop words removed.
The two ranked lists are fused by reciprocal rank fusion, score = Σ 1 / (60 + rank)
(Cormack et al. 2009); on LoCoMo the fusion beats either alone (data README).
Chat, ask, recall and eval all use this one path.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from memcli.embedding import Embedder
from memcli.memory import Memory
from memcli.store import MemoryStore

RRF_K = 60
CANDIDATES = 50
"""How many candidates each retriever contributes to the fusion."""


@dataclass
class Recalled:
    """One recalled memory and why.

    score: the fused reciprocal-rank score (higher is better, at most 2/61).
    similarity: cosine similarity to the query (−1..1), None when only BM25 found it.
    dense_rank / lexical_rank: 1-based rank in each retriever's list, None when absent.
    """

    memory: Memory
    score: float
    similarity: float | None
    dense_rank: int | None
    lexical_rank: int | None

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
        """The BM25 index of ``user``'s memories, rebuilt when the store changed."""
        cached = self._lexical.get(user)
        if cached is None or cached[0] != self.store.generation:
            cached = (self.store.generation, LexicalIndex(self.store.memories(user=user)))
            self._lexical[user] = cached
        return cached[1]

    def recall(
        self,
        query: str,
        user: str,
        k: int = 10,
        kind: str | None = None,
        since: float | None = None,
    ) -> list[Recalled]:
        """The ``k`` memories of ``user`` most relevant to ``query``, best first.

        ``kind`` keeps one kind of memory; ``since`` (unix seconds) keeps memories
        learned at or after it.
        """
        if k <= 0 or not query.strip():
            return []
        vector = self.embedder.embed_one(query)
        with self.store.transaction():
            dense = self.store.nearest(vector, max(k, CANDIDATES), user=user, kind=kind, since=since)
            lexical = self.lexical_index(user).search(query, max(k, CANDIDATES), since=since, kind=kind)
        fused: dict[str, Recalled] = {}
        for rank, (memory, distance) in enumerate(dense, start=1):
            fused[memory.id] = Recalled(memory, 1.0 / (RRF_K + rank), 1.0 - distance, rank, None)
        for rank, memory in enumerate(lexical, start=1):
            hit = fused.get(memory.id)
            if hit is None:
                fused[memory.id] = Recalled(memory, 1.0 / (RRF_K + rank), None, None, rank)
            else:
                hit.score += 1.0 / (RRF_K + rank)
                hit.lexical_rank = rank
        ranked = sorted(fused.values(), key=lambda r: (-r.score, r.memory.created_at))
        return ranked[:k]
