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
import random
import re
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from memcli import __version__, schema
from memcli.config import LEGACY_USER, Paths, Settings
from memcli.dates import day_of, parse_day, parse_since
from memcli.errors import (
    BadInputError,
    DiskFullError,
    EmbedderChangedError,
    Interrupted,
    MemcliError,
    ModelError,
    ModelServerError,
    NotFoundError,
    ReadOnlyStoreError,
    StoreLockedError,
    UsageError,
)
from memcli.formats.export import PAGE as EXPORT_PAGE
from memcli.formats.export import Archive, export_pages, header, open_archive
from memcli.formats.importers import open_records
from memcli.library.doctor import check
from memcli.library.interrupts import deferred_interrupt
from memcli.memory import KIND_VALUES, Kind, Memory, stable_id, unstorable
from memcli.models.batching import batch_progress, import_batches
from memcli.models.embedding import Embedder, Progress, embedder_identity, same_embedder
from memcli.models.embedding_server import ServerEmbedder
from memcli.models.llm import ChatModel, Message, load_chat_model
from memcli.models.llm import chat_template_known as llm_template_known
from memcli.models.llm_server import ServerChatModel
from memcli.paths import PRIVATE_FILE, device_of, private_dir
from memcli.recall.assistant import Answer, Assistant, Context
from memcli.recall.changes import Changes, ForgetReport
from memcli.recall.forgetting import UNIT_SECONDS, histogram, retention
from memcli.recall.retrieval import Ranking, Recalled, Recaller, Signals, roulette, without_repeated_lines
from memcli.store.candidates import WHAT
from memcli.store.journal import Journal
from memcli.store.recall_index import batch_windows
from memcli.store.sidecar import HistoryEntry
from memcli.store.space import ROOM_PER_MEMORY, room_measured
from memcli.store.store import MIN_PREFIX, REINDEXING, MemoryStore, Server, short_prefix
from memcli.text.chunking import MAX_CHARS, WIDE_WEIGHT, chunks, size
from memcli.text.entities import normalise

if TYPE_CHECKING:
    from memcli.consolidation.consolidate import ConsolidationReport

Clock = Callable[[], float]


def make_embedder(settings: Settings) -> Embedder | ServerEmbedder:
    """The embedder the settings name (``embedder_url``: an embedding server; else
    ``embedder``: a sentence-transformers directory, empty for the packaged
    all-MiniLM-L6-v2); an ``Engine`` given one does not call this. Nothing is loaded or
    sent until it is used."""
    if settings.embedder_url:
        return ServerEmbedder(
            settings.embedder_url,
            settings.embedder_name,
            settings.embedder_api_key_env,
            settings.embedder_request_timeout,
        )
    return Embedder(settings.embedder)


def embedder_key(settings: Settings) -> tuple[Any, ...]:
    """What tells one configured embedder from another (``make_embedder``): a process
    keeps one embedder per key."""
    if settings.embedder_url:
        return (
            "server",
            settings.embedder_url,
            settings.embedder_name,
            settings.embedder_api_key_env,
            settings.embedder_request_timeout,
        )
    return ("local", settings.embedder)


def make_chat_model(settings: Settings, paths: Paths) -> ChatModel:
    """The chat model the settings name (``model_url``: a model server; else ``model``: a
    GGUF file, empty for the embedded Gemma 3 270M); an ``Engine`` given one does not call
    this."""
    if settings.model_url:
        return server_model(settings)
    return load_chat_model(
        settings.model,
        paths.model_dir,
        settings.chat_format,
        settings.n_ctx,
        settings.n_threads,
        settings.model_timeout,
    )


def chat_template_known(settings: Settings, paths: Paths) -> bool | None:
    """Whether the GGUF chat model of ``settings`` chats through a chat template, known
    without loading it (``memcli.models.llm.chat_template_known``); None when it cannot be
    told so (then loading the model tells)."""
    return llm_template_known(settings.model, paths.model_dir, settings.chat_format)


def server_model(settings: Settings) -> ServerChatModel:
    """The ``ServerChatModel`` of the settings' model server (``model_url``); nothing is
    sent until it is used."""
    return ServerChatModel(
        settings.model_url,
        settings.model_name,
        settings.model_api_key_env,
        settings.model_request_timeout,
        settings.model_json_format,
        settings.model_timeout,
    )


REINDEX_BATCH = 2048
"""Texts a reindex embeds at a time."""
IMPORT_BATCH = 512
"""Most memories an import embeds and stores at a time (a batch runs on to the end of its
session, up to twice as many, so the recall index's windows of its turns are whole)."""
IMPORT_BATCH_SECONDS = 20.0
"""About how long an import's batch takes: the first is 64 memories, each next one is sized
from the time the last took a memory (16 to ``IMPORT_BATCH``), so that Ctrl-C on a slow
machine still finds batches stored (on a busy 2-core machine, a long note takes 1 s to embed)."""
RETENTION_FROM = ("import", "conversation")
"""Where an imported memory's retention clock starts (``memcli import --retention-from``)."""


@dataclass
class ImportReport:
    """What ``import_file`` did. seconds: wall time of the whole import. ``interrupted``:
    stopped by Ctrl-C or its client, ``stopped``: by a full device; ``added`` + ``skipped``
    of the ``found`` memories were reached, and are in the store."""

    path: str
    format: str
    found: int
    added: int
    skipped: int
    users: dict[str, int]
    seconds: float
    interrupted: bool = False
    stopped: str = ""
    """Why the import stopped before the end for want of room (DiskFullError's message,
    counting what was stored); empty when it did not."""

    @property
    def failed(self) -> int:
        """Memories found but not stored (an import interrupted or stopped by a full device)."""
        return self.found - self.added - self.skipped


@dataclass
class Embedded:
    """What ``Engine._embed_new`` embedded of a batch for ``Engine._add_embedded`` to
    store: the memories new to the store, each one's vector, the window vectors (window
    text -> vector) and the embedder's identity; ``batch``: the batch they came from."""

    memories: list[Memory]
    vectors: dict[str, Any]
    windows: dict[str, Any]
    identity: str
    batch: list[Memory] = field(default_factory=list)


