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

EARLY_COMMANDS = frozenset({"import", "list", "recall", "show", "stats"})
"""Commands that always send a request to the service and whose whole input is on their
command line (an import's file is read by the service): the ``memcli`` command starts the
service (``start_service_early``) before it imports its command line. Not ``chat`` (it reads
stdin or the keyboard for its whole session), nor a command that may ask for a confirmation
(``delete``, ``purge-user``) or read stdin (``edit --text -``): the service started early would
wait, its start lock held, for as long as the person types."""
TEXT_COMMANDS = frozenset({"ask", "remember"})
"""Commands that take their text as an argument, or read it from stdin when it is ``-`` or
absent: they start the service early only when the word right after the command is their
text (neither ``-`` nor an option: after an option, the text cannot be told from the
option's value without the command line's parser)."""
NOT_EARLY_WORDS = frozenset({"--help", "-h", "--version", "--no-service"})
"""Words after which a command line sends no request to the service."""


def start_service_early(argv: Sequence[str]) -> bool:
    """Start the memcli service in the background (``memcli.transport.client.start_early``)
    when ``argv`` (``sys.argv``) is the ``memcli`` command's, of one of ``EARLY_COMMANDS`` (or
    of ``TEXT_COMMANDS`` with its text), so that the service's start (a second of imports)
    overlaps the command line's (Typer: a tenth of a second) rather than following it: the
    command adopts the service once Typer is loaded. The root options before a command are
    flags, so the first word that is not an option is the command. Nothing (False) for
    another program that imports this package, when the service is off, when a word of
    ``NOT_EARLY_WORDS`` is there, or when the home does not exist yet (a usage error then
    makes nothing); the command reports a bad home or bad settings itself."""
    if not argv:
        return False
    program = os.path.basename(argv[0])
    if program != "memcli" and not argv[0].endswith(os.path.join("memcli", "__main__.py")):
        return False
    words = list(argv[1:])
    at = next((i for i, word in enumerate(words) if not word.startswith("-")), None)
    if at is None or NOT_EARLY_WORDS.intersection(words):
        return False
    command, rest = words[at], words[at + 1 :]
    if command in TEXT_COMMANDS:
        if not rest or rest[0].startswith("-"):
            return False
    elif command not in EARLY_COMMANDS:
        return False
    # thin client: the transport loads only for a command that talks to the service
    from memcli.errors import MemcliError
    from memcli.paths import check_home, home_of, resolve_paths
    from memcli.transport.client import start_early

    try:
        paths = resolve_paths()
        if not (home_of(paths) or paths.data_dir).is_dir():
            return False
        check_home(paths)
    except MemcliError:
        return False
    return start_early(paths)


start_service_early(sys.argv)

from memcli.cli.root import app  # noqa: E402 (after the service's early start, which it overlaps)

GROUP_MODULES = ("config", "consolidation", "graph", "evaluation", "memory", "backup", "system", "schedule")
"""The modules that register commands on ``app``, in the order of their commands in
``--help`` (Typer lists the commands, then the groups such as ``config``)."""

__all__ = ["EARLY_COMMANDS", "GROUP_MODULES", "TEXT_COMMANDS", "app", "load_all", "start_service_early"]


def load_all() -> None:
    """Import every command group, so that ``app`` holds every command (the generators of
    the man page, completions and reference, and the tests that walk the whole app)."""
    for module in GROUP_MODULES:
        importlib.import_module(f"memcli.cli.{module}")
