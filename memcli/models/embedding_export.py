"""The embedder without torch: an ONNX export of a sentence-transformers model, run by
ONNX Runtime.

Importing sentence-transformers (with torch and transformers) takes 5–8 s on a small
machine, and a cold command that embeds one query pays it whole. The same model exported
to ONNX loads in about 0.3 s with ``onnxruntime`` and ``tokenizers`` alone. memcli makes
the export itself, once, from the model directory it already has (nothing is downloaded):
after the first load through sentence-transformers, a background process
(``python -m memcli.models.embedding_export MODEL OUT``) exports the model with its mean
pooling and normalisation inside the graph, checks that the export embeds a set of probe
texts as sentence-transformers does (every component within ``TOLERANCE``), and only then
moves it into place; a model it cannot reproduce gets a ``.rejected`` note instead and
keeps the torch path. The export is made once for every home of the user on the machine,
in the cache folder they share (``memcli.paths.Paths.embedder_exports_dir``), under a name
keyed by the model, the files that tokenize for it and the versions of the libraries that make and run it
(``export_file``): a file lock lets one process export it, and a reader finds it whole or
not at all. Only models of the common shape are exported: a Transformer, mean
pooling, Normalize (``modules.json``), which is what all-MiniLM-L6-v2 and most
sentence-transformers models are.
"""

from __future__ import annotations

import functools
import hashlib
import inspect
import json
import os
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from memcli.distributions import installed_version
from memcli.paths import private_dir, unsafe_path, write_private
from memcli.processes import free_cores, usable_cores

TOLERANCE = 1e-4
"""Largest difference allowed between a component of the export's vector and
sentence-transformers' for the same text (both unit vectors)."""
PROBES = (
    "memcli",
    "Where do I live?",
    "I moved from Leeds to York last month.",
    "The cardiologist raised my atorvastatin to 40 mg.",
    "我现在在杭州上班了，医生把我的剂量减到了一片。",
    "Bought sourdough and two jars of honey at the farmers' market " * 30,
)
"""Texts the export must embed as sentence-transformers does before it is used: short and
long (past the model's length, so truncation is checked), English and Chinese, and all of
them in one batch (so padding is checked)."""
SHAPE = (
    "sentence_transformers.models.Transformer",
    "sentence_transformers.models.Pooling",
    "sentence_transformers.models.Normalize",
)
"""The module types (``modules.json``) of a model this exporter reproduces."""
STALE_SECONDS = 3600
"""A temporary export file older than this belongs to a writer that died: it is removed."""


EXPORT_FORMAT = "memcli-onnx-1: opset 17, mean pooling and Normalize in the graph, its tokenizer beside it"
"""What an export is made of; part of ``libraries_key``, so a change to the exporter makes new exports."""
LIBRARIES = ("tokenizers", "onnxruntime")
"""The distributions that read an export: its tokenizer file's format (tokenizers) and its
runtime (onnxruntime). Those that make it (torch, onnx, transformers, sentence-transformers)
are not: an export made and checked stays valid when they change, and every home keeps
reading it. Exports of other keys are left in the folder (``rm`` of it makes it again)."""


@functools.cache
def libraries_key() -> str:
    """8 hex digits of a SHA-256 over ``EXPORT_FORMAT`` and the installed versions of
    ``LIBRARIES`` ("none" for one not installed): two Python environments of one machine
    that differ in any of them make and read exports of their own names. Read from the
    distributions' metadata (no library is imported), once a process."""
    digest = hashlib.sha256(EXPORT_FORMAT.encode())
    for name in LIBRARIES:
        digest.update(f"\0{name}={installed_version(name) or 'none'}".encode())
    return digest.hexdigest()[:8]


TOKENIZING_FILES = ("sentence_bert_config.json", "tokenizer.json", "tokenizer_config.json")
"""The model's files that say how a text is tokenized for it (its ``max_seq_length``, its
vocabulary and settings): the export's tokenizer is made from them (``tokenizer_file``), and
the model's identity (``Embedder.identity``) does not cover them."""


