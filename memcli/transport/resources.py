"""What a process keeps loaded between requests: the store, the embedders, the recallers
(each user's recall index in memory) and the chat model.

The service keeps one ``Resources`` for its lifetime over its resident store; a command
run in-process keeps one for the command (a chat session's many requests then share one
model load). Each request gets an ``Engine`` over them (``Resources.engine``).
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable, Generator, Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from memcli.config import Paths, Settings, load_settings
from memcli.dates import clock_from_env
from memcli.errors import Interrupted
from memcli.library import engine as engines
from memcli.library.engine import Engine
from memcli.library.verbs import INTERACTIVE_VERBS
from memcli.models.embedding import embedder_identity, export_held, length_batches
from memcli.models.llm import ChatModel, Message
from memcli.models.llm_server import ServerChatModel
from memcli.store.store import MemoryStore, Server

if TYPE_CHECKING:
    from memcli.recall.retrieval import Recaller

log = logging.getLogger("memcli.service")


Emit = Callable[..., None]


def clock_for(env: Mapping[str, str], now: str | None) -> Callable[[], float]:
    """The clock of one request: ``--now``, else the client's ``MEMCLI_NOW``, else the
    time. Raises UsageError for an unreadable time, naming where it came from."""
    if now:
        return clock_from_env({"MEMCLI_NOW": now}, option="--now")
    return clock_from_env(dict(env))


GATE_POLL = 0.05
"""Seconds between two checks for a stop while a request waits for the chat model."""


class ModelGate:
    """One user of the chat model at a time (llama.cpp is not thread-safe); an interactive
    holder waiting goes before any waiting background one (consolidation). A prompt's
    start evaluated ahead (``SharedChatModel.start_prime``) is counted from when it is
    asked for until it ends, so that a chat turn can stop it before recalling
    (``settle``)."""

    def __init__(self) -> None:
        self._condition = threading.Condition()
        self._busy = False
        self._interactive_waiting = 0
        self._priming = 0
        self._settling = 0

    def priming(self, change: int) -> None:
        """Count a prime asked for (+1) or ended (-1)."""
        with self._condition:
            self._priming += change
            self._condition.notify_all()

    @property
    def settling(self) -> bool:
        """Whether a chat turn waits for the primes to end (``settle``): a prime stops."""
        return self._settling > 0

    def settle(self, stop: Callable[[], bool] | None = None) -> None:
        """Stop the primes asked for or running (they see ``settling``; what they evaluated
        whole is kept) and wait until they have ended. A chat turn that comes while its
        prompt's start is still evaluated ahead evaluates it itself, in the one llama.cpp
        call that evaluates the rest: on 2 cores at load 9, the system text's 93 tokens took
        9.9 s evaluated alongside the first recall, 5.5 s after it, and the turn's
        evaluation grew by a call whose cost is more its graph's than its tokens'. ``stop()``
        True ends the wait in Interrupted, as ``hold``'s."""
        with self._condition:
            self._settling += 1
            try:
                while self._priming:
                    self._condition.wait(GATE_POLL)
                    if stop is not None and stop():
                        raise Interrupted("interrupted")
            finally:
                self._settling -= 1

    @contextlib.contextmanager
    def hold(self, interactive: bool, stop: Callable[[], bool] | None = None) -> Iterator[None]:
        """Hold the model for the block; see the class docstring. While it waits, ``stop()``
        is asked every ``GATE_POLL`` seconds: when it says True (the client's Ctrl-C), the
        wait ends in Interrupted."""
        with self._condition:
            if interactive:
                self._interactive_waiting += 1
            try:
                while self._busy or (not interactive and self._interactive_waiting):
                    self._condition.wait(GATE_POLL if stop is not None else None)
                    if stop is not None and stop():
                        raise Interrupted("interrupted")
            finally:
                if interactive:
                    self._interactive_waiting -= 1
            self._busy = True
        try:
            yield
        finally:
            with self._condition:
                self._busy = False
                self._condition.notify_all()


def _generator(pieces: Iterable[str]) -> Generator[str, None, None]:
    """``pieces`` as a generator, whose ``close`` closes ``pieces`` when it is one."""
    yield from pieces


ALIVE_EVERY = 1.0
"""Seconds between two checks that the client of a streaming reply is still there."""


