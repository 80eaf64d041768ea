"""The ``memcli`` command line, one module per command group: ``root`` (the app, the
error boundary, the options and helpers every command shares), ``memory``,
``consolidation``, ``graph``, ``backup``, ``system``, ``schedule``, ``config`` and
``evaluation``. Importing this package imports ``root`` only (the console script
``memcli = memcli.cli:app``): a command's group is imported when that command runs, found
in ``command_table`` (which ``scripts/gen_docs.py`` writes from the whole app), so
``memcli recall`` builds one command, not all of them. ``load_all`` imports every group.
"""

import importlib

from memcli.cli.root import app

GROUP_MODULES = ("config", "consolidation", "graph", "evaluation", "memory", "backup", "system", "schedule")
"""The modules that register commands on ``app``, in the order of their commands in
``--help`` (Typer lists the commands, then the groups such as ``config``)."""

__all__ = ["GROUP_MODULES", "app", "load_all"]


def load_all() -> None:
    """Import every command group, so that ``app`` holds every command (the generators of
    the man page, completions and reference, and the tests that walk the whole app)."""
    for module in GROUP_MODULES:
        importlib.import_module(f"memcli.cli.{module}")