class Engine:
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
            self._embedder = make_embedder(self.settings)
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
        if self._recaller is None:
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
        known = self.store.users()
        if not known or user in known or any(m.user == user for m in self.pending()):
            return user
        close = difflib.get_close_matches(user, known, n=3, cutoff=0.6)
        if close:
            raise NotFoundError(f"no user {user!r}; did you mean {' or '.join(close)}?")
        more = f" and {len(known) - 5} more" if len(known) > 5 else ""
        raise NotFoundError(f"no user {user!r}; the users with memories are {', '.join(known[:5])}{more}")

    # writing ----------------------------------------------------------------

    def pending(self) -> list[Memory]:
        """Memories journaled but not in the store whose writer is done with them (see
        ``Journal.pending``), oldest first."""
        return [memory for _, memory in self.journal.pending()]

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
        is compacted (what was deleted on the server since is gone from its files too).
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
            self.store.compact()
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
        ``REINDEX_BATCH`` at a time and kept as float32 arrays, one user at a time.

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
                for start in range(0, len(texts), REINDEX_BATCH):
                    part = np.asarray(self.embedder.embed(texts[start : start + REINDEX_BATCH]), dtype=np.float32)
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

    def add_memories(
        self,
        memories: Sequence[Memory],
        progress: Progress | None = None,
        added: set[str] | None = None,
        vectors: Mapping[str, Any] | None = None,
    ) -> set[str]:
        """Embed and add the memories not yet in the store (no journal: for memories that
        can be read again from where they came, such as an imported file); returns the ids
        added. ``progress`` gets (texts embedded, texts in all). Raises
        EmbedderChangedError as ``check_embedder`` does, ReadOnlyStoreError on a read-only store.
        ``added``, when given, gets the ids as soon as they are stored: a Ctrl-C held back
        during the write (``deferred_interrupt``) is raised after it, before this returns.
        ``vectors``: id -> vector of memories already embedded by the configured embedder
        (a memcli export's): stored as they are; when every memory has one, nothing is
        embedded, and the recall index's windows are filled at the next recall."""
        return self._add_embedded(self._embed_new(memories, progress, vectors), added)

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

    def _add_embedded(self, embedded: Embedded, added: set[str] | None = None) -> set[str]:
        """The second half of ``add_memories``: store what ``_embed_new`` embedded (those
        stored meanwhile left out); returns the ids added, ``added`` gets them as soon as
        they are stored."""
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
                self.changes.supersede([new[i] for i in keep])
        return {new[i].id for i in keep}

    def write(self, memories: Sequence[Memory], total: int | None = None) -> set[str]:
        """Store new memories the user gave (journal first, then the store); returns the ids
        new to the store (with S0 set by ``initial_strength``). Once they are journaled,
        ``saved`` is told (``total``: how many the command writes in all, when known).

        Also stores anything an earlier writer journaled but could not store. Raises
        StoreLockedError when the store stays locked; the memories stay journaled and are
        stored by the next memcli that gets the store.
        """
        for memory in memories:
            memory.strength = self.initial_strength(memory)
        with self.journal.writing(memories) as done:
            self._journaled += len(memories)
            self.tell_saved(journaled=self._journaled, total=total)
            added = self.add_memories(memories)
            done()
        self.flush_pending()
        return added

    def tell_saved(self, **counts: int | None) -> None:
        """Tell ``saved`` (see the class) the ``counts`` given, those that are not None."""
        if self._saved is not None:
            self._saved(**{name: count for name, count in counts.items() if count is not None})

    def initial_strength(self, memory: Memory) -> float:
        """S0 of a new memory, in ``time_unit``s, by its kind: ``strength_turn``,
        ``strength_note`` (times ``important_strength`` for a note at least as important as
        ``important_threshold``), ``strength_fact``; ``initial_strength`` for the kinds that
        never fade. Only new memories get it: a stored memory keeps the strength it has."""
        settings = self.settings
        if memory.kind == Kind.NOTE.value:
            important = memory.importance >= settings.important_threshold
            return settings.strength_note * (settings.important_strength if important else 1.0)
        by_kind = {Kind.TURN.value: settings.strength_turn, Kind.FACT.value: settings.strength_fact}
        return by_kind.get(memory.kind, settings.initial_strength)

    def flush_pending(self) -> set[str]:
        """Store every journaled memory whose writer is done with it (``pending``);
        returns the ids new to the store. While the store waits for a reindex
        (``check_embedder``), cannot be written (read-only, or its device full), or the
        embedding server fails, they stay journaled, and a read goes on without them."""
        waiting = self.journal.pending()
        if not waiting:
            return set()
        try:
            added = self.add_memories([memory for _, memory in waiting])
        except (EmbedderChangedError, ReadOnlyStoreError, DiskFullError, ModelServerError):
            return set()
        self.journal.discard([path for path, _ in waiting])
        return added

    def remember(
        self, text: str, user: str | None = None, importance: float = 0.5, tags: Sequence[str] = ()
    ) -> tuple[Memory, bool]:
        """Store a note; returns (the note, whether it was new). The same text twice is one note.

        A text longer than ``memcli.text.chunking.MAX_CHARS`` is stored as one note a chunk
        (``note_chunks``), a millisecond apart, with the same source, importance and tags,
        ``IMPORT_BATCH`` at a time; the note returned is the first. Raises BadInputError
        for empty text, UsageError for an importance outside 0..1 (an invalid option value).
        """
        text = text.strip()
        if not text:
            raise BadInputError("nothing to remember: the text is empty")
        if not 0.0 <= importance <= 1.0:
            raise UsageError(f"--importance must be between 0 and 1, not {importance:g}")
        user = self.user(user)
        now = self.clock()
        notes = [
            Memory(
                id=part_id,
                user=user,
                kind=Kind.NOTE.value,
                text=part,
                created_at=now + index / 1000,  # a long note's chunks keep their order
                day=day_of(now),
                source="remember",
                importance=importance,
                tags=sorted({t.strip() for t in tags if t.strip()}),
            )
            for index, (part_id, part) in enumerate(note_chunks(text, user))
        ]
        note = notes[0]
        added: set[str] = set()
        for start in range(0, len(notes), IMPORT_BATCH):  # a huge note in bounded memory
            added |= self.write(notes[start : start + IMPORT_BATCH], total=len(notes))
        is_new = note.id in added
        if not is_new:
            self.changes.relearn(note.id, now)  # told again what it had forgotten: memcli learns it again
        return note, is_new

    def import_file(
        self,
        path: Path,
        fmt: str | None = None,
        user: str | None = None,
        conversation: str | None = None,
        progress: Progress | None = None,
        retention_from: str = "import",
    ) -> ImportReport:
        """Import a LoCoMo, MemoryBank, JSONL, text or memcli export file (format
        auto-detected when None).

        The file is parsed twice, a record at a time for text and JSONL
        (``memcli.formats.importers.open_records``): first whole, so that a malformed file stores
        nothing (and to count it), then to store it in batches (``IMPORT_BATCH``,
        ``IMPORT_BATCH_SECONDS``), each embedded and committed before the next is read
        (``add_memories``), so memory stays bounded whatever the file's size. Idempotent: ids derive from
        content, so memories already stored are skipped, and an interrupted import run
        again stores the rest. Each memory keeps the time of its conversation
        (``created_at``: shown, dated and recalled by it); its retention clock starts at
        the import (``retained_from``), so that old logs do not fade the moment they
        arrive, unless ``retention_from`` is "conversation" (simulations replaying a
        timeline). ``progress`` gets (memories done, memories found) as the batches are
        embedded and stored. A memcli export is imported as it was exported, state,
        history and consolidation progress included (``_import_export``; ``retention_from``
        does not apply to it, and a ``user`` other than the file's is refused).

        Ctrl-C (KeyboardInterrupt) or an ``Interrupted`` from ``progress`` (the service's
        client cancelled) stops it: the batches committed stay, and the report says
        ``interrupted``. A device that clearly has no room for the memories not stored yet
        refuses it before anything is stored (``_import_room``), and one that fills during
        it stops it after what was committed; the report says so in ``stopped``, counting
        what is stored. Raises UsageError (unknown format or retention_from,
        --conversation on a non-LoCoMo file) or BadInputError (unreadable or malformed
        file).
        """
        started = time.perf_counter()
        if retention_from not in RETENTION_FROM:
            raise UsageError(f"unknown --retention-from {retention_from!r}; choose {' or '.join(RETENTION_FROM)}")
        now = self.clock()
        used, records = open_records(path, fmt, self.user(user), now, conversation)
        if conversation is not None and used != "locomo":
            raise UsageError("--conversation applies to LoCoMo files only")
        if used == "memcli":
            return self._import_export(path, progress, started, user)
        sizes: dict[str, int] = {}
        users: Counter[str] = Counter()
        for memory in records():
            if memory.id not in sizes:
                sizes[memory.id] = len(memory.text.encode("utf-8"))
                users[memory.user] += 1
        if not sizes:
            raise BadInputError(f"{path}: no memories found in this {used} file")
        found = len(sizes)
        refused, existing = self._import_room(sizes)
        sizes.clear()
        if refused:
            return ImportReport(
                str(path), used, found, 0, existing, dict(users), time.perf_counter() - started, stopped=refused
            )

        def prepare(memory: Memory) -> None:
            memory.strength = self.initial_strength(memory)
            if retention_from == "import" and memory.created_at < now:
                memory.retained_from = now

        added, done, interrupted, full = self._store_in_batches(records(), found, progress, prepare)
        return ImportReport(
            str(path),
            used,
            found,
            added,
            done - added,
            dict(users),
            time.perf_counter() - started,
            interrupted,
            self._stopped(full, found, added, done),
        )

    def _import_room(self, sizes: Mapping[str, int]) -> tuple[str, int]:
        """Whether the device of the store clearly has no room for an import, before
        anything is stored: the memories found (``sizes``: id -> bytes of text) not stored
        yet take more than the free space by the measured figures (``room_measured``; the
        batches are checked again, with room to spare, as they are written). Returns the
        DiskFullError message that refuses it ("nothing was stored"; empty when there is
        room) and how many of the memories are stored already. Raises ReadOnlyStoreError
        (DiskFullError for a store opened from its copy for want of room) before anything
        is read, as the first write would."""
        free = self.store.free_bytes()
        if free is None:
            return "", 0
        with self.store.transaction():
            if self.store.read_only:  # refused in the same transaction: no "read-only store" notice before the error
                raise self.store.read_only_error()
            existing = self.store.existing_ids(list(sizes))
        new = [size for memory_id, size in sizes.items() if memory_id not in existing]
        if not new:
            return "", len(existing)
        dimension = len(self.embedder.embed_one("memcli"))
        needed = room_measured(len(new), dimension, sum(new))
        if free >= needed:
            return "", len(existing)
        return (
            f"no space left on {device_of(self.paths.data_dir)}: the import's {len(new)} new memories need about "
            f"{needed / 2**20:.1f} MiB, {free / 2**20:.1f} MiB are free; nothing was stored"
        ), len(existing)

    @staticmethod
    def _stopped(full: DiskFullError | None, found: int, added: int, done: int) -> str:
        """The message of an import stopped by a full device (``full``), counting what it
        stored; empty when it stored everything all the same (Chroma took the last batch,
        the recall index did not: it is repaired from Chroma at the next command)."""
        stored = done
        if full is None or stored >= found:
            return ""
        return (
            f"{full.message.split(';')[0]}; the import stopped: {stored} of {found} memories are stored "
            f"({added} new, {done - added} already stored), {found - stored} are not: free some space and run "
            "the same import again to store them"
        )

    def _store_in_batches(
        self,
        memories: Iterable[Memory],
        found: int,
        progress: Progress | None,
        prepare: Callable[[Memory], None] | None = None,
        vectors: dict[str, Any] | None = None,
    ) -> tuple[int, int, bool, DiskFullError | None]:
        """Store an import's ``memories`` (``found`` of them, duplicates left out) in
        batches (``IMPORT_BATCH``, ``IMPORT_BATCH_SECONDS``), each embedded while the one
        before is committed by a second thread (``add_memories`` in two halves), so the
        embedder does not wait for the store and memory stays bounded (two batches)
        whatever the file's size; ``prepare`` readies each memory of a batch before it is stored;
        ``vectors``: id -> stored vector to use instead of embedding (each taken out as its
        batch is stored). Returns (added, reached, interrupted, full): Ctrl-C or an
        ``Interrupted`` from ``progress`` stops it after the batches committed; so does a
        full device (``full``: its DiskFullError), what of its batch reached the store counted."""
        seen: set[str] = set()
        counts = {"added": 0, "done": 0}
        interrupted = False
        full: DiskFullError | None = None
        size = [min(64, IMPORT_BATCH)]
        batches = import_batches(memories, size, seen)
        # One batch is stored (a thread) while the next is embedded (this one): the store
        # is taken only to check what a batch already holds, between two writes.
        pending: tuple[Future[set[str]], list[Memory], set[str]] | None = None

        def finish() -> None:
            """Wait for the batch being stored and count it; raises its DiskFullError."""
            nonlocal pending
            if pending is None:
                return
            future, batch, stored = pending
            try:
                future.result()  # a Ctrl-C while it waits leaves it pending, to wait for again
            except DiskFullError:
                pending = None
                counts["added"] += len(stored)
                counts["done"] += len(stored)
                raise
            pending = None
            counts["added"] += len(stored)
            counts["done"] += len(batch)
            self.tell_saved(stored=counts["added"], total=found)
            if progress is not None:
                progress(counts["done"], found)

        def found_in(batch: list[Memory] | None) -> Embedded | None:
            """``batch`` prepared, and what of it the store lacks (None at the end)."""
            if batch is None:
                return None
            for memory in batch:
                if prepare is not None:
                    prepare(memory)
            return self._new_of(batch)

        def embedded(part: Embedded) -> Embedded:
            """``part`` embedded; the next batch sized from the time it took a memory."""
            started = time.perf_counter()
            batch = part.batch
            given = {m.id: vectors.pop(m.id) for m in batch if m.id in vectors} if vectors else None
            queued = len(pending[1]) if pending is not None else 0
            within = None if progress is None else batch_progress(progress, counts["done"] + queued, len(batch), found)
            self._embed(part, progress=within, vectors=given)
            each = (time.perf_counter() - started) / len(batch)
            size[0] = max(min(16, IMPORT_BATCH), min(IMPORT_BATCH, int(IMPORT_BATCH_SECONDS / max(each, 1e-6))))
            return part

        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="memcli-import-store") as writer:
            try:
                current = found_in(next(batches, None))
                while current is not None:
                    embedded(current)  # while the previous batch is stored
                    finish()
                    following = found_in(next(batches, None))  # the store is free: nothing written now
                    stored: set[str] = set()
                    pending = (writer.submit(self._add_embedded, current, stored), current.batch, stored)
                    current = following
                finish()
            except (KeyboardInterrupt, Interrupted):
                # The batch being stored is stored whole (its write is not cut): count it.
                with contextlib.suppress(DiskFullError):
                    finish()
                interrupted = True
            except DiskFullError as exc:
                full = exc
        return counts["added"], counts["done"], interrupted, full

    def _import_export(
        self, path: Path, progress: Progress | None, started: float, user: str | None = None
    ) -> ImportReport:
        """Import a memcli export (``memcli.formats.export``) as it was exported: every memory with
        its state (strength, recall count, pins, archiving, feedback, dates...), then the
        consolidation progress and the history. The file is read whole first, so a
        malformed one stores nothing; memories already stored are skipped (and keep their
        state), so importing it twice adds nothing. The file's vectors are stored as they
        are when it has them and its embedder is the configured one, else the memories are
        embedded again. Ctrl-C stops it as it stops any import (``_store_in_batches``).
        Raises BadInputError (malformed file, no memories), UsageError (``user`` given, and
        the file holds memories of another user: an export keeps its users)."""
        archive = open_archive(path)
        users: Counter[str] = Counter()
        sizes: dict[str, int] = {}
        reuse = bool(archive.header.get("vectors")) and same_embedder(
            archive.embedder, embedder_identity(self.embedder)
        )
        dimension = 0
        for kind, item in archive.records():
            if kind == "memory" and item[0].id not in sizes:
                sizes[item[0].id] = len(item[0].text.encode("utf-8"))
                users[item[0].user] += 1
                if reuse and item[1] is not None:
                    # vectors stored as they are must have the embedder's dimension (Chroma refuses others)
                    dimension = dimension or int(
                        getattr(self.embedder, "dimension", 0) or len(self.embedder.embed_one("dimension"))
                    )
                    if len(item[1]) // 4 != dimension:
                        raise BadInputError(
                            f"{path}: memory {item[0].id} has a vector of {len(item[1]) // 4} dimensions;"
                            f" the embedder {archive.embedder} makes {dimension}"
                        )
        if not sizes:
            raise BadInputError(f"{path}: no memories found in this memcli file")
        if user is not None and set(users) != {user}:
            # an export keeps its users: --user cannot move them, and silently ignoring it misleads
            raise UsageError(
                f"{path} is a memcli export of {', '.join(sorted(users))}; it is imported as it was exported,"
                " to its own users: import it without --user"
            )
        found = len(sizes)
        refused, existing = self._import_room(sizes)
        sizes.clear()  # the storing pass keeps its own
        if refused:
            return ImportReport(
                str(path), "memcli", found, 0, existing, dict(users), time.perf_counter() - started, stopped=refused
            )
        vectors: dict[str, Any] = {}

        def memories() -> Iterator[Memory]:
            for kind, item in archive.records():
                if kind == "memory":
                    memory, vector = item
                    if reuse and vector is not None:
                        vectors[memory.id] = np.frombuffer(vector, dtype=np.float32)
                    yield memory

        added, done, interrupted, full = self._store_in_batches(memories(), found, progress, vectors=vectors)
        if not interrupted and full is None:
            try:
                self._restore_records(archive)
            except KeyboardInterrupt:
                interrupted = True
        return ImportReport(
            str(path),
            "memcli",
            found,
            added,
            done - added,
            dict(users),
            time.perf_counter() - started,
            interrupted,
            self._stopped(full, found, added, done),
        )

    def _restore_records(self, archive: Archive) -> None:
        """Record an export's consolidation progress and history in the sidecar, a page
        (``memcli.formats.export.PAGE``) at a time; an event or row already recorded is recorded once."""
        history: list[HistoryEntry] = []
        rows: list[tuple[str, str, str, str, float]] = []

        def flush() -> None:
            with deferred_interrupt(), self.store.transaction():
                if self.store.read_only:
                    raise self.store.read_only_error()
                self.store.sidecar.record(history)
                self.store.sidecar.restore_progress(rows)
            history.clear()
            rows.clear()

        for kind, item in archive.records():
            if kind == "history":
                history.append(item)
            elif kind == "progress":
                rows.append(item)
            if len(history) + len(rows) >= EXPORT_PAGE:
                flush()
        flush()

    def export(
        self, user: str | None = None, all_users: bool = False, history: bool = False, vectors: bool = False
    ) -> tuple[dict[str, Any], Iterator[tuple[str, list[str]]]]:
        """The header of an export of ``user``'s memories (every user's with ``all_users``)
        and its lines, a page at a time (``memcli.formats.export.export_pages``), journaled
        memories stored first. The header names the embedder that made the store's
        vectors (the configured one for an empty store). Raises EmbedderChangedError for ``vectors`` while a reindex
        is unfinished (the vectors are of two embedders)."""

        self.flush_pending()
        with self.store.transaction():
            recorded = self.store.embedder_record()
        if vectors and recorded is not None and recorded.startswith(REINDEXING):
            raise EmbedderChangedError(
                "a reindex of the store was interrupted: run memcli reindex before exporting vectors"
            )
        who = None if all_users else self.user(user)
        head = header(recorded or embedder_identity(self.embedder), who, history, vectors, self.clock(), __version__)
        return head, export_pages(self.store, head, who, history, vectors)

    # reading ----------------------------------------------------------------

    def recall(
        self,
        query: str,
        user: str | None = None,
        k: int = 10,
        kind: str | None = None,
        since: str | float | None = None,
        reinforce: bool = True,
        sample: bool = False,
        seed: int | None = None,
        tags: Sequence[str] = (),
        at: str | None = None,
    ) -> list[Recalled]:
        """The ``k`` memories most relevant to ``query``, ranked (see ``retrieval``).

        ``at``: a date (as ``--since`` takes them): recall as of that day, what was learned
        by its end and the graph's relations that held then (``Recaller.recall``).

        ``reinforce``: count the returned memories as recalled (strength up, clock reset).
        ``sample``: roulette-wheel selection among the top 3k candidates by score
        (``seed`` makes it reproducible). ``tags``: only memories that carry every one of
        them. Raises UsageError for an unknown kind, k < 1, or an unreadable ``since`` date;
        NotFoundError for a user without memories in a store where others have some
        (``known_user``, as ``ask``).
        """
        if kind is not None and kind not in KIND_VALUES:
            raise UsageError(f"unknown kind {kind!r}; choose one of {', '.join(KIND_VALUES)}")
        if k < 1:
            raise UsageError("-k must be at least 1")
        now = self.clock()
        since_ts = parse_since(since, now) if isinstance(since, str) else since
        as_of = parse_day(at, "--at", now)
        if not query.strip():
            raise BadInputError("the query is empty")
        user = self.known_user(user)  # a mistyped --user is not found, as ask says (exit 6)
        self.check_embedder()
        # What loads a model or embeds (the query and what it says, journaled memories,
        # windows left to fill) runs before the store is taken: other memcli processes wait on it.
        vector = self.recaller.encode(query)
        parsed = self.recaller.parse(query, now)
        self.flush_pending()
        self.recaller.prepare(user)
        with self.store.transaction():
            ranking = Ranking.from_settings(self.settings, user)
            hits = self.recaller.recall(
                query,
                user,
                k=3 * k if sample else k,
                kind=kind,
                since=since_ts,
                ranking=ranking,
                now=now,
                vector=vector,
                trim=not sample,
                tags=tags,
                parsed=parsed,
                at=as_of,
            )
            if sample:
                hits = without_repeated_lines(roulette(hits, k, random.Random(seed)), k)
            if reinforce:
                self.reinforce([hit.memory for hit in hits], now)
        return hits

    def reinforce(self, memories: Sequence[Memory], now: float | None = None) -> None:
        """See ``Changes.reinforce``. In a read-only store (``MemoryStore.read_only``), or
        on a device without room for it (``MemoryStore.room_error``, or a write that meets
        a full device), the memories are not reinforced, and the store's ``notice`` says so:
        a recall reads on."""
        if not memories:
            return
        if self.store.read_only and not self.store.full_reason:
            self.store.notice("read-only store: recall not reinforced")
            return
        with self.store.transaction():
            refused = self.store.room_error(ROOM_PER_MEMORY * len(memories))
            if refused is not None:
                self.store.notice(f"{refused.message.split(';')[0].split(': ')[0]}: recall not reinforced")
                return
            with self.store.optional_write("recall not reinforced"):
                self.changes.reinforce(memories, now)

    @property
    def changes(self) -> Changes:
        """What changes stored memories: reinforcement, pins, feedback, forgetting,
        restoring, deleting (``memcli.recall.changes``)."""
        return Changes(self.store, self.settings, self.clock)

    @property
    def assistant(self) -> Assistant:
        """What builds chat and ask prompts from memory and answers (``memcli.recall.assistant``)."""
        return Assistant(self)

    def consolidated(self, user: str) -> Context:
        """See ``Assistant.consolidated``."""
        return self.assistant.consolidated(user)

    def context(
        self, query: str, user: str, exclude: set[str] | None = None, conversation: Sequence[Message] = ()
    ) -> Context:
        """See ``Assistant.context``."""
        return self.assistant.context(query, user, exclude, conversation)

    def reinforce_recalled(self, recalled: Sequence[Recalled]) -> None:
        """See ``Assistant.reinforce``."""
        self.assistant.reinforce(recalled)

    def today(self) -> str:
        """See ``Assistant.today``."""
        return self.assistant.today()

    def ask(self, question: str, user: str | None = None) -> Answer:
        """See ``Assistant.ask``; ``user`` must have memories (``known_user``: raises
        NotFoundError)."""
        return self.assistant.ask(question, self.known_user(user))

    def summarize(self, previous: str, turns: Sequence[Message]) -> str:
        """See ``Assistant.summarize``."""
        return self.assistant.summarize(previous, turns)

    def completions(self, what: str, prefix: str = "", user: str | None = None) -> list[tuple[str, str]]:
        """Shell completions of ``prefix`` as (value, help): memory ids, users or kinds
        (``what``), from the recall index alone (no model is touched). Raises UsageError
        for another ``what``."""
        if what not in WHAT:
            raise UsageError(f"cannot complete {what!r}; choose one of {', '.join(WHAT)}")
        with self.store.transaction():
            return self.store.sidecar.completions(what, prefix, user)

    def get(self, memory_id: str) -> Memory:
        """The memory with this id (or unique prefix). Raises NotFoundError."""
        return self.store.get(memory_id)

    def delete(self, memory_id: str) -> Memory:
        """Delete one memory for good, with what was made from it, and compact the store
        (see ``Changes.purge``); returns the memory. Raises NotFoundError."""
        return self.changes.delete(memory_id).purged[0]

    def purge_user(self, user: str) -> dict[str, Any]:
        """Delete every memory of ``user`` for good, with their history and consolidation
        progress, and compact the store (``Changes.purge_user``). ``user`` is named
        explicitly (no default user: it is destructive). Returns {user, purged,
        history_events, journal_files, compaction_seconds, duration_seconds}.

        Raises UsageError for an empty user name."""
        if not user or not user.strip():
            raise UsageError("name the user to purge")
        purged, events, files, compaction, seconds = self.changes.purge_user(user)
        return {
            "user": user,
            "purged": purged,
            "history_events": events,
            "journal_files": files,
            "compaction_seconds": round(compaction, 3),
            "duration_seconds": round(seconds, 3),
        }

    def edit(
        self,
        memory_id: str,
        text: str | None = None,
        importance: float | None = None,
        tags: Sequence[str] = (),
        untags: Sequence[str] = (),
    ) -> Memory:
        """Change a memory's text, importance or tags (``tags`` added, ``untags`` removed);
        returns it as stored. The memory keeps its id, strength, recall count, pin and
        feedback.

        A new text is embedded again (outside the store lock) and replaces the old one in
        Chroma and in the recall index (``MemoryStore.upsert``), which also refreshes the
        lexical context and windows of its session's other turns; the history records the
        edit (event EDIT, old and new text). An edited turn counts as new for the next
        consolidation's day and fact stages: its day's summary and portrait are written
        again (and folded into the global ones), and its message pair's facts extracted
        again and reconciled with the stored ones. Importance and tags alone change the
        metadata only.

        Raises NotFoundError (no such id), UsageError (nothing to change), BadInputError
        (an empty text, or one longer than ``memcli.text.chunking.MAX_CHARS``), UsageError (an importance outside 0..1), EmbedderChangedError as
        ``check_embedder`` does.
        """
        if text is None and importance is None and not tags and not untags:
            raise UsageError("nothing to change: give --text, --importance, --tag or --untag")
        if text is not None:
            text = text.strip()
            if not text:
                raise BadInputError("the new text is empty")
            if size(text) > MAX_CHARS:
                # one memory keeps one id: a text that remember would chunk cannot replace it
                raise BadInputError(
                    f"the new text is {len(text):,} characters; one memory holds at most {MAX_CHARS:,}"
                    f" ({MAX_CHARS // WIDE_WEIGHT:,} CJK characters): remember a longer text as notes"
                )
        if importance is not None and not 0.0 <= importance <= 1.0:
            raise UsageError(f"--importance must be between 0 and 1, not {importance:g}")
        memory = self.get(memory_id)
        old_text = memory.text
        vector = None
        if text is not None and text != old_text:
            identity = embedder_identity(self.embedder)
            self.check_embedder()
            memory.text = text
            vector = self.embedder.embed([memory.index_text()])[0]
        with self.store.transaction():
            current = self.store.get(memory.id)  # what changed while the text was embedded stays
            if importance is not None:
                current.importance = importance
            current.tags = sorted((set(current.tags) | {t.strip() for t in tags if t.strip()}) - set(untags))
            if vector is None:
                self.store.update([current])
                return current
            current.text = text  # type: ignore[assignment]
            self.store.sidecar.record(
                [HistoryEntry(current.id, current.user, current.kind, "EDIT", old_text, current.text, self.clock())]
            )
            self.store.upsert([current], [vector], embedder=identity)
            # What the old text superseded holds again, unless the new text supersedes it too.
            self.changes.reopen([current.id])
            with self.store.optional_write("not checked for the memories it supersedes"):
                self.changes.supersede([current])
            # The next consolidation writes its day's summaries again and extracts its facts anew.
            for stage in ("day", "fact"):
                self.store.sidecar.unmark_consolidated([current.id], stage)
        return current

    def list_memories(
        self,
        user: str | None = None,
        kind: str | None = None,
        limit: int = 20,
        archived: bool = False,
        tags: Sequence[str] = (),
    ) -> list[Memory]:
        """The ``limit`` newest active memories of ``user`` (0: all), newest first; the
        archived (forgotten) ones instead when ``archived``; only those that carry every
        one of ``tags``. Facts that have ended (UPDATE, DELETE) are not listed; ``history``
        shows them."""
        if kind is not None and kind not in KIND_VALUES:
            raise UsageError(f"unknown kind {kind!r}; choose one of {', '.join(KIND_VALUES)}")
        if limit < 0:
            raise UsageError("--limit must be 0 (all) or more")
        self.flush_pending()
        with self.store.transaction():
            memories = self.store.memories(
                user=self.user(user), kind=kind, archived=archived, ended=None if archived else False
            )
        wanted = set(tags)
        if wanted:
            memories = [m for m in memories if wanted.issubset(m.tags)]
        memories.reverse()
        return memories[:limit] if limit else memories

    def _configured_embedder(self) -> str:
        """The identity of the embedder the settings name, or why there is none (stats
        must work to diagnose a bad setting)."""
        try:
            return embedder_identity(self.embedder)
        except ModelError as exc:
            return f"unusable: {exc.message}"

    def stats(self, user: str | None = None) -> dict[str, Any]:
        """Counts by kind and user, the day range, a retention histogram (10 bins over
        0..1 of active memories), fading / archived / pinned counts, pending, and the size
        in bytes of the store (Chroma and the sidecar database)."""
        user = self.user(user)
        now = self.clock()
        with self.store.transaction():
            everyone = self.store.memories()
            recorded = self.store.embedder_record()
        mine = [m for m in everyone if m.user == user]
        active = [m for m in mine if not m.archived]
        decay, unit = self.settings.decay_for(user), UNIT_SECONDS[self.settings.time_unit]
        retentions = [retention(m, now, decay, unit) for m in active]
        files = [*self.paths.store_dir.rglob("*"), self.paths.database] if self.paths.store_dir.exists() else []
        size = sum(p.stat().st_size for p in files if p.is_file())
        return {
            "user": user,
            "memories": len(active),
            "by_kind": dict(Counter(m.kind for m in active)),
            "first_day": min((m.day for m in active), default=None),
            "last_day": max((m.day for m in active), default=None),
            "sessions": len({m.session for m in active if m.session}),
            "retention_histogram": histogram(retentions),
            "fading": sum(r < self.settings.forget_threshold for r in retentions),
            "archived": len(mine) - len(active),
            "pinned": sum(m.pinned for m in active),
            "all_users": dict(Counter(m.user for m in everyone)),
            "pending": len(self.pending()),
            "store_bytes": size,
            "embedder": recorded,
            "embedder_configured": self._configured_embedder(),
        }

    def doctor(self, model: bool = False) -> schema.DoctorReport:
        """The privacy and writability check of every path memcli uses (``memcli.library.doctor``):
        reads modes only, loads no model and does not open the store; ``model``: the
        configured chat model's checks too (a model server is asked)."""

        return check(self.paths, self.settings if model else None)

    # forgetting ---------------------------------------------------------------

    def forget(
        self,
        user: str | None = None,
        all_users: bool = False,
        stochastic: bool = False,
        seed: int | None = None,
        dry_run: bool = False,
        purge: bool = False,
    ) -> ForgetReport:
        """The forget pass over ``user``'s memories, or every user's (``all_users``); see
        ``Changes.forget``."""
        return self.changes.forget(None if all_users else self.user(user), stochastic, seed, dry_run, purge)

    def archive(self, memory_id: str) -> Memory:
        """See ``Changes.archive``."""
        return self.changes.archive(memory_id)

    def restore(self, memory_id: str) -> Memory:
        """See ``Changes.restore``."""
        return self.changes.restore(memory_id)

    def pin(self, memory_id: str, pinned: bool = True) -> Memory:
        """See ``Changes.pin``."""
        return self.changes.pin(memory_id, pinned)

    def feedback(self, memory_id: str, vote: int) -> Memory:
        """See ``Changes.feedback``."""
        return self.changes.feedback(memory_id, vote)

    # consolidation ------------------------------------------------------------------

    def consolidate(
        self,
        user: str | None = None,
        all_users: bool = False,
        since: str | None = None,
        until: str | None = None,
        dry_run: bool = False,
        warn: Callable[[str], None] | None = None,
        progress: Progress | None = None,
        retry: bool = False,
    ) -> ConsolidationReport:
        """The consolidation pass (``memcli.consolidation.consolidate``) for ``user`` or every user, over
        the days from ``since`` to ``until`` (dates, inclusive). Idempotent and resumable;
        ``retry`` also redoes the work whose model output was invalid in an earlier run.

        Raises StoreLockedError when another consolidation runs longer than lock_timeout,
        UsageError for an unreadable date, ModelError when the chat model cannot load.
        """
        # heavy: needed only to take a lock
        import filelock

        # rare path: consolidation and the graph load on first use, not with every verb
        from memcli.consolidation.consolidate import Consolidator

        first, last = parse_day(since, "--since", self.clock()), parse_day(until, "--until", self.clock())
        if first and last and first > last:
            raise UsageError(f"--since {first} is after --until {last}")
        if not dry_run:
            self.check_embedder()
        lock = filelock.FileLock(
            str(self.paths.consolidate_lock), timeout=self.settings.lock_timeout, mode=PRIVATE_FILE
        )
        try:
            private_dir(self.paths.data_dir)
            lock.acquire()
        except filelock.Timeout:
            raise StoreLockedError(
                f"another memcli consolidate is running (waited {self.settings.lock_timeout:g} s for {self.paths.consolidate_lock})"
            ) from None
        except OSError as exc:
            fault = self.store.fault(exc)
            if fault is None:
                raise
            raise fault from None
        try:
            users = self.store.users() if all_users else [self.user(user)]
            return Consolidator(self, warn, progress).run(users, first, last, dry_run, retry)
        finally:
            lock.release()

    # the graph memory ------------------------------------------------------------------

    def graph_show(
        self, name: str | None = None, user: str | None = None, at: str | None = None, depth: int = 1
    ) -> dict[str, Any]:
        """The entity ``name`` (the user themself when None) of ``user``'s graph: the
        entity, its typed relations (current and past, or those that held on ``at``, a date)
        and its neighbours up to ``depth`` edges away (``memcli.consolidation.graph_memory``). Returns
        {user, at, entity, relations, neighbours}: ``Entity``, ``Relation`` objects and
        (entity, depth, label, count) tuples. Raises NotFoundError (no such entity),
        UsageError (depth below 1, an unreadable date)."""
        # rare path: consolidation and the graph load on first use, not with every verb
        from memcli.consolidation.graph_memory import find_entity, neighbourhood
        from memcli.store.graph import MENTIONED_WITH

        if depth < 1:
            raise UsageError("--depth must be 1 or more")
        user = self.user(user)
        day = parse_day(at, "--at", self.clock())
        with self.store.transaction():
            graph = self.store.sidecar.graph
            entity = find_entity(graph, user, name)
            relations = [
                r
                for r in graph.relations(user, entity.id)
                if r.relation != MENTIONED_WITH and (day is None or r.valid_at(day))
            ]
            return {
                "user": user,
                "at": day,
                "entity": entity,
                "aliases": graph.aliases(entity.id),
                "mentions": graph.mention_counts([entity.id]).get(entity.id, 0),
                "relations": relations,
                "neighbours": neighbourhood(graph, user, entity, depth, day),
            }

    def graph_list(self, user: str | None = None, type: str | None = None) -> list[tuple[Any, list[str], int]]:
        """``user``'s entities (of ``type`` when given), most mentioned first: (entity,
        aliases, mentions)."""
        user = self.user(user)
        with self.store.transaction():
            graph = self.store.sidecar.graph
            entities = graph.entities(user, type)
            counts = graph.mention_counts([e.id for e in entities])
            return [(e, graph.aliases(e.id), counts.get(e.id, 0)) for e in entities]

    def graph_export(self, user: str | None = None, format: str = "graphml") -> dict[str, Any]:
        """``user``'s graph as a document (``memcli.consolidation.graph_memory.export_graph``): {user,
        format, nodes, edges, text}. Raises UsageError for an unknown format."""
        # rare path: consolidation and the graph load on first use, not with every verb
        from memcli.consolidation.graph_memory import export_graph

        user = self.user(user)
        with self.store.transaction():
            text, nodes, edges = export_graph(self.store.sidecar.graph, user, format)
        return {"user": user, "format": format, "nodes": nodes, "edges": edges, "text": text}

    def graph_merge(self, name: str, into: str, user: str | None = None) -> tuple[Any, list[str], int]:
        """Merge entity ``name`` into entity ``into`` (one person under two names, which
        memcli never merges by itself on similarity): ``name`` becomes an alias, its
        mentions and relations move over; the relation memories follow (UPDATE events).
        Returns (entity, aliases, mentions) of the merged one. Raises NotFoundError, UsageError
        (the same entity twice)."""
        # rare path: consolidation and the graph load on first use, not with every verb
        from memcli.consolidation.graph_memory import GraphBuilder, find_entity

        user = self.user(user)
        with self.store.transaction():
            graph = self.store.sidecar.graph
            source, target = find_entity(graph, user, name), find_entity(graph, user, into)
            if source.id == target.id:
                raise UsageError(f"{name!r} and {into!r} are already one entity")
            graph.merge(source.id, target.id)
        GraphBuilder(self.store, self.embedder, self.clock, self.initial_strength).sync(user)
        return self._graph_entity(user, target.id)

    def graph_rename(self, name: str, new: str, user: str | None = None) -> tuple[Any, list[str], int]:
        """Give entity ``name`` the name ``new`` (the old one stays as an alias); the relation
        memories follow. Returns (entity, aliases, mentions). Raises NotFoundError,
        UsageError (``new`` is empty or another entity's name: merge them instead),
        BadInputError (``new`` is not text, holds a control character or is longer than
        ``MAX_ENTITY_NAME``: ``check_entity_name``)."""
        # rare path: consolidation and the graph load on first use, not with every verb
        from memcli.consolidation.graph_memory import GraphBuilder, find_entity

        new = new.strip()
        if not normalise(new):
            raise UsageError("the new name is empty")
        check_entity_name(new)
        user = self.user(user)
        with self.store.transaction():
            graph = self.store.sidecar.graph
            entity = find_entity(graph, user, name)
            try:
                graph.rename(entity.id, new, normalise(new))
            except ValueError as exc:
                raise UsageError(str(exc)) from None
        GraphBuilder(self.store, self.embedder, self.clock, self.initial_strength).sync(user)
        return self._graph_entity(user, entity.id)

    def _graph_entity(self, user: str, entity_id: int) -> tuple[Any, list[str], int]:
        with self.store.transaction():
            graph = self.store.sidecar.graph
            entity = graph.entity(entity_id)
            if entity is None:
                raise NotFoundError(f"no entity {entity_id} in the graph of {user!r}")
            return entity, graph.aliases(entity_id), graph.mention_counts([entity_id]).get(entity_id, 0)

    def portraits(self, user: str | None = None, daily: bool = False) -> list[Memory]:
        """``user``'s global portrait (a list of one, or none yet), or with ``daily`` every
        daily portrait, oldest day first (MemoryBank's user portrait)."""
        return self._consolidated(user, Kind.PORTRAIT_DAILY if daily else Kind.PORTRAIT_GLOBAL)

    def summaries(self, user: str | None = None, day: str | None = None, running: bool = False) -> list[Memory]:
        """``user``'s global event summary, or the daily event summary of ``day``, or with
        ``running`` the running memory: a list of one, or empty when there is none yet.

        Raises UsageError for an unreadable day."""
        if running:
            return self._consolidated(user, Kind.RUNNING_SUMMARY)
        if day is None:
            return self._consolidated(user, Kind.EVENT_GLOBAL)
        wanted = parse_day(day, "--day", self.clock())
        return [m for m in self._consolidated(user, Kind.EVENT_DAILY) if m.day == wanted]

    def _consolidated(self, user: str | None, kind: Kind) -> list[Memory]:
        with self.store.transaction():
            memories = self.store.memories(user=self.user(user), kind=kind.value, archived=False)
        return sorted(memories, key=lambda m: (m.day, m.created_at))

    def history(self, memory_id: str | None = None, user: str | None = None, limit: int = 20) -> list[HistoryEntry]:
        """The history of one memory (an id or unique prefix of ``MIN_PREFIX``+ characters, oldest event
        first), or without an id the newest ``limit`` events of ``user`` (0: all).

        Raises NotFoundError when no memory in the store or the history has that id."""
        if limit < 0:
            raise UsageError("--limit must be 0 (all) or more")
        with self.store.transaction():
            sidecar = self.store.sidecar
            if memory_id is None:
                return sidecar.history(user=self.user(user), limit=limit)
            try:
                full = self.store.get(memory_id).id
            except NotFoundError:
                matches = sidecar.history_ids(memory_id) if len(memory_id) >= MIN_PREFIX else []
                if len(matches) != 1:
                    detail = (
                        f"is ambiguous ({len(matches)} memories)"
                        if matches
                        else f"matches no memory or history{short_prefix(memory_id)}"
                    )
                    raise NotFoundError(f"memory id {memory_id!r} {detail}") from None
                full = matches[0]
            return sidecar.history(memory_id=full)


