"""Run the ``memcli`` command line in this process with the test fakes as its models (for
tests/test_repl.py, which drives ``memcli chat`` through a pseudo-terminal):
``python tests/fake_cli.py [--slow-model S] [--echo-system] -- ARGS...``, with MEMCLI_HOME
set and MEMCLI_SERVICE=off. The command line is the real one; only the embedder and the
chat model are the fakes of conftest.py: the slow model of fake_service.py ("word0 word1
..." one word every S seconds), or with ``--echo-system`` one that answers with the last
paragraph of its system prompt (where ``chat --system`` puts its instruction)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from conftest import FakeEmbedder  # noqa: E402
from fake_service import SlowModel  # noqa: E402

from memcli.llm import Message  # noqa: E402


class EchoSystemModel(SlowModel):
    """Answers with the last paragraph of the system prompt."""

    def stream(self, messages: Sequence[Message], max_tokens: int, temperature: float) -> Iterator[str]:
        last = messages[0].content.split("\n\n")[-1]
        for word in last.split(" "):
            yield word + " "


def main() -> None:
    argv = sys.argv[1:]
    cut = argv.index("--") if "--" in argv else len(argv)
    parser = argparse.ArgumentParser()
    parser.add_argument("--slow-model", type=float, default=0.0)
    parser.add_argument("--echo-system", action="store_true")
    options = parser.parse_args(argv[:cut])
    from memcli import local
    from memcli.cli import app

    model = EchoSystemModel(0.0) if options.echo_system else SlowModel(options.slow_model)
    local.use_models(FakeEmbedder(), model)
    app(argv[cut + 1 :], prog_name="memcli")


if __name__ == "__main__":
    main()
