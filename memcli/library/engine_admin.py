"""The engine's work on the store as a whole: the embedder check, reindex, migrate between a
Chroma folder and a Chroma server, and the doctor's checks (``memcli.library.engine.Engine``)."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

import numpy as np

from memcli import schema
from memcli.errors import (
    MemcliError,
    ModelError,
)
from memcli.library import engine_models
from memcli.library.doctor import check
from memcli.memory import Memory
from memcli.models.embedding import Progress, embedder_identity
from memcli.store.recall_index import batch_windows
from memcli.store.store import Server

if TYPE_CHECKING:
    pass


class AdminWork:
    """The maintenance work of ``Engine``."""

    def check_embedder(self) -> None:
        """Make sure the store's vectors come from the configured embedder before anything
        is embedded for it (``MemoryStore.require_embedder``, which the writes and recall
        also call under the store). Raises EmbedderChangedError when another embedder made
        them, or a reindex was interrupted."""
        self.store.require_embedder(embedder_identity(self.embedder))

    def migrate(self, url: str | None, progress: Progress | None = None) -> dict[str, Any]:
        """Move the memories to the Chroma server at ``url`` (with the ``store_tenant``,
        ``store_database``, ``store_token_env`` settings) or, when None, to the folder
        under the data folder: every memory is copied with every field and its vector and
        the copy compared with the store (``MemoryStore.migrate``); only then is the
        store opened there, and the caller writes ``store_url`` to the config file (the
        command, ``memcli.cli.system.migrate``: the config file is the CLI's; until it is
        written the next command opens the old place, which keeps its copy). An
        interrupted migration is run again. After a move back to the folder, the folder
        is compacted (what was deleted on the server since is gone from its files too); a
        compaction that fails (a full disk, another process reading the sidecar) is a
        notice, not the command's error.
        ``progress`` gets (memories copied, memories in all). Returns {source, target, memories, max_vector_difference,
        duration_seconds}. Raises StoreServerError, MemcliError (already there, a reindex
        under way, a difference found)."""
        started = time.perf_counter()
        settings = self.settings
        target = (
            None
            if url is None
            else Server(
                url, settings.store_tenant, settings.store_database, settings.store_token_env, settings.store_timeout
            )
        )
        source = self.store.location
        count, worst = self.store.migrate(target, progress)
        self.store.use(target)
        if target is None:
            try:
                self.store.compact()
            except MemcliError as exc:  # the move stands: compacting only erases what the server deleted since
                self.store.notice(
                    f"moved, but the store could not be compacted ({exc}): what was deleted on the server may stay "
                    "in the folder's files until the next delete compacts them"
                )
        return {
            "source": source,
            "target": self.store.location,
            "memories": count,
            "max_vector_difference": worst,
            "duration_seconds": round(time.perf_counter() - started, 3),
        }

    def reindex(self, force: bool = False, progress: Progress | None = None) -> dict[str, Any]:
        """Re-embed every memory of every user with the configured embedder, and rebuild
        the recall index (window vectors included) with the new vectors: what changing the
        ``embedder`` setting on a populated store needs, whatever the new model's
        dimension. The new vectors fill a staging collection that takes the store's place
        at the end (``MemoryStore.begin_reindex``); until then the store is marked, so an
        interrupted reindex loses nothing and the next one starts over. The store is held
        throughout (a long maintenance job: other commands wait). Texts are embedded
        ``engine_models.REINDEX_BATCH`` at a time and kept as float32 arrays, one user at a time.

        Nothing is done when the store is already the configured embedder's, unless
        ``force``. ``progress`` gets (texts embedded, texts in all). Returns {embedder,
        previous, memories, users, duration_seconds}.
        """
        started = time.perf_counter()
        mine = embedder_identity(self.embedder)
        with self.store.transaction():
            previous = self.store.embedder_record()
            if self.store.embedded_by(mine) and not force:
                return {
                    "embedder": mine,
                    "previous": previous,
                    "memories": 0,
                    "users": 0,
                    "duration_seconds": round(time.perf_counter() - started, 3),
                }
            by_user: dict[str, list[Memory]] = {}
            for memory in self.store.memories():
                by_user.setdefault(memory.user, []).append(memory)
            windows = {user: batch_windows(own) for user, own in by_user.items()}
            total = sum(len(own) + len(windows[user]) for user, own in by_user.items())
            done = 0
            self.store.begin_reindex(mine)
            for user, own in by_user.items():
                texts = [m.index_text() for m in own] + windows[user]
                vectors = np.zeros((len(texts), 0), dtype=np.float32)
                for start in range(0, len(texts), engine_models.REINDEX_BATCH):
                    part = np.asarray(
                        self.embedder.embed(texts[start : start + engine_models.REINDEX_BATCH]), dtype=np.float32
                    )
                    if start == 0:  # the new model's dimension is known from its first batch
                        vectors = np.empty((len(texts), part.shape[1]), dtype=np.float32)
                    vectors[start : start + len(part)] = part
                    done += len(part)
                    if progress is not None:
                        progress(done, total)
                self.store.reembed(user, own, vectors[: len(own)], dict(zip(windows[user], vectors[len(own) :])))
            self.store.finish_reindex(mine)
        return {
            "embedder": mine,
            "previous": previous,
            "memories": sum(map(len, by_user.values())),
            "users": len(by_user),
            "duration_seconds": round(time.perf_counter() - started, 3),
        }

    def _configured_embedder(self) -> str:
        """The identity of the embedder the settings name, or why there is none (stats
        must work to diagnose a bad setting)."""
        try:
            return embedder_identity(self.embedder)
        except ModelError as exc:
            return f"unusable: {exc.message}"

    def doctor(self, model: bool = False) -> schema.DoctorReport:
        """The privacy and writability check of every path memcli uses (``memcli.library.doctor``):
        reads modes only, loads no model and does not open the store; ``model``: the
        configured chat model's checks too (a model server is asked)."""

        return check(self.paths, self.settings if model else None)