class SharedChatModel:
    """A ``ChatModel`` over the service's one chat model: loaded on first use (by
    ``load``), every call under the gate, with this request's priority.

    ``template`` tells whether the model chats through a chat template without loading it
    (``memcli.models.llm.chat_template_known``; None: it cannot tell, the model is loaded to
    know). ``stop`` gives this request's "stop now" test (the client's cancel), asked
    while a prompt is evaluated (``LlamaCppModel.stopping``). ``alive`` raises Interrupted
    when the client of a streaming reply went away (checked between pieces)."""

    def __init__(
        self,
        load: Callable[[], ChatModel],
        gate: ModelGate,
        interactive: bool,
        template: Callable[[], bool | None] | None = None,
        stop: Callable[[], bool] | None = None,
        alive: Callable[[], None] = lambda: None,
    ) -> None:
        self._load = load
        self._gate = gate
        self._interactive = interactive
        self._template = template
        self._stop = stop
        self._alive = alive

    @property
    def name(self) -> str:
        """The model's name (loads it)."""
        return self._load().name

    @property
    def uses_chat_template(self) -> bool:
        """Whether the model chats through a chat template, read from the GGUF's metadata
        or remembered (``template``) without loading the model where it can be (an
        extractive ``ask`` needs no chat model); a model that does not say is taken for a
        chat model."""
        known = self._template() if self._template is not None else None
        if known is not None:
            return known
        return bool(getattr(self._load(), "uses_chat_template", True))

    def _hold(self, model: ChatModel) -> contextlib.AbstractContextManager[None]:
        """The gate for a GGUF model (llama.cpp serves one caller at a time); none for a
        model server, which queues its requests itself: one slow or endless reply there
        must not keep every other request of the service waiting."""
        if isinstance(model, ServerChatModel):
            return contextlib.nullcontext()
        return self._gate.hold(self._interactive, self._stop)

    def _stopped(self) -> None:
        """Raise Interrupted when this request's client asked to stop (its Ctrl-C)."""
        if self._stop is not None and self._stop():
            raise Interrupted("interrupted")

    def stream(self, messages: Sequence[Message], max_tokens: int, temperature: float) -> Iterator[str]:
        """See ``ChatModel.stream``; the gate (``_hold``) is held until the stream ends or is closed."""
        model = self._load()
        self._stopped()
        stopping = getattr(model, "stopping", None)
        with (
            self._hold(model),
            stopping(self._stop) if stopping is not None else contextlib.nullcontext(),
            contextlib.closing(_generator(model.stream(messages, max_tokens, temperature))) as pieces,
        ):
            for piece in pieces:
                # a client that cancelled or went away stops the reply here, at every piece,
                # shown or not (the reply's cleaner may hold some back): its stream is closed,
                # which ends the server's request or frees llama.cpp for the next caller
                self._stopped()
                self._alive()
                yield piece

    @property
    def primes(self) -> bool:
        """Whether the model evaluates a prompt's start ahead (``LlamaCppModel.primes``; loads it)."""
        return bool(getattr(self._load(), "primes", False))

    def start_prime(
        self, messages: Sequence[Message], stop: Callable[[], bool] | None = None, opening: bool = False
    ) -> threading.Thread:
        """Start a thread that has the model evaluate the start of a coming prompt
        (``LlamaCppModel.prime``) under the gate, as background work: it waits for the
        model behind any waiting reply, and ``stop()`` (not the request's cancel: the
        request that started it ends first) or a chat turn that comes (``settle``) ends the
        wait or the evaluation. It counts as priming from now until it ends. ``opening``: the
        messages open a chat (``LlamaCppModel.prime``). Nothing is raised: a prime that fails
        only leaves the next prompt to be evaluated whole. Returns the thread."""
        self._gate.priming(+1)

        def halt() -> bool:
            return self._gate.settling or (stop is not None and stop())

        def run() -> None:
            try:
                model = self._load()
                prime = getattr(model, "prime", None)
                stopping = getattr(model, "stopping", None)
                if prime is not None and stopping is not None:
                    with self._gate.hold(False, halt), stopping(halt):
                        prime(messages, opening=opening)
            except Interrupted:  # stopped while it waited for the model: what it is for, not a fault
                log.debug("evaluating a prompt's start ahead: stopped before it began")
            except Exception as exc:  # in a thread of its own: nobody to raise it to
                log.info("evaluating a prompt's start ahead failed: %s", exc)
            finally:
                self._gate.priming(-1)

        thread = threading.Thread(target=run, name="chat-prime")
        thread.start()
        return thread

    def settle(self, heed_stop: bool = True) -> None:
        """Stop the primes asked for and wait for them to end (``ModelGate.settle``); with
        ``heed_stop``, this request's Ctrl-C ends the wait in Interrupted."""
        self._gate.settle(self._stop if heed_stop else None)

    def structured(
        self,
        messages: Sequence[Message],
        schema: dict[str, Any],
        max_tokens: int,
        temperature: float = 0.0,
        seed: int = 0,
    ) -> str:
        """See ``ChatModel.structured``."""
        model = self._load()
        with self._hold(model):
            return model.structured(messages, schema, max_tokens, temperature, seed)


