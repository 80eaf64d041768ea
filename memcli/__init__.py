"""memcli: a local-first personal memory assistant for the terminal."""

__version__ = "0.1.0"

PROTOCOL = 1
"""The version of the request and reply shapes between the client and the service
(``memcli.api``, ``memcli.schema``); a client and a service that differ in it, or in
``__version__``, do not talk: the client restarts the service."""
