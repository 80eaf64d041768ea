"""llama-cpp-python's own OpenAI-compatible server (``python -m llama_cpp.server``, the
``[server]`` extra) on 127.0.0.1 and a free port, for the tests against a real server
(tests/test_model_server_real.py, tests/test_embedding_server_real.py).

``serving(model, alias, log, *options)`` starts it, waits for ``/v1/models`` and always
stops it. With ``pooled``, the model's embeddings are mean-pooled: the packaged Gemma 3
GGUF, a chat model, carries no pooling type, and for such a model the server answers
``/v1/embeddings`` with one vector per token; its command line has no option to set one,
so ``pooled_llama_server.py`` runs the same server with ``pooling_type`` defaulting to mean
(as an embedding GGUF's own metadata would set it).
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

from fakes.model_server import free_port

START_SECONDS = 180
POOLED = Path(__file__).with_name("pooled_llama_server.py")


@contextlib.contextmanager
def serving(model: Path, alias: str, log: Path, *options: str, pooled: bool = False) -> Iterator[str]:
    """Serve ``model`` (a GGUF file) as ``alias`` with the server's ``options`` for the
    block, its output in ``log``; yields its base URL ``http://127.0.0.1:PORT/v1``.
    Raises RuntimeError when it has not answered within ``START_SECONDS``."""
    port = free_port()
    program = [str(POOLED)] if pooled else ["-m", "llama_cpp.server"]
    with log.open("w") as out:
        process = subprocess.Popen(
            [
                sys.executable,
                *program,
                "--model",
                str(model),
                "--model_alias",
                alias,
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
                *options,
            ],
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            # what it prints is in the log as it happens (a test reads how a request ended)
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
        url = f"http://127.0.0.1:{port}/v1"
        try:
            deadline = time.monotonic() + START_SECONDS
            while True:
                try:
                    with urllib.request.urlopen(f"{url}/models", timeout=2) as answer:
                        if answer.status == 200:
                            break
                except OSError:
                    pass
                if process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"llama_cpp.server did not start (exit {process.poll()}); see {log}")
                time.sleep(0.5)
            yield url
        finally:
            process.terminate()
            try:
                process.wait(15)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
