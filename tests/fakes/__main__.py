"""The real memcli, with the fake models of ``fakes.models`` in place of the real ones:

    python tests/fakes cli [--slow-model S] [--slow-first] [--echo-system] -- ARGS...
    python tests/fakes serve [--slow-model S] [--slow-embed S] [--idle S] [--version V] [--protocol N]

``cli`` is the ``memcli ARGS...`` command line (tests/test_repl.py drives its chat through a
pseudo-terminal; scripts/faults.py --fake-models runs every command through it). A service
it starts on its own is ``serve`` with the same model options, not ``memcli.transport.serve``.
``serve`` is the memcli service (``memcli serve``) with MEMCLI_HOME's paths, printing its
"listening" line on stderr (tests/test_service.py and others start it themselves); with
``--protocol`` below 6 its ``service.stop`` stops it whatever ``if_alone`` says, as an older
service's did.

The models: the slow model (fakes.models.SlowModel, "word0 ... word19", one word every S
seconds, only its first reply slow with ``--slow-first``), the slow embedder (S seconds a
batch), or with ``--echo-system`` a model that answers with the last paragraph of its system
prompt. The code run is memcli's own; only the models are the fakes."""

from __future__ import annotations

import argparse
import importlib.abc
import importlib.machinery
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
if "--cwd-on-path" in sys.argv:
    # What ``python -m`` without -P does (the current directory first on sys.path), before memcli is imported.
    sys.path.insert(0, os.getcwd())

from fakes.models import EchoSystemModel, SlowEmbedder, SlowModel  # noqa: E402
from memcli.transport.client import SERVICE_MODULE  # noqa: E402


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python tests/fakes")
    commands = parser.add_subparsers(dest="command", required=True)
    for name in ("cli", "serve"):
        command = commands.add_parser(name)
        command.add_argument(
            "--slow-model", type=float, default=0.0, help="seconds per streamed word and per structured call"
        )
        command.add_argument("--slow-embed", type=float, default=0.0, help="seconds per embedding batch")
        command.add_argument("--slow-first", action="store_true", help="only the first reply streams slowly")
        command.add_argument("--echo-system", action="store_true", help="reply with the system prompt's last paragraph")
    serve = commands.choices["serve"]
    serve.add_argument("--idle", type=float, default=None)
    serve.add_argument("--version", default=None)
    serve.add_argument("--protocol", type=int, default=None)
    serve.add_argument("--cwd-on-path", action="store_true", help="the current directory first on sys.path")
    return parser


def _models(options: argparse.Namespace) -> dict[str, Any]:
    model = (
        EchoSystemModel(0.0) if options.echo_system else SlowModel(options.slow_model, first_only=options.slow_first)
    )
    return {"embedder": SlowEmbedder(options.slow_embed), "chat_model": model}


def _model_argv(options: argparse.Namespace) -> list[str]:
    """The model options again, for a service this command line starts."""
    argv = ["--slow-model", str(options.slow_model), "--slow-embed", str(options.slow_embed)]
    return argv + ["--slow-first"] * options.slow_first + ["--echo-system"] * options.echo_system


class _ClientSubprocess:
    """The ``subprocess`` module as memcli's client sees it, except that the service the
    client starts (``python -m memcli.transport.serve``, ``SERVICE_MODULE``) is ``python tests/fakes serve`` with the same
    models. Only the client's view changes; every other ``Popen`` in the process is the real one."""

    def __init__(self, serve_argv: list[str]) -> None:
        self.serve_argv = serve_argv

    def __getattr__(self, name: str) -> Any:
        return getattr(subprocess, name)

    def Popen(self, args: Any, *rest: Any, **options: Any) -> subprocess.Popen:  # noqa: N802 (subprocess's name)
        if isinstance(args, (list, tuple)) and SERVICE_MODULE in args and args[args.index(SERVICE_MODULE) - 1] == "-m":
            flags = list(args[1 : args.index(SERVICE_MODULE) - 1])
            # The same sys.path as the real start: the current directory first unless -P.
            cwd_first = [] if "-P" in flags else ["--cwd-on-path"]
            args = [args[0], *flags, str(HERE), "serve", *self.serve_argv, *cwd_first]
        return subprocess.Popen(args, *rest, **options)


class _AfterImport(importlib.abc.MetaPathFinder):
    """Calls ``then(module)`` once the module ``name`` has been imported, where and when
    memcli imports it (the finder steps aside after that one import)."""

    def __init__(self, name: str, then: Callable[[ModuleType], None]) -> None:
        self.name, self.then = name, then

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> importlib.machinery.ModuleSpec | None:
        if fullname != self.name:
            return None
        sys.meta_path.remove(self)
        spec = importlib.machinery.PathFinder.find_spec(fullname, path, target)
        if spec is None or spec.loader is None:
            return spec
        execute = spec.loader.exec_module

        def exec_module(module: ModuleType) -> None:
            execute(module)
            self.then(module)

        spec.loader.exec_module = exec_module  # type: ignore[method-assign]
        return spec


def cli(options: argparse.Namespace, argv: list[str]) -> None:
    """``memcli argv`` in this process with the fakes. The fakes go to the in-process
    transport when memcli imports it, as the real command does only when the verb runs in
    this process: a command the service answers stays the thin client it is (importing the
    library costs a client 2 s of CPU, and the fault harness runs hundreds of them)."""
    from memcli.cli import app
    from memcli.transport import client

    given = _models(options)  # memcli imports it only to run a verb here (memcli/transport/entry.py)
    sys.meta_path.insert(0, _AfterImport("memcli.transport.local", lambda module: module.use_models(**given)))
    client.subprocess = _ClientSubprocess(_model_argv(options))  # type: ignore[assignment]
    app(argv, prog_name="memcli")


def serve(options: argparse.Namespace) -> None:
    """The memcli service with the fakes, until it is stopped or idle."""
    import memcli
    from memcli.paths import resolve_paths
    from memcli.transport import service

    if options.version:
        memcli.__version__ = service.__version__ = options.version
    if options.protocol is not None:
        memcli.PROTOCOL = service.PROTOCOL = options.protocol
        if options.protocol < 6:  # a service before protocol 6 stops at any service.stop, if_alone or not

            def stop_if_alone(self: service.Service, served: int) -> bool:
                self.stop()
                return True

            service.Service.stop_if_alone = stop_if_alone  # type: ignore[method-assign]
    given = _models(options)
    if options.idle is not None:
        given["idle"] = options.idle
    service.serve(resolve_paths(), ready=lambda line: print(line, file=sys.stderr, flush=True), **given)


def main(argv: list[str]) -> None:
    cut = argv.index("--") if "--" in argv else len(argv)
    options = _parser().parse_args(argv[:cut])
    if options.command == "cli":
        cli(options, argv[cut + 1 :])
    else:
        serve(options)


if __name__ == "__main__":
    main(sys.argv[1:])
