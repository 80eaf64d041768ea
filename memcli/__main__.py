"""``python -m memcli``."""

from memcli.cli import app

app(prog_name="memcli")