def export_file(exports: Path, identity: str, model_dir: Path) -> Path:
    """Where the export of the model ``identity`` (``Embedder.identity``, ``NAME@FINGERPRINT``)
    at ``model_dir`` made by these library versions lives in the folder ``exports``
    (``Paths.embedder_exports_dir``, shared by every home): ``NAME@FINGERPRINT+KEY.onnx``, KEY
    being 8 hex digits of a SHA-256 over ``libraries_key`` and the model's
    ``TOKENIZING_FILES`` (a model whose ``max_seq_length`` or tokenizer was changed gets an
    export of its own)."""
    digest = hashlib.sha256(libraries_key().encode())
    for name in TOKENIZING_FILES:
        try:
            digest.update(f"\0{name}\0".encode() + (model_dir / name).read_bytes())
        except FileNotFoundError:
            digest.update(f"\0{name}: none".encode())
    return exports / f"{identity.replace('/', '_')}+{digest.hexdigest()[:8]}.onnx"


def earlier_export_file(model_dir: Path, identity: str) -> Path:
    """Where a memcli that kept the export in each home (its ``Paths.model_dir``) put it:
    ``NAME@FINGERPRINT.onnx``, not keyed by library versions. Read when the shared folder
    has none; never written."""
    return model_dir / f"{identity.replace('/', '_')}.onnx"


def tokenizer_file(export: Path) -> Path:
    """The tokenizer kept with ``export`` (``NAME.tokenizer.json`` beside ``NAME.onnx``):
    the model's ``tokenizer.json`` set as the export is run, truncating at the model's
    ``max_seq_length`` and padding nothing (all-MiniLM-L6-v2's own file pads and truncates
    at 128 tokens while sentence-transformers runs the model on up to 256), so that any
    reader of it tokenizes as the export expects."""
    return export.with_name(export.name.removesuffix(".onnx") + ".tokenizer.json")


def max_length(model_dir: Path) -> int:
    """The tokens sentence-transformers runs the model at ``model_dir`` on at most: its
    ``max_seq_length`` (sentence_bert_config.json), else its tokenizer's
    ``model_max_length``, else 512."""
    settings = _read_json(model_dir / "sentence_bert_config.json") or {}
    tokenizer_config = _read_json(model_dir / "tokenizer_config.json") or {}
    return int(settings.get("max_seq_length") or tokenizer_config.get("model_max_length") or 512)


def rejected_file(export: Path) -> Path:
    """The note that says why ``export`` could not be made (no new attempt is made)."""
    return export.with_name(export.name + ".rejected")


def failed_file(export: Path) -> Path:
    """The note that the last attempt at ``export`` failed with an error that may pass (the
    exporter or ONNX Runtime short of memory or files): the next attempt is made, and
    ``export`` is rejected only when it fails too."""
    return export.with_name(export.name + ".failed")


def lock_file(export: Path) -> Path:
    """The file lock held by whoever makes or removes ``export``."""
    return export.with_name(export.name + ".lock")


def discard_export(export: Path, seen: os.stat_result) -> bool:
    """Remove ``export`` and its tokenizer, which ONNX Runtime could not load, under its
    file lock and only when it is still the file ``seen`` (``os.stat``) that failed: not
    one another process has made again meanwhile. Returns whether it was removed (not when
    another process holds the lock, making it). The next load exports the model again."""
    # heavy library: filelock is light, but only a failed load needs it here
    from filelock import FileLock, Timeout

    try:
        with FileLock(str(lock_file(export)), timeout=0, mode=0o600):
            now = os.stat(export, follow_symlinks=False)
            if (now.st_ino, now.st_dev, now.st_mtime_ns) != (seen.st_ino, seen.st_dev, seen.st_mtime_ns):
                return False
            tokenizer_file(export).unlink(missing_ok=True)
            export.unlink()
            return True
    except (Timeout, OSError):
        return False


