"""The ``memcli`` command line, one module per command group: ``root`` (the app, the
error boundary, the options and helpers every command shares), ``memory``,
``consolidation``, ``graph``, ``backup``, ``system``, ``schedule``, ``config`` and
``evaluation``. Importing this package imports ``root`` only (the console script
``memcli = memcli.cli:app``): a command's group is imported when that command runs, found
in ``command_table`` (which ``scripts/gen_docs.py`` writes from the whole app), so
``memcli recall`` builds one command, not all of them. ``load_all`` imports every group.
"""

import importlib
import os
import sys
from collections.abc import Sequence

EARLY_COMMANDS = frozenset({"ask", "chat", "import", "list", "recall", "remember", "show", "stats"})
"""Commands that always send a request to the service: the ``memcli`` command starts it
(``start_service_early``) before it imports its command line."""
NOT_EARLY_WORDS = frozenset({"--help", "-h", "--version", "--no-service"})
"""Words after which a command line sends no request to the service."""


def start_service_early(argv: Sequence[str]) -> bool:
    """Start the memcli service in the background (``memcli.transport.client.start_early``)
    when ``argv`` (``sys.argv``) is the ``memcli`` command's, of one of ``EARLY_COMMANDS``,
    so that the service's start (a second of imports) overlaps the command line's (Typer:
    a tenth of a second) rather than following it. The root options before a command are
    flags, so the first word that is not an option is the command. Nothing (False) for
    another program that imports this package, when the service is off, or when a word of
    ``NOT_EARLY_WORDS`` is there; the command reports a bad home or bad settings itself."""
    program = os.path.basename(argv[0]) if argv else ""
    if program != "memcli" and not argv[0].endswith(os.path.join("memcli", "__main__.py")):
        return False
    words = argv[1:]
    command = next((word for word in words if not word.startswith("-")), None)
    if command not in EARLY_COMMANDS or NOT_EARLY_WORDS.intersection(words):
        return False
    # thin client: the transport loads only for a command that talks to the service
    from memcli.errors import MemcliError
    from memcli.paths import check_home, resolve_paths
    from memcli.transport.client import start_early

    try:
        paths = resolve_paths()
        check_home(paths)
    except MemcliError:
        return False
    return start_early(paths)


start_service_early(sys.argv)

from memcli.cli.root import app  # noqa: E402 (after the service's early start, which it overlaps)

GROUP_MODULES = ("config", "consolidation", "graph", "evaluation", "memory", "backup", "system", "schedule")
"""The modules that register commands on ``app``, in the order of their commands in
``--help`` (Typer lists the commands, then the groups such as ``config``)."""

__all__ = ["EARLY_COMMANDS", "GROUP_MODULES", "app", "load_all", "start_service_early"]


def load_all() -> None:
    """Import every command group, so that ``app`` holds every command (the generators of
    the man page, completions and reference, and the tests that walk the whole app)."""
    for module in GROUP_MODULES:
        importlib.import_module(f"memcli.cli.{module}")
