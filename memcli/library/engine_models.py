"""What the parts of the engine share (``memcli.library.engine.Engine``): the embedder and chat
model the settings name (``make_embedder``, ``make_chat_model``, ``server_model``,
``chat_template_known``), the batch sizes of an import and a reindex with ``ImportReport``,
``note_chunks`` (a note's chunks and their ids) and the rule an entity name keeps
(``check_entity_name``)."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from memcli.config import Paths, Settings
from memcli.errors import (
    BadInputError,
)
from memcli.memory import Memory, stable_id, unstorable
from memcli.models.embedding import Embedder
from memcli.models.embedding_server import ServerEmbedder
from memcli.models.llm import ChatModel, load_chat_model
from memcli.models.llm import chat_template_known as llm_template_known
from memcli.models.llm_server import ServerChatModel
from memcli.paths import unsafe_path
from memcli.text.chunking import chunks

if TYPE_CHECKING:
    pass


Clock = Callable[[], float]


def make_embedder(settings: Settings, paths: Paths | None = None) -> Embedder | ServerEmbedder:
    """The embedder the settings name (``embedder_url``: an embedding server; else
    ``embedder``: a sentence-transformers directory, empty for the packaged
    all-MiniLM-L6-v2, run from its ONNX export when ``embedder_onnx`` is on and paths are
    given: made and read in ``paths.embedder_exports_dir``, shared by every home, unless
    that folder or one above it is unsafe (``unsafe_path``: someone else could replace the
    model memcli runs; checked again right before an export is loaded or made), when this home's ``paths.model_dir`` serves instead; an export an earlier memcli
    made in ``paths.model_dir`` is read too); an ``Engine`` given one does not call this.
    Nothing is loaded or sent until it is used."""
    if settings.embedder_url:
        return ServerEmbedder(
            settings.embedder_url,
            settings.embedder_name,
            settings.embedder_api_key_env,
            settings.embedder_request_timeout,
        )
    if paths is None or not settings.embedder_onnx:
        return Embedder(settings.embedder)
    shared = paths.embedder_exports_dir
    exports = shared if unsafe_path(shared) is None else paths.model_dir
    return Embedder(settings.embedder, exports=exports, earlier_exports=(paths.model_dir,))


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
    return ("local", settings.embedder, settings.embedder_onnx)


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