def prompt_name(prompts: Mapping[str, str], role: str) -> str | None:
    """The name of the model's prompt for ``role`` ("query" or "document") among its
    sentence-transformers ``prompts`` (e5 models: "query: ", "passage: "), or None."""
    names = ("query",) if role == "query" else ("document", "passage")
    return next((name for name in names if prompts.get(name)), None)


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def unsupported(model_dir: Path) -> str | None:
    """Why the model at ``model_dir`` cannot be exported (None when it can): its modules
    are not Transformer → mean Pooling → Normalize, or it has no ``tokenizer.json``."""
    modules = _read_json(model_dir / "modules.json")
    if not isinstance(modules, list) or tuple(m.get("type") for m in modules) != SHAPE:
        return "its modules are not Transformer, mean pooling and Normalize"
    pooling = _read_json(model_dir / (modules[1].get("path") or "1_Pooling") / "config.json") or {}
    modes = {key for key, value in pooling.items() if key.startswith("pooling_mode") and value}
    if modes != {"pooling_mode_mean_tokens"}:
        return f"its pooling is {sorted(modes) or 'none'}, not mean"
    if not (model_dir / "tokenizer.json").is_file():
        return "it has no tokenizer.json"
    return None


def offline_runtime() -> None:
    """Turn ONNX Runtime's own telemetry off in this process, before ``onnxruntime`` is
    imported: set ``ORT_DISABLE_TELEMETRY=1`` in ``os.environ``. Since 1.29 the official
    Linux and macOS builds have 1DS telemetry on by default (microsoft/onnxruntime#27379):
    a session's creation queues events about the model (its file name, graph and weight
    hashes) in ``~/.cache/Microsoft/DeveloperTools/.onnxruntime`` with a persistent device
    id, and threads resolve and post to ``mobile.events.data.microsoft.com`` seconds later.
    The variable is ONNX Runtime's documented opt-out, read once (it latches) when the
    library loads; ``SessionOptions`` has no switch for it."""
    os.environ["ORT_DISABLE_TELEMETRY"] = "1"


def offline_transformers() -> None:
    """Make transformers and the hub read local files only, show no progress bar and log
    errors only: set in the process's environment (``os.environ``), before either loads a
    model (memcli never downloads one), and transformers' own progress bar turned off
    (imports transformers: seconds, only on the torch path)."""
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    os.environ["HF_HUB_DISABLE_PROGRESS_BARS"] = "1"
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    # heavy library: transformers, only on the torch path
    from transformers.utils import logging as transformers_logging

    transformers_logging.disable_progress_bar()


class TokenizedEncoder:
    """What the encoders without sentence-transformers share: the model's own fast
    tokenizer, set as sentence-transformers sets it (truncation at the model's
    ``max_seq_length``, no fixed padding, lower-casing, prompts), and the padding of a
    batch. ``tokenizer_file``: the tokenizer to read (default: the model's
    ``tokenizer.json``). Raises OSError or the tokenizers library's errors for a missing
    or unreadable file.
    """

    def __init__(self, model_dir: Path, tokenizer_file: Path | None = None) -> None:
        # heavy library: tokenizers, only when an encoder is made
        from tokenizers import Tokenizer

        settings = _read_json(model_dir / "sentence_bert_config.json") or {}
        config = _read_json(model_dir / "config_sentence_transformers.json") or {}
        tokenizer_config = _read_json(model_dir / "tokenizer_config.json") or {}
        # an export's own tokenizer (``tokenizer_file``) is set so already; a model's may not be
        self.lower_case = bool(settings.get("do_lower_case", False))
        self.prompts: dict[str, str] = dict(config.get("prompts") or {})
        self.tokenizer = Tokenizer.from_file(str(tokenizer_file or model_dir / "tokenizer.json"))
        self.length = max_length(model_dir)
        """Tokens a text is truncated to (sentence-transformers' ``max_seq_length``)."""
        self.tokenizer.enable_truncation(max_length=self.length)
        self.tokenizer.no_padding()  # a tokenizer.json may pad to a fixed length: ``padded`` pads a batch itself
        pad = tokenizer_config.get("pad_token")
        pad = pad.get("content") if isinstance(pad, dict) else pad
        pad_id = self.tokenizer.token_to_id(pad) if isinstance(pad, str) else None
        self.pad_id = pad_id or 0
        """The token a shorter text of a batch is padded with (its attention mask 0)."""

    def prompt(self, role: str) -> str:
        """The text the model's config puts before a text of ``role`` ("query" or
        "document"; e5: "query: ", "passage: "), as sentence-transformers does."""
        name = prompt_name(self.prompts, role)
        return self.prompts[name] if name else ""

    def tokenize(self, texts: Sequence[str], role: str = "document") -> list[Any]:
        """The tokenizer's encodings of ``texts`` (with the prompt of ``role``, lower-cased
        when the model is), each unpadded and truncated to the model's length: their
        ``len`` is the text's length in tokens (``Embedder.embed`` groups texts of like
        length by it)."""
        prefix = self.prompt(role)
        batch = [prefix + text for text in texts]
        if self.lower_case:
            batch = [text.lower() for text in batch]
        # unpadded: ``run`` pads a batch, so a text's own encoding keeps its length
        return self.tokenizer.encode_batch(batch)

    def padded(self, encodings: Sequence[Any]) -> dict[str, Any]:
        """``encodings`` padded to the longest of them: input_ids, attention_mask and
        token_type_ids, each an int64 array of shape (len(encodings), tokens)."""
        # heavy library: numpy is already loaded wherever an embedder runs
        import numpy as np

        longest = max((len(e.ids) for e in encodings), default=0)
        ids = np.full((len(encodings), longest), self.pad_id, dtype=np.int64)
        mask = np.zeros((len(encodings), longest), dtype=np.int64)
        types = np.zeros((len(encodings), longest), dtype=np.int64)
        for row, encoding in enumerate(encodings):
            n = len(encoding.ids)
            ids[row, :n] = encoding.ids
            mask[row, :n] = encoding.attention_mask
            types[row, :n] = encoding.type_ids
        return {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}

    def run(self, encodings: Sequence[Any]) -> Any:
        """Embed tokenized texts (``tokenize``): an array of shape (len(encodings),
        dimension), float32, each row a unit vector."""
        raise NotImplementedError

    def encode(self, texts: Sequence[str], role: str = "document") -> Any:
        """An array of shape (len(texts), dimension), float32, each row a unit vector."""
        return self.run(self.tokenize(texts, role))


