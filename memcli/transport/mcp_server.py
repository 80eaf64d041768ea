"""``memcli mcp``: one user's memory served over the Model Context Protocol, for the
assistants people use all day (desktop chat apps, coding agents, IDEs).

A front end like the command line: every tool is one verb sent through
``memcli.transport.entry.call``, the same route the CLI takes (the memcli service, started when it is
not running, else this process), and returns the verb's ``memcli.schema`` model, so a
tool's output schema is the very model ``--json`` prints and the man page documents. Built
with the official ``mcp`` SDK (2.x ``MCPServer``); stdio by default, the streamable HTTP
transport on 127.0.0.1 with a bearer token (``serve``).

Whose memory is fixed when the server starts (``--user``, else the ``user`` setting): no
tool takes a user, and a memory id of another user is not found. A failure of a verb is a
tool error carrying the CLI's one-line message (``MemcliError.message``); nothing a tool
does ends the server.
"""

from __future__ import annotations

import hmac
import os
import secrets
import stat
import sys
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Annotated, Any, Optional
from urllib.parse import quote

from mcp.server import MCPServer
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
from mcp.server.mcpserver.exceptions import ResourceError, ToolError
from mcp.types import ToolAnnotations
from pydantic import Field

from memcli import __version__, schema
from memcli.config import load_settings
from memcli.errors import MemcliError, NotFoundError, UsageError
from memcli.paths import PRIVATE_FILE, Paths, private_dir
from memcli.transport.client import Handlers
from memcli.transport.entry import call

HTTP_HOST = "127.0.0.1"
"""The only address ``--http`` listens on: the memory is its user's, on this machine."""
HTTP_PATH = "/mcp"
"""Where the streamable HTTP transport answers."""
TOKEN_FILENAME = "mcp-token"
"""The bearer token file of ``--http``, in the config folder unless ``--token-file``."""

INSTRUCTIONS = (
    "memcli is {user}'s long-term memory: notes, past conversations, facts and summaries, kept on this machine, "
    "ranked by relevance, importance and how well each is retained (memories fade unless used). Use recall before "
    "answering about the user's life, people, plans or past conversations; remember what the user asks you to keep "
    "or would want kept. Ids are those of the memories returned (a unique prefix of 4+ characters works)."
)

RESOURCES = {
    "portrait": (
        "The global portrait of the user that consolidation wrote.",
        "portrait",
        {},
        "no portrait yet: memcli consolidate writes it",
    ),
    "summary": (
        "The global summary of past events that consolidation wrote.",
        "summary",
        {},
        "no event summary yet: memcli consolidate writes it",
    ),
    "running": (
        "The running memory: a summary of past conversations, kept as they go.",
        "summary",
        {"running": True},
        "no running memory yet: memcli consolidate writes it",
    ),
}
"""The resources, by name: description, the verb that reads one, its arguments besides the
user, and the text while there is none (the line of the command that shows it)."""


READ = ToolAnnotations(read_only_hint=True, open_world_hint=False)
"""A tool that changes nothing."""


def _writes(destructive: bool, idempotent: bool) -> ToolAnnotations:
    return ToolAnnotations(
        read_only_hint=False, destructive_hint=destructive, idempotent_hint=idempotent, open_world_hint=False
    )


MemoryId = Annotated[str, Field(description="A memory id, or a unique prefix of 4+ characters.")]
Kind = Annotated[
    Optional[str],
    Field(
        description="Only this kind: turn, note, fact, event_daily, event_global, portrait_daily, portrait_global, running_summary."
    ),
]
Tags = Annotated[list[str], Field(description="Only memories with every one of these tags.")]


class Verbs:
    """The verbs of one user's memory through ``memcli.transport.entry.call``, one at a time (an
    in-process run shares one store and one set of models between calls).

    Args:
        paths: memcli's paths (``MEMCLI_HOME``).
        user: whose memory; every verb that takes a user gets this one.
        no_service: run in this process instead of the memcli service.
        say: receives status lines (the service started, ran in-process instead).
    """

    def __init__(
        self, paths: Paths, user: str, no_service: bool = False, say: Callable[[str], None] = lambda line: None
    ) -> None:
        self.paths = paths
        self.user = user
        self.no_service = no_service
        self.handlers = Handlers(notice=say, warning=say)
        self.lock = threading.Lock()

    def run(self, verb: str, args: Mapping[str, Any]) -> Any:
        """The view of ``verb``'s result (``memcli.transport.entry.call``). Raises the MemcliError the
        verb raised."""
        with self.lock:
            return call(self.paths, verb, args, self.handlers, no_service=self.no_service)

    def own(self, memory_id: str) -> Any:
        """The view of this user's memory ``memory_id`` (id or unique prefix). Raises
        NotFoundError as ``show`` does when there is none, or it is another user's."""
        memory = self.run("show", {"id": memory_id})
        if memory.user != self.user:
            raise NotFoundError(f"no memory with id {memory_id!r}")
        return memory


