"""Settings: defaults, then the TOML config file, then ``MEMCLI_*`` environment variables.

Paths come from platformdirs; ``MEMCLI_HOME`` puts config, data and cache under one
folder (``$MEMCLI_HOME/config``, ``/data``, ``/cache``).
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from memcli.errors import BadInputError

APP_NAME = "memcli"
CONFIG_FILENAME = "config.toml"


@dataclass(frozen=True)
class Paths:
    """Every file and folder memcli reads or writes."""

    config_dir: Path
    data_dir: Path
    cache_dir: Path

    @property
    def config_file(self) -> Path:
        """The TOML config file (may not exist)."""
        return self.config_dir / CONFIG_FILENAME

    @property
    def store_dir(self) -> Path:
        """The Chroma PersistentClient directory."""
        return self.data_dir / "chroma"

    @property
    def database(self) -> Path:
        """The SQLite database beside the Chroma store: history and consolidation progress."""
        return self.data_dir / "memcli.sqlite3"

    @property
    def lock_file(self) -> Path:
        """The file lock that serializes store access across processes."""
        return self.data_dir / "store.lock"

    @property
    def consolidate_lock(self) -> Path:
        """The file lock that keeps two consolidation runs from overlapping."""
        return self.data_dir / "consolidate.lock"

    @property
    def pending_dir(self) -> Path:
        """Memories written to disk but not yet in the store (the write-ahead journal)."""
        return self.data_dir / "pending"

    @property
    def model_dir(self) -> Path:
        """Where the embedded default GGUF is assembled on first use."""
        return self.cache_dir / "models"

    def as_dict(self) -> dict[str, str]:
        """Name → path, for ``memcli paths``."""
        return {
            "config_file": str(self.config_file),
            "config_dir": str(self.config_dir),
            "data_dir": str(self.data_dir),
            "store_dir": str(self.store_dir),
            "database": str(self.database),
            "lock_file": str(self.lock_file),
            "consolidate_lock": str(self.consolidate_lock),
            "pending_dir": str(self.pending_dir),
            "cache_dir": str(self.cache_dir),
            "model_dir": str(self.model_dir),
        }


def resolve_paths(env: dict[str, str] | None = None) -> Paths:
    """Return memcli's paths: under ``MEMCLI_HOME`` when set, else platformdirs' user dirs."""
    env = os.environ if env is None else env
    home = env.get("MEMCLI_HOME")
    if home:
        root = Path(home).expanduser()
        return Paths(root / "config", root / "data", root / "cache")
    import platformdirs

    return Paths(
        Path(platformdirs.user_config_dir(APP_NAME)),
        Path(platformdirs.user_data_dir(APP_NAME)),
        Path(platformdirs.user_cache_dir(APP_NAME)),
    )


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
    query_creator: bool = Field(False, description="rewrite the chat into a search query with the chat model before recalling (for capable models)")

    def decay_for(self, user: str) -> float:
        """The decay constant d of ``user`` (``user_decay``, else ``decay``)."""
        return self.user_decay.get(user, self.decay)


ENV_PREFIX = "MEMCLI_"


def load_settings(paths: Paths, env: dict[str, str] | None = None, **overrides: Any) -> Settings:
    """Build Settings from defaults, the config file, ``MEMCLI_*`` env, then ``overrides``.

    ``overrides`` whose value is None are ignored (an option the user did not give).

    Raises:
        BadInputError: the config file is not valid TOML, has an unknown key, or a value
            (from any layer) is out of range.
    """
    env = os.environ if env is None else env
    values: dict[str, Any] = {}
    if paths.config_file.is_file():
        try:
            values.update(tomllib.loads(paths.config_file.read_text(encoding="utf-8")))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise BadInputError(f"config file {paths.config_file}: {exc}") from exc
    for key in Settings.model_fields:
        env_value = env.get(ENV_PREFIX + key.upper())
        if env_value is not None and env_value != "":
            values[key] = env_value
    values.update({k: v for k, v in overrides.items() if v is not None})
    try:
        return Settings(**values)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "settings"
        raise BadInputError(f"setting {where}: {first['msg']} (config file {paths.config_file} or {ENV_PREFIX}{where.upper()})") from exc
