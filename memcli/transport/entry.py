"""Where a front end sends a verb: the one place that chooses between the memcli service
and this process.

A request goes to the service (``memcli.transport.client``, which starts it when it is not up)
unless the service is off (``--no-service``, ``MEMCLI_SERVICE=off`` or ``service = "off"``
in the config file) or cannot start; then it runs here (``memcli.transport.local``, imported only
then, since it loads the library). Either way the caller gets the same typed result: the
view (``memcli.library.views``) of the verb's ``memcli.schema`` model.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from memcli.errors import MemcliError
from memcli.library import verbs
from memcli.paths import Paths
from memcli.transport.client import Handlers, ServiceClient, ServiceUnavailable, client_env, dispatch, service_mode


def call(
    paths: Paths,
    verb: str,
    args: Mapping[str, Any],
    handlers: Handlers,
    *,
    now: str | None = None,
    model: str | None = None,
    no_service: bool = False,
    debug: bool = False,
    env: Mapping[str, str] | None = None,
) -> Any:
    """Run ``verb`` with ``args``: in the service, or in this process when the service is
    off or cannot start (``handlers.notice`` says so). Returns the view of the verb's
    result (``memcli.library.verbs.read``). Raises the MemcliError the verb raised (from the service: the same
    class and exit code), BadInputError for an argument that is not text
    (``memcli.library.verbs.check_text``), ServiceError when the service died while answering. ``debug``:
    the service sends the traceback of an error with it."""
    verbs.check_text(args)  # before anything is sent: a surrogate cannot even be encoded for the socket
    environment = client_env(env)
    request = {"verb": verb, "args": dict(args), "env": environment, "now": now, "model": model, "debug": debug}
    if service_mode(paths, environment, no_service) == "auto":
        client = ServiceClient(paths)
        try:
            return verbs.read(verb, client.request(request, handlers))
        except ServiceUnavailable as exc:
            if not exc.bad_settings:  # else the in-process run says what is wrong, in one line
                handlers.notice(f"memcli: {exc}; running in this process instead")
        except MemcliError:
            client.stop_if_alone()  # a failed first command leaves no 1 GB service behind
            raise
    # thin client: the library loads only when a command runs in this process
    from memcli.transport import local

    def emit(event: str, **fields: Any) -> None:
        dispatch({"event": event, **fields}, handlers)

    return verbs.read(verb, verbs.dump(local.run(paths, request, emit)))
