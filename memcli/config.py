"""Settings: the defaults, then the TOML config file, then ``MEMCLI_*`` environment
variables, then command-line options, each over the one before (pydantic-settings).

``load_settings`` builds them for a command: the environment is the one the command was
run with, which for a request to the service is the client's (``request["env"]``), not
the service's own. Paths (``memcli.paths``) come from platformdirs; ``MEMCLI_HOME`` puts
config, data, state and cache under one folder.
"""

from __future__ import annotations

import getpass
import os
import re
from collections.abc import Mapping
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, ValidationError
from pydantic.fields import FieldInfo
from pydantic_settings import (
    BaseSettings,
    EnvSettingsSource,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

from memcli.errors import BadInputError
from memcli.paths import ENV_PREFIX, Paths, home_paths, read_config_file, resolve_paths

__all__ = ["ENV_PREFIX", "Paths", "Settings", "home_paths", "load_settings", "resolve_paths"]


@dataclass(frozen=True)
class _Layers:
    """What ``load_settings`` reads under the options: the config file and an environment."""

    config_file: Path
    env: Mapping[str, str]


_LAYERS: ContextVar[_Layers | None] = ContextVar("memcli_settings_layers", default=None)
"""Set by ``load_settings`` around the one ``Settings(...)`` it makes: pydantic-settings
asks ``Settings.settings_customise_sources`` for the sources, a class method that is given
no arguments of the call."""


LEGACY_USER = "default"
"""The user every memcli before the login-name default wrote to: a store whose only user it
is goes on with it (``memcli.library.engine.Engine.user``)."""


def login_name() -> str:
    """The default user: the login name (``getpass.getuser()``), lower-cased, each run of
    characters other than letters, digits, ``.``, ``_`` and ``-`` made one ``-``;
    ``LEGACY_USER`` when there is no login name."""

    try:
        name = getpass.getuser()
    except (KeyError, OSError):  # no LOGNAME/USER and no passwd entry (a container)
        name = ""
    return re.sub(r"[^\w.-]+", "-", name.lower(), flags=re.ASCII).strip("-.") or LEGACY_USER


class Settings(BaseSettings):
    """memcli's settings. Each key can be set in config.toml or as ``MEMCLI_<KEY>``.

    ``Settings(**values)`` is ``values`` over the defaults; ``load_settings`` adds the
    config file and the environment under them."""

    model_config = SettingsConfigDict(
        env_prefix=ENV_PREFIX, env_ignore_empty=True, extra="forbid", validate_assignment=True
    )

    user: str = Field(
        default_factory=login_name,
        min_length=1,
        description="user whose memories commands read and write (a store whose only user is 'default' goes on with it)",
    )
    name: str = Field(
        "",
        description="your name, as summaries, facts and the portrait call you; empty: the name you gave in chat ('my name is ...'), else 'the user'",
    )
    model: str = Field("", description="path of a GGUF chat model; empty: the embedded default")
    embedder: str = Field("", description="path of a sentence-transformers model dir; empty: the packaged default")
    embedder_onnx: bool = Field(
        True,
        description="run the embedder from an ONNX export that memcli makes once in the background from the model itself (a start in about 0.3 s instead of 5-8 s for torch); false: always through sentence-transformers",
    )
    chat_format: str = Field(
        "", description="llama.cpp chat format; empty: from the GGUF metadata, or plain completion"
    )
    # A model server instead of the GGUF (memcli.models.llm_server); the key is never a setting,
    # only the name of the variable that holds it, so it stays out of config list and --json.
    model_url: str = Field(
        "",
        description="base URL of an OpenAI-compatible model server (Ollama, llama-server, vLLM, LM Studio), e.g. http://127.0.0.1:11434/v1; empty: the GGUF model",
    )
    model_name: str = Field("", description="the model server's model id; empty: the first model the server lists")
    model_api_key_env: str = Field(
        "",
        description="name of the environment variable holding the model server's key (the key itself is never stored)",
    )
    model_request_timeout: float = Field(
        60.0,
        gt=0,
        description="seconds the model server may stay silent (connecting, or between two pieces of a reply) before the request fails",
    )
    model_json_format: Literal["auto", "json_schema", "json_object"] = Field(
        "auto",
        description="how structured replies are asked of the model server: json_schema (llama-server, vLLM, Ollama), json_object with a schema (llama-cpp-python's server), auto: the first, else the second",
    )
    # An embedding server instead of the packaged embedder (memcli.models.embedding_server), as
    # the model server above; a change of embedder asks for memcli reindex (exit 8).
    embedder_url: str = Field(
        "",
        description="base URL of an OpenAI-compatible server whose /v1/embeddings embeds memories and queries (Ollama with nomic-embed-text or bge-m3, llama-server --embedding, vLLM), e.g. http://127.0.0.1:11434/v1; empty: the embedder setting's model",
    )
    embedder_name: str = Field(
        "", description="the embedding server's model id; empty: the first model the server lists"
    )
    embedder_api_key_env: str = Field(
        "",
        description="name of the environment variable holding the embedding server's key (the key itself is never stored)",
    )
    embedder_request_timeout: float = Field(
        60.0,
        gt=0,
        description="seconds one request to the embedding server may take before it fails (it is tried twice more)",
    )
    lock_timeout: float = Field(30.0, ge=0, description="seconds to wait for another memcli to release the store")
    n_ctx: int = Field(
        4096,
        ge=512,
        le=1 << 20,
        description="model context window in tokens (at most 1,048,576, and at most what the model was trained for)",
    )
    n_threads: int = Field(
        0, ge=0, description="CPU threads for llama.cpp; 0: the cores no other process is using, at each step"
    )
    max_tokens: int = Field(256, ge=1, description="longest reply in tokens")
    temperature: float = Field(0.7, ge=0, le=2, description="sampling temperature")
    history_turns: int = Field(6, ge=0, description="recent turns kept verbatim in the chat prompt")
    recall_k: int = Field(5, ge=0, le=50, description="memories recalled into each chat or ask prompt")
    decay: float = Field(1.0, gt=0, description="Ebbinghaus decay constant d in R = exp(-d t / S)")
    user_decay: dict[str, float] = Field(
        default_factory=dict, description="per-user decay constants, e.g. {alice = 0.5}"
    )
    time_unit: Literal["second", "minute", "hour", "day", "week"] = Field(
        "day", description="unit of t in the retention formula"
    )
    # Initial strengths S0 per kind, in time_unit (days by default). Never recalled, a memory
    # is forgotten after S0 * ln(1/forget_threshold) / decay units, about 3 * S0 days with the
    # defaults (forgetting.days_to_forget): a turn after a month, a fact after four months, a
    # note after six, an important note after a year; a recall restarts the clock. Issue 22
    # asks, never recalled, for a turn to last 7 to 90 days and a note or fact 60 to 365:
    # S0 of 2.4..30 and 20..121 (tests/test_forgetting.py checks the defaults against it).
    strength_turn: float = Field(
        10.0,
        gt=0,
        description="strength S of a new chat or imported turn, in time_unit: never recalled it is forgotten after about 3 S (a month)",
    )
    strength_note: float = Field(
        60.0,
        gt=0,
        description="strength S of a new note (memcli remember, imported notes), in time_unit: never recalled it is forgotten after about 3 S (six months)",
    )
    strength_fact: float = Field(
        40.0,
        gt=0,
        description="strength S of a new fact written by consolidation, in time_unit: never recalled it is forgotten after about 3 S (four months)",
    )
    important_strength: float = Field(
        2.0,
        ge=1,
        description="multiplier of strength_note for a new note whose importance is at least important_threshold (2: about a year)",
    )
    important_threshold: float = Field(
        0.8, ge=0, le=1, description="importance from which a note starts important_strength times stronger"
    )
    initial_strength: float = Field(
        1.0,
        gt=0,
        description="strength S of a new summary, portrait or running memory (they never fade; S sets their retention in ranking)",
    )
    reinforce: Literal["add", "multiply"] = Field(
        "add", description="on recall: S += 1 (MemoryBank) or S *= boost (Landwehr et al.)"
    )
    boost: float = Field(1.5, gt=1, description="strength multiplier when reinforce = multiply")
    forget_threshold: float = Field(
        0.05, gt=0, lt=1, description="memcli forget archives memories whose retention is below this"
    )
    weight_similarity: float = Field(0.6, ge=0, description="ranking weight of relevance to the query")
    weight_importance: float = Field(0.1, ge=0, description="ranking weight of importance")
    weight_retention: float = Field(0.1, ge=0, description="ranking weight of retention (recency)")
    weight_use: float = Field(0.05, ge=0, description="ranking weight of the log-scaled recall count")
    weight_recent_penalty: float = Field(0.1, ge=0, description="ranking penalty of a memory recalled moments ago")
    weight_feedback: float = Field(0.05, ge=0, description="ranking weight of feedback (memcli feedback)")
    recent_window: float = Field(3600.0, gt=0, description="seconds over which the recently-used penalty fades")
    fact_grounding: float = Field(
        0.6, ge=0, le=1, description="share of a new fact's content words that must occur in its source turns"
    )
    summary_grounding: float = Field(
        0.5, ge=0, le=1, description="share of a summary's content words that must occur in what it summarizes"
    )
    fact_dedup: float = Field(
        0.92, gt=0, le=1, description="cosine similarity from which a new fact duplicates a stored one"
    )
    consolidation: Literal["auto", "llm", "extractive"] = Field(
        "auto",
        description="how consolidate writes: llm (the chat model), extractive (sentences chosen from the day), auto: extractive for a base model without a chat template (the embedded default), else llm; the same choice decides whether remember asks the chat model what a note supersedes (llm) or only the rules read it",
    )
    graph_extraction: Literal["offline", "llm"] = Field(
        "offline",
        description="how consolidate reads entities and relations for the graph memory: offline (names and plain patterns, no model), llm (the chat model under a JSON schema, every name checked against the text; one model call per new turn, note or fact, and only when consolidate writes with the model)",
    )
    answers: Literal["auto", "llm", "extractive"] = Field(
        "auto",
        description="how ask answers: llm (the chat model), extractive (the recalled sentence that answers, quoted with who said it and when), auto: extractive for a base model without a chat template (the embedded default), else llm; the same choice decides whether remember asks the chat model what a note supersedes (llm) or only the rules read it",
    )
    model_timeout: float = Field(
        120.0,
        ge=0,
        description="seconds a model reply may take in all: a structured reply (consolidation, query creator) and a model server's reply are given up past it; a local GGUF model's chat or ask reply is cut there, keeping what it wrote; 0: no limit",
    )
    query_creator: bool = Field(
        False,
        description="rewrite the chat into a search query with the chat model before recalling (for capable models)",
    )
    service: Literal["auto", "off"] = Field(
        "auto",
        description="auto: commands go through the memcli service, started on first use; off: every command opens the store itself",
    )
    service_idle: float = Field(900.0, gt=0, description="seconds without a request after which the service exits")
    # The Chroma server backend (memcli.store.store.Server): empty store_url keeps the on-disk folder.
    store_url: str = Field(
        "",
        description="URL of a Chroma server holding the memories (e.g. http://127.0.0.1:8000); empty: the folder under the data dir (memcli migrate moves them)",
    )
    store_tenant: str = Field(
        "default_tenant", min_length=1, description="Chroma tenant of the memories on the store_url server"
    )
    store_database: str = Field(
        "default_database",
        min_length=1,
        description="Chroma database of the memories on the store_url server (made when missing)",
    )
    store_token_env: str = Field(
        "",
        description="NAME of the environment variable (of the memcli service) holding the Chroma server's auth token, sent as a bearer token; the token itself is never stored",
    )
    store_timeout: float = Field(
        30.0, gt=0, description="seconds a request to the Chroma server may take before it is given up"
    )

    def decay_for(self, user: str) -> float:
        """The decay constant d of ``user`` (``user_decay``, else ``decay``)."""
        return self.user_decay.get(user, self.decay)

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        """The sources, first wins: the init arguments (command-line options), then, inside
        ``load_settings``, the ``MEMCLI_*`` variables of its environment and the config
        file; then the defaults. No ``.env`` file, no secrets directory."""
        layers = _LAYERS.get()
        if layers is None:
            return (init_settings,)
        return (
            init_settings,
            RequestEnvSource(settings_cls, layers.env),
            ConfigFileSource(settings_cls, layers.config_file),
        )


class RequestEnvSource(EnvSettingsSource):
    """pydantic-settings' environment source over a given environment (a request's, which
    the service is handed) instead of this process's ``os.environ``. An empty variable is
    no value (``env_ignore_empty``); a table setting (``user_decay``) is given as JSON.

    Raises BadInputError naming the variable when a table setting's value is not JSON."""

    def __init__(self, settings_cls: type[BaseSettings], env: Mapping[str, str]) -> None:
        self._env = env
        super().__init__(settings_cls)

    def _load_env_vars(self) -> Mapping[str, str | None]:
        # pydantic-settings matches lower-cased names; only MEMCLI_<KEY> as written counts,
        # as for the client, which carries the variables that start with MEMCLI_ to the service.
        return {
            name.lower(): value
            for name, value in self._env.items()
            if name.startswith(ENV_PREFIX) and name == name.upper() and value != ""
        }

    def prepare_field_value(self, field_name: str, field: FieldInfo, value: Any, value_is_complex: bool) -> Any:
        try:
            return super().prepare_field_value(field_name, field, value, value_is_complex)
        except ValueError as exc:  # pydantic-settings would wrap it in a SettingsError naming its class
            raise BadInputError(f"{ENV_PREFIX}{field_name.upper()}={value!r}: not JSON ({exc})") from None


class ConfigFileSource(TomlConfigSettingsSource):
    """pydantic-settings' TOML source over the config file, read by memcli's one reader
    (``memcli.paths.read_config_file``): where the library's own reader skips a path that
    is no file, this one names it (a directory, a FIFO, a symbolic link to nothing).

    Raises BadInputError as ``read_config_file``."""

    def __init__(self, settings_cls: type[BaseSettings], path: Path) -> None:
        super().__init__(settings_cls, toml_file=path)

    def _read_files(self, files: Any, deep_merge: bool = False) -> dict[str, Any]:
        return read_config_file(Path(files))


def load_settings(paths: Paths, env: Mapping[str, str] | None = None, **overrides: Any) -> Settings:
    """Build Settings from the defaults, the config file, the ``MEMCLI_*`` variables of
    ``env`` (the process environment when None), then ``overrides`` (the command-line
    options; those whose value is None are options the user did not give).

    Raises:
        BadInputError: the config file is there but cannot be read (``read_config_file``)
            or has an unknown key; or a value (from any layer) is invalid. The message
            names the file and key, or the variable, or the option.
    """
    env = os.environ if env is None else env
    given = {key: value for key, value in overrides.items() if value is not None}
    token = _LAYERS.set(_Layers(paths.config_file, env))
    try:
        return Settings(**given)
    except ValidationError as exc:
        raise _named(exc, paths.config_file, env, given) from exc
    finally:
        _LAYERS.reset(token)


def _named(exc: ValidationError, config_file: Path, env: Mapping[str, str], given: Mapping[str, Any]) -> BadInputError:
    """The first error of ``exc`` as one line naming where the bad value came from: the
    option, the variable (with its value), or the config file and key."""
    first = exc.errors()[0]
    key = str(first["loc"][0]) if first["loc"] else ""
    if key in given:
        origin = f"--{key.replace('_', '-')}"
    elif key in Settings.model_fields and env.get(variable := ENV_PREFIX + key.upper()):
        origin = f"{variable}={env[variable]!r}"
    elif key in read_config_file(config_file):
        origin = f"config file {config_file}: {key}"
    else:
        origin = ""
    if first["type"] == "extra_forbidden":
        return BadInputError(f"{origin or key}: unknown setting (the settings are listed in the man page, ENVIRONMENT)")
    where = ".".join(str(p) for p in first["loc"]) or "settings"
    return BadInputError(f"{origin or 'setting ' + where}: {first['msg']}" + (f" ({where})" if where != key else ""))
