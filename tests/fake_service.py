"""Run the memcli service with the test fakes in place of the real models (for
tests/test_service.py): ``python tests/fake_service.py [--slow-model S] [--slow-embed S]
[--idle S] [--version V] [--protocol N]``, with MEMCLI_HOME set. The service code is the real one;
only the embedder and the chat model are the fakes of conftest.py, slowed down when a
test needs a request to last."""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from conftest import FakeChatModel, FakeEmbedder  # noqa: E402

import memcli  # noqa: E402
from memcli.llm import Message  # noqa: E402


class SlowEmbedder(FakeEmbedder):
    """The fake embedder, ``delay`` seconds per call."""

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
    """Streams "word 1 word 2 ..." one word every ``delay`` seconds; a structured call
    takes ``delay`` seconds and answers nothing valid (consolidation skips the unit)."""

    def __init__(self, delay: float) -> None:
        super().__init__()
        self.delay = delay

    def stream(self, messages: Sequence[Message], max_tokens: int, temperature: float) -> Iterator[str]:
        for i in range(20):
            time.sleep(self.delay)
            yield f"word{i} "

    def structured(self, messages: Sequence[Message], schema: dict, max_tokens: int, temperature: float = 0.0, seed: int = 0) -> str:
        time.sleep(self.delay)
        return "{}"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--slow-model", type=float, default=0.0)
    parser.add_argument("--slow-embed", type=float, default=0.0)
    parser.add_argument("--idle", type=float, default=None)
    parser.add_argument("--version", default=None)
    parser.add_argument("--protocol", type=int, default=None)
    options = parser.parse_args()
    from memcli import service
    from memcli.paths import resolve_paths

    if options.version:
        memcli.__version__ = service.__version__ = options.version
    if options.protocol is not None:
        memcli.PROTOCOL = service.PROTOCOL = options.protocol

    given = {"embedder": SlowEmbedder(options.slow_embed), "chat_model": SlowModel(options.slow_model)}
    if options.idle is not None:
        given["idle"] = options.idle
    service.serve(resolve_paths(), ready=lambda line: print(line, file=sys.stderr, flush=True), **given)


if __name__ == "__main__":
    main()
