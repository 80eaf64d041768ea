"""The chat model behind an OpenAI-compatible server (Ollama, LM Studio, llama.cpp's
``llama-server``, vLLM, llama-cpp-python's server), through the official ``openai`` client.

Replies are streamed (chat, ask, the query creator); a structured reply (consolidation) is
asked for with the server's JSON-schema support: ``response_format`` ``json_schema`` (the
OpenAI form: llama-server, vLLM, Ollama's OpenAI endpoint), or ``json_object`` with a
``schema`` (llama-cpp-python's server). ``model_json_format = auto`` tries the first and
falls back to the second when the server answers it with an error status, once per model.

Every failure of the server (refused, DNS, TLS, 401/403, 404, 5xx, a timeout, a stream cut
mid-reply) is a ``ModelServerError``: one line naming the URL (never the key) and the cause.
"""

from __future__ import annotations

import json
import os
import socket
import ssl
import time
from collections.abc import Iterator, Sequence
from typing import Any, Literal
from urllib.parse import urlsplit

from memcli.errors import ModelServerError, register_secret
from memcli.models.llm import Message

JsonFormat = Literal["auto", "json_schema", "json_object"]
MAX_RETRIES = 1
"""The client's own retries of a request that failed to start (refused, 5xx, timeout)."""
CHARS_PER_TOKEN = 16
"""The most characters a reply may have per token of ``max_tokens`` (a token is about 4
characters of English; a server that ignores ``max_tokens`` is cut at this margin)."""
NO_KEY = "memcli"
"""What the client sends as the key when none is configured (it requires one; local
servers ignore it)."""


def describe(
    url: str,
    exc: BaseException,
    timeout: float = 0.0,
    model: str = "",
    key_env: str = "",
    server: str = "model server",
    settings: str = "model",
    retries: int = 0,
) -> str:
    """The one line of a failed request to the server at ``url``: what went wrong and what
    to do. ``exc``: an ``openai`` error or a transport error of a stream. ``server`` names
    the server in the line ("model server", "embedding server"); ``settings`` is the prefix
    of the settings the fixes name (``model``: model_name, model_api_key_env,
    model_request_timeout; ``embedder``: embedder_name...)."""
    # heavy: the openai client is needed only with a model server
    import openai

    status = getattr(exc, "status_code", None)
    if isinstance(exc, openai.APITimeoutError):
        tries = f", {retries + 1} tries" if retries else ""
        cause = f"no answer within {timeout:g} s ({settings}_request_timeout{tries})"
    elif isinstance(exc, openai.APIConnectionError):
        cause = _connection_cause(exc, url, settings)
    elif status in (401, 403):
        hint = (
            f"the key in ${key_env}"
            if key_env and os.environ.get(key_env)
            else (
                f"${key_env} is not set"
                if key_env
                else f"no key is configured ({settings}_api_key_env names the variable that holds one)"
            )
        )
        cause = f"{status} {'unauthorized' if status == 401 else 'forbidden'}: the server refused the key ({hint})"
    elif status == 404:
        cause = f"404 not found: the server has no model {model!r} ({settings}_name), or the URL is not its OpenAI base URL (often ending in /v1)"
    elif status is not None:
        cause = f"{'server error ' if status >= 500 else ''}{status}: {_server_message(exc)}"
    else:
        cause = _connection_cause(exc, url, settings)
    return f"{server} {safe_url(url)}: {cause}"


def _connection_cause(exc: BaseException, url: str, settings: str = "model") -> str:
    """What an error of the connection was, from the chain of causes under ``exc``."""
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, ConnectionRefusedError):
            return "connection refused (is the server running?)"
        if isinstance(seen, socket.gaierror):
            return f"cannot resolve the host {urlsplit(url).hostname!r} (DNS)"
        if isinstance(seen, ssl.SSLError):
            return f"TLS error: {_first_line(str(seen))}"
        if type(seen).__name__ in ("RemoteProtocolError", "ReadError") or isinstance(seen, ConnectionResetError):
            return "the connection was cut in the middle of the reply"
        if type(seen).__name__ in ("ReadTimeout", "ConnectTimeout", "TimeoutException"):
            return f"no answer in time ({settings}_request_timeout)"
        seen = seen.__cause__ or seen.__context__
    text = _first_line(str(exc))
    if "SSL" in text or "certificate" in text:
        return f"TLS error: {text}"
    return f"cannot connect: {text}"


def _server_message(exc: BaseException) -> str:
    """The server's own message of an error status (its JSON body's ``message``), else the
    client's."""
    body = getattr(exc, "body", None)
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        body = body["error"]
    if isinstance(body, dict) and body.get("message"):
        return _first_line(str(body["message"]))
    if isinstance(body, dict) and body.get("detail"):
        return _first_line(json.dumps(body["detail"]))
    return _first_line(getattr(exc, "message", "") or str(exc))


def _first_line(text: str) -> str:
    return text.strip().splitlines()[0][:200] if text.strip() else "no detail"