MAX_ENTITY_NAME = 200
"""The longest name (characters) ``graph rename`` gives an entity."""
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def check_entity_name(name: str) -> None:
    """Raise BadInputError for an entity name that memcli's text rule refuses
    (``memcli.memory.unstorable``), that holds a control character (a line break, a tab:
    a name is one line, and XML cannot hold most of them) or that is longer than
    ``MAX_ENTITY_NAME`` characters."""
    reason = unstorable(name)
    if reason:
        raise BadInputError(f"the new name {reason}")
    control = _CONTROL.search(name)
    if control:
        raise BadInputError(
            f"the new name holds a control character U+{ord(control.group()):04X} (at character {control.start() + 1})"
        )
    if len(name) > MAX_ENTITY_NAME:
        raise BadInputError(f"the new name is {len(name):,} characters; a name has at most {MAX_ENTITY_NAME}")


def note_chunks(text: str, user: str) -> list[tuple[str, str]]:
    """(id, text) of the notes ``Memcli.remember`` stores for ``text`` (stripped) of
    ``user``: the text itself, its id derived from its content; or, for a text longer than
    ``memcli.text.chunking.MAX_CHARS``, its chunks, each id derived from the whole text and the
    chunk's place (the same text remembered twice is the same notes)."""
    parts = list(chunks(text))
    if len(parts) == 1 and parts[0] == text:
        return [(stable_id("note", user, text), text)]
    return [(stable_id("note", user, text, f"part {index + 1}"), part) for index, part in enumerate(parts)]