class OnnxEncoder(TokenizedEncoder):
    """Embeds texts with an ONNX export and the model's own fast tokenizer: the vectors
    sentence-transformers gives (unit length, mean pooled), without torch.

    ``model_dir``: the sentence-transformers directory (tokenizer, maximum length,
    prompts, lower-casing); ``export``: its ONNX file; the tokenizer is the export's own
    (``tokenizer_file``, or ``tokenizer`` when given) when it has one, else the model's. Raises OSError or ONNX
    Runtime's errors for a missing or unreadable file.
    """

    def __init__(self, model_dir: Path, export: Path, tokenizer: Path | None = None) -> None:
        own = tokenizer or tokenizer_file(export)
        super().__init__(model_dir, own if own.is_file() else None)
        offline_runtime()
        # heavy library: onnxruntime (0.15 s), only when the export is used
        import onnxruntime

        options = onnxruntime.SessionOptions()
        threads = os.environ.get("OMP_NUM_THREADS", "")
        if threads.isdigit():
            options.intra_op_num_threads = int(threads)
        options.log_severity_level = 3
        # Threads that wait spinning after a run (onnxruntime's default) take the other core
        # from what follows the query's encoding: recall's scan of a million memories ran
        # 1.7 times as long (121 ms CPU against 73 ms a recall, load 3.5). They sleep instead.
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        options.add_session_config_entry("session.inter_op.allow_spinning", "0")
        self.session = onnxruntime.InferenceSession(str(export), options, providers=["CPUExecutionProvider"])
        self.inputs = {i.name for i in self.session.get_inputs()}
        self.dimension = int(self.session.get_outputs()[0].shape[-1])

    def run(self, encodings: Sequence[Any]) -> Any:
        """Embed tokenized texts (``tokenize``), padded to the longest of them: an array of
        shape (len(encodings), dimension), float32, each row a unit vector."""
        feed = self.padded(encodings)
        return self.session.run(None, {name: value for name, value in feed.items() if name in self.inputs})[0]


_TORCH_THREADS = 0
"""torch's own count of threads, read once before a ``TorchEncoder`` sets any (0: not yet)."""


