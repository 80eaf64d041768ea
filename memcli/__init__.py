"""memcli: a local-first personal memory assistant for the terminal.

The Python API (``docs/python-api.md``)::

    import memcli

    m = memcli.open(user="sam")
    m.remember("I moved from Leeds to York last month.")
    print(m.ask("Where do I live?").answer)

``open`` returns a ``Client`` whose methods are the verbs of the ``memcli`` command, each
returning the ``memcli.schema`` model that the command's ``--json`` prints, through the
memcli service when it runs and in this process otherwise; failures raise the
``MemcliError`` subclasses of ``memcli.errors``. Importing ``memcli`` loads nothing else:
the command's thin client imports this package at every start.
"""

from __future__ import annotations

import importlib
import os
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from memcli.python_api import Client

__version__ = "0.1.0"

PROTOCOL = 7
"""The version of the request and reply shapes between the client and the service
(``memcli.library.api``, ``memcli.schema``); a client and a service that differ in it, or in
``__version__``, do not talk: a client newer than the service restarts it, an older one
(memcli was upgraded while it ran) stops with a message. 2: the service says
``accepted`` before it runs a request. 3: the ``reindex`` verb, ``import``'s
``retention_from``, the ``person`` recall signal. 4: ``ChatState.said_ids``; from here on
``tests/test_protocol.py`` fails when a shape changes and this does not. 5: ``PathsResult``'s
``embedder_exports_dir``. 6: ``service.stop``'s ``if_alone`` (an older service stops at any
``service.stop``; the client reads the protocol in the service file to ask it otherwise). 7:
``eval``'s ``imported`` (``eval locomo --imported``)."""

__all__ = ["Client", "MemcliError", "__version__", "errors", "open", "schema"]

_LAZY = {"Client": ("memcli.python_api", "Client"), "MemcliError": ("memcli.errors", "MemcliError")}


def open(user: str | None = None, home: str | os.PathLike[str] | None = None, *, service: bool = True) -> Client:
    """``user``'s memory (None: the ``user`` setting) in the memcli home ``home`` (None:
    ``MEMCLI_HOME``, else the platform's user folders), as a ``memcli.Client``; ``service``
    False runs every verb in this process. Raises BadInputError for an empty
    ``MEMCLI_HOME``, UnsafeHomeError when someone else controls one of its folders."""
    # thin client: the API's route and pydantic load when a program opens a memory, not with the command
    from memcli.python_api import open as open_memory

    return open_memory(user, home, service=service)


def __getattr__(name: str) -> Any:
    """The public names that load on first use (PEP 562): ``Client``, ``MemcliError`` and
    the modules ``schema`` and ``errors``."""
    if name in _LAZY:
        module, attribute = _LAZY[name]
        return getattr(importlib.import_module(module), attribute)
    if name in ("schema", "errors"):
        return importlib.import_module(f"memcli.{name}")
    raise AttributeError(f"module 'memcli' has no attribute {name!r}")
