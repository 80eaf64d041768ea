"""The one route to a verb: ``run`` validates a request's arguments against the
``memcli.library.library.Memcli`` method the verb table (``memcli.library.verbs``) names, calls it, and
returns its ``memcli.schema`` model.

Every front end goes through ``run``: the CLI in-process (``memcli.transport.local``), the memcli
service for each client request, ``memcli eval`` and the MCP server, so a verb behaves,
fails and answers the same in all of them. The arguments are checked by pydantic from the
method's own signature before anything runs: a request from a socket with a wrong-typed
argument is a UsageError, never an error from deep inside.
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import Mapping
from functools import cache
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError, create_model

from memcli.errors import UsageError
from memcli.library.library import Memcli
from memcli.library.verbs import VERBS, check_text


@cache
def arguments(verb: str) -> type[BaseModel]:
    """The pydantic model of ``verb``'s arguments, built from its method's signature (names,
    annotations, defaults): what a request's ``args`` must be. Raises KeyError for an
    unknown verb."""
    method = getattr(Memcli, VERBS[verb].method)
    hints = typing.get_type_hints(method)
    fields: dict[str, Any] = {
        name: (hints[name], ... if parameter.default is inspect.Parameter.empty else parameter.default)
        for name, parameter in inspect.signature(method).parameters.items()
        if name != "self"
    }
    return create_model(f"{VERBS[verb].method}_arguments", __config__=ConfigDict(extra="forbid"), **fields)


def run(library: Memcli, verb: str, args: Mapping[str, Any]) -> Any:
    """Run ``verb`` with ``args`` (a mapping of the method's parameter names to JSON-like
    values) on ``memcli``; returns the method's schema model.

    Raises UsageError for an unknown verb, an argument the method does not take, or a value
    of the wrong type (one line naming the argument), BadInputError for a string that is
    not text (``memcli.library.verbs.check_text``), and whatever MemcliError the verb raises."""
    if verb not in VERBS:
        raise UsageError(f"unknown request {verb!r}")
    if not isinstance(args, Mapping) or not all(isinstance(key, str) for key in args):
        raise UsageError(f"request {verb!r}: the arguments must be an object")
    check_text(args)
    model = arguments(verb)
    try:
        values = model.model_validate(args)
    except ValidationError as exc:
        raise UsageError(f"request {verb!r}: {_first_error(exc)}") from None
    return getattr(library, VERBS[verb].method)(**{name: getattr(values, name) for name in model.model_fields})


def _first_error(exc: ValidationError) -> str:
    first = exc.errors(include_url=False)[0]
    where = ".".join(str(part) for part in first["loc"])
    if first["type"] == "extra_forbidden":
        return f"unknown argument {where!r}"
    if first["type"] == "missing":
        return f"missing argument {where!r}"
    return f"argument {where!r}: {first['msg']}"