class TorchEncoder(TokenizedEncoder):
    """The model's transformer run by torch through ``transformers`` alone, with
    sentence-transformers' mean pooling and normalisation: the vectors
    sentence-transformers gives for a model of the common shape (``unsupported`` is None),
    without importing sentence-transformers, which takes over a CPU-second more on top
    of torch and transformers (its own import graph). Used before the ONNX export exists.

    ``model_dir``: the sentence-transformers directory whose transformer is at its root.
    Raises OSError, or transformers' errors, for a model it cannot load.
    """

    def __init__(self, model_dir: Path) -> None:
        super().__init__(model_dir)
        offline_transformers()
        # heavy library: torch and transformers (seconds), only on the torch path
        import torch
        from transformers import AutoModel

        self._torch = torch
        # torch's threads wait for one another at every operation: on a busy machine a
        # thread sharing its core with another process makes each batch wait for it (a
        # batch of 32 texts on 2 cores at load 12: 1.59 s with 2 threads, 0.47 s with 1).
        # Each batch takes the cores free then, unless OMP_NUM_THREADS fixed them.
        global _TORCH_THREADS
        if _TORCH_THREADS == 0:  # torch's own choice (its physical cores), before this sets any
            _TORCH_THREADS = torch.get_num_threads()
        self._cores = 0 if os.environ.get("OMP_NUM_THREADS", "").isdigit() else _TORCH_THREADS
        self.network = AutoModel.from_pretrained(str(model_dir), local_files_only=True).eval()
        self.takes_types = "token_type_ids" in inspect.signature(self.network.forward).parameters
        self.dimension = int(self.network.config.hidden_size)

    def run(self, encodings: Sequence[Any]) -> Any:
        """Embed tokenized texts (``tokenize``), padded to the longest of them, as
        sentence-transformers' Transformer, Pooling (mean over the attention mask) and
        Normalize modules do: an array of shape (len(encodings), dimension), float32,
        each row a unit vector. Runs on the cores no other process is using then
        (``memcli.processes.free_cores``)."""
        torch = self._torch
        if self._cores > 1 and (threads := min(self._cores, free_cores(usable_cores()))) != torch.get_num_threads():
            torch.set_num_threads(threads)
        feed = {name: torch.from_numpy(value) for name, value in self.padded(encodings).items()}
        if not self.takes_types:
            del feed["token_type_ids"]
        with torch.inference_mode():
            hidden = self.network(**feed, return_dict=True).last_hidden_state
            mask = feed["attention_mask"].unsqueeze(-1).to(hidden.dtype)
            mean = (hidden * mask).sum(dim=1) / torch.clamp(mask.sum(dim=1), min=1e-9)
            return torch.nn.functional.normalize(mean, p=2, dim=-1).numpy()


def export(model_dir: Path, out: Path) -> str:
    """Export the model at ``model_dir`` to ONNX at ``out`` and check it (see the module's
    docstring); returns "exported", or why not (also written to ``rejected_file(out)``, so
    it is not tried again). Writes a temporary file beside ``out`` and moves it into place
    only when the probes agree, so ``out`` is whole or absent; another process exporting
    the same file at the same time makes this one return "busy"."""
    # heavy library: filelock is light, but this runs only in the exporting process
    from filelock import FileLock, Timeout

    unsafe = unsafe_path(out.parent)
    if unsafe:  # checked again here: someone else may have made a folder of its path writable since
        return f"could not export now: {unsafe}"
    private_dir(out.parent)
    try:
        with FileLock(str(lock_file(out)), timeout=0, mode=0o600):
            if out.is_file() or rejected_file(out).is_file():
                return "exported" if out.is_file() else rejected_file(out).read_text(encoding="utf-8")
            _remove_stale(out)
            reason = unsupported(model_dir)
            lasting = True
            if reason is None:
                reason, lasting = _export_checked(model_dir, out)
            if reason != "exported" and lasting:
                write_private(rejected_file(out), reason)
            return reason
    except Timeout:
        return "busy"


def _remove_stale(out: Path) -> None:
    for old in out.parent.glob(f".{out.name}.*.tmp*"):
        try:
            if time.time() - old.stat().st_mtime > STALE_SECONDS:
                old.unlink()
        except OSError:
            pass