def safe_url(url: str) -> str:
    """``url`` without any user:password part."""
    parts = urlsplit(url)
    if parts.username or parts.password:
        return parts._replace(netloc=parts.hostname + (f":{parts.port}" if parts.port else "")).geturl()
    return url


def make_client(url: str, api_key_env: str, request_timeout: float, max_retries: int) -> Any:
    """An ``openai.OpenAI`` client of the server at ``url``, with the key held by the
    environment variable ``api_key_env`` (read now, never kept elsewhere; ``NO_KEY`` when
    none), ``request_timeout`` seconds and the client's own ``max_retries``."""
    # heavy: the openai client is needed only with a model server
    from openai import OpenAI

    key = os.environ.get(api_key_env, "") if api_key_env else ""
    register_secret(key)
    return OpenAI(base_url=url, api_key=key or NO_KEY, timeout=request_timeout, max_retries=max_retries)


class ServerClient:
    """What a client of one OpenAI-compatible server at ``url`` keeps: its key's variable,
    its request timeout (seconds), its model id (``model_name``; empty: the first model
    ``/v1/models`` lists, asked once), the ``openai`` client made on first use with
    ``RETRIES`` retries, and the one line a failure gives (``describe``, naming the server
    as ``SERVER`` and the settings by their prefix ``SETTINGS``). Shared by the chat model
    and the embedder of a server (``memcli.models.embedding_server``)."""

    SERVER = "model server"
    SETTINGS = "model"
    RETRIES = MAX_RETRIES

    def __init__(self, url: str, model_name: str = "", api_key_env: str = "", request_timeout: float = 60.0) -> None:
        self.url = url.rstrip("/")
        self.api_key_env = api_key_env
        self.request_timeout = request_timeout
        self._name = model_name
        self._client: Any = None

    def _fail(self, exc: BaseException) -> ModelServerError:
        line = describe(
            self.url,
            exc,
            self.request_timeout,
            self._name,
            self.api_key_env,
            server=self.SERVER,
            settings=self.SETTINGS,
            retries=self.RETRIES,
        )
        return ModelServerError(line, getattr(exc, "status_code", None))

    def _bad_reply(self, what: str) -> ModelServerError:
        return ModelServerError(f"{self.SERVER} {safe_url(self.url)}: {what}")

    def _garbage(self, exc: BaseException) -> ModelServerError:
        """The error of a reply the client could not read: bytes that are not UTF-8, a body
        or a stream line that is not JSON, JSON of another shape."""
        what = "not UTF-8" if isinstance(exc, UnicodeDecodeError) else "not the JSON of an OpenAI-compatible reply"
        return self._bad_reply(f"its reply is {what} ({type(exc).__name__}); is the URL an OpenAI-compatible server?")

    @property
    def client(self) -> Any:
        """The ``openai.OpenAI`` client of this server (made on first use)."""
        if self._client is None:
            self._client = make_client(self.url, self.api_key_env, self.request_timeout, self.RETRIES)
        return self._client

    def models(self) -> list[str]:
        """The ids of the models the server lists (``/v1/models``)."""
        # heavy: the openai client is needed only with a model server
        import openai

        try:
            return [m.id for m in self.client.models.list()]
        except openai.OpenAIError as exc:
            raise self._fail(exc) from None
        except (UnicodeDecodeError, ValueError, TypeError, AttributeError) as exc:
            raise self._garbage(exc) from None

    @property
    def name(self) -> str:
        """The model id: ``model_name``, else the first the server lists (asked once)."""
        if not self._name:
            found = self.models()
            if not found:
                raise self._bad_reply(f"it lists no model; set {self.SETTINGS}_name")
            self._name = found[0]
        return self._name


