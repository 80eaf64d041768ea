"""The engine under the library's verbs: one ``Engine`` per command (in-process) or per
request (the service), over the store, the embedder, the chat model and the recaller.

It owns the store, loads the embedder and the chat model lazily, and never prints; its
methods return domain objects (``Memory``, ``Recalled``, reports), which the library
(``memcli.library.library.Memcli``) turns into the documented shapes. Writes of what the user said (notes, chat turns) go
through a write-ahead journal (``pending/``) first, so that a crash, a kill or a store
held by another process loses nothing: the next memcli that gets the store stores them.
"""

from __future__ import annotations

import contextlib
import difflib
import time
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from memcli.config import LEGACY_USER, Paths, Settings
from memcli.errors import (
    DiskFullError,
    MemcliError,
    NotFoundError,
)
from memcli.library.engine_admin import AdminWork
from memcli.library.engine_consolidation import ConsolidationWork
from memcli.library.engine_files import FileWork
from memcli.library.engine_memories import MemoryWork
from memcli.library.engine_models import (
    _CONTROL,
    IMPORT_BATCH,
    IMPORT_BATCH_SECONDS,
    MAX_ENTITY_NAME,
    REINDEX_BATCH,
    RETENTION_FROM,
    Clock,
    Embedded,
    ImportReport,
    chat_template_known,
    check_entity_name,
    embedder_key,
    make_chat_model,
    make_embedder,
    note_chunks,
    server_model,
)
from memcli.library.engine_recall import RecallWork
from memcli.library.interrupts import deferred_interrupt
from memcli.memory import Memory
from memcli.models.embedding import Embedder, Progress, embedder_identity
from memcli.models.embedding_server import ServerEmbedder
from memcli.models.llm import ChatModel
from memcli.store.journal import Journal
from memcli.store.recall_index import batch_windows
from memcli.store.store import MemoryStore, Server

if TYPE_CHECKING:
    from memcli.recall.changes import UpdateDecision
    from memcli.recall.retrieval import Recaller, Signals