def _tool(verbs: Verbs, verb: str, args: Mapping[str, Any]) -> Any:
    try:
        return verbs.run(verb, args)
    except MemcliError as exc:
        raise ToolError(exc.message) from None


def _one(model: Any, view: Any) -> Any:
    return None if view is None else model.model_validate(view.to_json())


def _many(model: Any, views: list[Any]) -> list[Any]:
    return [model.model_validate(view.to_json()) for view in views]


def build(verbs: Verbs, read_only: bool = False, **auth: Any) -> MCPServer:
    """The MCP server over ``verbs``: its tools (only those that change nothing when
    ``read_only``: ``recall`` then does not reinforce) and three resources, the user's
    global portrait, global event summary and running memory, read afresh at each read.
    ``auth``: ``auth`` and ``token_verifier`` of ``MCPServer``, for HTTP."""
    user = verbs.user
    server = MCPServer(
        "memcli",
        title=f"memcli: {user}'s memory",
        version=__version__,
        instructions=INSTRUCTIONS.format(user=user),
        log_level="WARNING",
        **auth,
    )

    def by_id(verb: str, memory_id: str) -> schema.Memory:
        try:
            memory = verbs.own(memory_id)
            return _one(schema.Memory, memory if verb == "show" else verbs.run(verb, {"id": memory.id}))
        except MemcliError as exc:
            raise ToolError(exc.message) from None

    @server.tool(annotations=READ if read_only else _writes(False, False))
    def recall(
        query: str,
        k: Annotated[int, Field(description="How many memories.")] = 10,
        kind: Kind = None,
        since: Annotated[
            Optional[str], Field(description="Only memories learned on or after this date (YYYY-MM-DD).")
        ] = None,
        tags: Tags = [],  # never mutated
    ) -> list[schema.RecalledMemory]:
        """The memories most relevant to the query, best first, each with its score. Default kinds: conversation turns, notes, facts and daily event summaries. Recalled memories count as used: they fade slower (not in a read-only server)."""
        args = {
            "query": query,
            "user": user,
            "k": k,
            "kind": kind,
            "since": since,
            "tags": tags,
            "reinforce": not read_only,
        }
        return _many(schema.RecalledMemory, _tool(verbs, "recall", args))

    @server.tool(annotations=READ)
    def list_memories(
        kind: Kind = None,
        tags: Tags = [],  # never mutated
        limit: Annotated[int, Field(description="How many, newest first (0: all).", ge=0)] = 20,
    ) -> list[schema.Memory]:
        """The newest memories first."""
        return _many(schema.Memory, _tool(verbs, "list", {"user": user, "kind": kind, "tags": tags, "limit": limit}))

    @server.tool(annotations=READ)
    def show_memory(id: MemoryId) -> schema.Memory:
        """Every field of one memory."""
        return by_id("show", id)

    @server.tool(annotations=READ)
    def portrait() -> Optional[schema.Memory]:
        """The portrait of the user that consolidation wrote (personality, emotions, habits); null before the first consolidation."""
        return _one(schema.Memory, _tool(verbs, "portrait", {"user": user}))

    @server.tool(annotations=READ)
    def summary(
        day: Annotated[
            Optional[str], Field(description="This day's event summary (YYYY-MM-DD) instead of the global one.")
        ] = None,
    ) -> Optional[schema.Memory]:
        """The summary of past events that consolidation wrote (or one day's); null when there is none yet."""
        return _one(schema.Memory, _tool(verbs, "summary", {"user": user, "day": day}))

    if not read_only:

        @server.tool(annotations=_writes(False, True))
        def remember(
            text: str,
            importance: Annotated[
                float, Field(description="How much it matters, 0..1: an important note fades slower.")
            ] = 0.5,
            tags: Annotated[list[str], Field(description="Keywords.")] = [],  # never mutated
        ) -> schema.Remembered:
            """Store a note in the user's memory. The same note twice is stored once; a long one as several, one per chunk."""
            return _one(
                schema.Remembered,
                _tool(verbs, "remember", {"text": text, "user": user, "importance": importance, "tags": tags}),
            )

        @server.tool(annotations=_writes(False, False))
        def ask(question: str) -> schema.Answer:
            """An answer from the user's memories written by memcli's own local model, citing the ids of the memories used (they count as used, as in recall). Slower than recall; recall gives you the memories themselves."""
            return _one(schema.Answer, _tool(verbs, "ask", {"question": question, "user": user}))

        @server.tool(annotations=_writes(False, True))
        def forget_memory(id: MemoryId) -> schema.Memory:
            """Archive one memory, as forgetting does: it is never recalled again, and memcli restore ID brings it back."""
            return by_id("archive", id)

        @server.tool(annotations=_writes(True, True))
        def delete_memory(id: MemoryId) -> schema.Memory:
            """Delete one memory for good: its text, its embedding, and what consolidation made from it. Cannot be undone; prefer forget_memory."""
            return by_id("delete", id)

    for what in RESOURCES:
        _resource(server, verbs, what)
    return server


