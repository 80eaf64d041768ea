"""memcli: a local-first personal memory assistant for the terminal."""

__version__ = "0.1.0"

PROTOCOL = 3
"""The version of the request and reply shapes between the client and the service
(``memcli.library.api``, ``memcli.schema``); a client and a service that differ in it, or in
``__version__``, do not talk: a client newer than the service restarts it, an older one
(memcli was upgraded while it ran) stops with a message. 2: the service says
``accepted`` before it runs a request. 3: the ``reindex`` verb, ``import``'s
``retention_from``, the ``person`` recall signal."""
