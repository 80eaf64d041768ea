"""Settings: defaults, then the TOML config file, then ``MEMCLI_*`` environment variables.

Paths (``memcli.paths``) come from platformdirs; ``MEMCLI_HOME`` puts config, data,
state and cache under one folder.
"""

from __future__ import annotations

import os
import stat
import tomllib
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from memcli.errors import BadInputError
from memcli.paths import Paths, home_paths, resolve_paths

__all__ = ["Paths", "Settings", "home_paths", "load_settings", "read_config_file", "resolve_paths"]



class Settings(BaseModel):
    """memcli's settings. Each key can be set in config.toml or as ``MEMCLI_<KEY>``."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    user: str = Field("default", min_length=1, description="user whose memories commands read and write")
    model: str = Field("", description="path of a GGUF chat model; empty: the embedded default")
    embedder: str = Field("", description="path of a sentence-transformers model dir; empty: the packaged default")
    chat_format: str = Field("", description="llama.cpp chat format; empty: from the GGUF metadata, or plain completion")
    lock_timeout: float = Field(30.0, ge=0, description="seconds to wait for another memcli to release the store")
    n_ctx: int = Field(4096, ge=512, description="model context window in tokens")
    n_threads: int = Field(0, ge=0, description="CPU threads for llama.cpp; 0: all cores")
    max_tokens: int = Field(256, ge=1, description="longest reply in tokens")
    temperature: float = Field(0.7, ge=0, le=2, description="sampling temperature")
    history_turns: int = Field(6, ge=0, description="recent turns kept verbatim in the chat prompt")
    recall_k: int = Field(5, ge=0, le=50, description="memories recalled into each chat or ask prompt")
    decay: float = Field(1.0, gt=0, description="Ebbinghaus decay constant d in R = exp(-d t / S)")
    user_decay: dict[str, float] = Field(default_factory=dict, description="per-user decay constants, e.g. {alice = 0.5}")
    time_unit: Literal["second", "minute", "hour", "day", "week"] = Field("day", description="unit of t in the retention formula")
    initial_strength: float = Field(1.0, gt=0, description="strength S of a new memory")
    important_strength: float = Field(3.0, gt=0, description="strength S of a new note whose importance is at least important_threshold")
    important_threshold: float = Field(0.8, ge=0, le=1, description="importance from which a note starts with important_strength")
    reinforce: Literal["add", "multiply"] = Field("add", description="on recall: S += 1 (MemoryBank) or S *= boost (Landwehr et al.)")
    boost: float = Field(1.5, gt=1, description="strength multiplier when reinforce = multiply")
    forget_threshold: float = Field(0.05, gt=0, lt=1, description="memcli forget archives memories whose retention is below this")
    weight_similarity: float = Field(0.6, ge=0, description="ranking weight of relevance to the query")
    weight_importance: float = Field(0.1, ge=0, description="ranking weight of importance")
    weight_retention: float = Field(0.1, ge=0, description="ranking weight of retention (recency)")
    weight_use: float = Field(0.05, ge=0, description="ranking weight of the log-scaled recall count")
    weight_recent_penalty: float = Field(0.1, ge=0, description="ranking penalty of a memory recalled moments ago")
    weight_feedback: float = Field(0.05, ge=0, description="ranking weight of feedback (memcli feedback)")
    recent_window: float = Field(3600.0, gt=0, description="seconds over which the recently-used penalty fades")
    fact_grounding: float = Field(0.6, ge=0, le=1, description="share of a new fact's content words that must occur in its source turns")
    summary_grounding: float = Field(0.5, ge=0, le=1, description="share of a summary's content words that must occur in what it summarizes")
    fact_dedup: float = Field(0.92, gt=0, le=1, description="cosine similarity from which a new fact duplicates a stored one")
    consolidation: Literal["auto", "llm", "extractive"] = Field(
        "auto", description="how consolidate writes: llm (the chat model), extractive (sentences chosen from the day), auto: extractive for a base model without a chat template (the embedded default), else llm"
    )
    model_timeout: float = Field(120.0, ge=0, description="seconds a structured model reply (consolidation, query creator) may take before it is given up; 0: no limit")
    query_creator: bool = Field(False, description="rewrite the chat into a search query with the chat model before recalling (for capable models)")
    service: Literal["auto", "off"] = Field("auto", description="auto: commands go through the memcli service, started on first use; off: every command opens the store itself")
    service_idle: float = Field(900.0, gt=0, description="seconds without a request after which the service exits")

    def decay_for(self, user: str) -> float:
        """The decay constant d of ``user`` (``user_decay``, else ``decay``)."""
        return self.user_decay.get(user, self.decay)


ENV_PREFIX = "MEMCLI_"


def load_settings(paths: Paths, env: dict[str, str] | None = None, **overrides: Any) -> Settings:
    """Build Settings from defaults, the config file, ``MEMCLI_*`` env, then ``overrides``.

    ``overrides`` whose value is None are ignored (an option the user did not give).

    Raises:
        BadInputError: the config file is there but is no file (a directory), cannot be
            read, is not UTF-8 TOML, or has an unknown key; or a value (from any layer) is
            invalid. The message names the file, or the variable, or the option.
    """
    env = os.environ if env is None else env
    values: dict[str, Any] = {}
    origin: dict[str, str] = {}
    for key, value in read_config_file(paths.config_file).items():
        values[key] = value
        origin[key] = f"config file {paths.config_file}: {key}"
    for key in Settings.model_fields:
        env_value = env.get(ENV_PREFIX + key.upper())
        if env_value is not None and env_value != "":
            values[key] = env_value
            origin[key] = f"{ENV_PREFIX}{key.upper()}={env_value!r}"
    for key, value in overrides.items():
        if value is not None:
            values[key] = value
            origin[key] = f"--{key.replace('_', '-')}"
    try:
        return Settings(**values)
    except ValidationError as exc:
        first = exc.errors()[0]
        key = str(first["loc"][0]) if first["loc"] else ""
        if first["type"] == "extra_forbidden":
            raise BadInputError(f"{origin.get(key, key)}: unknown setting (the settings are listed in the man page, ENVIRONMENT)") from exc
        where = ".".join(str(p) for p in first["loc"]) or "settings"
        raise BadInputError(f"{origin.get(key, 'setting ' + where)}: {first['msg']}" + (f" ({where})" if where != key else "")) from exc


def read_config_file(path: Path) -> dict[str, Any]:
    """The keys of the TOML config file at ``path``; empty when there is none.

    Raises BadInputError naming ``path`` when something is there that cannot serve as the
    config file: a directory (or another non-file), a file memcli may not read, bytes that
    are not UTF-8, text that is not TOML."""
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        if path.is_symlink():
            raise BadInputError(f"config file {path}: is a symbolic link to nothing") from None
        return {}
    except OSError as exc:
        raise BadInputError(f"config file {path}: cannot be read ({exc.strerror or exc})") from None
    if stat.S_ISDIR(mode):
        raise BadInputError(f"config file {path}: is a directory, not a file")
    if not stat.S_ISREG(mode):  # a FIFO or a device would block or never end
        raise BadInputError(f"config file {path}: is not a regular file")
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise BadInputError(f"config file {path}: cannot be read ({exc.strerror or exc})") from None
    try:
        return tomllib.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise BadInputError(f"config file {path}: not UTF-8 text (byte {exc.start})") from None
    except tomllib.TOMLDecodeError as exc:
        raise BadInputError(f"config file {path}: not valid TOML: {exc}") from None