def _export_checked(model_dir: Path, out: Path) -> tuple[str, bool]:
    """Export and check (``export``): "exported" or why not, and whether the reason lasts
    (the model cannot be reproduced: noted, never tried again) or may pass (a file, folder
    or memory error, such as a full disk or the folder removed meanwhile; another error the
    first time, noted in ``failed_file``: tried again at the next load)."""
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    offline_runtime()  # torch's ONNX exporter may import onnxruntime before ``OnnxEncoder`` does
    # heavy library: the exporter's own process loads torch and sentence-transformers once
    import numpy as np
    import torch
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(str(model_dir), device="cpu", local_files_only=True)
    network = model[0].auto_model.eval()
    takes_types = "token_type_ids" in network.forward.__code__.co_varnames

    class Pooled(torch.nn.Module):
        """The transformer, mean pooling over the attention mask and normalisation in one graph."""

        def __init__(self) -> None:
            super().__init__()
            self.network = network

        def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
            extra = {"token_type_ids": token_type_ids} if takes_types else {}
            hidden = self.network(input_ids=input_ids, attention_mask=attention_mask, **extra).last_hidden_state
            mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
            mean = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
            return torch.nn.functional.normalize(mean, p=2, dim=1)

    names = ["input_ids", "attention_mask", "token_type_ids"]
    sample = torch.ones((2, 8), dtype=torch.long)
    tmp = out.with_name(f".{out.name}.{os.getpid()}.tmp")
    tokens = tmp.with_name(tmp.name + ".tokenizer.json")
    try:
        _write_tokenizer(model_dir, tokens)
        with torch.no_grad():
            torch.onnx.export(
                Pooled().eval(),
                (sample, sample, sample * 0),
                str(tmp),
                input_names=names,
                output_names=["embedding"],
                dynamic_axes={**{name: {0: "batch", 1: "tokens"} for name in names}, "embedding": {0: "batch"}},
                opset_version=17,
                dynamo=False,
            )
        os.chmod(tmp, 0o600)
        encoder = OnnxEncoder(model_dir, tmp, tokens)
        prompts = getattr(model, "prompts", None) or {}
        for role in ("query", "document"):
            prompt = prompt_name(prompts, role)
            expected = model.encode(
                list(PROBES), normalize_embeddings=True, prompt_name=prompt, show_progress_bar=False
            )
            got = encoder.encode(PROBES, role=role)
            worst = float(np.abs(np.asarray(got) - np.asarray(expected)).max())
            if got.shape != expected.shape or not worst <= TOLERANCE:
                return (
                    f"the export's vectors differ from sentence-transformers' by {worst:.2g} (over {TOLERANCE})",
                    True,
                )
        os.replace(tokens, tokenizer_file(out))  # first: an export in place always has its tokenizer
        os.replace(tmp, out)
        failed_file(out).unlink(missing_ok=True)
        return "exported", True
    except (OSError, MemoryError) as exc:  # the disk, the folder or memory, not the model: tried again
        return f"could not export now: {type(exc).__name__}: {exc}"[:500], False
    except Exception as exc:
        # torch's exporter and ONNX Runtime raise many types, for a model they cannot export
        # and for a want that passes (memory, open files) alike: lasting when it fails twice
        reason = f"could not export: {type(exc).__name__}: {exc}"[:500]
        if failed_file(out).is_file():
            return reason, True
        write_private(failed_file(out), reason)
        return reason, False
    finally:
        tmp.unlink(missing_ok=True)
        tokens.unlink(missing_ok=True)


def _write_tokenizer(model_dir: Path, out: Path) -> None:
    """Write the model's tokenizer to ``out`` (``tokenizer_file``) set as the export runs
    it: truncation at ``max_length`` (longest first, as sentence-transformers truncates)
    and no padding of its own (a batch is padded to its longest text)."""
    # heavy library: tokenizers, in the exporting process only
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
    tokenizer.enable_truncation(max_length=max_length(model_dir))
    tokenizer.no_padding()
    tokenizer.save(str(out))
    os.chmod(out, 0o600)


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m memcli.models.embedding_export MODEL_DIR OUT``: export and check (see
    ``export``); exit 0 when the export is in place, 1 otherwise."""
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) != 2:
        print("usage: python -m memcli.models.embedding_export MODEL_DIR OUT", file=sys.stderr)
        return 2
    try:
        os.nice(10)  # made in the background: the commands a person waits on come first
    except OSError:
        pass
    result = export(Path(args[0]), Path(args[1]))
    if result != "exported":
        print(f"memcli: embedder export: {result}", file=sys.stderr)
    return 0 if result == "exported" else 1


if __name__ == "__main__":
    sys.exit(main())
