"""Data that ships with memcli: ``demo.jsonl``, a short conversation of our own writing
that ``memcli import --demo`` loads, so that memcli can be tried without any file."""
