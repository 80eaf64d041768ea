"""A fake OpenAI-compatible model and embedding server for the failure tests: a small ASGI
app served by uvicorn on 127.0.0.1 in a thread. The first path segment picks its behaviour, so one server
serves every case: ``http://127.0.0.1:PORT/<mode>/v1`` with mode

- ``ok``: lists the model ``fake`` and streams ``Hello there.`` (a structured request gets
  ``{"query": "hello"}``);
- ``401``, ``403``, ``500``: every request gets that status;
- ``404``: lists ``fake``, but a completion or an embedding gets 404 (an unknown model);
- ``slow``: answers after ``SLOW_SECONDS``;
- ``cut``: streams two pieces, then the connection drops (no finish reason, no ``[DONE]``);
  an embedding request gets half its JSON;
- ``tokens``: an embedding request gets one vector per word (as llama-cpp-python's server
  answers for a model without pooling);
- ``flood``: streams ``FLOOD_PIECES`` pieces of 100 characters whatever ``max_tokens`` says;
- ``trickle``: streams a piece every ``TRICKLE_SECONDS``, ``TRICKLE_PIECES`` of them;
- ``garbage``: every request gets a 200 whose body is bytes that are not UTF-8;
- ``badsse``: a completion streams ``data: {not json``;
- ``echo500``: every request gets a 500 whose message echoes its Authorization header.

``/embeddings`` answers (mode ``ok``) each text with its words hashed into ``DIMENSION``
counts, not unit length (texts sharing words are close), for any model.

A mode named in ``structured_replies`` (mode -> JSON text) answers a structured request
(one with a ``response_format``) with that text, and a plain one as ``ok`` does; with
``slow-`` before its name it first waits ``SLOW_SECONDS``.

``requests`` records each (mode, path, body) it was sent.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import re
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

SLOW_SECONDS = 3.0
FLOOD_PIECES = 2000
TRICKLE_SECONDS = 0.3
TRICKLE_PIECES = 40
DIMENSION = 32
requests: list[tuple[str, str, dict[str, Any]]] = []
structured_replies: dict[str, str] = {}


def _chunk(content: str | None, finish: str | None = None) -> bytes:
    body = {
        "id": "c1",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": "fake",
        "choices": [
            {"index": 0, "delta": {"content": content} if content is not None else {}, "finish_reason": finish}
        ],
    }
    return f"data: {json.dumps(body)}\n\n".encode()


def _word_vector(word: str) -> list[float]:
    vector = [0.0] * DIMENSION
    vector[int(hashlib.md5(word.encode()).hexdigest(), 16) % DIMENSION] = 1.0
    return vector


def _vector(text: str) -> list[float]:
    """``text``'s words hashed into ``DIMENSION`` counts (a bag of words)."""
    vector = [0.0] * DIMENSION
    for word in re.findall(r"\w+", text.lower()) or ["empty"]:
        vector = [a + b for a, b in zip(vector, _word_vector(word))]
    return vector


def _embeddings(mode: str, body: dict[str, Any]) -> dict[str, Any]:
    texts = body.get("input") or []
    texts = [texts] if isinstance(texts, str) else texts
    if mode == "tokens":
        vectors: list[Any] = [[_word_vector(w) for w in re.findall(r"\w+", t.lower()) or ["empty"]] for t in texts]
    else:
        vectors = [_vector(t) for t in texts]
    return {
        "object": "list",
        "model": body.get("model"),
        "usage": {"prompt_tokens": 0, "total_tokens": 0},
        "data": [{"object": "embedding", "index": i, "embedding": v} for i, v in enumerate(vectors)],
    }


async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    """The ASGI app (see the module docstring)."""
    if scope["type"] != "http":
        return
    raw = b""
    while True:
        message = await receive()
        raw += message.get("body", b"")
        if not message.get("more_body"):
            break
    _, mode, *rest = scope["path"].split("/")
    path = "/" + "/".join(rest)
    body = json.loads(raw) if raw else {}
    requests.append((mode, path, body))

    async def answer(status: int, data: dict[str, Any]) -> None:
        await send(
            {"type": "http.response.start", "status": status, "headers": [(b"content-type", b"application/json")]}
        )
        await send({"type": "http.response.body", "body": json.dumps(data).encode()})

    if mode == "echo500":
        headers = dict(scope["headers"])
        echoed = headers.get(b"authorization", b"").decode()
        await answer(500, {"error": {"message": f"bad request with Authorization: {echoed}", "type": "error"}})
        return
    if mode == "garbage":
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"application/json")]})
        await send({"type": "http.response.body", "body": b"\xff\xfe\x00garbage\xff"})
        return
    if mode in ("401", "403", "500"):
        await answer(int(mode), {"error": {"message": f"fake {mode}", "type": "error", "code": mode}})
        return
    if mode == "slow" or mode.startswith("slow-"):
        await asyncio.sleep(SLOW_SECONDS)
    scripted = structured_replies.get(mode.removeprefix("slow-"))
    if path.endswith("/models"):
        await answer(200, {"object": "list", "data": [{"id": "fake", "object": "model", "owned_by": "me"}]})
        return
    if mode == "404":
        await answer(
            404,
            {"error": {"message": f"The model `{body.get('model')}` does not exist", "type": "invalid_request_error"}},
        )
        return
    if path.endswith("/embeddings"):
        if mode == "cut":
            await send(
                {"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"application/json")]}
            )
            await send(
                {
                    "type": "http.response.body",
                    "body": json.dumps(_embeddings("ok", body)).encode()[:40],
                    "more_body": True,
                }
            )
            raise RuntimeError("the fake server drops the connection")
        await answer(200, _embeddings(mode, body))
        return
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/event-stream")]})
    if mode == "cut":
        await send({"type": "http.response.body", "body": _chunk("Hello"), "more_body": True})
        await send({"type": "http.response.body", "body": _chunk(" the"), "more_body": True})
        raise RuntimeError("the fake server drops the connection")
    if mode == "badsse":
        await send({"type": "http.response.body", "body": b"data: {not json\n\n"})
        return
    if mode in ("flood", "trickle"):
        count = FLOOD_PIECES if mode == "flood" else TRICKLE_PIECES
        for _ in range(count):
            if mode == "trickle":
                await asyncio.sleep(TRICKLE_SECONDS)
            try:
                await send({"type": "http.response.body", "body": _chunk("word " * 20), "more_body": True})
            except OSError:
                return
        await send({"type": "http.response.body", "body": _chunk(None, "stop") + b"data: [DONE]\n\n"})
        return
    structured = scripted if scripted is not None else '{"query": "hello"}'
    pieces = [structured] if "response_format" in body else ["Hello", " there."]
    for piece in pieces:
        await send({"type": "http.response.body", "body": _chunk(piece), "more_body": True})
    await send({"type": "http.response.body", "body": _chunk(None, "stop") + b"data: [DONE]\n\n"})


def free_port() -> int:
    """A TCP port nothing listens on (now) on 127.0.0.1."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def serving() -> Iterator[str]:
    """Serve the app on 127.0.0.1 for the block; yields ``http://127.0.0.1:PORT``."""
    import uvicorn

    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="critical", lifespan="off"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        if time.monotonic() > deadline:
            raise RuntimeError("the fake model server did not start")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(10)
