"""memcli: a local-first personal memory assistant for the terminal."""

__version__ = "0.1.0"
