"""``python -m memcli.transport.serve``: the memcli service as a client starts it in the
background (``memcli.transport.client``), the same service as ``memcli serve --quiet``
without importing the command line (``memcli.transport.service.main``)."""

from memcli.transport.service import main

if __name__ == "__main__":
    main()
