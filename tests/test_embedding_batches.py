"""How texts are batched for the embedder (``length_batches``, ``SharedEmbedder``) and the
background export held back while an import runs (``Embedder.export_held``). No model is
loaded: the embedders here are stand-ins."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np

from memcli.models.embedding import FEW, LIKE_LENGTH, Embedder, export_held, length_batches
from memcli.transport.resources import SharedEmbedder


def test_batches_hold_texts_of_like_length_whatever_their_order() -> None:
    # an import's turns (short) then their windows (about three times as long), in file order
    turns = [20 + (i * 7) % 40 for i in range(100)]
    windows = [3 * n + (i % 5) for i, n in enumerate(turns)]
    lengths = turns + windows
    batches = length_batches(lengths, 64)
    assert sorted(i for b in batches for i in b) == list(range(len(lengths)))
    for batch in batches:
        assert len(batch) <= 64
        longest = max(lengths[i] for i in batch)
        shortest = min(lengths[i] for i in batch)
        assert shortest >= LIKE_LENGTH * longest or len(batch) <= FEW, (longest, shortest, len(batch))


def test_few_short_texts_are_not_cut_into_batches_of_one() -> None:
    assert length_batches([9, 6, 4, 3, 2, 1], 64) == [[0, 1, 2, 3, 4, 5]]
    assert length_batches([], 64) == []


class Recording:
    """A stand-in embedder that records each batch it is given; a text's vector is its length."""

    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    def embed(self, texts: Sequence[str], batch_size: int = 64) -> list[list[float]]:
        self.calls.append(list(texts))
        return [[float(len(t))] for t in texts]


def test_the_shared_embedder_gives_batches_of_like_length_and_vectors_in_order() -> None:
    inner = Recording()
    texts = ["x" * (10 if i % 2 else 200) + str(i) for i in range(128)]  # short and long, alternating
    done: list[tuple[int, int]] = []
    vectors = SharedEmbedder(inner).embed(texts, batch_size=64, progress=lambda d, n: done.append((d, n)))
    assert vectors == [[float(len(t))] for t in texts]
    assert [len(c) for c in inner.calls] == [64, 64]
    for call in inner.calls:
        assert max(map(len, call)) < 2 * min(map(len, call))  # all long, or all short
    assert done == [(64, 128), (128, 128)]


def test_the_background_export_waits_for_the_last_hold(tmp_path: Path, monkeypatch) -> None:
    started: list[tuple[Path, Path]] = []
    embedder = Embedder(tmp_path / "model", exports=tmp_path / "exports")
    monkeypatch.setattr(embedder, "_start_export", lambda path, export: started.append((path, export)))
    job = (tmp_path / "model", tmp_path / "exports" / "m.onnx")
    with embedder.export_held():
        with export_held(SharedEmbedder(embedder)):  # the service's shared embedder holds the same
            embedder._export_when_free(*job)  # the model loads during the import
        assert started == []
    assert started == [job]
    embedder._export_when_free(*job)  # not held: at once
    assert started == [job, job]


def test_an_embedder_without_an_export_has_nothing_to_hold() -> None:
    with export_held(Recording()):
        pass  # a server's embedder, a test's stand-in: no export_held of their own


class Tokens:
    """A stand-in for the encoders of ``memcli.models.embedding_export`` (a text's tokens are
    its words), recording each batch it runs and whether the embedder's lock was held."""

    def __init__(self, embedder: Embedder) -> None:
        self.embedder = embedder
        self.runs: list[list[int]] = []
        self.unlocked = 0

    def tokenize(self, texts: Sequence[str], role: str = "document") -> list[Any]:
        self.unlocked += not self.embedder._run_lock.locked()
        return [SimpleNamespace(ids=text.split()) for text in texts]

    def run(self, encodings: Sequence[Any]) -> Any:
        self.unlocked += not self.embedder._run_lock.locked()
        self.runs.append([len(e.ids) for e in encodings])
        return np.array([[float(len(e.ids))] for e in encodings], dtype=np.float32)


def test_the_shared_embedder_lets_the_embedder_batch_an_import_by_tokens(tmp_path: Path) -> None:
    embedder = Embedder(tmp_path / "model")
    encoder = embedder._encoder = Tokens(embedder)
    # as long in characters, far apart in tokens: batches of characters would mix them
    texts = [("a " * 40 if i % 2 else "abcdefghijklmnopqrstuvwxyz" * 3 + " b") for i in range(128)]
    done: list[tuple[int, int]] = []
    vectors = SharedEmbedder(embedder).embed(texts, batch_size=64, progress=lambda d, n: done.append((d, n)))
    assert vectors == [[float(len(t.split()))] for t in texts]
    assert sorted(encoder.runs) == [[2] * 64, [40] * 64]  # two runs, each of one length
    assert encoder.unlocked == 0  # the tokenizing and every run held the embedder's lock
    assert done == [(64, 128), (128, 128)]
