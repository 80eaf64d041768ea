"""Test fakes: the models (``fakes.models``) and, run as ``python tests/fakes``, the real
memcli command line or service with those models in place of the real ones (see
``fakes/__main__.py``). Test-only: nothing in memcli/ knows about them."""
