"""The ``memcli`` command line, one module per command group: ``root`` (the app, the
error boundary, the options and helpers every command shares), ``memory``,
``consolidation``, ``graph``, ``backup``, ``system``, ``schedule``, ``config`` and ``evaluation``. Importing this package
registers every command on ``app`` (the console script ``memcli = memcli.cli:app``).
"""

# Each registers its commands on app, in this order in --help (export after the memory commands).
from memcli.cli import config, consolidation, graph, evaluation, memory, backup, system, schedule  # noqa: E402,F401,I001
from memcli.cli.root import app

__all__ = ["app"]