class SharedEmbedder:
    """An embedder shared by the request threads: one encode at a time (a fast tokenizer
    used from two threads at once fails with "Already borrowed").

    A long ``embed`` (an import of thousands of texts) takes the lock per batch of
    ``batch_size`` texts (the packaged model's ``Embedder`` takes its own, ``embed``), so a
    recall's query waits for one batch (well under a second with the packaged model), not
    for the whole import."""

    def __init__(self, embedder: Any) -> None:
        self._embedder = embedder
        self._lock = threading.Lock()

    @property
    def name(self) -> str:
        """The model's name."""
        return str(self._embedder.name)

    @property
    def identity(self) -> str:
        """The model's identity (``memcli.models.embedding.embedder_identity``)."""

        return embedder_identity(self._embedder)

    def embed(self, texts: Sequence[str], batch_size: int = 64, progress: Any = None) -> list[list[float]]:
        """See ``Embedder.embed``; ``progress`` gets (texts embedded, texts in all) after each
        batch. An embedder that batches and locks itself (``Embedder.shares_batches``) gets
        the texts whole: it batches them by tokens, and a batch of characters first would
        cut its batches smaller (twice as many runs, 5% more padded tokens on a LoCoMo
        import). Any other gets them in batches of like length (characters,
        ``length_batches``: an import's turns and windows, in their order, would pad the
        turns to their windows' length), the lock taken a batch at a time; given back in order."""
        if getattr(self._embedder, "shares_batches", False) is True:
            return list(self._embedder.embed(texts, batch_size=batch_size, progress=progress))
        vectors: list[list[float]] = [[] for _ in texts]
        done = 0
        for batch in length_batches([len(text) for text in texts], batch_size):
            with self._lock:
                encoded = self._embedder.embed([texts[i] for i in batch], batch_size=batch_size)
            for i, vector in zip(batch, encoded):
                vectors[i] = vector
            done += len(batch)
            if progress is not None:
                progress(done, len(texts))
        return vectors

    def export_held(self) -> contextlib.AbstractContextManager[None]:
        """See ``Embedder.export_held`` (nothing to hold for an embedder without an export)."""
        return export_held(self._embedder)

    @property
    def dimension(self) -> int:
        """The length of the vectors the model makes (one text embedded when it does not say)."""
        known = getattr(self._embedder, "dimension", None)
        return int(known) if known else len(self.embed_one("dimension"))

    def embed_one(self, text: str) -> list[float]:
        """See ``Embedder.embed_one``."""
        with self._lock:
            return self._embedder.embed_one(text)


