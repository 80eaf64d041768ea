"""Sentence embeddings from an OpenAI-compatible server's ``/v1/embeddings`` (Ollama's
``nomic-embed-text`` or ``bge-m3``, llama.cpp's ``llama-server --embedding``, vLLM,
LM Studio, llama-cpp-python's server), through the official ``openai`` client, in place of
the packaged sentence-transformers model (``memcli.models.embedding``).

Texts go ``BATCH`` to a request, as they are (no task prefix: a model trained with one,
such as nomic-embed-text's ``search_query:``, gets none); queries through the same
endpoint. Every vector is made unit length, so cosine similarity is a dot product, as the
store takes it. A request that fails to start (refused, a timeout, 408, 429, 5xx) is tried
again ``RETRIES`` times by the client, with its backoff; then, as every other failure
(DNS, TLS, 401/403, 404), it is a ``ModelServerError``: one line naming the URL (never the
key) and the cause, as the chat model server's (``memcli.models.llm_server.describe``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from memcli.models.embedding import SERVER_PREFIX, Progress
from memcli.models.llm_server import ServerClient

BATCH = 64
"""Texts embedded by one request (an import of thousands of texts makes many requests;
a recall's query waits for one of them in the service, as with the packaged model)."""
RETRIES = 2
"""The client's own retries of a request that failed to start (refused, a timeout, 408,
409, 429, 5xx), with its exponential backoff: a reindex of thousands of texts survives a
server's brief hiccup, and a server that is down fails within a few seconds."""
PROBE = "memcli"
"""The text embedded to learn the dimension when nothing was embedded yet (``identity``)."""
SERVER = "embedding server"


def server_identity(model: str, dimension: int) -> str:
    """The identity a store records for the server model ``model`` answering vectors of
    ``dimension`` floats: ``server:<model>@<dimension>`` (Ollama's default tag
    ``:latest`` dropped, so ``bge-m3`` and ``bge-m3:latest`` are one model).

    The URL is not in it: the same model behind another host or port embeds the same
    way, so moving the server needs no reindex. Another model, or the same name answering
    another dimension, is another embedder (exit 8 until ``memcli reindex``).
    """
    name = model.removesuffix(":latest")
    return f"{SERVER_PREFIX}{name}@{dimension}"


class ServerEmbedder(ServerClient):
    """Encodes texts into unit-length vectors with the embedding model of the
    OpenAI-compatible server at ``url`` (its base URL, e.g. ``http://127.0.0.1:11434/v1``);
    the same interface as ``memcli.models.embedding.Embedder``.

    Args:
        model_name: the server's model id; empty: the first model ``/v1/models`` lists.
        api_key_env: the name of an environment variable holding the key (read when the
            client is made, never stored or shown).
        request_timeout: seconds one request may take before it fails (then retried, see
            ``RETRIES``).

    Nothing is sent until the embedder is used. Every method that asks the server raises
    ModelServerError when it fails, or answers something other than one vector of numbers
    per text.
    """

    SERVER = SERVER
    SETTINGS = "embedder"
    RETRIES = RETRIES

    def __init__(self, url: str, model_name: str = "", api_key_env: str = "", request_timeout: float = 60.0) -> None:
        super().__init__(url, model_name, api_key_env, request_timeout)
        self._dimension: int | None = None

    @property
    def dimension(self) -> int:
        """The length of the server model's vectors (one text is embedded to learn it,
        unless something was embedded already)."""
        if self._dimension is None:
            self.embed([PROBE])
        assert self._dimension is not None
        return self._dimension

    @property
    def identity(self) -> str:
        """Which embedder this is, as a store records it (``server_identity``)."""
        return server_identity(self.name, self.dimension)

    def _request(self, texts: list[str]) -> list[list[float]]:
        """One ``embeddings.create`` of ``texts``: their unit vectors, in order."""
        # heavy: the openai client is needed only with a model server
        import openai

        name = self.name
        try:
            answer = self.client.embeddings.create(model=name, input=texts, encoding_format="float")
        except openai.OpenAIError as exc:
            raise self._fail(exc) from None
        except (UnicodeDecodeError, ValueError) as exc:  # a body that is not UTF-8 or not JSON
            raise self._garbage(exc) from None
        data = sorted(getattr(answer, "data", None) or [], key=lambda item: item.index)
        if len(data) != len(texts):
            raise self._bad_reply(f"{len(data)} vectors for {len(texts)} texts")
        vectors = [_unit(item.embedding) for item in data]
        if any(v is None for v in vectors):
            # llama-cpp-python's server answers one vector per token for a model without pooling
            raise self._bad_reply(
                f"{name} did not answer one vector of numbers per text: set embedder_name to an embedding model"
            )
        dimensions = {len(v) for v in vectors if v is not None}
        if self._dimension is not None:
            dimensions.add(self._dimension)
        if len(dimensions) != 1:
            raise self._bad_reply(f"{name} answered vectors of {' and '.join(map(str, sorted(dimensions)))} dimensions")
        self._dimension = dimensions.pop()
        return vectors  # type: ignore[return-value]

    def embed(
        self, texts: Sequence[str], batch_size: int = BATCH, progress: Progress | None = None, role: str = "document"
    ) -> list[list[float]]:
        """Embed ``texts``, ``batch_size`` a request; returns one unit vector (list of
        floats) per text, in order. ``role`` ("document" or "query") changes nothing: the
        server is sent the texts as they are. ``progress`` gets (texts embedded, texts in
        all) after each request."""
        vectors: list[list[float]] = []
        for start in range(0, len(texts), max(1, batch_size)):
            vectors.extend(self._request(list(texts[start : start + batch_size])))
            if progress is not None:
                progress(len(vectors), len(texts))
        return vectors

    def embed_one(self, text: str) -> list[float]:
        """Embed a single query."""
        return self.embed([text], role="query")[0]


def _unit(vector: Any) -> list[float] | None:
    """``vector`` scaled to length 1 (a zero vector as it is); None when it is not a
    non-empty list of numbers."""
    if (
        not isinstance(vector, list)
        or not vector
        or not all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in vector)
    ):
        return None
    norm = math.sqrt(math.fsum(x * x for x in vector))
    return [float(x) / norm for x in vector] if norm else [float(x) for x in vector]
