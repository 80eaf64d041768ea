"""The in-process transport: runs a request in this process, through the same
``memcli.library.api.run`` the service uses (``service = "off"``, ``--no-service``, or the service
could not start).

The resources (store, models, recall index) stay loaded for the next request of this
process (a chat session); the store is opened per transaction.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from memcli.config import Paths, Settings, load_settings
from memcli.library import api
from memcli.library.library import Emit, Memcli
from memcli.transport.resources import Resources

_LOCAL: dict[Paths, Resources] = {}
"""The in-process resources of this process: one MEMCLI_HOME at a time."""
_GIVEN: dict[str, Any] = {"embedder": None, "chat_model": None}
"""The models given to ``use_models``."""


def use_models(embedder: Any = None, chat_model: Any = None) -> None:
    """Run in-process requests with these models instead of the configured ones (a
    program embedding memcli, or tests passing fakes, as llm registers its MockModel);
    None: the configured one. Takes effect from the next request (loaded resources are
    dropped)."""
    _GIVEN.update(embedder=embedder, chat_model=chat_model)
    _LOCAL.clear()


def run(paths: Paths, request: Mapping[str, Any], emit: Emit) -> Any:
    """Run one request (``{verb, args, env, now, model}``) in this process; returns the
    verb's schema model. Raises what ``memcli.library.api.run`` raises, and BadInputError for
    settings that cannot be read."""
    resources = _LOCAL.get(paths)
    if resources is None:
        _LOCAL.clear()
        resources = _LOCAL[paths] = Resources(
            paths, settings_for(paths, request), _GIVEN["embedder"], _GIVEN["chat_model"]
        )
    with resources.emitting(emit):
        engine = resources.engine(request)
        engine.store.lock_timeout = engine.settings.lock_timeout
        return api.run(Memcli(engine, emit), request["verb"], request.get("args") or {})


def settings_for(paths: Paths, request: Mapping[str, Any]) -> Settings:
    """The settings of one request: defaults, the config file, the client's ``MEMCLI_*``
    variables, then ``--model``. Raises BadInputError as ``load_settings`` does."""
    return load_settings(paths, env=dict(request.get("env") or {}), model=request.get("model"))
