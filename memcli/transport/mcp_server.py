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

import contextlib
import hmac
import json
import os
import secrets
import socket
import stat
import sys
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Annotated, Any, Optional
from urllib.parse import quote

import anyio
import anyio.to_thread
from mcp.server import MCPServer
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
from mcp.server.mcpserver.exceptions import ResourceError, ToolError
from mcp.server.stdio import stdio_server
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
            """Store a note in the user's memory. The same note twice is stored once; a long one as several, one per chunk (at most 100,000 characters)."""
            if len(text) > MAX_TOOL_TEXT:
                raise ToolError(
                    f"the note is {len(text):,} characters; remember takes at most {MAX_TOOL_TEXT:,}"
                    " (nothing was stored: import a longer text as a file, memcli import FILE)"
                )
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


MAX_LINE_BYTES = 4 << 20
"""The longest JSON-RPC message (one line) the stdio server reads; a longer one is
answered "invalid request" without being held, so a 1 GB line costs no memory."""
MAX_TOOL_TEXT = 100_000
"""The most characters a tool's text argument (remember's note) may have: a longer one is
a tool error, stored in no part (a note that long is a file: memcli import)."""
PARSE_ERROR, INVALID_REQUEST = -32700, -32600
"""JSON-RPC 2.0's error codes for a message that is not JSON and one that is no request."""


def check_message(line: bytes) -> tuple[int, str, Any] | None:
    """What is wrong with one line a client sent over stdio, as (JSON-RPC error code,
    message, the request's id or None), or None for a message the SDK can take: bytes that
    are not UTF-8 and text that is not JSON are a parse error (-32700), as is a string
    holding a lone surrogate (``"\\ud800"``: not text); JSON that is not an object with
    ``"jsonrpc": "2.0"`` (a top-level array, no ``jsonrpc`` field) is an invalid request
    (-32600). The SDK gives none of these any reply, and its client would wait for ever."""
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as exc:
        return PARSE_ERROR, f"parse error: not UTF-8 (byte {exc.start})", None
    try:
        message = json.loads(text)
    except ValueError as exc:
        return PARSE_ERROR, f"parse error: not JSON ({exc})", None
    ident = message.get("id") if isinstance(message, dict) else None
    if not isinstance(ident, (str, int)) or isinstance(ident, bool):
        ident = None
    try:
        json.dumps(message, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return PARSE_ERROR, "parse error: a string holds a lone surrogate, which is not text", ident
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
        return INVALID_REQUEST, 'invalid request: expected one JSON object with "jsonrpc": "2.0"', ident
    if "method" not in message and "result" not in message and "error" not in message:
        return INVALID_REQUEST, "invalid request: no method", ident
    return None


def _error_line(code: int, message: str, ident: Any) -> str:
    return json.dumps({"jsonrpc": "2.0", "id": ident, "error": {"code": code, "message": message}}) + "\n"


class _Stdout:
    """The wire's stdout for the SDK's writer and the error replies of ``serve_stdio``:
    one whole line per write, under a lock."""

    def __init__(self, binary: Any) -> None:
        self._binary = binary
        self._lock = threading.Lock()

    def _write(self, text: str) -> None:
        with self._lock:
            self._binary.write(text.encode("utf-8"))
            self._binary.flush()

    async def write(self, text: str) -> None:
        await anyio.to_thread.run_sync(self._write, text)

    async def flush(self) -> None:
        return None


class _Stdin:
    """The client's lines for the SDK's reader, each checked first (``check_message``): a
    line over ``MAX_LINE_BYTES`` or one the SDK would drop without a reply is answered
    here with its JSON-RPC error and not passed on."""

    def __init__(self, binary: Any, stdout: _Stdout) -> None:
        self._binary = binary
        self._stdout = stdout

    def _next(self) -> str | None:
        while True:
            line = self._binary.readline(MAX_LINE_BYTES + 1)
            if not line:
                return None
            if len(line) > MAX_LINE_BYTES and not line.endswith(b"\n"):
                while (rest := self._binary.readline(MAX_LINE_BYTES)) and not rest.endswith(b"\n"):
                    pass  # the rest of the line, read and dropped a piece at a time
                self._stdout._write(
                    _error_line(INVALID_REQUEST, f"invalid request: a message over {MAX_LINE_BYTES:,} bytes", None)
                )
                continue
            if not line.strip():
                continue
            problem = check_message(line)
            if problem is None:
                return line.decode("utf-8")
            self._stdout._write(_error_line(*problem))

    def __aiter__(self) -> _Stdin:
        return self

    async def __anext__(self) -> str:
        line = await anyio.to_thread.run_sync(self._next, abandon_on_cancel=True)
        if line is None:
            raise StopAsyncIteration
        return line


async def serve_stdio(server: MCPServer) -> None:
    """Run ``server`` over stdin and stdout as the SDK's ``run()`` does, with the client's
    lines checked first (``_Stdin``). While it runs, fd 0 reads the null device and fd 1
    writes to stderr, as the SDK arranges, so nothing else reaches the wire."""
    wire_in, wire_out = os.dup(0), os.dup(1)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.dup2(2, 1)
    try:
        with (
            os.fdopen(wire_in, "rb", closefd=False) as raw_in,
            os.fdopen(wire_out, "wb", closefd=False) as raw_out,
        ):
            stdout = _Stdout(raw_out)
            stdin = _Stdin(raw_in, stdout)
            async with stdio_server(stdin=stdin, stdout=stdout) as (read_stream, write_stream):  # type: ignore[arg-type]
                lowlevel = server._lowlevel_server  # the SDK's own run_stdio_async does the same
                await lowlevel.run(read_stream, write_stream, lowlevel.create_initialization_options())
    finally:
        with contextlib.suppress(OSError):
            os.dup2(wire_in, 0)
            os.dup2(wire_out, 1)
        for fd in (wire_in, wire_out):
            with contextlib.suppress(OSError):
                os.close(fd)


def _check_port_free(port: int) -> None:
    """Raise UsageError (exit 2, one line) when ``port`` of ``HTTP_HOST`` cannot be bound
    (in use, or privileged), before uvicorn would print its own error and exit."""
    with socket.socket() as probe:
        try:
            probe.bind((HTTP_HOST, port))
        except OSError as exc:
            raise UsageError(f"cannot listen on {HTTP_HOST}:{port}: {exc.strerror}; choose another --port") from None


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
        anyio.run(serve_stdio, build(verbs, read_only))
        return
    token_file = token_file or paths.config_dir / TOKEN_FILENAME
    _check_port_free(port)
    url = f"http://{HTTP_HOST}:{port}"
    auth = AuthSettings(issuer_url=url, resource_server_url=None)
    server = build(verbs, read_only, auth=auth, token_verifier=BearerToken(bearer_token(token_file)))
    say(f"memcli: MCP server for {user} at {url}{HTTP_PATH}; bearer token in {token_file}")
    server.run("streamable-http", host=HTTP_HOST, port=port, streamable_http_path=HTTP_PATH)
