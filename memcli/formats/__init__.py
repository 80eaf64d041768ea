"""The files memcli reads and writes: ``importers`` (LoCoMo, MemoryBank, JSONL, text and
Markdown notes, a memcli export) and ``export``. May import the store, text and the leaves."""