class Resources:
    """What a process keeps between requests: the store (resident in the service, opened
    per transaction in-process), one embedder and one recaller per embedder setting, the
    chat model, the settings of recent requests.

    ``embedder`` / ``chat_model``: given ones replace every configured one (tests)."""

    def __init__(
        self, paths: Paths, settings: Settings, embedder: Any = None, chat_model: ChatModel | None = None
    ) -> None:
        self.paths = paths
        self.store = MemoryStore(paths, settings.lock_timeout, self._notice, Server.of(settings))
        self.gate = ModelGate()
        self._given_embedder = embedder
        self._given_chat_model = chat_model
        self._embedders: dict[tuple[Any, ...], SharedEmbedder] = {}
        self._recallers: dict[tuple[Any, ...], Recaller] = {}
        self._model: ChatModel | None = None
        self._model_key: tuple[Any, ...] | None = None
        self._servers: dict[tuple[Any, ...], ServerChatModel] = {}
        self._model_lock = threading.Lock()
        self._lock = threading.Lock()
        self._settings: dict[Any, Settings] = {}
        self._local = threading.local()

    def _notice(self, message: str) -> None:
        emit = getattr(self._local, "emit", None)
        if emit is not None:
            emit("notice", message=message)
        log.info("%s", message)

    def _saved_here(self) -> Callable[..., None] | None:
        """``Engine``'s ``saved`` for an engine made now: its ``saved`` events go to this
        thread's ``emit`` from whichever thread tells them (an import's batches are stored,
        and told, by a second thread: ``Engine._store_in_batches``); None without one."""
        emit = getattr(self._local, "emit", None)
        if emit is None:
            return None

        def saved(**counts: int) -> None:
            emit("saved", **counts)

        return saved

    def settings(self, request: Mapping[str, Any]) -> Settings:
        """The settings of ``request`` (config file, the client's MEMCLI_* variables,
        --model), cached while the config file and those stay the same."""
        env = dict(request.get("env") or {})
        try:
            stat = self.paths.config_file.stat()
            config = (stat.st_mtime_ns, stat.st_size)
        except OSError:
            config = None
        key = (config, tuple(sorted(env.items())), request.get("model"))
        with self._lock:
            found = self._settings.get(key)
        if found is None:
            found = load_settings(self.paths, env=env, model=request.get("model"))
            with self._lock:
                if len(self._settings) > 32:
                    self._settings.clear()
                self._settings[key] = found
        return found

    def embedder(self, settings: Settings) -> SharedEmbedder:
        """The embedder of ``settings`` (loaded once per embedder setting, or per
        embedding server and its settings: ``engine.embedder_key``)."""
        key = engines.embedder_key(settings)
        with self._lock:
            found = self._embedders.get(key)
            if found is None:
                found = SharedEmbedder(
                    self._given_embedder
                    if self._given_embedder is not None
                    else engines.make_embedder(settings, self.paths)
                )
                self._embedders[key] = found
            return found

    def recaller(self, settings: Settings) -> Recaller:
        """The recaller of ``settings``' embedder: it keeps each user's recall index in memory."""
        embedder = self.embedder(settings)
        key = engines.embedder_key(settings)
        # heavy: recall reads names and dates (memcli.text.entities compiles its patterns at import);
        # imported for the first request that recalls, not for a list or show, and outside the lock
        # every request's engine takes, so that a list meanwhile does not wait for the import
        from memcli.recall.retrieval import Recaller

        with self._lock:
            found = self._recallers.get(key)
            if found is None:
                found = self._recallers[key] = Recaller(self.store, embedder)  # type: ignore[arg-type]
            return found

    def chat_model(self, settings: Settings, interactive: bool) -> SharedChatModel:
        """The chat model of ``settings``, loaded on first use; a request naming another
        model (``--model``, ``MEMCLI_MODEL``) replaces the loaded one. A model server's
        model (``model_url``) is kept one per server and model setting, beside it."""
        key = (settings.model, settings.chat_format, settings.n_ctx, settings.n_threads)
        server = (
            settings.model_url,
            settings.model_name,
            settings.model_api_key_env,
            settings.model_request_timeout,
            settings.model_json_format,
            settings.model_timeout,
        )

        def load() -> ChatModel:
            with self._model_lock:
                if self._given_chat_model is not None:
                    return self._given_chat_model
                if settings.model_url:
                    if server not in self._servers:
                        self._servers[server] = engines.server_model(settings)
                        log.info("chat model server %s", settings.model_url)
                    return self._servers[server]
                if self._model is None or self._model_key != key:
                    self._model = None
                    self._model = engines.make_chat_model(settings, self.paths)
                    self._model_key = key
                    log.info("loaded chat model %s", self._model.name)
                return self._model

        def template() -> bool | None:
            if self._given_chat_model is not None or settings.model_url:
                return None  # a given model or a server's: asked (neither loads anything)
            with self._model_lock:
                if self._model is not None and self._model_key == key:
                    return bool(getattr(self._model, "uses_chat_template", True))
            return engines.chat_template_known(settings, self.paths)

        return SharedChatModel(load, self.gate, interactive, template, getattr(self._local, "stop", None), self._alive)

    def _alive(self) -> None:
        """Raise Interrupted when this thread's client cancelled or went away (its ``emit``
        says so at its next event); checked at most every ``ALIVE_EVERY`` seconds, by an
        event the client ignores."""
        emit = getattr(self._local, "emit", None)
        now = time.monotonic()
        if emit is not None and now - getattr(self._local, "alive_at", 0.0) >= ALIVE_EVERY:
            self._local.alive_at = now
            emit("generating")

    def engine(self, request: Mapping[str, Any]) -> Engine:
        """An ``Engine`` for one request over the shared resources."""
        env = request.get("env") or {}
        settings = self.settings(request)
        self.store.use(Server.of(settings))  # store_url changed (memcli migrate, config set) since the last request
        return Engine(
            settings,
            self.paths,
            clock_for(env, request.get("now")),
            store=self.store,
            embedder=self.embedder(settings),
            recaller_of=lambda: self.recaller(settings),
            chat_model=self.chat_model(settings, request.get("verb") in INTERACTIVE_VERBS),  # type: ignore[arg-type]
            saved=self._saved_here(),
        )

    @contextlib.contextmanager
    def emitting(self, emit: Emit, stop: Callable[[], bool] | None = None) -> Iterator[None]:
        """Send this thread's store notices and ``saved`` events to ``emit`` for the block;
        ``stop``: the request's "stop now" test, given to the chat model of its engine
        (``SharedChatModel``)."""
        self._local.emit = emit
        self._local.stop = stop
        try:
            yield
        finally:
            self._local.emit = None
            self._local.stop = None

    def users_loaded(self) -> list[str]:
        """Users whose recall index is in memory."""
        with self._lock:
            recallers = list(self._recallers.values())
        return sorted({user for r in recallers for user in r.loaded_users()})
