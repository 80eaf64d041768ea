"""Shell completion of memory ids, user names and kinds.

The shell runs ``memcli`` at every TAB press, so this imports nothing but the standard
library and answers from the recall index (``memcli.store.recall_index``), which holds every memory's
id, user, kind and text in the SQLite sidecar: through the running service (the
``complete`` request) when one runs, else by reading the sidecar directly, read-only; no
Chroma, no model. Kinds are a fixed list. Any failure offers nothing rather than an error
(a TAB press must never print a traceback).
"""

from __future__ import annotations

import json
from collections.abc import Mapping

from memcli.paths import Paths
from memcli.store.candidates import candidates
from memcli.store.db import open_read_only


def read_candidates(paths: Paths, what: str, prefix: str = "", user: str | None = None) -> list[tuple[str, str]]:
    """``candidates`` read from the sidecar database file, opened read-only (nothing is
    created or migrated; ``open_read_only``: a store on a read-only mount too); a missing
    database offers nothing. Raises sqlite3.Error when it cannot be read (a lock)."""
    if what == "kind":
        return candidates(None, what, prefix)  # type: ignore[arg-type]
    if not paths.database.is_file():
        return []
    db = open_read_only(paths.database, timeout=0.5)
    try:
        return candidates(db, what, prefix, user)
    finally:
        db.close()


def complete(
    paths: Paths, what: str, prefix: str = "", user: str | None = None, env: Mapping[str, str] | None = None
) -> list[tuple[str, str]]:
    """The completions of ``prefix`` (see ``candidates``): asked of the running service of
    ``paths`` when one of this memcli's version runs and the service is not turned off,
    else read from the sidecar; never starts the service. Empty on any failure."""
    try:
        if what != "kind":
            found = _from_service(paths, what, prefix, user, env)
            if found is not None:
                return found
        return read_candidates(paths, what, prefix, user)
    except Exception:  # noqa: BLE001 - a TAB press offers nothing rather than a traceback
        return []


def _from_service(
    paths: Paths, what: str, prefix: str, user: str | None, env: Mapping[str, str] | None
) -> list[tuple[str, str]] | None:
    """The service's answer, or None when no service of this version runs (or it is off)."""
    # thin client: a command group's modules load when one of its commands runs, not at every start
    from memcli import __version__
    from memcli.transport.client import Handlers, ServiceClient, client_env, service_mode

    environment = client_env(env)
    if service_mode(paths, environment) == "off" or not paths.socket.exists():
        return None
    try:
        running = json.loads(paths.service_file.read_text(encoding="utf-8")).get("version")
    except (OSError, ValueError):
        return None
    if running != __version__:
        return None  # a request would make the client restart it: not on a TAB press
    request = {"verb": "complete", "args": {"what": what, "prefix": prefix, "user": user}, "env": environment}
    try:
        found = ServiceClient(paths).request(request, Handlers(), start=False)
    except Exception:  # noqa: BLE001 - stopping, or gone: read the sidecar instead
        return None
    return [(item["value"], item["help"]) for item in found]