class Engine(MemoryWork, RecallWork, ConsolidationWork, FileWork, AdminWork):
    """memcli's memory: remember, recall, ask, import, list, show, delete, stats.

    One object per command (in-process) or per request (the service), over resources
    that may be shared: the store, the embedder, the chat model and the recaller (which
    keeps each user's recall index in memory). What is not given is made from the
    settings on first use.

    Args:
        settings: from ``load_settings``. paths: from ``resolve_paths``.
        clock: returns now in unix seconds. notice: receives status lines (the recall
            index is being rebuilt from the store); used only when ``store`` is not given.
        store: a ``MemoryStore`` (the service passes its resident one).
        embedder: anything with ``embed`` and ``embed_one`` (tests pass a fake).
        chat_model: a ``ChatModel`` (tests pass a scripted fake; the service a shared one).
        recaller: a ``Recaller`` over ``store`` (the service keeps one for its lifetime).
        recaller_of: gives that ``Recaller`` when the request first recalls (the service's
            own, taken only by a request that recalls, so that a list or show does not
            import recall); ``recaller`` when given is used instead.
        saved: told what of this engine's writes is safe so far, as keyword counts,
            each the total since the engine was made: ``journaled`` (memories the user
            gave, on disk in the journal: stored at the next start whatever happens now),
            ``stored`` (an import's new memories, committed), with ``total`` (how many the
            command writes in all) when known. The service sends it on to the client, so
            that a client whose service dies can say what was kept (``memcli.transport.client``).
        signals: recall signal weights for a recaller made here (``eval --without``).
    """

    def __init__(
        self,
        settings: Settings,
        paths: Paths,
        clock: Clock = time.time,
        notice: Callable[[str], None] | None = None,
        *,
        store: MemoryStore | None = None,
        embedder: Embedder | None = None,
        chat_model: ChatModel | None = None,
        recaller: Recaller | None = None,
        recaller_of: Callable[[], Recaller] | None = None,
        signals: Signals | None = None,
        saved: Callable[..., None] | None = None,
    ) -> None:
        self.settings = settings
        self.paths = paths
        self.clock = clock
        self.store = (
            store if store is not None else MemoryStore(paths, settings.lock_timeout, notice, Server.of(settings))
        )
        self._embedder = embedder
        self._chat_model = chat_model
        self._recaller = recaller
        self._recaller_of = recaller_of
        self._signals = signals
        self._legacy_user: bool | None = None
        self.journal = Journal(paths.pending_dir)
        """What the user said, on disk until it is stored (``memcli.store.journal``)."""
        self._saved = saved
        self._journaled = 0

    @property
    def embedder(self) -> Embedder | ServerEmbedder:
        """The sentence embedder (``make_embedder``), loaded on first use."""
        if self._embedder is None:
            self._embedder = make_embedder(self.settings, self.paths)
        return self._embedder

    @property
    def chat_model(self) -> ChatModel:
        """The chat model, loaded on first use."""
        if self._chat_model is None:
            self._chat_model = make_chat_model(self.settings, self.paths)
        return self._chat_model

    @property
    def recaller(self) -> Recaller:
        """The retrieval path shared by chat, ask, recall and eval."""
        if self._recaller is None and self._recaller_of is not None:
            self._recaller = self._recaller_of()
        if self._recaller is None:
            # heavy: recall reads names and dates (memcli.text.entities compiles its patterns at
            # import), which a list, show or stats in a service just started never needs
            from memcli.recall.retrieval import Recaller

            self._recaller = Recaller(self.store, self.embedder, self._signals)
        return self._recaller

    def user(self, user: str | None) -> str:
        """``user``, else the ``user`` setting, whose default is the login name; but when it
        is not set and the store's only user is "default" (an older memcli's default), that
        one, with a notice."""
        if user:
            return user
        if "user" not in self.settings.model_fields_set and self.settings.user != LEGACY_USER:
            if self._legacy_user is None:
                # Read without taking the store: the question must not wait on its lock, nor
                # count as a first read (a read-only store's notice follows one).
                users = self.store.users_unlocked()
                self._legacy_user = (self.store.users() if users is None else users) == [LEGACY_USER]
                if self._legacy_user:
                    self.store.notice(
                        f"using user {LEGACY_USER!r}, the only user of this store "
                        f"('memcli config set user {LEGACY_USER}' keeps it and ends this notice)"
                    )
            if self._legacy_user:
                return LEGACY_USER
        return self.settings.user

    def known_user(self, user: str | None) -> str:
        """``user`` (``self.user``) for ``ask``, checked:
        a user without memories, in a store where other users have some, is a mistyped
        name rather than someone to answer for. An empty store passes (nothing is known
        yet); a verb that writes (remember, import, chat) makes a new user.

        Raises NotFoundError naming the closest known users (``difflib``), or some of them."""
        user = self.user(user)
        # The user's own memories first: listing every user would rebuild every stale user's rows.
        if self.store.has_memories(user) or any(m.user == user for m in self.pending()):
            return user
        known = self.store.users()
        if not known or user in known:
            return user
        close = difflib.get_close_matches(user, known, n=3, cutoff=0.6)
        if close:
            raise NotFoundError(f"no user {user!r}; did you mean {' or '.join(close)}?")
        more = f" and {len(known) - 5} more" if len(known) > 5 else ""
        raise NotFoundError(f"no user {user!r}; the users with memories are {', '.join(known[:5])}{more}")

    def _embed_new(
        self, memories: Sequence[Memory], progress: Progress | None = None, vectors: Mapping[str, Any] | None = None
    ) -> Embedded:
        """The first half of ``add_memories``: the memories not yet in the store
        (``_new_of``), embedded (``_embed``). Raises as ``add_memories`` does."""
        return self._embed(self._new_of(memories), progress, vectors)

    def _new_of(self, memories: Sequence[Memory]) -> Embedded:
        """The memories of ``memories`` not yet in the store, to embed (the store taken
        briefly). Raises ReadOnlyStoreError, EmbedderChangedError."""
        identity = embedder_identity(self.embedder)
        with self.store.transaction():
            if self.store.read_only:  # before the embedding, which would be in vain
                raise self.store.read_only_error()
            self.store.require_embedder(identity)
            existing = self.store.existing_ids([m.id for m in memories])
        return Embedded([m for m in memories if m.id not in existing], {}, {}, identity, list(memories))

    def _embed(
        self, found: Embedded, progress: Progress | None = None, vectors: Mapping[str, Any] | None = None
    ) -> Embedded:
        """``found`` (from ``_new_of``) with its memories' vectors and windows, embedded
        without holding the store; ``vectors``: id -> vector of memories already embedded."""
        new = found.memories
        if not new:
            return found
        # Embedding is the slow part: do it without holding the store lock. The windows of
        # the recall index are embedded with the texts; those a neighbour already in the
        # store changes are filled in at the next recall.
        given = dict(vectors or {})
        todo = [m for m in new if m.id not in given]
        windows = batch_windows(new) if todo else []
        texts = [m.index_text() for m in todo]
        embedded = self.embedder.embed(texts + windows, progress=progress) if todo else []
        found.vectors = {m.id: given.get(m.id) for m in new}
        found.vectors.update(zip((m.id for m in todo), embedded))
        found.windows = dict(zip(windows, embedded[len(texts) :]))
        return found

    def _add_embedded(
        self, embedded: Embedded, added: set[str] | None = None, decided: Mapping[str, UpdateDecision] | None = None
    ) -> set[str]:
        """The second half of ``add_memories``: store what ``_embed_new`` embedded (those
        stored meanwhile left out); returns the ids added, ``added`` gets them as soon as
        they are stored. ``decided``: the chat model's update decisions for some of them
        (``Changes.supersede``)."""
        new = embedded.memories
        if not new:
            return set()
        with deferred_interrupt(), self.store.transaction():
            existing = self.store.existing_ids([m.id for m in new])
            keep = [i for i, m in enumerate(new) if m.id not in existing]
            try:
                self.store.add(
                    [new[i] for i in keep],
                    [embedded.vectors[new[i].id] for i in keep],
                    embedded.windows,
                    embedder=embedded.identity,
                )
            except DiskFullError:
                if added is not None:  # what reached Chroma before the device filled is stored, and counted
                    with contextlib.suppress(MemcliError):
                        added.update(self.store.existing_ids([new[i].id for i in keep]))
                raise
            if added is not None:
                added.update(new[i].id for i in keep)
            # In effect when the write returns: a person asks right after noting the change.
            with self.store.optional_write("not checked for the memories it supersedes"):
                self.changes.supersede([new[i] for i in keep], decided)
        return {new[i].id for i in keep}

    def today(self) -> str:
        """See ``Assistant.today``."""
        return self.assistant.today()


# Names that moved to memcli.library.engine_models, still importable from here.
__all__ = [
    "Engine",
    "Clock",
    "make_embedder",
    "embedder_key",
    "make_chat_model",
    "chat_template_known",
    "server_model",
    "REINDEX_BATCH",
    "IMPORT_BATCH",
    "IMPORT_BATCH_SECONDS",
    "RETENTION_FROM",
    "ImportReport",
    "Embedded",
    "MAX_ENTITY_NAME",
    "_CONTROL",
    "check_entity_name",
    "note_chunks",
]
