"""Batches of an import: memories in batches that keep a session's turns together, and
the progress of a batch as its embedder reports it.

The engine (``Engine.import_file``) sizes the batches by how long the last one took, so
that Ctrl-C on a slow machine stops within seconds and memory stays bounded.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from memcli.memory import Memory
from memcli.models.embedding import Progress


def import_batches(memories: Iterable[Memory], size: list[int], seen: set[str]) -> Iterator[list[Memory]]:
    """``memories`` in batches of ``size[0]`` (read as each batch fills: the caller may
    change it), leaving out the ids in ``seen`` (adding those given out): a batch runs on to
    the end of its session (a turn's neighbours are in the batch that embeds its window),
    up to twice the size."""
    batch: list[Memory] = []
    for memory in memories:
        if memory.id in seen:
            continue
        seen.add(memory.id)
        if len(batch) >= size[0]:
            last = batch[-1]
            if (
                len(batch) >= 2 * size[0]
                or not memory.session
                or (memory.user, memory.session) != (last.user, last.session)
            ):
                yield batch
                batch = []
        batch.append(memory)
    if batch:
        yield batch


def batch_progress(progress: Progress, done: int, batch: int, total: int) -> Progress:
    """``progress`` of an import as the embedder reports a batch of ``batch`` memories
    (the texts it embeds include the batch's windows: counted in proportion), after
    ``done`` memories."""
    return lambda embedded, texts: progress(done + batch * embedded // max(texts, 1), total)
