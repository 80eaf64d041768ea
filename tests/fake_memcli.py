"""The real ``memcli`` command with the test fakes in place of the real models (for
scripts/faults.py --fake-models and tests/test_faults_harness.py): ``python
tests/fake_memcli.py ARGS...`` behaves as ``memcli ARGS...``. In-process requests use the
fake embedder and chat model of conftest.py; a service the client starts on its own is
``tests/fake_service.py`` (the same fakes) instead of ``memcli serve``. Test-only: nothing
in memcli/ knows about it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

TESTS = Path(__file__).resolve().parent
sys.path.insert(0, str(TESTS))

from conftest import FakeChatModel, FakeEmbedder  # noqa: E402

from memcli import client, local  # noqa: E402


class _Popen(subprocess.Popen):
    """``subprocess.Popen`` as the client uses it, except that ``python -m memcli serve``
    runs tests/fake_service.py (the real service code with the fakes)."""

    def __init__(self, args: Any, *rest: Any, **options: Any) -> None:
        argv = list(args) if isinstance(args, (list, tuple)) else args
        if isinstance(argv, list) and argv[1:4] == ["-m", "memcli", "serve"]:
            argv = [argv[0], str(TESTS / "fake_service.py")]
        super().__init__(argv, *rest, **options)


def main() -> None:
    """Run the memcli command line with the fakes."""
    model = FakeChatModel(("I hear you, and I will keep that in mind.",))
    model.responder = lambda task, content: "{}"
    local.use_models(FakeEmbedder(), model)
    client.subprocess.Popen = _Popen  # type: ignore[misc]
    from memcli.cli import app

    app(prog_name="memcli")


if __name__ == "__main__":
    main()
