"""The ``memcli`` command line, one module per command group: ``root`` (the app, the
error boundary, the options and helpers every command shares), ``memory``,
``consolidation``, ``system``, ``config`` and ``evaluation``. Importing this package
registers every command on ``app`` (the console script ``memcli = memcli.cli:app``).
"""

from memcli.cli import config, consolidation, evaluation, memory, system  # noqa: E402,F401  (each registers its commands on app)
from memcli.cli.root import app

__all__ = ["app"]