class ServerChatModel(ServerClient):
    """A ``ChatModel`` served by an OpenAI-compatible server at ``url`` (its base URL, e.g.
    ``http://127.0.0.1:11434/v1``).

    Args:
        model_name: the server's model id; empty: the first model ``/v1/models`` lists.
        api_key_env: the name of an environment variable holding the key (read at each
            client's making, never stored or shown). request_timeout: seconds the server may
            stay silent (connecting, or between two pieces of a reply) before the request
            fails. json_format: the ``response_format`` form of a structured reply (see the
            module docstring). timeout: seconds a structured reply may take in all (0: no
            limit); past it ``structured`` raises TimeoutError, as ``LlamaCppModel`` does.

    Nothing is sent until the model is used. Every method raises ModelServerError when
    the server fails.
    """

    uses_chat_template = True
    """A server model is taken for a chat model (consolidation ``auto`` writes with it)."""

    def __init__(
        self,
        url: str,
        model_name: str = "",
        api_key_env: str = "",
        request_timeout: float = 60.0,
        json_format: JsonFormat = "auto",
        timeout: float = 0.0,
    ) -> None:
        super().__init__(url, model_name, api_key_env, request_timeout)
        self.json_format: JsonFormat = json_format
        self.timeout = timeout

    def _chunks(self, messages: Sequence[Message], **options: Any) -> Iterator[Any]:
        """The streamed chunks of one chat completion; closing the iterator closes the
        request (the server stops generating). A stream that ends without a finish reason
        was cut."""
        # heavy: the openai client is needed only with a model server
        import openai

        name = self.name
        try:
            stream = self.client.chat.completions.create(
                model=name, messages=[{"role": m.role, "content": m.content} for m in messages], stream=True, **options
            )
        except openai.OpenAIError as exc:
            raise self._fail(exc) from None
        except (UnicodeDecodeError, ValueError) as exc:
            raise self._garbage(exc) from None
        finished = False
        try:
            for chunk in stream:
                if chunk.choices and chunk.choices[0].finish_reason:
                    finished = True
                yield chunk
        except openai.OpenAIError as exc:
            raise self._fail(exc) from None
        except (UnicodeDecodeError, ValueError) as exc:  # json.JSONDecodeError is a ValueError
            raise self._garbage(exc) from None
        except Exception as exc:  # the transport's own errors (httpx) while the stream is read
            if not _is_transport_error(exc):
                raise
            raise self._fail(exc) from None
        finally:
            stream.close()
        if not finished:
            raise ModelServerError(
                f"model server {safe_url(self.url)}: the connection was cut in the middle of the reply"
            )

    def stream(self, messages: Sequence[Message], max_tokens: int, temperature: float) -> Iterator[str]:
        """Yield the reply piece by piece; see ChatModel.stream.

        A server may ignore ``max_tokens`` or trickle for ever: the reply ends (the request
        is closed) after ``max_tokens`` × ``CHARS_PER_TOKEN`` characters, and a reply still
        going ``timeout`` seconds (model_timeout) after the call fails (ModelServerError)."""
        limit = max_tokens * CHARS_PER_TOKEN
        deadline = time.monotonic() + self.timeout if self.timeout else None
        written = 0
        chunks = self._chunks(messages, max_tokens=max_tokens, temperature=temperature)
        try:
            for chunk in chunks:
                piece = chunk.choices[0].delta.content if chunk.choices else None
                if piece:
                    piece = piece[: limit - written]
                    written += len(piece)
                    yield piece
                    if written >= limit:
                        return  # the server ignored max_tokens: what it said up to the cap is the reply
                if deadline is not None and time.monotonic() > deadline:
                    raise self._bad_reply(
                        f"the reply had not finished after {self.timeout:g} s (model_timeout); it was given up"
                    )
        finally:
            chunks.close()  # type: ignore[attr-defined]

    def structured(
        self,
        messages: Sequence[Message],
        schema: dict[str, Any],
        max_tokens: int,
        temperature: float = 0.0,
        seed: int = 0,
    ) -> str:
        """JSON decoded under ``schema`` by the server; see ChatModel.structured.

        With ``json_format`` auto the ``json_schema`` form is tried first; a server that
        answers it with an error status is asked again with ``json_object``, and the form
        that worked is kept.
        A reply not finished ``timeout`` seconds after the call is given up (TimeoutError).
        """
        formats: list[str] = ["json_schema", "json_object"] if self.json_format == "auto" else [self.json_format]
        for i, kind in enumerate(formats):
            try:
                reply = self._structured(messages, schema, max_tokens, temperature, seed, kind)
            except ModelServerError as exc:
                # llama-cpp-python's server answers the json_schema form with 500 (its
                # validation error), others with 400 or 422: any status is worth one try.
                if exc.status is not None and i + 1 < len(formats):
                    continue
                raise
            self.json_format = kind  # type: ignore[assignment]
            return reply
        raise AssertionError("unreachable")

    def _structured(
        self,
        messages: Sequence[Message],
        schema: dict[str, Any],
        max_tokens: int,
        temperature: float,
        seed: int,
        kind: str,
    ) -> str:
        if kind == "json_schema":
            response_format: dict[str, Any] = {
                "type": "json_schema",
                "json_schema": {"name": "reply", "schema": schema},
            }
        else:
            response_format = {"type": "json_object", "schema": schema}
        deadline = time.monotonic() + self.timeout if self.timeout else None
        reply: list[str] = []
        chunks = self._chunks(
            messages, max_tokens=max_tokens, temperature=temperature, seed=seed, response_format=response_format
        )
        try:
            for chunk in chunks:
                piece = chunk.choices[0].delta.content if chunk.choices else None
                reply.append(piece or "")
                if deadline is not None and time.monotonic() > deadline:
                    raise TimeoutError(f"the model had not finished its reply after {self.timeout:g} s (model_timeout)")
        finally:
            chunks.close()  # type: ignore[attr-defined]
        return "".join(reply)

    def ping(self) -> str:
        """A one-token completion (``memcli doctor``): its text."""
        return "".join(self.stream([Message("user", "Say OK.")], 1, 0.0))


def _is_transport_error(exc: BaseException) -> bool:
    """Whether ``exc`` is an error of the HTTP transport (httpx or its fork httpx2)."""
    return any(
        klass.__name__ in ("TransportError", "HTTPError", "StreamError") for klass in type(exc).__mro__
    ) or isinstance(exc, (ConnectionError, ssl.SSLError))
