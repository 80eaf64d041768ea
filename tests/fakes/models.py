"""The fake models the tests put in place of the real ones: ``FakeEmbedder`` hashes words
into a fixed-size bag-of-words vector (texts sharing words are close), ``FakeChatModel``
replies from a script and records every prompt it was given; ``SlowEmbedder`` and
``SlowModel`` take their time when a test needs a request to last; ``EchoSystemModel``
answers with its system prompt's last paragraph. Light on purpose (no pytest, no memcli
import): the subprocesses of ``python tests/fakes`` start with them."""

from __future__ import annotations

import hashlib
import math
import re
import time
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from memcli.models.llm import Message


def _unexpected(task: str, content: str) -> str:
    """The default structured responder: the test did not script one, so the call fails it
    (``pytest.fail`` raises an outcome no ``except Exception`` in memcli can swallow)."""
    import pytest

    pytest.fail(f"unexpected structured call: {task}")


class FakeEmbedder:
    """Bag-of-words hashed into 128 dimensions, unit length. Deterministic and instant."""

    name = "fake-embedder"
    dimension = 128

    def __init__(self) -> None:
        self.calls = 0

    def embed(self, texts: Sequence[str], batch_size: int = 64, progress=None) -> list[list[float]]:
        self.calls += 1
        out = []
        for text in texts:
            vector = [0.0] * self.dimension
            for word in re.findall(r"\w+", text.lower()):
                vector[int(hashlib.md5(word.encode()).hexdigest(), 16) % self.dimension] += 1.0
            norm = math.sqrt(sum(v * v for v in vector)) or 1.0
            out.append([v / norm for v in vector])
        if progress is not None:
            progress(len(texts), len(texts))
        return out

    def embed_one(self, text: str) -> list[float]:
        return self.embed([text])[0]


class FakeChatModel:
    """Replies with the scripted texts in turn (the last one repeats); records prompts.

    Structured (JSON) requests go to ``responder(task, content)`` instead, where ``task``
    names the requested JSON (its first property: summary, portrait, memory, facts, event)
    and ``content`` is the last user message; each call is recorded in ``structured_calls``
    as (task, content, schema, max_tokens, temperature).
    """

    name = "fake-model"

    def __init__(self, replies: Sequence[str] = ("OK.",)) -> None:
        self.replies = list(replies)
        self.prompts: list[list[Message]] = []
        self.responder: Callable[[str, str], str] = _unexpected
        self.structured_calls: list[tuple[str, str, dict, int, float]] = []

    def stream(self, messages: Sequence[Message], max_tokens: int, temperature: float) -> Iterator[str]:
        self.prompts.append(list(messages))
        reply = self.replies.pop(0) if len(self.replies) > 1 else self.replies[0]
        for word in reply.split(" "):
            yield word + " "

    def structured(
        self, messages: Sequence[Message], schema: dict, max_tokens: int, temperature: float = 0.0, seed: int = 0
    ) -> str:
        task = next(iter(schema["properties"]))
        content = messages[-1].content
        self.structured_calls.append((task, content, schema, max_tokens, temperature))
        return self.responder(task, content)


class SlowEmbedder(FakeEmbedder):
    """The fake embedder, ``delay`` seconds per batch. Its vectors are the fake's, so a
    store takes it for the same model (its identity is the fake's)."""

    identity = FakeEmbedder.__name__

    def __init__(self, delay: float) -> None:
        super().__init__()
        self.delay = delay

    def embed(self, texts: Sequence[str], batch_size: int = 64, progress=None) -> list[list[float]]:
        out: list[list[float]] = []
        for start in range(0, len(texts), batch_size):
            time.sleep(self.delay)
            out.extend(super().embed(texts[start : start + batch_size]))
            if progress is not None:
                progress(len(out), len(texts))
        return out


class SlowModel(FakeChatModel):
    """Streams "word0 word1 ... word19", one word every ``delay`` seconds (with
    ``first_only``, only its first reply is slow: a test interrupts that one and need not
    wait for the next); a structured call takes ``delay`` seconds and answers nothing valid
    (consolidation skips the unit)."""

    def __init__(self, delay: float, first_only: bool = False) -> None:
        super().__init__()
        self.delay, self.first_only = delay, first_only

    def stream(self, messages: Sequence[Message], max_tokens: int, temperature: float) -> Iterator[str]:
        delay = self.delay
        if self.first_only:
            self.delay = 0.0
        for i in range(20):
            time.sleep(delay)
            yield f"word{i} "

    def structured(
        self, messages: Sequence[Message], schema: dict, max_tokens: int, temperature: float = 0.0, seed: int = 0
    ) -> str:
        time.sleep(self.delay)
        return "{}"


class EchoSystemModel(SlowModel):
    """Answers with the last paragraph of the system prompt (where ``chat --system`` puts
    its instruction)."""

    def stream(self, messages: Sequence[Message], max_tokens: int, temperature: float) -> Iterator[str]:
        last = messages[0].content.split("\n\n")[-1]
        for word in last.split(" "):
            yield word + " "


class TemplatelessModel:
    """A chat model stand-in without a chat template (as the embedded Gemma 3 270M): the
    wrapped fake's replies, and ``uses_chat_template`` False, which makes consolidation and
    answers take their extractive paths under ``auto``."""

    uses_chat_template = False

    def __init__(self, fake: object) -> None:
        self.fake = fake

    def __getattr__(self, name: str) -> object:
        return getattr(self.fake, name)