def _resource(server: MCPServer, verbs: Verbs, what: str) -> None:
    description, verb, args, none = RESOURCES[what]

    def read() -> str:
        try:
            memory = verbs.run(verb, {"user": verbs.user, **args})
        except MemcliError as exc:
            raise ResourceError(exc.message) from None
        return none if memory is None else memory.text

    uri = f"memcli://{quote(verbs.user, safe='')}/{what}"
    server.resource(uri, name=what, description=description, mime_type="text/plain")(read)


class BearerToken:
    """The ``mcp`` SDK's token verifier (``TokenVerifier``) for one shared secret."""

    def __init__(self, token: str) -> None:
        self.token = token

    async def verify_token(self, token: str) -> AccessToken | None:
        """Access for the one token (compared in constant time), None for any other."""
        if hmac.compare_digest(token.encode(), self.token.encode()):
            return AccessToken(token=token, client_id="memcli", scopes=[])
        return None


def bearer_token(path: Path) -> str:
    """The token in ``path``, created with a random one (mode 0600) when missing. Raises
    UsageError when the file is readable by others, not a file, or empty."""
    private_dir(path.parent)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, PRIVATE_FILE)
    except FileExistsError:
        pass
    else:
        with os.fdopen(fd, "w") as out:
            out.write(secrets.token_urlsafe(32) + "\n")
    found = os.stat(path)
    if not stat.S_ISREG(found.st_mode):
        raise UsageError(f"the token file {path} is not a file")
    if found.st_mode & 0o077:
        raise UsageError(f"the token file {path} is readable by others: chmod 600 {path}, or delete it for a new token")
    token = path.read_text(encoding="utf-8").strip()
    if not token:
        raise UsageError(f"the token file {path} is empty: delete it for a new token")
    return token


def serve(
    paths: Paths,
    user: Optional[str] = None,
    read_only: bool = False,
    http: bool = False,
    port: int = 8765,
    token_file: Optional[Path] = None,
    no_service: bool = False,
    say: Callable[[str], None] = lambda line: sys.stderr.write(line + "\n"),
) -> None:
    """Serve ``user``'s memory (None: the ``user`` setting) until the client leaves (stdio)
    or Ctrl-C (``http``: streamable HTTP on 127.0.0.1:``port``, every request carrying the
    bearer token of ``token_file``, default ``config_dir/mcp-token``, whose path, never the
    token, is said). Raises BadInputError for settings that cannot be read, UsageError for
    a bad token file."""

    user = user or load_settings(paths).user
    verbs = Verbs(paths, user, no_service, say)
    if not http:
        build(verbs, read_only).run()
        return
    token_file = token_file or paths.config_dir / TOKEN_FILENAME
    url = f"http://{HTTP_HOST}:{port}"
    auth = AuthSettings(issuer_url=url, resource_server_url=None)
    server = build(verbs, read_only, auth=auth, token_verifier=BearerToken(bearer_token(token_file)))
    say(f"memcli: MCP server for {user} at {url}{HTTP_PATH}; bearer token in {token_file}")
    server.run("streamable-http", host=HTTP_HOST, port=port, streamable_http_path=HTTP_PATH)
